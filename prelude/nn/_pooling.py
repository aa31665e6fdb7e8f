"""Max and average pooling over the spatial axes of channels-last inputs ``(*batch, *spatial, C)`` (Flax's
layout and defaults: ``strides`` default to 1, ``padding`` to 'VALID').

There is no pooling primitive, so gradients and batching come from existing rules. A pool combines strided
slices of the input, one per window tap, or, for windows of more than 16 elements that tile the input
(``strides == window``, or one window per axis: global pooling), is one ``max``/``sum`` reduction over blocks of a
reshaped input. (A depthwise convolution with a kernel of ones would be one op for any window, but XLA:CPU runs
it 30-100x slower.) bf16/f16 averages sum in f32. ``max_pool``'s gradient goes to the maximum of each window (ties
split as the ``max`` reduction's or ``maximum``'s rule splits them).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, TypeVar, cast

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, f32
from ...staging import dtypes as _dt
from ...staging.ir import Atom, Aval, literal
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ..numpy import max as tnp_max
from ..numpy import sum as tnp_sum
from ..numpy import maximum
from ..numpy._core import as_tensor, describe, float_operand, op, shape_error, wrap
from ._conv import Padding, per_axis, resolve_padding

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
C_ = TypeVar("C_")
Sh = TypeVarTuple("Sh")


def _windows(
    op_name: str, x: Tensor[Any], window: Sequence[int], strides: int | Sequence[int] | None, padding: Padding
) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    """(first spatial axis, window, strides, padding) after checks."""
    if not isinstance(window, (tuple, list)):
        raise shape_error(op_name, f"window must be a tuple of ints, one per spatial axis, got {window!r}")
    n = len(window)
    if n < 1 or x.aval.ndim < n + 1:
        raise shape_error(
            op_name, f"input {describe(x)} must be (*batch, *spatial, features) with {n} spatial axes for window {window!r}"
        )
    window_ = per_axis(op_name, "window", window, n)
    strides_ = per_axis(op_name, "strides", 1 if strides is None else strides, n)
    first = x.aval.ndim - 1 - n
    sizes = x.aval.shape[first:-1]
    pads = resolve_padding(op_name, padding, sizes, window_, strides_)
    for i, (size, k, (lo, hi)) in enumerate(zip(sizes, window_, pads)):
        if size + lo + hi < k:
            raise shape_error(
                op_name, f"window {window_} is larger than the padded spatial axis {first + i} (size {size}, padding "
                f"{(lo, hi)}) of {describe(x)}",
            )
    return first, window_, strides_, pads


def _out_sizes(x: Atom, first: int, window: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    return [(x.aval.shape[first + i] - k) // st + 1 for i, (k, st) in enumerate(zip(window, strides))]


_MAX_TAPS = 16  # windows of up to this many elements combine strided slices


def _pooled(x: Atom, first: int, window: tuple[int, ...], strides: tuple[int, ...], reduce: Any, combine: Any) -> Any:
    """Each window of the (padded) input reduced: ``combine`` over the strided slice of each window tap, or, for
    big windows that tile the input, one ``reduce(blocks, axis=...)`` over a ``(..., out, window, ...)`` reshape
    (a global pool of 64x64 would be 4096 taps; for small windows the slices run 2-4x faster on XLA:CPU)."""
    outs = _out_sizes(x, first, window, strides)
    overlapping = any(st != k and m != 1 for k, st, m in zip(window, strides, outs))
    if overlapping or math.prod(window) <= _MAX_TAPS:
        pieces = [wrap(piece) for piece in _taps(x, first, window, strides)]
        out = pieces[0]
        for piece in pieces[1:]:
            out = combine(out, piece)
        return out
    shape = x.aval.shape
    limit = [*shape[:first], *(m * k for m, k in zip(outs, window)), shape[-1]]
    tiled = SL.slice_(x, [0] * len(shape), limit)
    blocks = [v for m, k in zip(outs, window) for v in (m, k)]
    split = S.reshape(tiled, (*shape[:first], *blocks, shape[-1]))
    return reduce(wrap(split), axis=tuple(first + 2 * i + 1 for i in range(len(window))))


def _taps(x: Atom, first: int, window: tuple[int, ...], strides: tuple[int, ...]) -> list[Atom]:
    """The strided slice of ``x`` read by each window tap (every output position's tap-th element)."""
    shape = x.aval.shape
    outs = _out_sizes(x, first, window, strides)
    lead, tail = [0] * first, [0]
    pieces = []
    for tap in itertools.product(*(range(k) for k in window)):
        start = [*lead, *tap, *tail]
        limit = [*shape[:first], *(t + (m - 1) * s + 1 for t, m, s in zip(tap, outs, strides)), shape[-1]]
        step = [1] * first + list(strides) + [1]
        pieces.append(SL.slice_(x, start, limit, step))
    return pieces


def _padded(x: Atom, first: int, pads: tuple[tuple[int, int], ...], value: Any) -> Atom:
    config = [(0, 0, 0)] * first + [(lo, hi, 0) for lo, hi in pads] + [(0, 0, 0)]
    return SL.pad(x, literal(value, x.aval.dtype), config)


@op
def max_pool(
    x: Tensor[DT, Unpack[Sh], C_], window: Sequence[int], strides: int | Sequence[int] | None = None,
    padding: Padding = "VALID",
) -> Tensor[DT, Unpack[tuple[Any, ...]], C_]:
    """The maximum over each window of the spatial axes (the ``len(window)`` axes before the last); padding
    elements are ``-inf`` (the smallest integer for integer inputs), so they never win."""
    t = as_tensor(x)
    first, window_, strides_, pads = _windows("max_pool", t, window, strides, padding)
    dtype = t.aval.dtype
    if _dt.is_float(dtype):
        lowest: Any = -np.inf
    elif dtype == np.bool_:
        lowest = False
    else:
        lowest = np.iinfo(dtype).min
    out = _pooled(_padded(t.atom, first, pads, lowest), first, window_, strides_, tnp_max, maximum)
    return cast("Tensor[DT, Unpack[tuple[Any, ...]], C_]", out)


@op
def avg_pool(
    x: Tensor[FT, Unpack[Sh], C_], window: Sequence[int], strides: int | Sequence[int] | None = None,
    padding: Padding = "VALID", count_include_pad: bool = True,
) -> Tensor[FT, Unpack[tuple[Any, ...]], C_]:
    """The mean over each window of the spatial axes (the ``len(window)`` axes before the last). With padding,
    ``count_include_pad=True`` (Flax's default) divides by the window size, False by the number of input
    elements in the window (a window of padding only gives NaN). bf16/f16 inputs are summed in f32."""
    t: Any = float_operand("avg_pool", x)
    first, window_, strides_, pads = _windows("avg_pool", t, window, strides, padding)
    dtype = t.aval.dtype
    if dtype.itemsize < 4:
        t = t.astype(f32)  # a bf16/f16 sum of a big window rounds badly (or overflows f16): sum in f32
    total = _pooled(_padded(t.atom, first, pads, 0), first, window_, strides_, tnp_sum, operator.add)
    if count_include_pad or not any(lo or hi for lo, hi in pads):
        out = total * (1.0 / math.prod(window_))
    else:  # divide by the number of input elements in each window: the same sum over ones (a constant XLA folds)
        ones = S.full_like(Aval((1,) * first + t.aval.shape[first:-1] + (1,), t.aval.dtype), 1)
        count = as_tensor(_pooled(_padded(ones, first, pads, 0), first, window_, strides_, tnp_sum, operator.add))
        out = total / wrap(S.broadcast_in_dim(count.atom, total.aval.shape, tuple(range(total.aval.ndim)),
                                              total.aval.dims))
    return cast("Tensor[FT, Unpack[tuple[Any, ...]], C_]", out.astype(dtype))
