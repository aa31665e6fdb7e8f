"""The rest of ts.scipy.linalg against scipy.linalg (float64) on seeded random inputs: the matrix constructors,
polar, expm_frechet, qr_multiply, eigh_tridiagonal, and the Schur family (schur, hessenberg, rsf2csf, sqrtm, funm,
solve_sylvester; LAPACK on CPU), staged and eager, batched; gradients against finite differences; vmap against a
loop; the Schur primitives' errors (other platforms, LAPACK disabled, derivatives, bad operands); and the name
list against jax.scipy.linalg. The registry tests cover the schur and hessenberg primitives too
(tests/schur_cases.py)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack
from tensorstage.staging.errors import TransformError
from tensorstage.staging.primitives.schur import SchurUnavailableError

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

sl = pytest.importorskip("scipy.linalg")
SLA: Any = ts.scipy.linalg
TOL = {np.dtype(np.float32): {"rtol": 2e-4, "atol": 2e-4}, np.dtype(np.float64): {"rtol": 1e-10, "atol": 1e-10}}
needs_lapack = pytest.mark.skipif(
    importlib.util.find_spec("scipy") is None or ts.default_device().platform != "cpu",
    reason="schur and hessenberg run only on CPU with LAPACK (SciPy)",
)

# jax.scipy.linalg names ts.scipy.linalg deliberately lacks (none today); add one here with the reason.
DELIBERATE_ABSENCES: set[str] = set()


def test_every_jax_scipy_linalg_name_exists() -> None:
    jsl = pytest.importorskip("jax.scipy.linalg")
    public = {n for n in dir(jsl) if not n.startswith("_")}
    missing = public - set(dir(SLA)) - DELIBERATE_ABSENCES
    assert not missing, f"jax.scipy.linalg names missing from ts.scipy.linalg: {sorted(missing)}"
    assert set(SLA.__all__) <= set(dir(SLA))


def _close(got: Any, expected: Any, dtype: Any, label: str = "", scale: float = 1.0) -> None:
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (label, got.dtype, dtype)
    tol = TOL[np.dtype(np.float32 if np.dtype(dtype) in (np.float32, np.complex64) else np.float64)]
    np.testing.assert_allclose(got, expected, err_msg=label, rtol=tol["rtol"] * scale, atol=tol["atol"] * scale)


def _loop(f: Any, *batched: np.ndarray) -> np.ndarray:
    return np.stack([f(*xs) for xs in zip(*batched)])


# ------------------------------------------------------------------------------------------- constructors

SIZED = [("dft", (5,), np.complex64), ("dft", (4, "sqrtn"), np.complex64), ("dft", (3, "n"), np.complex64),
         ("hadamard", (8,), np.int32), ("helmert", (5,), np.float32), ("helmert", (4, True), np.float32),
         ("invhilbert", (6,), np.float32), ("pascal", (5,), np.float32), ("pascal", (4, "lower"), np.float32),
         ("invpascal", (5,), np.float32), ("invpascal", (4, "upper"), np.float32)]


def test_sized_constructors_match_scipy() -> None:
    for name, args, dtype in SIZED:
        _close(getattr(SLA, name)(*args), getattr(sl, name)(*args), dtype, f"{name}{args}")
    _close(SLA.dft(4, dtype=ts.c128), sl.dft(4), np.complex128, "dft c128")
    _close(SLA.hadamard(4, ts.f32), sl.hadamard(4), np.float32, "hadamard f32")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_constructors_match_scipy_batched_staged(dtype: Any, rng: np.random.Generator) -> None:
    v, s = rng.standard_normal((2, 5)).astype(dtype), rng.standard_normal((2, 4)).astype(dtype)

    @ts.program
    def build(v: Any, s: Any) -> Any:
        return {
            "companion": SLA.companion(v), "fiedler": SLA.fiedler(v), "fiedler_companion": SLA.fiedler_companion(v),
            "leslie": SLA.leslie(v, s), "full": SLA.convolution_matrix(v, 3), "same": SLA.convolution_matrix(v, 7,
                                                                                                           "same"),
            "valid": SLA.convolution_matrix(v, 3, "valid"),
        }

    got = build(v, s)
    v64, s64 = v.astype(np.float64), s.astype(np.float64)
    expected = {
        "companion": _loop(sl.companion, v64), "fiedler": _loop(sl.fiedler, v64),
        "fiedler_companion": _loop(sl.fiedler_companion, v64), "leslie": _loop(sl.leslie, v64, s64),
        "full": _loop(lambda x: sl.convolution_matrix(x, 3), v64),
        "same": _loop(lambda x: sl.convolution_matrix(x, 7, "same"), v64),
        "valid": _loop(lambda x: sl.convolution_matrix(x, 3, "valid"), v64),
    }
    for key, want in expected.items():
        _close(got[key], want, dtype, key, scale=10.0)
    _close(SLA.fiedler_companion(v64[0, :2]), sl.fiedler_companion(v64[0, :2]), np.float64, "degree 1")  # eager
    assert np.asarray(SLA.fiedler_companion(v64[0, :1])).shape == (0, 0)


# ------------------------------------------------------------------- polar, expm_frechet, qr_multiply, tridiagonal


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_svd_qr_eigh_based_functions_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    a = rng.standard_normal((2, 5, 3)).astype(dtype)
    sq, e = rng.standard_normal((2, 4, 4)).astype(dtype), rng.standard_normal((2, 4, 4)).astype(dtype)
    left_c, right_c = rng.standard_normal((2, 3, 2)).astype(dtype), rng.standard_normal((2, 4, 5)).astype(dtype)
    d, off = rng.standard_normal((2, 5)).astype(dtype), rng.standard_normal((2, 4)).astype(dtype)

    @ts.program
    def run(a: Any, sq: Any, e: Any, left_c: Any, right_c: Any, d: Any, off: Any) -> Any:
        return {
            "polar_right": SLA.polar(a), "polar_left": SLA.polar(a, "left", method="svd"),
            "frechet": SLA.expm_frechet(0.5 * sq, e), "frechet_only": SLA.expm_frechet(sq, e, compute_expm=False),
            "qr_left": SLA.qr_multiply(a, left_c, "left"), "qr_right": SLA.qr_multiply(a, right_c),
            "qr_conj": SLA.qr_multiply(a, right_c, conjugate=True),
            "tri": SLA.eigh_tridiagonal(d, off), "tri_i": SLA.eigh_tridiagonal(d, off, eigvals_only=True, select="i",
                                                                             select_range=(1, 3)),
        }

    got = run(a, sq, e, left_c, right_c, d, off)
    a64, sq64, e64 = (x.astype(np.float64) for x in (a, sq, e))
    c64l, c64r, d64, o64 = (x.astype(np.float64) for x in (left_c, right_c, d, off))
    expected = {
        "polar_right": [_loop(lambda x, k=k: sl.polar(x)[k], a64) for k in (0, 1)],
        "polar_left": [_loop(lambda x, k=k: sl.polar(x, "left")[k], a64) for k in (0, 1)],
        "frechet": [_loop(lambda x, y, k=k: sl.expm_frechet(0.5 * x, y)[k], sq64, e64) for k in (0, 1)],
        "frechet_only": _loop(lambda x, y: sl.expm_frechet(x, y, compute_expm=False), sq64, e64),
        "qr_left": [_loop(lambda x, y, k=k: sl.qr_multiply(x, y, "left")[k], a64, c64l) for k in (0, 1)],
        "qr_right": [_loop(lambda x, y, k=k: sl.qr_multiply(x, y)[k], a64, c64r) for k in (0, 1)],
        "qr_conj": [_loop(lambda x, y, k=k: sl.qr_multiply(x, y, conjugate=True)[k], a64, c64r) for k in (0, 1)],
        "tri_i": _loop(lambda x, y: sl.eigh_tridiagonal(x, y, eigvals_only=True, select="i", select_range=(1, 3)),
                       d64, o64),
    }
    for key, want in expected.items():
        parts = want if isinstance(want, list) else [want]
        outs = got[key] if isinstance(want, list) else [got[key]]
        for k, (g, w) in enumerate(zip(outs, parts)):
            _close(g, w, dtype, f"{key}[{k}]", scale=10.0)
    w, v = (np.asarray(x) for x in got["tri"])
    _close(w, _loop(lambda x, y: sl.eigh_tridiagonal(x, y)[0], d64, o64), dtype, "tri values")
    tri = np.stack([np.diag(x) + np.diag(y, 1) + np.diag(y, -1) for x, y in zip(d64, o64)])
    np.testing.assert_allclose(tri @ v, v * w[:, None, :], **TOL[np.dtype(dtype)])
    qv, r = SLA.qr_multiply(a64[0], right_c[0, 0].astype(np.float64))  # eager, a 1-D row
    _close(qv, sl.qr_multiply(a64[0], c64r[0, 0])[0], np.float64, "1-D c")


# --------------------------------------------------------------------------------------------- Schur family


def _complex_of(dtype: Any) -> Any:
    return np.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else np.complex128


def _schur_family(a: Any, b: Any, c: Any) -> dict[str, Any]:
    return {
        "schur": SLA.schur(a), "schur_c": SLA.schur(a, output="complex"), "hess": SLA.hessenberg(a, calc_q=True),
        "hess_h": SLA.hessenberg(a), "sqrtm": SLA.sqrtm(a + 4 * tnp.eye(4, dtype=a.dtype)),  # off the branch cut
        "funm": SLA.funm(a, tnp.exp, disp=False),
        "sylvester": SLA.solve_sylvester(a, b, c), "sylvester_bcast": SLA.solve_sylvester(a, b[0], c),
    }


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_schur_family_matches_scipy(dtype: Any, rng: np.random.Generator) -> None:
    def draw(*shape: int) -> np.ndarray:
        x = rng.standard_normal(shape)
        return (x + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)

    a, b, c = draw(2, 4, 4), draw(2, 3, 3), draw(2, 4, 3)
    got = ts.program(_schur_family)(a, b, c)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a64, b64, c64 = (x.astype(wide) for x in (a, b, c))
    cplx = _complex_of(dtype)
    t, z = (np.asarray(x) for x in got["schur"])
    h, q = (np.asarray(x) for x in got["hess"])
    for label, (left, mid) in {"schur": (z, t), "hessenberg": (q, h)}.items():  # a = q h qᴴ, q unitary
        _close(left @ mid @ np.conj(np.swapaxes(left, -1, -2)), a64, dtype, label, scale=10.0)
        _close(np.conj(np.swapaxes(left, -1, -2)) @ left, np.broadcast_to(np.eye(4), a.shape), dtype, label, 10.0)
    assert np.all(np.tril(h, -2) == 0) and np.array_equal(np.asarray(got["hess_h"]), h)
    tc, zc = (np.asarray(x) for x in got["schur_c"])
    assert tc.dtype == cplx and np.all(np.tril(tc, -1) == 0)
    _close(zc @ tc @ np.conj(np.swapaxes(zc, -1, -2)), a64, cplx, "complex schur", scale=10.0)
    if np.dtype(dtype) != np.float32:  # the same LAPACK routine in the same precision as SciPy: the same factors
        _close(t, _loop(lambda x: sl.schur(x)[0], a64), dtype, "t")
        _close(q, _loop(lambda x: sl.hessenberg(x, calc_q=True)[1], a64), dtype, "q")
    _close(got["sqrtm"], _loop(sl.sqrtm, a64 + 4 * np.eye(4)), cplx, "sqrtm", scale=100.0)
    f, err = (np.asarray(x) for x in got["funm"])
    _close(f, _loop(sl.expm, a64), cplx, "funm exp", scale=100.0)
    _close(err, _loop(lambda x: sl.funm(x, np.exp, disp=False)[1], a64), np.dtype(cplx).type(0).real.dtype, "errest",
           scale=1e6)
    sylvester = _loop(sl.solve_sylvester, a64, b64, c64)
    _close(got["sylvester"], sylvester, dtype, "sylvester", scale=100.0)
    _close(got["sylvester_bcast"], _loop(lambda x, y: sl.solve_sylvester(x, b64[0], y), a64, c64), dtype, "bcast",
           scale=100.0)


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rsf2csf_sqrtm_eager_and_vmap(dtype: Any, rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 5, 5)).astype(dtype)
    t, z = sl.schur(a[0].astype(np.float64))
    tc, zc = SLA.rsf2csf(t.astype(dtype), z.astype(dtype))  # eager
    want_t, want_z = sl.rsf2csf(t, z)
    _close(tc, want_t, _complex_of(dtype), "rsf2csf t", scale=10.0)
    _close(zc, want_z, _complex_of(dtype), "rsf2csf z", scale=10.0)
    roots = np.asarray(ts.vmap(SLA.sqrtm)(a))
    _close(roots, np.stack([np.asarray(SLA.sqrtm(x)) for x in a]), _complex_of(dtype), "vmap sqrtm")
    forms = ts.vmap(lambda x: SLA.hessenberg(x, calc_q=True), in_axes=1, out_axes=1)(np.swapaxes(a, 0, 1))
    _close(forms[0], np.swapaxes(np.stack([np.asarray(SLA.hessenberg(x)) for x in a]), 0, 1), dtype, "vmap hess")
    # SciPy's own example: a real result, given complex (a deliberate difference)
    pos = np.array([[1.0, 3.0], [1.0, 4.0]], dtype)
    _close(SLA.sqrtm(pos), sl.sqrtm(pos.astype(np.float64)), _complex_of(dtype), "sqrtm real")


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    parts = [
        lambda x: SLA.polar(x)[0] * 2.0 + SLA.polar(x, "left")[0],
        lambda x: SLA.polar(x)[1].sum(-1)[..., :3] + SLA.polar(x, "left")[1].sum(-1),
        lambda x: SLA.expm_frechet(0.3 * x[..., :3], x[..., 1:], compute_expm=False),
        lambda x: SLA.qr_multiply(tnp.swapaxes(x, -1, -2), x[..., :3], "left")[0],
        lambda x: SLA.eigh_tridiagonal(x[..., 0, :], x[..., 1, 1:], eigvals_only=True),
        lambda x: SLA.companion(x[..., 0, :] + 3.0),
        lambda x: SLA.leslie(x[..., 1, :], x[..., 2, 1:]),
    ]
    # one case (one compile) whose output holds every part, so a wrong part moves the directional derivative
    assert_grads_match_finite_differences([lambda x: tnp.concatenate([f(x).reshape(-1) for f in parts])], rng)


def test_gradients_match_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    jsl, jnp = pytest.importorskip("jax.scipy.linalg"), pytest.importorskip("jax.numpy")
    x = rng.standard_normal((4, 3))

    def loss(x: Any, linalg: Any, np_: Any) -> Any:
        u, p = linalg.polar(x, method="svd")
        frechet = linalg.expm_frechet(0.3 * x[:3], x[1:], compute_expm=False)
        return np_.sum(np_.sin(u)) + np_.sum(p * p) + np_.sum(np_.cos(frechet))  # jax has no qr_multiply rule

    got = np.asarray(ts.program(ts.grad(lambda v: loss(v, SLA, tnp)))(x))
    with jax.enable_x64(True):  # a scope: jax's global setting is left to the other tests
        want = np.asarray(jax.grad(lambda v: loss(v, jsl, jnp))(x))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------------------------------- errors


def test_schur_derivatives_raise() -> None:
    for f, name in ((lambda x: SLA.schur(x)[0].sum(), "schur"), (lambda x: SLA.sqrtm(x).real.sum(), "schur"),
                    (lambda x: SLA.hessenberg(x).sum(), "hessenberg")):
        with pytest.raises(TransformError, match=f"{name} has no derivative"):
            ts.program(ts.grad(f)).stage(ts.Spec((3, 3), ts.f64))


def test_other_platforms_and_disabled_lapack_raise_at_lowering() -> None:
    staged = ts.program(lambda a: SLA.sqrtm(a)).stage(ts.Spec((2, 3, 3), ts.f32))
    with pytest.raises(SchurUnavailableError, match=r"(?s)schur of c64\[2, 3, 3\] has no lowering on gpu.*more\.py"):
        staged.stablehlo("gpu")
    hess = ts.program(lambda a: SLA.hessenberg(a)).stage(ts.Spec((3, 3), ts.f64))
    with pytest.raises(SchurUnavailableError, match=r"hessenberg of f64\[3, 3\] has no lowering on gpu.*gehrd"):
        hess.stablehlo("gpu")
    if ts.default_device().platform != "cpu":
        return
    lapack.set_enabled(False)
    try:
        with pytest.raises(SchurUnavailableError, match=r"(?s)gees on CPU, which is disabled.*more\.py"):
            SLA.schur(np.eye(2))
    finally:
        lapack.set_enabled(None)
    if importlib.util.find_spec("scipy") is not None:
        assert "lapack_cgees_ffi" in staged.stablehlo("cpu")
        assert "lapack_dgehrd_ffi" in hess.stablehlo("cpu")


def test_bad_operands_name_the_op_and_the_line() -> None:
    square, wide = ts.Spec((3, 3), ts.f32), ts.Spec((3, 4), ts.f32)
    ints, vec = ts.Spec((3, 3), ts.i32), ts.Spec((4,), ts.f32)
    check_staging_errors(
        [
            (lambda a: SLA.schur(a), (wide,), ts.ShapeError, ["schur", "square", "f32[3, 4]"]),
            (lambda a: SLA.sqrtm(a), (ints,), ts.DTypeError, ["sqrtm", "i32[3, 3]"]),
            (lambda a: SLA.hessenberg(a[0]), (square,), ts.ShapeError, ["hessenberg", "f32[3]"]),
            (lambda a, b: SLA.solve_sylvester(a, a, b), (square, wide), ts.ShapeError,
             ["solve_sylvester", "f32[3, 4]"]),
            (lambda a: SLA.companion(a[:1]), (vec,), ts.ShapeError, ["companion", "N >= 2", "f32[1]"]),
            (lambda a, b: SLA.leslie(a, b), (vec, vec), ts.ShapeError, ["leslie", "one element fewer"]),
            (lambda a, b: SLA.qr_multiply(a, b, "left"), (wide, ts.Spec((4, 4), ts.f32)), ts.ShapeError,
             ["qr_multiply", "3 rows"]),
            (lambda a, b: SLA.expm_frechet(a, b), (square, wide), ts.ShapeError, ["expm_frechet", "one shape"]),
            (lambda d, e: SLA.eigh_tridiagonal(d, e), (vec, vec), ts.ShapeError, ["eigh_tridiagonal", "N-1"]),
            (lambda a: SLA.funm(a, lambda w: w.sum()), (square,), ValueError, ["funm", "eigenvalues' shape"]),
        ],
        "test_scipy_linalg_more.py",
    )
    for call, message in [
        (lambda: SLA.schur(np.eye(2), output="x"), "output must be"), (lambda: SLA.hadamard(6), "power of 2"),
        (lambda: SLA.dft(3, scale="x"), "scale must be"), (lambda: SLA.pascal(3, "x"), "kind must be"),
        (lambda: SLA.convolution_matrix(np.ones(3), 2, "x"), "mode must be"),
        (lambda: SLA.polar(np.eye(2), "x"), "side must be"), (lambda: SLA.helmert(0), "at least 1"),
        (lambda: SLA.eigh_tridiagonal(np.ones(3), np.ones(2), select="i", select_range=(2, 5)), "select_range"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(NotImplementedError, match="blocksize"):
        SLA.sqrtm(np.eye(2), blocksize=2)
