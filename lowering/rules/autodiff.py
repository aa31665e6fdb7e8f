"""StableHLO for the differentiation primitives: they lower to what they compute, ignoring their rules (a
``checkpoint_name`` tag is only for checkpoint policies: no op)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval, Graph
from ...staging.primitives import autodiff as A
from ...staging.primitives import remat as R
from ..emit import Emitter, Value, lowers


@lowers(A.stop_gradient_p)
def _stop_gradient(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    return [args[0]]


@lowers(R.checkpoint_name_p)
def _checkpoint_name(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, name: str) -> list[Value]:
    return [args[0]]


@lowers(A.no_derivative_p)
def _no_derivative(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, reason: str) -> list[Value]:
    return [args[0]]


@lowers(A.custom_jvp_call_p)
def _custom_jvp_call(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, fun: Graph, num_args: int, num_fun_consts: int,
    **params: Any,
) -> list[Value]:
    return em.graph_body(fun, args[: num_args + num_fun_consts])


@lowers(A.custom_vjp_call_p)
def _custom_vjp_call(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, fun: Graph, num_args: int,
    consts: tuple[int, int, int], **params: Any,
) -> list[Value]:
    return em.graph_body(fun, args[: num_args + consts[0]])
