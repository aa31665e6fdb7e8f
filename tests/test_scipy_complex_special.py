"""ts.scipy.special's wofz (the Faddeeva function) and sph_harm_y (spherical harmonics) against SciPy float64: one
staged program per dtype over seeded grids (wofz: every region, its switches, log-spaced near 0 and the real axis,
up to 1e3 and beyond; sph_harm_y: n up to 40), SciPy's values at the edges, 50-digit references where SciPy is
less accurate, holomorphic derivatives against closed forms and jax, vmap against a loop, dtypes and refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as ss

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import special as tsp

INV_SQRT_PI = 1 / np.sqrt(np.pi)


def _wofz_points(rng: np.random.Generator) -> np.ndarray:
    """Every region (the sums: |y| < 4, |x| <= 28; the fraction beyond, and 2^60), both half-planes and signs."""
    count = 400

    def signs(k: int) -> np.ndarray:
        return rng.choice([-1.0, 1.0], k)

    parts = [
        (rng.uniform(-8, 8, count), rng.uniform(-8, 8, count)),
        (rng.uniform(-30, 30, count), rng.uniform(-30, 30, count)),
        (rng.uniform(-1e3, 1e3, count), rng.uniform(-1e3, 1e3, count)),
        (rng.uniform(-40, 40, count), signs(count) * 10 ** rng.uniform(-300, 0, count)),  # near the real axis
        (signs(count) * 10 ** rng.uniform(-300, 0, count), signs(count) * 10 ** rng.uniform(-300, 0, count)),
        (signs(count) * 10 ** rng.uniform(-300, 0, count), rng.uniform(-8, 8, count)),  # near the imaginary axis
        (signs(count) * 10 ** rng.uniform(-3, 250, count), 10 ** rng.uniform(-3, 250, count)),  # far, upper
        (np.array([28.0, 28.01, 6.5, 6.49, 3.0, 1.0, 2.0**60, 2.0**61, 5.0, 0.0]),
         np.array([3.99, 0.0, 4.0, -4.0, -4.0, 7.0, 1.0, 0.0, 0.0, 2.5])),  # the switches
    ]
    return np.concatenate([x + 1j * y for x, y in parts])


def _wofz_bound(z: np.ndarray, want: np.ndarray, rtol: float, eps: float) -> np.ndarray:
    """``rtol |w|``, and below the axis ``2|z|² eps |2 exp(-z²)|`` more: rounding ``x² - y²`` and ``2xy`` in
    ``exp(-z²)`` (the function's own conditioning there, SciPy's error too)."""
    with np.errstate(all="ignore"):
        gaussian = np.where(z.imag < 0, np.abs(2 * np.exp(-z * z)), 0.0)
        conditioned = np.where(gaussian > 0, 4 * eps * (1 + 2 * np.abs(z) ** 2) * gaussian, 0.0)
    return rtol * np.abs(want) + conditioned


# (z, w(z)) to 50 digits (mpmath); SciPy is off by 1e-14 .. 4e-14 at the first four
WOFZ_REFERENCE = [
    (9.784681547501815 + 1.048337079471769e-223j, 2.634203659287217e-42 + 0.05796647174825794j),
    (9.507415785869766 + 4.683968512915273e-30j, 2.9734858380040665e-32 + 0.05967591044898853j),
    (5.84919789430343 + 5.924098101777256j, 0.04855512591729212 + 0.04725514400623268j),
    (5.732361490178448 - 1.69012621173467j, -0.027758164448168008 + 0.0914179526169974j),
    (0.0007850626197587612 + 5.447298537074116j, 0.10190868988577781 + 1.422928413973463e-05j),
    (27.959916268345637 + 0.09416044774581202j, 6.808509942050832e-05 + 0.02019121576214118j),
    (6 + 0.5j, 0.008124885586462518 + 0.09468791486012625j),
    (1.1164158699782152 + 6.851600187763913j, 0.07948591179653594 + 0.01269536245891573j),
    (-3 + 1e-09j, 0.00012340988265141468 - 0.20115731703685993j),
]
EDGE_PARTS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, -1e300, 30.0, -7.0]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_wofz_matches_scipy(dtype: Any, rng: np.random.Generator) -> None:
    """Seeded grids (relative to |w|, and the conditioning below the axis), SciPy's values at the edges (NaN, ±inf,
    ±0, and the sign of a zero imaginary part), and 50-digit references where SciPy is less accurate."""
    grid = _wofz_points(rng)
    exact_z, exact_w = (np.array(v) for v in zip(*WOFZ_REFERENCE))
    with np.errstate(over="ignore"):
        edges = np.array([complex(a, b) for a in EDGE_PARTS for b in EDGE_PARTS]).astype(dtype)
    z = np.concatenate([grid.astype(dtype), edges, exact_z.astype(dtype)])
    everything = np.asarray(ts.program(tsp.wofz)(z))
    assert everything.dtype == dtype and everything.shape == z.shape
    got, got_edges, got_exact = np.split(everything, [grid.size, grid.size + edges.size])
    with np.errstate(all="ignore"):
        want = ss.wofz(z[: grid.size].astype(np.complex128))
        want_edges = ss.wofz(edges.astype(np.complex128)).astype(dtype)
    real = np.finfo(np.float64 if dtype == np.complex128 else np.float32)
    # results beyond the dtype's range are inf (SciPy's, where it overflows too); subnormal parts are flushed to 0
    overflow = np.abs(want) > real.max
    assert np.all(np.isinf(got[overflow])), z[: grid.size][overflow][~np.isinf(got[overflow])]
    check = ~overflow & (np.abs(want) > 1e6 * real.tiny)
    # SciPy's own error reaches 4e-14 near the real axis at 6 < |x| < 10 (the references below)
    bound = _wofz_bound(z[: grid.size][check].astype(np.complex128), want[check],
                        5e-14 if dtype == np.complex128 else 1e-6, float(real.eps))
    error = np.abs(got[check] - want[check])
    assert np.all(error <= bound), (z[: grid.size][check][error > bound], (error / bound).max())
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(got_edges), part(want_edges), rtol=1e-6, atol=0)
    zeros = want_edges.imag == 0  # the sign of a zero imaginary part is SciPy's (w(±0 + i y) = erfcx(y) ± 0i)
    np.testing.assert_array_equal(np.signbit(got_edges.imag[zeros]), np.signbit(want_edges.imag[zeros]))
    if dtype == np.complex128:
        np.testing.assert_allclose(got_exact, exact_w, rtol=1e-15, atol=0)
        np.testing.assert_allclose(got_exact.real, exact_w.real, rtol=1e-14, atol=0)  # the tiny real parts too
    else:
        np.testing.assert_allclose(got_exact, exact_w, rtol=1e-6, atol=0)


def test_wofz_dtypes_and_refusals() -> None:
    """JAX's rule: f32 (f16, bf16) and c64 give c64, f64 and c128 give c128, a Python number c64 (staged only)."""
    cases = [(np.float64, np.complex128), (np.float32, np.complex64), (np.float16, np.complex64),
             (np.complex64, np.complex64), (np.complex128, np.complex128)]
    staged = ts.program(lambda *v: [tsp.wofz(a) for a in v] + [tsp.wofz(1.5), tsp.wofz(1 + 2j)]).stage(
        *(np.zeros(2, dtype) for dtype, _ in cases))
    got = [a.dtype for a in staged.out_avals]
    assert got == [np.dtype(d) for _, d in cases] + [np.dtype(np.complex64)] * 2
    for bad in (np.array([1, 2]), np.array([True])):
        with pytest.raises(ts.DTypeError, match="wofz needs a floating-point or complex operand"):
            tsp.wofz(bad)


def test_wofz_derivatives(rng: np.random.Generator) -> None:
    """``w' = -2 z w + 2i/sqrt(pi)`` (closed form with SciPy's w where it does not cancel; the asymptotic series far
    out), ``w'' = -2 w - 2 z w'``; by grad (holomorphic), jvp, vmap and nested grad, in one program; the gradient of
    ``Re w(x)`` for a real ``x`` and of ``|w(z)|²`` (not holomorphic), and jax's."""
    moderate = np.array([0.3 + 0.2j, 2 - 1j, -3 + 0.5j, -5 - 6j, 0.5 - 4.5j, 1.5 + 3.9j, -0.7 + 4.1j])
    far = np.array([1e3 + 1e3j, 5e3 - 30j, -1e8 + 1e7j, 1e4 + 0.5j, 3e150 + 1e150j])
    z = np.concatenate([moderate, far])
    x = np.array([0.5, 1.0, 3.0, -2.0])
    grad = ts.grad(lambda v: tsp.wofz(v), holomorphic=True)

    @ts.program
    def derivatives(z: Any, x: Any) -> Any:
        return (ts.vmap(grad)(z), ts.vmap(ts.grad(grad, holomorphic=True))(z), ts.jvp(tsp.wofz, (z,), (z * 0 + 1j,)),
                ts.grad(lambda v: tnp.sum(tnp.real(tsp.wofz(v))))(x),
                ts.grad(lambda v: tnp.sum(tnp.abs(tsp.wofz(v)) ** 2))(z[:3]))

    first, second, (value, tangent), real_slope, modulus_slope = derivatives(z, x)
    w = ss.wofz(moderate)
    slope = -2 * moderate * w + 2j * INV_SQRT_PI
    count = moderate.size
    np.testing.assert_allclose(np.asarray(first)[:count], slope, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(second)[:count], -2 * w - 2 * moderate * slope, rtol=1e-12)  # (cancels)
    np.testing.assert_allclose(np.asarray(tangent), 1j * np.asarray(first), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(value), ss.wofz(z), rtol=4e-15)
    u = 1 / far**2  # w ~ (i/sqrt(pi)) (1/z + 1/(2 z³) + 3/(4 z⁵) + 15/(8 z⁷) + ...)
    np.testing.assert_allclose(np.asarray(first)[count:],
                               -1j * INV_SQRT_PI * u * (1 + 1.5 * u + 3.75 * u * u + 13.125 * u**3), rtol=3e-15)
    np.testing.assert_allclose(np.asarray(second)[count:],
                               2j * INV_SQRT_PI * u / far * (1 + 3 * u + 11.25 * u * u), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(real_slope), -2 * x * np.exp(-x * x), rtol=1e-14)  # Re w(x) = exp(-x²)
    # the conjugate of d|w|²/dx + i d|w|²/dy (JAX's convention): 2 conj(w) w'
    np.testing.assert_allclose(np.asarray(modulus_slope), 2 * np.conj(w[:3]) * slope[:3], rtol=1e-13)
    jax = pytest.importorskip("jax")
    from jax.scipy import special as js

    with jax.enable_x64(True):
        want = jax.grad(lambda v: jax.numpy.sum(jax.numpy.abs(js.wofz(v)) ** 2))(moderate[:3])
        want_holomorphic = jax.vmap(jax.grad(js.wofz, holomorphic=True))(moderate)
    np.testing.assert_allclose(np.asarray(modulus_slope), np.asarray(want), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(first)[:count], np.asarray(want_holomorphic), rtol=1e-11)


def test_wofz_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    z = (rng.uniform(-10, 10, (3, 4)) + 1j * rng.uniform(-6, 6, (3, 4))).astype(np.complex64)
    got = ts.vmap(tsp.wofz)(z)
    want = np.stack([np.asarray(tsp.wofz(row)) for row in z])
    np.testing.assert_array_equal(np.asarray(got), want)

# ------------------------------------------------------------------------------------------------ sph_harm_y


def _harmonic_points(rng: np.random.Generator, count: int) -> tuple[np.ndarray, ...]:
    n = rng.integers(-2, 41, count)
    m = rng.integers(-45, 46, count)
    theta = np.concatenate([rng.uniform(0, np.pi, count - 6), [0.0, np.pi, -0.4, 4.0, 7.0, 1e-9]])
    phi = rng.uniform(-2 * np.pi, 4 * np.pi, count)
    return n, m, theta, phi


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sph_harm_y_matches_scipy(dtype: Any, rng: np.random.Generator) -> None:
    """Eager (n_max from n) and staged (n_max given, one above n's largest); |m| > n and n < 0 give 0; theta out
    of [0, pi] is its mirror image, as SciPy's."""
    n, m, theta, phi = _harmonic_points(rng, 600)
    theta, phi = theta.astype(dtype), phi.astype(dtype)
    eager = np.asarray(tsp.sph_harm_y(n, m, theta, phi))
    staged = np.asarray(ts.program(lambda *v: tsp.sph_harm_y(*v, n_max=41))(n, m, theta, phi))
    want = ss.sph_harm_y(n, m, theta.astype(np.float64), phi.astype(np.float64))
    scale = np.sqrt((2 * np.maximum(n, 0) + 1) / (4 * np.pi))  # the size of Y_n^m: errors are absolute near zeros
    tolerance = 2e-14 if dtype == np.float64 else 2e-5
    for got in (eager, staged):
        assert got.dtype == (np.complex128 if dtype == np.float64 else np.complex64)
        assert np.all(np.abs(got - want) <= tolerance * scale), np.abs(got - want).max()
        assert np.all(got[(np.abs(m) > n) | (n < 0)] == 0)


def test_sph_harm_y_broadcasts_and_marks_degrees_above_n_max(rng: np.random.Generator) -> None:
    n = np.arange(6)[:, None]
    theta = rng.uniform(0, np.pi, 4)
    got = np.asarray(tsp.sph_harm_y(n, -1, theta[None, :], np.float64(0.7)))
    assert got.shape == (6, 4)
    np.testing.assert_allclose(got, ss.sph_harm_y(n, -1, theta, 0.7), rtol=1e-14, atol=1e-15)
    capped = np.asarray(ts.program(lambda n: tsp.sph_harm_y(n, 1, theta[:1], theta[:1], n_max=3))(np.array([2, 3, 4])))
    assert np.isnan(capped[2]) and np.all(np.isfinite(capped[:2]))  # (JAX clips n to n_max instead)
    assert np.asarray(tsp.sph_harm_y(2, 1, np.float32(0.5), np.float32(0.1))).shape == ()
    assert np.asarray(tsp.sph_harm_y(2, 1, np.float16(0.5), np.float16(0.1))).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(tsp.sph_harm_y(0, 0, np.zeros(2), np.zeros(2), n_max=0)),
                               [0.5 * INV_SQRT_PI] * 2, rtol=1e-15)


def test_sph_harm_y_gradients_and_vmap(rng: np.random.Generator) -> None:
    n, m = np.array([1, 3, 7, 12, 20]), np.array([1, -2, 3, 0, -11])
    theta, phi = np.array([0.0, 0.4, 1.2, 2.0, 3.0]), np.array([0.1, 2.0, -1.0, 0.5, 5.0])

    def real_and_imag_sum(t: Any, p: Any) -> Any:
        y = tsp.sph_harm_y(n, m, t, p, n_max=20)
        return tnp.sum(tnp.real(y) + 2 * tnp.imag(y))

    d_theta, d_phi = ts.grad(real_and_imag_sum, argnums=(0, 1))(theta, phi)
    h = 1e-6

    def reference(t: np.ndarray, p: np.ndarray) -> np.ndarray:
        y = ss.sph_harm_y(n, m, t, p)
        return y.real + 2 * y.imag

    fd_theta = (reference(theta + h, phi) - reference(np.abs(theta - h), phi)) / (2 * h)  # (one-sided at the pole)
    fd_theta[0] = (reference(theta + h, phi) - reference(theta, phi))[0] / h
    fd_phi = (reference(theta, phi + h) - reference(theta, phi - h)) / (2 * h)
    np.testing.assert_allclose(np.asarray(d_theta), fd_theta, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(d_phi), fd_phi, rtol=1e-7, atol=1e-8)
    rows = rng.uniform(0, np.pi, (3, 5))
    got = ts.vmap(lambda t: tsp.sph_harm_y(n, m, t, phi, n_max=20))(rows)
    np.testing.assert_allclose(np.asarray(got), np.stack([ss.sph_harm_y(n, m, r, phi) for r in rows]), rtol=1e-13,
                               atol=1e-15)


def test_sph_harm_y_matches_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    from jax.scipy import special as js

    n = rng.integers(0, 12, 30)
    m = rng.integers(-12, 13, 30) % (n + 1) * rng.choice([-1, 1], 30)  # |m| <= n: JAX's domain
    theta, phi = rng.uniform(0, np.pi, 30), rng.uniform(0, 2 * np.pi, 30)
    with jax.enable_x64(True):
        want = np.asarray(js.sph_harm_y(jax.numpy.asarray(n), jax.numpy.asarray(m), theta, phi, n_max=12))
    np.testing.assert_allclose(np.asarray(tsp.sph_harm_y(n, m, theta, phi, n_max=12)), want, rtol=1e-12, atol=1e-14)


def test_sph_harm_y_refusals() -> None:
    theta = np.array([0.5, 1.0])
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda: tsp.sph_harm_y(np.array([1.0, 2.0]), 0, theta, theta), ts.DTypeError, "integer degrees n"),
        (lambda: tsp.sph_harm_y(2, np.array([0.5]), theta, theta), ts.DTypeError, "integer orders m"),
        (lambda: tsp.sph_harm_y(2, 1, np.array([1, 2]), np.array([1, 2])), ts.DTypeError, "sph_harm_y needs floating-point"),
        (lambda: tsp.sph_harm_y(2, 1, theta, theta, diff_n=1), NotImplementedError, "diff_n=1"),
        (lambda: tsp.sph_harm_y(2, 1, theta, theta, n_max=1), ValueError, "above n_max=1"),
        (lambda: tsp.sph_harm_y(2, 1, theta, theta, n_max=-1), ValueError, "n_max must be >= 0"),
        (lambda: tsp.sph_harm_y(2, 1, theta, theta, n_max=True), TypeError, "n_max must be an int"),
        (lambda: ts.program(lambda n: tsp.sph_harm_y(n, 1, theta, theta))(np.array([2])), ValueError,
         "n_max .* must be given"),
    ]
    for call, error, words in cases:
        with pytest.raises(error, match=words):
            call()
    np.testing.assert_array_equal(np.asarray(tsp.sph_harm_y(2, 1, theta, theta, diff_n=0)),
                                  np.asarray(tsp.sph_harm_y(2, 1, theta, theta)))
