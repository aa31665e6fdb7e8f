from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, u16


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def total(x: Tensor[u16, Batch]) -> Tensor[u16]:
    return x.sum()  # error: return-value
