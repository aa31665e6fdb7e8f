from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=2)


def predict(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, Out]:
    return tnp.tanh(x @ w)


@ts.program
def forward(w: Tensor[f32, In, Out], xs: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
    return ts.vmap(predict, Batch)(w, xs)  # error: arg-type
