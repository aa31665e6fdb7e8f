"""Staging a function called inside another staged function into its own graph, for a transform to rewrite.

The arguments' tensor leaves become the subgraph's inputs; outer staged values the function reads become extra
trailing inputs (closure conversion), so the transformed graph can be inlined back with ``builder.inline``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from . import pytree
from .array import Array, as_host_array
from .program import Program
from .staging import dtypes as _dt
from .signature import Spec
from .staging.ir import Atom, Aval, Graph, Literal, Var
from .tensor import Tensor, Traced
from .trace import WeakTraced, to_atom, trace_flat, weak_float_atom, weak_input, wrap


@attrs.frozen
class Subgraph:
    """``fn`` staged on given arguments: its graph, the outer atoms to feed it, and how leaves map to args."""

    graph: Graph
    atoms: tuple[Atom, ...]  # one per graph input: the dynamic leaves, then closed-over outer values
    out_tree: pytree.TreeDef
    arg_trees: tuple[pytree.TreeDef, ...]  # structure of each positional argument
    leaf_arg: tuple[int, ...]  # per graph input: positional index of its argument (-1: kwargs or closure)
    num_leaf_inputs: int  # graph inputs that are dynamic leaves (the closed-over values follow them)
    # For ``leaf_names``: the flat leaves' dynamic flags and the positional arguments' names.
    dynamic: tuple[bool, ...]
    arg_names: tuple[str, ...]
    # Per output: a Python scalar the function returned as it is; it stays weakly typed outside, as in a program.
    weak_outputs: tuple[bool, ...] = ()

    @property
    def leaf_names(self) -> list[str]:
        """Per leaf input: where it came from, for messages (made only when a message needs one)."""
        paths: list[str] = []
        for i, tree in enumerate(self.arg_trees):
            count = tree.num_leaves
            base = self.arg_names[i] if i < len(self.arg_names) else f"argument {i}"
            paths.extend(base if count == 1 else f"{base} leaf {k}" for k in range(count))
        paths.extend(["a keyword argument"] * (len(self.dynamic) - len(paths)))
        return [path for path, is_dyn in zip(paths, self.dynamic) if is_dyn]

    def outputs(self, atoms: Sequence[Atom]) -> Any:
        """The function's result from its output ``atoms`` (of this graph's outputs, or their tangents)."""
        weak = self.weak_outputs
        return pytree.unflatten(
            self.out_tree, [weak_input(a) if i < len(weak) and weak[i] else wrap(a) for i, a in enumerate(atoms)]
        )


def is_tensor_leaf(x: object) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic, Spec))


def _leaf_atom(x: Any) -> tuple[Atom, bool]:
    """The staged operand for a dynamic leaf and whether it is weakly typed (a Python scalar)."""
    if isinstance(x, Traced):
        return x.atom, isinstance(x, WeakTraced)
    if isinstance(x, Spec):  # an abstract placeholder: a fresh value no outer graph defines
        return Var(x.aval), False
    if isinstance(x, (np.ndarray, np.generic)):  # keeps NumPy's dtype (np.float64 is also a Python float)
        host = np.asarray(x)
        return Literal(host, Aval(host.shape, _dt.canonical(host.dtype))), False
    if isinstance(x, Array):
        return to_atom(x), False
    host = as_host_array(x)
    return Literal(host, Aval((), host.dtype)), True


def stage_subgraph(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    scalar_args: Sequence[int] = (),
    names: Sequence[str] = (),
    precise_floats: bool = False,
) -> Subgraph:
    """Stage ``fn(*args, **kwargs)``; Python scalars in positional args listed in ``scalar_args`` become inputs.

    ``precise_floats``: Python floats among those (and ones passed to an enclosing program) are weak float64
    inputs, and come out as float64 if returned as they are, so they keep their digits where they meet f64
    arrays (custom derivative rules, whose functions feed each other). Otherwise a differentiated Python float
    is a default-float input, so its gradient has that dtype, as in JAX."""
    leaves, treedef = pytree.flatten((tuple(args), kwargs))
    arg_trees = treedef.children[0].children  # the structure of each positional argument
    owner: list[int] = []
    for i, tree in enumerate(arg_trees):
        owner.extend([i] * tree.num_leaves)
    owner.extend([-1] * (len(leaves) - len(owner)))
    dynamic: list[bool] = []
    avals: list[Aval | None] = []
    weak: list[bool] = []
    atoms: list[Atom] = []
    leaf_arg: list[int] = []
    for leaf, arg in zip(leaves, owner):
        if type(leaf) is Traced:  # the common leaf, as ``_leaf_atom`` reads it, without its calls
            atom: Atom = leaf.atom
            is_weak = False
        elif isinstance(leaf, WeakTraced) and (precise_floats or arg not in scalar_args):
            # A Python float passed to an enclosing program, here an operand: staged from its float64 value (a
            # differentiated one keeps the default float, so its gradient has that dtype, as in JAX).
            atom, is_weak = leaf.most_precise, True
        elif precise_floats and type(leaf) is float and arg in scalar_args:
            atom, is_weak = weak_float_atom(leaf), True
        elif is_tensor_leaf(leaf) or (arg in scalar_args and type(leaf) in (float, int, bool)):
            atom, is_weak = _leaf_atom(leaf)
        else:
            dynamic.append(False)
            avals.append(None)
            weak.append(False)
            continue
        dynamic.append(True)
        atoms.append(atom)
        avals.append(atom.aval)
        weak.append(is_weak)
        leaf_arg.append(arg)
    traced = trace_flat(fn, treedef, leaves, dynamic, avals, weak, precise_floats)
    traced.pass_ranges_to([leaf for leaf, d in zip(leaves, dynamic) if d])
    return Subgraph(
        traced.graph,
        (*atoms, *traced.closure),
        traced.out_tree,
        arg_trees,
        (*leaf_arg, *([-1] * len(traced.closure))),
        len(atoms),
        tuple(dynamic),
        tuple(names),
        traced.weak_outputs,
    )


def param_names(fn: Callable[..., Any]) -> list[str]:
    target = fn.fn if isinstance(fn, Program) else fn
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def function_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__


def as_program(body: Callable[..., Any], fn: Callable[..., Any], name: str) -> Program[..., Any]:
    """A Program running ``body``, carrying ``fn``'s parameter annotations (for ``stage(Dim=n)`` and dim names)
    and static arguments, but not its return annotation (a transform's result has another type)."""
    target = fn.fn if isinstance(fn, Program) else fn
    annotations = dict(getattr(target, "__annotations__", {}) or {})
    annotations.pop("return", None)
    body.__wrapped__ = target  # type: ignore[attr-defined]  # signature and globals for annotation lookup
    body.__annotations__ = annotations
    body.__name__ = name
    body.__qualname__ = name
    if not isinstance(fn, Program):
        return Program(body, name=name)
    return Program(body, name=name, static_argnums=fn.static_argnums, static_argnames=fn.static_argnames)
