"""Editing the subgraphs that control-flow primitives carry: type joins, reordering inputs and outputs, splitting
a joint VJP graph into its forward and backward parts, and the batching / differentiation bookkeeping the
``cond``, ``while`` and ``scan`` rules share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..builder import abstract_eval, bind, current, current_loc
from ..dce import dce
from ..errors import ShapeError
from ..ir import Atom, Aval, DimName, Equation, Graph, Var
from ..primitive import Primitive, graph_uses_axis, nested_graphs
from ..shapes import describe
from ..zeros import MaybeZero, Zero, has_tangent
from . import structural as S


def join_types(op: str, what: str, left: Sequence[Aval], right: Sequence[Aval]) -> tuple[Aval, ...]:
    """Avals that must agree (cond branches, a loop carry before and after the body): equal shapes and dtypes,
    and dim names that do not contradict (an anonymous axis takes the other side's name)."""
    if len(left) != len(right) or any(not a.same_layout(b) for a, b in zip(left, right)):
        raise ShapeError(f"{what}: ({describe(left)}) vs ({describe(right)})", op)
    joined = []
    for a, b in zip(left, right):
        names = []
        for n, m in zip(a.dims, b.dims):
            if n is not None and m is not None and n != m:
                raise ShapeError(f"{what}: ({describe(left)}) vs ({describe(right)}) name one axis {n} and {m}", op)
            names.append(n if n is not None else m)
        joined.append(Aval(a.shape, a.dtype, names))
    return tuple(joined)


def check_inputs(op: str, what: str, graph: Graph, avals: Sequence[Aval]) -> None:
    if len(graph.inputs) != len(avals) or any(not v.aval.same_layout(a) for v, a in zip(graph.inputs, avals)):
        raise ShapeError(f"{what} takes ({describe(graph.in_avals)}) but is given ({describe(avals)})", op)


def select_outputs(graph: Graph, keep: Sequence[int]) -> Graph:
    """``graph`` returning only the outputs at ``keep`` (in that order), with dead work removed."""
    return dce(Graph(graph.inputs, graph.eqns, [graph.outputs[i] for i in keep]))


def permute_inputs(graph: Graph, order: Sequence[int]) -> Graph:
    """``graph`` whose i-th input is the old input ``order[i]``."""
    return Graph([graph.inputs[i] for i in order], graph.eqns, graph.outputs)


def with_unused_inputs(graph: Graph, avals: Sequence[Aval], at: int) -> Graph:
    """``graph`` taking extra (ignored) inputs of ``avals`` inserted at position ``at``."""
    extra = [Var(a) for a in avals]
    return Graph([*graph.inputs[:at], *extra, *graph.inputs[at:]], graph.eqns, graph.outputs)


def nonzero(tangents: Sequence[MaybeZero], primals: Sequence[Atom]) -> list[bool]:
    return [not isinstance(t, Zero) and has_tangent(p.aval) for t, p in zip(tangents, primals)]


def active_outputs(graph: Graph, active_in: Sequence[bool]) -> list[bool]:
    """Which outputs depend (differentiably) on the active inputs, as the reverse-mode walker decides."""
    active = {id(v) for v, a in zip(graph.inputs, active_in) if a and has_tangent(v.aval)}
    for eqn in graph.eqns:
        if eqn.primitive.differentiable and any(isinstance(a, Var) and id(a) in active for a in eqn.inputs):
            active.update(id(v) for v in eqn.outputs if has_tangent(v.aval))
    return [isinstance(a, Var) and id(a) in active for a in graph.outputs]


def split(items: Sequence[Any], *sizes: int) -> list[list[Any]]:
    out, start = [], 0
    for n in sizes:
        out.append(list(items[start : start + n]))
        start += n
    out.append(list(items[start:]))
    return out


def batch_size_and_name(
    args: Sequence[Atom], dims: Sequence[int | None], size: int | None = None
) -> tuple[int, DimName]:
    """The batch size and dim name of a batched operand; with none, ``size`` (the walked axis, which the walker
    gives ``axis_batch`` rules) and no name."""
    for a, d in zip(args, dims):
        if d is not None:
            return a.aval.shape[d], a.aval.dims[d]
    if size is not None:
        return size, None
    raise AssertionError("a batching rule ran without a batched operand")


def def_nested_axis_rules(prim: Primitive, *graph_params: str) -> None:
    """``uses_axis`` and ``axis_batch`` for a primitive whose params ``graph_params`` hold nested graphs (a Graph
    or a tuple of them): it uses an axis when an equation of one of them does (a collective in a branch or loop
    body), and its ``batch`` rule, written as ``batch(args, dims, size=None, **params)``, is its ``axis_batch``
    rule too: with no operand batched it takes the batch size from ``size``, and the walks it starts on its
    nested graphs batch the equations that use the axis. Nothing is broadcast up front."""

    def uses(params: Mapping[str, Any], axis_name: str) -> bool:
        return any(graph_uses_axis(g, axis_name) for g in nested_graphs(prim, params))

    if prim.batch is None:
        raise AssertionError(f"define the batch rule of {prim.name} before its nested axis rules")
    prim.graph_params = graph_params
    prim.def_uses_axis(uses)
    prim.def_axis_batch(prim.batch)


def to_front(x: Atom, d: int | None, batched: bool, size: int, name: DimName) -> Atom:
    """``x`` with its batch axis at 0 (broadcast if it had none), or unchanged when it stays unbatched."""
    from ..transforms.batching import move_batch_axis

    return move_batch_axis(x, d, 0 if batched else None, size, name)


def broadcast_pred(pred: Atom, like: Atom) -> Atom:
    """A per-example predicate of shape (B,) widened to ``like``'s (B, ...) for select."""
    aval = like.aval
    return S.broadcast_in_dim(pred, aval.shape, (0,), (aval.dims[0], *(None,) * (aval.ndim - 1)))


def split_joint(joint: Graph, n_in: int, n_out: int) -> tuple[list[Equation], list[Equation], list[Var]]:
    """Split a joint VJP graph ``(primals, cotangents) -> (outputs, input cotangents)`` into the equations that
    need no cotangent (the forward part), the rest (the backward part), and the residuals: values the backward
    part reads that the forward part (or a primal input) defined."""
    unknown = {id(v) for v in joint.inputs[n_in:]}
    fwd_eqns, bwd_eqns = [], []
    for eqn in joint.eqns:
        if any(isinstance(a, Var) and id(a) in unknown for a in eqn.inputs):
            bwd_eqns.append(eqn)
            unknown.update(id(v) for v in eqn.outputs)
        else:
            fwd_eqns.append(eqn)
    seen: set[int] = set()
    residuals: list[Var] = []
    for atom in [a for e in bwd_eqns for a in e.inputs] + list(joint.outputs[n_out:]):
        if isinstance(atom, Var) and id(atom) not in unknown and id(atom) not in seen:
            seen.add(id(atom))
            residuals.append(atom)
    return fwd_eqns, bwd_eqns, residuals


class Replacing(NamedTuple):
    """In a JVP rule: the already-emitted primal outputs ``outs`` that the new equation recomputes at ``positions``."""

    outs: Sequence[Atom]
    positions: Sequence[int]


def bind_control(
    prim: Primitive, inputs: Sequence[Atom], params: dict[str, Any], replacing: Replacing | None
) -> list[Atom]:
    """Bind ``prim``. With ``replacing``, the equation that emitted the primal outputs is dropped and the new one
    defines those same variables, so forward mode runs a loop once (not once for the value and once more for
    value and tangent). That is only sound right after the walker re-emitted the primal equation, before any
    equation reads it; otherwise (or if the types differ) this is a plain bind."""
    if replacing is not None:
        builder = current()
        old = tuple(replacing.outs)
        index = next((i for i in reversed(range(len(builder.eqns))) if builder.eqns[i].outputs == old), None)
        out_avals = abstract_eval(prim, [a.aval for a in inputs], params)
        if index is not None and all(out_avals[p] == v.aval for p, v in zip(replacing.positions, old)):
            ids = {id(v) for v in old}
            if not any(isinstance(a, Var) and id(a) in ids for e in builder.eqns[index + 1 :] for a in e.inputs):
                del builder.eqns[index]
                by_pos: dict[int, Var] = {p: v for p, v in zip(replacing.positions, old) if isinstance(v, Var)}
                outs = tuple(by_pos[i] if i in by_pos else Var(a) for i, a in enumerate(out_avals))
                builder.eqns.append(Equation(prim, tuple(inputs), outs, params, current_loc()))
                return list(outs)
    return list(bind(prim, *inputs, **params))


def carry_fixpoint(carry_in: list[bool], step: Callable[[list[bool]], Sequence[bool]]) -> list[bool]:
    """Grow a per-carry flag (has a tangent, is batched) until one more body step changes nothing."""
    flags = list(carry_in)
    while True:
        out = step(flags)
        grown = [a or b for a, b in zip(flags, out)]
        if grown == flags:
            return flags
        flags = grown
