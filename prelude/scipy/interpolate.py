"""``tensorstage.scipy.interpolate``: JAX's ``jax.scipy.interpolate``: ``RegularGridInterpolator``, linear or
nearest interpolation on a rectilinear grid.

The interpolator is a pytree (its grid, values and fill value are leaves; the method is static), so it can be
built outside a program and passed in, built inside one, differentiated (in the values, and in the query
points for 'linear') and batched. Each query point finds its cell per axis by ``searchsorted`` and sums the
``2^N`` corners with the products of the per-axis weights (JAX's method).

Deliberate differences from JAX: the grid coordinates and the query points are converted to the values' dtype
(JAX promotes them together); the values must be floating-point (JAX converts integers); each axis needs at least
two points. As in JAX, ``bounds_error=True`` is refused and the axes must be strictly increasing (not checked).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from typing_extensions import Unpack

from ...pytree import register_pytree_node
from ...staging import dtypes as _dt
from ...staging.source import user_location
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, atom, describe, dtype_error, op, shape_error, wrap

__all__ = ["RegularGridInterpolator"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Method = Literal["linear", "nearest"]
_NAME = "RegularGridInterpolator"


def _value_error(message: str) -> ValueError:
    """An error of the interpolator's own methods (which are not ops) with the user's line."""
    return ValueError(f"{_NAME}: {message}\n  at {user_location()}")


def _method(method: Any) -> str:
    if method not in ("linear", "nearest"):
        raise _value_error(f"method must be 'linear' or 'nearest', got {method!r}")
    return str(method)


class RegularGridInterpolator:
    """Interpolation on a regular (rectilinear) grid in any number of dimensions (SciPy's
    ``RegularGridInterpolator`` as JAX has it): ``points`` is one strictly increasing 1-D array per axis,
    ``values`` has the grid's shape (plus any trailing axes of values per point); points outside the grid give
    ``fill_value`` (None: extrapolate)."""

    grid: tuple[AnyTensor, ...]
    values: AnyTensor
    fill_value: Any
    method: str
    bounds_error: bool

    def __init__(self, points: Sequence[Any], values: Any, method: Method = "linear", bounds_error: bool = False,
                 fill_value: float | AnyTensor | None = np.nan) -> None:
        self.method = _method(method)
        if bounds_error:
            raise NotImplementedError(f"{_NAME}: bounds_error=True is not supported (a staged program cannot "
                                      "raise on its values), as in JAX")
        self.bounds_error = False
        v = tnp.asarray(values)
        if not _dt.is_float(v.dtype):
            raise dtype_error(_NAME, f"{_NAME} needs floating-point values, got {v.aval}; convert them with "
                                     ".astype(f32)")
        if len(points) > v.ndim:
            raise shape_error(_NAME, f"there are {len(points)} point arrays, but values {v.aval} has {v.ndim} axes")
        grid = tuple(_grid_axis(p, v, k) for k, p in enumerate(points))
        self.grid, self.values, self.fill_value = grid, v, fill_value

    def __call__(self, xi: Any, method: Method | None = None) -> AnyTensor:
        """The interpolated values at ``xi``: an array ``(..., ndim)`` of points, or a tuple of ``ndim``
        coordinate arrays (broadcast together); the result is ``(..., *values.shape[ndim:])``."""
        chosen = _method(self.method if method is None else method)
        return _RegularGridInterpolator(self.grid, self.values, self.fill_value, xi, chosen)


def _grid_axis(points: Any, values: AnyTensor, k: int) -> AnyTensor:
    p = tnp.asarray(points)
    if p.ndim != 1 or p.shape[0] != values.shape[k]:
        raise shape_error(_NAME, f"the points of axis {k} must be 1-D with {values.shape[k]} entries (values "
                                 f"{values.aval}), got {p.aval}")
    if p.shape[0] < 2:
        raise _value_error(f"axis {k} has {p.shape[0]} point(s); it needs at least 2")
    if not (_dt.is_float(p.dtype) or _dt.is_integer(p.dtype)):
        raise dtype_error(_NAME, f"the points of axis {k} must be real numbers, got {p.aval}")
    return p.astype(values.dtype) if p.dtype != values.dtype else p


def _query_points(xi: Any, ndim: int, dtype: np.dtype[Any]) -> AnyTensor:
    """``xi`` as ``(..., ndim)`` points of ``dtype`` (SciPy's ``_ndim_coords_from_arrays``)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = [_real(as_tensor(tnp.asarray(c)), dtype) for c in xi]
        shape = tnp.broadcast_shapes(*(c.shape for c in parts))
        return tnp.stack([tnp.broadcast_to(c, shape) for c in parts], axis=-1)
    points = _real(as_tensor(tnp.asarray(xi)), dtype)
    return tnp.reshape(points, (-1, ndim)) if points.ndim == 1 else points


def _real(x: AnyTensor, dtype: np.dtype[Any]) -> AnyTensor:
    if not (_dt.is_float(x.dtype) or _dt.is_integer(x.dtype)):
        raise dtype_error(_NAME, f"the query points must be real numbers, got {x.aval}")
    return x.astype(dtype) if x.dtype != dtype else x


@op
def _RegularGridInterpolator(  # noqa: N802 - its errors name the class
    grid: tuple[AnyTensor, ...], values: AnyTensor, fill_value: Any, xi: Any, method: str) -> AnyTensor:
    ndim = len(grid)
    points = _query_points(xi, ndim, values.dtype)
    if points.shape[-1] != ndim:
        raise shape_error(_NAME, f"the query points {points.aval} have {points.shape[-1]} coordinates, but the "
                                 f"interpolator has {ndim} dimensions")
    flat = tnp.reshape(points, (-1, ndim))
    cells = [_cell(g, flat[:, k]) for k, g in enumerate(grid)]
    result = _linear(values, cells) if method == "linear" else _nearest(values, cells)
    if fill_value is not None:
        fill: AnyTensor = wrap(atom(fill_value, values.dtype, _NAME))
        if fill.ndim != 0:
            raise shape_error(_NAME, f"fill_value must be a scalar, got {describe(fill_value)}")
        fill = fill.astype(values.dtype) if fill.dtype != values.dtype else fill
        outside = functools.reduce(operator.or_, [out for _, _, out in cells])
        result = tnp.where(tnp.reshape(outside, (-1,) + (1,) * (result.ndim - 1)), fill, result)
    return tnp.reshape(result, points.shape[:-1] + values.shape[ndim:])


def _cell(g: AnyTensor, x: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """Per query coordinate: the index of its cell's lower corner, its position in the cell (0 to 1), and
    whether it lies outside the axis."""
    n = g.shape[0]
    i = tnp.clip(tnp.searchsorted(g, x) - 1, 0, n - 2)
    lower = g[i]
    position = (x - lower) / (g[i + 1] - lower)
    return i, position, (x < g[0]) | (x > g[n - 1])


def _trailing(weight: AnyTensor, values: AnyTensor, ndim: int) -> AnyTensor:
    return tnp.reshape(weight, weight.shape + (1,) * (values.ndim - ndim))


def _linear(values: AnyTensor, cells: Sequence[tuple[AnyTensor, AnyTensor, AnyTensor]]) -> AnyTensor:
    """The sum over the cell's corners of value times the product of the per-axis weights (1 - t, t)."""
    terms = []
    for corner in itertools.product((0, 1), repeat=len(cells)):
        index = tuple(i + c for (i, _, _), c in zip(cells, corner))
        weights = [t if c else 1 - t for (_, t, _), c in zip(cells, corner)]
        terms.append(values[index] * _trailing(functools.reduce(operator.mul, weights), values, len(cells)))
    return functools.reduce(operator.add, terms)


def _nearest(values: AnyTensor, cells: Sequence[tuple[AnyTensor, AnyTensor, AnyTensor]]) -> AnyTensor:
    return values[tuple(tnp.where(t <= 0.5, i, i + 1) for i, t, _ in cells)]


def _flatten(r: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (r.grid, r.values, r.fill_value), (r.method, r.bounds_error)


def _unflatten(aux: Any, children: list[Any]) -> RegularGridInterpolator:
    r = RegularGridInterpolator.__new__(RegularGridInterpolator)
    r.grid, r.values, r.fill_value = children
    r.method, r.bounds_error = aux
    return r


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
