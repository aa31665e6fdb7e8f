"""StableHLO for ``custom_vmap_call``: its function inlined (the batching rule is used by ``vmap`` only)."""

from __future__ import annotations

from collections.abc import Sequence

from ...staging.ir import Aval, Graph
from ...staging.primitives import custom_vmap as CV
from ..emit import Emitter, Value, lowers


@lowers(CV.custom_vmap_call_p)
def _custom_vmap_call(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, fun: Graph, rule: CV.VmapRule, num_args: int
) -> list[Value]:
    return em.graph_body(fun, args)
