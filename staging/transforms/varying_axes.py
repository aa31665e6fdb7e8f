"""Which mesh axes each value of a ``shard_map``'s per-device graph varies over: the analysis behind its replication
check (``check_vma``).

Given the axes each input varies over (an argument: the mesh axes its in_spec names), a walk over the graph gives
each value's: ``axis_index`` varies over its axis; ``psum``/``pmax``/``pmin``/``all_gather`` leave every member
with the same value (their axis removed); ``psum_scatter``/``all_to_all``/``ppermute`` leave each member its own
(their axis added); an effectful op (a host callback) may answer each device differently (every axis); ``cond``
varies as its branches and its index; ``scan`` and ``while_loop`` as their bodies, carried to a fixed point (and,
for ``while``, wherever its predicate varies); any other op holding graphs conservatively as its operands plus
whatever its graphs can add; every other op as the union of its operands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ir import Graph, Var
from ..primitive import nested_graphs
from ..primitives import collectives as C
from ..primitives import control_flow as CF

Axes = frozenset[str]

_REMOVES = frozenset({C.psum_p, C.pmax_p, C.pmin_p, C.all_gather_p})  # every member ends with the same value
_ADDS = frozenset({C.psum_scatter_p, C.all_to_all_p, C.ppermute_p})  # each member ends with its own value


def varying_axes(graph: Graph, in_axes: Sequence[Axes], mesh_axes: Axes) -> tuple[list[Axes], dict[Var, Any]]:
    """Per output of ``graph``, the mesh axes along which its value may differ between devices (given those of
    its inputs); and per variable, the equation that made it (for errors)."""
    env: dict[Any, Axes] = dict(zip(graph.inputs, in_axes))
    made_by: dict[Var, Any] = {}
    none: Axes = frozenset()
    for eqn in graph.eqns:
        ins = none.union(*(env.get(a, none) for a in eqn.inputs))
        prim = eqn.primitive
        axis = mesh_axes & {eqn.params.get("axis_name")}
        if prim is C.axis_index_p:
            out = axis
        elif prim in _REMOVES:
            out = ins - axis
        elif prim in _ADDS:
            out = ins | axis
        elif prim.effectful:  # a callback may answer each device differently
            out = mesh_axes
        elif prim in _CONTROL_FLOW:
            for v, axes in zip(eqn.outputs, _CONTROL_FLOW[prim]([env.get(a, none) for a in eqn.inputs], mesh_axes,
                                                                **eqn.params)):
                env[v] = axes
                made_by[v] = eqn
            continue
        else:
            out = _through_nested(list(nested_graphs(prim, eqn.params)), ins, mesh_axes)
        for v in eqn.outputs:
            env[v] = out
            made_by[v] = eqn
    return [env.get(a, none) for a in graph.outputs], made_by


def _cond_axes(ins: list[Axes], mesh_axes: Axes, *, branches: tuple[Graph, ...], **_: Any) -> list[Axes]:
    """Each result varies as the branches' results do, and wherever the branch index varies."""
    index, operands = ins[0], ins[1:]
    outs = [varying_axes(g, operands, mesh_axes)[0] for g in branches]
    return [index.union(*per_branch) for per_branch in zip(*outs)]


def _carried(ins: list[Axes], body: Callable[[list[Axes]], list[Axes]]) -> list[Axes]:
    """Loop-carried axes: the initial ones, joined with what ``body`` makes of them, until nothing changes."""
    carry = ins
    while True:
        more = [c | o for c, o in zip(carry, body(carry))]
        if more == carry:
            return carry
        carry = more


def _while_axes(
    ins: list[Axes], mesh_axes: Axes, *, cond_graph: Graph, body_graph: Graph, cond_nconsts: int,
    body_nconsts: int, **_: Any,
) -> list[Axes]:
    """A predicate varying over an axis runs a different number of steps along it: every carry then varies."""
    cond_consts, body_consts = ins[:cond_nconsts], ins[cond_nconsts:cond_nconsts + body_nconsts]

    def step(carry: list[Axes]) -> list[Axes]:
        (pred,) = varying_axes(cond_graph, cond_consts + carry, mesh_axes)[0]
        return [a | pred for a in varying_axes(body_graph, body_consts + carry, mesh_axes)[0]]

    return _carried(ins[cond_nconsts + body_nconsts:], step)


def _scan_axes(ins: list[Axes], mesh_axes: Axes, *, body: Graph, num_consts: int, num_carry: int, length: int,
               **_: Any) -> list[Axes]:
    """With at least one step, the final carry is a body result (a psum in the body makes it replicated)."""
    consts, init, xs = ins[:num_consts], ins[num_consts:num_consts + num_carry], ins[num_consts + num_carry:]

    def run(carry: list[Axes]) -> list[Axes]:
        return varying_axes(body, consts + carry + xs, mesh_axes)[0]

    carry = _carried(run(init)[:num_carry], lambda c: run(c)[:num_carry]) if length else init
    return carry + run([a | b for a, b in zip(init, carry)])[num_carry:]


_CONTROL_FLOW: dict[Any, Callable[..., list[Axes]]] = {CF.cond_p: _cond_axes, CF.while_p: _while_axes,
                                                         CF.scan_p: _scan_axes}


def _through_nested(graphs: list[Graph], ins: Axes, mesh_axes: Axes) -> Axes:
    """An op's result axes: its operands', and (conservatively, for branches and loop bodies) whatever its graphs
    can add when every graph input varies over all of those, until nothing more is added."""
    axes = ins
    while graphs:
        more = axes.union(*(a for g in graphs for a in varying_axes(g, [axes] * len(g.inputs), mesh_axes)[0]))
        if more == axes:
            break
        axes = more
    return axes
