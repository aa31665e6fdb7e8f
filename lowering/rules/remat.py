"""StableHLO for rematerialization: ``checkpoint_call`` is its function inlined (the recomputation the VJP rule
emitted is already ordinary equations), and ``optimization_barrier`` is ``stablehlo.optimization_barrier``."""

from __future__ import annotations

from collections.abc import Sequence

from ...staging.ir import Aval, Graph
from ...staging.primitives import remat as M
from ..emit import Emitter, Value, lowers


@lowers(M.checkpoint_call_p)
def _checkpoint_call(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, fun: Graph, name: str, prevent_cse: bool,
    policy: M.CheckpointPolicy | None,
) -> list[Value]:
    return em.graph_body(fun, args)


@lowers(M.optimization_barrier_p)
def _optimization_barrier(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    return em.op("stablehlo.optimization_barrier", args, outs)
