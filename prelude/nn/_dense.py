"""``Dense``: a typed affine layer whose parameters are a pytree, so layers nest in parameter classes.

``Dense[f32, In, Hidden]`` maps ``Tensor[f32, *S, In]`` to ``Tensor[f32, *S, Hidden]``; mypy checks that
layers compose (the output dim of one is the input dim of the next).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, f32
from ...tensor import Tensor
from ..numpy import zeros
from ..random import Key
from ._init import glorot_uniform

DT = TypeVar("DT", bound=DType)
In = TypeVar("In")
Out = TypeVar("Out")
S = TypeVarTuple("S")
Initializer = Callable[[Key, tuple[int, int], Any], Tensor[Any, Any, Any]]


@attrs.frozen
class Dense(Generic[DT, In, Out]):
    w: Tensor[DT, In, Out]
    b: Tensor[DT, Out]

    def __call__(self, x: Tensor[DT, Unpack[S], In]) -> Tensor[DT, Unpack[S], Out]:
        return x @ self.w + self.b


def dense(
    key: Key, fan_in: int, fan_out: int, init: Initializer = glorot_uniform, dtype: type[Floating] | Any = f32
) -> Dense[Any, Any, Any]:
    """A ``Dense`` layer with ``init(key, (fan_in, fan_out), dtype)`` weights and zero biases."""
    return Dense(init(key, (fan_in, fan_out), dtype), zeros((fan_out,), dtype=dtype))
