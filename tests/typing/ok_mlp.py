"""A two-layer MLP with a softmax head: broadcasting a bias, named reductions, .T, keepdims."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Hidden(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Hidden=5, Out=2)


@ts.program
def mlp(
    w1: Tensor[f32, In, Hidden], b1: Tensor[f32, Hidden], w2: Tensor[f32, Out, Hidden], x: Tensor[f32, Batch, In]
) -> Tensor[f32, Batch, Out]:
    h = tnp.tanh(x @ w1 + b1)
    logits = h @ w2.T
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - tnp.log(tnp.exp(shifted).sum(axis=-1, keepdims=True))


@ts.program
def mean_loss(y: Tensor[f32, Batch, Out], target: Tensor[f32, Batch, Out]) -> Tensor[f32]:
    per_example: Tensor[f32, Batch] = ((y - target) ** 2).sum(axis=Out)
    return per_example.mean()


@ts.program
def feature_means(x: Tensor[f32, Batch, In]) -> Tensor[f32, In]:
    centered = x - x.mean(axis=Batch)
    return tnp.sum(centered * centered, axis=Batch) / 4.0
