from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def total(x: Tensor[f32, Batch]) -> Tensor[f32]:
    return x.sum(dtype=f64)  # error: return-value
