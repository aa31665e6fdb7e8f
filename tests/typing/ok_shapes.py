"""Shape functions the plugin types exactly: squeeze, expand_dims, concatenate, stack, einsum, named swaps."""

from __future__ import annotations

from typing import Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...
class One(Dim, size=1): ...


DIMS = dict(Batch=4, In=3, Out=2)


@ts.program
def shapes(x: Tensor[f32, Batch, In], w: Tensor[f32, In, Out], col: Tensor[f32, Batch, One]) -> Tensor[f32, Batch, Out]:
    flat: Tensor[f32, Batch] = tnp.squeeze(col, axis=-1)
    again = tnp.expand_dims(flat, -1) * x
    y = tnp.einsum("bi,io->bo", again, w)
    swapped: Tensor[f32, Out, Batch] = y.swapaxes(Batch, Out)
    return swapped.T * 2.0


@ts.program
def joined(a: Tensor[f32, Batch, Literal[2]], b: Tensor[f32, Batch, Literal[3]]) -> Tensor[f32, Batch, Literal[5]]:
    return tnp.concatenate((a, b), axis=1)
