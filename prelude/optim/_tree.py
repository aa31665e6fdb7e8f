"""Leafwise helpers over parameter pytrees (tuples, lists, dicts, attrs classes of tensors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...pytree import flatten, structure, tree_map, unflatten
from ..numpy import zeros_like

T = TypeVar("T")


def zeros_tree(tree: T) -> T:
    return tree_map(zeros_like, tree)  # type: ignore[no-any-return]


def map_trees(fn: Callable[..., Any], tree: T, *rest: Any) -> T:
    """``fn`` over matching leaves; a mismatched structure (grads for other params) is a clear error."""
    for other in rest:
        if structure(other) != structure(tree):
            raise TypeError(
                f"optimizer: the trees differ in structure: {structure(tree)!r} vs {structure(other)!r} "
                "(gradients, state and parameters must have one structure)"
            )
    return tree_map(lambda *leaves: fn(*_same_types(leaves)), tree, *rest)  # type: ignore[no-any-return]


def _same_types(leaves: tuple[Any, ...]) -> tuple[Any, ...]:
    """Matching leaves must have one shape and dtype: NumPy would broadcast or promote (grads for other params)."""
    first = leaves[0]
    for other in leaves[1:]:
        for attr in ("shape", "dtype"):
            a, b = getattr(first, attr, None), getattr(other, attr, None)
            if a is not None and b is not None and a != b:
                raise TypeError(
                    f"optimizer: a parameter has {attr} {a} but its gradient or state has {attr} {b} "
                    "(gradients, state and parameters must match leaf by leaf)"
                )
    return leaves


def decay_mask(name: str, mask: Any, params: Any) -> Any:
    """``mask`` (None: every leaf; a pytree of bools like ``params``; or a function of ``params`` returning one)
    as a tree of Python bools with the parameters' structure."""
    if mask is None:
        return tree_map(lambda _: True, params)
    tree = mask(params) if callable(mask) else mask
    flags, treedef = flatten(tree)
    if treedef != structure(params):
        raise TypeError(
            f"{name}: the weight decay mask's structure {treedef!r} differs from the parameters' "
            f"{structure(params)!r} (give one bool per parameter leaf)"
        )
    for flag in flags:
        if type(flag) is not bool:
            raise TypeError(f"{name}: the weight decay mask must hold Python bools (static), got {flag!r}")
    return unflatten(treedef, flags)
