"""``tensorstage.tree_util`` and ``tensorstage.tree``: JAX's pytree utilities under JAX's two sets of names
(``tree_util.tree_map`` / ``tree.map``, ...), over the containers ``tensorstage`` flattens: tuples, lists, dicts
(sorted keys), OrderedDict, defaultdict, None (an empty subtree), namedtuples, attrs classes and registered
classes (``register_pytree_node``, ``register_pytree_with_keys``, ``register_dataclass``, ``register_static``).

Key paths (``tree_flatten_with_path``, ``keystr``, ...) name each leaf as JAX does: ``SequenceKey(i)`` in a tuple or
list, ``DictKey(k)`` in a dict (sorted keys; an OrderedDict in its order), ``GetAttrKey(name)`` in a namedtuple,
attrs class or registered dataclass, ``FlattenedIndexKey(i)`` in a class registered without keys, and the given
keys in one registered with them. ``Partial`` is a ``functools.partial`` whose arguments are leaves and whose
function is static, so it can be passed to and returned from ``ts.program``, ``ts.grad`` and ``ts.vmap``.

Deliberate differences from ``jax.tree_util`` 0.10.2:

- attrs classes are containers (JAX: leaves): their fields are children, keyed ``GetAttrKey(field)``, and
  ``is_tree_node`` is true for them.
- ``tree_map`` (and ``tree.map``) needs every tree to have the first tree's structure; ``tree_map_with_path`` and
  ``tree_broadcast`` take JAX's wider rule (the first tree's structure is a prefix of the others').
- ``flatten_one_level_with_keys`` of a namedtuple keys each child by its own field (JAX 0.10.2 repeats the first
  field's name; its ``tree_flatten_with_path`` gets them right, as here).
- ``KeyEntry`` is typed ``Hashable`` (JAX: an unbounded TypeVar), so a path's entries are narrowed with
  ``isinstance`` (or ``match``) before their fields are read.
- ``default_registry`` is left out: there is one registry, filled through the ``register_*`` functions, and no way
  to make another, so a registry object would add nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Self, TypeVar, cast

from . import pytree
from .pytree import (
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey, TreeDef, register_pytree_node,
    register_pytree_with_keys,
)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef", "SequenceKey",
    "all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast", "tree_flatten",
    "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
    "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]

PyTreeDef = TreeDef
C = TypeVar("C", bound=type)
T = TypeVar("T")
IsLeaf = Callable[[Any], bool] | None
# ``is_leaf(x)``, or ``is_leaf(path, x)`` with ``is_leaf_takes_path=True``.
PathIsLeaf = Callable[[Any], bool] | Callable[[KeyPath, Any], bool] | None
_NO_INITIAL: Any = object()


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


def tree_transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of structure ``outer`` of trees of structure ``inner`` as an ``inner`` tree of ``outer`` trees
    (``inner`` None: the first subtree's structure)."""
    subtrees = pytree.flatten_up_to(outer_treedef, pytree_to_transpose, "tree_transpose: the tree")
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


def treedef_tuple(treedefs: Iterable[TreeDef]) -> TreeDef:
    """The structure of a tuple of trees of structures ``treedefs``."""
    children = tuple(treedefs)
    for treedef in children:
        if not isinstance(treedef, TreeDef):
            raise TypeError(f"treedef_tuple: expected tree structures (PyTreeDef), got {treedef!r:.200}")
    return TreeDef("tuple", None, children)


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are containers (built in, a namedtuple or attrs class, or registered)."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a class, got {typ!r:.200}")
    return pytree.is_node_type(typ)


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf = None) -> bool:
    """Whether each element is a leaf (None, an empty subtree, is not)."""
    items = list(iterable)
    leaves = pytree.leaves(items, is_leaf)
    return len(leaves) == len(items) and all(item is leaf for item, leaf in zip(items, leaves))


def tree_reduce_associative(
    operation: Callable[[T, T], T], tree: Any, *, identity: T = _NO_INITIAL, is_leaf: IsLeaf = None
) -> T:
    """The leaves of ``tree`` combined pairwise as a balanced tree (``operation`` must be associative); the
    ``identity`` is the result for a tree without leaves."""
    leaves = pytree.leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIAL:
            raise TypeError("tree_reduce_associative of a tree without leaves needs an identity")
        return identity
    reduced: T = _pairwise(operation, leaves)
    return reduced


def _pairwise(operation: Callable[[T, T], T], items: list[T]) -> T:
    if len(items) == 1:
        return items[0]
    half = len(items) // 2
    return operation(_pairwise(operation, items[:half]), _pairwise(operation, items[half:]))


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> Any:
    """``full_tree``'s structure with each leaf of ``prefix_tree`` (a prefix of it) repeated over its subtree."""
    prefix_leaves, prefix_def = pytree.flatten(prefix_tree, is_leaf)
    subtrees = pytree.flatten_up_to(prefix_def, full_tree, "tree_broadcast: full_tree")
    leaves = [x for x, sub in zip(prefix_leaves, subtrees) for _ in range(pytree.structure(sub).num_leaves)]
    return pytree.unflatten(pytree.structure(full_tree), leaves)


def flatten_one_level(tree: Any) -> tuple[list[Any], Hashable]:
    """The children of the container ``tree`` and its static data (dict keys, a registered class's aux, ...)."""
    children, node = pytree.flatten_one_level(tree)
    return children, _node_data(tree, node)


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[KeyEntry, Any]], Hashable]:
    """``flatten_one_level`` with each child's key: ``[(key, child), ...]`` and the static data."""
    pairs, node = pytree.flatten_one_level_with_keys(tree)
    return pairs, _node_data(tree, node)


def _node_data(tree: Any, node: TreeDef) -> Hashable:
    if node.kind == "leaf":
        raise ValueError(f"flatten_one_level: a {type(tree).__name__} is a leaf, not a container")
    return cast(tuple[Any, Hashable], node.aux)[1] if node.kind == "custom" else node.aux


# ------------------------------------------------------------------------------------------------ key paths


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['w'][0].b``; ``simple=True`` drops the brackets and dots (``w/0/b`` with
    ``separator='/'``), which can be ambiguous (a list index or a dict key ``0``)."""
    return separator.join(map(_simple_entry if simple else str, keys))


def _simple_entry(key: KeyEntry) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, DictKey | FlattenedIndexKey):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return key.name
    return str(key)


def _path_is_leaf(is_leaf: PathIsLeaf, is_leaf_takes_path: bool) -> Callable[[KeyPath, Any], bool] | None:
    if is_leaf is None or is_leaf_takes_path:
        return cast(Callable[[KeyPath, Any], bool] | None, is_leaf)
    takes_leaf = cast(Callable[[Any], bool], is_leaf)
    return lambda _, x: takes_leaf(x)


def tree_flatten_with_path(
    tree: Any, is_leaf: PathIsLeaf = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], TreeDef]:
    """``tree_flatten`` with each leaf's key path: ``[(path, leaf), ...]`` and the structure."""
    return pytree.flatten_with_path(tree, _path_is_leaf(is_leaf, is_leaf_takes_path))


def tree_leaves_with_path(
    tree: Any, is_leaf: PathIsLeaf = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """Each leaf of ``tree`` with its key path."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: PathIsLeaf = None, is_leaf_takes_path: bool = False
) -> Any:
    """``f(path, leaf, *others)`` at each leaf of ``tree``; ``tree``'s structure must be a prefix of each tree in
    ``rest`` (``others`` are their subtrees there)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [pytree.flatten_up_to(treedef, other, f"tree_map_with_path: tree {i}") for i, other in enumerate(rest, 1)]
    return pytree.unflatten(treedef, [f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)])


def register_pytree_with_keys_class(cls: C) -> C:
    """A class decorator: ``cls`` flattens with its ``tree_flatten_with_keys()`` method (``[(key, child), ...]``,
    aux), or ``tree_flatten()`` where it has one, and rebuilds with its ``tree_unflatten(aux, children)``
    classmethod, as in JAX."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    unflatten = cls.tree_unflatten  # type: ignore[attr-defined]
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"), unflatten, flatten)
    return cls


def register_static(cls: C) -> C:
    """A class decorator: instances of ``cls`` are containers without leaves, held whole (hashable, compared with
    ``==``) in the structure, so programs take them as static arguments."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def register_dataclass(
    nodetype: C,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> C:
    """Register a class built by keywords (a dataclass): ``data_fields`` are children (keyed
    ``GetAttrKey(name)``), ``meta_fields`` static data (hashable). For a dataclass both may be left out: fields
    whose ``metadata`` has ``static=True`` (``tree.static()``) are meta fields, the others data fields. Usable as a
    decorator."""
    data, meta = _dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[KeyEntry, Any]], Hashable]:
        return [(GetAttrKey(name), getattr(x, name)) for name in data], tuple([getattr(x, name) for name in meta])

    def flatten(x: Any) -> tuple[list[Any], Hashable]:
        return [getattr(x, name) for name in data], tuple([getattr(x, name) for name in meta])

    def unflatten(meta_values: Hashable, children: list[Any]) -> Any:
        return nodetype(**dict(zip(meta, cast(tuple[Any, ...], meta_values))), **dict(zip(data, children)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


def _dataclass_fields(
    nodetype: type, data_fields: Sequence[str] | None, meta_fields: Sequence[str] | None, drop_fields: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The data and meta field names, checked against the dataclass's ``__init__`` fields."""
    name = getattr(nodetype, "__name__", nodetype)
    is_dataclass = dataclasses.is_dataclass(nodetype)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(f"register_dataclass({name}): give both data_fields and meta_fields, or neither "
                            f"(got data_fields={data_fields!r}, meta_fields={meta_fields!r})")
        if not is_dataclass:
            raise TypeError(f"register_dataclass({name}): data_fields and meta_fields are needed for a class that "
                            "is not a dataclass")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if is_dataclass:
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        missing, unexpected = init_fields - {*data, *meta}, {*data, *meta} - init_fields
        if missing or unexpected:
            raise ValueError(
                f"register_dataclass({name}): data_fields and meta_fields must hold the dataclass fields with "
                f"init=True and only them: missing {sorted(missing)} (add them to drop_fields to leave them out), "
                f"unexpected {sorted(unexpected)}"
            )
    if overlap := set(data) & set(meta):
        raise ValueError(f"register_dataclass({name}): fields both data and meta: {sorted(overlap)}")
    return data, meta


# ------------------------------------------------------------------------------------------------ Partial


class _BoxedPartial:
    """A ``functools.partial`` given to ``Partial`` as its function, boxed so that ``functools.partial`` does not
    merge their arguments (the inner partial's arguments are static, not leaves); hashed and compared as it."""

    def __init__(self, fn: functools.partial[Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fn)

    def __eq__(self, other: object) -> bool:
        return self.fn == (other.fn if isinstance(other, _BoxedPartial) else other)

    def __repr__(self) -> str:
        return repr(self.fn)


class Partial(functools.partial[T]):
    """``functools.partial`` as a pytree: the bound arguments (positional and keyword) are leaves, the function
    static data, so a ``Partial`` can be passed to and returned from ``ts.program``, ``ts.grad`` and ``ts.vmap``
    (where its arguments are traced)."""

    def __new__(cls, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> Self:
        if isinstance(func, functools.partial):
            return super().__new__(cls, _BoxedPartial(func), *args, **kwargs)
        return super().__new__(cls, func, *args, **kwargs)


def _rebuild_partial(func: Hashable, children: list[Any]) -> Partial[Any]:
    args, kwargs = children
    return Partial(cast(Callable[..., Any], func), *args, **kwargs)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func), _rebuild_partial)
