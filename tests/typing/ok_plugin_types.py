"""Results the plugin computes exactly; under plain mypy they are open shapes, so both runs accept the annotations.

Each annotated assignment is a check: with the plugin, a wrong annotation here would be an error.
"""

from __future__ import annotations

from typing import Any, Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Seq(Dim): ...
class Feat(Dim): ...


DIMS = dict(Batch=2, Seq=3, Feat=4)


@ts.program
def views(x: Tensor[f32, Batch, Seq, Feat]) -> Tensor[f32, Batch, Feat]:
    first: Tensor[f32, Seq, Feat] = x[0]
    last_feature: Tensor[f32, Batch, Seq] = x[..., 0]
    column: Tensor[f32, Batch, Seq, Literal[1]] = x[:, :, 0, None]
    moved: Tensor[f32, Feat, Batch, Seq] = tnp.moveaxis(x, -1, 0)
    named: Tensor[f32, Seq, Batch, Feat] = x.transpose(Seq, Batch, Feat)
    flat: Tensor[f32, Batch, Any] = x.reshape(Batch, -1)
    totals: Tensor[f32, Batch] = x.sum(axis=(Seq, Feat))
    kept: Tensor[f32, Batch, Literal[1], Feat] = x.max(axis=Seq, keepdims=True)
    idx: Tensor[i32, Batch, Feat] = x.argmax(axis=Seq)
    stacked: Tensor[f32, Literal[2], Seq, Feat] = tnp.stack((first, first))
    mixed = tnp.einsum("bsf,sf->bf", x, stacked[0])
    scaled = column * last_feature[..., None] + moved.sum(axis=0)[..., None]
    checks = totals[:, None] + kept[:, 0] + idx.astype(f32) + named[0] + flat[:, :4] + scaled[0, 0, 0]
    return mixed + 0.0 * checks
