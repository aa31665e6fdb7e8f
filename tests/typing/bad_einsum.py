from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=3)


@ts.program
def dense(x: Tensor[f32, Batch, In], w: Tensor[f32, Out, In]) -> Tensor[f32, Batch, Out]:
    return tnp.einsum("bi,io->bo", x, w)  # plugin-error: shape
