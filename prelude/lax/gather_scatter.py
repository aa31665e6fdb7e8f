"""``lax.gather`` and the ``lax.scatter`` family with JAX's dimension numbers and out-of-bounds modes, on the
``gather`` and ``scatter`` primitives. As in JAX the index vector is the last axis of the indices.

Modes: ``FILL_OR_DROP`` (``"fill"`` or ``"drop"``; scatters' default) gives ``fill_value`` for a gathered window
that does not fit (NaN for inexact dtypes, the most negative value for signed integers, the largest for unsigned
ones, True for bool) and drops scattered windows that do not fit; ``CLIP`` moves windows into range;
``PROMISE_IN_BOUNDS`` (gathers' default, as in JAX) is XLA's own behaviour: gathers clamp, scatters drop.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import gather_scatter as G
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ..numpy._core import as_tensor, dtype_error, op, wrap
from ._operands import strict_atoms

__all__ = [
    "GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
    "scatter_max", "scatter_min", "scatter_mul", "scatter_sub",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


class GatherDimensionNumbers(NamedTuple):
    """JAX's gather dimension numbers (the index vector is the indices' last axis)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """JAX's scatter dimension numbers (the index vector is the indices' last axis)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that does not fit in the operand."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode: str | GatherScatterMode | None) -> GatherScatterMode:
        if mode is None:
            return GatherScatterMode.FILL_OR_DROP
        if isinstance(mode, GatherScatterMode):
            return mode
        try:
            return GatherScatterMode("fill" if mode == "drop" else mode)
        except ValueError:
            raise ValueError(
                f"mode must be 'clip', 'fill', 'drop', 'promise_in_bounds' or a GatherScatterMode, got {mode!r}"
            ) from None


def _indices(name: str, start_indices: Any) -> Atom:
    idx = as_tensor(start_indices).atom
    if not _dt.is_integer(idx.aval.dtype) or not idx.aval.shape:
        raise dtype_error(name, f"lax.{name} needs integer indices with the index vector as their last axis, got {idx.aval}")
    return idx


def _ints(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _fits(idx: Atom, index_map: Sequence[int], shape: Sequence[int], window: Sequence[int]) -> Atom:
    """Per index row (the indices without their last axis): whether its window lies inside the operand."""
    top = np.array([shape[a] - window[a] for a in index_map], dtype=idx.aval.dtype)
    vector = idx.aval.ndim - 1
    bound = S.broadcast_in_dim(literal(top, idx.aval.dtype), idx.aval.shape, (vector,), idx.aval.dims)
    inside = bind(E.and_p, bind(E.ge_p, idx, E.scalar(0, idx)), bind(E.le_p, idx, bound))
    return R.reduce_min(inside, (vector,))  # every coordinate inside (bool: False < True)


def _fill(dtype: np.dtype[Any], value: Any) -> Any:
    if value is not None:
        return value
    if _dt.is_inexact(dtype):
        return np.nan
    if dtype == _dt.BOOL:
        return True
    info = np.iinfo(dtype)
    return info.min if _dt.is_signed(dtype) else info.max


@op
def gather(operand: AnyTensor, start_indices: AnyTensor, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False, indices_are_sorted: bool = False,
           mode: str | GatherScatterMode | None = None, fill_value: Any = None) -> AnyTensor:
    """Windows of ``slice_sizes`` from ``operand`` at the starts in ``start_indices`` (JAX's ``lax.gather``).
    ``unique_indices`` and ``indices_are_sorted`` are hints, accepted and unused."""
    x = as_tensor(operand).atom
    idx = _indices("gather", start_indices)
    dn = GatherDimensionNumbers(*(_ints(d) for d in dimension_numbers))
    sizes = _ints(slice_sizes)
    dims = G.GatherDims(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map, idx.aval.ndim - 1,
                        dn.operand_batching_dims, dn.start_indices_batching_dims)
    out = G.gather(x, idx, dims, sizes)
    if mode is None or GatherScatterMode.from_any(mode) is not GatherScatterMode.FILL_OR_DROP:
        return wrap(out)  # XLA clamps the starts: CLIP, and what PROMISE_IN_BOUNDS leaves to it
    fits = _fits(idx, dn.start_index_map, x.aval.shape, sizes)
    row_axes = tuple(a for a in range(out.aval.ndim) if a not in dn.offset_dims)
    mask = S.broadcast_in_dim(fits, out.aval.shape, row_axes)
    filler = S.full_like(out, _fill(x.aval.dtype, fill_value))
    return wrap(bind(E.select_p, mask, out, filler))


def _scatter(name: str, combiner: str, operand: Any, scatter_indices: Any, updates: Any,
             dimension_numbers: ScatterDimensionNumbers, mode: str | GatherScatterMode | None) -> AnyTensor:
    x, u = strict_atoms(name, operand, updates)
    idx = _indices(name, scatter_indices)
    dn = ScatterDimensionNumbers(*(_ints(d) for d in dimension_numbers))
    dims = G.ScatterDims(dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
                         idx.aval.ndim - 1, dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP:  # XLA drops what does not fit: move it instead
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        window = iter(u.aval.shape[a] for a in dn.update_window_dims)
        sizes = [1 if a in dropped else next(window) for a in range(x.aval.ndim)]
        idx = G.clamp_starts(idx, G.gather_dims_of(dims), x.aval, sizes)
    return wrap(G.scatter(x, idx, u, dims, combiner))


def _scatter_op(name: str, combiner: str, negate: bool = False) -> Any:
    def fn(operand: AnyTensor, scatter_indices: AnyTensor, updates: AnyTensor,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: str | GatherScatterMode | None = None) -> AnyTensor:
        if negate:
            updates = wrap(E.neg(as_tensor(updates).atom))
        return _scatter(name, combiner, operand, scatter_indices, updates, dimension_numbers, mode)

    fn.__name__ = fn.__qualname__ = name
    verb = {"set": "written into", "add": "added to", "mul": "multiplied into", "min": "min-combined into",
            "max": "max-combined into"}[combiner]
    fn.__doc__ = (f"``operand`` with ``updates`` {verb} the windows at ``scatter_indices``"
                  f"{' (negated: subtracted)' if negate else ''} (JAX's ``lax.{name}``); the two hints are unused.")
    return op(fn)


scatter = _scatter_op("scatter", "set")
scatter_add = _scatter_op("scatter_add", "add")
scatter_sub = _scatter_op("scatter_sub", "add", negate=True)
scatter_mul = _scatter_op("scatter_mul", "mul")
scatter_min = _scatter_op("scatter_min", "min")
scatter_max = _scatter_op("scatter_max", "max")
