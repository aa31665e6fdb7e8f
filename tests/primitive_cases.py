"""Example operands, params and float64 NumPy references for every primitive, keyed by primitive name.

Registry-driven tests (forward numerics here; transforms elsewhere) iterate ``staging.primitive.REGISTRY`` and
look primitives up in ``CASES``; a primitive without cases fails the coverage test.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorstage as ts

Reference = Callable[..., Any]
Maker = Callable[[np.random.Generator, np.dtype[Any]], list[np.ndarray]]


@dataclass(frozen=True)
class Case:
    make: Maker
    reference: Reference
    params: dict[str, Any] = field(default_factory=dict)
    dtypes: Sequence[str] = ("float32", "float64")
    label: str = ""


def normal(*shape: int) -> Maker:
    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [_sample(rng, shape, dtype)]

    return make


def _sample(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any], positive: bool = False) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        low = 1 if positive else (-9 if np.issubdtype(dtype, np.signedinteger) else 0)
        return rng.integers(low, 10, size=shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):  # both parts random (away from the negative real axis: log's cut)
        return ((np.abs(x) + 0.1 if positive else x) + 1j * rng.standard_normal(shape)).astype(dtype)
    return (np.abs(x) + 0.1 if positive else x).astype(dtype)


def operands(*shapes: tuple[int, ...], positive: Sequence[int] = ()) -> Maker:
    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [_sample(rng, s, dtype, i in positive) for i, s in enumerate(shapes)]

    return make


def with_first(first: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray], *shapes: tuple[int, ...]) -> Maker:
    """Operands whose first one has a fixed dtype (a predicate, say) and the rest the case dtype."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [first(rng, shapes[0])] + [_sample(rng, s, dtype) for s in shapes[1:]]

    return make


def _predicate(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.random(shape) < 0.5


def _trunc_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.issubdtype(x.dtype, np.integer):
        return np.trunc(x / y).astype(x.dtype)
    return x / y


def _shift_amounts(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    x = rng.integers(0, 2**31 - 1, size=(3, 4)).astype(dtype)
    s = rng.integers(0, 32, size=(3, 4)).astype(dtype)
    return [x, s]


def _with_special_values(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    x = rng.standard_normal((2, 5)).astype(dtype)
    x[0, 1], x[1, 2], x[1, 4] = np.inf, np.nan, -np.inf
    return [x]


def _ties(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    return [rng.integers(-2, 3, size=(3, 4)).astype(dtype), rng.integers(-2, 3, size=(3, 4)).astype(dtype)]


def _sort_ref(keys: np.ndarray, values: np.ndarray, dimension: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, axis=dimension, kind="stable")
    return np.take_along_axis(keys, order, dimension), np.take_along_axis(values, order, dimension)


def _bounds_crossed(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    """clamp(lo, x, hi) with lo > hi is hi everywhere (min(max(x, lo), hi)), for x below lo too."""
    x = rng.standard_normal((3, 4)).astype(dtype)
    return [np.asarray(0.3, dtype), x, np.asarray(-0.3, dtype)]


def _signed_nans_and_zeros(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    keys = np.array([1.0, np.copysign(np.nan, -1.0), 0.0, -0.0, -1.0, np.nan, -0.0, -np.inf], dtype)
    return [keys, rng.standard_normal(keys.shape).astype(dtype)]


def _several_nans(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    x = rng.standard_normal((3, 64)).astype(dtype)
    x[0, [5, 40]] = np.nan
    x[1, [0, 63]] = np.nan
    x[2, [31, 32, 33]] = np.nan
    return [x]


def _argmax_ref(x: np.ndarray, *, axis: int, index_dtype: Any) -> np.ndarray:
    return np.argmax(x, axis=axis)


def _argmin_ref(x: np.ndarray, *, axis: int, index_dtype: Any) -> np.ndarray:
    return np.argmin(x, axis=axis)


def _away_from_zero(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    """Both signs, |x| >= 0.2: finite differences stay clear of cbrt's infinite slope at 0."""
    x = rng.standard_normal((3, 4))
    return [(np.sign(x) * (np.abs(x) + 0.2)).astype(dtype)]


def _open_unit_interval(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    return [rng.uniform(-0.9, 0.9, (3, 4)).astype(dtype)]


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy import special

    return special.erf(x)  # type: ignore[no-any-return]


def _erfinv(x: np.ndarray) -> np.ndarray:
    from scipy import special

    return special.erfinv(x)  # type: ignore[no-any-return]


FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int32")
INTS = ("int32", "uint32")
UNARY_FLOAT: dict[str, tuple[Reference, bool]] = {
    "exp": (np.exp, False),
    "log": (np.log, True),
    "log1p": (np.log1p, True),
    "expm1": (np.expm1, False),
    "tanh": (np.tanh, False),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), False),
    "sin": (np.sin, False),
    "cos": (np.cos, False),
    "sqrt": (np.sqrt, True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), True),
    "floor": (np.floor, False),
    "ceil": (np.ceil, False),
    "round": (np.round, False),
}

CASES: dict[str, list[Case]] = {
    "add": [Case(operands((3, 4), (3, 4)), np.add, dtypes=NUMERIC),
            Case(operands((3, 4), ()), np.add, dtypes=NUMERIC, label="scalar operand")],
    "sub": [Case(operands((3, 4), (3, 4)), np.subtract, dtypes=NUMERIC),
            Case(operands((), (2, 2)), np.subtract, label="scalar first")],
    "mul": [Case(operands((3, 4), (3, 4)), np.multiply, dtypes=NUMERIC)],
    "div": [Case(operands((3, 4), (3, 4), positive=(1,)), _trunc_div, dtypes=NUMERIC)],
    "rem": [Case(operands((3, 4), (3, 4), positive=(1,)), np.fmod, dtypes=NUMERIC)],
    "pow": [Case(operands((3, 4), (3, 4), positive=(0,)), np.power)],
    "max": [Case(operands((3, 4), (3, 4)), np.maximum, dtypes=NUMERIC)],
    "min": [Case(operands((3, 4), (3, 4)), np.minimum, dtypes=NUMERIC)],
    "atan2": [Case(operands((3, 4), (3, 4)), np.arctan2),
              Case(operands((), (2, 3)), np.arctan2, label="scalar first")],
    "cbrt": [Case(_away_from_zero, np.cbrt)],
    "erf": [Case(normal(3, 4), _erf)],
    "erf_inv": [Case(_open_unit_interval, _erfinv)],
    "neg": [Case(normal(3, 4), np.negative, dtypes=NUMERIC)],
    "abs": [Case(normal(3, 4), np.abs, dtypes=NUMERIC)],
    "sign": [Case(normal(3, 4), np.sign, dtypes=NUMERIC)],
    "integer_pow": [Case(normal(3, 4), lambda x, y: x**y, {"y": 3}, dtypes=NUMERIC),
                    Case(operands((5,), positive=(0,)), lambda x, y: x**-2.0, {"y": -2}, label="negative"),
                    Case(normal(2), lambda x, y: np.ones_like(x), {"y": 0}, label="zero")],
    **{
        name: [Case(operands((3, 4), positive=(0,) if positive else ()), ref)]
        for name, (ref, positive) in UNARY_FLOAT.items()
    },
    **{
        name: [Case(_ties, ref, dtypes=NUMERIC)]
        for name, ref in {
            "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal,
        }.items()
    },
    "and": [Case(operands((3, 4), (3, 4)), np.bitwise_and, dtypes=("bool", "int32"))],
    "or": [Case(operands((3, 4), (3, 4)), np.bitwise_or, dtypes=("bool", "int32"))],
    "xor": [Case(operands((3, 4), (3, 4)), np.bitwise_xor, dtypes=("bool", "int32"))],
    "not": [Case(normal(3, 4), np.invert, dtypes=("bool", "int32", "uint32"))],
    "is_finite": [Case(_with_special_values, np.isfinite)],
    "shift_left": [Case(_shift_amounts, lambda x, s: np.left_shift(x, s), dtypes=INTS)],
    "shift_right_logical": [
        Case(_shift_amounts, lambda x, s: (x.view(np.uint32) >> s.view(np.uint32)).view(x.dtype), dtypes=INTS)
    ],
    "select": [Case(with_first(_predicate, (3, 4), (3, 4), (3, 4)), np.where, dtypes=NUMERIC)],
    "clamp": [Case(operands((), (3, 4), ()), lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), dtypes=NUMERIC),
              Case(_bounds_crossed, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), label="lo above hi")],
    "convert": [
        Case(normal(3, 4), lambda x, new_dtype: np.trunc(x).astype(np.int32), {"new_dtype": np.dtype(np.int32)}),
        Case(normal(3, 4), lambda x, new_dtype: x.astype(np.float64), {"new_dtype": np.dtype(np.float64)},
             dtypes=("float32", "int32")),
        Case(normal(3, 4), lambda x, new_dtype: x != 0, {"new_dtype": np.dtype(np.bool_)}, dtypes=NUMERIC),
    ],
    "bitcast_convert": [
        Case(normal(3, 4), lambda x, new_dtype: x.astype(np.float32).view(np.int32),  # (x came widened to f64)
             {"new_dtype": np.dtype(np.int32)}, dtypes=("float32",)),
        Case(normal(3, 4), lambda x, new_dtype: x.view(np.int64), {"new_dtype": np.dtype(np.int64)},
             dtypes=("float64",)),
        Case(normal(3, 4), lambda x, new_dtype: x.astype(np.float32).view(np.uint8).reshape(3, 4, 4),
             {"new_dtype": np.dtype(np.uint8)}, dtypes=("float32",), label="narrower: a trailing axis"),
        Case(normal(3, 2), lambda x, new_dtype: x.view(np.int16).reshape(3), {"new_dtype": np.dtype(np.int16)},
             dtypes=("uint8",), label="wider: the last axis joins"),
    ],
    "broadcast_in_dim": [
        Case(normal(3), lambda x, **p: np.broadcast_to(x[None, :, None], (2, 3, 4)),
             {"shape": (2, 3, 4), "broadcast_dimensions": (1,), "names": (None, None, None)}, dtypes=NUMERIC),
    ],
    "reshape": [Case(normal(3, 4), lambda x, **p: x.reshape(2, 6), {"new_sizes": (2, 6), "names": (None, None)},
                     dtypes=NUMERIC)],
    "transpose": [Case(normal(2, 3, 4), lambda x, permutation: x.transpose(permutation), {"permutation": (2, 0, 1)},
                       dtypes=NUMERIC)],
    "reduce_sum": [Case(normal(3, 4, 5), lambda x, axes: x.sum(axis=axes), {"axes": (0, 2)}, dtypes=NUMERIC)],
    "reduce_max": [Case(normal(3, 4), lambda x, axes: x.max(axis=axes), {"axes": (1,)}, dtypes=NUMERIC)],
    "reduce_min": [Case(normal(3, 4), lambda x, axes: x.min(axis=axes), {"axes": (0, 1)}, dtypes=NUMERIC)],
    "reduce_prod": [Case(normal(3, 4), lambda x, axes: x.prod(axis=axes), {"axes": (0,)}, dtypes=NUMERIC)],
    "argmax": [Case(lambda rng, dtype: _ties(rng, dtype)[:1], _argmax_ref, {"axis": 1, "index_dtype": np.dtype(np.int32)},
                    dtypes=NUMERIC, label="ties pick the first"),
               Case(_several_nans, _argmax_ref, {"axis": 1, "index_dtype": np.dtype(np.int32)},
                    label="the first of several NaNs")],
    "argmin": [Case(normal(3, 4), _argmin_ref, {"axis": 0, "index_dtype": np.dtype(np.int32)}, dtypes=NUMERIC)],
    "dot_general": [
        Case(operands((3, 4), (4, 5)), lambda a, b, **p: a @ b, {"contracting": ((1,), (0,)), "batch": ((), ())},
             dtypes=NUMERIC, label="matmul"),
        Case(operands((2, 3, 4), (2, 5, 4)), lambda a, b, **p: np.einsum("bik,bjk->bij", a, b),
             {"contracting": ((2,), (2,)), "batch": ((0,), (0,))}, label="batched"),
        Case(operands((4,), (4,)), lambda a, b, **p: a @ b, {"contracting": ((0,), (0,)), "batch": ((), ())},
             label="vector"),
    ],
    "sort": [Case(operands((3, 5), (3, 5)), lambda k, v, dimension: _sort_ref(k, v, dimension), {"dimension": 1},
                  dtypes=("float32", "float64", "int32", "uint32"), label="key-value"),
             Case(_signed_nans_and_zeros, lambda k, v, dimension: _sort_ref(k, v, dimension), {"dimension": 0},
                  dtypes=("float32",), label="NaNs last, zeros stable")],
}


# ------------------------------------------------------------------------- decompositions (linear algebra)


def _spd(*shape: int) -> Maker:
    """Symmetric positive definite matrices, well conditioned: ``B Bᵀ + n I``."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        b = rng.standard_normal(shape)
        n = shape[-1]
        return [(b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(dtype)]

    return make


def _solve_operands(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> Maker:
    """A matrix whose triangles are well conditioned (a large diagonal) and a right-hand side."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        n = a_shape[-1]
        a = rng.standard_normal(a_shape) + (n + 1) * np.eye(n)
        return [a.astype(dtype), rng.standard_normal(b_shape).astype(dtype)]

    return make


def _sym_lower(a: np.ndarray) -> np.ndarray:
    """What cholesky and eigh read: the lower triangle, mirrored."""
    low = np.tril(a)
    return low + np.swapaxes(np.tril(a, -1), -1, -2)


def _triangular_solve_ref(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool, transpose_a: bool,
                          unit_diagonal: bool) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - t * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _qr_ref(a: np.ndarray, *, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q, r, np.linalg.det(np.linalg.qr(a, mode="complete")[0])


def canonical_eigenvectors(v: np.ndarray) -> np.ndarray:
    """tensorstage's sign convention: each eigenvector's largest-magnitude component is positive."""
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return v * np.sign(np.take_along_axis(v, idx, axis=-2))


def _eigh_ref(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(_sym_lower(a))
    return w, canonical_eigenvectors(v)


def _swapped(a_shape: tuple[int, ...], *rest: tuple[int, ...]) -> Maker:
    """Well-conditioned matrices with two rows swapped (negative determinants; LU has to pivot) and normal
    right-hand sides of shapes ``rest``."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        n = a_shape[-1]
        a = rng.standard_normal(a_shape) + (n + 1) * np.eye(n)
        a[..., [0, n - 1], :] = a[..., [n - 1, 0], :]
        return [a.astype(dtype), *(rng.standard_normal(r).astype(dtype) for r in rest)]

    return make


def _solve_ref(a: np.ndarray, b: np.ndarray, *, transpose_a: bool) -> np.ndarray:
    return np.linalg.solve(np.swapaxes(a, -1, -2) if transpose_a else a, b)


def _slogdet_ref(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


def cofactor_matrix(a: np.ndarray) -> np.ndarray:
    """The gradient of det: ``C[..., i, j] = (-1)^(i+j) det(minor_ij)``, by explicit minors in float64 (valid at
    singular matrices too)."""
    a = np.asarray(a, np.complex128 if np.iscomplexobj(a) else np.float64)
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            out[..., i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def _scaled(make: Maker) -> Maker:
    """``make``'s first operand divided by its size plus one: entries and cofactors of order 1, so float32's
    absolute tolerance fits both factorizations (LU and QR)."""

    def scaled(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        first, *rest = make(rng, dtype)
        return [(first / (first.shape[-1] + 1)).astype(dtype), *rest]

    return scaled


def _rank_deficient(a_shape: tuple[int, ...]) -> Maker:
    """Matrices of rank n-1 with quarter-integer entries (the last row a sum of two others: exact in floats)."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        a = (rng.integers(-3, 4, size=a_shape) + 4 * np.eye(a_shape[-1])) / 4
        a[..., -1, :] = a[..., 0, :] + a[..., 1, :]
        return [a.astype(dtype)]

    return make


CASES.update({
    "cholesky": [Case(_spd(3, 3), lambda a: np.linalg.cholesky(_sym_lower(a))),
                 Case(_spd(2, 4, 4), lambda a: np.linalg.cholesky(_sym_lower(a)), label="batched")],
    "triangular_solve": [
        Case(_solve_operands((3, 3), (3, 2)), _triangular_solve_ref,
             {"left_side": True, "lower": True, "transpose_a": False, "unit_diagonal": False}, label="left lower"),
        Case(_solve_operands((2, 3, 3), (2, 4, 3)), _triangular_solve_ref,
             {"left_side": False, "lower": False, "transpose_a": True, "unit_diagonal": True},
             label="right upper transposed unit batched"),
    ],
    "qr": [Case(normal(3, 3), _qr_ref, {"full_matrices": False}, label="square"),
           Case(normal(2, 4, 3), _qr_ref, {"full_matrices": False}, label="tall batched"),
           Case(normal(4, 2), _qr_ref, {"full_matrices": True}, dtypes=("float32",), label="complete"),
           Case(normal(2, 3), _qr_ref, {"full_matrices": False}, dtypes=("float32",), label="wide")],
    "eigh": [Case(normal(4, 4), _eigh_ref, label="reads the lower triangle"),
             Case(_spd(2, 3, 3), _eigh_ref, label="batched")],
    "solve": [Case(_solve_operands((3, 3), (3, 2)), _solve_ref, {"transpose_a": False}),
              Case(_solve_operands((2, 4, 4), (2, 4, 3)), _solve_ref, {"transpose_a": True},
                   label="transposed batched"),
              Case(_swapped((4, 4), (4, 1)), _solve_ref, {"transpose_a": False}, label="pivoting")],
    "slogdet": [Case(_swapped((3, 3)), _slogdet_ref, label="negative"),
                Case(_swapped((2, 4, 4)), _slogdet_ref, label="batched")],
    "det": [Case(_swapped((3, 3)), np.linalg.det, label="negative"),
            Case(_swapped((2, 4, 4)), np.linalg.det, label="batched")],
    "cofactors": [Case(_scaled(_swapped((3, 3))), lambda a: cofactor_matrix(a), label="negative"),
                  Case(_scaled(_swapped((2, 4, 4))), lambda a: cofactor_matrix(a), label="batched"),
                  # float32 only: that keeps it out of test_autodiff (second derivatives divide by det A = 0)
                  Case(_rank_deficient((2, 4, 4)), lambda a: cofactor_matrix(a), dtypes=("float32",),
                       label="rank n-1")],
})


# Cases for slicing.py and gather_scatter.py live in their own module, which adds them to CASES when imported.
import slicing_cases  # noqa: E402,F401
import special_cases  # noqa: E402,F401 - lgamma, digamma, ...
import lu_cases  # noqa: E402,F401
import schur_cases  # noqa: E402,F401


COMPLEX = ("complex64", "complex128")


def canonical_svd(u: np.ndarray, s: np.ndarray, vh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """tensorstage's SVD sign convention: each column of ``u`` has its largest-magnitude component positive, the
    matching row of ``vh`` follows; rows of ``vh`` beyond ``min(M, N)`` get the rule on their own."""
    k = s.shape[-1]
    u_signs = np.sign(np.take_along_axis(u, np.argmax(np.abs(u), axis=-2)[..., None, :], axis=-2))[..., 0, :]
    v_signs = np.sign(np.take_along_axis(vh, np.argmax(np.abs(vh), axis=-1)[..., :, None], axis=-1))[..., 0]
    v_signs = np.concatenate([u_signs[..., :k], v_signs[..., k:]], axis=-1)
    return u * u_signs[..., None, :], s, vh * v_signs[..., :, None]


def _svd_ref(a: np.ndarray, *, full_matrices: bool, compute_uv: bool) -> tuple[np.ndarray, ...]:
    if not compute_uv:
        return (np.linalg.svd(a, compute_uv=False),)
    return canonical_svd(*np.linalg.svd(a, full_matrices=full_matrices))


_REDUCED = {"full_matrices": False, "compute_uv": True}
CASES.update({
    "svd": [Case(normal(4, 3), _svd_ref, _REDUCED, label="tall"),
            Case(normal(2, 3, 4), _svd_ref, _REDUCED, label="wide batched"),
            Case(normal(3, 3), _svd_ref, {"full_matrices": True, "compute_uv": True}, label="square complete"),
            Case(normal(4, 2), _svd_ref, {"full_matrices": True, "compute_uv": True}, dtypes=("float32",),
                 label="tall complete"),
            Case(normal(2, 5), _svd_ref, {"full_matrices": True, "compute_uv": True}, dtypes=("float32",),
                 label="wide complete"),
            Case(normal(3, 4), _svd_ref, {"full_matrices": False, "compute_uv": False}, label="values only"),
            # complex: values only (the vectors' derivatives are JAX's, of a smooth SVD, not of the fixed phases)
            Case(normal(2, 4, 3), _svd_ref, {"full_matrices": False, "compute_uv": False}, dtypes=COMPLEX,
                 label="complex values only")],
})


from conv_cases import CASES as _CONVOLUTION_CASES  # noqa: E402 - kept in their own module

CASES.update(_CONVOLUTION_CASES)


# ------------------------------------------------------------------------------------------ complex numbers


def _fft_case(shape: tuple[int, ...], fft_type: str, fft_length: tuple[int, ...], reference: Reference,
              dtypes: Sequence[str]) -> Case:
    return Case(normal(*shape), lambda x, **p: reference(x), {"fft_type": fft_type, "fft_length": fft_length},
                dtypes=dtypes, label=f"{fft_type} {fft_length}")


CASES.update({
    "real": [Case(normal(3, 4), np.real, dtypes=COMPLEX)],
    "imag": [Case(normal(3, 4), np.imag, dtypes=COMPLEX)],
    "conj": [Case(normal(3, 4), np.conj, dtypes=COMPLEX)],
    "complex": [Case(operands((3, 4), (3, 4)), lambda re, im: re + 1j * im),
                Case(operands((), (2, 3)), lambda re, im: re + 1j * im, label="scalar first")],
    "fft": [
        _fft_case((3, 8), "FFT", (8,), np.fft.fft, COMPLEX),
        _fft_case((2, 3, 5), "IFFT", (3, 5), np.fft.ifft2, COMPLEX),
        _fft_case((2, 4, 3, 2), "FFT", (4, 3, 2), lambda x: np.fft.fftn(x, axes=(1, 2, 3)), ("complex128",)),
        _fft_case((3, 6), "RFFT", (6,), np.fft.rfft, FLOATS),
        _fft_case((2, 4, 7), "RFFT", (4, 7), np.fft.rfft2, ("float64",)),
        _fft_case((3, 4), "IRFFT", (7,), lambda x: np.fft.irfft(x, 7), COMPLEX),
        _fft_case((3, 5), "IRFFT", (8,), lambda x: np.fft.irfft(x, 8), ("complex128",)),
        _fft_case((2, 3, 4), "IRFFT", (3, 6), lambda x: np.fft.irfft2(x, (3, 6)), ("complex128",)),
    ],
})
# Complex operands of the real primitives that take them: the same references, in NumPy's complex arithmetic.
for _name, _case in [
    ("add", Case(operands((3, 4), (3, 4)), np.add, dtypes=COMPLEX)),
    ("sub", Case(operands((3, 4), ()), np.subtract, dtypes=COMPLEX, label="complex scalar operand")),
    ("mul", Case(operands((3, 4), (3, 4)), np.multiply, dtypes=COMPLEX)),
    ("div", Case(operands((3, 4), (3, 4)), np.divide, dtypes=COMPLEX)),
    ("pow", Case(operands((3, 4), (3, 4)), np.power, dtypes=("complex128",))),
    ("neg", Case(normal(3, 4), np.negative, dtypes=COMPLEX)),
    ("abs", Case(normal(3, 4), np.abs, dtypes=COMPLEX)),
    ("sign", Case(normal(3, 4), np.sign, dtypes=COMPLEX, label="complex")),
    ("integer_pow", Case(normal(3, 4), lambda x, y: x**y, {"y": -3}, dtypes=COMPLEX, label="complex")),
    ("exp", Case(normal(3, 4), np.exp, dtypes=COMPLEX)),
    ("log", Case(operands((3, 4), positive=(0,)), np.log, dtypes=COMPLEX)),
    ("log1p", Case(operands((3, 4), positive=(0,)), np.log1p, dtypes=("complex128",))),
    ("expm1", Case(normal(3, 4), np.expm1, dtypes=("complex128",))),
    ("tanh", Case(normal(3, 4), np.tanh, dtypes=COMPLEX)),
    ("logistic", Case(normal(3, 4), lambda x: 1 / (1 + np.exp(-x)), dtypes=("complex128",))),
    ("sin", Case(normal(3, 4), np.sin, dtypes=COMPLEX)),
    ("cos", Case(normal(3, 4), np.cos, dtypes=COMPLEX)),
    ("sqrt", Case(operands((3, 4), positive=(0,)), np.sqrt, dtypes=COMPLEX)),
    ("rsqrt", Case(operands((3, 4), positive=(0,)), lambda x: 1 / np.sqrt(x), dtypes=COMPLEX)),
    ("eq", Case(_ties, np.equal, dtypes=("complex64",))),
    ("ne", Case(_ties, np.not_equal, dtypes=("complex64",))),
    ("select", Case(with_first(_predicate, (3, 4), (3, 4), (3, 4)), np.where, dtypes=COMPLEX)),
    ("convert", Case(normal(3, 4), lambda x, new_dtype: x.astype(np.complex128), {"new_dtype": np.dtype(np.complex128)},
                     dtypes=("float32", "float64", "complex64"), label="to complex")),
    ("reduce_sum", Case(normal(3, 4, 5), lambda x, axes: x.sum(axis=axes), {"axes": (0, 2)}, dtypes=COMPLEX)),
    ("reduce_prod", Case(normal(3, 4), lambda x, axes: x.prod(axis=axes), {"axes": (1,)}, dtypes=COMPLEX)),
    ("dot_general", Case(operands((2, 3, 4), (2, 4, 5)), lambda a, b, **p: a @ b,
                         {"contracting": ((2,), (1,)), "batch": ((0,), (0,))}, dtypes=COMPLEX, label="complex")),
]:
    CASES[_name] = [*CASES[_name], _case]


# Complex matrices of the decompositions: Hermitian (or well-conditioned) operands and NumPy's complex references.
def _cnormal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hpd(*shape: int) -> Maker:
    """Hermitian positive definite matrices, well conditioned: ``B Bᴴ + n I``."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        b = _cnormal(rng, shape)
        return [(b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)]

    return make


def _complex_operands(a_shape: tuple[int, ...], *rest: tuple[int, ...]) -> Maker:
    """A complex matrix with a large diagonal (its triangles well conditioned) and complex right-hand sides."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        a = _cnormal(rng, a_shape) + (a_shape[-1] + 1) * np.eye(a_shape[-1])
        return [a.astype(dtype), *(_cnormal(rng, r).astype(dtype) for r in rest)]

    return make


def _hermitian_lower(a: np.ndarray) -> np.ndarray:
    """What complex cholesky and eigh read: the strict lower triangle mirrored and conjugated, the diagonal's real
    part."""
    strict = np.tril(a, -1)
    return strict + np.conj(np.swapaxes(strict, -1, -2)) + np.real(a) * np.eye(a.shape[-1])


def canonical_phases(v: np.ndarray) -> np.ndarray:
    """tensorstage's phase of complex eigenvectors: each column's largest-magnitude component real and positive."""
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * np.conj(top) / np.abs(top)


def _complex_eigh_ref(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(_hermitian_lower(a))
    return w, canonical_phases(v)


def _conj_triangular_solve_ref(a: np.ndarray, b: np.ndarray, *, conjugate_a: bool, **params: Any) -> np.ndarray:
    return _triangular_solve_ref(np.conj(a) if conjugate_a else a, b, **params)


_ADJOINT = {"left_side": True, "lower": True, "transpose_a": True, "unit_diagonal": False, "conjugate_a": True}
_CONJUGATE = {"left_side": False, "lower": False, "transpose_a": False, "unit_diagonal": False, "conjugate_a": True}
for _name, _case in [
    ("cholesky", Case(_hpd(2, 3, 3), lambda a: np.linalg.cholesky(_hermitian_lower(a)), dtypes=COMPLEX,
                      label="complex batched")),
    ("triangular_solve", Case(_complex_operands((2, 3, 3), (2, 3, 2)), _conj_triangular_solve_ref, _ADJOINT,
                              dtypes=COMPLEX, label="complex adjoint")),
    ("triangular_solve", Case(_complex_operands((3, 3), (2, 3)), _conj_triangular_solve_ref, _CONJUGATE,
                              dtypes=COMPLEX, label="complex conjugate right")),
    # (square only: the determinant of a tall complex matrix's complete Q is not differentiated)
    ("qr", Case(normal(2, 3, 3), _qr_ref, {"full_matrices": False}, dtypes=COMPLEX, label="complex batched")),
    ("eigh", Case(normal(4, 4), _complex_eigh_ref, dtypes=COMPLEX, label="complex, reads the lower triangle")),
    ("eigh", Case(_hpd(2, 3, 3), _complex_eigh_ref, dtypes=COMPLEX, label="complex batched")),
    ("solve", Case(_complex_operands((2, 3, 3), (2, 3, 2)), _solve_ref, {"transpose_a": True}, dtypes=COMPLEX,
                   label="complex transposed")),
    ("slogdet", Case(_complex_operands((2, 3, 3)), _slogdet_ref, dtypes=COMPLEX, label="complex")),
    ("det", Case(_complex_operands((2, 3, 3)), np.linalg.det, dtypes=COMPLEX, label="complex")),
    ("cofactors", Case(_scaled(_complex_operands((2, 3, 3))), lambda a: cofactor_matrix(a), dtypes=COMPLEX,
                       label="complex")),
]:
    CASES[_name] = [*CASES[_name], _case]


# eig: eigenvalues only (its derivative rules cover them alone), in float64 and complex128, where LAPACK's order
# is NumPy's (its float32 result is computed in float64 by NumPy, which can order them differently). It lowers only
# to LAPACK on CPU: elsewhere tests/test_linalg_eig.py checks the error instead.
EIG_RUNS = ts.default_device().platform == "cpu" and importlib.util.find_spec("scipy") is not None
CASES["eig"] = [] if not EIG_RUNS else [
    Case(normal(4, 4), lambda a, **p: (np.linalg.eigvals(a),), {"compute_left": False, "compute_right": False},
         dtypes=("float64", "complex128"), label="values"),
    Case(normal(2, 3, 3), lambda a, **p: (np.linalg.eigvals(a),), {"compute_left": False, "compute_right": False},
         dtypes=("float64",), label="values batched"),
]


# linear_solve / root_solve (lax.custom_linear_solve / lax.custom_root): float64 subgraphs, each reading the
# vectors and then the shared consts (a matrix; a vector of squares), so their cases are float64 only.
def _implicit_graph(fn: Callable[..., Any], *shapes: tuple[int, ...]) -> Any:
    specs = [ts.Spec(s, np.float64) for s in shapes]
    return ts.Program(fn, check_annotations=False).stage(*specs).graph


def _rhs_and_matrix(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
    return [rng.standard_normal((3, 2)).astype(dtype), (rng.standard_normal((3, 3)) + 4 * np.eye(3)).astype(dtype)]


def _implicit_cases() -> None:
    from tensorstage import numpy as tnp

    vec, mat = (3, 2), (3, 3)
    linear = {
        "matvec": _implicit_graph(lambda x, m: m @ x, vec, mat),
        "solve": _implicit_graph(lambda b, m: tnp.linalg.solve(m, b), vec, mat),
        "transposed": (_implicit_graph(lambda x, m: m.T @ x, vec, mat),
                       _implicit_graph(lambda x, m: tnp.linalg.solve(m.T, x), vec, mat)),
    }
    CASES["linear_solve"] = [Case(_rhs_and_matrix, lambda b, m, **p: (np.linalg.solve(m, b),), linear,
                                  dtypes=("float64",))]
    root = {  # x² = c, solved by sqrt (ignoring the guess); tangent_solve: y / 2x
        "f": _implicit_graph(lambda x, c: x * x - c, (4,), (4,)),
        "solve": _implicit_graph(lambda g, c: tnp.sqrt(c), (4,), (4,)),
        "tangent_solve": _implicit_graph(lambda x, y, c: y / (2 * x), (4,), (4,), (4,)),
    }
    CASES["root_solve"] = [Case(operands((4,), (4,), positive=(1,)), lambda g, c, **p: (np.sqrt(c),), root,
                                dtypes=("float64",))]


_implicit_cases()


# rng_bit_generator: XLA's bits for one key, as jax.lax.rng_bit_generator gives them (jax 0.10.2, any platform).
_RNG_KEY = np.array([0x12345678, 9, 0xDEADBEEF, 42], np.uint32)
_RNG_BITS = {
    ("RNG_THREE_FRY", "uint32"): ([305419896, 9, 3735928562, 42],
                                  [[3556024339, 1716780924, 2264123041], [1877768342, 846148674, 1817858453]]),
    ("RNG_THREE_FRY", "uint8"): ([305419896, 9, 3735928562, 42], [[19, 124, 161], [150, 66, 149]]),
    ("RNG_PHILOX", "uint32"): ([305419896, 9, 3735928561, 42],
                               [[3284314601, 2878287431, 2683994285], [2169134415, 2295385059, 3732548601]]),
    ("RNG_PHILOX", "uint8"): ([305419896, 9, 3735928561, 42], [[233, 71, 173], [79, 227, 249]]),
}
CASES["rng_bit_generator"] = [
    Case(lambda rng, dtype: [_RNG_KEY.copy()],
         lambda key, **p: tuple(np.array(v, p["dtype"] if i else np.uint32)
                                for i, v in enumerate(_RNG_BITS[(p["algorithm"], p["dtype"].name)])),
         {"shape": (2, 3), "dtype": np.dtype(dtype), "algorithm": algorithm}, dtypes=("uint32",),
         label=f"{algorithm}-{dtype}")
    for (algorithm, dtype) in _RNG_BITS
]

# checkpoint_name: the identity, a tag that checkpoint policies read (tests/test_checkpoint_policies.py).
CASES["checkpoint_name"] = [
    Case(normal(3, 4), lambda x, name: x, {"name": "hidden"}, dtypes=("float32", "float64", "int32", "complex128")),
]

# sharding_constraint: the identity on values, on a one-device mesh here (tests/test_named_sharding.py checks the
# layouts XLA gives it on four devices).
_MESH = ts.make_mesh((1, 1), ("dp", "mp"))
CASES["sharding_constraint"] = [
    Case(normal(4, 6), lambda x, **p: x, {"sharding": ts.NamedSharding(_MESH, ts.P("dp", "mp")), "unconstrained": ()},
         dtypes=("float32", "float64", "int32", "complex64")),
    Case(normal(2, 3, 4), lambda x, **p: x, {"sharding": ts.NamedSharding(_MESH, ts.P(None, "mp")),
                                              "unconstrained": (0,)}, label="batched"),
]
