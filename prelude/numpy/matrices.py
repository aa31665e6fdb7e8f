"""Matrix construction and matrix-shaped reductions: tri, tril, triu, diag, diagonal, trace, diagflat, identity,
kron, cross, vander, tril_indices/triu_indices, cov, corrcoef, inner, matrix_transpose, vecdot.

Masks come from iota and compare, diagonals from slices and reshapes (no gather), products from broadcasts and
dot_general: every function is differentiable and batchable through those primitives. Shapes, offsets and
counts are static.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, Floating, f32, i32
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, Aval, DimName, literal
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import linalg as L
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import (
    as_tensor, atom, broadcast_shapes, describe, dtype_error, float_operand, normalize_axes, op, result_dtype,
    shape_error, wrap,
)
from .creation import _dtype
from .linalg import as_counts, as_logical
from .static_settings import static_int

__all__ = [
    "corrcoef", "cov", "cross", "diag", "diagflat", "diagonal", "identity", "inner", "kron", "matrix_transpose",
    "trace", "tri", "tril", "tril_indices", "tril_indices_from", "triu", "triu_indices", "triu_indices_from",
    "vander", "vecdot",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
AnyShape = tuple[Any, ...]
DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Sh = TypeVarTuple("Sh")
S2 = TypeVarTuple("S2")
A = TypeVar("A")
B = TypeVar("B")
Axis = int | type[Dim]

_I32 = np.dtype(np.int32)


_MASK = "the mask is built from it while staging"


def _lower_mask(rows: int, cols: int, k: int, names: Sequence[DimName] = (None, None)) -> Atom:
    """Bool ``(rows, cols)``: True where ``col <= row + k`` (tril's entries)."""
    row = SL.iota(_I32, (rows, cols), 0, names)
    col = SL.iota(_I32, (rows, cols), 1, names)
    mask: Atom = bind(E.le_p, col, E.add(row, literal(k, _I32)))
    return mask


# -------------------------------------------------------------------------------------- triangles


@overload
def tri(N: int, M: int | None = None, k: int = 0, dtype: None = None) -> Tensor[f32, Any, Any]: ...
@overload
def tri(N: int, M: int | None, k: int, dtype: type[DT]) -> Tensor[DT, Any, Any]: ...
@overload
def tri(N: int, M: int | None = None, k: int = 0, *, dtype: type[DT]) -> Tensor[DT, Any, Any]: ...
@op
def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below the ``k``-th diagonal of an ``N x M`` matrix (default dtype f32, NumPy's is f64)."""
    n = static_int("tri", N, "N")
    m = n if M is None else static_int("tri", M, "M")
    if n < 0 or m < 0:
        raise shape_error("tri", f"negative size ({n}, {m})")
    return wrap(E.convert(_lower_mask(n, m, static_int("tri", k, "k", _MASK)), _dtype(dtype)))


def _triangle(op_name: str, m: Any, k: int, lower: bool) -> AnyTensor:
    t = as_tensor(m)
    if t.aval.ndim < 2:
        raise shape_error(op_name, f"needs an operand of rank >= 2 (it acts on the last two axes), got {describe(t)}")
    x = t.atom
    rows, cols = x.aval.shape[-2:]
    k = static_int(op_name, k, "k", _MASK)
    # triu keeps col >= row + k, the complement of tril's col <= row + k - 1.
    mask = _lower_mask(rows, cols, k if lower else k - 1)
    rank = x.aval.ndim
    mask = S.broadcast_in_dim(mask, x.aval.shape, (rank - 2, rank - 1), x.aval.dims)
    zero = S.full_like(x, 0)
    return wrap(E.select(mask, x, zero) if lower else E.select(mask, zero, x))


@op
def tril(m: Tensor[DT, Unpack[Sh]], k: int = 0) -> Tensor[DT, Unpack[Sh]]:
    """Zero the entries above the ``k``-th diagonal of the last two axes (rank >= 2; NumPy also broadcasts a
    1-D operand to a square, which this rejects, as JAX does)."""
    return _triangle("tril", m, k, lower=True)


@op
def triu(m: Tensor[DT, Unpack[Sh]], k: int = 0) -> Tensor[DT, Unpack[Sh]]:
    """Zero the entries below the ``k``-th diagonal of the last two axes (rank >= 2)."""
    return _triangle("triu", m, k, lower=False)


def _indices(name: str, lower: bool, n: int, k: int, m: int | None) -> tuple[AnyTensor, AnyTensor]:
    from .creation import array

    rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    return array(rows.astype(np.int32)), array(cols.astype(np.int32))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor[i32, Any], Tensor[i32, Any]]:
    """Row and column indices of the lower triangle (i32; constants when staging, device arrays otherwise)."""
    return _indices("tril_indices", True, n, k, m)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor[i32, Any], Tensor[i32, Any]]:
    """Row and column indices of the upper triangle (i32)."""
    return _indices("triu_indices", False, n, k, m)


def tril_indices_from(arr: AnyTensor, k: int = 0) -> tuple[Tensor[i32, Any], Tensor[i32, Any]]:
    shape = np.shape(arr) if not isinstance(arr, Tensor) else arr.shape
    if len(shape) != 2:
        raise shape_error("tril_indices_from", f"needs a 2-D operand, got {describe(arr)}")
    return _indices("tril_indices_from", True, shape[-2], k, shape[-1])


def triu_indices_from(arr: AnyTensor, k: int = 0) -> tuple[Tensor[i32, Any], Tensor[i32, Any]]:
    shape = np.shape(arr) if not isinstance(arr, Tensor) else arr.shape
    if len(shape) != 2:
        raise shape_error("triu_indices_from", f"needs a 2-D operand, got {describe(arr)}")
    return _indices("triu_indices_from", False, shape[-2], k, shape[-1])


# -------------------------------------------------------------------------------------------- diagonals


def _diagonal_last(x: Atom, offset: int) -> Atom:
    """The ``offset`` diagonal of the last two axes, as the new last axis: the square block the diagonal runs
    through, flattened, read with stride ``size + 1``."""
    *lead, rows, cols = x.aval.shape
    lead_dims = x.aval.dims[:-2]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    size = max(0, min(rows - r0, cols - c0))
    r0, c0 = min(r0, rows), min(c0, cols)
    nd = x.aval.ndim
    block = SL.slice_(x, (0,) * (nd - 2) + (r0, c0), (*lead, r0 + size, c0 + size))
    flat = S.reshape(block, (*lead, size * size), (*lead_dims, None))
    picked = SL.slice_(flat, (0,) * (nd - 1), (*lead, size * size), (1,) * (nd - 2) + (size + 1,))
    name = x.aval.dims[-1] if offset == 0 and x.aval.dims[-1] == x.aval.dims[-2] else None
    return S.reshape(picked, (*lead, size), (*lead_dims, name))


@op
def diagonal(
    a: Tensor[DT, Unpack[Sh]], offset: int = 0, axis1: Axis = 0, axis2: Axis = 1
) -> Tensor[DT, Unpack[AnyShape]]:
    """The ``offset`` diagonal of the plane ``(axis1, axis2)``; the other axes come first and the diagonal last,
    as NumPy. (Like JAX, a new array, never a view.)"""
    t = as_tensor(a)
    if t.aval.ndim < 2:
        raise shape_error("diagonal", f"needs an operand of rank >= 2, got {describe(t)}")
    p, q = normalize_axes("diagonal", (axis1, axis2), t)
    rest = [k for k in range(t.aval.ndim) if k not in (p, q)]
    moved = S.transpose(t.atom, (*rest, p, q))
    return wrap(_diagonal_last(moved, static_int("diagonal", offset, "offset")))


@overload
def trace(a: Tensor[FT, A, B], offset: int = 0, axis1: Axis = 0, axis2: Axis = 1, dtype: None = None) -> Tensor[FT]: ...
@overload
def trace(
    a: Tensor[Any, Unpack[Sh]], offset: int = 0, axis1: Axis = 0, axis2: Axis = 1, dtype: Any = None
) -> Tensor[Any, Unpack[AnyShape]]: ...
@op
def trace(
    a: AnyTensor, offset: int = 0, axis1: Axis = 0, axis2: Axis = 1, dtype: Any = None
) -> AnyTensor:
    """Sum along the ``offset`` diagonal of the plane ``(axis1, axis2)``. Integers narrower than 32 bits sum in
    i32/u32 (as ``sum``), not in NumPy's platform integer."""
    from .reductions import sum as _sum

    # read here, not only in diagonal: a nested op's plain error would name the user's line twice
    offset = static_int("trace", offset, "offset")
    d: AnyTensor = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        d = wrap(E.convert(as_tensor(d).atom, _dtype(dtype)))
    return _sum(d, axis=-1)


@op
def diag(v: AnyTensor, k: int = 0) -> AnyTensor:
    """A 1-D operand as the ``k``-th diagonal of a square matrix; a 2-D operand's ``k``-th diagonal."""
    t = as_tensor(v)
    k = static_int("diag", k, "k")
    if t.aval.ndim == 2:
        return wrap(_diagonal_last(t.atom, k))
    if t.aval.ndim != 1:
        raise shape_error("diag", f"needs a 1-D or 2-D operand, got {describe(t)}")
    return wrap(_diag_matrix(t.atom, k))


def _diag_matrix(x: Atom, k: int) -> Atom:
    n = x.aval.shape[0]
    size = n + abs(k)
    # Entry (r, c) with c - r == k holds x[r] when k >= 0 and x[c] when k < 0: pad x to the full size and
    # broadcast it along the other axis, then keep only that diagonal.
    padded = SL.pad(S.reshape(x, (n,), (None,)), E.scalar(0, x), [(0, abs(k), 0)])
    wide = S.broadcast_in_dim(padded, (size, size), (0,) if k >= 0 else (1,))
    row = SL.iota(_I32, (size, size), 0)
    col = SL.iota(_I32, (size, size), 1)
    on = E.eq(E.sub(col, row), literal(k, _I32))
    return E.select(on, wide, S.full_like(wide, 0))


@op
def diagflat(v: AnyTensor, k: int = 0) -> Tensor[Any, Any, Any]:
    """The flattened operand as the ``k``-th diagonal of a square matrix."""
    x = as_tensor(v).atom
    return wrap(_diag_matrix(S.reshape(x, (x.aval.size,)), static_int("diagflat", k, "k")))


@overload
def identity(n: int, dtype: None = None) -> Tensor[f32, Any, Any]: ...
@overload
def identity(n: int, dtype: type[DT]) -> Tensor[DT, Any, Any]: ...
def identity(n: int, dtype: Any = None) -> Any:
    """The ``n x n`` identity matrix (default dtype f32, NumPy's is f64)."""
    from .creation import eye

    return eye(n, dtype=dtype)


# ---------------------------------------------------------------------------------------------- products


@op
def kron(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Kronecker product: blocks of ``b`` scaled by each element of ``a``; the lower-rank operand gets leading
    size-1 axes first, as NumPy."""
    dtype = result_dtype("kron", (a, b))
    x, y = atom(a, dtype), atom(b, dtype)
    rank = max(x.aval.ndim, y.aval.ndim)
    x = S.reshape(x, (1,) * (rank - x.aval.ndim) + x.aval.shape)
    y = S.reshape(y, (1,) * (rank - y.aval.ndim) + y.aval.shape)
    pairs = tuple(n for p in zip(x.aval.shape, y.aval.shape) for n in p)
    xb = S.broadcast_in_dim(x, pairs, tuple(range(0, 2 * rank, 2)))
    yb = S.broadcast_in_dim(y, pairs, tuple(range(1, 2 * rank, 2)))
    product = bind(E.and_p if dtype == np.bool_ else E.mul_p, xb, yb)
    return wrap(S.reshape(product, tuple(n * m for n, m in zip(x.aval.shape, y.aval.shape))))


@op
def cross(
    a: AnyTensor, b: AnyTensor, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> AnyTensor:
    """Cross product of 3-vectors along ``axisa``/``axisb`` (``axis`` sets all three), the result's vectors along
    ``axisc``; the other axes broadcast. 2-vectors (deprecated in NumPy 2) are not supported."""
    dtype = result_dtype("cross", (a, b))
    ta, tb = wrap(atom(a, dtype)), wrap(atom(b, dtype))
    if axis is not None:
        axisa = axisb = axisc = axis
    if ta.aval.ndim == 0 or tb.aval.ndim == 0:
        raise shape_error("cross", f"needs vectors, got {describe(ta)} and {describe(tb)}")
    (pa,) = normalize_axes("cross", axisa, ta)
    (pb,) = normalize_axes("cross", axisb, tb)
    if ta.aval.shape[pa] != 3 or tb.aval.shape[pb] != 3:
        raise shape_error(
            "cross", f"needs 3-vectors: axis {axisa} of {describe(ta)} and axis {axisb} of {describe(tb)} must have "
            "size 3 (2-vectors are not supported)",
        )
    x = S.moveaxis(ta.atom, pa, ta.aval.ndim - 1)
    y = S.moveaxis(tb.atom, pb, tb.aval.ndim - 1)
    if x.aval.ndim > 1 or y.aval.ndim > 1:
        lead = broadcast_shapes("cross", [_drop_last(x.aval), _drop_last(y.aval)])
        x, y = _lead_to(x, lead), _lead_to(y, lead)
    nd = x.aval.ndim

    def part(z: Atom, i: int) -> Atom:
        return SL.slice_in_dim(z, i, i + 1, nd - 1)

    comps = [
        E.sub(E.mul(part(x, (i + 1) % 3), part(y, (i + 2) % 3)), E.mul(part(x, (i + 2) % 3), part(y, (i + 1) % 3)))
        for i in range(3)
    ]
    out = SL.concatenate(comps, nd - 1)
    if not -nd <= axisc < nd:
        raise shape_error("cross", f"axisc {axisc} is out of range for a result of rank {nd}")
    return wrap(S.moveaxis(out, nd - 1, axisc % nd))


def _drop_last(a: Aval) -> Aval:
    return Aval(a.shape[:-1], a.dtype, a.dims[:-1])


def _lead_to(x: Atom, lead: Aval) -> Atom:
    shape = (*lead.shape, x.aval.shape[-1])
    if x.aval.shape == shape:
        return x
    return S.broadcast_to(x, Aval(shape, x.aval.dtype, (*lead.dims, x.aval.dims[-1])))


@op
def inner(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Sum product over the last axes; the result's axes are ``a``'s others then ``b``'s (a scalar operand
    multiplies)."""
    dtype = result_dtype("inner", (a, b))
    x, y = atom(a, dtype), atom(b, dtype)
    if x.aval.ndim == 0 or y.aval.ndim == 0:
        from .ufuncs import multiply

        return multiply(wrap(x), wrap(y))
    if x.aval.shape[-1] != y.aval.shape[-1]:
        raise shape_error("inner", f"last axes differ: {describe(wrap(x))} and {describe(wrap(y))}")
    product = L.dot_general(as_counts(x), as_counts(y), ((x.aval.ndim - 1,), (y.aval.ndim - 1,)))
    return wrap(as_logical(product, wrap(x)))


@op
def matrix_transpose(x: Tensor[DT, Unpack[Sh], A, B]) -> Tensor[DT, Unpack[Sh], B, A]:
    """Swap the last two axes (NumPy 2's ``matrix_transpose``; rank >= 2)."""
    t = as_tensor(x)
    nd = t.aval.ndim
    if nd < 2:
        raise shape_error("matrix_transpose", f"needs an operand of rank >= 2, got {describe(t)}")
    return wrap(S.transpose(t.atom, (*range(nd - 2), nd - 1, nd - 2)))


@op
def vecdot(x1: AnyTensor, x2: AnyTensor, axis: int = -1) -> AnyTensor:
    """Dot products of vectors along ``axis``, the other axes broadcast (NumPy 2: complex ``x1`` is conjugated)."""
    from .ufuncs import multiply
    from .reductions import sum as _sum

    dtype = result_dtype("vecdot", (x1, x2))
    x, y = wrap(atom(x1, dtype)), wrap(atom(x2, dtype))
    if _dt.is_complex(dtype):
        x = wrap(C.conj(x.atom))
    if x.aval.ndim == 0 or y.aval.ndim == 0:
        raise shape_error("vecdot", f"needs vectors, got {describe(x)} and {describe(y)}")
    product = multiply(x, y)
    (k,) = normalize_axes("vecdot", axis, product)
    total = _sum(product, axis=k)
    # sum widens small integers; NumPy's vecdot keeps the operands' dtype (the same low bits, so the same wrap)
    return total if total.dtype == dtype else total.astype(dtype)


@op
def vander(x: AnyTensor, N: int | None = None, increasing: bool = False) -> Tensor[Any, Any, Any]:
    """Columns of powers of the 1-D ``x``: ``x**(N-1), ..., x, 1`` (``1, x, ...`` when ``increasing``)."""
    t = as_tensor(x)
    if t.aval.ndim != 1:
        raise shape_error("vander", f"needs a 1-D operand, got {describe(t)}")
    n = t.aval.shape[0] if N is None else static_int("vander", N, "N")
    if n < 0:
        raise shape_error("vander", f"N must be non-negative, got {n}")
    col = S.reshape(t.atom, (t.aval.shape[0], 1), (t.aval.dims[0], None))
    cols: list[Atom] = []
    power = S.full_like(col, 1)
    for _ in range(n):
        cols.append(power)
        power = E.mul(power, col)
    if not cols:
        return wrap(S.full_like(Aval((t.aval.shape[0], 0), t.aval.dtype, (t.aval.dims[0], None)), 0))
    out = SL.concatenate(cols if increasing else cols[::-1], 1)
    return wrap(out)


# ---------------------------------------------------------------------------------------------- statistics


def _observations(op_name: str, m: Any, rowvar: bool, y: Any = None) -> Atom:
    """``(variables, observations)``: the variables of ``m``, then those of ``y`` (NumPy's rules: a 1-D array is
    one variable; with ``rowvar`` False the columns are the variables, but a 2-D ``y`` of one row stays a row)."""
    x = _variables(op_name, m, transpose=not rowvar)
    if y is None:
        return x
    extra = _variables(op_name, y, transpose=not rowvar and np.ndim(y) == 2 and np.shape(y)[0] != 1)
    if extra.aval.dtype != x.aval.dtype:
        raise dtype_error(op_name, f"m {describe(m)} and y {describe(y)} have different dtypes")
    if extra.aval.shape[1] != x.aval.shape[1]:
        raise shape_error(op_name, f"m and y must have as many observations: {describe(m)} and {describe(y)} "
                          f"give {x.aval.shape[1]} and {extra.aval.shape[1]} (rowvar={rowvar})")
    unnamed = (None, None)
    return SL.concatenate([S.reshape(x, x.aval.shape, unnamed), S.reshape(extra, extra.aval.shape, unnamed)], 0)


def _variables(op_name: str, m: Any, transpose: bool) -> Atom:
    t = float_operand(op_name, m)
    if t.aval.ndim > 2:
        raise shape_error(op_name, f"needs a 1-D or 2-D operand, got {describe(t)}")
    x = t.atom
    if x.aval.ndim < 2:
        return S.reshape(x, (1, x.aval.size), (None, x.aval.dims[0] if x.aval.ndim else None))
    return S.transpose(x, (1, 0)) if transpose else x


@op
def cov(
    m: AnyTensor, y: AnyTensor | None = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
    fweights: Any = None, aweights: Any = None,
) -> AnyTensor:
    """Covariance matrix of the variables in the rows of ``m`` (columns when ``rowvar`` is False), and of ``y``'s
    after them. A 1-D operand is one variable and gives a scalar (so does any single variable, as NumPy); float
    operands only; the weights may be staged (their values are not checked)."""
    x = _observations("cov", m, rowvar, y)
    dtype = x.aval.dtype
    nobs = x.aval.shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    weights = None
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        wt = as_tensor(w)
        if wt.aval.ndim != 1 or wt.aval.shape[0] != nobs:
            raise shape_error("cov", f"{name} {describe(wt)} must be 1-D with one weight per observation ({nobs})")
        wa = E.convert(wt.atom, dtype) if wt.aval.dtype != dtype else wt.atom
        weights = wa if weights is None else E.mul(weights, wa)
    if weights is None:
        total: Atom = literal(float(nobs), dtype)
        mean = E.div(R.reduce_sum(x, (1,)), total)
        fact: Atom = literal(float(max(nobs - ddof, 0)), dtype)
        centered = E.sub(x, S.broadcast_in_dim(mean, x.aval.shape, (0,), x.aval.dims))
        weighted = centered
    else:
        wrow = S.broadcast_in_dim(weights, x.aval.shape, (1,), x.aval.dims)
        total = R.reduce_sum(weights, (0,))
        mean = E.div(R.reduce_sum(E.mul(x, wrow), (1,)), total)
        centered = E.sub(x, S.broadcast_in_dim(mean, x.aval.shape, (0,), x.aval.dims))
        weighted = E.mul(centered, wrow)
        if aweights is None:
            fact = E.sub(total, literal(float(ddof), dtype))
        else:
            aw = as_tensor(aweights).atom
            aw = E.convert(aw, dtype) if aw.aval.dtype != dtype else aw
            spread = R.reduce_sum(E.mul(weights, aw), (0,))
            fact = E.sub(total, E.div(E.mul(literal(float(ddof), dtype), spread), total))
        fact = E.maximum(fact, literal(0.0, dtype))
    c = E.div(L.dot_general(weighted, centered, ((1,), (1,))), fact)
    if c.aval.shape == (1, 1):  # one variable: a scalar, as NumPy (which squeezes the matrix)
        return wrap(S.reshape(c, ()))
    return wrap(c)


@op
def corrcoef(x: AnyTensor, y: AnyTensor | None = None, rowvar: bool = True) -> AnyTensor:
    """Pearson correlation coefficients (``cov`` normalized by the standard deviations, clipped to [-1, 1]) of
    the variables of ``x`` and then ``y``'s. A constant variable gives NaN, as NumPy."""
    c = as_tensor(cov(x, y, rowvar)).atom
    if c.aval.ndim == 0:
        return wrap(E.div(c, c))
    n = c.aval.shape[0]
    d = _diagonal_last(c, 0)
    sd = bind(E.sqrt_p, d)
    by_row = S.broadcast_in_dim(sd, (n, n), (0,), c.aval.dims)
    by_col = S.broadcast_in_dim(sd, (n, n), (1,), c.aval.dims)
    scaled = E.div(E.div(c, by_row), by_col)
    one = literal(1.0, c.aval.dtype)
    return wrap(E.clamp(literal(-1.0, c.aval.dtype), scaled, one))
