"""``lax.index_take`` and ``lax.scatter_apply``: a gather by one index array per axis, and a function applied
where a scatter's windows land.

Deliberate difference from jax.lax: ``scatter_apply`` applies ``func`` once per element and per index that hits
it (duplicates apply it again, as in XLA), in a ``while_loop``: forward-differentiable only (JAX's has no
derivative at all).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...batching import vmap
from ...control_flow import while_loop
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, describe, dtype_error, op, shape_error
from ._operands import checked_axes
from .gather_scatter import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter_add
from .reductions import reduce_max
from .structural import reshape, select

__all__ = ["index_take", "scatter_apply"]

DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def index_take(src: Tensor[DT, Unpack[tuple[Any, ...]]], idxs: Sequence[AnyTensor],
               axes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``src`` at one index per axis of ``axes`` for each row (``idxs`` one 1-d index array per axis, wrapped
    modulo the axis size): shape ``(rows, *remaining axes)``."""
    x = as_tensor(src)
    axes_t = checked_axes("index_take", axes, x.ndim)
    if len(idxs) != len(axes_t) or not axes_t:
        raise shape_error("index_take", f"lax.index_take needs one index array per axis of {axes_t}, got {len(idxs)}")
    columns = [as_tensor(i) for i in idxs]
    if any(c.ndim != 1 or not _dt.is_integer(c.dtype) for c in columns):
        raise dtype_error("index_take", f"lax.index_take needs 1-d integer index arrays, got "
                                        f"{', '.join(describe(c) for c in columns)}")
    sizes = tnp.asarray(np.array([x.shape[a] for a in axes_t]), dtype=columns[0].dtype)
    indices = tnp.stack(columns, axis=1) % sizes
    slice_sizes = tuple(1 if a in axes_t else n for a, n in enumerate(x.shape))
    dims = GatherDimensionNumbers(offset_dims=tuple(range(1, x.ndim - len(axes_t) + 1)),
                                  collapsed_slice_dims=axes_t, start_index_map=axes_t)
    return gather(x, indices, dims, slice_sizes)


def scatter_apply(operand: Tensor[DT, Unpack[S]], scatter_indices: AnyTensor, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Tensor[DT, Unpack[S]]:
    """``operand`` with ``func`` (a function of one element) applied to the elements the windows of
    ``update_shape`` at ``scatter_indices`` cover, once per window covering each (JAX's ``lax.scatter_apply``:
    ``update_shape`` is the shape the updates of a ``lax.scatter`` with these indices would have)."""
    return _scatter_apply(operand, scatter_indices, func, dimension_numbers, tuple(update_shape),  # type: ignore[no-any-return]
                          GatherScatterMode.from_any(mode))


@op
def _scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                   dimension_numbers: ScatterDimensionNumbers, update_shape: tuple[int, ...],
                   mode: GatherScatterMode) -> Any:
    x = as_tensor(operand)
    hits = scatter_add(tnp.zeros(x.shape, dtype=np.int32), scatter_indices,
                       tnp.ones(update_shape, dtype=np.int32), dimension_numbers, mode=mode)
    per_element = vmap(func)  # func sees one element, as XLA's update computation does

    def applied(v: Any) -> Any:
        out = as_tensor(per_element(reshape(v, (math.prod(x.shape),))))
        if out.dtype != x.dtype or out.ndim != 1:
            raise dtype_error("scatter_apply", f"lax.scatter_apply: func must map a {x.dtype} element to one "
                                               f"{x.dtype} element, got {out.aval} for {x.aval}'s elements")
        return reshape(out, tuple(x.shape))

    def body(carry: Any) -> Any:
        i, v = carry
        return i + 1, select(hits > i, applied(v), v)

    most = reduce_max(hits, tuple(range(x.ndim)))  # the most-hit element's count (empty: the lowest int)
    _, out = while_loop(lambda carry: carry[0] < most, body, (tnp.asarray(0, dtype=np.int32), x))
    return out
