"""Multi-head attention: split heads with reshape + transpose, batched matmul, merge heads back."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Seq(Dim): ...
class Model(Dim): ...
class Heads(Dim, size=2): ...
class HeadDim(Dim): ...


DIMS = dict(Batch=2, Seq=3, Model=8)


@ts.program
def attention(x: Tensor[f32, Batch, Seq, Model], wq: Tensor[f32, Model, Model]) -> Tensor[f32, Batch, Seq, Model]:
    q = x @ wq
    heads: Tensor[f32, Batch, Heads, Seq, HeadDim] = tnp.transpose(
        q.reshape(Batch, Seq, Heads, HeadDim), (0, 2, 1, 3)
    )
    scores = heads @ heads.swapaxes(-1, -2)
    weights = tnp.exp(scores - scores.max(axis=-1, keepdims=True))
    mixed = weights @ heads
    merged = tnp.moveaxis(mixed, 1, 2).reshape(Batch, Seq, Model)
    return merged
