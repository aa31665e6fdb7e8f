"""``tensorstage.tree_util`` and ``tensorstage.tree``: JAX's pytree utilities under JAX's two sets of names
(``tree_util.tree_map`` / ``tree.map``, ...), over the containers ``tensorstage`` flattens: tuples, lists, dicts
(sorted keys), OrderedDict, defaultdict, None (an empty subtree), namedtuples, attrs classes and registered
classes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from . import pytree
from .pytree import TreeDef, register_pytree_node

__all__ = [
    "PyTreeDef", "register_pytree_node", "register_pytree_node_class", "tree_all", "tree_flatten", "tree_leaves",
    "tree_map", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf",
]

PyTreeDef = TreeDef
C = TypeVar("C", bound=type)
T = TypeVar("T")
IsLeaf = Callable[[Any], bool] | None
_NO_INITIAL = object()


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeDef]:
    """The leaves of ``tree`` (left to right, dict keys sorted) and its structure."""
    return pytree.flatten(tree, is_leaf)


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` holding ``leaves``."""
    return pytree.unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    return pytree.leaves(tree, is_leaf)


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> TreeDef:
    return pytree.flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """``f`` applied leafwise to ``tree`` and the trees ``rest`` (of ``tree``'s structure)."""
    return pytree.tree_map(f, tree, *rest, is_leaf=is_leaf)


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: Any = _NO_INITIAL, is_leaf: IsLeaf = None) -> T:
    """``functools.reduce`` over the leaves of ``tree``."""
    leaves = pytree.leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        if not leaves:
            raise TypeError("tree_reduce of a tree without leaves needs an initializer")
        folded: T = functools.reduce(function, leaves)
        return folded
    return functools.reduce(function, leaves, initializer)  # type: ignore[no-any-return]


def tree_all(tree: Any, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf is truthy (concrete leaves only: a staged tensor has no truth value)."""
    return all(pytree.leaves(tree, is_leaf))


def _subtrees(treedef: TreeDef, tree: Any) -> list[Any]:
    """The subtrees of ``tree`` at the leaves of ``treedef`` (a prefix of its structure), left to right."""
    if treedef.kind == "leaf":
        return [tree]
    children, node = pytree.flatten(tree, is_leaf=lambda x: x is not tree)  # one level down
    if node.kind != treedef.kind or node.aux != treedef.aux or len(children) != len(treedef.children):
        raise ValueError(f"tree_transpose: the tree does not have the outer structure {treedef!r} (found {node!r})")
    return [sub for child, c in zip(children, treedef.children) for sub in _subtrees(c, child)]


def tree_transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of structure ``outer`` of trees of structure ``inner`` as an ``inner`` tree of ``outer`` trees
    (``inner`` None: the first subtree's structure)."""
    subtrees = _subtrees(outer_treedef, pytree_to_transpose)
    if not subtrees:
        raise ValueError("tree_transpose: the outer structure has no leaves")
    inner = inner_treedef if inner_treedef is not None else pytree.flatten(subtrees[0])[1]
    rows = []
    for sub in subtrees:
        leaves, treedef = pytree.flatten(sub)
        if treedef != inner:
            raise ValueError(f"tree_transpose: a subtree has structure {treedef!r}, not {inner!r}")
        rows.append(leaves)
    return pytree.unflatten(inner, [pytree.unflatten(outer_treedef, column) for column in zip(*rows)])


def treedef_is_leaf(treedef: TreeDef) -> bool:
    return treedef.kind == "leaf"


def treedef_children(treedef: TreeDef) -> list[TreeDef]:
    return list(treedef.children)


def register_pytree_node_class(cls: C) -> C:
    """A class decorator: ``cls`` flattens with its ``tree_flatten()`` method (children, aux) and rebuilds with
    its ``tree_unflatten(aux, children)`` classmethod, as in JAX."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), lambda aux, children: cls.tree_unflatten(aux, children))  # type: ignore[attr-defined]
    return cls
