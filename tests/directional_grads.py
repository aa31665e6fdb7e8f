"""A batched check of many functions' gradients against central finite differences in f64, in one program."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

EPS = 1e-6


def assert_grads_match_finite_differences(cases: Sequence[Callable[[Any], Any]], rng: np.random.Generator,
                                          shape: tuple[int, ...] = (2, 3, 4)) -> None:
    """For each case ``c``, the loss ``sum(sin(c(x)) * w)`` (random ``w``): its gradient along a random direction
    ``t`` equals the central difference quotient. One program stages every case, so one compile serves all."""
    x = rng.standard_normal(shape)
    t = rng.standard_normal(shape)
    weights = [rng.standard_normal(np.shape(np.asarray(ts.program(c)(x)))) for c in cases]

    def loss(case: Any, w: Any) -> Any:
        return lambda x: tnp.sum(tnp.sin(case(x)) * w)

    @ts.program
    def run(x: Any, t: Any, ws: Any) -> Any:
        fs = [loss(c, w) for c, w in zip(cases, ws)]
        return [(f(x + EPS * t), f(x - EPS * t), ts.grad(f)(x)) for f in fs]

    for k, (plus, minus, grad) in enumerate(run(x, t, weights)):
        expected = (float(plus) - float(minus)) / (2 * EPS)
        assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), k


def assert_pair_grads_match(loss: Callable[[Any, Any, Any], Any], x: np.ndarray, y: np.ndarray, *, rtol: float,
                            atol: float, forward_tol: float, jax_atol: float) -> None:
    """``loss(a, b, np_)``, written once for ``tnp`` and for NumPy: its ``grad`` with respect to both vectors
    equals NumPy's central differences coordinate by coordinate (within ``rtol``/``atol``), and ``jacfwd`` equals ``grad``
    (within ``forward_tol``); with jax installed, ``jax.grad`` of the same code agrees too (f64, in a scope; rtol
    1e-10 and ``jax_atol``)."""
    grads = ts.grad(lambda a, b: loss(a, b, tnp), argnums=(0, 1))(x, y)
    forward = ts.jacfwd(lambda a, b: loss(a, b, tnp), argnums=(0, 1))(x, y)
    for k, (g, f) in enumerate(zip(grads, forward)):
        numeric = np.zeros(np.size((x, y)[k]))
        for i in range(numeric.size):
            moved = [[x, y], [x, y]]
            moved[0][k] = moved[0][k] + EPS * np.eye(numeric.size)[i]
            moved[1][k] = moved[1][k] - EPS * np.eye(numeric.size)[i]
            numeric[i] = (loss(*moved[0], np) - loss(*moved[1], np)) / (2 * EPS)
        np.testing.assert_allclose(np.asarray(g), numeric, rtol=rtol, atol=atol)
        np.testing.assert_allclose(np.asarray(f), np.asarray(g), rtol=forward_tol, atol=forward_tol)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return
    with jax.enable_x64(True):  # a scope: jax's global setting is left to the other tests
        want = jax.grad(lambda a, b: loss(a, b, jnp), argnums=(0, 1))(x, y)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=jax_atol)
