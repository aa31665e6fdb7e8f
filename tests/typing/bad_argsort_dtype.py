from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def ranks(x: Tensor[f32, Batch]) -> Tensor[f32, Batch]:
    return tnp.argsort(x)  # error: return-value
