"""The call fast path: one pass over a call's arguments yields a hashable key and the array leaves.

A key fixes everything a compiled program depends on: the argument structure, every static value, and the
shape and dtype of every array leaf (an Array's aval, a NumPy array's shape and dtype, a dynamic Python
scalar's type). So a key seen once after a validated call needs no further checks: an argument of another
shape or dtype gives another key and takes the slow path, which validates (and stages) before anything runs.

The pass mirrors ``pytree.flatten``'s leaf order for tuples, lists, dicts and None; other containers
(namedtuples, attrs classes, registered nodes) are flattened by ``pytree`` and their TreeDef enters the key.
Anything unusual (staged values, Specs, ndarray subclasses) raises ``Unsupported``: the caller then takes the
general path, which gives the proper error or result.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Hashable
from typing import Any

import attrs
import numpy as np

from . import pytree
from .array import Array


class Unsupported(Exception):
    """This call has an argument the fast path does not key; use the general path."""


class StaticArg:
    """Tags a ``static_argnums`` argument in a key (its value, whatever its structure, is one static)."""

    __slots__ = ()


_STATIC = StaticArg()
_SCALARS = (float, int, bool)
_DICT_TYPES = (OrderedDict, defaultdict)  # containers ``pytree`` flattens (a plain dict is keyed inline)


def static_key(value: Any) -> Hashable:
    """A cache key for a static value that keeps apart values Python calls equal but that stage differently
    (``1``, ``1.0`` and ``True``, also inside tuples; ``0.0`` and ``-0.0``) and matches a nan with itself.
    Hashing the key fails where the value is unhashable."""
    kind = type(value)
    if kind is float:
        return (float, value.hex())
    if isinstance(value, tuple):
        return (kind, tuple(static_key(v) for v in value))
    if kind is slice:
        return (slice, static_key(value.start), static_key(value.stop), static_key(value.step))
    return (kind, value)


def hashable_static_key(value: Any, what: str) -> Hashable:
    """``static_key(value)``, or a TypeError that names ``what`` where the value cannot key a cache."""
    key = static_key(value)
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"{what} {value!r:.100} must be hashable, but {type(value).__name__} is not") from None
    return key


def call_key(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnums: frozenset[int],
    scalars_dynamic: bool,
    static_argnames: frozenset[str] = frozenset(),
) -> tuple[tuple[Hashable, ...], list[Any]]:
    """``(key, dynamic leaves)`` for ``fn(*args, **kwargs)``; raises ``Unsupported`` for unusual arguments."""
    parts: list[Hashable] = [len(args)]
    dynamic: list[Any] = []
    if static_argnums:
        for i, x in enumerate(args):
            if i in static_argnums:
                parts.append((_STATIC, static_key(x)))
            else:
                _visit(x, parts, dynamic, scalars_dynamic)
    else:
        for x in args:
            if type(x) is Array:  # the common case, inlined
                parts.append(x._aval)
                dynamic.append(x)
            else:
                _visit(x, parts, dynamic, scalars_dynamic)
    if kwargs:
        names = tuple(sorted(kwargs))
        parts.append((dict, names))
        for name in names:
            if name in static_argnames:
                parts.append((_STATIC, static_key(kwargs[name])))
            else:
                _visit(kwargs[name], parts, dynamic, scalars_dynamic)
    return tuple(parts), dynamic


def _visit(x: Any, parts: list[Hashable], dynamic: list[Any], scalars_dynamic: bool) -> None:
    kind = type(x)
    if kind is Array:
        parts.append(x._aval)
        dynamic.append(x)
    elif kind is np.ndarray:
        parts.append((x.shape, x.dtype))
        dynamic.append(x)
    elif kind in _SCALARS:
        if scalars_dynamic:
            parts.append(kind)  # type: ignore[arg-type]  # a type is hashable
            dynamic.append(x)
        else:
            parts.append(static_key(x))
    elif kind is tuple or kind is list:
        parts.append((kind, len(x)))
        for child in x:
            _visit(child, parts, dynamic, scalars_dynamic)
    elif kind is dict:
        keys = pytree.sorted_keys(x)
        parts.append((dict, keys))
        for key in keys:
            _visit(x[key], parts, dynamic, scalars_dynamic)
    elif x is None:
        parts.append(None)
    elif isinstance(x, np.generic):
        parts.append((kind, x.dtype))
        dynamic.append(x)
    elif kind in pytree._CUSTOM or isinstance(x, tuple) or attrs.has(kind) or kind in _DICT_TYPES:
        leaves, treedef = pytree.flatten(x)
        parts.append(treedef)
        for leaf in leaves:
            _visit(leaf, parts, dynamic, scalars_dynamic)
    elif isinstance(x, (np.ndarray, list, dict, set)) or hasattr(x, "aval"):
        raise Unsupported  # staged values, Specs, ndarray subclasses, unhashable statics
    else:
        parts.append(static_key(x))  # a static value; an unhashable one fails the lookup, then the general path
