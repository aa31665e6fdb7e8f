"""Layer normalization and RMS normalization (functions and a typed ``LayerNorm`` layer), and ``standardize``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs
import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, f32
from ...tensor import Tensor
from ..numpy import mean, ones, sqrt, zeros
from ..numpy._core import as_tensor, describe, dtype_error, float_operand, normalize_axes, op, shape_error

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
F = TypeVar("F")
S = TypeVarTuple("S")
Shape = TypeVarTuple("Shape")


def _affine(name: str, x: Any, what: str, param: Any) -> Any:
    """``param`` checked to broadcast onto ``x`` without changing its shape, in ``x``'s dtype."""
    if param is None:
        return None
    p = as_tensor(param)
    if p.aval.dtype != x.aval.dtype:
        raise dtype_error(name, f"{what} {describe(param)} must have the operand's dtype, got operand {describe(x)}")
    try:
        fits = np.broadcast_shapes(p.aval.shape, x.aval.shape) == tuple(x.aval.shape)
    except ValueError:
        fits = False
    if not fits or p.aval.ndim > x.aval.ndim:
        raise shape_error(name, f"{what} {describe(param)} does not broadcast onto the operand {describe(x)}")
    return p


def _normalize(name: str, x: Any, axis: Any, eps: float, center: bool) -> Any:
    t: Any = float_operand(name, x)
    axes = normalize_axes(name, axis, t, allow_none=False)
    dtype = t.aval.dtype
    if dtype.itemsize < 4:
        t = t.astype(f32)  # bf16/f16 statistics in f32 (as Flax does): a bf16 sum of 256 values is off by percents
    if center:
        t = t - mean(t, axis=axes, keepdims=True)  # two passes: the variance of centred values has no cancellation
    out = t / sqrt(mean(t * t, axis=axes, keepdims=True) + eps)
    return out.astype(dtype) if dtype.itemsize < 4 else out


@op
def layer_norm(
    x: Tensor[FT, Unpack[Shape]], scale: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    bias: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None, axis: int | type | tuple[int | type, ...] = -1,
    eps: float = 1e-5,
) -> Tensor[FT, Unpack[Shape]]:
    """``(x - mean) / sqrt(var + eps) * scale + bias`` with the (biased) mean and variance over ``axis``;
    ``scale`` and ``bias`` broadcast onto ``x`` (shape ``(features,)`` for the default last axis)."""
    name = "layer_norm"
    s, b = _affine(name, as_tensor(x), "scale", scale), _affine(name, as_tensor(x), "bias", bias)
    out = _normalize(name, x, axis, eps, center=True)
    if s is not None:
        out = out * s
    if b is not None:
        out = out + b
    return out  # type: ignore[no-any-return]


@op
def rms_norm(
    x: Tensor[FT, Unpack[Shape]], scale: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    axis: int | type | tuple[int | type, ...] = -1, eps: float = 1e-6,
) -> Tensor[FT, Unpack[Shape]]:
    """``x / sqrt(mean(x**2, axis) + eps) * scale`` (Zhang & Sennrich, 2019): no centring, no bias."""
    s = _affine("rms_norm", as_tensor(x), "scale", scale)
    out = _normalize("rms_norm", x, axis, eps, center=False)
    return out if s is None else out * s  # type: ignore[no-any-return]


@op
def standardize(
    x: Tensor[FT, Unpack[Shape]], axis: int | type | tuple[int | type, ...] = -1, eps: float = 1e-5
) -> Tensor[FT, Unpack[Shape]]:
    """``(x - mean) / sqrt(var + eps)`` over ``axis``: ``layer_norm`` without scale and bias."""
    return _normalize("standardize", x, axis, eps, center=True)  # type: ignore[no-any-return]


@attrs.frozen
class LayerNorm(Generic[DT, F]):
    """Layer normalization over the last axis with a learned ``scale`` and ``bias`` (a pytree of two tensors)."""

    scale: Tensor[DT, F]
    bias: Tensor[DT, F]

    def __call__(self, x: Tensor[DT, Unpack[S], F], eps: float = 1e-5) -> Tensor[DT, Unpack[S], F]:
        return layer_norm(x, self.scale, self.bias, axis=-1, eps=eps)  # type: ignore[type-var]


def layer_norm_layer(features: int, dtype: type[Floating] | Any = f32) -> LayerNorm[Any, Any]:
    """A ``LayerNorm`` with unit scales and zero biases."""
    return LayerNorm(ones((features,), dtype=dtype), zeros((features,), dtype=dtype))
