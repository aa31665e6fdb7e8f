from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=3)  # a square weight: sizes alone cannot catch it


@ts.program
def dense(w: Tensor[f32, Out, In], x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
    return x @ w  # error: shape
