from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class Seq(Dim): ...
class Model(Dim): ...
class Heads(Dim, size=2): ...
class HeadDim(Dim): ...


DIMS = dict(Batch=2, Seq=3, HeadDim=4)


@ts.program
def merge_heads(x: Tensor[f32, Batch, Heads, Seq, HeadDim]) -> Tensor[f32, Batch, Seq, Model]:
    return x.reshape(Batch, Seq, Model)  # plugin-error: shape
