"""Activation functions and (log-)softmax. ``axis`` is an int or a Dim class (``softmax(x, axis=Classes)``)."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating
from ...staging.primitives import elementwise as E
from ...tensor import Tensor
from ...custom_derivatives import stop_gradient
from ..numpy import abs, clip, exp, expm1, log, log1p, logsumexp, max as max_, sigmoid, split, sqrt, sum as sum_
from ..numpy import tanh, where
from ..numpy._core import describe, float_operand, normalize_axes, op, shape_error, wrap

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")


@op
def relu(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """``max(x, 0)``, with derivative 0 at 0 (a select, not a max, so ties do not split the gradient); NaN stays
    NaN with derivative 0, as in JAX."""
    return where(x > 0, x, where(x <= 0, 0, stop_gradient(x)))


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
        # 0.5 * (1 + tanh(z)) == sigmoid(2 z), which keeps its digits in the left tail (1 + tanh cancels there)
        return t * sigmoid(2.0 * inner)
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
    if t.aval.shape[index] == 0:
        return t  # nothing to normalize (and a maximum over no elements has no value)
    # Shifted by the row maximum before the sum, not ``x - logsumexp(x)``: logsumexp rounds at the logits'
    # magnitude, so two equal logits of 1e38 each got probability 1. The shift is a constant for autodiff
    # (log_softmax is shift invariant); a row of -inf (or with +inf) is NaN, as in JAX.
    shifted = t - stop_gradient(max_(t, axis=index, keepdims=True))
    return shifted - log(sum_(exp(shifted), axis=index, keepdims=True))


@op
def leaky_relu(x: Tensor[FT, Unpack[Shape]], negative_slope: float = 0.01) -> Tensor[FT, Unpack[Shape]]:
    """``x`` where positive, else ``negative_slope * x``."""
    t = float_operand("leaky_relu", x)
    return where(t > 0, t, negative_slope * t)


@op
def relu6(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """``min(max(x, 0), 6)``, with derivative 0 at both kinks."""
    return where(x > 0, where(x < 6, x, 6), where(x <= 0, 0, stop_gradient(x)))  # NaN: NaN, derivative 0


@op
def hard_tanh(x: Tensor[FT, Unpack[Shape]], min_val: float = -1.0, max_val: float = 1.0) -> Tensor[FT, Unpack[Shape]]:
    """``x`` clipped into ``[min_val, max_val]`` (derivative 1 strictly inside, 0 outside)."""
    t = float_operand("hard_tanh", x)
    return where(t > max_val, max_val, where(t < min_val, min_val, t))


@op
def elu(x: Tensor[FT, Unpack[Shape]], alpha: float = 1.0) -> Tensor[FT, Unpack[Shape]]:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return _elu("elu", x, alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@op
def selu(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The self-normalizing ``scale * elu(x, alpha)`` (Klambauer et al., 2017)."""
    return _SELU_SCALE * _elu("selu", x, _SELU_ALPHA)


def _elu(op_name: str, x: Tensor[FT, Unpack[Shape]], alpha: float) -> Tensor[FT, Unpack[Shape]]:
    t = float_operand(op_name, x)
    # expm1 only sees x <= 0: a large positive x in the unused branch would overflow and poison the gradient
    return where(t > 0, t, alpha * expm1(where(t > 0, 0.0, t)))


@op
def softplus(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``log(1 + exp(x))``, exact and finite (with its gradient) for any ``x``."""
    return _softplus(float_operand("softplus", x))


def _softplus(t: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    # relu(x) + log1p(exp(-|x|)); -|x| as a select so the derivative at 0 is sigmoid(0), not a split tie
    negative_abs = where(t > 0, -t, t)
    return where(t > 0, t, 0.0) + log1p(exp(negative_abs))


@op
def log_sigmoid(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for any ``x``."""
    return -_softplus(-float_operand("log_sigmoid", x))


@op
def softsign(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``x / (1 + |x|)``."""
    t = float_operand("softsign", x)
    return t / (1 + abs(t))


@op
def mish(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    t = float_operand("mish", x)
    return t * tanh(_softplus(t))


@op
def glu(x: Tensor[FT, Unpack[tuple[Any, ...]]], axis: int | type = -1) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``x`` along ``axis`` (its size must
    be even; the result has half of it)."""
    t = float_operand("glu", x)
    (index,) = normalize_axes("glu", axis, t, allow_none=False)
    size = t.aval.shape[index]
    if size % 2:
        raise shape_error("glu", f"axis {axis!r} of {describe(x)} has odd size {size}; it must split into two halves")
    a, b = split(t, 2, axis=index)
    return a * sigmoid(b)


@op
def celu(x: Tensor[FT, Unpack[Shape]], alpha: float = 1.0) -> Tensor[FT, Unpack[Shape]]:
    """The continuously differentiable ELU: ``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``."""
    t = float_operand("celu", x)
    return where(t > 0, t, alpha * expm1(where(t > 0, 0.0, t) / alpha))


@op
def hard_sigmoid(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid."""
    return relu6(float_operand("hard_sigmoid", x) + 3.0) / 6.0


@op
def hard_silu(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``x * hard_sigmoid(x)`` (also called hard swish)."""
    return float_operand("hard_silu", x) * hard_sigmoid(x)


@op
def sparse_plus(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """0 below -1, ``x`` above 1, ``(x + 1)² / 4`` between: a softplus with exact zeros (Martins et al.)."""
    t = float_operand("sparse_plus", x)
    return where(t <= -1.0, 0.0, where(t >= 1.0, t, (t + 1.0) ** 2 / 4.0))


@op
def sparse_sigmoid(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``clip((x + 1) / 2, 0, 1)``: the derivative of ``sparse_plus``."""
    return 0.5 * clip(float_operand("sparse_sigmoid", x) + 1.0, 0.0, 2.0)


@op
def squareplus(x: Tensor[FT, Unpack[Shape]], b: float = 4.0) -> Tensor[FT, Unpack[Shape]]:
    """``(x + sqrt(x² + b)) / 2``: a smooth ReLU without exponentials (So, 2021)."""
    t = float_operand("squareplus", x)
    return (t + sqrt(t * t + b)) / 2.0


@op
def log1mexp(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends (Mächler's two branches, switching at log 2)."""
    t = float_operand("log1mexp", x)
    return where(t > math.log(2.0), log1p(-exp(-t)), log(-expm1(-t)))


@op
def logmeanexp(x: Tensor[FT, Unpack[tuple[Any, ...]]], axis: int | tuple[int, ...] | None = None,
               keepdims: bool = False) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """``log(mean(exp(x)))`` over ``axis`` (all axes when None), computed as a stable logsumexp."""
    t = float_operand("logmeanexp", x)
    axes = normalize_axes("logmeanexp", axis, t)
    count = math.prod(t.aval.shape[a] for a in axes)
    return logsumexp(t, axis=axes, keepdims=keepdims) - (math.log(count) if count else -math.inf)  # empty: NaN


def identity(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """``x`` itself (an activation slot that does nothing)."""
    return x


soft_sign = softsign
swish = silu
hard_swish = hard_silu
