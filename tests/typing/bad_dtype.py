from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def mixed(x: Tensor[f32, Batch], y: Tensor[f64, Batch]) -> Tensor[f32, Batch]:
    return x + y  # error: operator
