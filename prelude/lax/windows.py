"""``lax.reduce_window``: a reduction over sliding windows (pooling), with JAX's arguments.

There is no window primitive: the operand is padded with the initial value (interior padding for
``base_dilation``), and the window's taps are strided slices combined with ``computation``, one after another, so
gradients and batching come from the slice and pad rules and any associative binary function of tensors works
(``lax.max``, ``lax.add``, ``tnp.logaddexp``, ...). The cost is one slice per tap: fine for pooling windows; a
very large window is better written as a reshape and a reduction.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Unpack

from ...staging.primitives import slicing as SL
from ...staging.primitives.convolution import dilated_size
from ...tensor import Tensor
from ..numpy._core import as_tensor, op, shape_error, wrap
from ._operands import strict_atoms
from .padding import window_pads

__all__ = ["reduce_window"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _per_axis(what: str, values: Sequence[int] | None, ndim: int, default: int) -> tuple[int, ...]:
    out = (default,) * ndim if values is None else tuple(int(v) for v in values)
    if len(out) != ndim or any(v < 1 for v in out):
        raise shape_error("reduce_window", f"lax.reduce_window: {what} needs {ndim} positive ints, got {values!r}")
    return out


@op
def reduce_window(
    operand: AnyTensor, init_value: Any, computation: Callable[[Any, Any], Any], window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None, padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None,
) -> AnyTensor:
    """``computation`` folded over each window of ``window_dimensions`` (taps ``window_dilation`` apart), moved by
    ``window_strides`` over ``operand`` dilated by ``base_dilation`` and padded with ``init_value``."""
    x, init = strict_atoms("reduce_window", operand, init_value)
    if init.aval.shape:
        raise shape_error("reduce_window", f"lax.reduce_window: init_value must be a scalar, got {init.aval}")
    ndim = x.aval.ndim
    window = _per_axis("window_dimensions", window_dimensions, ndim, 1)
    strides = _per_axis("window_strides", window_strides, ndim, 1)
    base = _per_axis("base_dilation", base_dilation, ndim, 1)
    spread = _per_axis("window_dilation", window_dilation, ndim, 1)
    sizes = [dilated_size(n, d) for n, d in zip(x.aval.shape, base)]
    spans = [dilated_size(w, d) for w, d in zip(window, spread)]
    pads = window_pads("reduce_window", padding, sizes, spans, strides)
    padded = SL.pad(x, init, [(lo, hi, d - 1) for (lo, hi), d in zip(pads, base)])
    extents = padded.aval.shape
    counts = [max((e - s) // st + 1, 0) for e, s, st in zip(extents, spans, strides)]
    out: Any = None
    for tap in itertools.product(*(range(w) for w in window)):
        starts = [t * d for t, d in zip(tap, spread)]
        limits = [s + (c - 1) * st + 1 if c else s for s, c, st in zip(starts, counts, strides)]
        piece = wrap(SL.slice_(padded, starts, limits, strides))
        out = piece if out is None else computation(out, piece)
    return as_tensor(out) if out is not None else wrap(padded)
