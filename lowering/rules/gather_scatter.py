"""StableHLO for gather and scatter; a scatter's combiner becomes its update region."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import gather_scatter as G
from ..emit import Emitter, Value, i64_array, int_list, lowers


@lowers(G.gather_p)
def _gather(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimension_numbers: G.GatherDims, slice_sizes: Any
) -> list[Value]:
    dn = dimension_numbers
    numbers = (
        f"#stablehlo.gather<offset_dims = {int_list(dn.offset_dims)}, "
        f"collapsed_slice_dims = {int_list(dn.collapsed_slice_dims)}, "
        f"operand_batching_dims = {int_list(dn.operand_batching_dims)}, "
        f"start_indices_batching_dims = {int_list(dn.start_indices_batching_dims)}, "
        f"start_index_map = {int_list(dn.start_index_map)}, index_vector_dim = {dn.index_vector_dim}>"
    )
    props = f"dimension_numbers = {numbers}, slice_sizes = {i64_array(slice_sizes)}, indices_are_sorted = false"
    return em.op("stablehlo.gather", args, outs, props)


def _combine(combiner: str, dtype: Any) -> str | None:
    """The StableHLO op applied to (current, update), or None for ``set`` (the update wins)."""
    if combiner == "set":
        return None
    if dtype == dtypes.BOOL and combiner in ("min", "max"):
        return "stablehlo.and" if combiner == "min" else "stablehlo.or"
    return {"add": "stablehlo.add", "mul": "stablehlo.multiply", "min": "stablehlo.minimum",
            "max": "stablehlo.maximum"}[combiner]


@lowers(G.scatter_p)
def _scatter(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimension_numbers: G.ScatterDims, combiner: str
) -> list[Value]:
    dn = dimension_numbers
    numbers = (
        f"#stablehlo.scatter<update_window_dims = {int_list(dn.update_window_dims)}, "
        f"inserted_window_dims = {int_list(dn.inserted_window_dims)}, "
        f"input_batching_dims = {int_list(dn.input_batching_dims)}, "
        f"scatter_indices_batching_dims = {int_list(dn.scatter_indices_batching_dims)}, "
        f"scatter_dims_to_operand_dims = {int_list(dn.scatter_dims_to_operand_dims)}, "
        f"index_vector_dim = {dn.index_vector_dim}>"
    )
    scalar = Aval((), outs[0].dtype)
    op_name = _combine(combiner, outs[0].dtype)

    def body(r: Emitter, a: list[Value]) -> list[Value]:
        return [a[1]] if op_name is None else r.op(op_name, a, [scalar])

    region = em.region([scalar, scalar], body)
    props = f"scatter_dimension_numbers = {numbers}, indices_are_sorted = false, unique_indices = false"
    return em.op("stablehlo.scatter", args, outs, props, [region])
