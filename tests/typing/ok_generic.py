"""Generic helpers (any dtype, any leading axes) keep their precise types under both checkers and the plugin."""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import TypeVarTuple, Unpack

import tensorstage as ts
from tensorstage import Dim, DType, Floating, Tensor, f32
from tensorstage import numpy as tnp

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")


class Batch(Dim): ...
class Seq(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=2, Seq=3, In=4, Out=5)


def affine(x: Tensor[DT, Unpack[S], In], w: Tensor[DT, In, Out], b: Tensor[DT, Out]) -> Tensor[DT, Unpack[S], Out]:
    return x @ w + b


def squared_norm(x: Tensor[FT, Unpack[S], Out]) -> Tensor[FT, Unpack[S]]:
    return tnp.sqrt(x * x).sum(axis=Out)


@ts.program
def encode(x: Tensor[f32, Batch, Seq, In], w: Tensor[f32, In, Out], b: Tensor[f32, Out]) -> Tensor[f32, Batch, Seq]:
    return squared_norm(tnp.tanh(affine(x, w, b)))
