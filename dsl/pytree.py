"""Pytrees: nested tuples, lists, dicts (also OrderedDict and defaultdict), None, namedtuples and attrs classes,
flattened to leaves and back.

A ``TreeDef`` is a hashable description of the structure, so it can key compile caches. Key paths (``SequenceKey``,
``DictKey``, ``GetAttrKey``, ``FlattenedIndexKey``, as JAX names them) come from ``flatten_with_path``, a separate walk
that leaves ``flatten`` (on every program call's dispatch path) as it is.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, ClassVar, NamedTuple, TypeAlias, cast

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
        if self.kind in _DICT_KINDS:
            inner = "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(dict_keys(self), self.children)) + "}"
            return inner if self.kind == "dict" else f"{self.kind}({inner})"
        if self.kind == "list":
            return f"[{inner}]"
        if self.kind == "tuple":
            return f"({inner},)" if len(self.children) == 1 else f"({inner})"
        return f"{getattr(self.aux, '__name__', self.aux)}({inner})"


# ``TreeDef(kind, aux, children)`` without the Python-level ``__new__`` NamedTuple generates (one per container).
_new_treedef: Callable[[tuple[str, Hashable, tuple[TreeDef, ...]]], TreeDef] = functools.partial(tuple.__new__, TreeDef)
LEAF = TreeDef("leaf", None, ())
NONE = TreeDef("none", None, ())

_DICT_KINDS = ("dict", "OrderedDict", "defaultdict")


def dict_keys(treedef: TreeDef) -> tuple[Any, ...]:
    """The keys of a dict-like node, in leaf order (a defaultdict's aux also holds its default factory)."""
    aux = treedef.aux
    return cast(tuple[Any, ...], aux[1] if treedef.kind == "defaultdict" else aux)  # type: ignore[index]


def sorted_keys(tree: dict[Any, Any]) -> tuple[Any, ...]:
    """A dict's keys in a deterministic order: sorted, as JAX does, so equal dicts built in any order flatten alike.
    Keys of several types (``{1: a, "w": b}``) cannot all be compared: they sort by type name, then value."""
    try:
        return tuple(sorted(tree))
    except TypeError:
        pass
    try:
        return tuple(sorted(tree, key=lambda k: (type(k).__module__, type(k).__qualname__, k)))
    except TypeError:
        raise TypeError(
            f"pytree: cannot order the dict keys {list(tree)!r:.200} (keys of one type must be comparable with "
            "each other, as for sorted())"
        ) from None


_CUSTOM: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]], Callable[[Hashable, list[Any]], Any]]] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_fn: Callable[[Hashable, list[Any]], Any],
    flatten_with_keys_fn: FlattenWithKeys | None = None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(x) -> (children, aux)``, ``unflatten_fn(aux, children) -> x``;
    ``flatten_with_keys_fn(x) -> ([(key, child), ...], aux)``, if given, names the children in key paths."""
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node: cls must be a class, got {cls!r}")
    given = (flatten_fn, unflatten_fn, *([] if flatten_with_keys_fn is None else [flatten_with_keys_fn]))
    if not all(map(callable, given)):
        raise TypeError(
            f"register_pytree_node({cls.__name__}): the flatten and unflatten functions must be callables, got "
            + " and ".join(map(repr, given))
        )
    _CUSTOM[cls] = (flatten_fn, unflatten_fn)
    if flatten_with_keys_fn is None:
        _KEYED.pop(cls, None)
    else:
        _KEYED[cls] = flatten_with_keys_fn
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
        keys = sorted_keys(tree)
        return TreeDef("dict", keys, tuple([_flatten(tree[k], leaves, is_leaf) for k in keys]))
    if tree is None:
        return NONE
    if kind in _CUSTOM:
        return _flatten_custom(tree, kind, leaves, is_leaf)
    if kind is OrderedDict:  # its order is part of its value (OrderedDicts in another order are unequal)
        keys = tuple(tree)
        return TreeDef("OrderedDict", keys, tuple([_flatten(tree[k], leaves, is_leaf) for k in keys]))
    if kind is defaultdict:
        keys = sorted_keys(tree)
        children = tuple([_flatten(tree[k], leaves, is_leaf) for k in keys])
        return TreeDef("defaultdict", (tree.default_factory, keys), children)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return TreeDef("namedtuple", kind, tuple([_flatten(c, leaves, is_leaf) for c in tree]))  # type: ignore[arg-type]
    if attrs.has(kind):
        names = tuple(f.name for f in attrs.fields(kind))
        return TreeDef("attrs", (kind, names), tuple([_flatten(getattr(tree, n), leaves, is_leaf) for n in names]))
    leaves.append(tree)
    if len(_PLAIN_LEAF_TYPES) < 1024 and not isinstance(tree, tuple):
        _PLAIN_LEAF_TYPES.add(kind)
    return LEAF


def _flatten_custom(tree: Any, kind: type, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> TreeDef:
    try:
        children, aux = _CUSTOM[kind][0](tree)
        children = list(children)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"pytree: the flatten_fn registered for {kind.__name__} must return (children, aux): {exc}"
        ) from None
    return TreeDef("custom", (kind, aux), tuple([_flatten(c, leaves, is_leaf) for c in children]))


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
    if kind == "OrderedDict":
        return OrderedDict(zip(treedef.aux, children))  # type: ignore[call-overload]
    if kind == "defaultdict":
        factory, keys = cast(tuple[Any, Any], treedef.aux)
        return defaultdict(factory, zip(keys, children))
    if kind == "namedtuple":
        return treedef.aux(*children)  # type: ignore[operator]
    if kind == "attrs":
        cls, names = cast(tuple[Any, Any], treedef.aux)
        return cls(**dict(zip(names, children)))
    cls, aux = cast(tuple[Any, Any], treedef.aux)
    return _CUSTOM[cls][1](aux, children)


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    it = iter(leaves)
    try:
        out = _build(treedef, it)
    except StopIteration:
        raise ValueError(f"too few leaves for tree structure {treedef!r} ({treedef.num_leaves} leaves)") from None
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef!r}")
    return out


_SENTINEL = object()


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``fn`` leafwise; ``rest`` trees must have ``tree``'s structure."""
    flat, treedef = flatten(tree, is_leaf)
    others = []
    for i, other in enumerate(rest, 1):
        other_flat, other_def = flatten(other, is_leaf)
        if other_def != treedef:
            where = first_difference(treedef, other_def, "tree")
            raise ValueError(
                f"tree_map: tree {i} has another structure than tree 0: at {where}; {treedef!r} vs {other_def!r}"
            )
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])


def structure(tree: Any) -> TreeDef:
    return flatten(tree)[1]


def first_difference(a: TreeDef, b: TreeDef, path: str) -> str:
    """Where two structures first differ, for error messages: ``tree['b'][2]: a list of 3 vs a leaf``."""
    if a.kind != b.kind or a.aux != b.aux or len(a.children) != len(b.children):
        return f"{path}: {_describe(a)} vs {_describe(b)}"
    for name, x, y in zip(_child_names(a), a.children, b.children):
        if x != y:
            return first_difference(x, y, path + name)
    return f"{path}: {_describe(a)} vs {_describe(b)}"


def _describe(node: TreeDef) -> str:
    if node.kind in ("leaf", "none"):
        return "a leaf" if node.kind == "leaf" else "None"
    if node.kind in _DICT_KINDS:
        return f"a {node.kind} with keys {list(dict_keys(node))!r}"
    kind = node.kind if node.kind in ("tuple", "list") else repr(node).split("(")[0]
    return f"a {kind} of {len(node.children)}"


def _child_names(node: TreeDef) -> list[str]:
    """The path suffix of each child: ``['w']``, ``.b`` or ``[1]``."""
    if node.kind in _DICT_KINDS:
        return [f"[{key!r}]" for key in dict_keys(node)]
    if node.kind == "attrs":
        return [f".{key}" for key in node.aux[1]]  # type: ignore[index]
    if node.kind == "namedtuple":
        return [f".{key}" for key in cast(Any, node.aux)._fields]
    return [f"[{i}]" for i in range(len(node.children))]


def leaf_paths(treedef: TreeDef, root: str) -> list[str]:
    """Readable names of the leaves below ``root``, for error messages: ``x['w']``, ``params.b``, ``output[1]``."""
    out: list[str] = []

    def walk(node: TreeDef, path: str) -> None:
        if node.kind == "leaf":
            out.append(path)
        else:
            for name, child in zip(_child_names(node), node.children):
                walk(child, path + name)

    walk(treedef, root)
    return out


# ------------------------------------------------------------------------------------------------ key paths
# JAX's key-path API. Nothing here is on the dispatch path: paths are found by a separate walk, one node at a time,
# that reuses ``_flatten`` for each node (so its TreeDefs equal ``flatten``'s), never by changing ``flatten``.


class _Entry:
    """A key entry of one field, which ``_template`` formats as ``keystr`` shows it."""

    __slots__ = ()
    _template: ClassVar[str]

    def __str__(self) -> str:
        return self._template.format(*[getattr(self, f.name) for f in dataclasses.fields(cast(Any, self))])


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(_Entry):
    """The key of a tuple's or list's child: ``[idx]``."""

    idx: int
    _template: ClassVar[str] = "[{}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey(_Entry):
    """The key of a dict's (OrderedDict's, defaultdict's) child: ``['key']``."""

    key: Hashable
    _template: ClassVar[str] = "[{!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey(_Entry):
    """The key of a namedtuple's, attrs class's or registered dataclass's field: ``.name``."""

    name: str
    _template: ClassVar[str] = ".{}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey(_Entry):
    """The key of a child of a class registered without keys: its index among the children."""

    key: int
    _template: ClassVar[str] = "[<flat index {}>]"


# One step of a path: one of the four classes above, or what a ``register_pytree_with_keys`` flatten gives.
KeyEntry: TypeAlias = Hashable
KeyPath: TypeAlias = tuple[KeyEntry, ...]
FlattenWithKeys: TypeAlias = Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]]

_KEYED: dict[type, FlattenWithKeys] = {}  # the classes registered with keys


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: FlattenWithKeys,
    unflatten_func: Callable[[Hashable, list[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """``register_pytree_node`` with keys: ``flatten_with_keys(x) -> ([(key, child), ...], aux)``; ``flatten_func``
    (the same children and aux, without keys) defaults to one made from it."""

    def without_keys(tree: Any) -> tuple[list[Any], Hashable]:
        pairs, aux = flatten_with_keys(tree)
        return [child for _, child in pairs], aux

    register_pytree_node(nodetype, flatten_func or without_keys, unflatten_func, flatten_with_keys)


def is_node_type(cls: type) -> bool:
    """Whether ``flatten`` opens instances of ``cls`` (the rules of ``_flatten``, for a class)."""
    return (
        cls in _CUSTOM
        or cls in (tuple, list, dict, OrderedDict, defaultdict, type(None))
        or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
        or attrs.has(cls)
    )


def child_keys(node: TreeDef) -> tuple[KeyEntry, ...]:
    """The key of each child of ``node`` (a class registered with keys excepted: its keys come from the value)."""
    if node.kind in _DICT_KINDS:
        return tuple([DictKey(key) for key in dict_keys(node)])
    if node.kind == "namedtuple":
        return tuple([GetAttrKey(name) for name in cast(Any, node.aux)._fields])
    if node.kind == "attrs":
        return tuple([GetAttrKey(name) for name in cast(tuple[Any, Any], node.aux)[1]])
    if node.kind == "custom":
        return tuple([FlattenedIndexKey(i) for i in range(len(node.children))])
    return tuple([SequenceKey(i) for i in range(len(node.children))])


def flatten_one_level(tree: Any) -> tuple[list[Any], TreeDef]:
    """The children of ``tree`` and its node (a TreeDef with a leaf per child); a leaf gives ``([tree], LEAF)``."""
    children: list[Any] = []
    node = _flatten(tree, children, lambda x: x is not tree)
    return children, node


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[KeyEntry, Any]], TreeDef]:
    """``flatten_one_level`` with each child's key; a leaf gives ``([], LEAF)``."""
    keyed = _KEYED.get(type(tree))
    if keyed is None:
        children, node = flatten_one_level(tree)
        return list(zip(child_keys(node), children)), node
    try:
        pairs, aux = keyed(tree)
        pairs = [(key, child) for key, child in pairs]
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"pytree: the flatten_with_keys registered for {type(tree).__name__} must return "
            f"([(key, child), ...], aux): {exc}"
        ) from None
    return pairs, _new_treedef(("custom", (type(tree), aux), (LEAF,) * len(pairs)))


def flatten_with_path(
    tree: Any, is_leaf: Callable[[KeyPath, Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], TreeDef]:
    """``flatten`` with the key path of each leaf; ``is_leaf(path, x)`` stops the walk at ``x``."""
    out: list[tuple[KeyPath, Any]] = []

    def walk(x: Any, path: KeyPath) -> TreeDef:
        if is_leaf is not None and is_leaf(path, x):
            out.append((path, x))
            return LEAF
        pairs, node = flatten_one_level_with_keys(x)
        if node.kind == "leaf":
            out.append((path, x))
            return LEAF
        return _new_treedef((node.kind, node.aux, tuple([walk(child, (*path, key)) for key, child in pairs])))

    treedef = walk(tree, ())
    return out, treedef


def flatten_up_to(treedef: TreeDef, tree: Any, what: str) -> list[Any]:
    """The subtrees of ``tree`` at the leaves of ``treedef``, which must be a prefix of ``tree``'s structure
    (``what`` names the tree in the error)."""
    out: list[Any] = []

    def walk(node: TreeDef, x: Any, path: str) -> None:
        if node.kind == "leaf":
            out.append(x)
            return
        children, found = flatten_one_level(x)
        if found.kind != node.kind or found.aux != node.aux or len(found.children) != len(node.children):
            raise ValueError(
                f"{what}{path}: expected {_describe(node)} (the prefix structure {treedef!r}), found {_describe(found)}"
            )
        for name, child_node, child in zip(_child_names(node), node.children, children):
            walk(child_node, child, path + name)

    walk(treedef, tree, "")
    return out
