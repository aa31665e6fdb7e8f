"""Sums and products of bool, i8, i16 and u8 tensors are i32 / u32 (accumulated wide, as in JAX)."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, bool_, f32, f64, i8, i16, i32, i64, u8, u32
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


@ts.program
def given_dtypes(pixels: Tensor[u8, Batch, In], x: Tensor[f32, Batch, In]) -> Tensor[f64, Batch]:
    wrapped: Tensor[u8] = pixels.sum(dtype=u8)  # dtype= accumulates in that type (u8 wraps, as in NumPy)
    wide: Tensor[i64, In] = tnp.prod(pixels, axis=Batch, dtype=i64)
    per_row: Tensor[f64, Batch] = tnp.sum(x, axis=In, dtype=f64)
    whole: Tensor[f64] = x.sum(dtype=f64) + wrapped.astype(f64) + wide.sum(dtype=f64)
    return per_row + whole + pixels.sum(axis=1, dtype=f64)
