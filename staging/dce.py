"""Dead-code elimination and closure conversion on graphs."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import attrgetter

from .ir import Atom, Graph, Var
from .primitive import equation_has_effects

_OUTPUTS = attrgetter("outputs")


def dce(graph: Graph) -> Graph:
    """Drop equations whose outputs are never used, but for effectful ones (host callbacks that print, say)."""
    return _dce(graph)[0]


def _dce(graph: Graph) -> tuple[Graph, set[Atom]]:
    """``dce(graph)`` and the atoms its equations and outputs read."""
    # Every atom read later, literals included. Atoms hash by identity (as ``id`` would, but spread better over
    # a set's slots), and the set operations run without Python loops.
    live: set[Atom] = set(graph.outputs)
    kept = []
    for eqn in reversed(graph.eqns):
        if not live.isdisjoint(eqn.outputs) or equation_has_effects(eqn):  # asked of dead equations only
            kept.append(eqn)
            live.update(eqn.inputs)
    if len(kept) == len(graph.eqns):
        return graph, live
    kept.reverse()
    return Graph(graph.inputs, kept, graph.outputs), live


def dce_close_over(graph: Graph) -> tuple[Graph, list[Var]]:
    """``close_over(dce(graph))`` for a graph a builder recorded, where every variable is defined before it is
    read. Then a graph reading only its inputs, its equations' outputs and literals has no free variables,
    which the atoms DCE collected show with C-level set passes; only other graphs take the ordered walk."""
    graph, unbound = _dce(graph)
    unbound.difference_update(graph.inputs)
    unbound.difference_update(chain.from_iterable(map(_OUTPUTS, graph.eqns)))
    for atom in unbound:
        if isinstance(atom, Var):
            return close_over(graph)
    return graph, []


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
