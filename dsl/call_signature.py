"""How a call's arguments become a signature: which leaves are static values (part of the cache key) and which
are typed inputs, with the type each input stages as."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .array import Array, as_host_array
from .dispatch import hashable_static_key
from .dispatch import static_key as dispatch_static_key
from .signature import Spec
from .staging import dtypes as _dt
from .staging.ir import Aval
from .tensor import Tensor
from .trace import WEAK_FLOAT_AVAL


def is_dynamic(leaf: object, scalars_dynamic: bool) -> bool:
    if isinstance(leaf, (Tensor, np.ndarray, np.generic, Spec)):
        return True
    return scalars_dynamic and type(leaf) in (float, int, bool)


def leaf_aval(leaf: Any) -> Aval:
    if isinstance(leaf, (Tensor, Spec)):
        return leaf.aval
    if isinstance(leaf, (np.ndarray, np.generic)):
        return Aval(leaf.shape, _dt.canonical(leaf.dtype))
    if type(leaf) is float:  # passed as float64, staged weakly typed: ``a + s`` keeps all of s for an f64 ``a``
        return WEAK_FLOAT_AVAL
    host = as_host_array(leaf)  # Python int or bool: default dtype, weakly typed
    return Aval((), host.dtype)


# Leaf types that are dynamic and carry their own aval (``is_dynamic`` and ``leaf_aval`` say so, with more calls).
TYPED_LEAVES: frozenset[type] = frozenset({Spec, Array})


def static_key(leaf: Any) -> Hashable:
    if type(leaf) is StaticArgument:
        return hashable_static_key(leaf.value, "static argument (static_argnums/static_argnames)")
    # Every other non-array leaf is static too (a set, a string, an object), so say why it must hash.
    return hashable_static_key(leaf, "non-array argument (a static value, part of the cache key)")


class StaticArgument:
    """Wraps a ``static_argnums``/``static_argnames`` argument so it is one pytree leaf (its value keys the
    cache)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(dispatch_static_key(self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StaticArgument) and dispatch_static_key(other.value) == dispatch_static_key(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


class Signature:
    """How a call's flattened arguments split into static values (part of the key) and typed inputs."""

    __slots__ = ("treedef", "dynamic", "statics", "avals", "weak", "key")

    def __init__(self, treedef: pytree.TreeDef, leaves: Sequence[Any], scalars_dynamic: bool) -> None:
        self.treedef = treedef
        dynamic: list[bool] = []
        statics: list[Any] = []
        avals: list[Aval | None] = []
        weak: list[bool] = []
        layouts: list[tuple[tuple[int, ...], np.dtype[Any]]] = []
        for x in leaves:  # one pass: this runs per leaf of every staged or dispatched call
            kind = type(x)
            if kind in TYPED_LEAVES or is_dynamic(x, scalars_dynamic):
                aval = x.aval if kind in TYPED_LEAVES else leaf_aval(x)
                dynamic.append(True)
                statics.append(None)
                avals.append(aval)
                weak.append(kind in (float, int, bool))
                layouts.append((aval.shape, aval.dtype))
            else:
                dynamic.append(False)
                statics.append(x)
                avals.append(None)
                weak.append(False)
        self.dynamic = tuple(dynamic)
        self.statics = tuple(statics)
        self.avals = tuple(avals)
        self.weak = tuple(weak)
        # After every aval: a leaf with no type is reported before an unhashable static argument.
        static_keys = tuple(static_key(x) for x, d in zip(leaves, dynamic) if not d)
        # ``dynamic`` too: ``op(1.0, x)`` and ``op(x, 1.0)`` have equal statics and layouts, in other positions.
        self.key = (treedef, self.dynamic, static_keys, tuple(layouts), self.weak)


def leaf_names(treedef: pytree.TreeDef, names: Sequence[str]) -> list[str]:
    """Human names of each leaf of ``(args, kwargs)``: ``x``, ``params.w``, ``batch[0]``."""
    args_def, kwargs_def = treedef.children
    out: list[str] = []
    for i, child in enumerate(args_def.children):
        out += pytree.leaf_paths(child, names[i] if i < len(names) else f"arg{i}")
    for key, child in zip(kwargs_def.aux, kwargs_def.children):  # type: ignore[call-overload]
        out += pytree.leaf_paths(child, str(key))
    return out
