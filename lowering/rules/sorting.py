"""StableHLO for ``sort``: a stable ``stablehlo.sort`` whose comparator orders by the first operand only.

Floats compare in IEEE total order after every NaN becomes +NaN and -0 becomes +0, so NaNs sort to the end
(after +inf) and zeros keep their input order, as in NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import sorting as T
from ..emit import Emitter, Value, lowers
from .elementwise import compare


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
        keys = params[:2]
        if kind == "TOTALORDER":
            keys = [_canonical(r, k) for k in keys]
        props = (
            "comparison_direction = #stablehlo<comparison_direction LT>, "
            f"compare_type = #stablehlo<comparison_type {kind}>"
        )
        return r.op("stablehlo.compare", keys, [Aval((), dtypes.BOOL)], props)

    comparator = em.region(scalars, less)
    return em.op(
        "stablehlo.sort", args, outs, f"dimension = {dimension} : i64, is_stable = true", [comparator]
    )


def _canonical(em: Emitter, key: Value) -> Value:
    """Total order ranks -NaN below -inf and -0 below +0; NumPy puts every NaN last and keeps zeros stable."""
    scalar = key.aval
    is_nan = compare(em, key, key, "NE")
    is_zero = compare(em, key, em.scalar(0, scalar.dtype), "EQ")
    key = em.op("stablehlo.select", [is_zero, em.scalar(0, scalar.dtype), key], [scalar])[0]
    return em.op("stablehlo.select", [is_nan, em.scalar(np.nan, scalar.dtype), key], [scalar])[0]
