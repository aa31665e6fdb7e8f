"""StableHLO for ``sort``: a stable ``stablehlo.sort`` whose comparator orders by the first operand only.

Floats compare in IEEE total order, so NaNs sort to the end (after +inf) instead of breaking the ordering.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import sorting as T
from ..emit import Emitter, Value, lowers


@lowers(T.sort_p)
def _sort(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimension: int) -> list[Value]:
    key_dtype = args[0].aval.dtype
    if dtypes.is_float(key_dtype):
        kind = "TOTALORDER"
    elif key_dtype in dtypes.SIGNED:
        kind = "SIGNED"
    else:
        kind = "UNSIGNED"
    scalars = [Aval((), a.aval.dtype) for a in args for _ in (0, 1)]  # (lhs, rhs) per operand

    def less(r: Emitter, params: list[Value]) -> list[Value]:
        props = (
            "comparison_direction = #stablehlo<comparison_direction LT>, "
            f"compare_type = #stablehlo<comparison_type {kind}>"
        )
        return r.op("stablehlo.compare", params[:2], [Aval((), dtypes.BOOL)], props)

    comparator = em.region(scalars, less)
    return em.op(
        "stablehlo.sort", args, outs, f"dimension = {dimension} : i64, is_stable = true", [comparator]
    )
