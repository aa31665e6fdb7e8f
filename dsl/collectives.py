"""Collectives over a named mapped axis, for use inside ``ts.pmap(f, axis_name=...)`` or
``ts.vmap(f, axis_name=...)``: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``all_to_all``, ``ppermute``, ``axis_index``, and (as ``ts.lax`` names) ``pshuffle`` and ``pswapaxes``.

Each takes a tensor or a pytree of tensors (Python scalars too: ``psum(1, "i")`` is the axis size) and the axis
name (a string, or the Dim class a ``vmap`` was named after). All but ``ppermute``, ``pshuffle``, ``all_to_all``
and ``pswapaxes`` also take a tuple of names bound by nested maps (``psum(x, ("i", "j"))``), treated as one axis
flattened with the first name outermost, as jax does. Outside a pmap/vmap binding that name they raise a
``TransformError`` that names the axis.

Deliberate differences from jax: no ``axis_index_groups`` (no collective here takes it); ``pshuffle`` requires
``perm`` to be a permutation of every member (jax lets a shorter one leave the other members zeros); negative
``scatter_dimension``/``split_axis``/``concat_axis`` count from the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeAlias, TypeVar

from . import pytree
from .dims import Dim
from .dtypes import i32
from .staging.source import user_location
from .staging.axes import lookup
from .staging.ir import Atom, literal
from .staging.primitives import elementwise as E
from .staging.primitives import structural as S
from .staging.primitives import collectives as C
from .tensor import Tensor
from .trace import WeakTraced, to_atom, wrap

T = TypeVar("T")
AxisName: TypeAlias = "str | type[Dim]"
AxisNames: TypeAlias = "str | type[Dim] | tuple[str | type[Dim], ...]"


def axis_name_of(axis_name: AxisName) -> str:
    if isinstance(axis_name, type) and issubclass(axis_name, Dim):
        return axis_name.__name__
    if not isinstance(axis_name, str):
        raise TypeError(f"an axis name must be a string or a Dim class, got {axis_name!r}\n  at {user_location()}")
    return axis_name


def axis_names_of(axis_name: AxisNames) -> tuple[str, ...]:
    """One name, or a tuple of names (outermost first) that a collective treats as one flattened axis."""
    if not isinstance(axis_name, tuple):
        return (axis_name_of(axis_name),)
    names = tuple(axis_name_of(a) for a in axis_name)
    if not names:
        raise ValueError(f"a collective needs at least one axis name, got ()\n  at {user_location()}")
    if len(set(names)) != len(names):
        raise ValueError(f"axis names {names} repeat a name; each mapped axis is named once\n  at {user_location()}")
    return names


def _each(tree: T, op: Callable[[Atom], Atom]) -> T:
    """``op`` on every leaf; Python scalars stay weakly typed (``x + psum(1.0, "i")`` keeps x's dtype)."""
    leaves, treedef = pytree.flatten(tree)
    out = [wrap(op(to_atom(x)), weak=type(x) in (int, float) or isinstance(x, WeakTraced)) for x in leaves]
    return pytree.unflatten(treedef, out)  # type: ignore[no-any-return]


def _over(names: tuple[str, ...], reduce: Callable[[Atom, str], Atom]) -> Callable[[Atom], Atom]:
    """An all-reduce over several axes as one over each in turn (sum of sums, max of maxes, mean of means: the
    axes have equal-size members, so a mean of means is the mean)."""

    def op(a: Atom) -> Atom:
        for name in names:
            a = reduce(a, name)
        return a

    return op


def psum(x: T, axis_name: AxisNames) -> T:
    """The sum of ``x`` over every member of the mapped axis (every member gets the total)."""
    return _each(x, _over(axis_names_of(axis_name), C.psum))


def pmean(x: T, axis_name: AxisNames) -> T:
    """The mean of floating-point ``x`` over the mapped axis."""
    return _each(x, _over(axis_names_of(axis_name), C.pmean))


def pmax(x: T, axis_name: AxisNames) -> T:
    return _each(x, _over(axis_names_of(axis_name), C.pmax))


def pmin(x: T, axis_name: AxisNames) -> T:
    return _each(x, _over(axis_names_of(axis_name), C.pmin))


def _gather_over(names: tuple[str, ...], axis: int, tiled: bool) -> Callable[[Atom], Atom]:
    """An all_gather over several axes (member order: the first name's index is the most significant): gather
    over the innermost name first, then the outer ones, tiled, so the blocks land in that order."""

    def op(a: Atom) -> Atom:
        a = C.all_gather(a, names[-1], axis, tiled)
        at = axis % a.aval.ndim  # where the gathered axis is (axis may be negative)
        for name in reversed(names[:-1]):
            a = C.all_gather(a, name, at, True)
        return a

    return op


def all_gather(x: T, axis_name: AxisNames, *, axis: int = 0, tiled: bool = False) -> T:
    """Every member's ``x``, stacked along a new ``axis`` (or concatenated along ``axis`` with ``tiled``)."""
    return _each(x, _gather_over(axis_names_of(axis_name), axis, tiled))


def _scatter_over(names: tuple[str, ...], dim: int, tiled: bool) -> Callable[[Atom], Atom]:
    """A psum_scatter over several axes (member order: the first name's index is the most significant): scatter
    over the outermost name first, tiled, so each later one cuts the block the earlier ones left."""

    def op(a: Atom) -> Atom:
        if len(names) == 1:
            return C.psum_scatter(a, names[0], dim, tiled)
        at = C.axis_in_range(dim, a.aval, "scatter_dimension", "psum_scatter")
        count = math.prod(lookup(name, "psum_scatter").size for name in names)
        C.blocks_check(a.aval, at, names, count, tiled, "scatter_dimension", "psum_scatter")
        whole = a.aval
        for name in names:
            a = C.psum_scatter(a, name, at, True)
        if tiled:
            return a
        return S.reshape(a, whole.shape[:at] + whole.shape[at + 1:], whole.dims[:at] + whole.dims[at + 1:])

    return op


def psum_scatter(x: T, axis_name: AxisNames, *, scatter_dimension: int = 0, tiled: bool = False) -> T:
    """The sum over the mapped axis, of which each member keeps its own part along ``scatter_dimension``:
    slice k for member k (that dimension must equal the axis size; it goes away), or with ``tiled`` block k of
    the dimension cut into one block per member (it must be a multiple of the axis size)."""
    return _each(x, _scatter_over(axis_names_of(axis_name), scatter_dimension, tiled))


def all_to_all(x: T, axis_name: AxisName, split_axis: int, concat_axis: int, *, tiled: bool = False) -> T:
    """Member k gets slice k of every member's ``x`` along ``split_axis``, stacked in member order along a new
    ``concat_axis`` of the result (``split_axis``, whose size is the axis size, goes away). With ``tiled``,
    ``split_axis`` is cut into one block per member and the blocks are concatenated along ``concat_axis``."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.all_to_all(a, name, split_axis, concat_axis, tiled))


def pswapaxes(x: T, axis_name: AxisName, axis: int) -> T:
    """Swap the mapped axis with ``x``'s ``axis`` (whose size must be the axis size): member k gets slice k of
    every member's ``x``, in member order along ``axis``. ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis)


def pshuffle(x: T, axis_name: AxisName, perm: Sequence[int]) -> T:
    """Member i gets member ``perm[i]``'s ``x``; ``perm`` lists every member once. A ``ppermute`` with
    the pairs ``(perm[i], i)``."""
    name = axis_name_of(axis_name)
    size = lookup(name, "pshuffle").size
    sources = [C.static_int(v, "a perm entry", "pshuffle") for v in perm]
    if sorted(sources) != list(range(size)):
        raise ValueError(f"pshuffle: perm must list every member 0..{size - 1} of axis {name!r} once, got "
                         f"{sources!r}\n  at {user_location()}")
    return ppermute(x, name, list(zip(sources, range(size))))


def ppermute(x: T, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> T:
    """Send member ``src``'s ``x`` to member ``dst`` for each ``(src, dst)`` in ``perm``; members that receive
    nothing get zeros. A ring shift by one: ``perm=[(k, (k + 1) % n) for k in range(n)]``."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.ppermute(a, name, perm))


def axis_index(axis_name: AxisNames) -> Tensor[i32]:
    """This member's position along the mapped axis (an int32 scalar); over several names, its position in their
    flattening (the first name's index most significant)."""
    outer, *inner = axis_names_of(axis_name)
    index = C.axis_index(outer)
    for name in inner:
        size = lookup(name, "axis_index").size
        index = E.add(E.mul(index, literal(size, C.INDEX_DTYPE)), C.axis_index(name))
    return wrap(index)


__all__ = [
    "all_gather", "all_to_all", "axis_index", "pmax", "pmean", "pmin", "ppermute", "pshuffle", "psum", "psum_scatter",
    "pswapaxes",
]
