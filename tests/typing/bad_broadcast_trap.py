from __future__ import annotations

from typing import Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class N(Dim): ...


DIMS = dict(N=5)


@ts.program
def residuals(pred: Tensor[f32, N], target: Tensor[f32, N, Literal[1]]) -> Tensor[f32, N]:
    return pred - target  # error: shape
