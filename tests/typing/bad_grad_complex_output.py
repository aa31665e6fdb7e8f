"""grad of a complex-valued function needs holomorphic=True (then the result is f'(z))."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, c64
from tensorstage import numpy as tnp


class Time(Dim): ...


DIMS = dict(Time=4)


def cubic(z: Tensor[c64, Time]) -> Tensor[c64]:
    return tnp.sum(z**3)


@ts.program
def step(z: Tensor[c64, Time]) -> Tensor[c64, Time]:
    return z - 0.1 * ts.grad(cubic)(z)  # error: type-var
