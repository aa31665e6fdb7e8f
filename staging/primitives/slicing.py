"""Static and dynamic windows of arrays: iota, slice, rev, dynamic_slice, dynamic_update_slice, concatenate, pad.

Dim names survive on every axis the op leaves whole (a slice of ``Batch`` is not ``Batch``). Dynamic starts are
rank-0 integer operands and are clamped like XLA does: a window always lies inside the operand. Batching rules
keep the batch axis where it is; a dynamic slice whose start indices are batched becomes a gather (scatter for an
update), since each example then reads a different window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval, DimName, literal
from ..primitive import Primitive
from ..shapes import check_sizes, describe, same_dtype, unify_axis
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from . import structural as S


def with_batch(x: Atom, d: int | None, target: int, size: int) -> Atom:
    """``x`` with its batch axis at ``target``; an unbatched operand (even a scalar) is broadcast to ``size``."""
    if d is not None:
        return S.moveaxis(x, d, target)
    shape = (*x.aval.shape[:target], size, *x.aval.shape[target:])
    names = (*x.aval.dims[:target], None, *x.aval.dims[target:])
    return S.broadcast_in_dim(x, shape, tuple(a + (a >= target) for a in range(x.aval.ndim)), names)


def renamed(x: Atom, aval: Aval) -> Atom:
    """``x`` with the dim names of ``aval`` (equal shape); a no-op reshape that XLA removes."""
    return x if x.aval.dims == aval.dims else S.reshape(x, aval.shape, aval.dims)


# ---------------------------------------------------------------------------------------------------- iota

iota_p = Primitive("iota", differentiable=False)


@iota_p.def_shape
def _iota_shape(
    *, shape: tuple[int, ...], dimension: int, dtype: np.dtype[Any], names: tuple[DimName, ...]
) -> Aval:
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"dimension {dimension} is out of range for shape {shape}", "iota")
    check_sizes("iota", shape)
    if len(names) != len(shape):
        raise ShapeError(f"invalid shape {shape} with names {names}", "iota")
    if not (dtypes.is_integer(dtype) or dtypes.is_float(dtype)):
        raise DTypeError(f"needs a numeric dtype, got {dtypes.short_name(dtype)}", "iota")
    return Aval(tuple(shape), dtype, names)


def iota(dtype: np.dtype[Any], shape: Sequence[int], dimension: int = 0, names: Sequence[DimName] | None = None) -> Atom:
    """0, 1, 2, ... along ``dimension``, broadcast over the other axes."""
    names_t = tuple(names) if names is not None else (None,) * len(shape)
    check_sizes("iota", shape)
    return bind(iota_p, shape=tuple(shape), dimension=dimension, dtype=dtype, names=names_t)  # type: ignore[no-any-return]


iota_p.def_jvp(E._no_tangent_jvp)
iota_p.def_vjp(E._no_cotangent_vjp)


@iota_p.def_batch
def _iota_batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
    raise AssertionError("iota has no operands, so it is never batched")


# --------------------------------------------------------------------------------------------------- slice

slice_p = Primitive("slice")


def slice_size(start: int, limit: int, stride: int) -> int:
    return max(0, (limit - start + stride - 1) // stride)


@slice_p.def_shape
def _slice_shape(
    x: Aval, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...], strides: tuple[int, ...]
) -> Aval:
    op = "slice"
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"needs {x.ndim} starts, limits and strides for {x}, got {start_indices}, "
                         f"{limit_indices}, {strides}", op)
    shape: list[int] = []
    names: list[DimName] = []
    for axis, (lo, hi, step) in enumerate(zip(start_indices, limit_indices, strides)):
        n = x.shape[axis]
        if not (0 <= lo <= hi <= n and step >= 1):
            raise ShapeError(f"window [{lo}:{hi}:{step}] does not fit axis {axis} of {x}", op)
        size = slice_size(lo, hi, step)
        shape.append(size)
        names.append(x.dims[axis] if size == n else None)
    return Aval(tuple(shape), x.dtype, names)


def slice_(x: Atom, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None) -> Atom:
    steps = tuple(strides) if strides is not None else (1,) * len(start)
    if tuple(start) == (0,) * x.aval.ndim and tuple(limit) == x.aval.shape and all(s == 1 for s in steps):
        return x
    return bind(  # type: ignore[no-any-return]
        slice_p, x, start_indices=tuple(start), limit_indices=tuple(limit), strides=steps
    )


def slice_in_dim(x: Atom, start: int, limit: int, axis: int) -> Atom:
    starts = [0] * x.aval.ndim
    limits = list(x.aval.shape)
    starts[axis], limits[axis] = start, limit
    return slice_(x, starts, limits)


@slice_p.def_jvp
def _slice_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(slice_p, t, **params),)


@slice_p.def_vjp
def _slice_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any, *,
    start_indices: Any, limit_indices: Any, strides: Any,
) -> Any:
    (ct,) = cts
    x = primals[0].aval
    if isinstance(ct, Zero) or 0 in ct.aval.shape:
        return (Zero(x),)
    # Scatter the window back with zeros between strided elements: a pad with interior padding.
    config = []
    for n, lo, step, size in zip(x.shape, start_indices, strides, ct.aval.shape):
        covered = lo + (size - 1) * step + 1
        config.append((lo, n - covered, step - 1))
    return (renamed(pad(ct, E.scalar(0, ct), config), x),)


@slice_p.def_batch
def _slice_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, start_indices: Any, limit_indices: Any, strides: Any
) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    n = x.aval.shape[d]
    return slice_(
        x, (*start_indices[:d], 0, *start_indices[d:]), (*limit_indices[:d], n, *limit_indices[d:]),
        (*strides[:d], 1, *strides[d:]),
    ), d


# ----------------------------------------------------------------------------------------------------- rev

rev_p = Primitive("rev")


@rev_p.def_shape
def _rev_shape(x: Aval, *, dimensions: tuple[int, ...]) -> Aval:
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= a < x.ndim for a in dimensions):
        raise ShapeError(f"invalid dimensions {dimensions} to reverse in {x}", "rev")
    return x


def rev(x: Atom, dimensions: Sequence[int]) -> Atom:
    dims_t = tuple(sorted(dimensions))
    return x if not dims_t else bind(rev_p, x, dimensions=dims_t)


@rev_p.def_jvp
def _rev_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, dimensions: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (rev(t, dimensions),)


@rev_p.def_vjp
def _rev_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, dimensions: Any) -> Any:
    (ct,) = cts
    return (Zero(primals[0].aval),) if isinstance(ct, Zero) else (rev(ct, dimensions),)


@rev_p.def_batch
def _rev_batch(args: Sequence[Atom], dims: Sequence[int | None], *, dimensions: Any) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    return rev(x, [a + (a >= d) for a in dimensions]), d


# ------------------------------------------------------------------------------------------ dynamic_slice


def _check_starts(op: str, x: Aval, starts: Sequence[Aval]) -> None:
    if len(starts) != x.ndim:
        raise ShapeError(f"needs one start index per axis of {x}, got {len(starts)}", op)
    for s in starts:
        if s.ndim != 0 or not dtypes.is_integer(s.dtype):
            raise DTypeError(f"start indices must be integer scalars, got {describe(starts)}", op)
    if starts:
        same_dtype(op, starts)


dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_shape
def _dynamic_slice_shape(x: Aval, *starts: Aval, slice_sizes: tuple[int, ...]) -> Aval:
    op = "dynamic_slice"
    _check_starts(op, x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"slice sizes {slice_sizes} do not fit in {x}", op)
    names = tuple(d if s == n else None for s, n, d in zip(slice_sizes, x.shape, x.dims))
    return Aval(tuple(slice_sizes), x.dtype, names)


def index_scalars(starts: Sequence[Atom | int]) -> list[Atom]:
    """Start indices as int32 scalars (StableHLO wants one integer type for all of them)."""
    out: list[Atom] = []
    for s in starts:
        if isinstance(s, int):
            out.append(literal(s, np.dtype(np.int32)))
        else:
            out.append(E.convert(s, np.dtype(np.int32)))
    return out


def dynamic_slice(x: Atom, starts: Sequence[Atom | int], sizes: Sequence[int]) -> Atom:
    """The window of ``sizes`` at ``starts``; starts are clamped so the window fits (XLA semantics)."""
    return bind(dynamic_slice_p, x, *index_scalars(starts), slice_sizes=tuple(sizes))  # type: ignore[no-any-return]


@dynamic_slice_p.def_jvp
def _dynamic_slice_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    t = tangents[0]
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(dynamic_slice_p, t, *primals[1:], **params),)


@dynamic_slice_p.def_vjp
def _dynamic_slice_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, slice_sizes: Any
) -> Any:
    (ct,) = cts
    x = primals[0]
    starts = tuple(primals[1:])
    if isinstance(ct, Zero):
        return (Zero(x.aval), *(None for _ in starts))
    # dynamic_update_slice clamps its starts exactly as dynamic_slice does, so the window lands where it was read.
    ct_x = bind(dynamic_update_slice_p, S.zeros(x.aval), renamed_like(ct, x.aval), *starts)
    return (ct_x, *(None for _ in starts))


def renamed_like(update: Atom, operand: Aval) -> Atom:
    """Carry ``operand``'s names onto the full-size axes of ``update`` (they are the same dims)."""
    names = tuple(
        d if n == m else u for n, m, d, u in zip(update.aval.shape, operand.shape, operand.dims, update.aval.dims)
    )
    return renamed(update, Aval(update.aval.shape, update.aval.dtype, names))


@dynamic_slice_p.def_batch
def _dynamic_slice_batch(args: Sequence[Atom], dims: Sequence[int | None], *, slice_sizes: Any) -> Any:
    x, starts = args[0], args[1:]
    d = dims[0]
    if all(sd is None for sd in dims[1:]):
        assert d is not None
        zero = literal(0, starts[0].aval.dtype) if starts else literal(0, np.dtype(np.int32))
        sizes = (*slice_sizes[:d], x.aval.shape[d], *slice_sizes[d:])
        return bind(dynamic_slice_p, x, *starts[:d], zero, *starts[d:], slice_sizes=sizes), d
    from . import gather_scatter as G  # imported here: gather_scatter builds on this module

    return G.batch_dynamic_slice(x, d, starts, dims[1:], slice_sizes)


# ----------------------------------------------------------------------------------- dynamic_update_slice

dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_shape
def _dus_shape(x: Aval, update: Aval, *starts: Aval) -> Aval:
    op = "dynamic_update_slice"
    _check_starts(op, x, starts)
    same_dtype(op, (x, update))
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"update {update} does not fit in operand {x}", op)
    for axis in range(x.ndim):
        if update.shape[axis] == x.shape[axis]:
            unify_axis(op, (x, update), (axis, axis))
    return x


def dynamic_update_slice(x: Atom, update: Atom, starts: Sequence[Atom | int]) -> Atom:
    """``x`` with the window at ``starts`` replaced by ``update``; starts are clamped so the window fits."""
    return bind(dynamic_update_slice_p, x, update, *index_scalars(starts))  # type: ignore[no-any-return]


@dynamic_update_slice_p.def_jvp
def _dus_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    tx, tu = tangents[0], tangents[1]
    if is_zero(tx) and is_zero(tu):
        return (Zero(outs[0].aval),)
    return (bind(dynamic_update_slice_p, S.instantiate(tx), S.instantiate(tu), *primals[2:]),)


@dynamic_update_slice_p.def_vjp
def _dus_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool]) -> Any:
    (ct,) = cts
    x, update, starts = primals[0], primals[1], tuple(primals[2:])
    none = tuple(None for _ in starts)
    if isinstance(ct, Zero):
        return (Zero(x.aval), Zero(update.aval), *none)
    ct_x: MaybeZero = (
        bind(dynamic_update_slice_p, ct, S.zeros(update.aval), *starts) if wants[0] else Zero(x.aval)
    )
    ct_u: MaybeZero = Zero(update.aval)
    if wants[1]:
        ct_u = renamed(bind(dynamic_slice_p, ct, *starts, slice_sizes=update.aval.shape), update.aval)
    return (ct_x, ct_u, *none)


@dynamic_update_slice_p.def_batch
def _dus_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    x, update, starts = args[0], args[1], args[2:]
    dx, du = dims[0], dims[1]
    if any(sd is not None for sd in dims[2:]):
        from . import gather_scatter as G  # imported here: gather_scatter builds on this module

        return G.batch_dynamic_update_slice(x, dx, update, du, starts, dims[2:])
    target = dx if dx is not None else du
    assert target is not None
    size = (x if dx is not None else update).aval.shape[target]
    x = with_batch(x, dx, target, size)
    update = with_batch(update, du, target, size)
    zero = literal(0, starts[0].aval.dtype) if starts else literal(0, np.dtype(np.int32))
    return bind(dynamic_update_slice_p, x, update, *starts[:target], zero, *starts[target:]), target


# ------------------------------------------------------------------------------------------- concatenate

concatenate_p = Primitive("concatenate")


@concatenate_p.def_shape
def _concatenate_shape(*xs: Aval, dimension: int) -> Aval:
    op = "concatenate"
    if not xs:
        raise ShapeError("needs at least one operand", op)
    first = xs[0]
    if any(x.ndim != first.ndim for x in xs) or not 0 <= dimension < max(first.ndim, 1) or first.ndim == 0:
        raise ShapeError(f"operands must have one rank >= 1 and axis {dimension} must exist: {describe(xs)}", op)
    same_dtype(op, xs)
    shape: list[int] = []
    names: list[DimName] = []
    for axis in range(first.ndim):
        if axis == dimension:
            shape.append(sum(x.shape[axis] for x in xs))
            names.append(first.dims[axis] if len(xs) == 1 else None)
            continue
        if any(x.shape[axis] != first.shape[axis] for x in xs):
            raise ShapeError(f"operands differ on axis {axis} (only axis {dimension} may): {describe(xs)}", op)
        shape.append(first.shape[axis])
        names.append(unify_axis(op, xs, [axis] * len(xs)))
    return Aval(tuple(shape), first.dtype, names)


def concatenate(xs: Sequence[Atom], dimension: int) -> Atom:
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, dimension=dimension)  # type: ignore[no-any-return]


@concatenate_p.def_jvp
def _concatenate_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, dimension: int) -> Any:
    if all(is_zero(t) for t in tangents):
        return (Zero(outs[0].aval),)
    return (bind(concatenate_p, *(S.instantiate(t) for t in tangents), dimension=dimension),)


@concatenate_p.def_vjp
def _concatenate_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], *, dimension: int
) -> Any:
    (ct,) = cts
    if isinstance(ct, Zero):
        return tuple(Zero(p.aval) for p in primals)
    out: list[MaybeZero] = []
    offset = 0
    for p, want in zip(primals, wants):
        n = p.aval.shape[dimension]
        out.append(renamed(slice_in_dim(ct, offset, offset + n, dimension), p.aval) if want else Zero(p.aval))
        offset += n
    return tuple(out)


@concatenate_p.def_batch
def _concatenate_batch(args: Sequence[Atom], dims: Sequence[int | None], *, dimension: int) -> Any:
    target, size = next((d, a.aval.shape[d]) for a, d in zip(args, dims) if d is not None)
    aligned = [with_batch(a, d, target, size) for a, d in zip(args, dims)]
    return bind(concatenate_p, *aligned, dimension=dimension + (dimension >= target)), target


# --------------------------------------------------------------------------------------------------- pad

pad_p = Primitive("pad")

PadConfig = tuple[tuple[int, int, int], ...]


@pad_p.def_shape
def _pad_shape(x: Aval, value: Aval, *, padding_config: PadConfig) -> Aval:
    op = "pad"
    if value.ndim != 0:
        raise ShapeError(f"padding value must be a scalar, got {value}", op)
    same_dtype(op, (x, value))
    if len(padding_config) != x.ndim:
        raise ShapeError(f"needs one (low, high, interior) triple per axis of {x}, got {padding_config}", op)
    shape: list[int] = []
    names: list[DimName] = []
    for axis, (lo, hi, interior) in enumerate(padding_config):
        n = x.shape[axis]
        size = lo + hi + n + max(n - 1, 0) * interior
        if interior < 0 or size < 0:
            raise ShapeError(f"padding {(lo, hi, interior)} is invalid for axis {axis} of {x}", op)
        shape.append(size)
        names.append(x.dims[axis] if (lo, hi, interior) == (0, 0, 0) else None)
    return Aval(tuple(shape), x.dtype, names)


def pad(x: Atom, value: Atom, config: Sequence[tuple[int, int, int]]) -> Atom:
    cfg = tuple((int(lo), int(hi), int(i)) for lo, hi, i in config)
    if all(c == (0, 0, 0) for c in cfg):
        return x
    return bind(pad_p, x, value, padding_config=cfg)  # type: ignore[no-any-return]


@pad_p.def_jvp
def _pad_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, padding_config: Any) -> Any:
    if all(is_zero(t) for t in tangents):
        return (Zero(outs[0].aval),)
    return (bind(pad_p, *(S.instantiate(t) for t in tangents), padding_config=padding_config),)


def _unpad(ct: Atom, x: Aval, config: PadConfig) -> Atom:
    """The elements of a padded array that came from the operand (crops undone with zeros)."""
    zero = E.scalar(0, ct)
    uncropped = pad(ct, zero, [(-lo, -hi, 0) for lo, hi, _ in config])
    strides = [interior + 1 for _, _, interior in config]
    return renamed(slice_(uncropped, [0] * x.ndim, uncropped.aval.shape, strides), x)


@pad_p.def_vjp
def _pad_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], *, padding_config: Any
) -> Any:
    (ct,) = cts
    x, value = primals
    if isinstance(ct, Zero):
        return (Zero(x.aval), Zero(value.aval))
    from . import reductions as R

    ct_x = _unpad(ct, x.aval, padding_config)
    ct_value: MaybeZero = Zero(value.aval)
    if wants[1]:  # every output element not taken from the operand is the padding value
        everything = tuple(range(ct.aval.ndim))
        ct_value = E.sub(R.reduce_sum(ct, everything), R.reduce_sum(ct_x, tuple(range(x.aval.ndim))))
    return (ct_x, ct_value)


@pad_p.def_batch
def _pad_batch(args: Sequence[Atom], dims: Sequence[int | None], *, padding_config: Any) -> Any:
    x, value = args
    dx, dv = dims
    if dv is None:
        assert dx is not None
        return pad(x, value, (*padding_config[:dx], (0, 0, 0), *padding_config[dx:])), dx
    # A per-example padding value: pad with zeros, then select the value where a mask says "padding".
    size = value.aval.shape[dv]
    target = dx if dx is not None else 0
    x = with_batch(x, dx, target, size)
    config = (*padding_config[:target], (0, 0, 0), *padding_config[target:])
    padded = pad(x, E.scalar(0, x), config)
    inside = pad(S.full_like(x.aval.with_dtype(dtypes.BOOL), True), literal(False, dtypes.BOOL), config)
    values = S.broadcast_in_dim(value, padded.aval.shape, (target,), padded.aval.dims)
    return E.select(inside, padded, values), target
