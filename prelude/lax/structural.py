"""``lax``'s shape and data-movement functions on the structural and slicing primitives: conversions, broadcasts,
reshapes, static and dynamic slices and updates, padding, reversal, concatenation, iota, select and clamp.

As in JAX: ``dynamic_slice`` and ``dynamic_update_slice`` clamp their start indices so the window stays inside the
operand; ``pad`` takes ``(low, high, interior)`` per axis, negative low/high cropping; ``reshape``'s
``dimensions`` transposes first; results of a known shape keep the operand's dim names where the axis is unchanged.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, bool_
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, shape_error, wrap
from ..numpy._core import op
from ._operands import checked_axis, dtype_argument, strict_atoms

__all__ = [
    "bitcast_convert_type", "broadcast", "broadcast_in_dim", "broadcasted_iota", "clamp", "concatenate",
    "convert_element_type", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "expand_dims", "full",
    "full_like", "index_in_dim", "iota", "pad", "reshape", "rev", "select", "slice", "slice_in_dim", "squeeze",
    "transpose",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
Sh = TypeVarTuple("Sh")
Index = int | Tensor[Any]


def _ints(name: str, what: str, values: Any) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"lax.{name}: {what} must be a sequence of Python ints, got {values!r}") from None


def _index_atoms(starts: Sequence[Index]) -> list[Atom | int]:
    return [s if isinstance(s, int) else as_tensor(s).atom for s in starts]


# ------------------------------------------------------------------------------------------------ dtypes


@overload
def convert_element_type(operand: Tensor[Any, Unpack[Sh]], new_dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
@overload
def convert_element_type(operand: Tensor[Any, Unpack[Sh]], new_dtype: Any) -> Tensor[Any, Unpack[Sh]]: ...
@op
def convert_element_type(operand: AnyTensor, new_dtype: Any) -> AnyTensor:
    """``operand`` converted to ``new_dtype`` (float to integer rounds toward zero; complex to real is refused)."""
    return wrap(E.convert(as_tensor(operand).atom, dtype_argument("convert_element_type", new_dtype)))


@op
def bitcast_convert_type(operand: AnyTensor, new_dtype: Any) -> AnyTensor:
    """``operand``'s bits read as ``new_dtype``; a narrower type adds a trailing axis, a wider one consumes it."""
    return wrap(E.bitcast_convert(as_tensor(operand).atom, dtype_argument("bitcast_convert_type", new_dtype)))


# ---------------------------------------------------------------------------------------- broadcasts, shapes


@op
def broadcast_in_dim(operand: Tensor[DT, Unpack[tuple[Any, ...]]], shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand`` broadcast to ``shape``, its axis i becoming the result's axis ``broadcast_dimensions[i]``."""
    sizes = _ints("broadcast_in_dim", "shape", shape)
    dims = _ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    return wrap(S.broadcast_in_dim(as_tensor(operand).atom, sizes, dims))


@op
def broadcast(operand: Tensor[DT, Unpack[tuple[Any, ...]]], sizes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand`` with new leading axes of ``sizes``."""
    x = as_tensor(operand).atom
    lead = _ints("broadcast", "sizes", sizes)
    shape = (*lead, *x.aval.shape)
    names = (None,) * len(lead) + tuple(x.aval.dims)
    return wrap(S.broadcast_in_dim(x, shape, tuple(range(len(lead), len(shape))), names))


@op
def reshape(operand: Tensor[DT, Unpack[tuple[Any, ...]]], new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand`` in row-major order as ``new_sizes``; with ``dimensions``, transposed to that order first."""
    x = as_tensor(operand).atom
    if dimensions is not None:
        x = S.transpose(x, _ints("reshape", "dimensions", dimensions))
    sizes = _ints("reshape", "new_sizes", new_sizes)
    if int(np.prod(sizes)) != x.aval.size:
        raise shape_error("reshape", f"lax.reshape cannot make {x.aval} into {sizes}: the sizes differ")
    return wrap(S.reshape(x, sizes))


@op
def transpose(operand: Tensor[DT, Unpack[tuple[Any, ...]]], permutation: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand``'s axes in the order ``permutation`` (a permutation of all of them)."""
    return wrap(S.transpose(as_tensor(operand).atom, _ints("transpose", "permutation", permutation)))


@op
def squeeze(array: Tensor[DT, Unpack[tuple[Any, ...]]], dimensions: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``array`` without the size-1 axes ``dimensions``."""
    x = as_tensor(array).atom
    axes = {checked_axis("squeeze", d, x.aval.ndim) for d in _ints("squeeze", "dimensions", dimensions)}
    for d in sorted(axes):
        if x.aval.shape[d] != 1:
            raise shape_error("squeeze", f"lax.squeeze: axis {d} of {x.aval} has size {x.aval.shape[d]}, not 1")
    keep = [i for i in range(x.aval.ndim) if i not in axes]
    return wrap(S.reshape(x, [x.aval.shape[i] for i in keep], [x.aval.dims[i] for i in keep]))


@op
def expand_dims(array: Tensor[DT, Unpack[tuple[Any, ...]]], dimensions: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``array`` with size-1 axes inserted at ``dimensions`` (positions in the result)."""
    x = as_tensor(array).atom
    ndim = x.aval.ndim + len(dimensions)
    axes = {checked_axis("expand_dims", d, ndim) for d in _ints("expand_dims", "dimensions", dimensions)}
    if len(axes) != len(dimensions):
        raise shape_error("expand_dims", f"lax.expand_dims: repeated dimensions {tuple(dimensions)}")
    sizes, names = iter(x.aval.shape), iter(x.aval.dims)
    shape = [1 if i in axes else next(sizes) for i in range(ndim)]
    dims = [None if i in axes else next(names) for i in range(ndim)]
    return wrap(S.reshape(x, shape, dims))


@op
def iota(dtype: Any, size: int) -> AnyTensor:
    """``0, 1, ..., size - 1`` in ``dtype``."""
    return wrap(SL.iota(dtype_argument("iota", dtype), (operator.index(size),)))


@op
def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> AnyTensor:
    """Each element's index along ``dimension``, in ``dtype``, over ``shape``."""
    sizes = _ints("broadcasted_iota", "shape", shape)
    return wrap(SL.iota(dtype_argument("broadcasted_iota", dtype), sizes, checked_axis("broadcasted_iota", dimension, len(sizes))))


@op
def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> AnyTensor:
    """A tensor of ``shape`` filled with ``fill_value`` (``dtype`` defaults to the fill value's)."""
    sizes = _ints("full", "shape", shape)
    return tnp.full(sizes, fill_value, dtype=None if dtype is None else dtype_argument("full", dtype))


@op
def full_like(x: AnyTensor, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> AnyTensor:
    """A tensor like ``x`` (its shape and dtype unless given) filled with ``fill_value``."""
    aval = as_tensor(x).aval
    return full(aval.shape if shape is None else shape, fill_value, aval.dtype if dtype is None else dtype)


# ---------------------------------------------------------------------------------------- select and clamp


@op
def select(pred: Tensor[bool_, Unpack[Sh]] | Tensor[bool_], on_true: Tensor[DT, Unpack[Sh]],
           on_false: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """``on_true`` where ``pred`` holds, else ``on_false`` (one shape; ``pred`` may be rank 0)."""
    a, b = strict_atoms("select", on_true, on_false)
    return wrap(bind(E.select_p, as_tensor(pred).atom, a, b))


@op
def clamp(min: Tensor[DT] | Tensor[DT, Unpack[Sh]] | float, x: Tensor[DT, Unpack[Sh]],  # noqa: A002 - lax's names
          max: Tensor[DT] | Tensor[DT, Unpack[Sh]] | float) -> Tensor[DT, Unpack[Sh]]:  # noqa: A002
    """``x`` limited to ``[min, max]`` (bounds rank 0 or of ``x``'s shape)."""
    lo, value, hi = strict_atoms("clamp", min, x, max)
    return wrap(E.clamp(lo, value, hi))


# -------------------------------------------------------------------------------------------------- slices


@op
def slice(operand: Tensor[DT, Unpack[tuple[Any, ...]]], start_indices: Sequence[int],  # noqa: A001 - lax's name
          limit_indices: Sequence[int], strides: Sequence[int] | None = None) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand[start:limit:stride]`` on every axis (static bounds)."""
    starts = _ints("slice", "start_indices", start_indices)
    limits = _ints("slice", "limit_indices", limit_indices)
    steps = None if strides is None else _ints("slice", "strides", strides)
    return wrap(SL.slice_(as_tensor(operand).atom, starts, limits, steps))


@op
def slice_in_dim(operand: Tensor[DT, Unpack[tuple[Any, ...]]], start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand[start:limit:stride]`` along ``axis``; None and negative bounds as Python's."""
    x = as_tensor(operand).atom
    ax = checked_axis("slice_in_dim", axis, x.aval.ndim)
    start, limit, _ = builtins.slice(start_index, limit_index).indices(x.aval.shape[ax])
    starts, limits, steps = [0] * x.aval.ndim, list(x.aval.shape), [1] * x.aval.ndim
    starts[ax], limits[ax], steps[ax] = start, max(start, limit), stride
    return wrap(SL.slice_(x, starts, limits, steps))


@op
def index_in_dim(operand: Tensor[DT, Unpack[tuple[Any, ...]]], index: int, axis: int = 0,
                 keepdims: bool = True) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """Element ``index`` (negative from the end) along ``axis``, keeping that axis with size 1 unless told not."""
    x = as_tensor(operand).atom
    ax = checked_axis("index_in_dim", axis, x.aval.ndim)
    size = x.aval.shape[ax]
    if not -size <= index < size:
        raise shape_error("index_in_dim", f"lax.index_in_dim: index {index} is out of range for axis {ax} of {x.aval}")
    out = SL.slice_in_dim(x, index % size, index % size + 1, ax)
    return wrap(out) if keepdims else squeeze(wrap(out), (ax,))


@op
def dynamic_slice(operand: Tensor[DT, Unpack[tuple[Any, ...]]], start_indices: Sequence[Index],
                  slice_sizes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """The window of ``slice_sizes`` at ``start_indices`` (scalars, staged or not; clamped into range)."""
    sizes = _ints("dynamic_slice", "slice_sizes", slice_sizes)
    return wrap(SL.dynamic_slice(as_tensor(operand).atom, _index_atoms(start_indices), sizes))


@op
def dynamic_update_slice(operand: Tensor[DT, Unpack[Sh]], update: Tensor[DT, Unpack[tuple[Any, ...]]],
                         start_indices: Sequence[Index]) -> Tensor[DT, Unpack[Sh]]:
    """``operand`` with ``update`` written at ``start_indices`` (clamped so the update fits)."""
    x, u = strict_atoms("dynamic_update_slice", operand, update)
    return wrap(SL.dynamic_update_slice(x, u, _index_atoms(start_indices)))


def _window(name: str, x: Atom, axis: int, start: Index, size: int) -> tuple[list[Index], list[int]]:
    ax = checked_axis(name, axis, x.aval.ndim)
    starts: list[Index] = [0] * x.aval.ndim
    sizes = list(x.aval.shape)
    starts[ax], sizes[ax] = start, size
    return starts, sizes


@op
def dynamic_slice_in_dim(operand: Tensor[DT, Unpack[tuple[Any, ...]]], start_index: Index, slice_size: int,
                         axis: int = 0) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``slice_size`` elements from ``start_index`` along ``axis`` (clamped into range)."""
    x = as_tensor(operand).atom
    starts, sizes = _window("dynamic_slice_in_dim", x, axis, start_index, operator.index(slice_size))
    return dynamic_slice(wrap(x), starts, sizes)


@op
def dynamic_index_in_dim(operand: Tensor[DT, Unpack[tuple[Any, ...]]], index: Index, axis: int = 0,
                         keepdims: bool = True) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """Element ``index`` (staged or not; clamped) along ``axis``, keeping that axis with size 1 unless told not."""
    x = as_tensor(operand).atom
    out = dynamic_slice_in_dim(wrap(x), index, 1, axis)
    return out if keepdims else squeeze(out, (checked_axis("dynamic_index_in_dim", axis, x.aval.ndim),))


@op
def dynamic_update_slice_in_dim(operand: Tensor[DT, Unpack[Sh]], update: Tensor[DT, Unpack[tuple[Any, ...]]],
                                start_index: Index, axis: int) -> Tensor[DT, Unpack[Sh]]:
    """``operand`` with ``update`` written from ``start_index`` along ``axis`` (clamped so it fits)."""
    x = as_tensor(operand).atom
    starts, _ = _window("dynamic_update_slice_in_dim", x, axis, start_index, 0)
    return dynamic_update_slice(wrap(x), update, starts)


@op
def dynamic_update_index_in_dim(operand: Tensor[DT, Unpack[Sh]], update: Tensor[DT, Unpack[tuple[Any, ...]]],
                                index: Index, axis: int) -> Tensor[DT, Unpack[Sh]]:
    """``operand`` with ``update`` (with or without the size-1 ``axis``) written at ``index`` along ``axis``."""
    x = as_tensor(operand).atom
    u: AnyTensor = as_tensor(update)
    if u.ndim == x.aval.ndim - 1:
        u = expand_dims(u, (checked_axis("dynamic_update_index_in_dim", axis, x.aval.ndim),))
    return dynamic_update_slice_in_dim(wrap(x), u, index, axis)


# ------------------------------------------------------------------------------- padding, reversal, joining


@op
def pad(operand: Tensor[DT, Unpack[tuple[Any, ...]]], padding_value: Tensor[DT] | float,
        padding_config: Sequence[tuple[int, int, int]]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand`` with ``(low, high, interior)`` elements of ``padding_value`` per axis (negative low/high crop)."""
    x, value = strict_atoms("pad", operand, padding_value)
    if value.aval.shape:
        raise shape_error("pad", f"lax.pad: the padding value must be a scalar, got {value.aval}")
    config = [_ints("pad", "each padding_config entry", entry) for entry in padding_config]
    if len(config) != x.aval.ndim or any(len(c) != 3 for c in config):
        raise shape_error("pad", f"lax.pad needs one (low, high, interior) triple per axis of {x.aval}, got {padding_config!r}")
    return wrap(SL.pad(x, value, [(c[0], c[1], c[2]) for c in config]))


@op
def rev(operand: Tensor[DT, Unpack[Sh]], dimensions: Sequence[int]) -> Tensor[DT, Unpack[Sh]]:
    """``operand`` reversed along ``dimensions``."""
    x = as_tensor(operand).atom
    axes = tuple(checked_axis("rev", d, x.aval.ndim) for d in _ints("rev", "dimensions", dimensions))
    return wrap(SL.rev(x, axes))


@op
def concatenate(operands: Sequence[Tensor[DT, Unpack[tuple[Any, ...]]]], dimension: int) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operands`` (of one dtype, equal but for ``dimension``) joined along ``dimension``."""
    if not operands:
        raise ValueError("lax.concatenate needs at least one operand")
    atoms = strict_atoms("concatenate", *operands)
    return wrap(SL.concatenate(atoms, checked_axis("concatenate", dimension, atoms[0].aval.ndim)))
