"""JAX's key-data names keep the key type; the extra samplers take keys and float parameters."""

from __future__ import annotations

from typing import Any

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp
from tensorstage.random import Key


class Rows(Dim): ...


DIMS = dict(Rows=3)


@ts.program
def draws(seed_key: Key, sigma: Tensor[f32, Rows]) -> Tensor[Any]:
    key: Key = ts.random.clone(seed_key)
    k1, k2, k3 = ts.random.split(ts.random.wrap_key_data(ts.random.key_data(key)), 3)
    spread = tnp.sum(ts.random.lognormal(k1, tnp.abs(sigma)))
    counts = tnp.sum(ts.random.binomial(k2, 10.0, 0.3, (4,)))
    outcomes = tnp.sum(ts.random.multinomial(k3, 5.0, tnp.full((3,), 1 / 3, dtype=f32), shape=(2, 3)))
    points = tnp.sum(ts.random.ball(ts.random.PRNGKey(0), 3, 2.0, (5,)))
    return spread + counts + outcomes + points
