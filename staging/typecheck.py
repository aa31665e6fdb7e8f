"""Re-derive every equation's output types from its primitive's shape rule.

Tests run this after every transform, so a rule that emits wrong types fails where it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .builder import abstract_eval
from .errors import StagingError
from .ir import Graph, Literal, Var
from .primitive import nested_graphs


class GraphTypeError(AssertionError):
    """A graph whose recorded types disagree with its primitives' rules (a bug in a rule or a transform)."""


def typecheck(graph: Graph) -> None:
    """Check ``graph`` and, recursively, every graph nested in an equation's params (branches, loop bodies). Every
    nested graph must be one its primitive declares (``graph_params``): the transforms and the lowering find
    nested graphs only through that declaration."""
    _check_flat(graph)
    for eqn in graph.eqns:
        declared = list(nested_graphs(eqn.primitive, eqn.params))
        found = list(_graphs_in(eqn.params.values()))
        if {id(g) for g in found} != {id(g) for g in declared}:
            raise GraphTypeError(
                f"{eqn.primitive.name}: its params hold {len(found)} graph(s) but its graph_params "
                f"{eqn.primitive.graph_params} name {len(declared)}"
            )
        for nested in declared:
            typecheck(nested)


def _graphs_in(values: Any) -> Iterator[Graph]:
    for value in values:
        if isinstance(value, Graph):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from _graphs_in(value)


def _check_flat(graph: Graph) -> None:
    defined: set[int] = {id(v) for v in graph.inputs}
    for eqn in graph.eqns:
        for atom in eqn.inputs:
            if isinstance(atom, Var) and id(atom) not in defined:
                raise GraphTypeError(f"{eqn.primitive.name} at {eqn.loc} reads an undefined variable {atom}")
            if not isinstance(atom, (Var, Literal)):
                raise GraphTypeError(f"{eqn.primitive.name} at {eqn.loc} has a non-atom input {atom!r}")
        try:
            expected = abstract_eval(eqn.primitive, [a.aval for a in eqn.inputs], dict(eqn.params))
        except StagingError as err:
            raise GraphTypeError(f"{eqn.primitive.name} at {eqn.loc} no longer type-checks: {err}") from err
        recorded = tuple(v.aval for v in eqn.outputs)
        if expected != recorded:
            raise GraphTypeError(
                f"{eqn.primitive.name} at {eqn.loc}: recorded {recorded}, rule gives {expected}"
            )
        for v in eqn.outputs:
            if id(v) in defined:
                raise GraphTypeError(f"{eqn.primitive.name} at {eqn.loc} redefines {v}")
            defined.add(id(v))
    for atom in graph.outputs:
        if isinstance(atom, Var) and id(atom) not in defined:
            raise GraphTypeError(f"graph output {atom} is undefined")
