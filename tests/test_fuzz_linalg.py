"""Fuzzing ``tnp.linalg`` and the products (matmul, dot, vdot, outer, tensordot, multi_dot) against NumPy float64.

Seeded random shapes (1-D, 2-D, batched, broadcast batch axes, empty batches, 0x0 and 1x1 matrices) and values
(well conditioned, ill conditioned, singular), staged in a few programs (one compile for many cases), eagerly too;
derivatives against central finite differences in f64; vmap against a Python loop; LAPACK against XLA's
expansion (``lapack.set_enabled``; CI never sets ``TENSORSTAGE_LAPACK``). Tolerances scale with the condition
number.

Deliberate differences from NumPy, tested here:
- No dtype promotion: integer or boolean operands of solve, inv, det, eigh, svd, norm... are a DTypeError (NumPy
  converts them to float64), and so are mixed float dtypes (``solve(f32, f64)``). ``matrix_power`` takes integer
  matrices for ``n >= 0`` (a negative power would be a float result: DTypeError); boolean ones are a DTypeError.
- Staged code cannot raise on values: a singular matrix gives non-finite results where NumPy raises LinAlgError.
  On CPU (LAPACK's LU, an exact zero pivot) ``solve``/``inv`` give inf/NaN and ``det`` 0, ``slogdet`` (0, -inf),
  as NumPy's values; XLA's QR expansion (other platforms, ``TENSORSTAGE_LAPACK=0``) leaves rounding noise on R's
  diagonal instead: a huge finite solution and a tiny determinant (as LU gives for nearly singular matrices).
  A failed Cholesky is NaN.
- ``matrix_rank`` counts and ``trace`` of narrow integers are i32 (tensorstage's default integer), NumPy's int64.
- 0-d operands of dot, vdot and outer are a ShapeError (NumPy multiplies them): write ``x * y``.
- Batch axes broadcast without the silent outer product: ``(7, 1, ...)`` against ``(5, ...)`` is a ShapeError
  (NumPy gives ``(7, 5, ...)``), in matmul, vecdot and solve alike.
- ``lstsq``'s residuals are computed for rank-deficient ``a`` too (NumPy returns an empty array: a shape that
  depends on values).
- ``svd`` (and pinv, lstsq, matrix_rank, cond, svdvals) support f32, f64, c64 and c128 (as NumPy); f16/bf16
  are a DTypeError. Other decompositions accept f16/bf16 (NumPy rejects them) and compute in f32,
  rounding the result (XLA's GPU backend has no half-precision triangular solve).
- Matrix norms 2, -2 and 'nuc' come from ``eigh`` of ``[[0, R], [Rᵀ, 0]]`` (portable beyond CPU): as accurate
  as NumPy's SVD (absolute error ~ eps * max(s)), not bit-identical.
- Errors are tensorstage's ShapeError/DTypeError (TypeErrors) where NumPy raises ValueError/LinAlgError, e.g. a
  minimum over an empty axis (``norm(x, -2)`` of an empty matrix) or ``cond`` of an empty matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack

LA = tnp.linalg
THIS_FILE = "test_fuzz_linalg.py"
F64 = {"rtol": 1e-9, "atol": 1e-11}


def _random_matrix(rng: np.random.Generator, shape: tuple[int, ...], cond: float = 10.0) -> np.ndarray:
    """Random matrices with singular values spread log-evenly over ``[1, cond]`` (times a random scale)."""
    *batch, m, n = shape
    k = min(m, n)
    out = np.empty(shape)
    for index in np.ndindex(*batch):
        u, _ = np.linalg.qr(rng.standard_normal((m, m)))
        v, _ = np.linalg.qr(rng.standard_normal((n, n)))
        s = np.geomspace(1.0, cond, k) * rng.uniform(0.5, 2.0) if k else np.zeros(0)
        out[index] = (u[:, :k] * s) @ v[:k]
    return out


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _check(got: Any, want: Any, what: Any, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=repr(what))


# ----------------------------------------------------------------------------------------------- products

PRODUCT_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
    ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((1, 5, 2, 3), (4, 1, 3, 2)), ((0, 2, 3), (3, 4)), ((2, 0), (0, 3)),
    ((2, 3), (0, 3, 4)), ((6, 1, 2, 3), (1, 3, 2)),
]


def test_products_match_numpy(rng: np.random.Generator) -> None:
    pairs = [(rng.standard_normal(sa), rng.standard_normal(sb)) for sa, sb in PRODUCT_SHAPES]
    nd = (rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4, 6)))
    chain = [rng.standard_normal(s) for s in ((3,), (3, 10), (10, 2), (2, 7))]

    @ts.program  # one compile for every case
    def run(pairs: Any, nd: Any, chain: Any) -> Any:
        products = [(a @ b, tnp.matmul(a, b), tnp.dot(a, b)) for a, b in pairs]
        vdots = [tnp.vdot(a, a) for a, _ in pairs]
        extras = (tnp.dot(*nd), tnp.outer(nd[0], chain[0]), tnp.tensordot(nd[0], nd[1], ([2], [1])),
                  tnp.tensordot(chain[1], chain[2], 0), LA.multi_dot(chain), LA.multi_dot(chain[1:3]))
        return products, vdots, extras

    products, vdots, extras = run(pairs, nd, chain)
    for (a, b), got in zip(pairs, products):
        for g, want in zip(got, (np.matmul(a, b), np.matmul(a, b), np.dot(a, b))):
            _check(g, want, (a.shape, b.shape))
    for (a, _), got in zip(pairs, vdots):
        _check(got, np.vdot(a, a), a.shape)
    c = chain
    expected = (np.dot(*nd), np.outer(nd[0], c[0]), np.tensordot(nd[0], nd[1], ([2], [1])),
                np.tensordot(c[1], c[2], 0), np.linalg.multi_dot(c), np.linalg.multi_dot(c[1:3]))
    for k, (got, want) in enumerate(zip(extras, expected)):
        _check(got, want, k)
    a, b = pairs[8]
    _check(tnp.matmul(a, b), np.matmul(a, b), "eager")  # eager agrees


OTHER_DTYPES = [np.int8, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16]


def test_products_of_other_dtypes(rng: np.random.Generator) -> None:
    """Integer products wrap in the dtype, as NumPy's; booleans are NumPy's logical products; f16/bf16 accumulate
    in f32 at least (an error of a few ulps of the result, not of the sum of ``k`` rounded terms). One program
    for every dtype."""
    inputs = [tuple(rng.integers(0, 3, shape).astype(dtype) for shape in ((2, 4, 64), (64, 3), (64,)))
              for dtype in OTHER_DTYPES]
    outs = ts.program(lambda inputs: [(a @ b, tnp.dot(a, b), tnp.vdot(v, v), tnp.outer(v, v[:3]), a @ v,
                                       LA.multi_dot([v, b, b.T[:, :5]])) for a, b, v in inputs])(inputs)
    for dtype, (a, b, v), got_all in zip(OTHER_DTYPES, inputs, outs):
        if np.dtype(dtype) == ml_dtypes.bfloat16:  # NumPy has no bf16 products: f32 ones, rounded to bf16
            expected = [np.asarray(e).astype(dtype) for e in _products(*(x.astype(np.float32) for x in (a, b, v)))]
        else:
            expected = _products(a, b, v)
        for got, want in zip(got_all, expected):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape, (dtype, got.dtype, want.dtype)
            tol = 1e-2 if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16 else 0
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol)


def _products(a: np.ndarray, b: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    return [a @ b, np.dot(a, b), np.asarray(np.vdot(v, v)), np.outer(v, v[:3]), a @ v,
            np.linalg.multi_dot([v, b, b.T[:, :5]])]


def test_half_precision_matmul_accumulates_in_f32(rng: np.random.Generator) -> None:
    ones = np.ones((1, 4096), np.float16)
    assert float(np.asarray(tnp.matmul(ones, ones.T))[0, 0]) == 4096.0  # an f16 running sum stalls at 2048
    a, b = rng.standard_normal((8, 2000)).astype(np.float16), rng.standard_normal((2000, 3)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(np.asarray(tnp.matmul(a, b)).astype(np.float64) - exact).max()
    assert err <= 2 * np.abs(np.matmul(a, b).astype(np.float64) - exact).max() + 0.05


# ------------------------------------------------------------------------------------------------ solving

SOLVE_CASES = [  # (a's shape, b's shape): NumPy 2's rule, b is a vector only when 1-D
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 4, 3, 3), (3,)), ((2, 4, 3, 3), (2, 4, 3, 2)), ((2, 4, 3, 3), (4, 3, 2)),
    ((2, 4, 3, 3), (1, 4, 3, 1)), ((3, 3), (5, 3, 2)), ((1, 3, 3), (5, 3, 2)), ((0, 3, 3), (3,)),
    ((0, 0), (0,)), ((0, 0), (0, 4)), ((2, 1, 1), (2, 1, 3)), ((3, 3), (3, 0)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_solve_broadcasts_like_numpy2(dtype: Any, rng: np.random.Generator) -> None:
    cond = 50.0
    cases = [(_random_matrix(rng, sa, cond).astype(dtype), rng.standard_normal(sb).astype(dtype))
             for sa, sb in SOLVE_CASES]
    outs = ts.program(lambda cases: [LA.solve(a, b) for a, b in cases])(cases)
    eps = float(np.finfo(dtype).eps)
    for (a, b), got in zip(cases, outs):
        want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
        _check(got, want, (a.shape, b.shape), rtol=100 * cond * eps, atol=100 * cond * eps)
    a, b = cases[4]
    _check(LA.solve(a, b), np.linalg.solve(a, b).astype(dtype), "eager", rtol=100 * cond * eps, atol=1e-5)


def test_solve_rejects_what_numpy_rejects() -> None:
    bad = [((3, 3), (4,)), ((3, 3), (4, 2)), ((2, 3, 3), (3, 3, 2)), ((3, 3), ()), ((3, 3), (3, 3, 3, 2, 2))]
    for sa, sb in bad:
        try:
            np.linalg.solve(np.eye(sa[-1]) * np.ones(sa), np.ones(sb))
            numpy_raises = False
        except (ValueError, np.linalg.LinAlgError):
            numpy_raises = True
        assert numpy_raises, (sa, sb)
        with pytest.raises(ts.ShapeError, match="solve") as info:
            LA.solve(np.ones(sa), np.ones(sb))
        assert THIS_FILE in str(info.value), str(info.value)


# ---------------------------------------------------------------------------------- decompositions, fuzzed

SHAPES = {  # (square shapes, rectangular shapes): f32 reuses the kernels of f64, so fewer cases
    np.float64: ([(3, 3), (1, 1), (0, 0), (2, 1, 4, 4), (3, 0, 0)], [(5, 3), (2, 3, 5), (1, 1), (0, 3), (0, 2, 3)]),
    np.float32: ([(2, 4, 4)], [(5, 3)]),
}


def _square_results(a: Any, s: Any) -> Any:
    return (LA.inv(a), LA.det(a), LA.slogdet(a), LA.cholesky(s), LA.cholesky(s, upper=True), LA.eigvalsh(s),
            LA.eigvalsh(s, UPLO="U"), LA.eigh(s)[0], LA.matrix_power(a, -2), LA.matrix_power(a, 0),
            LA.matrix_power(a, 3), LA.qr(a, mode="r"))


def _square_expected(a: np.ndarray, s: np.ndarray) -> Any:
    np_ = np.linalg
    return (np_.inv(a), np_.det(a), np_.slogdet(a), np_.cholesky(s), np.swapaxes(np_.cholesky(s), -1, -2),
            np_.eigvalsh(s), np_.eigvalsh(s, UPLO="U"), np_.eigh(s)[0], np_.matrix_power(a, -2),
            np_.matrix_power(a, 0), np_.matrix_power(a, 3), np_.qr(a, mode="r"))


def _rect_results(a: Any) -> Any:
    q, r = LA.qr(a)
    qc, rc = LA.qr(a, mode="complete")
    return (tnp.abs(q), tnp.abs(r), tnp.abs(qc) if qc.shape[-1] == 0 else qc @ rc, LA.svdvals(a),
            LA.svd(a, compute_uv=False), LA.pinv(a), LA.pinv(a, rtol=None), LA.matrix_rank(a),
            LA.norm(a, axis=(-2, -1)), LA.matrix_norm(a, ord="nuc"), LA.matrix_norm(a, ord=2))


def _rect_expected(a: np.ndarray) -> Any:
    q, r = np.linalg.qr(a)
    qc, rc = np.linalg.qr(a, mode="complete")
    return (np.abs(q), np.abs(r), np.abs(qc) if qc.shape[-1] == 0 else a, np.linalg.svd(a, compute_uv=False),
            np.linalg.svd(a, compute_uv=False), np.linalg.pinv(a), np.linalg.pinv(a, rtol=None),
            np.linalg.matrix_rank(a).astype(np.int32), np.linalg.norm(a, axis=(-2, -1)),
            np.linalg.matrix_norm(a, ord="nuc"), np.linalg.matrix_norm(a, ord=2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decompositions_match_numpy_on_random_shapes(dtype: Any, rng: np.random.Generator) -> None:
    cond = 30.0
    square_shapes, rect_shapes = SHAPES[dtype]
    square = [(_random_matrix(rng, s, cond), _spd(rng, s)) for s in square_shapes]
    rect = [_random_matrix(rng, s, cond) for s in rect_shapes]
    cast = lambda x: x.astype(dtype)  # noqa: E731

    @ts.program
    def run(square: Any, rect: Any) -> Any:
        return [_square_results(a, s) for a, s in square], [_rect_results(a) for a in rect]

    got_square, got_rect = run([(cast(a), cast(s)) for a, s in square], [cast(a) for a in rect])
    # f32 results are compared with f64 NumPy on the same (rounded) input; errors grow with cond(a)^2 at most
    # (matrix_power(a, -2)).
    tol = 1e-9 if dtype == np.float64 else 50 * cond**2 * float(np.finfo(np.float32).eps)
    for (a, s), got in zip(square, got_square):
        a64, s64 = cast(a).astype(np.float64), cast(s).astype(np.float64)
        for k, (g, w) in enumerate(zip(_flat(got), _flat(_square_expected(a64, s64)))):
            scale = max(1.0, float(np.abs(w).max(initial=0)))
            _check(g, w.astype(dtype) if w.dtype.kind == "f" else w, (a.shape, k), rtol=tol, atol=tol * scale)
    for a, got in zip(rect, got_rect):
        a64 = cast(a).astype(np.float64)
        for k, (g, w) in enumerate(zip(got, _rect_expected(a64))):
            w = np.asarray(w)
            scale = max(1.0, float(np.abs(w).max(initial=0)))
            _check(g, w.astype(dtype) if w.dtype.kind == "f" else w, (a.shape, k), rtol=tol, atol=tol * scale)


def _flat(results: Any) -> list[Any]:
    out: list[Any] = []
    for r in results:
        out.extend(r if isinstance(r, tuple) else (r,))
    return out


def test_lstsq_matches_numpy(rng: np.random.Generator) -> None:
    cases = [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)), ((3, 3), (3, 2)), ((0, 3), (0,)), ((3, 0), (3, 2)),
             ((5, 3), (5, 0))]
    inputs = [(_random_matrix(rng, sa, 20.0), rng.standard_normal(sb)) for sa, sb in cases]
    outs = ts.program(lambda cases: [LA.lstsq(a, b) for a, b in cases] + [LA.lstsq(*cases[0], rcond=0.5)])(inputs)
    expected = [np.linalg.lstsq(a, b) for a, b in inputs] + [np.linalg.lstsq(*inputs[0], rcond=0.5)]
    for (a, b), (x, res, rank, s), (xe, rese, ranke, se) in zip(inputs + inputs[:1], outs, expected):
        _check(x, xe, "x")
        if a.shape[0] > a.shape[1] > ranke:  # rank-deficient: NumPy has no residuals, here they are computed
            rese = np.sum((a @ xe - b) ** 2, axis=0).reshape(-1)
        _check(res, rese, "residuals")
        assert int(np.asarray(rank)) == int(ranke)
        _check(s, se, "s")


def test_tensor_and_array_api_functions_match_numpy(rng: np.random.Generator) -> None:
    a4 = _random_matrix(rng, (24, 24), 10.0).reshape(4, 6, 8, 3)
    a3 = _random_matrix(rng, (6, 6), 10.0).reshape(2, 3, 6)
    x, y = rng.standard_normal((2, 1, 3)), rng.standard_normal((4, 3))
    m = rng.standard_normal((2, 3, 4))
    inputs = (a4, a3, rng.standard_normal((2, 3)), x, y, m, rng.standard_normal(5))

    def ours(a4: Any, a3: Any, b: Any, x: Any, y: Any, m: Any, v: Any) -> Any:
        return (LA.tensorinv(a4, 2), LA.tensorinv(a3, 2), LA.tensorsolve(a3, b), LA.tensorsolve(a3.transpose(2, 0, 1),
                b, axes=(0,)), LA.cross(x, y[:1]), LA.cross(m[..., :3], m[..., 1:]), LA.trace(m, offset=1),
                LA.trace(m, offset=-5), LA.diagonal(m, offset=-1), LA.outer(v, v[:2]), LA.vecdot(m, m[0]),
                LA.matrix_transpose(m))

    def theirs(a4: Any, a3: Any, b: Any, x: Any, y: Any, m: Any, v: Any) -> Any:
        la = np.linalg
        return (la.tensorinv(a4, 2), la.tensorinv(a3, 2), la.tensorsolve(a3, b), la.tensorsolve(a3.transpose(2, 0, 1),
                b, axes=(0,)), la.cross(x, y[:1]), la.cross(m[..., :3], m[..., 1:]), la.trace(m, offset=1),
                la.trace(m, offset=-5), la.diagonal(m, offset=-1), la.outer(v, v[:2]), la.vecdot(m, m[0]),
                la.matrix_transpose(m))

    for k, (got, want) in enumerate(zip(ts.program(ours)(*inputs), theirs(*inputs))):
        _check(got, want, k)


# -------------------------------------------------------------------------------------------------- norms

NORM_SHAPES = [(3, 4), (2, 3, 4), (0, 3), (2, 0, 3)]  # with axis -1 or 0 these give vectors too
ORDS: list[Any] = [None, 0, 1, -1, 2, -2, 0.5, np.inf, -np.inf, "fro", "nuc"]
AXES: list[Any] = [None, -1, 0, (0, 1), (1, 0)]


def _numpy_or_error(f: Callable[[], Any]) -> Any:
    try:
        with np.errstate(all="ignore"):
            return np.asarray(f())
    except (ValueError, TypeError, np.linalg.LinAlgError) as e:
        return e


def _unary(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda t: f(t)  # no defaulted parameters: staging would take them for arguments


def test_norms_match_numpy_for_every_ord_axis_and_keepdims(rng: np.random.Generator) -> None:
    """Every (shape, ord, axis, keepdims) NumPy answers is answered alike; what NumPy rejects is rejected (the
    minimum of an empty set included), with an error naming the op. One program per shape."""
    for shape in NORM_SHAPES:
        x = rng.standard_normal(shape)
        calls: list[tuple[str, Callable[[Any], Any], Callable[[np.ndarray], Any]]] = []
        for o in ORDS:
            for i, ax in enumerate(AXES):
                for kd in (i % 2 == 1,):  # keepdims for every other axis: enough to fuzz it, half the compile
                    calls.append((f"norm({o}, {ax}, {kd})", lambda t, o=o, ax=ax, kd=kd: LA.norm(t, o, ax, kd),
                                  lambda x, o=o, ax=ax, kd=kd: np.linalg.norm(x, o, ax, kd)))
            if not isinstance(o, str):
                p = 2 if o is None else o
                for ax in (None, -1, (0, -1)):
                    calls.append((f"vector_norm({p}, {ax})", lambda t, p=p, ax=ax: LA.vector_norm(t, ax, True, p),
                                  lambda x, p=p, ax=ax: np.linalg.vector_norm(x, axis=ax, keepdims=True, ord=p)))
            if o is not None:
                calls.append((f"matrix_norm({o})", lambda t, o=o: LA.matrix_norm(t, ord=o),
                              lambda x, o=o: np.linalg.matrix_norm(x, ord=o)))
        valid = []
        for name, ours, theirs in calls:
            want = _numpy_or_error(lambda: theirs(x))
            if isinstance(want, Exception):
                with pytest.raises((ValueError, TypeError), match=name.split("(")[0]):
                    ts.program(_unary(ours)).stage(ts.Spec(x.shape, ts.f64))
            else:
                valid.append((name, ours, want))
        outs = ts.program(lambda t: [ours(t) for _, ours, _ in valid])(x)
        for (name, _, want), got in zip(valid, outs):
            _check(got, want, (shape, name))


def test_matrix_norms_of_ill_conditioned_matrices(rng: np.random.Generator) -> None:
    """-2 and 'nuc' keep the small singular values (a Gram matrix ``xᵀx`` would lose them: at cond 1e4 its -2
    norm was 24% off)."""
    a = np.stack([_random_matrix(rng, (4, 4), c) for c in (1e4, 1e8)] + [np.outer(np.arange(4.0), np.ones(4))])
    tall = _random_matrix(rng, (2, 7, 3), 1e6)
    got = ts.program(lambda a, t: [LA.norm(x, o, axis=(-2, -1)) for x in (a, t) for o in (2, -2, "nuc")])(a, tall)
    for k, (x, o) in enumerate((x, o) for x in (a, tall) for o in (2, -2, "nuc")):
        want = np.linalg.norm(x, o, axis=(-2, -1))
        err = np.abs(np.asarray(got[k]) - want)
        assert (err <= 1e-13 * np.linalg.norm(x, 2, axis=(-2, -1))).all(), (k, err, want)


def test_vector_norms_of_special_values() -> None:
    x = np.array([[np.inf, 1.0, 0.0], [np.nan, 1.0, 2.0], [0.0, 0.0, 0.0], [1e200, 1e200, 0.0]])
    ords = (None, 0, 1, 2, 3, np.inf, -np.inf, -1, 0.5)
    outs = ts.program(lambda t: [LA.norm(t, o, axis=1) for o in ords])(x)
    with np.errstate(all="ignore"):
        for o, got in zip(ords, outs):
            want = np.linalg.norm(x, o, axis=1)
            got = np.asarray(got)
            finite = np.isfinite(want) & (np.abs(want) < 1e150)  # XLA's sum of squares overflows where NumPy's does
            np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, err_msg=repr(o))
            np.testing.assert_array_equal(np.isnan(got[:3]), np.isnan(want[:3]), err_msg=repr(o))


# -------------------------------------------------------------------------------- singular, cond, dtypes

def test_singular_and_degenerate_inputs() -> None:
    """Singular matrices: NumPy raises; here (CPU, LAPACK) solve and inv are non-finite, never a finite answer;
    det is 0 and slogdet (0, -inf), as NumPy (through QR elsewhere: huge, and tiny). cond maps NaN to inf as NumPy does (with p=None it is an SVD's
    ratio, huge but finite, in NumPy too)."""
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]])
    ones = np.ones((3, 3))
    outs = ts.program(lambda s, o: (LA.solve(s, np.ones(2)), LA.inv(s), LA.det(s), LA.slogdet(s),
                                    LA.cond(o, "fro"), LA.cond(o, 1), LA.cond(s, np.inf), LA.matrix_rank(s)))(
        singular, ones)
    solved, inverse, det, (sign, logdet), *conds, rank = (np.asarray(o) if not isinstance(o, tuple) else o
                                                          for o in outs)
    if ts.default_device().platform == "cpu" and lapack.enabled() and lapack.available():  # LAPACK's LU
        assert not np.isfinite(solved).all(axis=-1).any() and not np.isfinite(inverse).all(axis=(-2, -1)).any()
        np.testing.assert_array_equal(det, [0.0, 0.0])
        np.testing.assert_array_equal(np.asarray(sign), [0.0, 0.0])
        np.testing.assert_array_equal(np.asarray(logdet), [-np.inf, -np.inf])
        for c in conds:
            assert np.all(np.isinf(np.asarray(c))), c
    else:  # XLA's QR (module docstring): rounding noise on R's diagonal, so huge or non-finite, and tiny
        assert (~np.isfinite(solved) | (np.abs(solved) > 1e8)).any(axis=-1).all()
        assert (~np.isfinite(inverse) | (np.abs(inverse) > 1e8)).any(axis=(-2, -1)).all()
        assert (np.abs(det) < 1e-12).all() and (np.asarray(logdet) < -30).all()
        for c in conds:
            assert np.all(np.asarray(c) > 1e8), c
    np.testing.assert_array_equal(rank, [1, 0])
    assert np.isnan(np.asarray(LA.cond(np.array([[np.nan, 1.0], [1.0, 1.0]]), 1)))  # a NaN input stays NaN


def test_cond_matches_numpy_and_rejects_empty_matrices(rng: np.random.Generator) -> None:
    a = _random_matrix(rng, (2, 3, 3), 100.0)
    ps = (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc")
    outs = ts.program(lambda a: [LA.cond(a, p) for p in ps] + [LA.cond(a[:, :2])])(a)
    for p, got in zip((*ps, "rect"), outs):
        want = np.linalg.cond(a[:, :2]) if p == "rect" else np.linalg.cond(a, p)
        _check(got, want, p, rtol=1e-8)
    _check(LA.cond(np.zeros((0, 2, 3))), np.linalg.cond(np.zeros((0, 2, 3))), "empty batch")
    for shape in ((0, 0), (3, 0), (2, 0, 0)):
        with pytest.raises(ts.ShapeError, match="cond.*empty"):
            LA.cond(np.zeros(shape))


def test_dtype_rules() -> None:
    ints = np.array([[2, 1], [1, 3]])
    for f in (LA.solve, LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh, LA.svd, LA.pinv, LA.norm, LA.qr):
        args = (ints, np.ones(2)) if f is LA.solve else (ints,)
        with pytest.raises(ts.DTypeError, match=f.__name__):
            f(*args)
    with pytest.raises(ts.DTypeError, match="solve.*dtypes differ"):
        LA.solve(np.eye(2, dtype=np.float32), np.ones(2))
    with pytest.raises(ts.DTypeError, match="lstsq.*dtypes differ"):
        LA.lstsq(np.eye(2, dtype=np.float32), np.ones(2))
    with pytest.raises(ts.DTypeError, match="svdvals.*f32 and f64"):
        LA.svdvals(np.eye(2, dtype=np.float16))
    np.testing.assert_array_equal(np.asarray(LA.matrix_power(np.array([[1, 1], [1, 0]]), 10)),
                                  np.linalg.matrix_power(np.array([[1, 1], [1, 0]]), 10))
    assert np.asarray(LA.matrix_power(ints.astype(np.int8), 0)).dtype == np.int8
    with pytest.raises(ts.DTypeError, match="matrix_power"):
        LA.matrix_power(ints, -1)
    half = LA.solve(np.eye(2, dtype=np.float16) * 2, np.ones(2, np.float16))
    assert np.asarray(half).dtype == np.float16 and np.allclose(np.asarray(half), 0.5)


def test_errors_name_the_op_shapes_and_line() -> None:
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: LA.inv(np.ones((3, 2))), ts.ShapeError, r"inv.*f64\[3, 2\]"),
        (lambda: LA.det(np.ones(3)), ts.ShapeError, r"det.*f64\[3\]"),
        (lambda: LA.cholesky(np.ones((2, 3, 4))), ts.ShapeError, "cholesky"),
        (lambda: LA.eigvalsh(np.ones((2, 3))), ts.ShapeError, "eigvalsh"),
        (lambda: LA.matrix_power(np.ones((2, 3)), 2), ts.ShapeError, "matrix_power"),
        (lambda: LA.matrix_power(np.array([[1, 2]]), 2), ts.ShapeError, "matrix_power"),
        (lambda: LA.slogdet(np.ones((0, 1))), ts.ShapeError, "slogdet"),
        (lambda: LA.svd(np.ones(3)), ts.ShapeError, "svd"),
        (lambda: LA.lstsq(np.ones((3, 2)), np.ones(4)), ts.ShapeError, "lstsq"),
        (lambda: tnp.matmul(np.ones((2, 3)), np.ones((2, 2))), ts.ShapeError, "matmul"),
        (lambda: tnp.matmul(np.ones(()), np.ones((2, 2))), ts.ShapeError, "matmul"),
        (lambda: tnp.dot(np.ones(()), np.ones((2, 2))), ts.ShapeError, "dot.*rank >= 1"),
        (lambda: tnp.vdot(np.ones(()), np.ones(())), ts.ShapeError, "vdot.*rank >= 1"),
        (lambda: tnp.vdot(np.ones(3), np.ones(4)), ts.ShapeError, "vdot"),
        (lambda: LA.multi_dot([np.ones((2, 3)), np.ones((4, 2))]), ts.ShapeError, "multi_dot"),
        (lambda: LA.tensorinv(np.ones((6, 2, 4)), 1), ts.ShapeError, "tensorinv"),
        (lambda: LA.tensorsolve(np.ones((2, 3, 5)), np.ones((2, 3))), ts.ShapeError, "tensorsolve"),
        (lambda: LA.norm(np.ones((2, 2, 2)), 1), ts.ShapeError, "norm"),
        (lambda: LA.norm(np.ones((0, 3)), -2), ts.ShapeError, "norm.*minimum"),
        (lambda: LA.matrix_norm(np.ones((3, 0)), ord=-1), ts.ShapeError, "matrix_norm.*minimum"),
        (lambda: LA.norm(np.ones((2, 2)), "bad"), ValueError, "norm"),
        (lambda: LA.qr(np.ones((2, 2)), mode="raw"), ValueError, "qr"),
        (lambda: LA.eigh(np.ones((2, 2)), UPLO="X"), ValueError, "eigh"),
        (lambda: LA.pinv(np.ones((2, 2)), 0.1, rtol=0.1), ValueError, "pinv"),
        (lambda: LA.matrix_power(np.eye(2), 2.0), TypeError, "matrix_power"),
        (lambda: LA.cross(np.ones(2), np.ones(2)), ts.ShapeError, "cross"),
    ]
    for f, kind, pattern in cases:
        with pytest.raises(kind, match=pattern) as info:
            f()
        assert THIS_FILE in str(info.value), (pattern, str(info.value))


class Rows(ts.Dim): ...


class Cols(ts.Dim): ...


def _invert(a: ts.Tensor[ts.f64, Rows, Cols]) -> Any:
    return LA.inv(a)


def test_staged_errors_carry_dim_names() -> None:
    with pytest.raises(ts.ShapeError, match=r"inv.*Rows=3, Cols=4") as info:
        ts.program(_invert).stage(Rows=3, Cols=4)
    assert THIS_FILE in str(info.value)


# ------------------------------------------------------------------------------------------- transforms

EPS = 1e-6
B = np.random.default_rng(7).standard_normal((2, 3, 2))
GRAD_CASES: dict[str, Callable[[Any], Any]] = {  # the rest is checked in test_linalg.py and test_linalg_svd.py
    "solve_broadcast": lambda a: tnp.sum(tnp.sin(LA.solve(a, B))),
    "matrix_norms": lambda a: LA.norm(a, 2) + LA.norm(a, -2) + LA.norm(a[:, :2], "nuc") + LA.norm(a[:2], -2),
    "cond": lambda a: LA.cond(a, "fro"),
}


def test_grads_and_jvps_match_finite_differences(rng: np.random.Generator) -> None:
    """Well-conditioned f64 matrices with distinct singular values: solve with broadcast batch axes, the matrix
    norms from eigh (QR for the non-square ones) and cond. Each decomposition's own rules are checked in
    test_linalg.py and test_linalg_svd.py."""
    a = _random_matrix(rng, (3, 3), 4.0) + 0.1 * np.diag([1.0, 2.0, 3.0])
    t = rng.standard_normal((3, 3))
    names = sorted(GRAD_CASES)

    @ts.program
    def run(a: Any, t: Any) -> Any:
        fs = [GRAD_CASES[n] for n in names]
        return [(f(a + EPS * t), f(a - EPS * t), ts.grad(f)(a), ts.jvp(f, (a,), (t,))[1]) for f in fs]

    for name, (plus, minus, grad, tangent) in zip(names, run(a, t)):
        expected = (float(plus) - float(minus)) / (2 * EPS)
        assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), name
        assert float(tangent) == pytest.approx(expected, rel=1e-6, abs=1e-8), name


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a = _random_matrix(rng, (3, 4, 4), 10.0)
    b = rng.standard_normal((2, 4, 2))
    mask = rng.random((3, 4, 4)) < 0.5

    def per_example(a: Any, b: Any, m: Any) -> Any:
        return (LA.solve(a, b), LA.norm(a, -2), LA.norm(a[:, :3], 2), LA.cond(a, 1), LA.lstsq(a[:, :3], b[0])[0],
                LA.matrix_power(a, -2), m @ m, tnp.vdot(m, m))

    got = ts.vmap(per_example, in_axes=(0, None, 0))(a, b, mask)
    loop = ts.program(per_example)
    for i in range(3):
        for g, e in zip(got, loop(a[i], b, mask[i])):
            _check(np.asarray(g)[i], e, i)


def test_lapack_and_xla_paths_agree_with_numpy(rng: np.random.Generator) -> None:
    """Fresh programs staged with LAPACK off use XLA's expansions (QR for solve and for the norms' triangle, its
    own eigh; QR and eigh for svd). test_linalg.py compares the two paths op by op; here the functions fuzzed above."""
    a = _random_matrix(rng, (2, 4, 4), 1e3)
    b = rng.standard_normal((4, 3))
    expected = (np.linalg.solve(a, b), np.linalg.norm(a[:, :, :3], -2, axis=(-2, -1)), np.linalg.svdvals(a),
                np.linalg.svdvals(a[:, :3, :]))

    def f(a: Any, b: Any) -> Any:
        return LA.solve(a, b), LA.norm(a[:, :, :3], -2, axis=(-2, -1)), LA.svdvals(a), LA.svdvals(a[:, :3, :])

    previous = lapack.enabled()
    try:
        for enabled in (True, False):
            lapack.set_enabled(enabled)
            staged = ts.program(f).stage(a, b)
            assert ("lapack_" in staged.stablehlo()) == (enabled and lapack.available())
            for k, (g, e) in enumerate(zip(staged.compile(device="cpu")(a, b), expected)):
                _check(g, e, (enabled, k), rtol=1e-10, atol=1e-10)
    finally:
        lapack.set_enabled(previous)
