"""``lax.associative_scan``, ``lax.reduce``, ``lax.select_n`` and ``lax.map``: a parallel prefix scan written with
slices (so any associative function of tensors works, and gradients and batching come from the primitives it
stages), pairwise folds for ``reduce``, and a sequential map over the leading axis on ``ts.scan``.

``associative_scan`` follows the usual odd/even recursion (as JAX's): combine adjacent pairs, scan the half-length
result, then fill in the even positions; ``fn`` is called O(log n) times on slices, never per element.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ...control_flow import scan
from ...pytree import flatten, unflatten
from ...batching import vmap
from .. import numpy as tnp
from ..numpy._core import as_tensor, op, shape_error
from ._operands import checked_axis

__all__ = ["associative_scan", "map", "reduce", "select_n"]

T = TypeVar("T")
Y = TypeVar("Y")


def _take(elems: list[Any], start: int, stop: int | None, step: int, axis: int) -> list[Any]:
    index = (slice(None),) * axis + (slice(start, stop, step),)
    return [e[index] for e in elems]


def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """``evens[0], odds[0], evens[1], odds[1], ...`` along ``axis`` (``evens`` as long as ``odds`` or one longer)."""
    pairs = tnp.stack([evens[(slice(None),) * axis + (slice(0, odds.shape[axis]),)], odds], axis=axis + 1)
    shape = list(odds.shape)
    shape[axis] = 2 * odds.shape[axis]
    merged = tnp.reshape(pairs, tuple(shape))
    if evens.shape[axis] == odds.shape[axis]:
        return merged
    return tnp.concatenate([merged, evens[(slice(None),) * axis + (slice(-1, None),)]], axis=axis)


@op
def associative_scan(fn: Callable[[T, T], T], elems: T, reverse: bool = False, axis: int = 0) -> T:
    """The inclusive prefix scan of ``elems`` (a tensor or a pytree of tensors sharing the scanned axis' length)
    under ``fn``, which must be associative and work elementwise on slices: ``out[i] = fn(out[i-1], elems[i])``."""
    leaves, tree = flatten(elems)
    if not leaves:
        raise ValueError("lax.associative_scan needs at least one tensor in elems")
    leaves = [as_tensor(leaf) for leaf in leaves]
    axis = checked_axis("associative_scan", axis, leaves[0].aval.ndim)
    lengths = {leaf.aval.shape[axis] for leaf in leaves}
    if len(lengths) > 1:
        raise shape_error(
            "associative_scan", f"lax.associative_scan: every tensor of elems needs one length along axis {axis}, "
            f"got {', '.join(str(leaf.aval) for leaf in leaves)}"
        )
    if reverse:
        leaves = [tnp.flip(leaf, axis) for leaf in leaves]

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, _ = flatten(fn(unflatten(tree, a), unflatten(tree, b)))
        return list(out)

    def scan_(xs: list[Any]) -> list[Any]:
        n = xs[0].shape[axis]
        if n < 2:
            return xs
        paired = combine(_take(xs, 0, -1, 2, axis), _take(xs, 1, None, 2, axis))
        odds = scan_(paired)  # prefixes ending at the odd positions
        if n % 2 == 0:
            rest = combine(_take(odds, 0, -1, 1, axis), _take(xs, 2, None, 2, axis))
        else:
            rest = combine(odds, _take(xs, 2, None, 2, axis))
        evens = [tnp.concatenate([x[(slice(None),) * axis + (slice(0, 1),)], r], axis=axis) for x, r in zip(xs, rest)]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds)]

    out = scan_(leaves)
    if reverse:
        out = [tnp.flip(leaf, axis) for leaf in out]
    return unflatten(tree, out)  # type: ignore[no-any-return]


@op
def map(f: Callable[[Any], Y], xs: Any, *, batch_size: int | None = None) -> Y:  # noqa: A001 - lax's name
    """``f`` applied to each slice of ``xs`` along its leading axis, one after another (``ts.scan``: memory for one
    application at a time); with ``batch_size``, ``f`` is vmapped over that many slices per step."""
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), 0, xs)[1]  # type: ignore[no-any-return]
    leaves, tree = flatten(xs)
    n = as_tensor(leaves[0]).aval.shape[0]
    if batch_size < 1 or n % batch_size:
        raise ValueError(f"lax.map: batch_size must be a positive divisor of the leading length {n} here, got {batch_size}")
    grouped = unflatten(tree, [tnp.reshape(leaf, (n // batch_size, batch_size, *as_tensor(leaf).aval.shape[1:])) for leaf in leaves])
    ys = scan(lambda carry, x: (carry, vmap(f)(x)), 0, grouped)[1]
    y_leaves, y_tree = flatten(ys)
    return unflatten(y_tree, [tnp.reshape(y, (n, *as_tensor(y).aval.shape[2:])) for y in y_leaves])  # type: ignore[no-any-return]


def _halve(xs: list[Any], inits: list[Any], combine: Callable[[list[Any], list[Any]], list[Any]], axis: int) -> list[Any]:
    """One pairwise step along ``axis``: ``[x0 . x1, x2 . x3, ...]``, an odd last element paired with the init."""
    if xs[0].shape[axis] % 2:
        xs = [tnp.concatenate([x, _filled(i, (*x.shape[:axis], 1, *x.shape[axis + 1 :]), x.dtype)], axis=axis)
              for x, i in zip(xs, inits)]
    return combine(_take(xs, 0, None, 2, axis), _take(xs, 1, None, 2, axis))


def _filled(value: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    return tnp.broadcast_to(tnp.asarray(value, dtype=dtype), shape)


@op
def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]) -> Any:
    """``computation`` folded over ``dimensions`` of ``operands`` (a tensor or a pytree of tensors of one shape),
    starting from ``init_values`` (of the same structure; an identity of ``computation``, as XLA requires).
    ``computation`` must be associative; it is applied to adjacent pairs, log2(n) times per axis, so any
    function of tensors works (``lax.add``, ``tnp.logaddexp``, a (value, index) argmax on pairs, ...)."""
    leaves, tree = flatten(operands)
    inits, init_tree = flatten(init_values)
    if not leaves or len(inits) != len(leaves):
        raise ValueError(f"lax.reduce: operands and init_values must have one structure, got {tree} and {init_tree}")
    xs = [as_tensor(leaf) for leaf in leaves]
    ndim = xs[0].aval.ndim
    if any(x.aval.shape != xs[0].aval.shape for x in xs):
        raise shape_error("reduce", f"lax.reduce: operands must have one shape, got {', '.join(str(x.aval) for x in xs)}")
    if any(not -ndim <= a < ndim for a in dimensions) or len({a % ndim for a in dimensions}) != len(dimensions):
        raise shape_error("reduce", f"lax.reduce: dimensions {tuple(dimensions)} do not name distinct axes of rank {ndim}")
    axes = sorted(a % ndim for a in dimensions)

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, _ = flatten(computation(unflatten(tree, a), unflatten(tree, b)))
        return list(out)

    out: list[Any] = list(xs)
    for axis in reversed(axes):
        if out[0].shape[axis] == 0:  # nothing to fold: the init
            out = [_filled(i, (*x.shape[:axis], *x.shape[axis + 1 :]), x.dtype) for x, i in zip(out, inits)]
            continue
        while out[0].shape[axis] > 1:
            out = _halve(out, inits, combine, axis)
        out = [tnp.squeeze(x, axis) for x in out]
    return unflatten(tree, out)


@op
def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: a bool ``which`` picks between two cases, an integer one among several (out
    of range picks are undefined in XLA; here they take the last case)."""
    if not cases:
        raise ValueError("lax.select_n needs at least one case")
    pick = as_tensor(which)
    out: Any = as_tensor(cases[-1])
    for k in reversed(range(len(cases) - 1)):
        chosen = tnp.logical_not(pick) if pick.aval.dtype == np.bool_ else pick == k
        out = tnp.where(chosen, cases[k], out)
    return out
