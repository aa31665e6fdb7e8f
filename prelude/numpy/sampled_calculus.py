"""Calculus on sampled functions with NumPy's names: piecewise-linear ``interp``olation, ``trapezoid`` integration
and finite-difference ``gradient``s.

All three are compositions of slices, gathers and elementwise ops, so ``grad`` (in the samples, the sample points
and the query points) and ``vmap`` come from the primitives' rules. ``trapz``, removed in NumPy 2 and absent from
``jax.numpy``, is not provided: use ``trapezoid``.

Deliberate differences from NumPy:
- Operands must be floating-point and of one dtype (Python numbers adopt it): NumPy computes integers (and
  mixes) in float64; the result has the operands' dtype.
- ``interp`` takes ``left``/``right='extrapolate'`` (as ``jax.numpy`` does) to continue the end segments. As in
  NumPy, ``xp`` must be increasing (not checked); an ``x`` exactly at a sample point gives ``fp`` there, and its
  derivative in ``x`` is the slope of the segment to its right (the last segment's at ``xp[-1]``).
- ``gradient`` computes coordinate arrays with NumPy's non-uniform formulas even when the coordinates happen to be
  evenly spaced (NumPy then switches to the uniform ones): the results agree to rounding. Several axes give a
  tuple (NumPy 2), one axis an array. ``edge_order`` must be 1 or 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import Floating
from ...staging import dtypes as _dt
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...staging.primitives.autodiff import stop_gradient
from ...tensor import Tensor
from ._core import as_tensor, atom, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from .joining import concatenate, take
from .reductions import sum as sum_
from .sorting import argsort, searchsorted
from .ufuncs import abs as abs_, clip, isfinite, isnan, remainder, where

__all__ = ["gradient", "interp", "trapezoid"]

FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Edge = float | Tensor[Any] | Literal["extrapolate"] | None
AxisArg = int | type[Dim]


def _floats(name: str, *operands: Any) -> list[AnyTensor]:
    """The operands as tensors of their one float dtype (Python numbers adopt it)."""
    dtype = result_dtype(name, operands)
    if not _dt.is_float(dtype):
        described = ", ".join(describe(x) for x in operands)
        raise dtype_error(
            name, f"{name} needs floating-point operands, got {described}; convert them with .astype(f32)"
        )
    return [wrap(atom(x, dtype, name)) for x in operands]


def _part(x: AnyTensor, start: int, stop: int, axis: int) -> AnyTensor:
    """``x[start:stop]`` along ``axis`` (``0 <= start <= stop <= size``)."""
    return wrap(SL.slice_in_dim(as_tensor(x).atom, start, stop, axis))


# ------------------------------------------------------------------------------------------------ interp


@op
def interp(
    x: Tensor[FT, Unpack[Shape]] | float, xp: Tensor[FT, Any], fp: Tensor[FT, Any], left: Edge = None,
    right: Edge = None, period: float | Tensor[Any] | None = None,
) -> Tensor[FT, Unpack[Shape]]:
    """The piecewise-linear interpolant of the points ``(xp, fp)`` (``xp`` increasing) at ``x``; ``left``/
    ``right`` (default ``fp[0]``/``fp[-1]``, or 'extrapolate') outside ``[xp[0], xp[-1]]``; NaN at a NaN ``x``
    (``fp[0]`` when there is one sample point: NumPy's special case). With ``period``, the points repeat with
    that period (``left``/``right`` are ignored)."""
    name = "interp"
    for what, value in (("xp", xp), ("fp", fp)):
        if as_tensor(value).aval.ndim != 1:
            raise shape_error(name, f"{what} must be 1-D, got {describe(value)}")
    q, xs, ys = _floats(name, x, xp, fp)
    if xs.aval.shape[0] != ys.aval.shape[0]:
        raise ValueError(f"{name}: fp and xp are not of the same length: {describe(ys)} and {describe(xs)}")
    if xs.aval.shape[0] == 0:
        raise ValueError(f"{name}: array of sample points xp is empty")
    if period is not None:
        q, xs, ys = _periodic(q, xs, ys, period)
        left = right = "extrapolate"  # the wrapped points cover a whole period
    return _interpolate(q, xs, ys, left, right)


def _periodic(
    q: AnyTensor, xs: AnyTensor, ys: AnyTensor, period: float | Tensor[Any]
) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """NumPy's periodic form: everything taken modulo the period, the points sorted and one more at each end."""
    if isinstance(period, (int, float)) and period == 0:
        raise ValueError("interp: period must be a non-zero value")
    period = abs_(period) if isinstance(period, Tensor) else abs(period)
    q, xs = remainder(q, period), remainder(xs, period)
    order = argsort(xs)
    xs, ys = take(xs, order), take(ys, order)
    xs = concatenate([xs[-1:] - period, xs, xs[:1] + period])
    ys = concatenate([ys[-1:], ys, ys[:1]])
    return q, xs, ys


def _interpolate(q: AnyTensor, xs: AnyTensor, ys: AnyTensor, left: Edge, right: Edge) -> AnyTensor:
    n = xs.aval.shape[0]
    first, last = xs[0], xs[n - 1]
    value: AnyTensor
    if n == 1:
        # The one sample, in q's shape: NumPy's special case, which gives it at a NaN q too.
        value = wrap(S.broadcast_to(as_tensor(ys[0]).atom, q.aval))
    else:
        # The segment xs[j] <= q < xs[j + 1]; q outside the points uses an end segment (extrapolation).
        j = clip(searchsorted(xs, q, side="right") - 1, 0, n - 2)
        x0, x1, y0, y1 = take(xs, j), take(xs, j + 1), take(ys, j), take(ys, j + 1)
        width = x1 - x0
        slope = (y1 - y0) / where(width == 0, 1.0, width)  # a zero width is a segment no q lies strictly inside
        value = _segment_value(q, x0, x1, y0, y1, slope)
        # A sample point gives its sample exactly (NumPy's rule; the formula can round, or make NaN of an inf);
        # its derivative in q is still the segment's slope.
        at_last = q == last
        knot = (q == x0) | at_last
        tilt = where(knot, _fixed(where(isfinite(slope), slope, 0.0)) * q, 0.0)
        value = where(knot, where(at_last, ys[n - 1], y0), value) - (_fixed(tilt) - tilt)
    for edge, side, outside, default in ((left, "left", q < first, ys[0]), (right, "right", q > last, ys[n - 1])):
        fill = _edge_value(edge, side, default)
        if fill is not None:
            value = where(outside, fill, value)
    return value if n == 1 else where(isnan(q), q, value)


def _fixed(x: AnyTensor) -> AnyTensor:
    """``x`` with no derivative."""
    return wrap(stop_gradient(as_tensor(x).atom))


def _segment_value(
    q: AnyTensor, x0: AnyTensor, x1: AnyTensor, y0: AnyTensor, y1: AnyTensor, slope: AnyTensor
) -> AnyTensor:
    """NumPy's formula from the left end, else from the right end where that is NaN (an infinite sample), else
    the samples' common value."""
    forward = slope * (q - x0) + y0
    backward = slope * (q - x1) + y1
    backward = where(isnan(backward) & (y0 == y1), y0, backward)
    return where(isnan(forward), backward, forward)


def _edge_value(edge: Edge, side: str, default: AnyTensor) -> AnyTensor | float | None:
    """The value beyond one end: ``edge``, ``default`` for None, or None to extrapolate."""
    if isinstance(edge, str):
        if edge != "extrapolate":
            raise ValueError(f"interp: {side} must be a number, a 0-d tensor or 'extrapolate', got {edge!r}")
        return None
    return default if edge is None else edge


# --------------------------------------------------------------------------------------------- trapezoid


@op
def trapezoid(
    y: Tensor[FT, Unpack[tuple[Any, ...]]], x: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    dx: float | Tensor[Any] = 1.0, axis: AxisArg = -1,
) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """The integral of the samples ``y`` along ``axis`` by the trapezoidal rule, at the points ``x`` (1-D, or
    broadcastable against ``y``) or evenly ``dx`` apart: ``sum(d * (y[1:] + y[:-1]) / 2)``, as NumPy."""
    name = "trapezoid"
    samples = as_tensor(y)
    if samples.aval.ndim == 0:
        raise shape_error(name, f"{name} needs samples of rank >= 1, got {describe(samples)}")
    ax = normalize_axes(name, axis, samples, allow_none=False)[0]
    spacing: Any
    if x is None:
        t, spacing = _floats(name, samples, dx) if isinstance(dx, Tensor) else (_floats(name, samples)[0], dx)
    else:
        t, points = _floats(name, samples, x)
        spacing = _steps(points, t, ax)
    n = t.aval.shape[ax]
    pairs = _part(t, min(n, 1), n, ax) + _part(t, 0, max(n - 1, 0), ax)
    total: AnyTensor = sum_(spacing * pairs / 2.0, axis=ax)
    return total


def _steps(points: AnyTensor, y: AnyTensor, axis: int) -> AnyTensor:
    """The widths between neighbouring sample points along ``axis``: a 1-D ``points`` lies along it."""
    name = "trapezoid"
    if points.aval.ndim == 1:
        n = points.aval.shape[0]
        if n != y.aval.shape[axis]:
            raise shape_error(name, f"1-D sample points {describe(points)} do not match axis {axis} of {describe(y)}")
        steps = _part(points, min(n, 1), n, 0) - _part(points, 0, max(n - 1, 0), 0)
        return wrap(S.reshape(as_tensor(steps).atom, _along(steps.aval.shape[0], axis, y.aval.ndim)))
    if points.aval.ndim != y.aval.ndim:
        raise shape_error(name, f"sample points {describe(points)} must be 1-D or have the rank of {describe(y)}")
    n = points.aval.shape[axis]
    return _part(points, min(n, 1), n, axis) - _part(points, 0, max(n - 1, 0), axis)


def _along(size: int, axis: int, ndim: int) -> tuple[int, ...]:
    """The shape that lays a 1-D array of ``size`` along ``axis`` of a rank-``ndim`` array (1 elsewhere)."""
    return tuple(size if k == axis else 1 for k in range(ndim))


# ---------------------------------------------------------------------------------------------- gradient


@overload
def gradient(
    f: Tensor[FT, Unpack[Shape]], *varargs: float | Tensor[Any, Unpack[tuple[Any, ...]]], axis: AxisArg,
    edge_order: int = 1,
) -> Tensor[FT, Unpack[Shape]]: ...
@overload
def gradient(
    f: Tensor[FT, Unpack[Shape]], *varargs: float | Tensor[Any, Unpack[tuple[Any, ...]]],
    axis: Sequence[AxisArg] | None = None, edge_order: int = 1,
) -> Tensor[FT, Unpack[Shape]] | tuple[Tensor[FT, Unpack[Shape]], ...]: ...
@op
def gradient(
    f: AnyTensor, *varargs: float | AnyTensor, axis: AxisArg | Sequence[AxisArg] | None = None, edge_order: int = 1,
) -> AnyTensor | tuple[AnyTensor, ...]:
    """The gradient of the samples ``f`` by central differences inside and one-sided differences of order
    ``edge_order`` (1 or 2) at the ends, along each axis in ``axis`` (all by default). ``varargs``: no spacing
    (1), one scalar for every axis, or one per axis, each a scalar or the 1-D coordinates along that axis. One
    axis gives an array, several a tuple, as NumPy."""
    name = "gradient"
    samples = as_tensor(f)
    if samples.aval.ndim == 0:
        raise shape_error(name, f"{name} needs samples of rank >= 1, got {describe(samples)}")
    axes = normalize_axes(name, axis, samples)
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise ValueError(f"{name}: edge_order must be 1 or 2, got {edge_order!r}")
    spacings = _spacings(varargs, len(axes))
    operands = _floats(name, samples, *[h for h in spacings if not isinstance(h, (int, float))])
    t, given = operands[0], iter(operands[1:])
    out = []
    for ax, spacing in zip(axes, spacings):
        h = spacing if isinstance(spacing, (int, float)) else next(given)
        n = t.aval.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                f"{name}: axis {ax} of {describe(t)} has {n} samples, too few for a gradient with edge_order="
                f"{edge_order} (at least {edge_order + 1} are needed)"
            )
        out.append(_axis_gradient(t, ax, h, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _spacings(varargs: tuple[Any, ...], count: int) -> list[Any]:
    if not varargs:
        return [1.0] * count
    if len(varargs) == 1 and _is_scalar(varargs[0]):
        return [varargs[0]] * count
    if len(varargs) != count:
        raise TypeError(
            f"gradient: invalid number of spacing arguments: {len(varargs)} for {count} axes (give none, one scalar "
            f"or one per axis)"
        )
    return list(varargs)


def _is_scalar(h: Any) -> bool:
    return isinstance(h, (int, float)) or as_tensor(h).aval.ndim == 0


def _axis_gradient(f: AnyTensor, axis: int, h: Any, edge_order: int) -> AnyTensor:
    """NumPy's finite differences along one axis, with the spacing ``h`` a scalar or coordinates."""
    n = f.aval.shape[axis]
    if _is_scalar(h):
        inner = (_part(f, 2, n, axis) - _part(f, 0, n - 2, axis)) / (2.0 * h)
        steps = (h, h, h, h)  # the first two and the last two steps
    else:
        if h.aval.ndim != 1 or h.aval.shape[0] != n:
            raise shape_error(
                "gradient", f"coordinates {describe(h)} must be 1-D, one per sample along axis {axis} of {describe(f)}"
            )
        widths = _part(h, 1, n, 0) - _part(h, 0, n - 1, 0)
        laid = wrap(S.reshape(as_tensor(widths).atom, _along(n - 1, axis, f.aval.ndim)))
        inner = _three_points(f, axis, 0, _interior_weights(_part(laid, 0, n - 2, axis), _part(laid, 1, n - 1, axis)))
        steps = (widths[0], widths[min(1, n - 2)], widths[max(n - 3, 0)], widths[n - 2])
    if edge_order == 1:
        first = (_part(f, 1, 2, axis) - _part(f, 0, 1, axis)) / steps[0]
        last = (_part(f, n - 1, n, axis) - _part(f, n - 2, n - 1, axis)) / steps[3]
    else:
        first = _three_points(f, axis, 0, _start_weights(steps[0], steps[1], scalar=_is_scalar(h)))
        last = _three_points(f, axis, n - 3, _end_weights(steps[2], steps[3], scalar=_is_scalar(h)))
    return concatenate([first, inner, last], axis=axis)


def _three_points(f: AnyTensor, axis: int, start: int, weights: tuple[Any, Any, Any]) -> AnyTensor:
    """``a f[i] + b f[i + 1] + c f[i + 2]`` for ``i`` from ``start`` (to the end less two when ``start`` is 0 and
    the weights are arrays along ``axis``, else one ``i``)."""
    a, b, c = weights
    count = a.aval.shape[axis] if isinstance(a, Tensor) and a.aval.ndim else 1
    points = [_part(f, start + k, start + k + count, axis) for k in range(3)]
    return a * points[0] + b * points[1] + c * points[2]  # type: ignore[no-any-return]


def _interior_weights(dx1: Any, dx2: Any) -> tuple[Any, Any, Any]:
    """Second-order central weights for the steps ``dx1`` before and ``dx2`` after each point (NumPy's)."""
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    return a, b, c


def _start_weights(dx1: Any, dx2: Any, scalar: bool) -> tuple[Any, Any, Any]:
    """Second-order one-sided weights at the first point, from its two following steps."""
    if scalar:
        return -1.5 / dx1, 2.0 / dx1, -0.5 / dx1
    a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
    b = (dx1 + dx2) / (dx1 * dx2)
    c = -dx1 / (dx2 * (dx1 + dx2))
    return a, b, c


def _end_weights(dx1: Any, dx2: Any, scalar: bool) -> tuple[Any, Any, Any]:
    """Second-order one-sided weights at the last point, from its two preceding steps."""
    if scalar:
        return 0.5 / dx2, -2.0 / dx2, 1.5 / dx2
    a = dx2 / (dx1 * (dx1 + dx2))
    b = -(dx2 + dx1) / (dx1 * dx2)
    c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
    return a, b, c
