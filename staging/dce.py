"""Dead-code elimination and closure conversion on graphs."""

from __future__ import annotations

from collections.abc import Iterable

from .ir import Atom, Graph, Var


def dce(graph: Graph) -> Graph:
    """Drop equations whose outputs are never used (primitives have no side effects)."""
    # Every atom read later, literals included. Atoms hash by identity (as ``id`` would, but spread better over
    # a set's slots), and the set operations run without Python loops.
    live: set[Atom] = set(graph.outputs)
    kept = []
    for eqn in reversed(graph.eqns):
        if not live.isdisjoint(eqn.outputs):
            kept.append(eqn)
            live.update(eqn.inputs)
    if len(kept) == len(graph.eqns):
        return graph
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs)


def free_vars(graph: Graph) -> list[Var]:
    """Variables the graph reads but neither takes as input nor defines (values closed over from outside)."""
    # ``known``: inputs, defined variables and literals seen so far (atoms hash by identity). Most equations read
    # only known atoms, which one C-level ``issuperset`` confirms; only the others are walked atom by atom.
    known: set[Atom] = set(graph.inputs)
    free: list[Var] = []
    for eqn in graph.eqns:
        if not known.issuperset(eqn.inputs):
            _visit(eqn.inputs, known, free)
        known.update(eqn.outputs)
    _visit(graph.outputs, known, free)
    return free


def _visit(atoms: Iterable[Atom], known: set[Atom], free: list[Var]) -> None:
    for atom in atoms:
        if atom not in known:
            known.add(atom)
            if isinstance(atom, Var):
                free.append(atom)


def close_over(graph: Graph) -> tuple[Graph, list[Var]]:
    """Turn free variables into extra trailing inputs; returns the closed graph and the outer values to pass."""
    free = free_vars(graph)
    if not free:
        return graph, []
    return Graph((*graph.inputs, *free), graph.eqns, graph.outputs), free
