"""tnp.linalg: decompositions and the functions built on them, against NumPy in float64; derivatives against
finite differences; vmap against a Python loop; errors. Matrices are tiny and well conditioned (SPD ones are
B Bᵀ + n I, general ones have a large diagonal), so compiles stay short and tolerances tight."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack

from primitive_cases import canonical_eigenvectors, cofactor_matrix

LA = tnp.linalg
F64 = {"rtol": 1e-10, "atol": 1e-12}


def spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = rng.standard_normal(shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def general(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 2 * np.eye(shape[-1])


# ---------------------------------------------------------------------------------------- public functions


def test_cholesky_and_solve_triangular(rng: np.random.Generator) -> None:
    a = spd(rng, 2, 4, 4)
    t, b, v = general(rng, 4, 4), rng.standard_normal((4, 3)), rng.standard_normal(4)

    @ts.program  # one compile for every call below
    def run(a: Any, t: Any, b: Any, v: Any) -> Any:
        solves = [LA.solve_triangular(t, b, lower=lower, trans=trans) for lower in (True, False) for trans in (0, "T")]
        unit = LA.solve_triangular(t, v, lower=True, unit_diagonal=True)
        return LA.cholesky(a), LA.cholesky(a, upper=True), solves, unit

    low, up, solves, unit = run(a, t, b, v)
    low_np = np.linalg.cholesky(a)
    np.testing.assert_allclose(np.asarray(low), low_np, **F64)
    np.testing.assert_allclose(np.asarray(up), np.swapaxes(low_np, -1, -2), **F64)
    ops = [op for tri in (np.tril(t), np.triu(t)) for op in (tri, tri.T)]
    for got, op in zip(solves, ops):
        np.testing.assert_allclose(np.asarray(got), np.linalg.solve(op, b), **F64)
    np.testing.assert_allclose(np.asarray(unit), np.linalg.solve(np.tril(t, -1) + np.eye(4), v), **F64)


def test_cholesky_of_an_indefinite_matrix_is_nan() -> None:
    assert np.isnan(np.asarray(LA.cholesky(np.diag([1.0, -1.0])))).any()


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 3, 2)])
def test_qr_matches_numpy(shape: tuple[int, ...], rng: np.random.Generator) -> None:
    a = rng.standard_normal(shape)
    run = ts.program(lambda a: (LA.qr(a), LA.qr(a, mode="complete"), LA.qr(a, mode="r")))
    reduced, complete, r_only = run(a)
    for (q, r), mode in ((reduced, "reduced"), (complete, "complete")):
        q_np, r_np = np.linalg.qr(a, mode=mode)  # type: ignore[call-overload]
        np.testing.assert_allclose(np.asarray(q), q_np, **F64)
        np.testing.assert_allclose(np.asarray(r), r_np, **F64)
    np.testing.assert_allclose(np.asarray(r_only), np.linalg.qr(a, mode="r"), **F64)


def test_eigh_and_eigvalsh(rng: np.random.Generator) -> None:
    a = rng.standard_normal((2, 5, 5))
    run = ts.program(lambda a: [(*LA.eigh(a, UPLO=u), LA.eigvalsh(a, UPLO=u)) for u in ("L", "U")])
    for (w, v, w_only), uplo in zip(run(a), ("L", "U")):
        w_np, v_np = np.linalg.eigh(a, UPLO=uplo)
        np.testing.assert_allclose(np.asarray(w), w_np, **F64)
        np.testing.assert_allclose(np.asarray(v), canonical_eigenvectors(v_np), **F64)
        np.testing.assert_allclose(np.asarray(w_only), w_np, **F64)
    w32, v32 = LA.eigh(a.astype(np.float32))
    np.testing.assert_allclose(np.asarray(w32), np.linalg.eigvalsh(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(v32), canonical_eigenvectors(np.linalg.eigh(a)[1]), rtol=1e-4, atol=1e-4)


def test_solve_inv_det_slogdet(rng: np.random.Generator) -> None:
    a = general(rng, 3, 4, 4)
    a[1] = a[1][::-1]  # a row swap: a negative determinant somewhere
    b, v = rng.standard_normal((3, 4, 2)), rng.standard_normal(4)

    @ts.program
    def run(a: Any, b: Any, v: Any) -> Any:
        solves = LA.solve(a, b), LA.solve(a[0], v), LA.solve(a, v)
        powers = [LA.matrix_power(a, n) for n in (0, 1, 3, -2)]
        return solves, LA.inv(a), LA.det(a), LA.slogdet(a), powers, LA.slogdet(tnp.ones((3, 3), dtype=ts.f64))

    solves, inv, det, (sign, logdet), powers, (_, singular) = run(a, b, v)
    for got, expected in zip(solves, (np.linalg.solve(a, b), np.linalg.solve(a[0], v), np.linalg.solve(a, v))):
        np.testing.assert_allclose(np.asarray(got), expected, **F64)
    np.testing.assert_allclose(np.asarray(inv), np.linalg.inv(a), **F64)
    np.testing.assert_allclose(np.asarray(det), np.linalg.det(a), **F64)
    sign_np, logdet_np = np.linalg.slogdet(a)
    assert (sign_np < 0).any()
    np.testing.assert_array_equal(np.asarray(sign), sign_np)
    np.testing.assert_allclose(np.asarray(logdet), logdet_np, **F64)
    assert float(np.asarray(singular)) < -30  # -inf up to the rounding of the QR
    for got, n in zip(powers, (0, 1, 3, -2)):
        np.testing.assert_allclose(np.asarray(got), np.linalg.matrix_power(a, n), **F64)


VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 0, 3, -1.5]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"]


def test_vector_norms(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 5))
    run = ts.program(lambda x: [(LA.norm(x[0], o), LA.norm(x, o, axis=1, keepdims=True)) for o in VECTOR_ORDS])
    for (flat, kept), o in zip(run(x), VECTOR_ORDS):
        np.testing.assert_allclose(np.asarray(flat), np.linalg.norm(x[0], o), **F64)
        np.testing.assert_allclose(np.asarray(kept), np.linalg.norm(x, o, axis=1, keepdims=True), **F64)


def test_matrix_norms(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4))
    run = ts.program(lambda x: [(LA.norm(x[0], o), LA.norm(x, o, axis=(2, 0))) for o in MATRIX_ORDS] + [LA.norm(x)])
    *pairs, whole = run(x)
    for (flat, axes), o in zip(pairs, MATRIX_ORDS):
        np.testing.assert_allclose(np.asarray(flat), np.linalg.norm(x[0], o), rtol=1e-9)
        np.testing.assert_allclose(np.asarray(axes), np.linalg.norm(x, o, axis=(2, 0)), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(whole), np.linalg.norm(x), **F64)


# ------------------------------------------------------------------------------------- transforms end to end


EPS = 1e-6
SCALAR_FUNCTIONS = {
    "det": lambda a: LA.det(a),
    "slogdet": lambda a: LA.slogdet(a)[1],
    "solve": lambda a: tnp.sum(tnp.sin(LA.solve(a, tnp.arange(3.0, dtype=ts.f64)))),
    "inv": lambda a: tnp.sum(LA.inv(a) ** 2),
    "cholesky": lambda a: tnp.sum(tnp.sin(LA.cholesky(a @ tnp.transpose(a) + 3.0 * tnp.eye(3, dtype=ts.f64)))),
    "qr": lambda a: tnp.sum(LA.qr(a)[0] * tnp.cos(LA.qr(a)[1])),
    "eigh": lambda a: tnp.sum(LA.eigh(a)[1][:, 0] ** 3) + tnp.sum(LA.eigvalsh(a) ** 2),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_grad_and_jvp_match_finite_differences(name: str, rng: np.random.Generator) -> None:
    f = SCALAR_FUNCTIONS[name]
    a = general(rng, 3, 3)
    t = rng.standard_normal((3, 3))

    @ts.program  # one compile: f on both sides, grad and jvp
    def run(a: Any, t: Any) -> Any:
        return f(a + EPS * t), f(a - EPS * t), ts.grad(f)(a), ts.jvp(f, (a,), (t,))[1]

    plus, minus, grad, tangent = (np.asarray(v) for v in run(a, t))
    expected = float(plus - minus) / (2 * EPS)
    assert float(np.sum(grad * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert float(tangent) == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_second_derivatives_compose(rng: np.random.Generator) -> None:
    """Derivative rules are made of primitives, so they differentiate again (forward over reverse here)."""
    a, t = general(rng, 3, 3), rng.standard_normal((3, 3))
    f = lambda a: LA.slogdet(a)[1] + tnp.sum(LA.eigh(a)[1] ** 3) + tnp.sum(LA.qr(a)[0] ** 3)  # noqa: E731
    g = ts.grad(f)

    @ts.program
    def run(a: Any, t: Any) -> Any:
        return ts.jvp(g, (a,), (t,))[1], g(a + 1e-5 * t), g(a - 1e-5 * t)

    hvp, plus, minus = (np.asarray(v) for v in run(a, t))
    np.testing.assert_allclose(hvp, (plus - minus) / 2e-5, rtol=1e-6, atol=1e-8)


def test_det_gradient_is_det_times_inverse_transpose(rng: np.random.Generator) -> None:
    a = general(rng, 4, 4)
    expected = np.linalg.det(a) * np.linalg.inv(a).T
    np.testing.assert_allclose(np.asarray(ts.grad(LA.det)(a)), expected, rtol=1e-9)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a, b = general(rng, 3, 4, 4), rng.standard_normal((4, 3))  # b batched along its last axis

    def per_example(a: Any, b: Any) -> Any:
        return LA.solve(a, b), LA.slogdet(a)[1], LA.eigvalsh(a + tnp.transpose(a))

    got = ts.vmap(per_example, in_axes=(0, 1))(a, b)
    loop = ts.program(per_example)
    for i in range(3):
        expected = loop(a[i], b[:, i])
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(e), **F64)


def test_vmap_of_grad_and_program(rng: np.random.Generator) -> None:
    a = general(rng, 3, 3, 3)
    per_example = ts.vmap(ts.grad(LA.det))(a)
    expected = np.linalg.det(a)[:, None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(np.asarray(per_example), expected, rtol=1e-9)

    @ts.program
    def chol_solve(a: Any, b: Any) -> Any:
        low = LA.cholesky(a)
        return LA.solve_triangular(low, LA.solve_triangular(low, b, lower=True), lower=True, trans="T")

    s, b = spd(rng, 4, 4), rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(chol_solve(s, b)), np.linalg.solve(s, b), **F64)
    assert "cholesky" in str(chol_solve.stage(s, b).graph)


# ---------------------------------------------------------------------------------------------------- errors


def test_bad_inputs_raise_errors_naming_the_op() -> None:
    with pytest.raises(ts.ShapeError, match=r"cholesky.*square"):
        LA.cholesky(np.ones((2, 3)))
    with pytest.raises(ts.DTypeError, match="cholesky"):
        LA.cholesky(np.eye(3, dtype=np.int32))
    with pytest.raises(ts.ShapeError, match="solve"):
        LA.solve(np.eye(3), np.ones(4))
    with pytest.raises(ts.ShapeError, match="solve"):
        LA.solve(np.eye(3)[None].repeat(2, 0), np.ones((3, 3, 1)))
    with pytest.raises(ts.ShapeError, match="solve_triangular"):
        LA.solve_triangular(np.eye(3), np.ones((2, 2)))
    with pytest.raises(ts.ShapeError, match="qr"):
        LA.qr(np.ones(3))
    with pytest.raises(ts.DTypeError, match="eigh"):
        LA.eigh(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match="mode"):
        LA.qr(np.eye(2), mode="economic")  # type: ignore[call-overload]
    with pytest.raises(ts.TransformError, match="square or tall"):
        ts.grad(lambda a: tnp.sum(LA.qr(a)[1]))(np.ones((2, 3)))


class Rows(ts.Dim): ...


class Cols(ts.Dim): ...


def test_dim_names_must_agree() -> None:
    @ts.program
    def f(a: ts.Tensor[ts.f64, Rows, Cols]) -> Any:
        return LA.cholesky(a)

    with pytest.raises(ts.ShapeError, match="Rows.*Cols|Cols.*Rows") as info:
        f(np.eye(3))
    assert "cholesky" in str(info.value) and "test_linalg.py" in str(info.value)


# ------------------------------------------------------------------------ LAPACK (CPU) and XLA's expansion

@pytest.fixture
def lapack_on() -> Iterator[None]:
    """The LAPACK path on for one test, whatever ``TENSORSTAGE_LAPACK`` says (the suite may run with it off to
    exercise XLA's expansions everywhere else)."""
    lapack.set_enabled(True)
    try:
        yield
    finally:
        lapack.set_enabled(None)


def default_platform() -> str:
    """The platform programs run on when given host data (``TENSORSTAGE_DEFAULT_DEVICE``)."""
    return str(ts.default_device().platform)


def needs_lapack(test: Any) -> Any:
    """Skipped without SciPy (jaxlib's LAPACK kernels bind to it), or when the suite runs on another default
    platform than CPU (LAPACK is CPU-only: there both halves of ``both_paths`` would be XLA's expansion; the
    platform-agnostic tests below check that path there). With SciPy on CPU the LAPACK path must work: a
    kernel failing its self-test would otherwise turn these tests into silent skips."""
    test = pytest.mark.usefixtures("lapack_on")(test)
    test = pytest.mark.skipif(
        default_platform() != "cpu", reason=f"LAPACK is CPU-only; the default device is {default_platform()}"
    )(test)
    return pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="SciPy missing")(test)


@needs_lapack
def test_lapack_kernels_pass_their_self_test() -> None:
    assert lapack.available()


def both_paths(f: Any, *args: Any) -> tuple[Any, Any]:
    """``f(*args)`` lowered with LAPACK and with XLA's expansion (fresh programs: each lowers anew)."""
    with_lapack = ts.program(f)(*args)
    previous = lapack.enabled()
    lapack.set_enabled(False)
    try:
        with_xla = ts.program(f)(*args)
    finally:
        lapack.set_enabled(previous)
    return with_lapack, with_xla


def lower_only(rng: np.random.Generator, a: np.ndarray) -> np.ndarray:
    """``a`` with garbage above the diagonal: only the lower triangle may be read."""
    return np.tril(a) + np.triu(100 * rng.standard_normal(a.shape), 1)


@needs_lapack
def test_programs_and_eager_ops_recompile_when_the_lapack_choice_changes() -> None:
    """Executables whose lowering chose LAPACK (or XLA's expansion) are dropped when ``set_enabled`` changes the
    choice; the others are kept."""
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    chol = ts.program(lambda m: tnp.linalg.cholesky(m))
    plain = ts.program(lambda m: m * 2.0)
    chol(a), plain(a), tnp.linalg.cholesky(a)
    asked = lapack.times_asked()
    lapack.set_enabled(False)
    try:
        np.testing.assert_allclose(chol(a), np.linalg.cholesky(a), rtol=1e-12)
        np.testing.assert_allclose(tnp.linalg.cholesky(a), np.linalg.cholesky(a), rtol=1e-12)
        np.testing.assert_allclose(plain(a), a * 2.0)
        # both choleskys were lowered again (each asks LAPACK's target), the multiply was not recompiled
        assert lapack.times_asked() >= asked + 2
        assert chol.recompile_reasons == ["lapack.set_enabled changed how linear algebra lowers"]
        assert plain.recompile_reasons == []
        assert "lapack" not in chol.stage(a).stablehlo()
        asked = lapack.times_asked()
        lapack.set_enabled(False)  # no change: nothing dropped
        chol(a)
        assert lapack.times_asked() == asked and len(chol.recompile_reasons) == 1
    finally:
        lapack.set_enabled(None)
    chol(a)
    assert len(chol.recompile_reasons) == 2


@needs_lapack
def test_module_text_names_lapack_on_cpu_only() -> None:
    staged = ts.program(lambda a: (LA.cholesky(a), LA.eigh(a))).stage(np.eye(3))
    cpu = staged.stablehlo()
    assert "lapack_dpotrf_ffi" in cpu and "lapack_dsyevd_ffi" in cpu and "stablehlo.cholesky" not in cpu
    gpu = staged.stablehlo("gpu")  # lowered, not compiled: XLA's expansion
    assert "lapack" not in gpu and "stablehlo.cholesky" in gpu and '"Eigh"' in gpu
    assert staged.stablehlo() is cpu  # cached per platform
    lapack.set_enabled(False)
    try:
        assert "lapack" not in ts.program(lambda a: LA.cholesky(a)).stage(np.eye(3)).stablehlo()
    finally:
        lapack.set_enabled(None)


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lapack_and_xla_paths_agree(dtype: type, rng: np.random.Generator) -> None:
    a = spd(rng, 3, 5, 5)
    tol = F64 if dtype == np.float64 else {"rtol": 2e-4, "atol": 2e-4}
    x = lower_only(rng, a).astype(dtype)
    (low, (w, v)), (low_xla, (w_xla, v_xla)) = both_paths(lambda a: (LA.cholesky(a), LA.eigh(a)), x)
    sym = a.astype(dtype).astype(np.float64)
    w_np, v_np = np.linalg.eigh(sym)
    for got, expected in ((low, np.linalg.cholesky(sym)), (w, w_np), (v, canonical_eigenvectors(v_np))):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_allclose(np.asarray(got), expected, **tol)
    for got, xla in ((low, low_xla), (w, w_xla), (v, v_xla)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(xla), **tol)
    single = np.asarray(LA.cholesky(x[1]))  # unbatched
    np.testing.assert_allclose(single, np.asarray(low)[1], **tol)


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_failed_factorizations_are_nan_on_both_paths(dtype: type, rng: np.random.Generator) -> None:
    a = np.stack([spd(rng, 3, 3), np.diag([1.0, -1.0, 2.0])]).astype(dtype)
    lapack_low, xla_low = both_paths(LA.cholesky, a)
    for low in (np.asarray(lapack_low), np.asarray(xla_low)):
        np.testing.assert_allclose(low[0], np.linalg.cholesky(a[0].astype(np.float64)), rtol=1e-5)
        assert np.isnan(low[1]).any()
    assert np.isnan(np.asarray(lapack_low)[1]).all()  # LAPACK: the failed matrix is all NaN


@needs_lapack
def test_grads_through_lapack_match_xla(rng: np.random.Generator) -> None:
    f = SCALAR_FUNCTIONS
    a, t = general(rng, 3, 3), rng.standard_normal((3, 3))

    def run(a: Any, t: Any) -> Any:
        return [(ts.grad(f[n])(a), ts.jvp(f[n], (a,), (t,))[1]) for n in ("cholesky", "eigh")]

    with_lapack, with_xla = both_paths(run, a, t)
    for got, xla in zip(with_lapack, with_xla):
        for g, e in zip(got, xla):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-8, atol=1e-10)


@needs_lapack
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (2, 3, 5)])
def test_qr_paths_agree(shape: tuple[int, ...], rng: np.random.Generator) -> None:
    a = rng.standard_normal(shape)
    with_lapack, with_xla = both_paths(lambda a: (LA.qr(a), LA.qr(a, mode="complete"), LA.det(a[..., :3, :3])), a)
    assert "lapack_dgeqrf_ffi" in ts.program(lambda a: LA.qr(a)).stage(a).stablehlo()
    (q, r), (qc, rc), det = with_lapack
    (q_x, r_x), (qc_x, rc_x), det_x = with_xla
    for got, xla in ((q, q_x), (r, r_x), (qc, qc_x), (rc, rc_x), (det, det_x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(xla), **F64)


def swapped(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """General matrices with their first and last rows swapped: negative determinants, and LU must pivot."""
    a = general(rng, *shape)
    a[..., [0, -1], :] = a[..., [-1, 0], :]
    return a


SOLVERS = lambda a, b, v: (  # noqa: E731
    LA.solve(a, b), LA.solve(a[0], v), LA.inv(a), LA.det(a), LA.slogdet(a), LA.matrix_power(a, -2)
)


@needs_lapack
def test_solve_and_slogdet_use_getrf_on_cpu_only(rng: np.random.Generator) -> None:
    a, b = general(rng, 2, 3, 3), rng.standard_normal((2, 3, 1))
    staged = ts.program(lambda a, b: (LA.solve(a, b), LA.slogdet(a), LA.det(a))).stage(a, b)
    cpu = staged.stablehlo()
    assert "lapack_dgetrf_ffi" in cpu and "lapack_dtrsm_ffi" in cpu and "triangular_solve" not in cpu
    assert '"Qr"' not in cpu and "lapack_dgeqrf_ffi" not in cpu
    gpu = staged.stablehlo("gpu")
    assert "lapack" not in gpu and '"Qr"' in gpu
    f32 = ts.program(lambda a: LA.inv(a)).stage(a.astype(np.float32)).stablehlo()
    assert "lapack_sgetrf_ffi" in f32


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_and_qr_paths_agree_with_numpy(dtype: type, rng: np.random.Generator) -> None:
    a64 = swapped(rng, 3, 5, 5)
    a64[1] = general(rng, 5, 5)  # one matrix without a forced swap
    a = a64.astype(dtype)
    b, v = rng.standard_normal((3, 5, 2)).astype(dtype), rng.standard_normal(5).astype(dtype)
    wide = a.astype(np.float64)
    sign_np, logdet_np = np.linalg.slogdet(wide)
    expected = (
        np.linalg.solve(wide, b), np.linalg.solve(wide[0], v), np.linalg.inv(wide), np.linalg.det(wide),
        sign_np, logdet_np, np.linalg.matrix_power(wide, -2),
    )
    tol = F64 if dtype == np.float64 else {"rtol": 2e-4, "atol": 2e-4}
    for outs in both_paths(SOLVERS, a, b, v):
        solve, vector, inv, det, (sign, logdet), power = outs
        got = (solve, vector, inv, det, sign, logdet, power)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == dtype
            np.testing.assert_allclose(np.asarray(g), e, **tol)
        np.testing.assert_array_equal(np.asarray(sign), sign_np)
        assert (sign_np < 0).any() and (sign_np > 0).any()


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_singular_matrices_on_both_paths(dtype: type, rng: np.random.Generator) -> None:
    a = general(rng, 3, 4, 4)
    a[1, 2] = 0  # exactly singular in any rounding: a zero row, and a matrix of ones
    a[2] = np.ones((4, 4))
    a = a.astype(dtype)
    (det, (sign, logdet)), (det_x, (sign_x, logdet_x)) = both_paths(lambda a: (LA.det(a), LA.slogdet(a)), a)
    sign_np, logdet_np = np.linalg.slogdet(a.astype(np.float64))
    # LAPACK's LU meets an exact zero pivot: NumPy's answer exactly.
    np.testing.assert_array_equal(np.asarray(sign), [sign_np[0], 0, 0])
    np.testing.assert_array_equal(np.asarray(logdet)[1:], -np.inf)
    np.testing.assert_array_equal(np.asarray(det)[1:], 0)
    # QR leaves rounding noise on R's diagonal: a tiny determinant instead.
    tiny = -30 if dtype == np.float64 else -10
    assert (np.asarray(logdet_x)[1:] < tiny).all() and (np.abs(np.asarray(det_x)[1:]) < np.exp(tiny)).all()
    for s, l, d in ((sign, logdet, det), (sign_x, logdet_x, det_x)):
        assert float(np.asarray(s)[0]) == sign_np[0]
        np.testing.assert_allclose(np.asarray(l)[0], logdet_np[0], rtol=1e-5)
        np.testing.assert_allclose(np.asarray(d)[0], np.linalg.det(a[0].astype(np.float64)), rtol=1e-5)


def xla_path(f: Any, *args: Any) -> Any:
    """``f(*args)`` in a fresh program lowered without LAPACK: XLA's expansions, as on every non-CPU platform (on
    a GPU default device this is the GPU's own lowering)."""
    previous = lapack.enabled()
    lapack.set_enabled(False)
    try:
        return ts.program(f)(*args)
    finally:
        lapack.set_enabled(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_xla_path_failures_are_nan_and_singular_matrices_tiny(dtype: type, rng: np.random.Generator) -> None:
    """What LAPACK's path guarantees, on the default platform's XLA expansion: a matrix that is not positive
    definite has an all-NaN Cholesky factor (StableHLO leaves it implementation-defined; cuSOLVER leaves a
    non-positive pivot), a non-finite matrix all-NaN eigen- and singular decompositions, and an exactly singular
    matrix a determinant that QR's rounding leaves tiny (LAPACK's LU gives 0)."""
    good = spd(rng, 3, 3)
    not_pd = np.stack([good, np.diag([1.0, -1.0, 2.0]), np.diag([1.0, 0.0, 2.0]), np.ones((3, 3))]).astype(dtype)
    singular = general(rng, 3, 4, 4)
    singular[1, 2] = 0
    singular[2] = np.ones((4, 4))
    nan_input = np.stack([good, good]).astype(dtype)
    nan_input[1, 2, 0] = np.nan

    def run(p: Any, s: Any, n: Any) -> Any:
        return LA.cholesky(p), LA.det(s), LA.slogdet(s), LA.eigh(n), LA.svd(n)

    low, det, (sign, logdet), (w, v), (u, sv, vh) = xla_path(run, not_pd, singular.astype(dtype), nan_input)
    low = np.asarray(low)
    np.testing.assert_allclose(low[0], np.linalg.cholesky(good), rtol=1e-5)
    assert np.isnan(low[1:]).all(), low
    for x in (w, v, u, sv, vh):
        assert np.isfinite(np.asarray(x)[0]).all() and np.isnan(np.asarray(x)[1]).all()
    tiny = -30 if dtype == np.float64 else -10
    assert (np.asarray(logdet)[1:] < tiny).all() and (np.abs(np.asarray(det)[1:]) < np.exp(tiny)).all()
    sign_np, logdet_np = np.linalg.slogdet(singular[0])
    assert float(np.asarray(sign)[0]) == sign_np
    np.testing.assert_allclose(np.asarray(logdet)[0], logdet_np, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_precision_factorizations_compute_in_f32(dtype: Any, rng: np.random.Generator) -> None:
    """f16/bf16 solve, triangular solve, Cholesky, QR, eigh and det are computed in f32 and rounded (XLA's GPU
    backend has none of them in half precision): results are the f64 answer rounded, on both paths."""
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a = spd(rng, 2, 4, 4).astype(dt)
    b = rng.standard_normal((2, 4, 2)).astype(dt)

    def run(a: Any, b: Any) -> Any:
        return (LA.solve(a, b), LA.solve_triangular(a, b, lower=True), LA.cholesky(a), LA.qr(a), LA.eigh(a),
                LA.det(a))

    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    eps = float(ml_dtypes.finfo(dt).eps)
    solved, tri, low, (q, r), (w, v), det = outs = ts.program(run)(a, b)  # LAPACK has no half kernels
    f64 = [np.asarray(x).astype(np.float64) for x in (solved, tri, low, q, r, w, v, det)]
    assert all(np.asarray(x).dtype == dt for x in (solved, tri, low, q, r, w, v, det)), outs
    np.testing.assert_allclose(f64[0], np.linalg.solve(a64, b64), rtol=8 * eps, atol=8 * eps)
    np.testing.assert_allclose(f64[1], np.linalg.solve(np.tril(a64), b64), rtol=8 * eps, atol=8 * eps)
    np.testing.assert_allclose(f64[2], np.linalg.cholesky(a64), rtol=4 * eps, atol=4 * eps)
    np.testing.assert_allclose(f64[3] @ f64[4], a64, rtol=16 * eps, atol=64 * eps)
    np.testing.assert_allclose(f64[5], np.linalg.eigvalsh(a64), rtol=4 * eps)
    np.testing.assert_allclose(f64[7], np.linalg.det(a64), rtol=8 * eps)


@needs_lapack
def test_lu_and_qr_derivatives_agree(rng: np.random.Generator) -> None:
    f = SCALAR_FUNCTIONS
    a, t = swapped(rng, 3, 3), rng.standard_normal((3, 3))
    names = ("det", "slogdet", "solve", "inv")

    def run(a: Any, t: Any) -> Any:
        return [(ts.grad(f[n])(a), ts.jvp(f[n], (a,), (t,))[1]) for n in names]

    with_lapack, with_xla = both_paths(run, a, t)
    for got, xla in zip(with_lapack, with_xla):
        for g, e in zip(got, xla):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(np.asarray(with_lapack[1][0]), np.linalg.inv(a).T, **F64)  # grad log|det| = A⁻ᵀ


@needs_lapack
@pytest.mark.parametrize("transpose_a", [False, True])
def test_solve_primitive_transposed_on_both_paths(transpose_a: bool, rng: np.random.Generator) -> None:
    from tensorstage.staging.primitives import decompositions as D
    from tensorstage.tensor import Traced

    a, b = swapped(rng, 2, 4, 4), rng.standard_normal((2, 4, 3))
    expected = np.linalg.solve(np.swapaxes(a, -1, -2) if transpose_a else a, b)

    def f(a: Any, b: Any) -> Any:
        return Traced(D.solve(tnp.asarray(a).atom, tnp.asarray(b).atom, transpose_a=transpose_a))

    for x in both_paths(f, a, b):
        np.testing.assert_allclose(np.asarray(x), expected, **F64)


# ------------------------------------------------------------------------------- det at singular matrices


def rank_deficient(rng: np.random.Generator, batch: tuple[int, ...], n: int, drop: int) -> np.ndarray:
    """Integer matrices of rank exactly ``n - drop``: ``drop`` rows replaced by sums of other rows (exact in
    floating point), at random positions, from a matrix with a nonzero determinant."""
    out = np.empty((*batch, n, n))
    for index in np.ndindex(*batch):
        while True:
            a = rng.integers(-3, 4, size=(n, n)).astype(np.float64)
            if abs(np.linalg.det(a)) > 0.5:
                break
        rows = rng.permutation(n)
        for k in range(drop):  # row rows[k] becomes the sum of two rows that stay independent
            a[rows[k]] = a[rows[drop]] + a[rows[(drop + 1 + k) % n if n > drop + 1 else drop]]
        out[index] = a
    assert (np.linalg.matrix_rank(out) == n - drop).all()
    return out


SINGULAR_SHAPES = [((), 2), ((), 3), ((), 5), ((3,), 3), ((2, 2), 5), ((2,), 5)]


def singular_cases(rng: np.random.Generator) -> list[np.ndarray]:
    # Also matrices whose factorization has several zero pivots though the rank is n-1 (nilpotent Jordan blocks:
    # every pivot of their QR is zero), and a zero matrix.
    cases = [np.array([[1.0, 2.0], [2.0, 4.0]]), np.eye(2, k=1), np.eye(5, k=1), np.eye(3, k=-1) + np.eye(3, k=2),
             np.array([[0.0, 0, 1], [0, 0, 2], [1, 2, 3]]), np.zeros((5, 5))]
    for batch, n in SINGULAR_SHAPES:
        cases += [rank_deficient(rng, batch, n, drop) for drop in (1, 2) if drop < n]
    return cases


def det_derivatives(a: Any, t: Any) -> Any:
    return ts.grad(lambda x: tnp.sum(LA.det(x)))(a), ts.jvp(LA.det, (a,), (t,))[1]


def test_det_gradient_at_singular_matrices(rng: np.random.Generator) -> None:
    """Rank n-1: the cofactor matrix (nonzero); rank n-2: zero. On the default path and, with SciPy, on both (one
    program per path for every case; the JVP, the same cofactors, on one of them)."""
    pair = np.asarray(ts.grad(LA.det)(np.array([[1.0, 2.0], [2.0, 4.0]])))
    np.testing.assert_allclose(pair, [[4, -2], [-2, 1]], rtol=0, atol=1e-14)  # exact on CPU with LAPACK (LU)
    by_size: dict[int, list[np.ndarray]] = {}
    for a in singular_cases(rng):
        by_size.setdefault(a.shape[-1], []).append(a.reshape(-1, a.shape[-1], a.shape[-1]))
    # one batch per size (fewer compiles); the 5x5 one with two batch axes
    cases = [np.concatenate(group) for _, group in sorted(by_size.items())]
    assert [a.shape[-1] for a in cases] == [2, 3, 5]
    cases[2] = cases[2].reshape(-1, 2, 5, 5)
    t = rng.standard_normal(cases[1].shape)

    def run(cases: Any, t: Any) -> Any:
        grads = [ts.grad(lambda x: tnp.sum(LA.det(x)))(a) for a in cases]
        return grads, ts.jvp(LA.det, (cases[-2],), (t,))[1]

    if lapack.available():  # LU on every case; QR (XLA's expansion, slow to compile) on the 3x3 and 5x5 ones
        results = [ts.program(run)(cases, t)]
        lapack.set_enabled(False)
        try:
            results.append(ts.program(run)(cases[1:], t))
        finally:
            lapack.set_enabled(None)
    else:
        results = [ts.program(run)(cases[1:], t)]
    for grads, tangent in results:
        for a, grad in zip(cases[-len(grads):], grads):
            expected = cofactor_matrix(a)
            np.testing.assert_allclose(np.asarray(grad), expected, rtol=0, atol=1e-12 * (np.abs(expected).max() + 1))
        np.testing.assert_allclose(np.asarray(tangent), np.sum(cofactor_matrix(cases[1]) * t, axis=(-2, -1)),
                                   rtol=0, atol=1e-10)
    # float32: the same, to float32 precision
    a32 = cases[0].astype(np.float32)
    expected = cofactor_matrix(cases[0])
    np.testing.assert_allclose(np.asarray(ts.grad(lambda x: tnp.sum(LA.det(x)))(a32)), expected, rtol=0,
                               atol=1e-5 * (np.abs(expected).max() + 1))


def test_det_gradient_under_vmap_at_singular_matrices(rng: np.random.Generator) -> None:
    a = np.concatenate([rank_deficient(rng, (2,), 4, 1), rank_deficient(rng, (1,), 4, 2), general(rng, 1, 4, 4)])
    got = np.asarray(ts.vmap(ts.grad(LA.det))(a))
    np.testing.assert_allclose(got, cofactor_matrix(a), rtol=1e-10, atol=1e-11)
    twice = np.asarray(ts.vmap(ts.vmap(ts.grad(LA.det)))(a.reshape(2, 2, 4, 4)))  # nested: batch axes stack up
    np.testing.assert_allclose(twice.reshape(a.shape), got, rtol=1e-12, atol=1e-12)


def test_det_jvp_and_second_derivatives_at_nonsingular_points(rng: np.random.Generator) -> None:
    a, t = general(rng, 2, 4, 4), rng.standard_normal((2, 4, 4))
    f = lambda x: tnp.sum(LA.det(x))  # noqa: E731
    g = ts.grad(f)

    @ts.program
    def run(a: Any, t: Any) -> Any:
        return ts.jvp(f, (a,), (t,))[1], f(a + EPS * t), f(a - EPS * t), ts.jvp(g, (a,), (t,))[1], g(a + 1e-5 * t), g(
            a - 1e-5 * t), ts.grad(lambda x: tnp.sum(g(x) * t))(a)

    tangent, plus, minus, hvp, g_plus, g_minus, reverse_hvp = (np.asarray(v) for v in run(a, t))
    assert float(tangent) == pytest.approx(float(plus - minus) / (2 * EPS), rel=1e-7)
    np.testing.assert_allclose(hvp, (g_plus - g_minus) / 2e-5, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reverse_hvp, hvp, rtol=1e-10, atol=1e-12)  # the Hessian is symmetric


def test_det_derivatives_match_jax(rng: np.random.Generator) -> None:
    """On 3x3 matrices of rank 2 and 1 (where JAX's LU-based rule is exact; for some rank n-1 matrices of size
    >= 4 it returns 0 while the cofactors are not, which test_det_gradient_at_singular_matrices covers here)."""
    jax = pytest.importorskip("jax")
    a = np.concatenate([rank_deficient(rng, (4,), 3, 1), rank_deficient(rng, (4,), 3, 2), general(rng, 2, 3, 3)])
    t = rng.standard_normal(a.shape)
    with jax.enable_x64(True):
        grads = np.asarray(jax.vmap(jax.grad(jax.numpy.linalg.det))(a))
        tangents = np.asarray(jax.jvp(jax.numpy.linalg.det, (a,), (t,))[1])
        pair = np.asarray(jax.grad(jax.numpy.linalg.det)(np.array([[1.0, 2.0], [2.0, 4.0]])))
    grad, tangent = ts.program(det_derivatives)(a, t)
    np.testing.assert_allclose(np.asarray(grad), grads, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(tangent), tangents, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ts.grad(LA.det)(np.array([[1.0, 2.0], [2.0, 4.0]]))), pair, atol=1e-12)


# ---------------------------------------------------------------------------- NumPy 2 / array-API names


def test_array_api_names_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4))
    m = rng.standard_normal((2, 3, 3))
    u, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ints = rng.integers(-5, 5, size=(2, 3, 3)).astype(np.int8)

    @ts.program
    def run(x: Any, m: Any, u: Any, v: Any, ints: Any) -> Any:
        return (
            [LA.diagonal(x, offset=k) for k in (0, 1, -1)], LA.trace(x), LA.trace(x, offset=2), LA.trace(ints),
            LA.outer(u[0], v[1]), LA.cross(u, v), LA.cross(u.T, v.T, axis=0), LA.vecdot(u, v), LA.vecdot(u, v, axis=0),
            LA.matmul(x, tnp.swapaxes(x, -1, -2)),
            LA.matrix_transpose(x), LA.cholesky(m @ tnp.swapaxes(m, -1, -2) + 3.0, upper=True),
        )

    diags, tr, tr2, tr_int, outer, cross, cross0, vd, vd0, mm, mt, chol = run(x, m, u, v, ints)
    for got, k in zip(diags, (0, 1, -1)):
        np.testing.assert_allclose(np.asarray(got), np.linalg.diagonal(x, offset=k), **F64)
    np.testing.assert_allclose(np.asarray(tr), np.linalg.trace(x), **F64)
    np.testing.assert_allclose(np.asarray(tr2), np.linalg.trace(x, offset=2), **F64)
    np.testing.assert_array_equal(np.asarray(tr_int), np.linalg.trace(ints))
    np.testing.assert_allclose(np.asarray(outer), np.linalg.outer(u[0], v[1]), **F64)
    np.testing.assert_allclose(np.asarray(cross), np.linalg.cross(u, v), **F64)
    np.testing.assert_allclose(np.asarray(cross0), np.linalg.cross(u.T, v.T, axis=0), **F64)
    np.testing.assert_allclose(np.asarray(vd), np.linalg.vecdot(u, v), **F64)
    np.testing.assert_allclose(np.asarray(vd0), np.linalg.vecdot(u, v, axis=0), **F64)
    np.testing.assert_allclose(np.asarray(mm), np.linalg.matmul(x, np.swapaxes(x, -1, -2)), **F64)
    np.testing.assert_array_equal(np.asarray(mt), np.linalg.matrix_transpose(x))
    spd_m = m @ np.swapaxes(m, -1, -2) + 3.0
    np.testing.assert_allclose(np.asarray(chol), np.linalg.cholesky(spd_m, upper=True), **F64)


MATRIX_NORM_ORDS = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
VECTOR_NORM_CASES = [(o, ax) for o in (2, 1, 0, np.inf, -np.inf, 3, -1.5) for ax in (None, -1, (0, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_and_matrix_norm(dtype: type, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    x[0, 0, 0] = 0  # ord=0 counts nonzeros

    @ts.program
    def run(x: Any) -> Any:
        vectors = [LA.vector_norm(x, axis=ax, ord=o) for o, ax in VECTOR_NORM_CASES]
        kept = LA.vector_norm(x, axis=(0, 2), keepdims=True), LA.vector_norm(x, keepdims=True)
        matrices = [(LA.matrix_norm(x, ord=o), LA.matrix_norm(x, ord=o, keepdims=True)) for o in MATRIX_NORM_ORDS]
        return vectors, kept, matrices, LA.matrix_norm(x)

    vectors, kept, matrices, default = run(x)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-12}
    wide = x.astype(np.float64)
    for got, (o, ax) in zip(vectors, VECTOR_NORM_CASES):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_allclose(np.asarray(got), np.linalg.vector_norm(wide, axis=ax, ord=o), **tol)
    np.testing.assert_allclose(np.asarray(kept[0]), np.linalg.vector_norm(wide, axis=(0, 2), keepdims=True), **tol)
    np.testing.assert_allclose(np.asarray(kept[1]), np.linalg.vector_norm(wide, keepdims=True), **tol)
    for (plain, keep), o in zip(matrices, MATRIX_NORM_ORDS):
        np.testing.assert_allclose(np.asarray(plain), np.linalg.matrix_norm(wide, ord=o), **tol)
        np.testing.assert_allclose(np.asarray(keep), np.linalg.matrix_norm(wide, ord=o, keepdims=True), **tol)
    np.testing.assert_allclose(np.asarray(default), np.linalg.matrix_norm(wide), **tol)
    empty = np.zeros((2, 0, 3), dtype)  # max of no magnitudes is 0 (was -inf); a min of none is an error
    _ = [np.testing.assert_array_equal(np.asarray(f(empty, ord=o)), g(empty, ord=o))
         for f, g in ((LA.vector_norm, np.linalg.vector_norm), (LA.matrix_norm, np.linalg.matrix_norm))
         for o in (np.inf, 2, 1)]
    for o in (np.inf, 2, 1):  # norm over one empty axis agrees (ord=inf gave -inf before)
        np.testing.assert_array_equal(np.asarray(LA.norm(empty, ord=o, axis=1)), np.linalg.norm(empty, ord=o, axis=1))
    for f in (LA.vector_norm, LA.matrix_norm):
        with pytest.raises(ts.ShapeError, match="test_linalg.py"):
            f(empty, ord=-np.inf)
    with pytest.raises(ts.ShapeError, match="norm: ord=-inf over an empty axis of f32"):
        LA.norm(np.zeros(0, np.float32), ord=-np.inf)


def test_multi_dot_tensorinv_tensorsolve(rng: np.random.Generator) -> None:
    chain = [rng.standard_normal(s) for s in [(10, 30), (30, 5), (5, 60), (60, 2)]]
    first, last = rng.standard_normal(10), rng.standard_normal(2)
    t = rng.standard_normal((4, 6, 8, 3)) + 0.0
    t = (np.eye(24) * 6 + t.reshape(24, 24)).reshape(4, 6, 8, 3)
    a = (np.eye(24) * 6 + rng.standard_normal((24, 24))).reshape(6, 4, 2, 3, 4)
    b = rng.standard_normal((6, 4))
    moved = np.moveaxis(a, (3, 4), (0, 1))  # axes=(0, 1) moves them back to the end
    t1 = (np.eye(6) * 6 + rng.standard_normal((6, 6))).reshape(6, 2, 3)

    @ts.program
    def run(chain: Any, first: Any, last: Any, t: Any, t1: Any, a: Any, b: Any, moved: Any) -> Any:
        return (LA.multi_dot(chain), LA.multi_dot([first, *chain, last]), LA.multi_dot(chain[:2]),
                LA.multi_dot([first, chain[0]]), LA.tensorinv(t), LA.tensorinv(t1, ind=1), LA.tensorsolve(a, b),
                LA.tensorsolve(moved, b, axes=(0, 1)))

    outs = run(chain, first, last, t, t1, a, b, moved)
    expected = (np.linalg.multi_dot(chain), np.linalg.multi_dot([first, *chain, last]),
                np.linalg.multi_dot(chain[:2]), np.linalg.multi_dot([first, chain[0]]), np.linalg.tensorinv(t),
                np.linalg.tensorinv(t1, ind=1), np.linalg.tensorsolve(a, b),
                np.linalg.tensorsolve(moved, b, axes=(0, 1)))
    for got, want in zip(outs, expected):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-9)


def test_multi_dot_picks_the_cheapest_order(rng: np.random.Generator) -> None:
    """(10x1000)(1000x2)(2x500): left first costs 10*1000*2 + 10*2*500, right first 1000*2*500 + 10*1000*500."""
    chain = [np.ones((10, 1000)), np.ones((1000, 2)), np.ones((2, 500))]
    graph = str(ts.program(lambda c: LA.multi_dot(c)).stage(chain).graph)
    assert "f64[10, 2]" in graph and "f64[1000, 500]" not in graph


def test_new_names_differentiate_and_vmap(rng: np.random.Generator) -> None:
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    c1, c2 = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    sq = rng.standard_normal((3, 1, 3, 1)) + (np.eye(3) * 4).reshape(3, 1, 3, 1)

    def f(x: Any) -> Any:
        return (LA.vector_norm(x, ord=3) + LA.matrix_norm(x, ord="nuc") + LA.trace(tnp.sin(x))
                + tnp.sum(LA.multi_dot([x, tnp.asarray(c1), tnp.asarray(c2)]) ** 2) + LA.vecdot(x[0], x[1])
                + tnp.sum(LA.tensorinv(tnp.reshape(LA.outer(x[0, :3], x[1, 1:]), (3, 1, 3, 1)) * 0.1 + sq) ** 2))

    @ts.program
    def run(x: Any, t: Any) -> Any:
        return f(x + EPS * t), f(x - EPS * t), ts.grad(f)(x)

    plus, minus, grad = (np.asarray(v) for v in run(x, t))
    assert float(np.sum(grad * t)) == pytest.approx(float(plus - minus) / (2 * EPS), rel=1e-6)

    batch = rng.standard_normal((5, 3, 4))
    per_example = lambda x: (LA.vector_norm(x, axis=-1), LA.matrix_norm(x, ord=1), LA.diagonal(x))  # noqa: E731
    got = ts.vmap(per_example)(batch)
    loop = ts.program(per_example)
    for i in range(5):
        for g, e in zip(got, loop(batch[i])):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(e), **F64)


def test_new_names_reject_bad_input() -> None:
    cases = [
        (ts.ShapeError, "multi_dot", lambda: LA.multi_dot([np.ones((2, 3))])),
        (ts.ShapeError, "multi_dot", lambda: LA.multi_dot([np.ones((2, 3)), np.ones((2, 3))])),
        (ts.ShapeError, "multi_dot", lambda: LA.multi_dot([np.ones((2, 3)), np.ones((3, 3, 1)), np.ones(1)])),
        (ts.ShapeError, "outer", lambda: LA.outer(np.ones((2, 2)), np.ones(2))),
        (ts.ShapeError, "matrix_norm", lambda: LA.matrix_norm(np.ones(3))),
        (ts.DTypeError, "vector_norm", lambda: LA.vector_norm(np.ones(3, dtype=np.int32))),
        (ts.ShapeError, "vector_norm", lambda: LA.vector_norm(np.ones(3), axis=1)),
        (ts.ShapeError, "tensorinv", lambda: LA.tensorinv(np.ones((2, 3, 4)), ind=1)),
        (ts.ShapeError, "tensorsolve", lambda: LA.tensorsolve(np.ones((2, 3, 4)), np.ones(2))),
        (ts.ShapeError, "cross", lambda: LA.cross(np.ones(2), np.ones(2))),
        (ts.ShapeError, "diagonal", lambda: LA.diagonal(np.ones(3))),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name) as info:
            call()
        assert "test_linalg.py" in str(info.value), str(info.value)
    with pytest.raises(ValueError, match="ind"):
        LA.tensorinv(np.eye(2), ind=0)


@needs_lapack
def test_det_gradient_uses_lu_on_cpu_and_qr_elsewhere(rng: np.random.Generator) -> None:
    staged = ts.program(ts.grad(lambda a: tnp.sum(LA.det(a)))).stage(general(rng, 2, 3, 3))
    cpu, gpu = staged.stablehlo(), staged.stablehlo("gpu")
    assert "lapack_dgetrf_ffi" in cpu and '"Qr"' not in cpu and "lapack_dgeqrf_ffi" not in cpu
    assert "lapack" not in gpu and '"Qr"' in gpu
    assert "stablehlo.if" in cpu  # the zero-pivot factors are computed only when some pivot is zero
