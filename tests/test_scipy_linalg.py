"""ts.scipy.linalg against scipy.linalg (float64) on seeded random inputs, staged and eager, batched; the ``lu``
primitive's LAPACK and portable lowerings on CPU; gradients against finite differences and jax; vmap against a
loop; bad inputs. The registry tests cover the ``lu`` primitive's rules too (tests/lu_cases.py)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack
from tensorstage.staging.primitives import lu as LU
from tensorstage.tensor import Traced

from lu_cases import lu_reference
from staging_errors import check_staging_errors

sl = pytest.importorskip("scipy.linalg")
SLA: Any = ts.scipy.linalg
TOL = {np.dtype(np.float32): {"rtol": 2e-4, "atol": 2e-4}, np.dtype(np.float64): {"rtol": 1e-10, "atol": 1e-10}}
LAPACK_RUNS = importlib.util.find_spec("scipy") is not None and ts.default_device().platform == "cpu"


def _close(got: Any, expected: Any, dtype: Any, label: str = "") -> None:
    got = np.asarray(got)
    assert got.dtype == dtype, (label, got.dtype)
    np.testing.assert_allclose(got, expected, err_msg=label, **TOL[np.dtype(dtype)])


def _spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = rng.standard_normal(shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def _loop(f: Any, *batched: np.ndarray) -> np.ndarray:
    """SciPy's ``f`` on every matrix of a batch (leading axis), stacked."""
    return np.stack([f(*xs) for xs in zip(*batched)])


# ------------------------------------------------------------------------------------- values against SciPy


def _solvers(a: Any, spd: Any, b: Any, v: Any) -> dict[str, Any]:
    """Every solver and decomposition on a batch ``(B, N, N)``: one staged program serves them all."""
    factors = SLA.lu_factor(a)
    return {
        "lu_solve": SLA.lu_solve(factors, b),
        "lu_solve_t": SLA.lu_solve(factors, b, trans=1),
        "lu_solve_vector": SLA.lu_solve(factors, v, trans=2),
        "lu_solve_broadcast": SLA.lu_solve(SLA.lu_factor(a[0]), b),  # one factorization, a batch of b
        "solve_triangular": SLA.solve_triangular(a, b, trans="T", unit_diagonal=True),
        "solve_triangular_lower": SLA.solve_triangular(a, v, lower=True),
        "cholesky": SLA.cholesky(spd),
        "cholesky_lower": SLA.cholesky(spd, lower=True),
        "cho_solve": SLA.cho_solve(SLA.cho_factor(spd[0]), b),  # batch axes broadcast
        "cho_solve_lower": SLA.cho_solve(SLA.cho_factor(spd, lower=True), v),
        "solve": SLA.solve(a, b),
        "solve_pos": SLA.solve(spd, b, assume_a="pos", lower=True),
        "solve_sym": SLA.solve(spd, b, assume_a="sym"),
        "inv": SLA.inv(a),
        "det": SLA.det(a),
        "eigvalsh": SLA.eigh(spd, lower=False, eigvals_only=True),
    }


def _scipy_solvers(a: np.ndarray, spd: np.ndarray, b: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    def each(f: Any, *xs: np.ndarray) -> np.ndarray:
        return _loop(f, *xs)

    return {
        "lu_solve": each(lambda x, y: sl.lu_solve(sl.lu_factor(x), y), a, b),
        "lu_solve_t": each(lambda x, y: sl.lu_solve(sl.lu_factor(x), y, trans=1), a, b),
        "lu_solve_vector": each(lambda x, y: sl.lu_solve(sl.lu_factor(x), y, trans=2), a, v),
        "lu_solve_broadcast": each(lambda y: sl.lu_solve(sl.lu_factor(a[0]), y), b),
        "solve_triangular": each(lambda x, y: sl.solve_triangular(x, y, trans="T", unit_diagonal=True), a, b),
        "solve_triangular_lower": each(lambda x, y: sl.solve_triangular(x, y, lower=True), a, v),
        "cholesky": each(sl.cholesky, spd),
        "cholesky_lower": each(lambda x: sl.cholesky(x, lower=True), spd),
        "cho_solve": each(lambda y: sl.cho_solve(sl.cho_factor(spd[0]), y), b),
        "cho_solve_lower": each(lambda x, y: sl.cho_solve(sl.cho_factor(x, lower=True), y), spd, v),
        "solve": each(sl.solve, a, b),
        "solve_pos": each(lambda x, y: sl.solve(x, y, assume_a="pos", lower=True), spd, b),
        "solve_sym": each(lambda x, y: sl.solve(x, y, assume_a="sym"), spd, b),
        "inv": each(sl.inv, a),
        "det": each(sl.det, a),
        "eigvalsh": each(lambda x: sl.eigh(x, lower=False, eigvals_only=True), spd),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solvers_and_decompositions_match_scipy_staged(dtype: Any, rng: np.random.Generator) -> None:
    n = 4
    a = rng.standard_normal((3, n, n)) + 2 * np.eye(n)  # triangles well conditioned too
    spd = _spd(rng, 3, n, n)
    b, v = rng.standard_normal((3, n, 2)), rng.standard_normal((3, n))
    inputs = [x.astype(dtype) for x in (a, spd, b, v)]
    got = ts.program(_solvers)(*inputs)
    expected = _scipy_solvers(*(x.astype(np.float64) for x in inputs))
    for name, value in got.items():
        _close(value, expected[name], dtype, name)


def test_factorizations_match_scipy_eager_and_staged(rng: np.random.Generator) -> None:
    shapes = [(4, 4), (5, 3), (3, 5)]
    xs = [rng.standard_normal(s) for s in shapes]

    def factorizations(*ms: Any) -> Any:
        return [(SLA.lu(m), SLA.lu(m, permute_l=True), SLA.lu_factor(m), SLA.qr(m), SLA.qr(m, mode="economic"),
                 SLA.qr(m, mode="r"), SLA.svd(m, compute_uv=False)) for m in ms]

    staged = ts.program(factorizations)(*xs)
    for x, (plu, pl_u, (packed, piv), full, economic, (r_only,), s) in zip(xs, staged, strict=True):
        for got, want in zip((*plu, *pl_u, packed, s), (*sl.lu(x), *sl.lu(x, permute_l=True), sl.lu_factor(x)[0],
                                                         sl.svd(x, compute_uv=False))):
            _close(got, want, np.float64)
        np.testing.assert_array_equal(np.asarray(piv), sl.lu_factor(x)[1])
        for (q, r), mode in ((full, "full"), (economic, "economic")):
            q0, r0 = sl.qr(x, mode=mode)
            assert np.asarray(q).shape == q0.shape and np.asarray(r).shape == r0.shape
            _close(np.abs(np.asarray(r)), np.abs(r0), np.float64, mode)  # Householder: signs as LAPACK's up to ±
            _close(np.asarray(q) @ np.asarray(r), x, np.float64, mode)
        _close(np.abs(np.asarray(r_only)), np.abs(sl.qr(x, mode="r")[0]), np.float64, "r")
    # eager: each function compiled on its own
    x = xs[0]
    for got, want in zip(SLA.lu(x), sl.lu(x)):
        _close(got, want, np.float64)
    _close(SLA.lu_solve(SLA.lu_factor(x), x[:, 0]), sl.lu_solve(sl.lu_factor(x), x[:, 0]), np.float64)
    _close(SLA.cho_solve(SLA.cho_factor(x @ x.T + 4 * np.eye(4)), x), sl.cho_solve(sl.cho_factor(x @ x.T + 4 * np.eye(4)), x),
           np.float64)
    u, s, vh = SLA.svd(x[:3], full_matrices=False)
    _close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), x[:3], np.float64)
    w, vecs = SLA.eigh(x + x.T)
    _close(np.asarray(vecs) @ np.diag(np.asarray(w)) @ np.asarray(vecs).T, x + x.T, np.float64)


def test_expm_picks_each_matrix_scaling_in_the_graph(rng: np.random.Generator) -> None:
    """A batch of norms from 1e-3 to 1e2: each matrix squares its own number of times (no Python branch on a
    staged norm), within a few ulps of SciPy's relative to the result; a norm beyond ``max_squarings`` gives NaN."""
    scales = np.array([1e-3, 0.5, 3.0, 20.0, 100.0])
    a = scales[:, None, None] * rng.standard_normal((5, 4, 4)) / 4
    expected = _loop(sl.expm, a)
    got64, got32, capped = ts.program(lambda m: (SLA.expm(m), SLA.expm(m.astype(ts.f32)), SLA.expm(m, max_squarings=3)))(a)
    scale = np.max(np.abs(expected), axis=(1, 2), keepdims=True)
    assert np.max(np.abs(np.asarray(got64) - expected) / scale) < 1e-12
    assert np.max(np.abs(np.asarray(got32) - expected) / scale) < 5e-5
    capped = np.asarray(capped)
    assert np.isnan(capped[-1]).all() and not np.isnan(capped[:3]).any()
    upper = np.triu(a[2])
    np.testing.assert_allclose(np.asarray(SLA.expm(upper, upper_triangular=True)), sl.expm(upper), rtol=1e-12, atol=1e-12)


def test_special_matrices_match_scipy(rng: np.random.Generator) -> None:
    c, r = rng.standard_normal(4), rng.standard_normal(3)
    m, v = rng.standard_normal((2, 3)), rng.standard_normal(2)
    cs = rng.standard_normal((2, 4))

    def build(c: Any, r: Any, m: Any, v: Any, cs: Any) -> Any:
        return (SLA.toeplitz(c, r), SLA.toeplitz(c), SLA.circulant(c), SLA.hankel(c, r), SLA.hankel(c),
                SLA.block_diag(m, v, 2.0, m.T), SLA.toeplitz(cs), SLA.circulant(cs))

    got = ts.program(build)(c, r, m, v, cs)
    expected = (sl.toeplitz(c, r), sl.toeplitz(c), sl.circulant(c), sl.hankel(c, r), sl.hankel(c),
                sl.block_diag(m, v, 2.0, m.T), _loop(sl.toeplitz, cs), _loop(sl.circulant, cs))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)
    np.testing.assert_array_equal(np.asarray(SLA.hilbert(5)), sl.hilbert(5).astype(np.float32))
    assert np.asarray(SLA.block_diag()).shape == (1, 0)


# ------------------------------------------------------------------------------ lu: LAPACK and portable paths


def _lu_outputs(*xs: Any) -> Any:
    return [tuple(Traced(o) for o in LU.lu(x.atom)) for x in xs]


def _lu_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    singular = rng.standard_normal((2, 4, 4))
    singular[0, :, 0] = 0  # an exact zero pivot at the first step
    singular[1, :, 2] = 0  # a zero column in the middle: elimination keeps it exactly zero, another zero pivot
    return [x.astype(dtype) for x in (rng.standard_normal((5, 5)), rng.standard_normal((2, 6, 3)),
                                      rng.standard_normal((3, 7)), singular, np.zeros((0, 3)))]


def _assert_lu_matches(outputs: Any, xs: list[np.ndarray], dtype: Any) -> None:
    for (packed, piv, perm), x in zip(outputs, xs, strict=True):
        ref_packed, ref_piv, ref_perm = lu_reference(x.astype(np.float64))
        packed, piv, perm = np.asarray(packed), np.asarray(piv), np.asarray(perm)
        assert piv.dtype == perm.dtype == np.int32 and packed.dtype == dtype
        np.testing.assert_array_equal(piv, ref_piv)
        np.testing.assert_array_equal(perm, ref_perm)
        _close(packed, ref_packed, dtype, str(x.shape))
        assert np.isfinite(packed).all()  # a zero pivot is kept, nothing divided by it


@pytest.mark.skipif(not LAPACK_RUNS, reason="LAPACK runs on CPU with SciPy only")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_lapack_and_portable_lowerings_match_the_reference(dtype: Any, rng: np.random.Generator) -> None:
    xs = _lu_inputs(rng, dtype)
    lapack.set_enabled(True)
    try:
        staged = ts.program(_lu_outputs).stage(*xs)
        assert "getrf" in staged.stablehlo()
        _assert_lu_matches(staged.compile()(*xs), xs, dtype)
        assert "getrf" not in staged.stablehlo("gpu")  # other platforms: the portable loop
        lapack.set_enabled(False)
        portable = ts.program(_lu_outputs).stage(*xs)
        assert "getrf" not in portable.stablehlo() and "stablehlo.while" in portable.stablehlo()
        _assert_lu_matches(portable.compile()(*xs), xs, dtype)
    finally:
        lapack.set_enabled(None)


def test_lu_of_half_precision_is_factorized_in_f32(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 4)).astype(np.float16)
    p, low, up = SLA.lu(x)
    assert np.asarray(p).dtype == np.float16
    np.testing.assert_allclose(np.asarray(p, np.float32) @ np.asarray(low, np.float32) @ np.asarray(up, np.float32),
                               x.astype(np.float32), atol=1e-2)


# ----------------------------------------------------------------------------------------- derivatives, vmap


def _losses(lib: Any, b: np.ndarray) -> list[Any]:
    """Functions of a 4x4 matrix written once for ts.scipy.linalg and jax.scipy.linalg (``lib``)."""
    shift = 3 * np.eye(4)

    def lu_parts(x: Any) -> Any:
        _, low, up = lib.lu(x)
        return low * up

    def lu_solves(x: Any) -> Any:
        factors = lib.lu_factor(x + shift)
        return lib.lu_solve(factors, b) + lib.lu_solve(factors, b, trans=1)

    return [
        lu_parts,
        lambda x: lib.lu_factor(x[:, :3])[0],  # tall
        lambda x: lib.lu(x[:3])[2],  # wide
        lu_solves,
        lambda x: lib.solve_triangular(x + shift, b, lower=True) + lib.solve_triangular(x + shift, b, trans=1),
        lambda x: lib.cho_solve(lib.cho_factor(x @ x.T + shift), b)  # a symmetric tangent: jax's rule agrees
        + lib.cho_solve(lib.cho_factor(x @ x.T + shift, lower=True), b),
        lambda x: lib.expm(3 * x),  # several squarings
    ]


def test_gradients_match_finite_differences_and_jax(rng: np.random.Generator) -> None:
    """``sum(sin(f(x)))`` for each function: its gradient along a random direction equals the central difference
    quotient, and (with jax) equals ``jax.grad`` of the same code. One program stages every case."""
    x, t, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    eps = 1e-6

    def run(x: Any, t: Any) -> Any:
        losses = [lambda y, f=f: tnp.sum(tnp.sin(f(y))) for f in _losses(SLA, b)]
        return [(f(x + eps * t), f(x - eps * t), ts.grad(f)(x)) for f in losses]

    results = ts.program(run)(x, t)
    for k, (plus, minus, grad) in enumerate(results):
        expected = (float(plus) - float(minus)) / (2 * eps)
        assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), k
    # expm against SciPy's Fréchet derivative: the gradient of sum(sin(expm(3x))) is 3 L((3x)ᵀ, cos(expm(3x)))
    a = 3 * x
    frechet = 3 * sl.expm_frechet(a.T, np.cos(sl.expm(a)), compute_expm=False)
    np.testing.assert_allclose(np.asarray(results[-1][2]), frechet, rtol=1e-9, atol=1e-9)
    if importlib.util.find_spec("jax") is None:
        return
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    with jax.enable_x64(True):  # jax's expm compiles slowly (five Padé branches): checked against SciPy above
        grads = jax.jit(lambda y: [jax.grad(lambda z, f=f: jnp.sum(jnp.sin(f(z))))(y) for f in _losses(jsl, b)[:-1]])(x)
    for k, (result, want) in enumerate(zip(results, grads)):
        np.testing.assert_allclose(np.asarray(result[2]), np.asarray(want), rtol=1e-9, atol=1e-10, err_msg=str(k))


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a = rng.standard_normal((2, 4, 4)) + 2 * np.eye(4)
    b = rng.standard_normal((2, 4, 2))

    def per_matrix(x: Any, y: Any) -> Any:
        p, low, up = SLA.lu(x)
        return (p @ low @ up, SLA.lu_solve(SLA.lu_factor(x), y), SLA.cho_solve(SLA.cho_factor(x @ x.T), y),
                SLA.expm(x), SLA.solve_triangular(x, y), SLA.toeplitz(x[0], x[1]))

    mapped, looped = ts.program(lambda a, b: (ts.vmap(per_matrix)(a, b), [per_matrix(x, y) for x, y in zip(a, b)]))(
        a, b)
    for k, batched in enumerate(mapped):
        np.testing.assert_allclose(np.asarray(batched), np.stack([np.asarray(one[k]) for one in looped]),
                                   rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------------- bad inputs

F2, F3, V3 = ts.Spec((2, 2), ts.f32), ts.Spec((2, 3), ts.f32), ts.Spec((3,), ts.f32)
I2, P2, D2 = ts.Spec((2, 2), ts.i32), ts.Spec((2,), ts.i32), ts.Spec((2, 2), ts.f64)
ERRORS = [
    (lambda a: SLA.lu(a), [I2], ts.DTypeError, ["lu", "floating-point", "i32[2, 2]"]),
    (lambda a: SLA.lu_factor(a), [V3], ts.ShapeError, ["lu_factor", "matrices", "f32[3]"]),
    (lambda a, p, b: SLA.lu_solve((a, p), b), [F3, P2, V3], ts.ShapeError, ["lu_solve", "square", "f32[2, 3]"]),
    (lambda a, p, b: SLA.lu_solve((a, p), b), [F2, P2, V3], ts.ShapeError, ["lu_solve", "b must have shape", "f32[3]"]),
    (lambda a, p, b: SLA.lu_solve((a, p), b), [F2, F2, F2], ts.DTypeError, ["lu_solve", "piv must be int32"]),
    (lambda a, p, b: SLA.lu_solve((a, p), b), [F2, P2, D2], ts.DTypeError, ["lu_solve", "f32[2, 2]", "f64[2, 2]"]),
    (lambda a, b: SLA.cho_solve((a, True), b), [F2, V3], ts.ShapeError, ["cho_solve", "b must have shape", "f32[3]"]),
    (lambda a, b: SLA.cho_solve((a, True), b), [F2, I2], ts.DTypeError, ["cho_solve", "floating-point", "i32[2, 2]"]),
    (lambda a, b: SLA.solve_triangular(a, b), [F3, F2], ts.ShapeError, ["solve_triangular", "square"]),
    (lambda a, b: SLA.solve(a, b, assume_a="pos"), [F2, V3], ts.ShapeError, ["solve", "b must have shape"]),
    (lambda a: SLA.expm(a), [F3], ts.ShapeError, ["expm", "square", "f32[2, 3]"]),
    (lambda a: SLA.expm(a), [I2], ts.DTypeError, ["expm", "floating-point"]),
    (lambda a: SLA.cholesky(a), [F3], ts.ShapeError, ["cholesky", "square"]),
    (lambda a: SLA.qr(a, pivoting=True), [F2], ValueError, ["qr", "pivoting"]),
    (lambda a: SLA.solve(a, a, assume_a="banded"), [F2], ValueError, ["assume_a", "banded"]),
    (lambda a, p, b: SLA.lu_solve((a, p), b, trans=3), [F2, P2, F2], ValueError, ["trans"]),
    (lambda a: SLA.block_diag(a[None]), [F2], ts.ShapeError, ["block_diag", "at most 2"]),
    (lambda a, b: SLA.toeplitz(a, b), [V3, ts.Spec((3,), ts.f64)], ts.DTypeError, ["toeplitz"]),
]


def test_bad_inputs_are_clear_errors_at_the_callers_line() -> None:
    check_staging_errors(ERRORS, "test_scipy_linalg.py")
    with pytest.raises(NotImplementedError, match="standard eigenproblem"):
        SLA.eigh(np.eye(2), np.eye(2))
    with pytest.raises(TypeError, match="pair"):
        SLA.cho_solve(np.eye(2), np.ones(2))
