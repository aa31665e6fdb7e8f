"""``rankdata``, ``sem`` and ``mode`` of ``tensorstage.scipy.stats``, with ``jax.scipy.stats``' signatures.

Deliberate differences from SciPy (as JAX): ``rankdata`` returns floats for every method (the input's dtype when
it is floating, else tensorstage's default float, f32; SciPy gives int64 for all but ``average``) and supports
only ``nan_policy='propagate'`` (a slice holding a NaN ranks to NaN, as SciPy); ``mode`` supports only
``'propagate'`` (NaNs count as one value, sorted last: as SciPy's and JAX's), its count is i32 (SciPy: int64) and
an empty axis gives a NaN mode and a zero count of the default float dtype, as both. ``sem`` takes floating-point
data only (as every tensorstage statistic: ``.astype(f32)`` first) and supports ``'propagate'`` and ``'omit'``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from typing_extensions import Unpack

from ....staging import dtypes as _dt
from ....tensor import Tensor
from ... import numpy as tnp
from ...numpy._core import op
from ._common import FT, AnyTensor, S, floats

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """``mode``'s result: the modal values and how often each occurs."""

    mode: AnyTensor
    count: AnyTensor  # type: ignore[assignment]  # (shadows tuple.count, as SciPy's and JAX's field names do)


def _only_propagate(name: str, nan_policy: str, also: tuple[str, ...] = ()) -> None:
    supported = ("propagate", *also)
    if nan_policy not in supported:
        raise ValueError(f"{name}: nan_policy must be one of {supported} (as jax.scipy.stats), got {nan_policy!r}")


def _last_axis(x: AnyTensor, axis: int | None) -> AnyTensor:
    """``x`` with ``axis`` moved last (flattened for None)."""
    return tnp.ravel(x) if axis is None else tnp.moveaxis(x, axis, -1)


def _runs(s: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """For ``s`` sorted along its last axis: whether each position starts a run of equal values (NaNs equal each
    other), and the index of the first and the last position of its run."""
    n = s.shape[-1]
    same = s[..., 1:] == s[..., :-1]
    if _dt.is_float(s.aval.dtype):
        same = same | (tnp.isnan(s[..., 1:]) & tnp.isnan(s[..., :-1]))
    edge = tnp.ones_like(s[..., :1], dtype=tnp.bool_)
    starts = tnp.concatenate([edge, ~same], axis=-1)
    ends = tnp.concatenate([~same, edge], axis=-1)
    index = tnp.broadcast_to(tnp.arange(n, dtype=tnp.int32), s.shape)
    first = tnp.cummax(tnp.where(starts, index, 0), axis=-1)
    last = tnp.flip(tnp.cummin(tnp.flip(tnp.where(ends, index, n - 1), axis=-1), axis=-1), axis=-1)
    return starts, first, last


def _sorted_ranks(method: str, starts: AnyTensor, first: AnyTensor, last: AnyTensor, dtype: Any) -> AnyTensor:
    """The 1-based ranks of the sorted positions under ``method``'s treatment of ties."""
    if method == "ordinal":
        return tnp.broadcast_to(tnp.arange(1, starts.shape[-1] + 1, dtype=dtype), starts.shape)
    if method == "dense":
        return tnp.cumsum(starts.astype(tnp.int32), axis=-1).astype(dtype)
    if method == "min":
        return (first + 1).astype(dtype)
    if method == "max":
        return (last + 1).astype(dtype)
    return 0.5 * (first + last).astype(dtype) + 1


@op
def rankdata(a: Tensor[Any, Unpack[S]], method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """Ranks from 1 along ``axis`` (of the flattened array for None), ties by ``method``: ``average``, ``min``,
    ``max``, ``dense`` or ``ordinal`` (equal values in their order of appearance)."""
    _only_propagate("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: method must be one of {_RANK_METHODS}, got {method!r}")
    x = _last_axis(tnp.asarray(a), axis)
    dtype = x.dtype if _dt.is_float(x.aval.dtype) else _dt.DEFAULT_FLOAT
    order = tnp.argsort(x, axis=-1, stable=True)
    starts, first, last = _runs(tnp.take_along_axis(x, order, axis=-1))
    ranks = tnp.take_along_axis(_sorted_ranks(method, starts, first, last, dtype), tnp.argsort(order, axis=-1), axis=-1)
    if _dt.is_float(x.aval.dtype):
        ranks = tnp.where(tnp.any(tnp.isnan(x), axis=-1, keepdims=True), math.nan, ranks)
    return ranks if axis is None else tnp.moveaxis(ranks, -1, axis)


@op
def sem(a: Tensor[FT, Unpack[S]], axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)`` along ``axis`` (all of ``a`` for None); with
    ``nan_policy='omit'`` the NaNs are left out of both."""
    _only_propagate("sem", nan_policy, also=("omit",))
    (x,) = floats("sem", a)
    if nan_policy == "omit":
        count = tnp.sum(~tnp.isnan(x), axis=axis, keepdims=keepdims).astype(x.dtype)
        return tnp.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(count)
    size = x.size if axis is None else x.shape[axis]
    return tnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)


def _reduced_shape(shape: tuple[int, ...], axis: int | None, keepdims: bool) -> tuple[int, ...]:
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axis = axis % len(shape)
    return tuple(1 if i == axis else d for i, d in enumerate(shape) if keepdims or i != axis)


@op
def mode(a: Tensor[Any, Unpack[S]], axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (all of ``a`` for None; the smallest of equally common ones) and its
    count."""
    _only_propagate("mode", nan_policy)
    x = tnp.atleast_1d(tnp.asarray(a))
    if axis is not None and not -x.ndim <= axis < x.ndim:
        raise ValueError(f"mode: axis {axis} is out of bounds for {x.aval}")
    shape = _reduced_shape(x.shape, axis, keepdims)
    x = _last_axis(x, axis)
    if x.shape[-1] == 0:
        return ModeResult(tnp.full(shape, math.nan, dtype=_dt.DEFAULT_FLOAT), tnp.zeros(shape, dtype=_dt.DEFAULT_FLOAT))
    s = tnp.sort(x, axis=-1)
    _, first, last = _runs(s)
    runs = last - first + 1
    best = tnp.argmax(runs, axis=-1)[..., None]  # the first maximum: the smallest value
    value = tnp.take_along_axis(s, best, axis=-1)
    count = tnp.take_along_axis(runs, best, axis=-1)
    return ModeResult(tnp.reshape(value, shape), tnp.reshape(count, shape))
