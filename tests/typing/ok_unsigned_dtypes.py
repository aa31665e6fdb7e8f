"""u16 and u64 tensors: sums and products of u16 accumulate in u32 (as u8's do, and as in JAX), u64 stays u64;
bit operations, shifts and comparisons keep the operand dtype; ``ts.random.bits`` gives the dtype asked for."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, bool_, f64, u16, u32, u64
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=4, In=3)


@ts.program
def pixel_sums(pixels: Tensor[u16, Batch, In]) -> Tensor[u32, Batch]:
    total: Tensor[u32] = pixels.sum()
    per_row: Tensor[u32, Batch] = tnp.sum(pixels, axis=In)
    product: Tensor[u32] = tnp.prod(pixels)
    running: Tensor[u32, Batch, In] = tnp.cumsum(pixels, axis=In)
    return per_row + total + product + running[:, 0]


@ts.program
def hashes(words: Tensor[u64, Batch, In], masks: Tensor[u16, Batch]) -> Tensor[f64, Batch]:
    mixed: Tensor[u64, Batch, In] = (words ^ (words >> 7)) * 3 + 1
    total: Tensor[u64, Batch] = mixed.sum(axis=In)
    high: Tensor[bool_, Batch] = total > 2**63
    wide: Tensor[u64, Batch] = (masks & 0xFF).astype(u64) << 8
    drawn: Tensor[u64, Batch] = ts.random.bits(ts.random.key(0), (4,), dtype=u64)
    small: Tensor[u16, Batch] = ts.random.bits(ts.random.key(1), (4,), u16)
    return tnp.where(high, total ^ drawn, wide + small.astype(u64)).astype(f64)
