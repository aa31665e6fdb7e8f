"""Rearranging elements: flip, rot90, roll, tile, repeat, resize, append/insert/delete, atleast_Nd, column_stack,
meshgrid and broadcast_arrays.

Everything is a composition of rev, slice, concatenate, dynamic_slice, pad, broadcast_in_dim, reshape and (for
irregular static index patterns) gather, so grad and vmap come from those primitives. Indices, shifts and repeat
counts are static Python values, except where a function says it takes a staged one. An output axis that is an
input axis unchanged (a flipped or rolled axis, an axis tile or repeat leaves alone) keeps its dim name.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, Aval, DimName, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import (
    as_tensor, atom, broadcast_shapes, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap,
)
from .indexing import index_atom
from .joining import _at_least

__all__ = [
    "append", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays", "column_stack", "delete", "flip",
    "fliplr", "flipud", "insert", "meshgrid", "repeat", "resize", "roll", "rot90", "tile",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
AnyShape = tuple[Any, ...]
DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
A = TypeVar("A")
B = TypeVar("B")
Axis = int | type[Dim]
Axes = Axis | Sequence[Axis] | None

_I32 = np.dtype(np.int32)


# ------------------------------------------------------------------------------------------------- helpers


def _renamed(x: Atom, shape: Sequence[int], dims: Sequence[DimName]) -> Atom:
    """``x`` reshaped (or only renamed) to ``shape`` with dim names ``dims``."""
    if x.aval.shape == tuple(shape) and x.aval.dims == tuple(dims):
        return x
    return S.reshape(x, tuple(shape), tuple(dims))


def _flat(x: Atom) -> Atom:
    return S.reshape(x, (x.aval.size,), (x.aval.dims[0] if x.aval.ndim == 1 else None,))


def _host(value: Any) -> Any:
    """NumPy arrays and scalars in a static argument (counts, shifts, indices) as Python values: the op wrapper
    would otherwise pass them as runtime inputs."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(_host(v) for v in value)
    return value


def _one_axis(op_name: str, axis: Axis, x: AnyTensor) -> int:
    if isinstance(axis, (tuple, list)):
        raise shape_error(op_name, f"{op_name} takes one axis (an int or a Dim), got {axis!r}")
    (a,) = normalize_axes(op_name, axis, x, allow_none=False)
    return a


def take_static(x: Atom, indices: Sequence[int] | np.ndarray[Any, Any], axis: int) -> Atom:
    """``x`` at static in-range ``indices`` along ``axis``: runs of consecutive indices become slices joined by
    one concatenate (cheap to differentiate, no gather); irregular patterns become one gather."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    n = x.aval.shape[axis]
    if idx.size == n and (idx == np.arange(n)).all():
        return x
    runs: list[tuple[int, int]] = []
    for i in idx.tolist():
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    if not runs:
        return SL.slice_in_dim(x, 0, 0, axis)
    if len(runs) > 8:
        return index_atom("take", x, (slice(None),) * axis + (idx,))
    return SL.concatenate([SL.slice_in_dim(x, lo, hi, axis) for lo, hi in runs], axis)


# ---------------------------------------------------------------------------------------------------- flip


@op
def flip(m: Tensor[DT, Unpack[Sh]], axis: Axes = None) -> Tensor[DT, Unpack[Sh]]:
    """Reverse the order of elements along ``axis`` (every axis when None)."""
    t = as_tensor(m)
    return wrap(SL.rev(t.atom, normalize_axes("flip", axis, t)))


@op
def fliplr(m: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """Reverse axis 1 (left/right); needs rank >= 2."""
    t = as_tensor(m)
    if t.aval.ndim < 2:
        raise shape_error("fliplr", f"needs an operand of rank >= 2, got {describe(t)}")
    return wrap(SL.rev(t.atom, (1,)))


@op
def flipud(m: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """Reverse axis 0 (up/down); needs rank >= 1."""
    t = as_tensor(m)
    if t.aval.ndim < 1:
        raise shape_error("flipud", f"needs an operand of rank >= 1, got {describe(t)}")
    return wrap(SL.rev(t.atom, (0,)))


Odd = Literal[1, 3, -1, -3]
Even = Literal[0, 2, -2, 4, -4]
Plane = tuple[Literal[0, -2], Literal[1, -1]] | tuple[Literal[1, -1], Literal[0, -2]]


@overload
def rot90(m: Tensor[DT, A, B], k: Odd = 1, axes: Plane = (0, 1)) -> Tensor[DT, B, A]: ...
@overload
def rot90(m: Tensor[DT, A, B], k: Even, axes: Plane = (0, 1)) -> Tensor[DT, A, B]: ...
@overload
def rot90(m: Tensor[DT, Unpack[Sh]], k: int = 1, axes: tuple[Axis, Axis] = (0, 1)) -> Tensor[DT, Unpack[AnyShape]]: ...
@op
def rot90(m: AnyTensor, k: int = 1, axes: tuple[Axis, Axis] = (0, 1)) -> AnyTensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis towards the second."""
    t = as_tensor(m)
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise shape_error("rot90", f"axes must be two axes, got {axes!r}")
    if t.aval.ndim < 2:
        raise shape_error("rot90", f"needs an operand of rank >= 2, got {describe(t)}")
    a, b = normalize_axes("rot90", tuple(axes), t)
    turns = operator.index(k) % 4
    x = t.atom
    if turns == 0:
        return t
    if turns == 2:
        return wrap(SL.rev(x, (a, b)))
    perm = list(range(x.aval.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    if turns == 1:
        return wrap(S.transpose(SL.rev(x, (b,)), perm))
    return wrap(SL.rev(S.transpose(x, perm), (b,)))


# ---------------------------------------------------------------------------------------------------- roll


def roll(a: Tensor[DT, Unpack[Sh]], shift: Any, axis: Axes = None) -> Tensor[DT, Unpack[Sh]]:
    """Shift elements cyclically by ``shift`` along ``axis`` (the flattened array when None).

    ``shift`` is an int or a tuple of ints (broadcast against a tuple ``axis`` as NumPy does); an int scalar tensor
    is also accepted (a staged shift: the result is a dynamic_slice of the axis doubled, one compile for every
    shift value).
    """
    return _roll(a, _host(shift), axis)


@op
def _roll(a: Tensor[DT, Unpack[Sh]], shift: Any, axis: Axes = None) -> Tensor[DT, Unpack[Sh]]:
    t = as_tensor(a)
    x = t.atom
    if axis is None:
        flat = roll(wrap(_flat(x)), shift, 0)
        return wrap(_renamed(as_tensor(flat).atom, x.aval.shape, x.aval.dims))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    if isinstance(shift, Tensor) and shift.ndim:
        shifts = tuple(shift[i] for i in range(shift.shape[0]))
    if len(axes) != len(shifts) and 1 not in (len(axes), len(shifts)):
        raise shape_error("roll", f"shift {shift!r} and axis {axis!r} do not broadcast to one length")
    count = max(len(axes), len(shifts))
    axes = tuple(axes) * (count if len(axes) == 1 else 1)
    shifts = tuple(shifts) * (count if len(shifts) == 1 else 1)
    total: dict[int, Any] = {}
    for ax, s in zip(axes, shifts):
        k = _one_axis("roll", ax, t)
        total[k] = _add_shift(total.get(k, 0), s)
    for k, s in total.items():
        x = _roll_axis(x, s, k)
    return wrap(_renamed(x, t.aval.shape, t.aval.dims))


def _add_shift(total: Any, s: Any) -> Any:
    if isinstance(s, Tensor):
        if s.aval.ndim != 0 or not _dt.is_integer(s.aval.dtype):
            raise dtype_error("roll", f"a staged shift must be an integer scalar, got {describe(s)}")
        return s if isinstance(total, int) and total == 0 else total + s
    try:
        return total + operator.index(s)
    except TypeError:
        raise TypeError(f"roll: shift {s!r} must be an int or an integer scalar tensor") from None


def _roll_axis(x: Atom, shift: Any, axis: int) -> Atom:
    n = x.aval.shape[axis]
    if n == 0:
        return x
    if isinstance(shift, int):
        s = shift % n
        if s == 0:
            return x
        return SL.concatenate([SL.slice_in_dim(x, n - s, n, axis), SL.slice_in_dim(x, 0, n - s, axis)], axis)
    # Staged shift: out[i] = x[(i - s) mod n] is the window of x twice over starting at n - (s mod n), in (0, n].
    size = literal(n, _I32)
    staged = E.rem(E.add(E.rem(E.convert(as_tensor(shift).atom, _I32), size), size), size)
    start = E.sub(size, staged)
    doubled = SL.concatenate([x, x], axis)
    starts: list[Atom | int] = [0] * x.aval.ndim
    starts[axis] = start
    return SL.dynamic_slice(doubled, starts, x.aval.shape)


# ------------------------------------------------------------------------------------------ tile and repeat


def _reps(op_name: str, reps: Any) -> tuple[int, ...]:
    items = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    out = []
    for r in items:
        if isinstance(r, Tensor):
            raise shape_error(op_name, f"counts must be static ints (they set the result's shape), got {describe(r)}")
        try:
            n = operator.index(r)
        except TypeError:
            raise TypeError(f"{op_name}: count {r!r} must be an int") from None
        if n < 0:
            raise shape_error(op_name, f"counts must be non-negative, got {r}")
        out.append(n)
    return tuple(out)


def _interleave(x: Atom, counts: Sequence[int]) -> Atom:
    """``x`` with axis ``k`` tiled ``counts[k]`` times (``before=True``: whole copies) through one broadcast."""
    shape: list[int] = []
    names: list[DimName] = []
    for n, d, r in zip(x.aval.shape, x.aval.dims, counts):
        shape += [r, n]
        names += [None, d]
    wide = S.broadcast_in_dim(x, tuple(shape), tuple(range(1, 2 * x.aval.ndim, 2)), names)
    final = [n * r for n, r in zip(x.aval.shape, counts)]
    dims = [d if r == 1 else None for d, r in zip(x.aval.dims, counts)]
    return S.reshape(wide, tuple(final), tuple(dims))


def tile(A: Tensor[DT, Unpack[Sh]], reps: int | Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    """Repeat the whole array ``reps`` times along each axis (NumPy's rank alignment: leading ones are added
    to whichever of ``A``'s shape and ``reps`` is shorter)."""
    return _tile(A, _host(reps))


@op
def _tile(A: Tensor[DT, Unpack[Sh]], reps: int | Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    t = as_tensor(A)
    counts = _reps("tile", reps)
    x = t.atom
    rank = max(len(counts), x.aval.ndim)
    counts = (1,) * (rank - len(counts)) + counts
    lead = rank - x.aval.ndim
    x = _renamed(x, (1,) * lead + x.aval.shape, (None,) * lead + x.aval.dims)
    return wrap(_interleave(x, counts))


def repeat(
    a: Tensor[DT, Unpack[Sh]], repeats: Any, axis: int | type[Dim] | None = None,
    total_repeat_length: int | None = None,
) -> Tensor[DT, Unpack[AnyShape]]:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array when None).

    ``repeats`` is an int or one int per element (static), or an integer tensor: then, as in JAX, the result's
    length must be given as ``total_repeat_length`` (a longer result repeats the last element, a shorter one is
    cut off).
    """
    return _repeat(a, _host(repeats), axis, total_repeat_length)


@op
def _repeat(
    a: Tensor[DT, Unpack[Sh]], repeats: Any, axis: int | type[Dim] | None = None,
    total_repeat_length: int | None = None,
) -> Tensor[DT, Unpack[AnyShape]]:
    t = as_tensor(a)
    x = t.atom
    if axis is None:
        x = _flat(x)
        ax = 0
    else:
        ax = _one_axis("repeat", axis, t)
    n = x.aval.shape[ax]
    if isinstance(repeats, Tensor):
        return wrap(_repeat_dynamic(x, repeats, ax, total_repeat_length))
    host = np.asarray(repeats)
    if host.size == 0:  # [] for an empty axis: NumPy reads it as ints
        host = host.astype(np.int64)
    if host.dtype.kind not in "iu" or host.ndim > 1:
        raise TypeError(f"repeat: repeats {repeats!r} must be an int or a sequence of ints")
    if (host < 0).any():
        raise shape_error("repeat", f"repeats must be non-negative, got {repeats!r}")
    if host.ndim == 1 and host.size != 1 and host.size != n:
        raise shape_error("repeat", f"{host.size} repeat counts for axis {ax} of {describe(wrap(x))} (size {n})")
    counts = host.reshape(-1)
    if total_repeat_length is not None and total_repeat_length != int(np.broadcast_to(counts, (n,)).sum()):
        raise shape_error(
            "repeat", f"total_repeat_length={total_repeat_length} differs from the sum of the repeats {repeats!r}"
        )
    if counts.size == 1:
        r = int(counts[0])
        shape = list(x.aval.shape)
        names = list(x.aval.dims)
        shape.insert(ax + 1, r)
        names.insert(ax + 1, None)
        wide = S.broadcast_in_dim(x, tuple(shape), tuple(k + (k > ax) for k in range(x.aval.ndim)), names)
        final = list(x.aval.shape)
        final[ax] = n * r
        dims = list(x.aval.dims)
        dims[ax] = dims[ax] if r == 1 else None
        return wrap(S.reshape(wide, tuple(final), tuple(dims)))
    return wrap(take_static(x, np.repeat(np.arange(n), counts), ax))


def _repeat_dynamic(x: Atom, repeats: AnyTensor, axis: int, length: int | None) -> Atom:
    if length is None:
        raise shape_error(
            "repeat", f"repeats {describe(repeats)} is a tensor: the result's length depends on its values; pass "
            "total_repeat_length= (static), or pass the repeats as Python ints"
        )
    r = as_tensor(repeats).atom
    n = x.aval.shape[axis]
    if not _dt.is_integer(r.aval.dtype) or r.aval.ndim > 1 or r.aval.ndim == 1 and r.aval.shape[0] not in (1, n):
        raise shape_error("repeat", f"repeats {describe(repeats)} must be an integer scalar or have {n} elements")
    r = E.convert(r, _I32)
    r = S.broadcast_in_dim(r, (n,), (0,) if r.aval.ndim else ())
    if n == 0 or length == 0:
        return SL.slice_in_dim(x, 0, 0, axis) if length == 0 else x
    # Element i fills result positions [ends[i-1], ends[i]): position j takes the number of ends <= j.
    keep = bind(E.le_p, SL.iota(_I32, (n, n), 1), SL.iota(_I32, (n, n), 0))  # [i, k]: k <= i
    ends = R.reduce_sum(E.select(keep, S.broadcast_in_dim(r, (n, n), (1,)), S.full_like(Aval((n, n), _I32), 0)), (1,))
    passed = bind(E.le_p, S.broadcast_in_dim(ends, (length, n), (1,)), SL.iota(_I32, (length, n), 0))
    index = R.reduce_sum(E.convert(passed, _I32), (1,))
    index = E.minimum(index, literal(n - 1, _I32))
    return index_atom("repeat", x, (slice(None),) * axis + (wrap(index),))


def resize(a: Tensor[DT, Unpack[Sh]], new_shape: int | Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    """NumPy's resize: the flattened array repeated cyclically (or cut) to fill ``new_shape``; zeros if empty."""
    return _resize(a, _host(new_shape))


@op
def _resize(a: Tensor[DT, Unpack[Sh]], new_shape: int | Sequence[int]) -> Tensor[DT, Unpack[AnyShape]]:
    t = as_tensor(a)
    shape = _reps("resize", new_shape)
    total = math.prod(shape)
    flat = _flat(t.atom)
    size = flat.aval.size
    if size == 0:
        return wrap(S.full_like(Aval(shape, t.aval.dtype), 0))
    copies = -(-total // size)
    if copies > 1:
        flat = _interleave(flat, (copies,))
    return wrap(S.reshape(SL.slice_in_dim(flat, 0, total, 0), shape))


# ---------------------------------------------------------------------------------- append, insert, delete


def _axis_or_flat(op_name: str, arr: Any, axis: Any) -> tuple[Atom, int]:
    t = as_tensor(arr)
    if axis is None:
        return _flat(t.atom), 0
    if t.aval.ndim == 0:
        raise shape_error(op_name, f"axis {axis!r} given for a rank-0 operand {describe(t)}")
    return t.atom, _one_axis(op_name, axis, t)


@op
def append(arr: AnyTensor, values: Any, axis: int | None = None) -> AnyTensor:
    """``values`` joined after ``arr`` along ``axis``; both are flattened when ``axis`` is None."""
    dtype = result_dtype("append", (arr, values))
    a, v = as_tensor(wrap(atom(arr, dtype))), as_tensor(wrap(atom(values, dtype)))
    if axis is None:
        return wrap(SL.concatenate([_flat(a.atom), _flat(v.atom)], 0))
    x, ax = _axis_or_flat("append", a, axis)
    if v.aval.ndim != x.aval.ndim or any(
        n != m for k, (n, m) in enumerate(zip(x.aval.shape, v.aval.shape)) if k != ax
    ):
        raise shape_error(
            "append", f"values {describe(v)} must match {describe(a)} on every axis except axis {ax}"
        )
    return wrap(SL.concatenate([x, v.atom], ax))


def _static_indices(op_name: str, obj: Any, n: int) -> np.ndarray[Any, Any]:
    if isinstance(obj, Tensor) and not isinstance(obj, Traced):
        obj = np.asarray(obj)
    if isinstance(obj, Tensor):
        raise shape_error(op_name, f"indices must be static (ints, slices, lists), got {describe(obj)}")
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    host = np.asarray(obj)
    if host.dtype == np.bool_:
        if host.shape != (n,):
            raise shape_error(op_name, f"a boolean mask needs {n} entries, got shape {host.shape}")
        return np.flatnonzero(host)
    if host.size == 0:
        host = host.astype(np.int64)
    if host.dtype.kind not in "iu" or host.ndim > 1:
        raise TypeError(f"{op_name}: indices {obj!r} must be an int, a slice or a sequence of ints")
    bad = (host < -n) | (host >= n)
    if bad.any():
        raise shape_error(op_name, f"index {host[bad].flat[0]} is out of range for an axis of size {n}")
    return np.where(host < 0, host + n, host)


def delete(arr: Tensor[DT, Unpack[Sh]], obj: Any, axis: int | None = None) -> Tensor[DT, Unpack[AnyShape]]:
    """``arr`` without the entries at ``obj`` (a static int, slice, sequence of ints or bool mask) along
    ``axis`` (of the flattened array when None)."""
    return _delete(arr, _host(obj), axis)


@op
def _delete(arr: Tensor[DT, Unpack[Sh]], obj: Any, axis: int | None = None) -> Tensor[DT, Unpack[AnyShape]]:
    x, ax = _axis_or_flat("delete", arr, axis)
    n = x.aval.shape[ax]
    drop = _static_indices("delete", obj, n)
    keep = np.setdiff1d(np.arange(n), drop)
    return wrap(take_static(x, keep, ax))


def insert(
    arr: Tensor[DT, Unpack[Sh]], obj: Any, values: Any, axis: int | None = None
) -> Tensor[DT, Unpack[AnyShape]]:
    """``values`` inserted before the static index or indices ``obj`` along ``axis`` (of the flattened array
    when None), as NumPy: one index inserts a block, a sequence inserts one slice per index."""
    return _insert(arr, _host(obj), values, axis)


@op
def _insert(
    arr: Tensor[DT, Unpack[Sh]], obj: Any, values: Any, axis: int | None = None
) -> Tensor[DT, Unpack[AnyShape]]:
    dtype = result_dtype("insert", (arr, values))
    x, ax = _axis_or_flat("insert", wrap(atom(arr, dtype)), axis)
    v = atom(values, dtype)
    n = x.aval.shape[ax]
    if isinstance(obj, slice):
        obj = np.arange(n)[obj]
    host = np.asarray(obj)
    if host.dtype.kind not in "iu" and host.size or host.ndim > 1:
        raise TypeError(f"insert: indices {obj!r} must be an int, a slice or a sequence of ints")
    host = host.astype(np.int64)
    bad = (host < -n) | (host > n)
    if bad.any():
        raise shape_error("insert", f"index {host[bad].flat[0]} is out of range for an axis of size {n}")
    where = np.where(host < 0, host + n, host)
    rank = x.aval.ndim
    if where.size == 1:  # one block of values
        vr = v.aval.ndim
        if vr < rank:
            v = S.reshape(v, (1,) * (rank - vr) + v.aval.shape)
        if where.ndim == 0:
            v = S.moveaxis(v, 0, ax)
        count = v.aval.shape[ax]
        block = _broadcast_block("insert", v, x, ax, count)
        i = int(where.reshape(-1)[0])
        parts = [SL.slice_in_dim(x, 0, i, ax), block, SL.slice_in_dim(x, i, n, ax)]
        return wrap(SL.concatenate([p for p in parts if p.aval.shape[ax]] or [block], ax))
    block = _broadcast_block("insert", v, x, ax, where.size)
    order = np.argsort(where, kind="stable")
    parts = []
    prev = 0
    for k in order.tolist():
        i = int(where[k])
        if i > prev:
            parts.append(SL.slice_in_dim(x, prev, i, ax))
        parts.append(SL.slice_in_dim(block, k, k + 1, ax))
        prev = i
    if prev < n:
        parts.append(SL.slice_in_dim(x, prev, n, ax))
    return wrap(SL.concatenate(parts, ax) if parts else x)


def _broadcast_block(op_name: str, v: Atom, x: Atom, axis: int, count: int) -> Atom:
    shape = list(x.aval.shape)
    shape[axis] = count
    try:
        target = np.broadcast_shapes(v.aval.shape, tuple(shape))
    except ValueError:
        target = None
    if target != tuple(shape):
        raise shape_error(op_name, f"values {v.aval} do not broadcast to the inserted block {tuple(shape)} of {x.aval}")
    return S.broadcast_to(v, Aval(tuple(shape), x.aval.dtype))


# ------------------------------------------------------------------------------------- rank and stacking


@overload
def atleast_1d(x: Tensor[DT, Unpack[Sh]], /) -> Tensor[DT, Unpack[AnyShape]]: ...
@overload
def atleast_1d(*arys: AnyTensor) -> tuple[AnyTensor, ...]: ...
def atleast_1d(*arys: Any) -> Any:
    """Each operand with at least one axis; a tuple when given several (NumPy 2)."""
    return _atleast("atleast_1d", 1, arys)


@overload
def atleast_2d(x: Tensor[DT, Unpack[Sh]], /) -> Tensor[DT, Unpack[AnyShape]]: ...
@overload
def atleast_2d(*arys: AnyTensor) -> tuple[AnyTensor, ...]: ...
def atleast_2d(*arys: Any) -> Any:
    """Each operand with at least two axes (``(N,)`` becomes ``(1, N)``)."""
    return _atleast("atleast_2d", 2, arys)


@overload
def atleast_3d(x: Tensor[DT, Unpack[Sh]], /) -> Tensor[DT, Unpack[AnyShape]]: ...
@overload
def atleast_3d(*arys: AnyTensor) -> tuple[AnyTensor, ...]: ...
def atleast_3d(*arys: Any) -> Any:
    """Each operand with at least three axes (``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` ``(M, N, 1)``)."""
    return _atleast("atleast_3d", 3, arys)


def _atleast(name: str, rank: int, arys: tuple[Any, ...]) -> Any:
    if not arys:
        raise shape_error(name, "needs at least one operand")
    outs = tuple(_atleast_one(x, rank) for x in arys)
    return outs[0] if len(outs) == 1 else outs


@op
def _atleast_one(x: AnyTensor, rank: int) -> AnyTensor:
    return wrap(_at_least(as_tensor(x).atom, rank))


@op
def column_stack(tup: Sequence[AnyTensor]) -> AnyTensor:
    """Join along axis 1; 1-D operands become columns (0-d ones 1 x 1)."""
    if isinstance(tup, Tensor) or not len(tup):
        raise shape_error("column_stack", "needs a non-empty sequence of arrays")
    dtype = result_dtype("column_stack", tup)
    atoms = []
    for item in tup:
        a = atom(item, dtype)
        if a.aval.ndim == 0:  # a 1 x 1 column, as NumPy
            a = S.reshape(a, (1, 1))
        if a.aval.ndim == 1:
            a = S.reshape(a, (a.aval.shape[0], 1), (a.aval.dims[0], None))
        atoms.append(a)
    from .joining import concatenate

    return concatenate([wrap(a) for a in atoms], axis=1)


# ------------------------------------------------------------------------------- grids and broadcasting


@op
def meshgrid(*xi: AnyTensor, indexing: str = "xy", sparse: bool = False) -> tuple[AnyTensor, ...]:
    """Coordinate grids from 1-D coordinate vectors (other ranks are flattened, as NumPy does). ``indexing="xy"``
    swaps the first two result axes (Cartesian), ``"ij"`` keeps operand order; ``sparse`` returns broadcastable
    shapes with size-1 axes. A coordinate vector's dim name stays on its axis."""
    if indexing not in ("xy", "ij"):
        raise shape_error("meshgrid", f"indexing must be 'xy' or 'ij', got {indexing!r}")
    flats = [_flat(as_tensor(x).atom) for x in xi]
    rank = len(flats)
    axis_of = list(range(rank))
    if indexing == "xy" and rank >= 2:
        axis_of[0], axis_of[1] = 1, 0
    shape = [0] * rank
    names: list[DimName] = [None] * rank
    for f, k in zip(flats, axis_of):
        shape[k], names[k] = f.aval.shape[0], f.aval.dims[0]
    outs = []
    for f, k in zip(flats, axis_of):
        if sparse:
            one = [1] * rank
            one[k] = f.aval.shape[0]
            dims: list[DimName] = [None] * rank
            dims[k] = f.aval.dims[0]
            outs.append(wrap(S.reshape(f, tuple(one), tuple(dims))))
        else:
            outs.append(wrap(S.broadcast_in_dim(f, tuple(shape), (k,), names)))
    return tuple(outs)


@op
def broadcast_arrays(*args: AnyTensor) -> tuple[AnyTensor, ...]:
    """The operands broadcast to their common shape, under tensorstage's broadcasting policy (no leading axes
    added to one operand while another is stretched: use ``broadcast_to`` to say that explicitly). Dtypes may
    differ: each operand keeps its own."""
    atoms = [as_tensor(a).atom for a in args]
    if not atoms:
        return ()
    target = broadcast_shapes("broadcast_arrays", [a.aval for a in atoms])
    return tuple(wrap(S.broadcast_to(a, target.with_dtype(a.aval.dtype))) for a in atoms)
