"""StableHLO for the implicitly differentiated solves: the user's solver, inlined (its derivative rules are
staging's business)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval, Graph
from ...staging.primitives import linear_solve as L
from ..emit import Emitter, Value, lowers


@lowers(L.linear_solve_p, L.root_solve_p)
def _solve(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, solve: Graph, **params: Any) -> list[Value]:
    return em.graph_body(solve, args)  # solve reads (vectors, *consts): every operand, in order
