"""Max and average pooling over the spatial axes of channels-last inputs ``(*batch, *spatial, C)`` (Flax's
layout and defaults: ``strides`` default to 1, ``padding`` to 'VALID').

Both are sums/maxima of strided slices of the (padded) input, one slice per window tap: no pooling primitive, so
gradients and batching come from ``slice``, ``pad``, ``add`` and ``max``. ``max_pool``'s gradient goes to the
maximum of each window (ties split as ``maximum``'s rule splits them).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeVar, cast

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating
from ...staging import dtypes as _dt
from ...staging.ir import Atom, Aval, literal
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
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


def _taps(x: Atom, first: int, window: tuple[int, ...], strides: tuple[int, ...]) -> list[Atom]:
    """The strided slice of ``x`` read by each window tap (every output position's tap-th element)."""
    n = len(window)
    shape = x.aval.shape
    outs = [(shape[first + i] - window[i]) // strides[i] + 1 for i in range(n)]
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
    pieces = _taps(_padded(t.atom, first, pads, lowest), first, window_, strides_)
    out: Any = wrap(pieces[0])
    for piece in pieces[1:]:
        out = maximum(out, wrap(piece))
    return cast("Tensor[DT, Unpack[tuple[Any, ...]], C_]", out)


@op
def avg_pool(
    x: Tensor[FT, Unpack[Sh], C_], window: Sequence[int], strides: int | Sequence[int] | None = None,
    padding: Padding = "VALID", count_include_pad: bool = True,
) -> Tensor[FT, Unpack[tuple[Any, ...]], C_]:
    """The mean over each window of the spatial axes (the ``len(window)`` axes before the last). With padding,
    ``count_include_pad=True`` (Flax's default) divides by the window size, False by the number of input
    elements in the window."""
    t = float_operand("avg_pool", x)
    first, window_, strides_, pads = _windows("avg_pool", t, window, strides, padding)
    pieces = _taps(_padded(t.atom, first, pads, 0), first, window_, strides_)
    total: Any = wrap(pieces[0])
    for piece in pieces[1:]:
        total = total + wrap(piece)
    if count_include_pad or not any(lo or hi for lo, hi in pads):
        size = 1
        for k in window_:
            size *= k
        return cast("Tensor[FT, Unpack[tuple[Any, ...]], C_]", total * (1.0 / size))
    # The count of input elements in each window: the same pooling of ones (a constant XLA folds).
    ones = S.full_like(Aval((1,) * first + t.aval.shape[first:-1] + (1,), t.aval.dtype), 1)
    counts = _taps(_padded(ones, first, pads, 0), first, window_, strides_)
    count: Any = wrap(counts[0])
    for piece in counts[1:]:
        count = count + wrap(piece)
    spread = S.broadcast_in_dim(count.atom, total.aval.shape, tuple(range(total.aval.ndim)), total.aval.dims)
    return cast("Tensor[FT, Unpack[tuple[Any, ...]], C_]", total / wrap(spread))
