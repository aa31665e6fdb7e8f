"""Activation functions and (log-)softmax. ``axis`` is an int or a Dim class (``softmax(x, axis=Classes)``)."""

from __future__ import annotations

import math
from typing import TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating
from ...staging.primitives import elementwise as E
from ...tensor import Tensor
from ..numpy import exp, logsumexp, sigmoid, tanh, where
from ..numpy._core import float_operand, normalize_axes, op, wrap

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")


@op
def relu(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """``max(x, 0)``, with derivative 0 at 0 (a select, not a max, so ties do not split the gradient)."""
    return where(x > 0, x, 0)


@op
def silu(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``x * sigmoid(x)`` (also called swish)."""
    return float_operand("silu", x) * sigmoid(x)


@op
def gelu(x: Tensor[FT, Unpack[Shape]], approximate: bool = True) -> Tensor[FT, Unpack[Shape]]:
    """The Gaussian error linear unit; ``approximate=True`` is the tanh form, False the erf form."""
    t = float_operand("gelu", x)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (t + 0.044715 * t * t * t)
        return 0.5 * t * (1.0 + tanh(inner))
    return 0.5 * t * (1.0 + erf(t * (1.0 / math.sqrt(2.0))))


@op
def erf(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The error function (within a few ulps in f32 and f64)."""
    return wrap(E.erf(float_operand("erf", x).atom))


@op
def log_softmax(x: Tensor[FT, Unpack[Shape]], axis: int | type = -1) -> Tensor[FT, Unpack[Shape]]:
    """``x - logsumexp(x, axis)``: log-probabilities, stable for any logits."""
    return _log_softmax("log_softmax", x, axis)


@op
def softmax(x: Tensor[FT, Unpack[Shape]], axis: int | type = -1) -> Tensor[FT, Unpack[Shape]]:
    """Probabilities along ``axis`` (exp of the log-softmax, so large logits never overflow)."""
    return exp(_log_softmax("softmax", x, axis))


def _log_softmax(op_name: str, x: Tensor[FT, Unpack[Shape]], axis: int | type) -> Tensor[FT, Unpack[Shape]]:
    t = float_operand(op_name, x)
    (index,) = normalize_axes(op_name, axis, t, allow_none=False)
    return t - logsumexp(t, axis=index, keepdims=True)
