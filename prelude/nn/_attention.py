"""Scaled dot-product attention and a typed multi-head attention layer, in the Flax/JAX layout ``(..., T, H, D)``.

Masked logits are excluded exactly (not by adding a large negative number), and a query whose keys are all
masked out attends to nothing: its output row is zeros, with zero gradients, never NaN.
"""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar

import attrs
import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...custom_derivatives import stop_gradient
from ...dtypes import DType, Floating, f32
from ...tensor import Tensor
from ..numpy import broadcast_to, einsum, exp, isfinite, max, ones, sum, tril, where
from ..numpy._core import as_tensor, describe, dtype_error, float_operand, op, shape_error
from ..random import Key, split
from ._init import glorot_uniform

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
T = TypeVar("T")
Sk = TypeVar("Sk")
H = TypeVar("H")
D = TypeVar("D")
Dv = TypeVar("Dv")
In = TypeVar("In")
Out = TypeVar("Out")

_NAME = "dot_product_attention"


@op
def dot_product_attention(
    query: Tensor[FT, Unpack[S], T, H, D], key: Tensor[FT, Unpack[S], Sk, H, D],
    value: Tensor[FT, Unpack[S], Sk, H, Dv],
    bias: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None, mask: Tensor[Any, Unpack[tuple[Any, ...]]] | None = None,
    scale: float | None = None, is_causal: bool = False,
) -> Tensor[FT, Unpack[S], T, H, Dv]:
    """``softmax(scale * q @ k^T + bias, where mask) @ v`` per head: ``query (..., T, H, D)``, ``key (..., S, H,
    D)``, ``value (..., S, H, Dv)`` give ``(..., T, H, Dv)``.

    ``bias`` (float) and ``mask`` (bool, True = attend) broadcast to the logits' shape ``(..., H, T, S)``;
    ``is_causal`` also masks keys after the query's position. ``scale`` defaults to ``1 / sqrt(D)``. A fully masked
    query row gives zeros (JAX would give the mean of the values).
    """
    q, k, v = float_operand(_NAME, query), float_operand(_NAME, key), float_operand(_NAME, value)
    if not (q.aval.dtype == k.aval.dtype == v.aval.dtype):
        raise dtype_error(_NAME, f"query {describe(query)}, key {describe(key)} and value {describe(value)} must "
                          "have one dtype")
    if not (q.aval.ndim == k.aval.ndim == v.aval.ndim) or q.aval.ndim < 3:
        raise shape_error(_NAME, f"query {describe(query)}, key {describe(key)} and value {describe(value)} must "
                          "have one rank >= 3: (..., length, heads, features)")
    qs, ks, vs = q.aval.shape, k.aval.shape, v.aval.shape
    same_batch = qs[:-3] == ks[:-3] == vs[:-3]
    if not same_batch or not (qs[-2] == ks[-2] == vs[-2]) or qs[-1] != ks[-1] or ks[-3] != vs[-3]:
        raise shape_error(
            _NAME, f"query {describe(query)} (..., T, H, D), key {describe(key)} (..., S, H, D) and value "
            f"{describe(value)} (..., S, H, Dv) disagree on the batch axes, heads, features or key length"
        )
    factor = _scale(qs[-1], scale)
    logits = einsum("...thd,...shd->...hts", q, k) * factor
    shape = tuple(logits.aval.shape)
    if bias is not None:
        b = as_tensor(bias)
        if b.aval.dtype != q.aval.dtype:
            raise dtype_error(_NAME, f"bias {describe(bias)} must have the query's dtype {describe(query)}")
        logits = logits + _spread("bias", b, shape)
    valid = None
    if mask is not None:
        m = as_tensor(mask)
        if m.aval.dtype != np.bool_:
            raise dtype_error(_NAME, f"mask must be booleans (True = attend), got {describe(mask)}")
        valid = _spread("mask", m, shape)
    if is_causal:
        causal = broadcast_to(tril(ones(shape[-2:], dtype=bool)), shape)  # query i sees keys 0..i (top-left aligned)
        valid = causal if valid is None else valid & causal
    dtype = logits.aval.dtype
    if dtype.itemsize < 4:
        logits = logits.astype(f32)  # a bf16/f16 softmax in f32 (as JAX does): its sum over keys rounds badly
    if valid is not None:
        logits = where(valid, logits, -np.inf)
    # Softmax with a row maximum that is a constant for autodiff (softmax is shift invariant) and 0 for a fully
    # masked row, so exp never sees inf - inf; an empty row's sum is 0 and divides by 1 instead.
    peak: Any = 0.0  # no keys at all: every row is empty, as if fully masked
    if shape[-1]:
        peak = stop_gradient(max(logits, axis=-1, keepdims=True))
        peak = where(isfinite(peak), peak, 0.0)
    weights = exp(logits - peak)
    total = sum(weights, axis=-1, keepdims=True)
    probs = weights / where(total > 0, total, 1.0)
    return einsum("...hts,...shd->...thd", probs.astype(dtype), v)


def _scale(features: int, scale: Any) -> Any:
    """The logits' factor: ``1 / sqrt(features)`` by default (1 for zero features, whose logits are all 0
    whatever the factor), else ``scale`` (a number or a scalar tensor)."""
    if scale is None:
        return 1.0 / math.sqrt(features) if features else 1.0
    if isinstance(scale, (bool, str, bytes)):
        raise TypeError(f"{_NAME}: scale must be a number, a scalar tensor or None, got {scale!r}")
    return scale


def _spread(what: str, x: Any, shape: tuple[int, ...]) -> Any:
    try:
        fits = x.aval.ndim <= len(shape) and np.broadcast_shapes(x.aval.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise shape_error(_NAME, f"{what} {describe(x)} does not broadcast to the logits' shape {shape} (..., H, T, S)")
    return broadcast_to(x, shape)


@attrs.frozen
class MultiHeadAttention(Generic[DT, In, H, D, Out]):
    """Multi-head attention with per-head projections (Flax's layout): ``query/key/value: (In, H, D)``,
    ``out: (H, D, Out)``. ``MultiHeadAttention[f32, In, H, D, Out]`` maps ``(*S, T, In)`` to ``(*S, T, Out)``."""

    query: Tensor[DT, In, H, D]
    key: Tensor[DT, In, H, D]
    value: Tensor[DT, In, H, D]
    out: Tensor[DT, H, D, Out]

    def __call__(
        self, x: Tensor[DT, Unpack[S], T, In], context: Tensor[DT, Unpack[S], Sk, In] | None = None,
        mask: Tensor[Any, Unpack[tuple[Any, ...]]] | None = None, is_causal: bool = False,
    ) -> Tensor[DT, Unpack[S], T, Out]:
        """Self-attention over ``x``, or attention from ``x`` to ``context``; ``mask`` as in
        ``dot_product_attention`` (``(..., H, T, S)``, broadcasting)."""
        kv = x if context is None else context
        q = einsum("...i,ihd->...hd", x, self.query)
        k = einsum("...i,ihd->...hd", kv, self.key)
        v = einsum("...i,ihd->...hd", kv, self.value)
        heads = dot_product_attention(q, k, v, mask=mask, is_causal=is_causal)
        return einsum("...hd,hdo->...o", heads, self.out)


def multi_head_attention(
    key: Key, in_features: int, num_heads: int, head_size: int, out_features: int | None = None,
    dtype: type[Floating] | Any = f32,
) -> MultiHeadAttention[Any, Any, Any, Any, Any]:
    """A ``MultiHeadAttention`` layer with Glorot-uniform projections (``out_features`` defaults to ``in_features``)."""
    kq, kk, kv, ko = split(key, 4)
    out = in_features if out_features is None else out_features
    width = num_heads * head_size

    def proj(k: Key) -> Any:
        return glorot_uniform(k, (in_features, width), dtype).reshape(in_features, num_heads, head_size)

    wo = glorot_uniform(ko, (width, out), dtype).reshape(num_heads, head_size, out)
    return MultiHeadAttention(proj(kq), proj(kk), proj(kv), wo)
