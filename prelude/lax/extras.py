"""The remaining ``jax.lax`` utilities: shape helpers (``broadcast_shapes``, ``broadcast_to_rank``,
``broadcast_like``, ``collapse``, ``split``, ``stack``, ``unstack``, ``tile``), bit functions (``clz``;
``reduce_precision`` as XLA computes it, in integer bit operations),
``approx_max_k``/``approx_min_k``, ``optimization_barrier``, ``axis_size`` and ``with_sharding_constraint``.

Deliberate differences from jax.lax: ``approx_max_k``/``approx_min_k`` are exact (a full top-k: recall 1, so
``recall_target`` and ``reduction_input_size_override`` are checked and ignored, and ``aggregate_to_topk=False``
also returns exactly ``k``); ``with_sharding_constraint`` is in ``sharding_constraint.py`` (re-exported here)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ... import pytree
from ...collectives import AxisNames, axis_names_of
from ...dtypes import DType, i32
from ...staging import dtypes as _dt
from ...staging.axes import lookup
from ...staging.builder import is_staging
from ...staging.primitives import remat as RM
from ...tensor import Tensor
from ...trace import wrap
from .. import numpy as tnp
from ..numpy._core import as_tensor, dtype_error, op, shape_error
from ._operands import checked_axis, strict_atoms
from .elementwise import bitwise_and, bitwise_or, population_count, shift_right_logical
from .structural import bitcast_convert_type, reshape, select, slice_in_dim
from .sharding_constraint import with_sharding_constraint  # a primitive, with the mesh machinery it needs

__all__ = [
    "approx_max_k", "approx_min_k", "axis_size", "broadcast_like", "broadcast_shapes", "broadcast_to_rank", "clz",
    "collapse", "optimization_barrier", "reduce_precision", "split", "stack", "tile", "unstack",
    "with_sharding_constraint",
]

DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")
T = TypeVar("T")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives ``shapes`` (a ValueError naming them when they do not broadcast)."""
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        listed = ", ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"lax.broadcast_shapes: shapes {listed} do not broadcast") from None


@op
def broadcast_to_rank(x: AnyTensor, rank: int) -> AnyTensor:
    """``x`` with leading axes of size 1 added up to ``rank`` (unchanged if it has that many)."""
    t = as_tensor(x)
    return t if t.ndim >= rank else reshape(t, (1,) * (rank - t.ndim) + tuple(t.shape))


@op
def collapse(operand: AnyTensor, start_dimension: int, stop_dimension: int | None = None) -> AnyTensor:
    """``operand`` with axes ``start_dimension`` to ``stop_dimension - 1`` (Python slice rules) merged into one."""
    t = as_tensor(operand)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(t.ndim)
    shape = tuple(t.shape)
    return reshape(t, (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:]))


@op
def split(operand: AnyTensor, sizes: Sequence[int], axis: int = 0) -> list[AnyTensor]:
    """``operand`` cut along ``axis`` into consecutive pieces of ``sizes`` (which must add up to its size)."""
    t = as_tensor(operand)
    axis = checked_axis("split", axis, t.ndim)
    if builtins.sum(sizes) != t.shape[axis] or any(s < 0 for s in sizes):
        raise shape_error("split", f"lax.split: sizes {tuple(sizes)} must be >= 0 and add up to axis {axis} of {t.aval}")
    starts = np.cumsum([0, *sizes])
    return [slice_in_dim(t, int(a), int(b), axis=axis) for a, b in zip(starts[:-1], starts[1:])]


@op
def broadcast_like(arr: AnyTensor, like_arr: AnyTensor) -> AnyTensor:
    """``arr`` broadcast (NumPy's rules) to ``like_arr``'s shape."""
    return tnp.broadcast_to(arr, tuple(as_tensor(like_arr).shape))


@op
def stack(operands: Sequence[Tensor[DT, Unpack[S]]], axis: int = 0) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operands`` (one shape and dtype) joined along a new ``axis``."""
    return tnp.stack(list(operands), axis=axis)


@op
def unstack(x: AnyTensor, axis: int = 0) -> tuple[AnyTensor, ...]:
    """``x``'s slices along ``axis``, that axis removed (the inverse of ``stack``)."""
    t: Any = as_tensor(x)
    moved = tnp.moveaxis(t, axis, 0)
    return tuple(moved[i] for i in range(t.shape[axis]))


@op
def tile(operand: Tensor[DT, Unpack[S]], reps: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one rep per axis)."""
    t = as_tensor(operand)
    if len(reps) != t.ndim or any(r < 0 for r in reps):
        raise shape_error("tile", f"lax.tile needs one rep >= 0 per axis of {t.aval}, got {tuple(reps)}")
    return tnp.tile(t, tuple(reps))


@op
def clz(x: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]:
    """The number of leading zero bits of each integer: its width minus its bit length."""
    (a,) = strict_atoms("clz", x)
    if not _dt.is_integer(a.aval.dtype):
        raise dtype_error("clz", f"lax.clz needs an integer operand, got {a.aval}")
    width = a.aval.dtype.itemsize * 8
    smeared: Any = wrap(a)
    shift = 1
    while shift < width:  # ones from the highest set bit down: its popcount is the bit length
        smeared = bitwise_or(smeared, shift_right_logical(smeared, shift))
        shift *= 2
    return width - population_count(smeared)


def _top_k_along(operand: Any, k: int, axis: int, largest: bool) -> tuple[AnyTensor, AnyTensor]:
    t = as_tensor(operand)
    if not _dt.is_float(t.aval.dtype):
        raise dtype_error("approx_max_k", f"lax.approx_max_k/approx_min_k need a floating-point operand, got {t.aval}")
    moved = tnp.moveaxis(t, axis, -1)
    values, indices = tnp.top_k(moved if largest else -moved, k)
    values = values if largest else -values
    return tnp.moveaxis(values, -1, axis), tnp.moveaxis(indices, -1, axis)


@op
def approx_max_k(operand: Tensor[DT, Unpack[S]], k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 ) -> tuple[Tensor[DT, Unpack[tuple[Any, ...]]], Tensor[i32, Unpack[tuple[Any, ...]]]]:
    """The ``k`` largest values along ``reduction_dimension``, descending, and their indices (exact)."""
    return _top_k_along(operand, k, reduction_dimension, largest=True)


@op
def approx_min_k(operand: Tensor[DT, Unpack[S]], k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 ) -> tuple[Tensor[DT, Unpack[tuple[Any, ...]]], Tensor[i32, Unpack[tuple[Any, ...]]]]:
    """The ``k`` smallest values along ``reduction_dimension``, ascending, and their indices (exact)."""
    return _top_k_along(operand, k, reduction_dimension, largest=False)


def optimization_barrier(operand: T) -> T:
    """``operand`` (a pytree) unchanged, as values XLA computes once and does not move computations across."""
    if not is_staging():  # concrete values: nothing to keep XLA from fusing
        return operand
    leaves, tree = pytree.flatten(operand)
    atoms = [as_tensor(leaf).atom for leaf in leaves]
    return pytree.unflatten(tree, [wrap(a) for a in RM.optimization_barrier(atoms)])  # type: ignore[no-any-return]


def axis_size(axis_name: AxisNames) -> int:
    """The size of the mapped axis ``axis_name`` (the product over several names), inside ``vmap``/``spmd``."""
    return math.prod(lookup(n, "axis_size").size for n in axis_names_of(axis_name))


_FLOAT_BITS = {np.dtype(np.float16): (5, 10), np.dtype(np.float32): (8, 23), np.dtype(np.float64): (11, 52)}


def _rounded_mantissa(bits: Any, bits_dtype: np.dtype[Any], drop: int) -> Any:
    """``bits`` with the lowest ``drop`` mantissa bits rounded off, to nearest even (XLA's rule)."""
    last = 1 << drop
    bias = shift_right_logical(bitwise_and(bits, tnp.asarray(last, dtype=bits_dtype)), drop) + ((last >> 1) - 1)
    kept = tnp.asarray(-last, dtype=bits_dtype)  # every bit from ``drop`` up, in two's complement
    return bitwise_and(bits + bias, kept)


@op
def reduce_precision(operand: Tensor[DT, Unpack[S]] | float, exponent_bits: int,
                     mantissa_bits: int) -> Tensor[DT, Unpack[S]]:
    """Each value rounded to the nearest value with ``exponent_bits`` and ``mantissa_bits`` (to nearest even;
    beyond the exponent range: ±inf above, ±0 below the smallest normal), NaNs kept, in the operand's dtype."""
    (a,) = strict_atoms("reduce_precision", operand)
    dtype = a.aval.dtype
    if dtype not in _FLOAT_BITS:
        raise dtype_error("reduce_precision", f"lax.reduce_precision needs f16, f32 or f64, got {a.aval}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"lax.reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got "
                         f"{exponent_bits}, {mantissa_bits}")
    src_exp, src_man = _FLOAT_BITS[dtype]
    x = wrap(a)
    bits_dtype = np.dtype(f"int{dtype.itemsize * 8}")  # bit patterns in signed ints (two's complement wraps as unsigned)
    bits = bitcast_convert_type(x, bits_dtype)
    if mantissa_bits < src_man:
        bits = _rounded_mantissa(bits, bits_dtype, src_man - mantissa_bits)
    if exponent_bits < src_exp:
        bits = _clamped_exponent(bits, bits_dtype, src_exp, src_man, exponent_bits)
    return select(x != x, x, bitcast_convert_type(bits, dtype))


def _clamped_exponent(bits: Any, bits_dtype: np.dtype[Any], src_exp: int, src_man: int, exponent_bits: int) -> Any:
    """``bits`` as ±inf where the exponent is above the reduced format's range, ±0 where it is at or below its
    smallest normal's (XLA flushes the reduced format's subnormals)."""
    exponent_mask = ((1 << src_exp) - 1) << src_man
    sign = bitwise_and(bits, tnp.asarray(-(1 << (bits_dtype.itemsize * 8 - 1)), dtype=bits_dtype))
    exponent = bitwise_and(bits, tnp.asarray(exponent_mask, dtype=bits_dtype))
    src_bias, reduced_bias = (1 << (src_exp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    overflows = exponent > tnp.asarray((src_bias + reduced_bias) << src_man, dtype=bits_dtype)
    underflows = exponent <= tnp.asarray((src_bias - reduced_bias) << src_man, dtype=bits_dtype)
    inf = bitwise_or(sign, tnp.asarray(exponent_mask, dtype=bits_dtype))
    return tnp.where(overflows, inf, tnp.where(underflows, sign, bits))

