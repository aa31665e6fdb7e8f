"""NumPy's ``pad``, every named mode, as slices, reversals, concatenations and reductions of the operand.

Each axis is padded in turn (as NumPy does, so corners agree); the reflecting modes take at most one period per
step, so widths larger than the axis work as in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...staging.ir import literal
from ...staging.primitives import slicing as SL
from ...tensor import Tensor
from . import reductions
from ._core import as_tensor, atom, describe, op, shape_error, wrap
from .shaping import broadcast_to
from .sorting import median
from .ufuncs import astype, floor, rint

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

_PAD_OPTIONS: dict[str, frozenset[str]] = {
    "constant": frozenset({"constant_values"}),
    "edge": frozenset(),
    "linear_ramp": frozenset({"end_values"}),
    "maximum": frozenset({"stat_length"}),
    "mean": frozenset({"stat_length"}),
    "median": frozenset({"stat_length"}),
    "minimum": frozenset({"stat_length"}),
    "reflect": frozenset({"reflect_type"}),
    "symmetric": frozenset({"reflect_type"}),
    "wrap": frozenset(),
    "empty": frozenset(),
}


PadModeName = Literal[
    "constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric", "wrap", "empty"
]


def pad(
    x: AnyTensor,
    pad_width: Any,
    mode: PadModeName = "constant",
    *,
    constant_values: Any = None,
    end_values: Any = None,
    stat_length: Any = None,
    reflect_type: Literal["even", "odd"] | None = None,
) -> AnyTensor:
    """NumPy's pad with all its named modes (``mode="empty"`` fills with zeros; a callable mode is not supported).
    ``pad_width`` and the per-mode options take NumPy's forms: a scalar, ``(before, after)`` or one pair per
    axis; options left out take NumPy's defaults (``constant_values=0``, ``end_values=0``, ``stat_length``: the
    whole axis, ``reflect_type="even"``), and one that the mode does not use is an error. Each axis is padded in
    turn, as NumPy does, so corners come out the same."""
    given = {
        "constant_values": constant_values, "end_values": end_values, "stat_length": stat_length,
        "reflect_type": reflect_type,
    }
    return _pad(x, _static(pad_width), mode, **{k: _static(v) for k, v in given.items() if v is not None})


def _static(value: Any) -> Any:
    """Host arrays and lists in a static argument as (hashable) tuples of Python scalars."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        return tuple(_static(v) for v in value)
    return value


@op
def _pad(x: AnyTensor, pad_width: Any, mode: str, **kwargs: Any) -> AnyTensor:
    t = as_tensor(x)
    if not isinstance(mode, str) or mode not in _PAD_OPTIONS:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(sorted(_PAD_OPTIONS))}")
    unknown = sorted(set(kwargs) - _PAD_OPTIONS[mode])
    if unknown:
        raise ValueError(f"pad: mode {mode!r} does not take {', '.join(unknown)}")
    widths = _as_pairs("pad_width", pad_width, t, integral=True)
    if mode not in ("constant", "empty") and t.aval.size == 0:
        _check_extendable(t, mode, widths)
        mode = "empty"  # nothing to read from: every padded axis has data, so the result is empty too
    out: AnyTensor = t
    for axis, (before, after) in enumerate(widths.tolist()):
        if before or after:
            out = _PAD_MODES[mode](out, axis, before, after, kwargs)
    return out


def _as_pairs(what: str, value: Any, t: AnyTensor, integral: bool = False) -> np.ndarray[Any, Any]:
    """NumPy's ``(before, after)`` forms broadcast to one pair per axis of ``t``."""
    pairs = np.asarray(value)
    if integral and pairs.dtype.kind not in "iu":
        raise TypeError(f"pad: {what} {value!r} must be integers")
    if integral and (pairs < 0).any():
        raise shape_error("pad", f"{what} {value!r} must be non-negative")
    try:  # a 0-d operand has no axes to pad: NumPy returns it as it is
        return np.broadcast_to(pairs, (t.aval.ndim, 2))
    except ValueError:
        raise shape_error("pad", f"{what} {value!r} must give (before, after) for {describe(t)}") from None


def _check_extendable(t: AnyTensor, mode: str, widths: np.ndarray[Any, Any]) -> None:
    for axis, (n, pair) in enumerate(zip(t.aval.shape, widths.tolist())):
        if n == 0 and any(pair):
            raise ValueError(f"pad: cannot extend the empty axis {axis} of {describe(t)} with mode {mode!r}")


def _along(t: AnyTensor, axis: int, index: slice) -> AnyTensor:
    return t[(slice(None),) * axis + (index,)]


def _pad_constant(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    fill = options.get("constant_values", 0)
    values = [fill, fill] if isinstance(fill, Tensor) else _as_pairs("constant_values", fill, t)[axis].tolist()
    rank = t.aval.ndim
    for side, (lo, hi) in enumerate(((before, 0), (0, after))):
        value = atom(values[side], t.aval.dtype)
        if value.aval.dtype != t.aval.dtype or value.aval.ndim != 0:
            raise shape_error("pad", f"constant_values must be scalars of {describe(t)}'s dtype")
        config = [(lo, hi, 0) if a == axis else (0, 0, 0) for a in range(rank)]
        t = wrap(SL.pad(as_tensor(t).atom, value, config)) if lo or hi else t
    return t


def _pad_empty(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    return _pad_constant(t, axis, before, after, {})


def _pad_edge(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    first, last = _along(t, axis, slice(0, 1)), _along(t, axis, slice(-1, None))
    return _sandwich(t, axis, _stretched(first, axis, before), _stretched(last, axis, after))


def _stretched(edge: AnyTensor, axis: int, width: int) -> AnyTensor:
    return broadcast_to(edge, edge.aval.shape[:axis] + (width,) + edge.aval.shape[axis + 1:])


def _sandwich(t: AnyTensor, axis: int, left: AnyTensor, right: AnyTensor) -> AnyTensor:
    parts = [as_tensor(p).atom for p in (left, t, right) if p.aval.shape[axis]]
    return wrap(SL.concatenate(parts, axis))


def _pad_wrap(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    n = t.aval.shape[axis]
    periods = -(-max(before, after) // n)
    copies = wrap(SL.concatenate([as_tensor(t).atom] * periods, axis))
    left = _along(copies, axis, slice(periods * n - before, None))
    return _sandwich(t, axis, left, _along(copies, axis, slice(0, after)))


def _pad_reflect(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    return _reflect(t, axis, before, after, options, include_edge=False)


def _pad_symmetric(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    return _reflect(t, axis, before, after, options, include_edge=True)


def _reflect(
    t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any], include_edge: bool
) -> AnyTensor:
    """NumPy's iteration: mirror at most one period per step on each side; an ``odd`` reflection mirrors the
    values through the current edge too (``2 * edge - value``), which is why it cannot be a single gather."""
    odd = _reflect_type(options)
    period = t.aval.shape[axis]
    if period == 1:  # NumPy's legacy behavior: a single element is extended as with mode="edge"
        return _pad_edge(t, axis, before, after, options)
    offset = int(include_edge)
    while before or after:
        n = t.aval.shape[axis]
        usable = n // period * period if include_edge else (n - 1) // (period - 1) * (period - 1)
        left_n, right_n = min(usable, before), min(usable, after)
        left = _reversed(_along(t, axis, slice(1 - offset, 1 - offset + left_n)), axis)
        right = _reversed(_along(t, axis, slice(n - 1 + offset - right_n, n - 1 + offset)), axis)
        if odd:
            left = 2 * _along(t, axis, slice(0, 1)) - left
            right = 2 * _along(t, axis, slice(n - 1, n)) - right
        t = _sandwich(t, axis, left, right)
        before, after = before - left_n, after - right_n
    return t


def _reflect_type(options: dict[str, Any]) -> bool:
    kind = options.get("reflect_type", "even")
    if kind not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {kind!r}")
    return bool(kind == "odd")


def _reversed(t: AnyTensor, axis: int) -> AnyTensor:
    return wrap(SL.rev(as_tensor(t).atom, (axis,)))


def _pad_linear_ramp(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
    """Ramps from each end value up to (not including) the edge, as ``np.linspace(end, edge, width,
    endpoint=False)``: computed in the operand's float type (f64 for integers, then floored as NumPy does, from
    ``k * (edge - end) / width``, which is exact there; NumPy's own rounding of the step can floor one lower)."""
    ends = _as_pairs("end_values", options.get("end_values", 0), t)[axis].tolist()
    n = t.aval.shape[axis]
    left = _ramp(_along(t, axis, slice(0, 1)), axis, ends[0], before)
    right = _reversed(_ramp(_along(t, axis, slice(n - 1, n)), axis, ends[1], after), axis)
    return _sandwich(t, axis, left, right)


def _ramp(edge: AnyTensor, axis: int, end: float, width: int) -> AnyTensor:
    dtype = edge.aval.dtype
    work = dtype if _dt.is_float(dtype) else np.dtype(np.float64)
    steps = np.arange(width, dtype=work).reshape((1,) * axis + (width,) + (1,) * (edge.aval.ndim - axis - 1))
    start = wrap(literal(np.asarray(end, work), work))
    ramp = start + wrap(literal(steps, work)) * (astype(edge, work) - start) / width  # exact for integers
    return astype(ramp if _dt.is_float(dtype) else floor(ramp), dtype)


def _stat_mode(reduce: Callable[[AnyTensor, int], AnyTensor]) -> PadMode:
    """A mode that fills each side with a statistic of the ``stat_length`` elements nearest to it."""

    def mode(t: AnyTensor, axis: int, before: int, after: int, options: dict[str, Any]) -> AnyTensor:
        lengths = _as_pairs("stat_length", options.get("stat_length"), t)[axis].tolist()
        n = t.aval.shape[axis]
        left_n, right_n = (n if k is None else min(_stat_length(k), n) for k in lengths)
        left = _stat(reduce, _along(t, axis, slice(0, left_n)), axis)
        right = _stat(reduce, _along(t, axis, slice(n - right_n, n)), axis)
        return _sandwich(t, axis, _stretched(left, axis, before), _stretched(right, axis, after))

    return mode


def _stat_length(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"pad: stat_length must be positive integers or None, got {k!r}")
    return k


def _stat(reduce: Callable[[AnyTensor, int], AnyTensor], part: AnyTensor, axis: int) -> AnyTensor:
    """The statistic in the operand's dtype; integer means and medians round half to even, as NumPy's do."""
    dtype = part.aval.dtype
    value = reduce(part, axis)
    if value.aval.dtype == dtype:
        return value
    return astype(rint(value) if _dt.is_integer(dtype) else value, dtype)


def _max(t: AnyTensor, axis: int) -> AnyTensor:
    return reductions.max(t, axis=axis, keepdims=True)


def _min(t: AnyTensor, axis: int) -> AnyTensor:
    return reductions.min(t, axis=axis, keepdims=True)


def _mean(t: AnyTensor, axis: int) -> AnyTensor:
    return reductions.mean(t if _dt.is_float(t.aval.dtype) else astype(t, np.float64), axis=axis, keepdims=True)


def _median(t: AnyTensor, axis: int) -> AnyTensor:
    return median(t if _dt.is_float(t.aval.dtype) else astype(t, np.float64), axis=axis, keepdims=True)


PadMode = Callable[[AnyTensor, int, int, int, dict[str, Any]], AnyTensor]
_PAD_MODES: dict[str, PadMode] = {
    "constant": _pad_constant, "edge": _pad_edge, "linear_ramp": _pad_linear_ramp, "maximum": _stat_mode(_max),
    "mean": _stat_mode(_mean), "median": _stat_mode(_median), "minimum": _stat_mode(_min),
    "reflect": _pad_reflect, "symmetric": _pad_symmetric, "wrap": _pad_wrap, "empty": _pad_empty,
}
