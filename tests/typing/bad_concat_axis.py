from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=2)


@ts.program
def join(a: Tensor[f32, Batch, In], b: Tensor[f32, Batch, Out]) -> Tensor[f32, Batch, In]:
    return tnp.concatenate((a, b), axis=0)  # plugin-error: shape
