"""tnp.linalg.svd and what is built on it (svdvals, pinv, matrix_rank, lstsq, cond; and norm 2/-2/'nuc') against
NumPy; derivatives against finite differences; vmap against a loop; errors. The registry-driven tests cover the
``svd`` primitive's rules too (tests/primitive_cases.py, tests/test_vmap.py)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack
from tensorstage.staging.errors import ShapeError, TransformError

from primitive_cases import canonical_svd



LA: Any = tnp.linalg  # eager calls compile afresh after lapack.set_enabled changes the path


@pytest.fixture(autouse=True, params=["lapack", "xla"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test on both lowerings of svd: LAPACK's gesdd (CPU with SciPy) and the QR + eigh one used
    everywhere else (``TENSORSTAGE_LAPACK=0``; other platforms). The LAPACK half is skipped where it cannot run:
    without SciPy, or when the default device is not a CPU (there the other half is that platform's path)."""
    if request.param == "lapack":
        if importlib.util.find_spec("scipy") is None:
            pytest.skip("SciPy missing")
        if ts.default_device().platform != "cpu":
            pytest.skip(f"LAPACK is CPU-only; the default device is {ts.default_device().platform}")
    lapack.set_enabled(request.param == "lapack")
    try:
        yield request.param
    finally:
        lapack.set_enabled(None)


SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (3, 2, 5), (1, 1)]


def tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_matches_numpy(shape: tuple[int, ...], dtype: type, full_matrices: bool, rng: np.random.Generator) -> None:
    a = rng.standard_normal(shape).astype(dtype)
    # one program for the three calls (compiles are this file's cost)
    (u, s, vh), values, svdvals = ts.program(
        lambda x: (tnp.linalg.svd(x, full_matrices), tnp.linalg.svd(x, full_matrices, compute_uv=False),
                   tnp.linalg.svdvals(x))
    )(a)
    u, s, vh = (np.asarray(x) for x in (u, s, vh))
    assert u.dtype == s.dtype == vh.dtype == dtype
    want = canonical_svd(*np.linalg.svd(a.astype(np.float64), full_matrices=full_matrices))
    for got, ref in zip((u, s, vh), want):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, **tol(dtype))
    k = s.shape[-1]
    rebuilt = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rebuilt, a, **tol(dtype))
    eye_u = np.swapaxes(u, -1, -2) @ u
    np.testing.assert_allclose(eye_u, np.broadcast_to(np.eye(u.shape[-1]), eye_u.shape), **tol(dtype))
    np.testing.assert_allclose(np.asarray(values), want[1], **tol(dtype))
    np.testing.assert_allclose(np.asarray(svdvals), want[1], **tol(dtype))


def test_svd_is_accurate_on_moderately_conditioned_input(rng: np.random.Generator) -> None:
    q1, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    q2, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    s = np.logspace(0, -3, 6)  # cond 1e3
    a = q1[:, :6] * s @ q2
    u, got, vh = (np.asarray(x) for x in LA.svd(a, full_matrices=False))
    np.testing.assert_allclose(got, s, rtol=1e-12)
    want = canonical_svd(*np.linalg.svd(a, full_matrices=False))
    np.testing.assert_allclose(u, want[0], atol=1e-12)
    np.testing.assert_allclose(vh, want[2], atol=1e-12)


def test_svd_rank_deficient_and_empty() -> None:
    a = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0))  # rank 1
    s = np.asarray(LA.svdvals(a))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    assert int(LA.matrix_rank(a)) == 1
    u, s, vh = (np.asarray(x) for x in LA.svd(np.zeros((0, 3))))
    assert u.shape == (0, 0) and s.shape == (0,) and vh.shape == (3, 3)
    np.testing.assert_array_equal(vh, np.eye(3))


def test_grad_of_sum_of_singular_values_is_u_vt(rng: np.random.Generator) -> None:
    a = rng.standard_normal((5, 3))
    g = np.asarray(ts.grad(lambda x: LA.svdvals(x).sum())(a))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-10, atol=1e-12)
    g_nuc = np.asarray(ts.grad(lambda x: LA.norm(x, "nuc"))(a))
    np.testing.assert_allclose(g_nuc, u @ vh, rtol=1e-10, atol=1e-12)


def _finite_difference_grad(f: Any, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        out[idx] = (float(f(a + d)) - float(f(a - d))) / (2 * eps)
    return out


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_grad_of_a_function_of_u_s_v_matches_finite_differences(shape: tuple[int, int], rng: np.random.Generator) -> None:
    w_u = rng.standard_normal((shape[0], min(shape)))
    w_v = rng.standard_normal((min(shape), shape[1]))

    def f(x: Any) -> Any:
        u, s, vh = LA.svd(x, full_matrices=False)
        return (u * w_u).sum() * s[0] + (vh * w_v).sum() + (s * s * s).sum()

    a = rng.standard_normal(shape)
    t = rng.standard_normal(shape)
    # reverse and forward mode from one program (the forward svd is shared; compiles are this file's cost)
    got, (_, tangent) = ts.program(lambda x, dx: (ts.grad(f)(x), ts.jvp(f, (x,), (dx,))))(a, t)
    got = np.asarray(got)
    fd = _finite_difference_grad(ts.program(f), a)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7)
    # forward mode agrees with reverse mode
    assert float(tangent) == pytest.approx(float(np.sum(got * t)), rel=1e-9)


def test_full_matrices_derivative_of_non_square_is_an_error(rng: np.random.Generator) -> None:
    a = rng.standard_normal((4, 3))
    with pytest.raises(TransformError, match="full_matrices"):
        ts.grad(lambda x: LA.svd(x)[0].sum())(a)
    # square: the two modes agree, so full_matrices=True is differentiable
    sq = rng.standard_normal((3, 3))
    g = np.asarray(ts.grad(lambda x: LA.svd(x)[1].sum())(sq))
    u, _, vh = np.linalg.svd(sq)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-10, atol=1e-12)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 5, 3))
    mapped = ts.vmap(lambda x: LA.svd(x, full_matrices=False))(xs)
    for i in range(4):
        for got, want in zip(mapped, LA.svd(xs[i], full_matrices=False)):
            np.testing.assert_allclose(np.asarray(got)[i], np.asarray(want), rtol=1e-12, atol=1e-12)
    grads = ts.vmap(ts.grad(lambda x: LA.svdvals(x)[0]))(xs)
    for i in range(4):
        u, _, vh = np.linalg.svd(xs[i], full_matrices=False)
        np.testing.assert_allclose(np.asarray(grads)[i], np.outer(u[:, 0], vh[0]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pinv_matrix_rank_lstsq_cond_norm_match_numpy(dtype: type, rng: np.random.Generator) -> None:
    t = tol(dtype)
    conds, orders = (None, 2, -2), (2, -2, "nuc")

    def every_function(a: Any) -> Any:  # one staged program per shape: one compile, not one per eager call
        return (LA.pinv(a), LA.matrix_rank(a), [LA.cond(a, p) for p in conds],
                [LA.norm(a, order, axis=(-2, -1)) for order in orders])

    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        a = rng.standard_normal(shape).astype(dtype)
        pinv, rank, cond, norm = ts.program(every_function)(a)
        wide = a.astype(np.float64)
        np.testing.assert_allclose(np.asarray(pinv), np.linalg.pinv(wide), **t)
        np.testing.assert_array_equal(np.asarray(rank), np.linalg.matrix_rank(a))
        for p, got in zip(conds, cond):
            np.testing.assert_allclose(np.asarray(got), np.linalg.cond(wide, p), **t)
        for order, got in zip(orders, norm):
            np.testing.assert_allclose(np.asarray(got), np.linalg.norm(wide, order, axis=(-2, -1)), **t)
    square = rng.standard_normal((3, 3)).astype(dtype)
    square_conds = ("fro", "nuc", 1, -1, np.inf, -np.inf)
    got_conds = ts.program(lambda m: [LA.cond(m, p) for p in square_conds])(square)
    for p, got in zip(square_conds, got_conds):
        np.testing.assert_allclose(np.asarray(got), np.linalg.cond(square.astype(np.float64), p), **t)
    low_rank = (rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))).astype(dtype)
    assert int(LA.matrix_rank(low_rank)) == np.linalg.matrix_rank(low_rank) == 2
    assert int(LA.matrix_rank(low_rank, tol=1e9)) == 0
    np.testing.assert_allclose(np.asarray(LA.pinv(low_rank, rcond=1e-5)), np.linalg.pinv(low_rank.astype(np.float64), rcond=1e-5), **t)
    assert int(LA.matrix_rank(np.zeros(3, dtype))) == 0 and int(LA.matrix_rank(np.ones(3, dtype))) == 1


@pytest.mark.parametrize("shape_a,shape_b", [((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 5), (3, 2)), ((4, 4), (4,))])
def test_lstsq_matches_numpy(shape_a: tuple[int, int], shape_b: tuple[int, ...], rng: np.random.Generator) -> None:
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    x, residuals, rank, s = LA.lstsq(a, b)
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(np.asarray(x), wx, rtol=1e-10, atol=1e-12)
    assert np.asarray(residuals).shape == wres.shape
    np.testing.assert_allclose(np.asarray(residuals), wres, rtol=1e-10, atol=1e-12)
    assert int(rank) == wrank
    np.testing.assert_allclose(np.asarray(s), ws, rtol=1e-10, atol=1e-12)
    # rank deficient: the minimum-norm solution, as NumPy's gelsd
    low = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    rhs = rng.standard_normal(6)
    np.testing.assert_allclose(np.asarray(LA.lstsq(low, rhs)[0]), np.linalg.lstsq(low, rhs)[0], rtol=1e-8, atol=1e-10)
    assert int(LA.lstsq(low, rhs)[2]) == 2


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ShapeError, match="svd needs a \\(batch of\\) matrices"):
        LA.svd(np.ones(3))
    with pytest.raises(TypeError, match="floating-point"):
        LA.svd(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="full_matrices must be a bool"):
        LA.svd(np.ones((2, 2)), full_matrices="yes")  # type: ignore[call-overload]
    with pytest.raises(ShapeError, match="b must have shape"):
        LA.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(ShapeError, match="2-D"):
        LA.lstsq(np.ones((2, 3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="can't be both set"):
        LA.pinv(np.ones((2, 2)), rcond=0.1, rtol=0.1)
    with pytest.raises(ShapeError, match="square"):
        LA.cond(np.ones((2, 3)), 1)


def test_lowering_without_lapack_uses_qr_and_eigh(path: str) -> None:
    staged = ts.program(lambda a: LA.svd(a)).stage(np.eye(3))
    assert ("lapack_dgesdd_ffi" in staged.stablehlo()) == (path == "lapack")
    gpu = staged.stablehlo("gpu")  # lowered, not compiled
    assert "gesdd" not in gpu and '"Eigh"' in gpu and '"Qr"' in gpu


def test_fallback_is_accurate_on_rank_deficient_and_repeated_batches(path: str, rng: np.random.Generator) -> None:
    """Rank-deficient, repeated and zero singular values (the eigenvectors of ``±0`` mix on the fallback):
    the factors stay orthonormal and reproduce the input, in both modes and orientations."""
    cases = [
        rng.standard_normal((4, 6, 2)) @ rng.standard_normal((4, 2, 5)),  # rank 2 of 5
        np.stack([np.diag([3.0, 3.0, 1.0, 1.0, 0.0]), np.zeros((5, 5))]),  # repeated, zero, all zero
        rng.standard_normal((3, 7, 1)) @ rng.standard_normal((3, 1, 4)),  # rank 1, tall
    ]
    inputs = [y for x in cases for y in (x, np.swapaxes(x, -1, -2))]
    for dtype in (np.float32, np.float64):
        eps = float(np.finfo(dtype).eps)
        arrays = [x.astype(dtype) for x in inputs]
        outs = ts.program(lambda *xs: [tnp.linalg.svd(x, full) for x in xs for full in (False, True)])(*arrays)
        for i, a in enumerate(arrays):
            scale = max(float(np.abs(a).max()), 1.0)
            for full in (False, True):
                u, s, vh = (np.asarray(o).astype(np.float64) for o in outs[2 * i + full])
                k = s.shape[-1]
                np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.float64), compute_uv=False),
                                           atol=50 * eps * scale)
                assert (np.diff(s, axis=-1) <= 0).all() and (s >= 0).all()
                rebuilt = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
                np.testing.assert_allclose(rebuilt, a.astype(np.float64), atol=50 * eps * scale)
                for q in (np.swapaxes(u, -1, -2) @ u, vh @ np.swapaxes(vh, -1, -2)):
                    np.testing.assert_allclose(q, np.broadcast_to(np.eye(q.shape[-1]), q.shape), atol=50 * eps)


def test_nan_where_lapack_fails() -> None:
    """A matrix holding a NaN gives NaNs everywhere; one holding an infinity NaN singular values (LAPACK leaves
    its vectors finite but meaningless; the fallback makes them NaN too). The rest of the batch is unaffected."""
    a = np.stack([np.full((3, 3), np.nan), np.eye(3), np.diag([1.0, np.inf, 2.0])])
    s = np.asarray(LA.svdvals(a))
    assert np.isnan(s[[0, 2]]).all() and (s[1] == 1).all()
    u, s, vh = (np.asarray(x) for x in LA.svd(a[:, :, :2]))
    assert np.isnan(s[[0, 2]]).all() and all(np.isnan(x[0]).all() and np.isfinite(x[1]).all() for x in (u, s, vh))
