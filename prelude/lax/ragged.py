"""``lax.ragged_dot`` and ``lax.ragged_dot_general`` (with ``RaggedDotDimensionNumbers``): products whose operand
is cut into consecutive groups (mixture of experts).

Deliberate differences from jax.lax: both are JAX's dense formulation (each group's rows masked out of a
``[g, ...]`` copy of the ragged operand, one ``dot_general``): exact, differentiable in ``lhs`` and ``rhs`` and
batchable, at ``g`` times a plain product's work and memory. ``group_sizes`` must have shape ``[g]`` (JAX also
takes sizes per batch/outer row); ``group_offset`` is refused (JAX's own implementations refuse it too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, dtype_error, op, shape_error
from ._operands import checked_axes
from .reductions import DimensionNumbers, cumsum, dot_general
from .settings import PrecisionLike
from .structural import broadcast_in_dim, broadcasted_iota, select

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """``ragged_dot_general``'s axes: ``dot_general``'s dimension numbers, the one ragged axis of ``lhs`` and the
    group axis of ``rhs`` (one when the ragged axis is a free one, none otherwise)."""

    dot_dimension_numbers: DimensionNumbers
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __post_init__(self) -> None:
        (lc, rc), (lb, rb) = self.dot_dimension_numbers
        object.__setattr__(self, "dot_dimension_numbers", ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(int(d) for d in self.lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(int(d) for d in self.rhs_group_dimensions))


_BASIC_RAGGED = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def _group_masked(x: Any, group_sizes: Any, axis: int) -> Any:
    """``x`` repeated along a new leading group axis, copy ``j`` zero outside group ``j``'s span of ``axis``
    (groups consecutive from 0; positions past the last group are zero in every copy)."""
    g = group_sizes.shape[0]
    shape = (g, *x.shape)
    ends = cumsum(group_sizes)
    position = broadcasted_iota(group_sizes.dtype, shape, axis + 1)
    inside = ((broadcast_in_dim(ends - group_sizes, shape, (0,)) <= position)
              & (position < broadcast_in_dim(ends, shape, (0,))))
    copies = broadcast_in_dim(x, shape, tuple(range(1, x.ndim + 1)))
    return select(inside, copies, tnp.zeros_like(copies))


def _ragged_operands(lhs: Any, rhs: Any, group_sizes: Any, group_offset: Any) -> tuple[Any, Any, Any]:
    if group_offset is not None:
        raise NotImplementedError("lax.ragged_dot: group_offset is not supported (JAX's implementations refuse it too)")
    a, b, gs = as_tensor(lhs), as_tensor(rhs), as_tensor(group_sizes)
    if gs.ndim != 1 or not _dt.is_integer(gs.dtype):
        raise dtype_error("ragged_dot", f"lax.ragged_dot: group_sizes must be a 1-d integer array [g], got {gs.aval}")
    return a, b, gs


def _ragged_mode(lhs_ndim: int, dn: RaggedDotDimensionNumbers) -> tuple[str, int]:
    (lc, _), (lb, _) = dn.dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ValueError(f"lax.ragged_dot_general: needs one lhs ragged dimension, got {dn.lhs_ragged_dimensions}")
    (ragged,) = checked_axes("ragged_dot_general", dn.lhs_ragged_dimensions, lhs_ndim)
    mode = "batch" if ragged in lb else "contracting" if ragged in lc else "noncontracting"
    wanted = 1 if mode == "noncontracting" else 0
    if len(dn.rhs_group_dimensions) != wanted:
        raise ValueError(f"lax.ragged_dot_general: a {mode} ragged dimension needs {wanted} rhs group dimension(s), "
                         f"got {dn.rhs_group_dimensions}")
    return mode, ragged


def _check_groups(name: str, gs: Any, size: int, what: str) -> None:
    if gs.shape[0] != size:
        raise shape_error(name, f"lax.{name}: group_sizes {gs.aval} must have one size per group ({what}: {size})")


@op
def ragged_dot_general(lhs: AnyTensor, rhs: AnyTensor, group_sizes: AnyTensor,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers, precision: PrecisionLike = None,
                       preferred_element_type: Any = None, group_offset: AnyTensor | None = None) -> AnyTensor:
    """A ``dot_general`` whose ``lhs`` ragged axis is cut into consecutive groups of ``group_sizes``: a free
    ragged axis takes group ``j``'s rows against ``rhs``'s group ``j``; a contracting one gives one product per
    group (a new leading axis of size ``g``); a batch one is a plain ``dot_general``."""
    a, b, gs = _ragged_operands(lhs, rhs, group_sizes, group_offset)
    dn = ragged_dot_dimension_numbers
    mode, ragged = _ragged_mode(a.ndim, dn)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    def shift(dims: Sequence[int]) -> tuple[int, ...]:  # the axes of an operand given a leading group axis
        return tuple(d + 1 for d in dims)

    def product(x: Any, y: Any, numbers: DimensionNumbers) -> AnyTensor:
        return dot_general(x, y, numbers, precision=precision, preferred_element_type=preferred_element_type)

    if mode == "batch":
        return product(a, b, dn.dot_dimension_numbers)
    if mode == "noncontracting":
        (group_axis,) = checked_axes("ragged_dot_general", dn.rhs_group_dimensions, b.ndim)
        _check_groups("ragged_dot_general", gs, b.shape[group_axis], f"rhs axis {group_axis}")
        return product(_group_masked(a, gs, ragged), b, ((shift(lc) + (0,), tuple(rc) + (group_axis,)),
                                                         (shift(lb), tuple(rb))))
    rhs_ragged = tuple(rc)[tuple(lc).index(ragged)]
    return product(_group_masked(a, gs, ragged), _group_masked(b, gs, rhs_ragged),
                   ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb))))


@op
def ragged_dot(lhs: AnyTensor, rhs: AnyTensor, group_sizes: AnyTensor, precision: PrecisionLike = None,
               preferred_element_type: Any = None, group_offset: AnyTensor | None = None) -> AnyTensor:
    """Grouped matrix product (mixture of experts): ``lhs`` ``[m, k]``'s rows in consecutive groups of
    ``group_sizes`` ``[g]``, group ``j``'s rows times ``rhs[j]`` (``rhs`` ``[g, k, n]``) -> ``[m, n]``; rows past
    the last group are zero."""
    a, b, _ = _ragged_operands(lhs, rhs, group_sizes, group_offset)
    if a.ndim != 2 or b.ndim != 3:
        raise shape_error("ragged_dot", f"lax.ragged_dot needs lhs [m, k] and rhs [g, k, n], got {a.aval} and {b.aval}")
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_RAGGED, precision, preferred_element_type)
