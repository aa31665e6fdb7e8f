"""tnp.linalg on complex matrices (c64, c128): values against NumPy in complex128, on the CPU LAPACK path and on
XLA's expansions; derivatives against JAX (when installed) and central finite differences along real and
imaginary directions; vmap against a Python loop; errors. Inputs are seeded, Hermitian ones are B Bᴴ + n I and
general ones have a large diagonal, so tolerances stay tight. Each group stages one program (compiles dominate)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack

LA = tnp.linalg
TOL = {np.complex64: 2e-4, np.complex128: 1e-10}
HAS_JAX = importlib.util.find_spec("jax") is not None


def cnormal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = cnormal(rng, *shape)
    return b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])


def general(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return cnormal(rng, *shape) + 3 * np.eye(shape[-1])


def mH(x: np.ndarray) -> np.ndarray:  # noqa: N802
    return np.conj(np.swapaxes(x, -1, -2))


def canonical_phases(v: np.ndarray) -> np.ndarray:
    """tensorstage's eigenvector phase: each column's largest-magnitude component real and positive."""
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * np.conj(top) / np.abs(top)


@pytest.fixture(params=["lapack", "xla"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The CPU LAPACK kernels, or XLA's own expansions (what other platforms use)."""
    if request.param == "lapack":
        if not lapack.available():
            pytest.skip("jaxlib's LAPACK kernels or SciPy are not available")
        yield request.param
        return
    lapack.set_enabled(False)
    try:
        yield request.param
    finally:
        lapack.set_enabled(None)


def _close(got: Any, want: np.ndarray, dtype: Any, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (what, got.dtype, dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    tol = TOL[_complex(dtype)]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


def _complex(dtype: Any) -> Any:
    return np.complex64 if np.dtype(dtype) in (np.complex64, np.float32) else np.complex128


def _real(dtype: Any) -> Any:
    return np.float32 if np.dtype(dtype) == np.complex64 else np.float64


# ------------------------------------------------------------------------------------------------- values


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_match_numpy(dtype: Any, path: str, rng: np.random.Generator) -> None:
    """Every function on the LAPACK path; on XLA's expansions those whose lowering differs (the others compose
    them), which keeps the compile short."""
    h, g = hermitian(rng, 2, 4, 4), general(rng, 2, 4, 4)
    h_upper = np.triu(h) + np.tril(cnormal(rng, 4, 4), -1)  # garbage below the diagonal: upper=True reads above
    g[1] = g[1][::-1]  # a row swap: LU pivots
    b, v, tall = cnormal(rng, 2, 4, 3), cnormal(rng, 4), cnormal(rng, 2, 5, 3)
    wide = np.swapaxes(tall, -1, -2)
    t4 = general(rng, 6, 6).reshape(2, 3, 6)

    @ts.program
    def run(h: Any, g: Any, b: Any, v: Any, tall: Any, wide: Any, t4: Any, h_upper: Any) -> Any:
        out = {
            "cholesky": LA.cholesky(h), "eigh": LA.eigh(h), "qr": LA.qr(tall), "qr_complete": LA.qr(tall, mode="complete"),
            "solve": LA.solve(g, b), "det": LA.det(g), "slogdet": LA.slogdet(g),
        }
        if path == "xla":
            return out
        return {
            **out, "cholesky_upper": LA.cholesky(h_upper, upper=True), "eigh_upper": LA.eigh(g, UPLO="U"),
            "eigvalsh": LA.eigvalsh(g), "qr_wide": LA.qr(wide), "qr_r": LA.qr(wide, mode="r"),
            "solve_vector": LA.solve(g, v), "inv": LA.inv(g), "power": LA.matrix_power(g, -2),
            "triangular": [LA.solve_triangular(g, b, lower=lo, trans=tr) for lo in (True, False) for tr in (0, 1, 2)],
            "tensorinv": LA.tensorinv(t4, ind=2), "tensorsolve": LA.tensorsolve(t4.reshape(6, 2, 3), t4[0, 0]),
        }

    cast = [x.astype(dtype) for x in (h, g, b, v, tall, wide, t4, h_upper)]
    got = run(*cast)
    h, g, b, v, tall, wide, t4, h_upper = (x.astype(np.complex128) for x in cast)  # the references see the rounded inputs
    triangles = [op for tri in (np.tril(g), np.triu(g)) for op in (tri, np.swapaxes(tri, -1, -2), mH(tri))]
    want = {
        "cholesky": np.linalg.cholesky(h), "eigh": _eigh_ref(h, "L"), "qr": np.linalg.qr(tall),
        "qr_complete": np.linalg.qr(tall, mode="complete"), "solve": np.linalg.solve(g, b), "det": np.linalg.det(g),
        "slogdet": np.linalg.slogdet(g), "cholesky_upper": np.linalg.cholesky(h_upper, upper=True),
        "eigh_upper": _eigh_ref(g, "U"), "eigvalsh": np.linalg.eigvalsh(g), "qr_wide": np.linalg.qr(wide),
        "qr_r": np.linalg.qr(wide, mode="r"), "solve_vector": np.linalg.solve(g, v), "inv": np.linalg.inv(g),
        "power": np.linalg.matrix_power(g, -2), "triangular": [np.linalg.solve(op, b) for op in triangles],
        "tensorinv": np.linalg.tensorinv(t4, ind=2), "tensorsolve": np.linalg.tensorsolve(t4.reshape(6, 2, 3), t4[0, 0]),
    }
    for key, value in got.items():
        for k, (x, ref) in enumerate(zip(*(_flat(value), _flat(want[key])))):
            _close(x, ref, dtype if np.iscomplexobj(ref) else _real(dtype), f"{key} {k}")
    # Reconstructions: L Lᴴ, V diag(w) Vᴴ (the Hermitian matrix read), Q R and QᴴQ = I.
    low = np.asarray(got["cholesky"])
    _close(low @ mH(low), h, dtype, "L Lᴴ")
    w, vecs = (np.asarray(x) for x in got["eigh"])
    _close((vecs * w[..., None, :]) @ mH(vecs), h, dtype, "V diag(w) Vᴴ")
    for key, a in (("qr", tall), ("qr_complete", tall)):
        q, rr = (np.asarray(x) for x in got[key])
        _close(q @ rr, a, dtype, key + " QR")
        _close(mH(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), (*q.shape[:-2], q.shape[-1], q.shape[-1])), dtype, key + " QᴴQ")


def _eigh_ref(a: np.ndarray, uplo: str) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, canonical_phases(v)


def _flat(x: Any) -> list[Any]:
    return [y for item in x for y in _flat(item)] if isinstance(x, (tuple, list)) else [x]


def test_eager_calls_and_failures(rng: np.random.Generator) -> None:
    h = hermitian(rng, 3, 3).astype(np.complex64)
    w = LA.eigvalsh(h)
    assert np.asarray(w).dtype == np.float32
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h.astype(np.complex128)), rtol=1e-4)
    sign, logdet = LA.slogdet(h)
    assert np.asarray(sign).dtype == np.complex64 and np.asarray(logdet).dtype == np.float32
    # Not positive definite: NaNs (no exception), as for real matrices.
    assert np.isnan(np.asarray(LA.cholesky(np.diag([1.0, -1.0]).astype(np.complex128)))).all()
    # A singular matrix: sign 0 and log|det| -inf on CPU's LU, as NumPy.
    if lapack.available():
        sign, logdet = LA.slogdet(np.ones((3, 3), np.complex128))
        assert complex(np.asarray(sign)) == 0 and float(np.asarray(logdet)) == -np.inf


# ------------------------------------------------------------------------------------------- derivatives


def _losses(xp: Any, la: Any, solve_triangular: Callable[..., Any], w: np.ndarray) -> dict[str, Callable[[Any], Any]]:
    """Real losses of a complex 3x3 ``x``, written once for tnp and jax.numpy. Hermitian operands are built from
    ``x`` (JAX symmetrizes where tensorstage reads one triangle: equal on Hermitian input); the eigenvector loss
    is phase invariant (JAX's eigenvectors have arbitrary phases)."""
    n = w.shape[-1]

    def herm(x: Any) -> Any:
        return x @ xp.conj(xp.swapaxes(x, -1, -2)) + n * xp.eye(n, dtype=w.dtype)

    def projector(v: Any) -> Any:
        return v[:, :2] @ xp.conj(xp.swapaxes(v[:, :2], -1, -2))

    return {
        "cholesky": lambda x: xp.sum(xp.abs(la.cholesky(herm(x)) * w) ** 2 + xp.real(la.cholesky(herm(x), upper=True))),
        "eigh": lambda x: xp.sum(xp.real(projector(la.eigh(herm(x))[1]) * w)) + xp.sum(la.eigvalsh(herm(x)) ** 2),
        "qr": lambda x: xp.sum(xp.real(la.qr(x)[0] * w) + xp.imag(la.qr(x)[1] * w)) + xp.sum(xp.abs(la.qr(x[:, :2])[0] - w[:, :2]) ** 2),
        "solve": lambda x: xp.sum(xp.real(la.solve(x, w) * w)),
        "det": lambda x: xp.real(la.det(x) * w[0, 0]),
        "slogdet": lambda x: xp.imag(la.slogdet(x)[0] * w[0, 1]) + la.slogdet(x)[1],
        "solve_triangular": lambda x: xp.sum(xp.abs(solve_triangular(x, w, lower=True, trans="C")) ** 2),
    }


EPS = 1e-6


def _check_directional(losses: dict[str, Callable[[Any], Any]], x: np.ndarray, directions: list[np.ndarray]) -> Any:
    """For every loss: ``grad`` (JAX's convention: the conjugate of df/dx + i df/dy, so ``Re(Σ grad · t)`` is the
    derivative along ``t``), ``jvp`` and central differences agree along every direction. Returns the gradients."""
    fs = list(losses.values())

    @ts.program
    def run(x: Any, ts_: Any) -> Any:
        return [ts.grad(f)(x) for f in fs], [ts.jvp(lambda y: [f(y) for f in fs], (x,), (t,))[1] for t in ts_]

    values = ts.program(lambda x: [f(x) for f in fs])
    grads, tangents = run(x, directions)
    for t, tangent in zip(directions, tangents):
        plus, minus = values(x + EPS * t), values(x - EPS * t)
        for k, name in enumerate(losses):
            numeric = (float(plus[k]) - float(minus[k])) / (2 * EPS)
            assert float(np.real(np.sum(np.asarray(grads[k]) * t))) == pytest.approx(numeric, rel=1e-6, abs=1e-7), name
            assert float(tangent[k]) == pytest.approx(numeric, rel=1e-6, abs=1e-7), name
    return grads


def test_gradients_match_jax_and_finite_differences(rng: np.random.Generator) -> None:
    x, w = general(rng, 3, 3), cnormal(rng, 3, 3)
    grads = _check_directional(_losses(tnp, LA, LA.solve_triangular, w), x, [cnormal(rng, 3, 3)])
    if not HAS_JAX:
        return
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    with jax.enable_x64(True):
        losses = _losses(jnp, jnp.linalg, jsl.solve_triangular, w)
        want = jax.jit(lambda x: [jax.grad(f)(x) for f in losses.values()])(jnp.asarray(x))
    for name, got, expected in zip(losses, grads, want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-9, atol=1e-10, err_msg=name)


def test_derivatives_on_xla_expansions(rng: np.random.Generator) -> None:
    """det's gradient, the cofactor matrix, whose lowering on XLA's expansions is QR-based (``adj(A)`` through
    ``Qᴴ``); the other derivatives are lowered from the same primitives that the values test checks there."""
    x, w = general(rng, 3, 3), cnormal(rng, 3, 3)
    losses = {k: f for k, f in _losses(tnp, LA, LA.solve_triangular, w).items() if k == "det"}
    lapack.set_enabled(False)
    try:
        _check_directional(losses, x, [cnormal(rng, 3, 3)])
    finally:
        lapack.set_enabled(None)


def test_eigenvector_phase_and_one_triangle_derivatives(rng: np.random.Generator) -> None:
    """Losses that see the eigenvectors' phase (fixed by the largest component: its tangent has an imaginary
    diagonal term) and read one triangle of a non-Hermitian operand (the diagonal's imaginary part ignored), along
    real and imaginary directions."""
    x, w = general(rng, 4, 4) + np.diag(np.arange(4.0) * 3), cnormal(rng, 4, 4)
    losses = {
        "eigh phase": lambda x: tnp.sum(tnp.imag(LA.eigh(x, UPLO="U")[1] * w)) + tnp.sum(LA.eigvalsh(x) ** 2),
        "cholesky": lambda x: tnp.sum(tnp.real(LA.cholesky(x + 8 * tnp.eye(4, dtype=ts.c128)) * w)),
    }
    _check_directional(losses, x, [np.real(cnormal(rng, 4, 4)) + 0j, 1j * np.real(cnormal(rng, 4, 4))])


# --------------------------------------------------------------------------------------------------- vmap


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    g, h = general(rng, 3, 3, 3).astype(np.complex64), hermitian(rng, 3, 3, 3).astype(np.complex64)
    b = cnormal(rng, 3, 2).astype(np.complex64)

    def f(g: Any, h: Any, b: Any) -> Any:
        return (LA.cholesky(h), *LA.eigh(h), *LA.qr(g), LA.solve(g, b), LA.slogdet(g)[0], LA.slogdet(g)[1],
                LA.det(g), LA.solve_triangular(g, b, trans="C"), ts.grad(lambda y: LA.slogdet(y)[1])(g))

    batched = ts.vmap(f, in_axes=(0, 0, None))(g, h, b)
    single = ts.program(f)
    for i in range(3):
        for k, (got, want) in enumerate(zip(batched, single(g[i], h[i], b))):
            np.testing.assert_allclose(np.asarray(got)[i], np.asarray(want), rtol=1e-5, atol=1e-5, err_msg=str(k))


# ------------------------------------------------------------------------------------------------- errors


def test_bad_complex_inputs_raise_errors_naming_the_op() -> None:
    z = np.ones((3, 4), np.complex64)
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: LA.cholesky(z), ts.ShapeError, r"cholesky.*c64\[3, 4\]"),
        (lambda: LA.eigh(z), ts.ShapeError, r"eigh.*c64\[3, 4\]"),
        (lambda: LA.inv(z), ts.ShapeError, r"inv.*c64\[3, 4\]"),
        (lambda: LA.slogdet(z), ts.ShapeError, r"slogdet.*c64\[3, 4\]"),
        (lambda: LA.solve(np.eye(3, dtype=np.complex64), np.ones(3, np.complex128)), ts.DTypeError, r"solve.*c64.*c128"),
        (lambda: LA.solve_triangular(np.eye(3, dtype=np.complex64), np.ones(3, np.float32)), ts.DTypeError,
         r"solve_triangular.*c64.*f32"),
        (lambda: LA.qr(np.ones((2, 2), np.int32)), ts.DTypeError, r"qr.*i32"),
    ]
    for call, error, pattern in cases:
        with pytest.raises(error, match=pattern) as info:
            call()
        assert "test_linalg_complex.py:" in str(info.value), str(info.value)
