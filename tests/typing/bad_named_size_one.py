from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Seq(Dim): ...
class Unit(Dim, size=1): ...


DIMS = dict(Batch=4, Seq=3)


@ts.program
def join(a: Tensor[f32, Batch, Unit], b: Tensor[f32, Batch, Seq]) -> Tensor[f32, Batch, Unit]:
    return tnp.concatenate((a, b), axis=0)[:4]  # plugin-error: shape
