"""Dropout: zero entries at random while training, scaling the kept ones so the expectation is unchanged."""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import Floating
from ...tensor import Tensor
from ..numpy import where, zeros_like
from ..numpy._core import float_operand, op
from ..random import Key, bernoulli

FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")


@op
def dropout(
    key: Key, x: Tensor[FT, Unpack[Shape]], rate: float, deterministic: bool = False
) -> Tensor[FT, Unpack[Shape]]:
    """Inverted dropout: each entry is zeroed with probability ``rate`` and the rest divided by ``1 - rate``.

    ``deterministic=True`` (evaluation) or ``rate == 0`` returns ``x``; ``rate == 1`` returns zeros. The mask
    depends only on ``key`` and the shape: the same key drops the same entries.
    """
    t = float_operand("dropout", x)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise ValueError(f"dropout: rate must be a Python float in [0, 1], got {rate!r}")
    if deterministic or rate == 0:
        return t
    if rate == 1:
        return zeros_like(t)
    keep = bernoulli(key, 1.0 - rate, t.aval.shape)
    return where(keep, t / (1.0 - rate), 0.0)
