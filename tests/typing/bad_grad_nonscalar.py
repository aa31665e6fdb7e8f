from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class In(Dim): ...
class Out(Dim): ...


DIMS = dict(In=3, Out=2)


def scores(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, Out]:
    return x @ w


@ts.program
def step(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, In, Out]:
    return w - 0.1 * ts.grad(scores)(w, x)  # error: arg-type
