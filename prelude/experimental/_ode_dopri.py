"""The Dormand–Prince (dopri5) pieces of ``odeint``, as JAX's ``jax.experimental.ode`` writes them: the Runge–Kutta
step with its embedded error estimate, the 4th-order dense-output polynomial, the initial and adaptive step sizes
(Hairer, Nørsett and Wanner, *Solving Ordinary Differential Equations I*, Sec. II.4), and the forward solve: a
``scan`` over the output times whose body is a ``while_loop`` of steps.

Every function works on the flat state: ``y`` is a 1-D vector, ``t`` a scalar of the time dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...control_flow import fori_loop, scan, while_loop
from .. import numpy as tnp
from ..numpy.linalg_norms import norm

Value = Any  # a staged tensor
Dynamics = Callable[[Value, Value], Value]  # (y, t) -> dy/dt, flat

_ALPHA = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0])
_BETA = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
])
_C_SOL = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_C_ERROR = np.array([
    35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720, -2187 / 6784 - -12231 / 42400,
    11 / 84 - 649 / 6300, -1.0 / 60.0,
])
_C_MID = np.array([
    6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2,
])


def _table(values: np.ndarray[Any, Any], like: Value) -> Value:
    return tnp.asarray(values.astype(np.dtype(like.dtype)))


def _abs2(x: Value) -> Value:
    return tnp.real(x) ** 2 + tnp.imag(x) ** 2 if tnp.iscomplexobj(x) else x**2


def runge_kutta_step(func: Dynamics, y0: Value, f0: Value, t0: Value, dt: Value) -> tuple[Value, Value, Value, Value]:
    """One dopri5 step of ``dt`` from ``(t0, y0)`` (where ``func`` is ``f0``): ``(y1, f1, error estimate, stages)``.
    The stages run in a loop so ``func`` is staged once."""
    alpha, beta = _table(_ALPHA, dt), _table(_BETA, f0)
    h = dt.astype(f0.dtype)

    def stage(i: Value, k: Value) -> Value:
        return k.at[i, :].set(func(y0 + h * tnp.dot(beta[i - 1, :], k), t0 + dt * alpha[i - 1]))

    k = fori_loop(1, 7, stage, tnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0))
    return y0 + h * tnp.dot(_table(_C_SOL, f0), k), k[-1], h * tnp.dot(_table(_C_ERROR, f0), k), k


def interpolation_coefficients(y0: Value, y1: Value, k: Value, dt: Value) -> Value:
    """The 4th-order polynomial in the step's relative time through the step's ends and its midpoint estimate,
    with the ends' slopes: coefficients ``(5, n)``, highest power first."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * tnp.dot(_table(_C_MID, y0), k)
    dy0, dy1 = h * k[0], h * k[-1]
    return tnp.stack([
        -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid,
        5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid,
        -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid,
        dy0,
        y0,
    ])


def _horner(coefficients: Value, s: Value) -> Value:
    out = coefficients[0]
    for row in range(1, coefficients.shape[0]):
        out = out * s + coefficients[row]
    return out


def initial_step_size(func: Dynamics, t0: Value, y0: Value, order: int, rtol: float, atol: float, f0: Value) -> Value:
    """Hairer, Nørsett and Wanner's starting step: small enough for an explicit Euler step of ``order`` to be
    accurate to the tolerances."""
    scale = (atol + tnp.abs(y0) * rtol).astype(y0.dtype)  # complex for a complex state: tensorstage never promotes
    d0, d1 = norm(y0 / scale), norm(f0 / scale)
    h0 = tnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1).astype(t0.dtype)
    f1 = func(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = (norm((f1 - f0) / scale) / h0.astype(d0.dtype)).astype(t0.dtype)
    d1 = d1.astype(t0.dtype)
    h1 = tnp.where((d1 <= 1e-15) & (d2 <= 1e-15), tnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / tnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return tnp.minimum(100.0 * h0, h1)


def _mean_error_ratio(error: Value, rtol: float, atol: float, y0: Value, y1: Value) -> Value:
    tolerance = atol + rtol * tnp.maximum(tnp.abs(y0), tnp.abs(y1))
    return tnp.sqrt(tnp.mean(_abs2(error / tolerance.astype(error.dtype))))


def _optimal_step_size(last_step: Value, ratio: Value, safety: float = 0.9, ifactor: float = 10.0,
                       dfactor: float = 0.2, order: float = 5.0) -> Value:
    """The next step: grown by at most ``ifactor``, shrunk by at most ``dfactor`` after a rejected step."""
    ratio = ratio.astype(last_step.dtype)
    dfactor_now = tnp.where(ratio < 1, tnp.ones_like(ratio), dfactor)
    factor = tnp.minimum(ifactor, tnp.maximum(ratio ** (-1.0 / order) * safety, dfactor_now))
    return tnp.where(ratio == 0, last_step * ifactor, last_step * factor)


def solve(func: Dynamics, y0: Value, times: Value, rtol: float, atol: float, mxstep: float, hmax: float) -> Value:
    """The solution at each of ``times`` (``(len(times), n)``), stepping adaptively and reading each time off the
    dense output of the step that covers it. A time below the previous one, or one the steps did not reach within
    ``mxstep``, reads NaN."""
    t_first = times[0]

    def advance(carry: list[Value], target: Value) -> tuple[list[Value], Value]:
        def more(state: list[Value]) -> Value:
            i, _, _, t, dt, _, _ = state
            going = (t < target) & (dt > 0)
            return going if math.isinf(mxstep) else going & (i < int(mxstep))

        def step(state: list[Value]) -> list[Value]:
            i, y, f, t, dt, last_t, coefficients = state
            next_y, next_f, error, k = runge_kutta_step(func, y, f, t, dt)
            ratio = _mean_error_ratio(error, rtol, atol, y, next_y)
            new_coefficients = interpolation_coefficients(y, next_y, k, dt)
            next_dt = tnp.clip(_optimal_step_size(dt, ratio), 0.0, hmax)
            keep = ratio <= 1.0  # the step is accepted; either way the step size adapts
            new = [next_y, next_f, t + dt, t, new_coefficients]
            old = [y, f, t, last_t, coefficients]
            return [i + 1, *(tnp.where(keep, a, b) for a, b in zip(new[:3], old[:3])), next_dt,
                    *(tnp.where(keep, a, b) for a, b in zip(new[3:], old[3:]))]

        state = while_loop(more, step, [tnp.asarray(np.int32(0)), *carry[:-1]])
        _, _, _, t, _, last_t, coefficients = state
        s = ((target - last_t) / (t - last_t)).astype(coefficients.dtype)
        # NaN where the steps stopped short of the target (mxstep reached, or the step size underflowed or went
        # NaN), where JAX reads the last step's polynomial far outside it.
        valid = (t >= target) & (target >= carry[-1])
        y_target = tnp.where(valid, _horner(coefficients, s), tnp.nan)
        return [*state[1:], target], y_target

    f0 = func(y0, t_first)
    dt = tnp.clip(initial_step_size(func, t_first, y0, 4, rtol, atol, f0), 0.0, hmax)
    init = [y0, f0, t_first, dt, t_first, tnp.stack([y0] * 5), t_first]
    _, ys = scan(advance, init, times[1:])
    return tnp.concatenate([y0[None], ys])
