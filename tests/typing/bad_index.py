from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=4, In=3)


@ts.program
def first_feature(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch]:
    return x[:, 0, 0]  # plugin-error: shape
