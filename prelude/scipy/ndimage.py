"""``tensorstage.scipy.ndimage``: JAX's ``jax.scipy.ndimage``: ``map_coordinates`` of order 0 (nearest) and 1
(linear).

Each output point gathers its ``2^N`` (order 1) or one (order 0) neighbours and sums them with the product of
the per-axis weights; the modes fold out-of-range indices as JAX does ('constant' and 'wrap' are SciPy's
'grid-constant' and 'grid-wrap'; see JAX's note), so ``grad`` (in the input, and in the coordinates for order 1)
and ``vmap`` follow from gather's rules.

Deliberate differences from JAX: the coordinates must be floating-point or integer tensors of one shape (JAX
broadcasts them); the weights are computed in the input's dtype for a floating-point input (JAX: in the
coordinates' dtype, then promoted); an integer input is interpolated in the coordinates' float dtype (f32 for
integer coordinates) and rounded half away from zero back to its dtype, as JAX.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from typing_extensions import Unpack

from ...dtypes import DType
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import lax
from .. import numpy as tnp
from ..numpy._core import as_tensor, atom, describe, dtype_error, op, shape_error, wrap

__all__ = ["map_coordinates"]

DT = TypeVar("DT", bound=DType)
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Mode = Literal["constant", "nearest", "wrap", "mirror", "reflect"]


def _mirror(index: AnyTensor, size: int) -> AnyTensor:
    """Indices folded into ``[0, size)`` by a triangular wave of half-period ``size - 1`` (… 2 1 0 1 2 …)."""
    if size == 1:
        return index * 0
    s = size - 1
    return tnp.abs((index + s) % (2 * s) - s)


def _reflect(index: AnyTensor, size: int) -> AnyTensor:
    """Indices folded with the edge repeated (… 1 0 0 1 2 …)."""
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_FOLDS: dict[str, Callable[[AnyTensor, int], AnyTensor]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: tnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}

Node = tuple[AnyTensor, AnyTensor | None]  # (index, weight): None weights 1


def _nearest(coordinate: AnyTensor, dtype: np.dtype[Any]) -> list[Node]:
    rounded = coordinate if _dt.is_integer(coordinate.dtype) else lax.round(coordinate)
    return [(rounded.astype(np.int32), None)]


def _linear(coordinate: AnyTensor, dtype: np.dtype[Any]) -> list[Node]:
    c = coordinate.astype(dtype) if coordinate.dtype != dtype else coordinate
    lower = tnp.floor(c)
    upper_weight = c - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@op
def map_coordinates(
    input: Tensor[DT, Unpack[tuple[Any, ...]]],  # noqa: A002 - SciPy's name
    coordinates: Sequence[Tensor[Any, Unpack[tuple[Any, ...]]]], order: int, mode: Mode = "constant",
    cval: float | Tensor[Any] = 0.0,
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``input`` interpolated at ``coordinates`` (one tensor per axis of ``input``, all of one shape, which is the
    result's): ``order`` 0 (nearest) or 1 (linear); points outside take ``cval`` ('constant') or are folded back
    ('nearest', 'wrap', 'mirror', 'reflect')."""
    name = "map_coordinates"
    x = as_tensor(input)
    if isinstance(coordinates, Tensor) or not isinstance(coordinates, (list, tuple)):
        raise TypeError(f"{name}: coordinates must be a sequence of {x.ndim} tensors (one per axis of {x.aval}), "
                        f"got {describe(coordinates)}")
    points = [as_tensor(c) for c in coordinates]
    if len(points) != x.ndim:
        raise shape_error(name, f"coordinates must be a sequence of length input.ndim: {len(points)} tensors for "
                                f"input {x.aval}")
    for c in points:
        if c.shape != points[0].shape:
            raise shape_error(name, f"the coordinates must have one shape, got {', '.join(map(describe, points))}")
        if not (_dt.is_float(c.dtype) or _dt.is_integer(c.dtype)):
            raise dtype_error(name, f"coordinates must be floating-point or integer, got {c.aval}")
    fold = _FOLDS.get(mode) if isinstance(mode, str) else None
    if fold is None:
        raise ValueError(f"{name}: mode must be one of {', '.join(map(repr, _FOLDS))}, got {mode!r}")
    if order not in (0, 1) or isinstance(order, bool):
        raise ValueError(f"{name}: order must be 0 (nearest) or 1 (linear), got {order!r}")
    if x.ndim == 0:
        return x
    if x.size == 0:
        raise ValueError(f"{name}: the input is empty: {x.aval}")
    dtype = _work_dtype(name, x, points)
    values = x.astype(dtype) if x.dtype != dtype else x
    fill = wrap(atom(cval, dtype, name))
    if fill.ndim != 0 or fill.dtype != dtype:
        raise dtype_error(name, f"cval must be a number or a 0-d {_dt.short_name(dtype)} tensor, got {describe(cval)}")
    nodes = _nearest if order == 0 else _linear
    per_axis = [[(fold(i, n), (0 <= i) & (i < n) if mode == "constant" else None, w) for i, w in nodes(c, dtype)]
                for c, n in zip(points, x.shape)]
    terms = [_term(values, fill, combination) for combination in itertools.product(*per_axis)]
    result = functools.reduce(operator.add, terms)
    if _dt.is_integer(x.dtype) or x.dtype == _dt.BOOL:
        return lax.round(result).astype(x.dtype)
    return result


def _term(values: AnyTensor, fill: AnyTensor, nodes: Sequence[tuple[AnyTensor, Any, Any]]) -> AnyTensor:
    """One neighbour's contribution: its value (``fill`` where any index is out of range) times its weight."""
    picked = values[tuple(index for index, _, _ in nodes)]
    valid = [v for _, v, _ in nodes if v is not None]
    if valid:
        picked = tnp.where(functools.reduce(operator.and_, valid), picked, fill)
    weights = [w for _, _, w in nodes if w is not None]
    return functools.reduce(operator.mul, weights) * picked if weights else picked  # JAX's order of products


def _work_dtype(name: str, x: AnyTensor, points: Sequence[AnyTensor]) -> np.dtype[Any]:
    """The input's dtype when floating-point; for integer input, the coordinates' float dtype (else f32)."""
    if _dt.is_float(x.dtype):
        return np.dtype(x.dtype)
    if _dt.is_complex(x.dtype):
        raise dtype_error(name, f"{name} needs a real input, got {x.aval}; interpolate .real and .imag")
    floats = {np.dtype(c.dtype) for c in points if _dt.is_float(c.dtype)}
    if len(floats) > 1:
        raise dtype_error(name, f"the coordinates have different float dtypes: {', '.join(map(describe, points))}")
    return floats.pop() if floats else np.dtype(np.float32)
