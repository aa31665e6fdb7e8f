"""StableHLO for dot_general."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import linalg as L
from ..emit import Emitter, Value, lowers


def _ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


@lowers(L.dot_general_p)
def _dot_general(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, contracting: Any, batch: Any) -> list[Value]:
    (lhs_c, rhs_c), (lhs_b, rhs_b) = contracting, batch
    numbers = (
        f"#stablehlo.dot<lhs_batching_dimensions = {_ints(lhs_b)}, rhs_batching_dimensions = {_ints(rhs_b)}, "
        f"lhs_contracting_dimensions = {_ints(lhs_c)}, rhs_contracting_dimensions = {_ints(rhs_c)}>"
    )
    return em.op("stablehlo.dot_general", args, outs, f"dot_dimension_numbers = {numbers}")
