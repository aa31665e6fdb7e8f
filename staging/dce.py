"""Dead-code elimination and closure conversion on graphs."""

from __future__ import annotations

from .ir import Graph, Literal, Var


def dce(graph: Graph) -> Graph:
    """Drop equations whose outputs are never used (primitives have no side effects)."""
    # Ids of every atom read later, literals included: all of them are alive in the graph at once, so a
    # literal's id never equals a variable's, and set operations on ``map(id, ...)`` run without Python loops.
    live: set[int] = set(map(id, graph.outputs))
    kept = []
    for eqn in reversed(graph.eqns):
        if not live.isdisjoint(map(id, eqn.outputs)):
            kept.append(eqn)
            live.update(map(id, eqn.inputs))
    if len(kept) == len(graph.eqns):
        return graph
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs)


def free_vars(graph: Graph) -> list[Var]:
    """Variables the graph reads but neither takes as input nor defines (values closed over from outside)."""
    defined: set[int] = set(map(id, graph.inputs))
    seen: set[int] = set()
    free: list[Var] = []

    def visit(atom: object) -> None:
        if isinstance(atom, Var) and id(atom) not in seen:
            seen.add(id(atom))
            free.append(atom)

    for eqn in graph.eqns:
        for atom in eqn.inputs:
            if id(atom) not in defined:
                visit(atom)
        defined.update(map(id, eqn.outputs))
    for atom in graph.outputs:
        if not isinstance(atom, Literal) and id(atom) not in defined:
            visit(atom)
    return free


def close_over(graph: Graph) -> tuple[Graph, list[Var]]:
    """Turn free variables into extra trailing inputs; returns the closed graph and the outer values to pass."""
    free = free_vars(graph)
    if not free:
        return graph, []
    return Graph((*graph.inputs, *free), graph.eqns, graph.outputs), free
