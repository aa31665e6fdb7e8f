"""``detrend`` of ``jax.scipy.signal``: a signal less its mean or its least-squares line (one per segment between
breakpoints), each segment's line fitted in closed form (the mean and the slope about the segment's centre: the
same fit as JAX's ``lstsq`` of ``[1, t]``, without a factorization)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import Inexact
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import inexact_operand, normalize_axes, op, shape_error

IT = TypeVar("IT", bound=Inexact)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def detrend(
    data: Tensor[IT, Unpack[Shape]], axis: int = -1, type: Literal["linear", "constant"] = "linear",  # noqa: A002
    bp: int | Sequence[int] | np.ndarray[Any, Any] = 0, overwrite_data: None = None,
) -> Tensor[IT, Unpack[Shape]]:
    """``data`` less its mean ('constant') or its least-squares line ('linear'; one per segment between the
    breakpoints ``bp``) along ``axis``."""
    name = "detrend"
    if overwrite_data is not None:
        raise ValueError(f"{name}: overwrite_data is not supported (arrays are immutable)")
    if type not in ("linear", "constant"):
        raise ValueError(f"{name}: type must be 'linear' or 'constant', got {type!r}")
    x = inexact_operand(name, data)
    if x.ndim == 0:
        raise shape_error(name, f"{name} needs data of rank >= 1, got {x.aval}")
    ax = normalize_axes(name, axis, x, allow_none=False)[0]
    if type == "constant":
        return x - tnp.mean(x, axis=ax, keepdims=True)
    n = x.shape[ax]
    points = np.unique(np.concatenate([[0], np.ravel(np.asarray(bp, dtype=np.int64)), [n]]))
    if points[0] < 0 or points[-1] > n:
        raise ValueError(f"{name}: breakpoints {bp!r} must lie in [0, {n}] (the length of axis {ax} of {x.aval})")
    pieces = [_without_line(x[(slice(None),) * ax + (slice(int(a), int(b)),)], ax)
              for a, b in zip(points[:-1], points[1:])]
    return tnp.concatenate(pieces, axis=ax) if pieces else x


def _without_line(segment: AnyTensor, axis: int) -> AnyTensor:
    """``segment`` less its least-squares line along ``axis``: ``y - mean(y) - slope (t - mean(t))``."""
    n = segment.shape[axis]
    t = np.arange(1, n + 1) / n
    centred = t - t.mean()
    shape = [1] * segment.ndim
    shape[axis] = n
    level = segment - tnp.mean(segment, axis=axis, keepdims=True)
    spread = float(np.sum(centred**2))
    if spread == 0:  # one point: it is its own line
        return level
    tc = tnp.asarray(centred.reshape(shape), dtype=segment.dtype)
    slope = tnp.sum(level * tc, axis=axis, keepdims=True) / spread
    return level - slope * tc
