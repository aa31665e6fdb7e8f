"""Collectives over a named mapped axis, for use inside ``ts.pmap(f, axis_name=...)`` or
``ts.vmap(f, axis_name=...)``: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``ppermute``,
``axis_index``.

Each takes a tensor or a pytree of tensors (Python scalars too: ``psum(1, "i")`` is the axis size) and the axis
name (a string, or the Dim class a ``vmap`` was named after). Outside a pmap/vmap binding that name they raise a
``TransformError`` that names the axis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias, TypeVar

from . import pytree
from .dims import Dim
from .dtypes import i32
from .staging.ir import Atom
from .staging.primitives import collectives as C
from .tensor import Tensor
from .trace import WeakTraced, to_atom, wrap

T = TypeVar("T")
AxisName: TypeAlias = "str | type[Dim]"


def axis_name_of(axis_name: AxisName) -> str:
    if isinstance(axis_name, type) and issubclass(axis_name, Dim):
        return axis_name.__name__
    if not isinstance(axis_name, str):
        raise TypeError(f"an axis name must be a string or a Dim class, got {axis_name!r}")
    return axis_name


def _each(tree: T, op: Callable[[Atom], Atom]) -> T:
    """``op`` on every leaf; Python scalars stay weakly typed (``x + psum(1.0, "i")`` keeps x's dtype)."""
    leaves, treedef = pytree.flatten(tree)
    out = [wrap(op(to_atom(x)), weak=type(x) in (int, float) or isinstance(x, WeakTraced)) for x in leaves]
    return pytree.unflatten(treedef, out)  # type: ignore[no-any-return]


def psum(x: T, axis_name: AxisName) -> T:
    """The sum of ``x`` over every member of the mapped axis (every member gets the total)."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.psum(a, name))


def pmean(x: T, axis_name: AxisName) -> T:
    """The mean of floating-point ``x`` over the mapped axis."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.pmean(a, name))


def pmax(x: T, axis_name: AxisName) -> T:
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.pmax(a, name))


def pmin(x: T, axis_name: AxisName) -> T:
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.pmin(a, name))


def all_gather(x: T, axis_name: AxisName, *, axis: int = 0, tiled: bool = False) -> T:
    """Every member's ``x``, stacked along a new ``axis`` (or concatenated along ``axis`` with ``tiled``)."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.all_gather(a, name, axis, tiled))


def ppermute(x: T, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> T:
    """Send member ``src``'s ``x`` to member ``dst`` for each ``(src, dst)`` in ``perm``; members that receive
    nothing get zeros. A ring shift by one: ``perm=[(k, (k + 1) % n) for k in range(n)]``."""
    name = axis_name_of(axis_name)
    return _each(x, lambda a: C.ppermute(a, name, perm))


def axis_index(axis_name: AxisName) -> Tensor[i32]:
    """This member's position along the mapped axis (an int32 scalar)."""
    return wrap(C.axis_index(axis_name_of(axis_name)))


__all__ = ["all_gather", "axis_index", "pmax", "pmean", "pmin", "ppermute", "psum"]
