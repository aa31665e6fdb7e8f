"""``Tensor.view``: a dtype of the same width keeps the shape (and its dims); another width rescales the last axis,
which the checker then leaves open (and pyright, given an open axis, the whole result)."""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

import tensorstage as ts
from tensorstage import Dim, Tensor, f16, f32, f64, i32, u8, u32


class Batch(Dim): ...
class In(Dim): ...


DIMS = dict(Batch=4, In=2)


@ts.program
def round_trips(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, In]:
    assert_type(x.view(), Tensor[f32, Batch, In])
    assert_type(x.view(None), Tensor[f32, Batch, In])
    bits = assert_type(x.view(u32), Tensor[u32, Batch, In])
    signed = assert_type(bits.view(i32), Tensor[i32, Batch, In])
    halves = assert_type(x.view(f16), Tensor[f16, Batch, Any])
    wide = assert_type(x.view(f64), Tensor[f64, Batch, Any])
    byte_view = assert_type(x.view(u8), Tensor[u8, Batch, Any])
    back: Tensor[f32, Batch, In] = signed.view(f32) + halves.view(f32) + byte_view.view(f32) + wide.view(f32)
    return back
