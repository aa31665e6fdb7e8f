from __future__ import annotations

from typing import Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...


DIMS = dict(Batch=4)


@ts.program
def regroup(x: Tensor[f32, Batch, Literal[6]]) -> Tensor[f32, Batch, Literal[4]]:
    return tnp.reshape(x, (Batch, 4))  # plugin-error: shape
