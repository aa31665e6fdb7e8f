"""Sums and products of bool, i8, i16 and u8 tensors are i32 / u32 (accumulated wide, as in JAX)."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, bool_, i8, i16, i32, u8, u32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=4, In=3)


@ts.program
def counts(flags: Tensor[bool_, Batch, In], small: Tensor[i8, Batch, In], mid: Tensor[i16, Batch]) -> Tensor[i32, Batch]:
    per_row: Tensor[i32, Batch] = flags.sum(axis=In)
    total: Tensor[i32] = tnp.sum(small)
    product: Tensor[i32] = mid.prod()
    return per_row + tnp.sum(small, axis=In) + total + product


@ts.program
def brightness(pixels: Tensor[u8, Batch, In]) -> Tensor[u32, Batch]:
    total: Tensor[u32] = pixels.sum()
    return tnp.prod(pixels, axis=In) + total
