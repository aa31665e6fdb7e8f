from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=4, In=3)


@ts.program
def column_sums(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch]:
    return x.sum(axis=Batch)  # error: return-value
