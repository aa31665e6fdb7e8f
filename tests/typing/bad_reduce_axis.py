from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Feat(Dim): ...


DIMS = dict(Batch=4, In=3)


@ts.program
def pooled(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch]:
    return tnp.mean(x, axis=Feat)  # error: shape
