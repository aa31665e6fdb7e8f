"""Collectives over a named mapped axis, for use inside ``ts.pmap(f, axis_name=...)`` or
``ts.vmap(f, axis_name=...)``: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``ppermute``,
``axis_index``.

Each takes a tensor or a pytree of tensors (Python scalars too: ``psum(1, "i")`` is the axis size) and the axis
name (a string, or the Dim class a ``vmap`` was named after). All but ``ppermute`` also take a tuple of names
bound by nested maps (``psum(x, ("i", "j"))``), treated as one axis flattened with the first name outermost, as
jax does. Outside a pmap/vmap binding that name they raise a ``TransformError`` that names the axis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias, TypeVar

from . import pytree
from .dims import Dim
from .dtypes import i32
from .staging.source import user_location
from .staging.axes import lookup
from .staging.ir import Atom, literal
from .staging.primitives import elementwise as E
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


__all__ = ["all_gather", "axis_index", "pmax", "pmean", "pmin", "ppermute", "psum"]
