"""Dead-code elimination and closure conversion on graphs."""

from __future__ import annotations

from .ir import Graph, Literal, Var


def dce(graph: Graph) -> Graph:
    """Drop equations whose outputs are never used (effectful equations are kept)."""
    live: set[int] = {id(a) for a in graph.outputs if isinstance(a, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if eqn.primitive.effectful or any(id(v) in live for v in eqn.outputs):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    if len(kept) == len(graph.eqns):
        return graph
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs)


def free_vars(graph: Graph) -> list[Var]:
    """Variables the graph reads but neither takes as input nor defines (values closed over from outside)."""
    defined: set[int] = {id(v) for v in graph.inputs}
    seen: set[int] = set()
    free: list[Var] = []

    def visit(atom: object) -> None:
        if isinstance(atom, Var) and id(atom) not in defined and id(atom) not in seen:
            seen.add(id(atom))
            free.append(atom)

    for eqn in graph.eqns:
        for atom in eqn.inputs:
            visit(atom)
        defined.update(id(v) for v in eqn.outputs)
    for atom in graph.outputs:
        if not isinstance(atom, Literal):
            visit(atom)
    return free


def close_over(graph: Graph) -> tuple[Graph, list[Var]]:
    """Turn free variables into extra trailing inputs; returns the closed graph and the outer values to pass."""
    free = free_vars(graph)
    if not free:
        return graph, []
    return Graph((*graph.inputs, *free), graph.eqns, graph.outputs), free
