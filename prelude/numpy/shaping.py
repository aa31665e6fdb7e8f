"""Shape manipulation: reshape, transpose, axes moves, squeeze/expand, broadcast."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType

from ...staging.errors import ShapeError
from ...staging.ir import Atom, Aval, DimName
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import as_tensor, describe, normalize_axes, op, parse_shape, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
A = TypeVar("A")
B = TypeVar("B")
AnyShape = tuple[Any, ...]  # ``Unpack[AnyShape]``: a shape plain typing cannot compute (the mypy plugin does)
Axis = int | type[Dim]


@op
def reshape(
    x: Tensor[DT, Unpack[Sh]], shape: Axis | Sequence[Axis], order: Literal["C", "F", "A"] = "C"
) -> Tensor[DT, Unpack[AnyShape]]:
    """NumPy reshape (one ``-1`` allowed). A Dim class names its axis: its size is the operand's axis of that name,
    the Dim's fixed size, or (for one unknown dim) whatever is left, as ``-1``.

    A reshape only merges adjacent axes or splits one axis: an axis group that does both (the data of a named
    axis lands in several result axes mixed with another's) is an error, as is naming a result axis after an
    operand axis whose data does not land there. Both are what a missing transpose looks like (splitting
    attention heads with a reshape alone). Axes that survive unchanged keep their dim names.

    ``order="F"`` reads and places the elements first index fastest, as NumPy's; ``"A"`` is ``"C"`` (a tensor
    has no memory layout to follow).
    """
    t = as_tensor(x)
    several = isinstance(shape, (tuple, list)) or (isinstance(shape, np.ndarray) and shape.ndim == 1)
    items: tuple[Any, ...] = tuple(cast(Sequence[Any], shape)) if several else (shape,)
    if order == "F":  # the C-order reshape of the axes reversed, reversed back
        _resolved_sizes(t, items)  # a size mismatch reported in the caller's terms, not the reversed ones
        flipped = wrap(S.transpose(t.atom, tuple(reversed(range(t.aval.ndim)))))
        try:
            out = _reshape_c(flipped, items[::-1])
        except ShapeError as err:  # a dim-name check, made on the reversed axes: say so
            raise shape_error("reshape", f"{err.bare_message} (order='F' reshapes the reversed axes; the call was "
                              f"{describe(t)} -> {_show(items)})") from None
        return wrap(S.transpose(out, tuple(reversed(range(out.aval.ndim)))))
    if order not in ("C", "A"):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    return wrap(_reshape_c(t, items))


def _reshape_c(t: Traced[Any], items: tuple[Any, ...]) -> Atom:
    sizes, requested = _resolved_sizes(t, items)
    names = list(_carried_names(t.aval.shape, t.aval.dims, sizes))
    if 0 not in sizes:
        for old_axes, new_axes in _axis_groups(t.aval.shape, sizes):
            _check_group(t, items, old_axes, new_axes, requested)
            if len(old_axes) == 1 and len(new_axes) == 1:
                names[new_axes[0]] = t.aval.dims[old_axes[0]]
    for axis, name in enumerate(requested):
        if name is not None:
            names[axis] = name
    return S.reshape(t.atom, tuple(sizes), tuple(names))


def _resolved_sizes(t: Tensor[Any, Unpack[AnyShape]], items: tuple[Any, ...]) -> tuple[list[int], list[DimName]]:
    """The result's sizes (``-1`` resolved; an error unless they hold the operand's elements) and requested names."""
    sizes, requested = _requested_shape(t, items)
    if sizes.count(-1) > 1:
        raise shape_error("reshape", f"only one -1 (or one dim of unknown size) is allowed in {_show(items)}")
    known = math.prod(n for n in sizes if n != -1)
    if -1 in sizes:
        if known == 0 or t.aval.size % known:
            raise shape_error("reshape", f"cannot reshape {describe(t)} to {_show(items)}")
        sizes[sizes.index(-1)] = t.aval.size // known
    if math.prod(sizes) != t.aval.size or any(n < 0 for n in sizes):
        raise shape_error(
            "reshape", f"cannot reshape {describe(t)} ({t.aval.size} elements) to {_show(items)} = {tuple(sizes)}"
        )
    return sizes, requested


def _requested_shape(t: Tensor[Any, Unpack[AnyShape]], items: Sequence[Any]) -> tuple[list[int], list[DimName]]:
    """Sizes (-1 where unknown) and the dim names the caller gave (None for int entries)."""
    sizes: list[int] = []
    names: list[DimName] = []
    for item in items:
        if isinstance(item, type) and issubclass(item, Dim):
            name = item.__name__
            if name in t.aval.dims:
                sizes.append(t.aval.shape[t.aval.dims.index(name)])
            else:
                sizes.append(item.size if item.size is not None else -1)
            names.append(name)
        else:
            sizes.append(operator.index(item))  # a float size is a mistake, not a size to truncate
            names.append(None)
    return sizes, names


def _axis_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pair up the smallest runs of operand and result axes with equal element counts (size-1 axes skipped)."""
    src = [a for a, n in enumerate(old) if n != 1]
    dst = [a for a, n in enumerate(new) if n != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) and j < len(dst):
        old_axes, new_axes = [src[i]], [dst[j]]
        left, right = old[src[i]], new[dst[j]]
        i, j = i + 1, j + 1
        while left != right:
            if left < right:
                old_axes.append(src[i])
                left *= old[src[i]]
                i += 1
            else:
                new_axes.append(dst[j])
                right *= new[dst[j]]
                j += 1
        groups.append((old_axes, new_axes))
    return groups


def _check_group(
    t: Tensor[Any, Unpack[AnyShape]], items: Sequence[Any], old_axes: list[int], new_axes: list[int],
    requested: Sequence[DimName],
) -> None:
    dims = t.aval.dims
    named = [dims[a] for a in old_axes if dims[a] is not None]
    if len(old_axes) > 1 and len(new_axes) > 1 and named:
        raise shape_error(
            "reshape",
            f"reshape {describe(t)} -> {_show(items)} mixes axes {', '.join(str(d) for d in named)} with their "
            "neighbours: a reshape only merges adjacent axes or splits one axis; move axes with transpose/moveaxis "
            "first",
        )
    for axis in new_axes:
        name = requested[axis]
        if name is None or name not in dims:
            continue
        source = dims.index(name)
        if old_axes != [source] or new_axes != [axis]:
            raise shape_error(
                "reshape",
                f"reshape {describe(t)} -> {_show(items)} names result axis {axis} {name}, but the data of {name} "
                f"(operand axis {source}) does not land there: reshape does not move data; use transpose/moveaxis",
            )


def _show(items: Sequence[Any]) -> str:
    return "(" + ", ".join(i.__name__ if isinstance(i, type) else str(i) for i in items) + ")"


def _carried_names(old: tuple[int, ...], names: tuple[DimName, ...], new: Sequence[int]) -> tuple[DimName, ...]:
    out: list[DimName] = [None] * len(new)
    lead = 0
    while lead < min(len(old), len(new)) and old[lead] == new[lead]:
        out[lead] = names[lead]
        lead += 1
    trail = 1
    while trail <= min(len(old), len(new)) - lead and old[-trail] == new[-trail]:
        out[len(new) - trail] = names[len(old) - trail]
        trail += 1
    return tuple(out)


@overload
def transpose(x: Tensor[DT, A, B], axes: None = None) -> Tensor[DT, B, A]: ...
@overload
def transpose(x: Tensor[DT, Unpack[Sh]], axes: Sequence[Axis] | None = None) -> Tensor[DT, Unpack[AnyShape]]: ...
@op
def transpose(x: AnyTensor, axes: Sequence[int | type] | None = None) -> AnyTensor:
    t = as_tensor(x)
    if axes is None:
        perm = tuple(reversed(range(t.aval.ndim)))
    else:
        perm = normalize_axes("transpose", tuple(axes), t)
        if len(perm) != t.aval.ndim:
            raise shape_error("transpose", f"axes {tuple(axes)} are not a permutation of the axes of {describe(t)}")
    return wrap(S.transpose(t.atom, perm))


@overload
def swapaxes(
    x: Tensor[DT, Unpack[Sh], A, B], axis1: Literal[-2] | type[A], axis2: Literal[-1] | type[B]
) -> Tensor[DT, Unpack[Sh], B, A]: ...
@overload
def swapaxes(
    x: Tensor[DT, Unpack[Sh], A, B], axis1: Literal[-1] | type[B], axis2: Literal[-2] | type[A]
) -> Tensor[DT, Unpack[Sh], B, A]: ...
@overload
def swapaxes(x: Tensor[DT, A, B], axis1: Literal[0, 1], axis2: Literal[0, 1]) -> Tensor[DT, B, A]: ...
@overload
def swapaxes(x: Tensor[DT, Unpack[Sh]], axis1: Axis, axis2: Axis) -> Tensor[DT, Unpack[AnyShape]]: ...
@op
def swapaxes(x: AnyTensor, axis1: int | type, axis2: int | type) -> AnyTensor:
    t = as_tensor(x)
    (a,), (b,) = normalize_axes("swapaxes", axis1, t), normalize_axes("swapaxes", axis2, t)
    perm = list(range(t.aval.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return wrap(S.transpose(t.atom, perm))


@op
def moveaxis(
    x: Tensor[DT, Unpack[Sh]], source: Axis | Sequence[Axis], destination: int | Sequence[int]
) -> Tensor[DT, Unpack[AnyShape]]:
    """NumPy's moveaxis: one axis, or several (``source`` and ``destination`` of one length); the other axes
    keep their order."""
    t = as_tensor(x)
    src = normalize_axes("moveaxis", source, t)
    dst = normalize_axes("moveaxis", destination, t)
    if len(src) != len(dst):
        raise shape_error("moveaxis", f"source {source!r} and destination {destination!r} differ in length")
    order = [a for a in range(t.aval.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return wrap(S.transpose(t.atom, order))


@op
def permute_dims(x: Tensor[DT, Unpack[Sh]], axes: Sequence[Axis] | None = None) -> Tensor[DT, Unpack[AnyShape]]:
    """The array API's name for ``transpose``."""
    return transpose(x, axes)


@op
def rollaxis(x: Tensor[DT, Unpack[Sh]], axis: int, start: int = 0) -> Tensor[DT, Unpack[AnyShape]]:
    """NumPy's (legacy) rollaxis: ``axis`` moves to just before ``start``, which may be the rank."""
    t = as_tensor(x)
    (a,) = normalize_axes("rollaxis", axis, t)
    rank = t.aval.ndim
    if not -rank <= start <= rank:
        raise shape_error("rollaxis", f"start {start} is out of range for {describe(t)} (rank {rank})")
    start = start + rank if start < 0 else start
    return moveaxis(t, a, start - 1 if start > a else start)


@op
def squeeze(x: Tensor[DT, Unpack[Sh]], axis: Axis | Sequence[Axis] | None = None) -> Tensor[DT, Unpack[AnyShape]]:
    t = as_tensor(x)
    if axis is None:
        axes = tuple(a for a, n in enumerate(t.aval.shape) if n == 1)
    else:
        axes = normalize_axes("squeeze", axis, t)
        wide = [a for a in axes if t.aval.shape[a] != 1]
        if wide:
            raise shape_error("squeeze", f"cannot squeeze axis {wide[0]} of {describe(t)}: its size is not 1")
    keep = [a for a in range(t.aval.ndim) if a not in axes]
    return wrap(
        S.reshape(t.atom, tuple(t.aval.shape[a] for a in keep), tuple(t.aval.dims[a] for a in keep))
    )


@op
def expand_dims(x: Tensor[DT, Unpack[Sh]], axis: int | Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    t = as_tensor(x)
    items = (axis,) if isinstance(axis, int) else tuple(axis)
    rank = t.aval.ndim + len(items)
    new_axes = sorted(a % rank if -rank <= a < rank else _bad_axis(a, rank) for a in items)
    if len(set(new_axes)) != len(new_axes):
        raise shape_error("expand_dims", f"repeated axis in {axis!r}")
    shape = list(t.aval.shape)
    dims = list(t.aval.dims)
    for a in new_axes:
        shape.insert(a, 1)
        dims.insert(a, None)
    return wrap(S.reshape(t.atom, tuple(shape), tuple(dims)))


def _bad_axis(axis: int, rank: int) -> int:
    raise shape_error("expand_dims", f"axis {axis} is out of range for a result of rank {rank}")


@op
def broadcast_to(x: Tensor[DT, Unpack[Sh]], shape: Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    """Broadcast to ``shape`` with NumPy's rules (leading axes may be added)."""
    t = as_tensor(x)
    target, _ = parse_shape("broadcast_to", shape)
    if len(target) < t.aval.ndim:
        raise shape_error("broadcast_to", f"cannot broadcast {describe(t)} to the lower-rank shape {target}")
    offset = len(target) - t.aval.ndim
    for a, n in enumerate(t.aval.shape):
        if n not in (1, target[offset + a]):
            raise shape_error("broadcast_to", f"cannot broadcast {describe(t)} to {target}: axis {a} has size {n}")
    dims: list[DimName] = [None] * offset
    dims += [d if n == target[offset + a] else None for a, (n, d) in enumerate(zip(t.aval.shape, t.aval.dims))]
    return wrap(S.broadcast_to(t.atom, Aval(target, t.aval.dtype, dims)))


@op
def ravel(x: Tensor[DT, Unpack[Sh]], order: Literal["C", "F", "A", "K"] = "C") -> Tensor[DT, Any]:
    """The elements as a 1-D tensor, last index fastest (``order="F"``: first index fastest; ``"A"`` and ``"K"``
    are ``"C"``, a tensor having no memory layout)."""
    t = as_tensor(x)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', got {order!r}")
    source = S.transpose(t.atom, tuple(reversed(range(t.aval.ndim)))) if order == "F" else t.atom
    return wrap(S.reshape(source, (t.aval.size,), (None,)))


def broadcast_shapes(*shapes: int | Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast_shapes (plain NumPy rules: shapes of different ranks line up at the end)."""
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        raise shape_error("broadcast_shapes", f"shapes {', '.join(map(str, shapes))} do not broadcast") from None
