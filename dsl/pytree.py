"""Pytrees: nested tuples, lists, dicts, None, namedtuples and attrs classes, flattened to leaves and back.

A ``TreeDef`` is a hashable description of the structure, so it can key compile caches.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, cast

import attrs


class TreeDef(NamedTuple):
    """``kind`` names the container, ``aux`` is static data (dict keys, the class), ``children`` sub-trees."""

    kind: str
    aux: Hashable
    children: tuple[TreeDef, ...]

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        children = self.children
        leaves = children.count(LEAF)
        if leaves == len(children):  # leaves only (a (w, b) pair): counted in one C call
            return leaves
        return sum([c.num_leaves for c in children])

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children))  # type: ignore[call-overload]
            return "{" + inner + "}"
        if self.kind == "list":
            return f"[{inner}]"
        if self.kind == "tuple":
            return f"({inner},)" if len(self.children) == 1 else f"({inner})"
        return f"{getattr(self.aux, '__name__', self.aux)}({inner})"


# ``TreeDef(kind, aux, children)`` without the Python-level ``__new__`` NamedTuple generates (one per container).
_new_treedef: Callable[[tuple[str, Hashable, tuple[TreeDef, ...]]], TreeDef] = functools.partial(tuple.__new__, TreeDef)
LEAF = TreeDef("leaf", None, ())
NONE = TreeDef("none", None, ())

_CUSTOM: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]], Callable[[Hashable, list[Any]], Any]]] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_fn: Callable[[Hashable, list[Any]], Any],
) -> None:
    """Make ``cls`` a container: ``flatten_fn(x) -> (children, aux)``, ``unflatten_fn(aux, children) -> x``."""
    _CUSTOM[cls] = (flatten_fn, unflatten_fn)
    _PLAIN_LEAF_TYPES.discard(cls)  # so the set never holds a container type (``_flatten``'s fast path trusts it)


# Types already found to be plain leaves (not containers of any kind); whether a class is a namedtuple or an attrs
# class never changes, and registered classes are looked up first, so a later registration still wins.
_PLAIN_LEAF_TYPES: set[type] = set()


_LEAF_TUPLES: dict[int, TreeDef] = {}  # the TreeDef of a tuple of n leaves (equal values: one is shared)


def _leaf_tuple(n: int) -> TreeDef:
    treedef = _LEAF_TUPLES.get(n)
    if treedef is None:
        treedef = _new_treedef(("tuple", None, (LEAF,) * n))
        if n <= 64:
            _LEAF_TUPLES[n] = treedef
    return treedef


def _flatten(tree: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> TreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    kind = type(tree)
    if kind in _PLAIN_LEAF_TYPES and kind not in _CUSTOM:
        leaves.append(tree)
        return LEAF
    if kind is tuple or kind is list:
        name = "tuple" if kind is tuple else "list"
        if is_leaf is None and _PLAIN_LEAF_TYPES.issuperset(map(type, tree)):
            # Fast path (parameter lists of (w, b) pairs): every child a known plain leaf, checked in one C call.
            leaves.extend(tree)
            return _new_treedef((name, None, (LEAF,) * len(tree)))
        if is_leaf is None:  # children that are tuples of known plain leaves ((w, b) pairs) without a call each
            nodes: list[TreeDef] = []
            leaf_tuples = _LEAF_TUPLES
            for c in tree:
                if type(c) is tuple and _PLAIN_LEAF_TYPES.issuperset(map(type, c)):
                    leaves.extend(c)
                    nodes.append(leaf_tuples.get(len(c)) or _leaf_tuple(len(c)))
                else:
                    nodes.append(_flatten(c, leaves, None))
            return _new_treedef((name, None, tuple(nodes)))
        return _new_treedef((name, None, tuple([_flatten(c, leaves, is_leaf) for c in tree])))
    if kind is dict:
        keys = tuple(sorted(tree))
        return TreeDef("dict", keys, tuple([_flatten(tree[k], leaves, is_leaf) for k in keys]))
    if tree is None:
        return NONE
    if kind in _CUSTOM:
        children, aux = _CUSTOM[kind][0](tree)
        return TreeDef("custom", (kind, aux), tuple([_flatten(c, leaves, is_leaf) for c in children]))
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return TreeDef("namedtuple", kind, tuple([_flatten(c, leaves, is_leaf) for c in tree]))  # type: ignore[arg-type]
    if attrs.has(kind):
        names = tuple(f.name for f in attrs.fields(kind))
        return TreeDef("attrs", (kind, names), tuple([_flatten(getattr(tree, n), leaves, is_leaf) for n in names]))
    leaves.append(tree)
    if len(_PLAIN_LEAF_TYPES) < 1024 and not isinstance(tree, tuple):
        _PLAIN_LEAF_TYPES.add(kind)
    return LEAF


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return flatten(tree, is_leaf)[0]


def _build(treedef: TreeDef, it: Any) -> Any:
    kind = treedef.kind
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    nodes = treedef.children
    if nodes.count(LEAF) == len(nodes):  # leaves only (a (w, b) pair): take them in one C call
        children = list(itertools.islice(it, len(nodes)))
        if len(children) < len(nodes):
            next(it)  # out of leaves: StopIteration, as the leaf-by-leaf walk raises
    else:
        children = []
        for c in nodes:
            grand = c.children
            if c.kind == "tuple" and grand.count(LEAF) == len(grand):  # a tuple of leaves ((w, b) pairs), no call
                group = tuple(itertools.islice(it, len(grand)))
                if len(group) < len(grand):
                    next(it)  # out of leaves: StopIteration, as the leaf-by-leaf walk raises
                children.append(group)
            else:
                children.append(_build(c, it))
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(treedef.aux, children))  # type: ignore[call-overload]
    if kind == "namedtuple":
        return treedef.aux(*children)  # type: ignore[operator]
    if kind == "attrs":
        cls, names = cast(tuple[Any, Any], treedef.aux)
        return cls(**dict(zip(names, children)))
    cls, aux = cast(tuple[Any, Any], treedef.aux)
    return _CUSTOM[cls][1](aux, children)


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    it = iter(leaves)
    out = _build(treedef, it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef!r}")
    return out


_SENTINEL = object()


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``fn`` leafwise; ``rest`` trees must have ``tree``'s structure."""
    flat, treedef = flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other, is_leaf)
        if other_def != treedef:
            raise ValueError(f"tree structures differ: {treedef!r} vs {other_def!r}")
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])


def structure(tree: Any) -> TreeDef:
    return flatten(tree)[1]


def leaf_paths(treedef: TreeDef, root: str) -> list[str]:
    """Readable names of the leaves below ``root``, for error messages: ``x['w']``, ``params.b``, ``output[1]``."""
    out: list[str] = []

    def walk(node: TreeDef, path: str) -> None:
        if node.kind == "leaf":
            out.append(path)
        elif node.kind == "dict":
            for key, child in zip(node.aux, node.children):  # type: ignore[call-overload]
                walk(child, f"{path}[{key!r}]")
        elif node.kind == "attrs":
            for key, child in zip(node.aux[1], node.children):  # type: ignore[index]
                walk(child, f"{path}.{key}")
        else:
            for i, child in enumerate(node.children):
                walk(child, f"{path}[{i}]")

    walk(treedef, root)
    return out
