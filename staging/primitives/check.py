"""``check(pred, *fmt_args; message, tree)``: a runtime assertion that ``checkify`` turns into an error value.

The equation has no results. ``pred`` is a bool array (every element must hold); ``fmt_args`` are the flat leaves
of the ``(args, kwargs)`` the message is formatted with (``tree``, a pytree structure, rebuilds them), read only
when the check fails. The equation is effectful, so dead-code elimination keeps it though nothing reads it.

It only means something to the ``checkify`` transform (``staging.transforms.checkify``), which replaces it by
updates of the error state it threads through the program; a program that still holds one when lowered is
refused (the lowering rule says where the check was staged; ``check`` itself refuses to stage one outside
checkify). Its derivative rules pass it through (it runs on the primal values, as a debug print does); under
vmap it keeps the batch axis of its predicate (every member's check must hold) and formats its message with the
values of the first member that fails. ``guarded`` lets the batching rules of cond and while skip the checks of
members that do not run a branch or a step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind, building, located
from ..errors import DTypeError, TransformError
from ..ir import Atom, Aval, Equation, Graph, Var, literal
from ..primitive import Primitive, graph_holds, nested_graphs
from ..zeros import MaybeZero
from . import elementwise as E
from . import reductions as R
from . import slicing as SL
from . import structural as S
from .subgraph_edits import batch_size_and_name

check_p = Primitive("check", multiple_results=True, differentiable=False, effectful=True)


@check_p.def_shape
def _check_shape(pred: Aval, *fmt_args: Aval, message: str, tree: Any) -> tuple[Aval, ...]:
    if pred.dtype != dtypes.BOOL:
        raise DTypeError(f"the predicate must be a bool array, got {pred}", "check")
    return ()


def check(pred: Atom, fmt_args: Sequence[Atom], message: str, tree: Any) -> None:
    bind(check_p, pred, *fmt_args, message=message, tree=tree)


@check_p.def_jvp
def _check_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any
) -> list[MaybeZero]:
    return []  # no results; the walker re-emitted the check itself, on the primal values


@check_p.def_vjp
def _check_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], **params: Any
) -> list[None]:
    return [None] * len(primals)  # reading a value for a message gives it no cotangent


@check_p.def_batch
def _check_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, message: str, tree: Any
) -> tuple[list[Atom], list[int | None]]:
    from ..transforms.batching import move_batch_axis

    size, name = batch_size_and_name(args, dims)
    if size == 0:
        return [], []  # no member to check
    pred = move_batch_axis(args[0], dims[0], 0, size, name)
    first = _first_failing_member(pred, size)
    fmt_args = [a if d is None else _member(a, d, first) for a, d in zip(args[1:], dims[1:])]
    bind(check_p, pred, *fmt_args, message=message, tree=tree)
    return [], []


def _first_failing_member(pred: Atom, size: int) -> Atom:
    """The index of the first member (along axis 0 of ``pred``) whose predicate fails somewhere; 0 if none."""
    holds = R.reduce_min(pred, tuple(range(1, pred.aval.ndim))) if pred.aval.ndim > 1 else pred
    i32 = np.dtype(np.int32)
    position = E.select(holds, S.full_like(Aval((size,), i32), size), SL.iota(i32, (size,)))
    first = R.reduce_min(position, (0,))
    return E.select(E.eq(first, literal(size, i32)), literal(0, i32), first)


def _member(x: Atom, axis: int, index: Atom) -> Atom:
    """Member ``index`` of ``x`` along its batch ``axis``, that axis dropped."""
    starts: list[Atom | int] = [index if a == axis else 0 for a in range(x.aval.ndim)]
    sizes = [1 if a == axis else n for a, n in enumerate(x.aval.shape)]
    window = SL.dynamic_slice(x, starts, sizes)
    keep = [a for a in range(x.aval.ndim) if a != axis]
    return S.reshape(window, [x.aval.shape[a] for a in keep], [x.aval.dims[a] for a in keep])


def holds_check(graph: Graph) -> bool:
    """Whether ``graph`` or a graph nested in it holds a check."""
    return graph_holds(graph, _is_check)


def _is_check(eqn: Equation) -> bool:
    return eqn.primitive is check_p


# How each primitive with nested graphs passes ``guarded``'s flag into them (filled in by the primitives' own
# modules): ``rule(eqn, active)`` is ``eqn`` with ``active`` as an extra operand and its graphs ``guarded``.
GuardRule = Callable[[Equation, Atom], Equation]
GUARD_RULES: dict[Primitive, GuardRule] = {}


def guarded(graph: Graph) -> Graph:
    """``graph`` taking a leading bool scalar ``active``: its checks hold wherever it is False. Batching runs
    graphs for members that do not run them (every branch of a cond with a batched predicate, the body of a
    while loop for members that finished, results discarded); guarded by whether the member runs it, such a
    graph fails no check of those members. Checks nested deeper (in a loop inside the branch) are guarded too,
    through their primitive's ``GUARD_RULES`` entry."""
    active = Var(Aval((), dtypes.BOOL))
    eqns = []
    with building() as builder:
        for eqn in graph.eqns:
            if eqn.primitive is check_p:
                pred, *fmt_args = eqn.inputs
                with located(eqn.loc):
                    skipped = bind(E.or_p, pred, bind(E.not_p, active))
                    eqn = Equation(check_p, (skipped, *fmt_args), (), eqn.params, eqn.loc)
                eqns.extend(builder.eqns)
                builder.eqns.clear()
            elif any(holds_check(g) for g in nested_graphs(eqn.primitive, eqn.params)):
                rule = GUARD_RULES.get(eqn.primitive)
                if rule is None:
                    raise TransformError(
                        f"a check inside {eqn.primitive.name}, in a cond branch or while body that vmap runs for "
                        "members that do not take it (its predicate is batched), is not supported: checkify the "
                        "function before vmapping it (vmap(checkify(f)))", "vmap", eqn.loc,
                    )
                eqn = rule(eqn, active)
            eqns.append(eqn)
    return Graph((active, *graph.inputs), eqns, graph.outputs)
