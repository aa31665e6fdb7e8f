"""StableHLO for dot_general."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import linalg as L
from ..emit import PROPS_OPS, Emitter, Value, int_list, lowers, remember


_PROPS_TEXT: dict[Any, str] = {}  # dimension-numbers text by (contracting, batch); bounded


@lowers(L.dot_general_p)
def _dot_general(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, contracting: Any, batch: Any) -> list[Value]:
    try:
        props = _PROPS_TEXT.get((contracting, batch))
    except TypeError:  # axes given as lists
        props = None
    if props is None:
        (lhs_c, rhs_c), (lhs_b, rhs_b) = contracting, batch
        numbers = (
            f"#stablehlo.dot<lhs_batching_dimensions = {int_list(lhs_b)}, rhs_batching_dimensions = {int_list(rhs_b)}, "
            f"lhs_contracting_dimensions = {int_list(lhs_c)}, rhs_contracting_dimensions = {int_list(rhs_c)}>"
        )
        props = f"dot_dimension_numbers = {numbers}"
        try:
            remember(_PROPS_TEXT, (contracting, batch), props, limit=4096)
        except TypeError:  # axes given as lists: not kept
            pass
    return em.op("stablehlo.dot_general", args, outs, props)


def _cached_props(params: Any) -> str | None:
    """The dimension-numbers text of a ``dot_general`` equation's params when already made (else the rule runs)."""
    try:
        return _PROPS_TEXT.get((params["contracting"], params["batch"]))
    except TypeError:  # axes given as lists
        return None


PROPS_OPS[L.dot_general_p] = ("stablehlo.dot_general", _cached_props)
