"""ts.experimental.ode.odeint (JAX's dopri5 with adjoint gradients) against closed forms (exponential decay, the
harmonic oscillator), SciPy's DOP853 at rtol 1e-12 (Lotka–Volterra), finite differences and jax; pytree states,
values closed over, vmap against a loop, errors.

Deliberate differences from JAX (see the module docstring): func's output types are checked, Python floats in
args take the state's dtype, a decreasing output time reads NaN (concrete t: ValueError), an empty state returns
zeros without stepping.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

odeint: Any = ts.experimental.ode.odeint
T = np.linspace(0.0, 2.0, 5)
RNG = np.random.default_rng(7)
Y0 = {"a": RNG.uniform(0.5, 1.5, 2), "b": RNG.uniform(-1.0, 1.0, (3, 2))}
LV = np.array([1.1, 0.4, 0.4, 0.1])  # prey growth, predation, predator death, predator growth
Z0 = np.array([10.0, 5.0])  # prey, predators
W = np.float64(1.3)  # a NumPy scalar: ``w ** 2`` of a Python float would be a float32 tensor
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")


def decay(y: Any, t: Any, k: Any) -> Any:
    return ts.tree.map(lambda v: -k * v, y)


def oscillator(y: Any, t: Any, w: Any) -> Any:
    return tnp.stack([y[1], -(w**2) * y[0]])


def lotka_volterra(y: Any, t: Any, p: Any) -> Any:
    return tnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def oscillator_exact(y0: np.ndarray, w: float, t: np.ndarray) -> np.ndarray:
    c, s = np.cos(w * t), np.sin(w * t)
    return np.stack([y0[0] * c + y0[1] / w * s, -w * y0[0] * s + y0[1] * c], axis=1)


@ts.program
def solve_all(y0: Any, t: Any, k: Any, w: Any, p: Any, z0: Any) -> Any:
    osc = odeint(lambda y, s: oscillator(y, s, w), np.array([1.0, 0.5]), t)  # w closed over
    lv = odeint(lotka_volterra, z0, t, p)
    lv32 = odeint(lotka_volterra, z0.astype(tnp.float32), t.astype(tnp.float32), p.astype(tnp.float32), rtol=1e-6,
                  atol=1e-6)
    return odeint(decay, y0, t, k), osc, lv, lv32


def lotka_volterra_reference(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    from scipy.integrate import solve_ivp

    rhs = lambda s, y: [p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]]  # noqa: E731
    return solve_ivp(rhs, (t[0], t[-1]), [10.0, 5.0], method="DOP853", t_eval=t, rtol=1e-12, atol=1e-12).y.T


def test_values_against_closed_forms_and_scipy() -> None:
    ys, osc, lv, lv32 = solve_all(Y0, T, 0.7, W, LV, Z0)
    for name in Y0:
        want = Y0[name][None] * np.exp(-0.7 * T).reshape(-1, *[1] * Y0[name].ndim)
        assert ys[name].shape == (5, *Y0[name].shape) and ys[name].dtype == np.float64
        np.testing.assert_allclose(np.asarray(ys[name]), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(osc), oscillator_exact(np.array([1.0, 0.5]), W, T), rtol=1e-7, atol=1e-8)
    reference = lotka_volterra_reference(LV, T)
    np.testing.assert_allclose(np.asarray(lv), reference, rtol=1e-6)
    assert lv32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(lv32), reference, rtol=2e-4)
    # On concrete arrays (staged, compiled and run), and with one output time.
    eager = odeint(lotka_volterra, Z0, T[:3], LV)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(lv)[:3], rtol=1e-12)


@ts.program
def gradients(y0: Any, k: Any, t: Any, c: Any, p: Any) -> Any:
    decay_grads = ts.grad(lambda y, kk, tt: tnp.sum(odeint(decay, y, tt, kk)[-1]), argnums=(0, 1, 2))(y0, k, t)

    def lv_loss(cc: Any, q: Any) -> Any:  # c scales the dynamics through a closure, p is an argument
        return tnp.sum(odeint(lambda y, s, qq: cc * lotka_volterra(y, s, qq), Z0, t, q)[:, 1])

    return decay_grads, ts.grad(lv_loss, argnums=(0, 1))(c, p)


def test_gradients_against_closed_form_and_finite_differences() -> None:
    y0 = np.array([1.0, 0.5])
    (g_y0, g_k, g_t), (g_c, g_p) = gradients(y0, 0.7, T, np.float64(1.0), LV)
    end = np.exp(-0.7 * T[-1])
    np.testing.assert_allclose(np.asarray(g_y0), [end, end], rtol=1e-7)
    np.testing.assert_allclose(float(g_k), -T[-1] * end * y0.sum(), rtol=1e-6)
    # Only the last time matters; moving t[0] later shortens the whole interval.
    np.testing.assert_allclose(np.asarray(g_t), [0.7 * end * y0.sum(), 0, 0, 0, -0.7 * end * y0.sum()], atol=1e-7)
    # Against central differences of the solution: scaling the dynamics by c is running to time c·t.
    h = 1e-5
    lv = lambda q, tt=T: np.sum(np.asarray(solve_all(Y0, tt, 0.7, W, q, Z0)[2])[:, 1])  # noqa: E731
    np.testing.assert_allclose(float(g_c), (lv(LV, T * (1 + h)) - lv(LV, T * (1 - h))) / (2 * h), rtol=1e-5)
    for i in range(4):
        step = h * np.eye(4)[i]
        np.testing.assert_allclose(float(g_p[i]), (lv(LV + step) - lv(LV - step)) / (2 * h), rtol=1e-5)


def test_vmap_over_initial_states() -> None:
    starts = np.array([[10.0, 5.0], [6.0, 2.0], [3.0, 8.0]])
    batched = ts.vmap(lambda z: odeint(lotka_volterra, z, T, LV))(starts)
    assert batched.shape == (3, 5, 2)
    for i, start in enumerate(starts):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(solve_all(Y0, T, 0.7, W, LV, start)[2]),
                                   rtol=1e-12)


@needs_jax
def test_matches_jax() -> None:
    import jax
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint

    def rhs(y: Any, t: Any, p: Any) -> Any:
        return jnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])

    def loss(c: Any, p: Any) -> Any:
        ys = jax_odeint(lambda y, t, q: c * rhs(y, t, q), jnp.asarray(Z0), jnp.asarray(T), p)
        return jnp.sum(ys[:, 1]), ys

    with jax.enable_x64(True):
        (_, want), want_grad = jax.jit(jax.value_and_grad(loss, (0, 1), has_aux=True))(1.0, jnp.asarray(LV))
    np.testing.assert_allclose(np.asarray(solve_all(Y0, T, 0.7, W, LV, Z0)[2]), np.asarray(want), rtol=1e-12)
    got = gradients(Y0["a"], 0.7, T, np.float64(1.0), LV)[1]
    for g, w in zip(got, want_grad):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9)


def test_edge_cases() -> None:
    empty = odeint(decay, {"e": np.zeros((0, 3))}, T, 0.5)
    assert empty["e"].shape == (5, 0, 3)
    with pytest.raises(ValueError, match="t must be increasing"):
        odeint(decay, np.ones(2), T[::-1], 0.5)
    # Times the steps do not reach within mxstep read NaN (JAX extrapolates the last step); t may be a list.
    short = np.asarray(odeint(decay, np.ones(2), [0.0, 1.0, 2.0], 0.5, mxstep=2))
    np.testing.assert_allclose(short[0], 1.0)
    assert np.isnan(short[1:]).all()
    # Reverse mode only (grad of grad: tests/test_ode_grad_grad.py), as the module docstring says: a clear error
    # while staging.
    loss = lambda k: tnp.sum(odeint(decay, np.ones(2), T, k))  # noqa: E731
    with pytest.raises(ts.TransformError, match="custom_vjp"):
        ts.program(ts.jacfwd(loss)).stage(np.float64(0.5))


def test_errors() -> None:
    t = ts.Spec((5,), np.float64)
    y = ts.Spec((2,), np.float64)
    cases = [
        (lambda y0, tt: odeint(lambda v, s: v[:1], y0, tt), [y, t], ts.ShapeError,
         ["odeint", "func (<lambda>)", "f64[1]", "f64[2]"]),
        (lambda y0, tt: odeint(lambda v, s: (v, v), y0, tt), [y, t], ts.ShapeError, ["odeint", "structure"]),
        (lambda y0, tt: odeint(decay, y0, tt.astype(np.int32), 0.5), [y, t], ts.DTypeError,
         ["odeint", "t must be an array of floats", "i32[5]"]),
        (lambda y0, tt: odeint(decay, y0, tt[None], 0.5), [y, t], ts.ShapeError, ["odeint", "1-D", "f64[1, 5]"]),
        (lambda y0, tt: odeint(decay, y0.astype(np.int32), tt, 0.5), [y, t], ts.DTypeError, ["odeint", "i32[2]"]),
        (lambda y0, tt: odeint(decay, y0, tt, "fast"), [y, t], TypeError, ["odeint", "*args", "'fast'"]),
        (lambda y0, tt: odeint(decay, y0, tt, 0.5, rtol=-1.0), [y, t], ValueError, ["odeint", "rtol", "-1.0"]),
    ]
    check_staging_errors(cases, "test_ode.py")
