from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, i8


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def total(x: Tensor[i8, Batch]) -> Tensor[i8]:
    return x.sum()  # error: return-value
