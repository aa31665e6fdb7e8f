"""Second derivatives through custom_vjp rules that call their own function (``odeint``'s adjoint solves with
``odeint``): the inner call keeps its rule, staged when it is differentiated, as JAX nests the adjoint.

Checked against central differences of the first derivative (float64, solver rtol 1e-10) and, for a rule that
is deliberately not the function's derivative, against what only the custom rules give at each order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.experimental.ode import odeint

T = np.array([0.0, 0.4, 1.0])
TOL = 1e-10


def _loss(k: Any, y0: Any) -> Any:
    ys = odeint(lambda y, t, k: -k * y * y + tnp.sin(t) * y[::-1], y0, T, k, rtol=TOL, atol=TOL)
    return tnp.sum(ys**2) + tnp.sum(ys[-1] * y0)


def test_odeint_second_derivatives_match_finite_differences() -> None:
    k, y0 = np.float64(0.7), np.array([1.0, 0.5])
    first = ts.grad(_loss, argnums=(0, 1))

    def second(k: Any, y0: Any) -> Any:
        d2k = ts.grad(ts.grad(_loss))(k, y0)
        hess_y0 = ts.jacrev(ts.grad(_loss, argnums=1), argnums=1)(k, y0)  # jacrev of jacrev: reverse mode only
        return d2k, hess_y0

    d2k, hess_y0 = (np.asarray(v) for v in ts.program(second)(k, y0))
    h = 1e-5
    fd_k = (np.asarray(first(k + h, y0)[0]) - np.asarray(first(k - h, y0)[0])) / (2 * h)
    steps = np.eye(2) * h
    fd_y0 = np.stack([(np.asarray(first(k, y0 + e)[1]) - np.asarray(first(k, y0 - e)[1])) / (2 * h) for e in steps])
    # The finite differences' own error (~h² and TOL / h) bounds the agreement.
    np.testing.assert_allclose(d2k, fd_k, rtol=1e-6)
    np.testing.assert_allclose(hess_y0, fd_y0.T, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hess_y0, hess_y0.T, rtol=1e-6)  # a Hessian is symmetric


@ts.custom_vjp
def _twice_exp(x: Any) -> Any:
    return tnp.exp(x)


def _twice_exp_fwd(x: Any) -> Any:
    return _twice_exp(x), x


def _twice_exp_bwd(x: Any, ct: Any) -> Any:
    return (2.0 * ct * _twice_exp(x),)  # twice the true derivative, so each order that uses the rule doubles


_twice_exp.defvjp(_twice_exp_fwd, _twice_exp_bwd)


def test_each_order_uses_the_rule_and_batches() -> None:
    def orders(x: Any) -> Any:
        g1 = ts.grad(_twice_exp)
        g2 = ts.grad(g1)
        g3 = ts.grad(g2)
        return g1(x), g2(x), g3(x), ts.vmap(g2)(tnp.stack([x, x + 1.0])), ts.grad(lambda v: ts.vmap(g1)(v).sum())(
            tnp.stack([x, x + 1.0]))

    x = 0.3
    g1, g2, g3, batched, through_vmap = (np.asarray(v) for v in ts.program(orders)(np.float64(x)))
    np.testing.assert_allclose([g1, g2, g3], [2 * np.exp(x), 4 * np.exp(x), 8 * np.exp(x)], rtol=1e-14)
    np.testing.assert_allclose(batched, 4 * np.exp([x, x + 1]), rtol=1e-14)
    np.testing.assert_allclose(through_vmap, 4 * np.exp([x, x + 1]), rtol=1e-14)


def test_rules_closing_over_staged_values_differentiate_the_function_inside() -> None:
    """A call in its own rules whose rules read a staged value from outside cannot carry them (the call has no
    operand for it): there the function itself is differentiated, as before rules nested."""

    def second(x: Any, w: Any) -> Any:
        @ts.custom_vjp
        def scaled(v: Any) -> Any:
            return w * tnp.exp(v)

        scaled.defvjp(lambda v: (scaled(v), v), lambda v, ct: (2.0 * ct * scaled(v),))
        return ts.grad(ts.grad(scaled))(x)

    got = np.asarray(ts.program(second)(np.float64(0.3), np.float64(1.5)))
    np.testing.assert_allclose(got, 2 * 1.5 * np.exp(0.3), rtol=1e-14)


def test_forward_mode_is_still_refused() -> None:
    with pytest.raises(ts.TransformError, match="custom_vjp"):
        ts.program(ts.jacfwd(ts.grad(_twice_exp))).stage(np.float64(0.5))
