from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Feat(Dim): ...


DIMS = dict(Batch=4, Feat=3)


@ts.program
def pair(a: Tensor[f32, Batch, Feat], b: Tensor[f32, Batch, Feat]) -> Tensor[f32, Batch, Feat]:
    return tnp.stack((a, b), axis=3)[0]  # plugin-error: shape
