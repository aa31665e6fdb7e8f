"""``ts.closure_convert``: a function with the staged values it closes over made explicit arguments (JAX's
``jax.closure_convert``), for custom derivative rules and solvers that must see every value they differentiate.

``converted, consts = ts.closure_convert(f, *example_args)`` stages ``f`` for the examples' types; ``consts`` are
the staged values ``f`` reads from enclosing functions, and ``converted(*args, *consts)`` computes ``f(*args)``
with those values passed in. Outside staging nothing is closed over: ``consts`` is empty.

Deliberate difference from JAX: every closed-over staged value is hoisted (JAX hoists those that may be
differentiated); a static (non-array) argument of ``converted`` must equal the example's, as its value is baked
into the staged function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import pytree
from .program import Program
from .staging.builder import inline, is_staging
from .subgraph import Subgraph, function_name, stage_subgraph
from .trace import atom_of_type, wrap

__all__ = ["closure_convert"]


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)`` with ``converted(*args, *consts) == fun(*args)`` for arguments of the examples'
    types, and ``consts`` the staged values ``fun`` closes over."""
    if not callable(fun):
        raise TypeError(f"closure_convert() needs a callable, got {type(fun).__name__}")
    if not is_staging():
        return (lambda *args: fun(*args)), []
    sub = stage_subgraph(fun, example_args, {}, tuple(range(len(example_args))))
    consts = [wrap(a) for a in sub.atoms[sub.num_leaf_inputs:]]
    converted = _Converted(function_name(fun), sub, example_args)
    return converted, consts


class _Converted:
    """``fun`` as a closed function of ``(*args, *consts)``: its staged graph inlined where it is called."""

    def __init__(self, name: str, sub: Subgraph, example_args: Sequence[Any]) -> None:
        self.name = f"closure_converted_{name}"
        self.sub = sub
        self.leaves, self.treedef = pytree.flatten((tuple(example_args), {}))
        self.num_args = len(example_args)
        self._program = Program(self._staged, name=self.name, check_annotations=False)

    def __call__(self, *args_and_consts: Any) -> Any:
        if is_staging():
            return self._staged(*args_and_consts)
        return self._program(*args_and_consts)

    def _staged(self, *args_and_consts: Any) -> Any:
        sub = self.sub
        n_consts = len(sub.atoms) - sub.num_leaf_inputs
        if len(args_and_consts) != self.num_args + n_consts:
            raise TypeError(f"{self.name} takes {self.num_args} arguments and {n_consts} closed-over values, got "
                            f"{len(args_and_consts)} in all")
        args, consts = args_and_consts[: self.num_args], args_and_consts[self.num_args:]
        leaves, treedef = pytree.flatten((tuple(args), {}))
        if treedef != self.treedef:
            raise TypeError(f"{self.name}: the arguments are structured {treedef.children[0]}, the examples were "
                            f"{self.treedef.children[0]}")
        atoms = []
        inputs = iter(sub.graph.inputs)
        for i, (leaf, example, dynamic) in enumerate(zip(leaves, self.leaves, sub.dynamic)):
            if dynamic:
                atoms.append(atom_of_type(leaf, next(inputs).aval))
            elif leaf is not example and leaf != example:
                raise ValueError(f"{self.name}: static argument leaf {i} is {leaf!r:.40}, but the function was "
                                 f"converted for {example!r:.40} (its value is part of the staged function)")
        atoms.extend(atom_of_type(c, var.aval) for c, var in zip(consts, list(inputs)))
        for i, (atom, var) in enumerate(zip(atoms, sub.graph.inputs)):
            if not atom.aval.same_layout(var.aval):
                raise TypeError(f"{self.name}: input {i} is {atom.aval}, the function was converted for {var.aval}")
        return sub.outputs(list(inline(sub.graph, atoms)))
