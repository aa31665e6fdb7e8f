from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class In(Dim): ...
class Out(Dim): ...


DIMS = dict(In=3, Out=2)


def energy(x: Tensor[f32, In]) -> Tensor[f32]:
    return (tnp.sin(x) * x).sum()


@ts.program
def directional(x: Tensor[f32, In], t: Tensor[f32, Out]) -> Tensor[f32]:
    return ts.jvp(energy, (x,), (t,))[1]  # error: arg-type
