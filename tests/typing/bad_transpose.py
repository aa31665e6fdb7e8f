from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=3, In=3)


@ts.program
def features_first(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, In]:
    return x.swapaxes(0, 1)  # error: return-value
