from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=3)  # In == Out: only the names tell them apart


@ts.program
def residual(x: Tensor[f32, Batch, In], y: Tensor[f32, Batch, Out]) -> Tensor[f32, Batch, In]:
    return x + y  # error: shape
