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
