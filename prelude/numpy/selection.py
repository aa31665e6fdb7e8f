"""NumPy's functions whose result size depends on the data: ``nonzero``, ``unique``, ``bincount``, ``histogram``
(and ``histogram2d``, ``histogramdd``), ``extract``, ``compress``, the set operations (``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``) and friends, plus the value-selecting ``select``, ``choose``, ``piecewise``, ``isin``,
``digitize``.

A staged program has static shapes, so (as in JAX) these take a static ``size=`` (``length=`` for ``bincount``):
results are truncated to ``size`` elements or padded with ``fill_value``. Called eagerly on concrete arrays,
``size=None`` reads the data on the host to find the size, as NumPy does; while staging (``ts.program``, ``vmap``,
``grad``) ``size=None`` is an error that asks for ``size=``. Index results are i32 (NumPy: int64).

Histograms take static bin counts (or edges). Without a ``range``, equal-width bins span the data's min and max:
read on the host in eager calls, computed as staged reductions while staging. Counts are i32 (NumPy: int64 for
``histogram``, float64 for ``histogram2d``/``histogramdd``), as JAX; weights or ``density`` give floats.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypeVar, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...array import as_host_array
from ...dtypes import DType, bool_, i32
from ...staging import dtypes as _dt
from ...staging.builder import bind, is_staging
from ...staging.errors import StagingError
from ...staging.ir import Atom, Aval, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import sorting as T
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import _named, as_tensor, atom, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from .cumulative import _scan
from .indexing import index_atom, update_atom
from .sorting import searchsorted
from .static_settings import static_int

__all__ = [
    "argwhere", "bincount", "choose", "compress", "digitize", "extract", "flatnonzero", "histogram", "histogram2d",
    "histogram_bin_edges", "histogramdd", "intersect1d", "isin", "nonzero", "piecewise", "select", "setdiff1d",
    "setxor1d", "union1d", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
IndexTensor = Tensor[i32, Any]

INDEX = _dt.DEFAULT_INT


# ------------------------------------------------------------------------------------------------ helpers


def _size_arg(op_name: str, size: Any, what: str = "size") -> int:
    n = static_int(op_name, size, f"{what}=")
    if n < 0:
        raise shape_error(op_name, f"{what}={n} is negative")
    return n


def _size_from_data(op_name: str, count: Callable[..., int], *operands: Any, what: str = "size") -> int:
    """Eagerly, the result size NumPy would find by reading the data; while staging, an error asking for it."""
    if is_staging():
        raise shape_error(
            op_name,
            f"the result's length depends on the values of the data, which a staged program (ts.program, vmap, grad) "
            f"cannot read: pass a static {what}= (e.g. {op_name}(..., {what}=10)); extra slots are filled and "
            "results past it are dropped",
        )
    return count(*[as_host_array(x) for x in operands])


F = TypeVar("F", bound=Callable[..., Any])


def _entry(fn: F) -> F:
    """For the public functions that are not ops themselves (they read sizes on the host first): plain errors
    name the op and the user's line, as an op's do."""
    name = fn.__name__.replace("where_nonzero", "where")

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StagingError:
            raise
        except (TypeError, ValueError, IndexError) as exc:
            if "\n  at " in str(exc):  # raised by an op: named already
                raise
            raise _named(exc, name) from exc

    return cast(F, wrapper)


def _flat(x: Atom) -> Atom:
    return S.reshape(x, (x.aval.size,), (None,))


def _truthy(x: Atom) -> Atom:
    """``x != 0`` as bool (NaN counts as true, as in NumPy)."""
    if x.aval.dtype == _dt.BOOL:
        return x
    return bind(E.ne_p, x, E.scalar(0, x))  # type: ignore[no-any-return]


def _i32(x: Atom) -> Atom:
    return x if x.aval.dtype == INDEX else E.convert(x, INDEX)


def _iota(n: int) -> Atom:
    return SL.iota(INDEX, (n,))


def _full(n: int, value: int | float | bool, like: Atom) -> Atom:
    """A (n,) array of ``value`` in ``like``'s dtype."""
    return S.full_like(Aval((n,), like.aval.dtype, (None,)), value)


def _scatter(op_name: str, into: Atom, target: Atom, values: Atom, combiner: str) -> Atom:
    """``into.at[target].<combiner>(values)``; targets past the end are dropped (callers never pass negatives).
    They go to a spare slot cut off afterwards, so the scatter stays in bounds (checkify's index checks flag
    the updates a scatter drops)."""
    if target.aval.size == 0 or into.aval.size == 0:
        return into
    n = into.aval.shape[0]
    spare = S.full_like(Aval((1, *into.aval.shape[1:]), into.aval.dtype), 0)
    extended = SL.concatenate([S.reshape(into, into.aval.shape), spare], 0)
    inside = E.minimum(target, E.scalar(n, target))
    out = SL.slice_in_dim(update_atom(op_name, extended, (wrap(inside),), values, combiner), 0, n, 0)
    return S.reshape(out, into.aval.shape, into.aval.dims)


def _gather(op_name: str, x: Atom, index: Atom, axis: int = 0) -> Atom:
    items: tuple[Any, ...] = (slice(None),) * axis + (wrap(index),)
    return index_atom(op_name, x, items)


def _compact(op_name: str, mask: Atom, size: int) -> tuple[Atom, Atom]:
    """For a 1-D bool mask: the positions of its first ``size`` true elements (i32, 0 past the last one), and
    which of the ``size`` slots hold one."""
    n = mask.aval.shape[0]
    count = _i32(mask)
    rank = E.sub(_scan(count, 0, "sum"), E.scalar(1, count)) if n else count
    target = E.select(mask, rank, E.scalar(size, rank))  # false elements go past the end: dropped
    positions = _scatter(op_name, _full(size, 0, count), target, _iota(n), "set")
    total = R.reduce_sum(count, (0,)) if n else literal(0, INDEX)
    valid = E.lt(_iota(size), total)
    return positions, valid


def _fill_atom(value: Any, like: Atom) -> Atom:
    if isinstance(value, Tensor):
        a = as_tensor(value).atom
        if a.aval.ndim != 0:
            raise ValueError(f"fill_value must be a scalar, got {describe(value)}")
        return a if a.aval.dtype == like.aval.dtype else E.convert(a, like.aval.dtype)
    return atom(value, like.aval.dtype)


def _padded(valid: Atom, x: Atom, fill: Any) -> Atom:
    """``x`` (first axis: the slots) where the slot is valid, else ``fill``."""
    f = _fill_atom(fill, x)
    pred = valid if x.aval.ndim == 1 else S.broadcast_in_dim(valid, x.aval.shape, (0,), x.aval.dims)
    return E.select(pred, x, S.broadcast_to(f, x.aval) if x.aval.ndim else f)


# --------------------------------------------------------------------------------- nonzero and friends


def _fills(op_name: str, fill_value: Any, ndim: int) -> tuple[Any, ...]:
    if fill_value is None:
        return (0,) * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise shape_error(op_name, f"fill_value has {len(fill_value)} entries for an operand of rank {ndim}")
        return tuple(fill_value)
    return (fill_value,) * ndim


@op
def _nonzero(a: AnyTensor, size: int, fill_value: Any) -> tuple[AnyTensor, ...]:
    t = as_tensor(a)
    if t.aval.ndim == 0:
        raise shape_error("nonzero", f"nonzero of a 0-d operand {describe(t)} is not allowed (as in NumPy 2); use "
                          "tnp.atleast_1d(x) first")
    positions, valid = _compact("nonzero", _truthy(_flat(t.atom)), size)
    fills = _fills("nonzero", fill_value, t.aval.ndim)
    out = []
    shape = t.aval.shape
    for k, fill in enumerate(fills):
        coord = positions  # the flat (C-order) position, unravelled
        if t.aval.size:
            stride = int(np.prod(shape[k + 1:]))
            if stride != 1:
                coord = E.div(coord, E.scalar(stride, coord))
            if k:
                coord = E.rem(coord, E.scalar(shape[k], coord))
        out.append(wrap(_padded(valid, coord, fill)))
    return tuple(out)


@_entry
def nonzero(a: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> tuple[IndexTensor, ...]:
    """The i32 indices of the non-zero elements, one array per axis. With ``size``: exactly ``size`` of them,
    the first ones in C order, padded with ``fill_value`` (default 0; a scalar, or one per axis). Staged calls
    need ``size``."""
    if size is None:
        size = _size_from_data("nonzero", lambda h: int(np.count_nonzero(h)), a)
    return _nonzero(a, _size_arg("nonzero", size), fill_value)


@_entry
def flatnonzero(a: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> IndexTensor:
    """i32 indices of the non-zero elements of the flattened ``a`` (``size``/``fill_value`` as ``nonzero``)."""
    if size is None:
        size = _size_from_data("flatnonzero", lambda h: int(np.count_nonzero(h)), a)
    return _flatnonzero(a, _size_arg("flatnonzero", size), fill_value)


@op
def _flatnonzero(a: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    t = as_tensor(a)
    positions, valid = _compact("flatnonzero", _truthy(_flat(t.atom)), size)
    return wrap(_padded(valid, positions, 0 if fill_value is None else fill_value))


@_entry
def argwhere(a: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> IndexTensor:
    """The i32 indices of the non-zero elements as a ``(count, a.ndim)`` array (``size`` rows with ``size``,
    padded with ``fill_value``, default 0)."""
    if size is None:
        size = _size_from_data("argwhere", lambda h: int(np.count_nonzero(h)), a)
    return _argwhere(a, _size_arg("argwhere", size), fill_value)


@op
def _argwhere(a: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    t = as_tensor(a)
    if t.aval.ndim == 0:  # NumPy: a (count, 0) array
        return wrap(S.full_like(Aval((size, 0), INDEX, (None, None)), 0))
    columns = _nonzero(t, size, fill_value)
    stacked = [S.reshape(as_tensor(c).atom, (size, 1), (None, None)) for c in columns]
    return wrap(stacked[0] if len(stacked) == 1 else SL.concatenate(stacked, 1))


@_entry
def where_nonzero(condition: Any, size: int | None, fill_value: Any) -> tuple[IndexTensor, ...]:
    """``where(condition)``: ``nonzero`` (used by ``ufuncs.where``)."""
    if size is None:
        size = _size_from_data("where", lambda h: int(np.count_nonzero(h)), condition)
    return _where(condition, _size_arg("where", size), fill_value)


@op
def _where(condition: AnyTensor, size: int, fill_value: Any) -> tuple[AnyTensor, ...]:
    return _nonzero(condition, size, fill_value)


# ------------------------------------------------------------------------------------------- extract, compress


@_entry
def extract(condition: AnyTensor, arr: Tensor[DT, Unpack[Sh]], *, size: int | None = None,
            fill_value: Any = 0) -> Tensor[DT, Any]:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is non-zero (``size`` of them with
    ``size``, padded with ``fill_value``)."""
    if size is None:
        size = _size_from_data("extract", lambda h: int(np.count_nonzero(h)), condition)
    return _extract(condition, arr, _size_arg("extract", size), fill_value)


@op
def _extract(condition: AnyTensor, arr: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    c, x = as_tensor(condition), as_tensor(arr)
    if c.aval.size != x.aval.size:
        raise shape_error("extract", f"condition {describe(c)} and arr {describe(x)} must have the same size")
    flat = _flat(x.atom)
    if flat.aval.size == 0:
        return wrap(S.broadcast_to(_fill_atom(fill_value, flat), Aval((size,), flat.aval.dtype, (None,))))
    positions, valid = _compact("extract", _truthy(_flat(c.atom)), size)
    return wrap(_padded(valid, _gather("extract", flat, positions), fill_value))


@_entry
def compress(condition: AnyTensor, a: AnyTensor, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0) -> AnyTensor:
    """The slices of ``a`` along ``axis`` (the flattened ``a`` when None) where the 1-D ``condition`` is true;
    ``condition`` may be shorter than the axis (the rest count as false). With ``size``: ``size`` slices, padded
    with ``fill_value``."""
    if size is None:
        size = _size_from_data("compress", lambda h: int(np.count_nonzero(h)), condition)
    return _compress(condition, a, axis, _size_arg("compress", size), fill_value)


@op
def _compress(condition: AnyTensor, a: AnyTensor, axis: int | None, size: int, fill_value: Any) -> AnyTensor:
    c, x = as_tensor(condition), as_tensor(a)
    if c.aval.ndim != 1:
        raise shape_error("compress", f"condition must be 1-D, got {describe(c)}")
    if axis is None:
        x, ax = wrap(_flat(x.atom)), 0
    else:
        ax = normalize_axes("compress", axis, x, allow_none=False)[0]
    n = x.aval.shape[ax]
    m = c.aval.shape[0]
    if m > n:
        raise shape_error("compress", f"condition {describe(c)} is longer than axis {ax} of {describe(x)} (size {n})")
    mask = _truthy(c.atom)
    if m < n:
        mask = SL.pad(mask, literal(False, _dt.BOOL), [(0, n - m, 0)])
    out_shape = (*x.aval.shape[:ax], size, *x.aval.shape[ax + 1:])
    if n == 0 or x.aval.size == 0:
        return wrap(S.full_like(Aval(out_shape, x.aval.dtype, (None,) * len(out_shape)),
                                0 if fill_value is None else fill_value))
    positions, valid = _compact("compress", mask, size)
    picked = _gather("compress", x.atom, positions, ax)
    moved = S.moveaxis(picked, ax, 0)
    return wrap(S.moveaxis(_padded(valid, moved, fill_value), 0, ax))


# ------------------------------------------------------------------------------------------------ unique


def _isnan(x: Atom) -> Atom:
    return bind(E.ne_p, x, x)  # type: ignore[no-any-return]


def _differs(a: Atom, b: Atom, equal_nan: bool) -> Atom:
    """``a != b`` elementwise, NaNs equal to each other when ``equal_nan``."""
    ne = bind(E.ne_p, a, b)
    if equal_nan and _dt.is_float(a.aval.dtype):
        ne = bind(E.and_p, ne, bind(E.not_p, bind(E.and_p, _isnan(a), _isnan(b))))
    return ne  # type: ignore[no-any-return]


def _sorted_groups(rows: Atom, equal_nan: bool) -> tuple[Atom, Atom, Atom, Atom]:
    """For a (n,) or (n, k) array: its rows sorted (stable, lexicographic, NaNs last), the permutation, a bool
    'first of its group' mask and the i32 group number of each sorted row."""
    n = rows.aval.shape[0]
    perm = _iota(n)
    if n > 1:
        if rows.aval.ndim == 1:
            rows, perm = T.sort([rows, perm], 0)
        else:  # stable sorts from the last column to the first: the first column is the primary key
            for j in reversed(range(rows.aval.shape[1])):
                column = _gather("unique", SL.slice_in_dim(rows, j, j + 1, 1), perm)
                column = S.reshape(column, (n,), (None,))
                perm = T.sort([column, perm], 0)[1]
            rows = _gather("unique", rows, perm)
    if n == 0:
        return rows, perm, S.full_like(Aval((0,), _dt.BOOL, (None,)), False), perm
    change = _differs(SL.slice_in_dim(rows, 1, n, 0), SL.slice_in_dim(rows, 0, n - 1, 0), equal_nan)
    if rows.aval.ndim == 2:
        change = R.reduce_max(E.convert(change, INDEX), (1,)) if rows.aval.shape[1] else (
            S.full_like(Aval((n - 1,), INDEX, (None,)), 0))
        change = bind(E.ne_p, change, E.scalar(0, change))
    first = SL.concatenate([literal(np.array([True]), _dt.BOOL), change], 0) if n > 1 else (
        S.full_like(Aval((1,), _dt.BOOL, (None,)), True))
    counts = _scan(_i32(first), 0, "sum")
    group = E.sub(counts, E.scalar(1, counts))
    return rows, perm, first, group


def _unique_count(h: np.ndarray[Any, Any], axis: int | None, equal_nan: bool) -> int:
    if axis is None:
        return int(np.unique(h.reshape(-1), equal_nan=equal_nan).size) if h.size else 0
    moved = np.moveaxis(h, axis, 0)
    if moved.shape[0] == 0:
        return 0
    flat = moved.reshape(moved.shape[0], -1)
    if h.dtype.kind == "f" and equal_nan:  # NaNs equal: a marker stands for each NaN
        keys: set[tuple[Any, ...]] = {tuple("nan" if v != v else float(v) + 0.0 for v in row) for row in flat}
    else:
        keys = {tuple(("nan", i) if v != v else float(v) + 0.0 for v in row) for i, row in enumerate(flat)}
    return len(keys)


@op
def _unique(ar: AnyTensor, return_index: bool, return_inverse: bool, return_counts: bool, axis: int | None,
            equal_nan: bool, size: int, fill_value: Any) -> tuple[AnyTensor, ...]:
    t = as_tensor(ar)
    if axis is None:
        rows = _flat(t.atom)
        ax = 0
    else:
        ax = normalize_axes("unique", axis, t, allow_none=False)[0]
        moved = S.moveaxis(t.atom, ax, 0)
        rest = moved.aval.shape[1:]
        rows = S.reshape(moved, (moved.aval.shape[0], int(np.prod(rest))), (None, None))
    n = rows.aval.shape[0]
    srt, perm, first, group = _sorted_groups(rows, equal_nan)
    target = E.select(first, group, E.scalar(size, group)) if n else group
    out_aval = Aval((size, *rows.aval.shape[1:]), rows.aval.dtype, (None,) * rows.aval.ndim)
    fill: Any = fill_value
    if fill_value is None:  # the smallest element in sort order (NaNs last), as JAX's minimum
        fill = 0
        if rows.aval.size:
            smallest = srt if rows.aval.ndim == 1 else T.sort([_flat(rows)], 0)[0]
            fill = wrap(S.reshape(SL.slice_in_dim(smallest, 0, 1, 0), (), ()))
    base = S.broadcast_to(_fill_atom(fill, rows), out_aval)
    values = _scatter("unique", base, target, srt, "set")
    if axis is not None:
        shape = (size, *t.aval.shape[:ax], *t.aval.shape[ax + 1:])
        values = S.moveaxis(S.reshape(values, shape, (None,) * len(shape)), 0, ax)
    outs = [wrap(values)]
    if return_index:
        outs.append(wrap(_scatter("unique", _full(size, 0, perm), target, perm, "set")))
    if return_inverse:
        inverse = _scatter("unique", _full(n, 0, perm), perm, group, "set")
        if axis is None:
            inverse = S.reshape(inverse, t.aval.shape, (None,) * t.aval.ndim)  # NumPy 2: the input's shape
        outs.append(wrap(inverse))
    if return_counts:
        ones = S.full_like(Aval((n,), INDEX, (None,)), 1)
        outs.append(wrap(_scatter("unique", _full(size, 0, ones), group, ones, "add")))
    return tuple(outs)


@overload
def unique(
    ar: Tensor[DT, Unpack[Sh]], return_index: Literal[False] = False, return_inverse: Literal[False] = False,
    return_counts: Literal[False] = False, axis: int | None = None, *, equal_nan: bool = True,
    size: int | None = None, fill_value: Any = None,
) -> Tensor[DT, Any]: ...
@overload
def unique(
    ar: Tensor[DT, Unpack[Sh]], return_index: bool = False, return_inverse: bool = False,
    return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
    fill_value: Any = None,
) -> Tensor[DT, Any] | tuple[AnyTensor, ...]: ...
@_entry
def unique(
    ar: AnyTensor, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
    axis: int | None = None, *, equal_nan: bool = True, size: int | None = None, fill_value: Any = None,
) -> AnyTensor | tuple[AnyTensor, ...]:
    """The sorted unique elements (of the flattened ``ar``, or unique slices along ``axis``), optionally with
    first indices, the inverse (``ar``'s shape when ``axis`` is None, as NumPy 2) and counts (i32). NaNs collapse
    to one when ``equal_nan``. With ``size``: exactly ``size`` values, padded with ``fill_value`` (default: the
    smallest element, as JAX), index 0 and count 0 (an inverse index may then point past ``size``); staged calls
    need ``size``."""
    if size is None:
        size = _size_from_data("unique", lambda h: _unique_count(h, _host_axis(axis, h), equal_nan), ar)
    outs = _unique(ar, bool(return_index), bool(return_inverse), bool(return_counts), axis, bool(equal_nan),
                   _size_arg("unique", size), fill_value)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _host_axis(axis: Any, h: np.ndarray[Any, Any]) -> int | None:
    if axis is None:
        return None
    if not -h.ndim <= operator.index(axis) < max(h.ndim, 1):
        raise ValueError(f"axis {axis} is out of range for an operand of rank {h.ndim}")
    return operator.index(axis) % h.ndim


class UniqueAllResult(NamedTuple):
    values: AnyTensor
    indices: AnyTensor
    inverse_indices: AnyTensor
    counts: AnyTensor


class UniqueCountsResult(NamedTuple):
    values: AnyTensor
    counts: AnyTensor


class UniqueInverseResult(NamedTuple):
    values: AnyTensor
    inverse_indices: AnyTensor


def _unique_api(name: str, x: Any, flags: tuple[bool, bool, bool], size: int | None, fill_value: Any) -> Any:
    if size is None:
        size = _size_from_data(name, lambda h: _unique_count(h, None, False), x)
    return _unique(x, *flags, None, False, _size_arg(name, size), fill_value)


@_entry
def unique_values(x: Tensor[DT, Unpack[Sh]], *, size: int | None = None, fill_value: Any = None) -> Tensor[DT, Any]:
    """The sorted unique elements (NumPy 2 / array API: every NaN distinct)."""
    return _unique_api("unique_values", x, (False, False, False), size, fill_value)[0]  # type: ignore[no-any-return]


@_entry
def unique_counts(x: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> UniqueCountsResult:
    """``(values, counts)`` of the unique elements (every NaN distinct)."""
    return UniqueCountsResult(*_unique_api("unique_counts", x, (False, False, True), size, fill_value))


@_entry
def unique_inverse(x: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> UniqueInverseResult:
    """``(values, inverse_indices)``; the inverse has ``x``'s shape (every NaN distinct)."""
    return UniqueInverseResult(*_unique_api("unique_inverse", x, (False, True, False), size, fill_value))


@_entry
def unique_all(x: AnyTensor, *, size: int | None = None, fill_value: Any = None) -> UniqueAllResult:
    """``(values, indices, inverse_indices, counts)`` (every NaN distinct)."""
    return UniqueAllResult(*_unique_api("unique_all", x, (True, True, True), size, fill_value))


# -------------------------------------------------------------------------------------------- set operations


def _set_size(name: str, size: int | None, count: Callable[..., int], *operands: Any) -> int:
    if size is None:
        size = _size_from_data(name, count, *operands)
    return _size_arg(name, size)


@_entry
def union1d(ar1: Tensor[DT, Unpack[tuple[Any, ...]]], ar2: Tensor[DT, Unpack[tuple[Any, ...]]], *,
            size: int | None = None, fill_value: Any = None) -> Tensor[DT, Any]:
    """The sorted unique elements of both (flattened) arrays (``size``/``fill_value`` as ``unique``)."""
    n = _set_size("union1d", size, lambda a, b: int(np.union1d(a, b).size), ar1, ar2)
    return _union1d(ar1, ar2, n, fill_value)


@op
def _union1d(ar1: AnyTensor, ar2: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    dtype = result_dtype("union1d", (ar1, ar2))
    both = SL.concatenate([_flat(atom(ar1, dtype)), _flat(atom(ar2, dtype))], 0)
    return _unique(wrap(both), False, False, False, None, True, size, fill_value)[0]


@_entry
def intersect1d(ar1: Tensor[DT, Unpack[tuple[Any, ...]]], ar2: Tensor[DT, Unpack[tuple[Any, ...]]],
                assume_unique: bool = False, return_indices: Literal[False] = False, *, size: int | None = None,
                fill_value: Any = None) -> Tensor[DT, Any]:
    """The sorted unique elements in both arrays (``size``/``fill_value`` as ``unique``; no ``return_indices``)."""
    if return_indices:
        raise NotImplementedError("intersect1d: return_indices=True is not supported")
    n = _set_size("intersect1d", size, lambda a, b: int(np.intersect1d(a, b).size), ar1, ar2)
    return _kept_unique(ar1, ar2, False, n, fill_value)


@_entry
def setdiff1d(ar1: Tensor[DT, Unpack[tuple[Any, ...]]], ar2: Tensor[DT, Unpack[tuple[Any, ...]]],
              assume_unique: bool = False, *, size: int | None = None, fill_value: Any = None) -> Tensor[DT, Any]:
    """The sorted unique elements of ``ar1`` not in ``ar2`` (``size``/``fill_value`` as ``unique``). With
    ``assume_unique``, the elements of ``ar1`` not in ``ar2`` in ``ar1``'s order, as NumPy's and JAX's (the
    default fill is then the first result)."""
    n = _set_size("setdiff1d", size, lambda a, b: int(np.setdiff1d(a, b, assume_unique).size), ar1, ar2)
    if assume_unique:
        return _absent_in_order(ar1, ar2, n, fill_value)
    return _kept_unique(ar1, ar2, True, n, fill_value)


@op
def _absent_in_order(ar1: AnyTensor, ar2: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    dtype = result_dtype("setdiff1d", (ar1, ar2))
    a, b = _flat(atom(ar1, dtype)), _flat(atom(ar2, dtype))
    if a.aval.shape[0] == 0 or size == 0:
        fill = 0 if fill_value is None else fill_value
        return wrap(S.broadcast_to(_fill_atom(fill, a), Aval((size,), dtype, (None,))))
    positions, valid = _compact("setdiff1d", _isin_atoms(a, b, True), size)
    kept = _gather("setdiff1d", a, positions)
    fill = wrap(S.reshape(SL.slice_in_dim(kept, 0, 1, 0), (), ())) if fill_value is None else fill_value
    return wrap(_padded(valid, kept, fill))


@op
def _kept_unique(ar1: AnyTensor, ar2: AnyTensor, invert: bool, size: int, fill_value: Any) -> AnyTensor:
    name = "setdiff1d" if invert else "intersect1d"
    dtype = result_dtype(name, (ar1, ar2))
    a, b = _flat(atom(ar1, dtype)), _flat(atom(ar2, dtype))
    n = a.aval.shape[0]
    if n == 0:
        fill = 0 if fill_value is None else fill_value
        return wrap(S.broadcast_to(_fill_atom(fill, a), Aval((size,), dtype, (None,))))
    srt, _, first, _ = _sorted_groups(a, False)
    # NaN is in no set (NaN != NaN), as NumPy's intersect1d; setdiff1d keeps each NaN
    keep = bind(E.and_p, first, _isin_atoms(srt, b, invert))
    positions, valid = _compact(name, keep, size)
    kept = _gather(name, srt, positions)
    if size == 0:
        return wrap(kept)
    # default fill: the smallest result (as unique's), srt[0] when there is none
    fill = wrap(S.reshape(SL.slice_in_dim(kept, 0, 1, 0), (), ())) if fill_value is None else fill_value
    return wrap(_padded(valid, kept, fill))


@_entry
def setxor1d(ar1: Tensor[DT, Unpack[tuple[Any, ...]]], ar2: Tensor[DT, Unpack[tuple[Any, ...]]],
             assume_unique: bool = False, *, size: int | None = None, fill_value: Any = None) -> Tensor[DT, Any]:
    """The sorted unique elements in exactly one of the (flattened) arrays (``size``/``fill_value`` as
    ``unique``). Each array's NaNs count as one element, found in neither array (as NumPy: a NaN in both arrays
    appears twice). ``assume_unique`` is accepted and ignored (the result is the same for unique inputs)."""
    n = _set_size("setxor1d", size, lambda a, b: int(np.setxor1d(a, b).size), ar1, ar2)
    return _setxor1d(ar1, ar2, n, fill_value)


def _only_in(a: Atom, b: Atom) -> tuple[Atom, Atom]:
    """``a``'s elements sorted, and a mask of the first of each group of equal ones (NaNs one group) that is
    not in ``b``."""
    srt, _, first, _ = _sorted_groups(a, True)
    return srt, bind(E.and_p, first, _isin_atoms(srt, b, True))


@op
def _setxor1d(ar1: AnyTensor, ar2: AnyTensor, size: int, fill_value: Any) -> AnyTensor:
    dtype = result_dtype("setxor1d", (ar1, ar2))
    a, b = _flat(atom(ar1, dtype)), _flat(atom(ar2, dtype))
    if a.aval.size + b.aval.size == 0:
        fill = 0 if fill_value is None else fill_value
        return wrap(S.broadcast_to(_fill_atom(fill, a), Aval((size,), dtype, (None,))))
    pieces = [_only_in(x, y) for x, y in ((a, b), (b, a)) if x.aval.size]
    values = SL.concatenate([v for v, _ in pieces], 0) if len(pieces) > 1 else pieces[0][0]
    keep = SL.concatenate([k for _, k in pieces], 0) if len(pieces) > 1 else pieces[0][1]
    values, keep = T.sort([values, keep], 0)
    positions, valid = _compact("setxor1d", keep, size)
    kept = _gather("setxor1d", values, positions)
    if size == 0:
        return wrap(kept)
    # default fill: the smallest result (as unique's), the smallest element when there is none
    fill = wrap(S.reshape(SL.slice_in_dim(kept, 0, 1, 0), (), ())) if fill_value is None else fill_value
    return wrap(_padded(valid, kept, fill))


# ---------------------------------------------------------------------------------------------------- isin


def _isin_atoms(x: Atom, test: Atom, invert: bool) -> Atom:
    m = test.aval.size
    flat_test = _flat(test)
    if m == 0:
        found = S.full_like(x.aval.with_dtype(_dt.BOOL), False)
    elif m <= 32 or x.aval.size * m <= 1 << 16:  # small: one broadcast comparison and an any
        shape = (*x.aval.shape, m)
        wide = S.broadcast_in_dim(x, shape, tuple(range(x.aval.ndim)), (*x.aval.dims, None))
        tests = S.broadcast_in_dim(flat_test, shape, (x.aval.ndim,), (*x.aval.dims, None))
        hits = _i32(E.eq(wide, tests))
        found = bind(E.ne_p, R.reduce_max(hits, (x.aval.ndim,)), literal(0, INDEX))
    else:  # large: binary search in the sorted test elements
        srt = T.sort([flat_test], 0)[0]
        pos = as_tensor(searchsorted(wrap(srt), wrap(x))).atom
        probe = index_atom("isin", srt, (wrap(E.minimum(pos, E.scalar(m - 1, pos))),))
        found = E.eq(probe, x)
    return bind(E.not_p, found) if invert else found


@op
def isin(element: Tensor[Any, Unpack[Sh]], test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, kind: str | None = None) -> Tensor[bool_, Unpack[Sh]]:
    """Whether each element of ``element`` is in ``test_elements`` (a bool array of ``element``'s shape; NaN is
    in nothing). ``assume_unique`` and ``kind`` are accepted and ignored."""
    if isinstance(test_elements, (list, tuple)):
        test_elements = np.asarray(test_elements, dtype=as_tensor(element).aval.dtype)
    dtype = result_dtype("isin", (element, test_elements))
    return wrap(_isin_atoms(atom(element, dtype), atom(test_elements, dtype), invert))


# ----------------------------------------------------------------------------------------------- bincount


@overload
def bincount(x: Tensor[Any, Any], weights: None = None, minlength: int = 0, *,
             length: int | None = None) -> Tensor[i32, Any]: ...
@overload
def bincount(x: Tensor[Any, Any], weights: Tensor[DT, Any], minlength: int = 0, *,
             length: int | None = None) -> Tensor[DT, Any]: ...
@_entry
def bincount(x: Tensor[Any, Any], weights: Tensor[Any, Any] | None = None, minlength: int = 0, *,
             length: int | None = None) -> Tensor[Any, Any]:
    """Counts (i32; with ``weights``, sums of the weights in their dtype) of each value ``0 .. length - 1`` in
    the 1-D integer ``x``. ``length`` (static) fixes the result's length and is required while staging; eagerly it
    defaults to ``max(x.max() + 1, minlength)``. Staged, values that are negative or ``>= length`` cannot be
    checked and are dropped (NumPy raises for negatives; JAX clips them to 0)."""
    if minlength is None:
        minlength = 0
    minlength = _size_arg("bincount", minlength, "minlength")
    if length is None:
        def count(h: np.ndarray[Any, Any], *_: Any) -> int:
            if h.dtype.kind not in "iub":
                raise dtype_error("bincount", f"x must be integers, got {describe(x)}")
            if h.size and (h < 0).any():
                raise ValueError(f"x has negative values (e.g. {h[h < 0].flat[0]}): bincount counts 0, 1, 2, ...")
            return max(minlength, int(h.max()) + 1 if h.size else 0)
        length = _size_from_data("bincount", count, x, what="length")
    return _bincount(x, weights, _size_arg("bincount", length, "length"))


@op
def _bincount(x: AnyTensor, weights: Any, length: int) -> AnyTensor:
    t = as_tensor(x)
    dtype = t.aval.dtype
    if not (_dt.is_integer(dtype) or dtype == _dt.BOOL):
        raise dtype_error("bincount", f"x must be integers, got {describe(t)}; convert it with .astype(i32)")
    if t.aval.ndim != 1:
        raise shape_error("bincount", f"x must be 1-D, got {describe(t)}")
    idx = t.atom
    if dtype.itemsize < 4 or dtype == _dt.BOOL:
        idx = E.convert(idx, INDEX)
    out_of_range = bind(E.ge_p, idx, E.scalar(length, idx)) if length < np.iinfo(idx.aval.dtype).max else None
    if _dt.is_signed(idx.aval.dtype):
        negative = E.lt(idx, E.scalar(0, idx))
        out_of_range = negative if out_of_range is None else bind(E.or_p, out_of_range, negative)
    if out_of_range is not None:  # dropped: an index past the end (a negative one would count from the end)
        idx = E.select(out_of_range, E.scalar(length, idx), idx)
    idx = _i32(idx)
    if weights is None:
        w = S.full_like(Aval(t.aval.shape, INDEX, (None,)), 1)
    else:
        w = as_tensor(weights).atom
        if w.aval.shape != t.aval.shape:
            raise shape_error("bincount", f"weights {describe(weights)} must have the shape of x {describe(t)}")
        w = S.reshape(w, w.aval.shape, (None,))
    return wrap(_scatter("bincount", _full(length, 0, w), idx, w, "add"))


# ---------------------------------------------------------------------------------------------- histogram


def _edge_dtype(a: Any) -> np.dtype[Any]:
    dtype = as_tensor(a).aval.dtype if isinstance(a, Tensor) else as_host_array(a).dtype
    return dtype if _dt.is_float(dtype) else _dt.DEFAULT_FLOAT


def _static_edges(name: str, bins: int, lo: float, hi: float, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name}: the range [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"{name}: max must be larger than min in range, got ({lo}, {hi})")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1, endpoint=True, dtype=dtype)


def _resolve_bins(name: str, a: Any, bins: Any, range: Any) -> Any:
    """Static edges (a NumPy array), staged edges (a tensor), or ``("auto", bins)`` for edges from the staged
    data's min and max."""
    if isinstance(bins, str):
        raise ValueError(f"{name}: bin estimators such as {bins!r} are not supported; pass a number of bins or edges")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        n = int(bins)
        if n < 1:
            raise ValueError(f"{name}: bins must be a positive integer, got {n}")
        dtype = _edge_dtype(a)
        if range is not None:
            lo, hi = (float(v) for v in range)
            return _static_edges(name, n, lo, hi, dtype)
        if is_staging():
            return ("auto", n)
        h = as_host_array(a)
        if h.size == 0:
            return _static_edges(name, n, 0.0, 1.0, dtype)
        return _static_edges(name, n, float(h.min()), float(h.max()), dtype)
    if isinstance(bins, Tensor):
        return bins
    edges = np.asarray(bins)
    if edges.ndim != 1 or edges.size < 1:
        raise ValueError(f"{name}: bins must be an int or a 1-D sequence of edges, got {bins!r:.60}")
    if (np.diff(edges) < 0).any():
        raise ValueError(f"{name}: bins must increase monotonically")
    if isinstance(bins, (list, tuple)) or edges.dtype.kind != "f":  # Python numbers take the data's float dtype
        return edges.astype(_edge_dtype(a))
    return edges


def _edges_atom(name: str, x: Atom, spec: Any) -> Atom:
    if isinstance(spec, tuple):
        n = spec[1]
        if x.aval.size == 0:
            return literal(_static_edges(name, n, 0.0, 1.0, x.aval.dtype), x.aval.dtype)
        flat = _flat(x)
        # NumPy's linspace (i * step + lo), in f64 and then rounded as NumPy's: in f32 the compiler's
        # reciprocal-multiply and fma put a quarter of the edges an ulp off, and data on them in the next bin
        dtype = x.aval.dtype
        wide = np.dtype(np.float64)

        def widened(v: Atom) -> Atom:
            return v if dtype == wide else E.convert(v, wide)

        lo, hi = widened(R.reduce_min(flat, (0,))), widened(R.reduce_max(flat, (0,)))
        step = E.div(E.sub(hi, lo), E.scalar(float(n), lo))
        edges = E.add(E.mul(E.convert(_iota(n + 1), wide), step), lo)
        # all data equal to v: the range is v -+ 0.5, and v itself an edge (for even n) exactly, as in NumPy
        same = E.eq(lo, hi)
        centred = E.add(literal(np.arange(n + 1) / n - 0.5, wide), S.broadcast_to(lo, edges.aval))
        edges = E.select(S.broadcast_to(same, edges.aval.with_dtype(_dt.BOOL)), centred, edges)
        hi = E.select(same, E.add(hi, E.scalar(0.5, hi)), hi)
        if dtype != wide:
            edges, hi = E.convert(edges, dtype), E.convert(hi, dtype)
        last = E.eq(_iota(n + 1), literal(n, INDEX))
        return E.select(last, S.broadcast_to(hi, edges.aval), edges)  # the last edge exactly ``hi``, as linspace
    e = atom(spec, x.aval.dtype) if not isinstance(spec, Tensor) else as_tensor(spec).atom
    if e.aval.dtype != x.aval.dtype:
        raise dtype_error(name, f"bin edges {describe(spec)} and data of dtype {_dt.short_name(x.aval.dtype)} differ; "
                          "convert one with .astype(...)")
    if e.aval.ndim != 1 or e.aval.shape[0] < 1:
        raise shape_error(name, f"bin edges must be 1-D and non-empty, got {describe(spec)}")
    return S.reshape(e, e.aval.shape, (None,))


def _data(name: str, a: Any, spec: Any = None) -> Atom:
    """``a`` as floats: integers take the dtype of explicit float edges, else the default float."""
    x = as_tensor(a).atom
    if not _dt.is_float(x.aval.dtype):
        given = spec.dtype if isinstance(spec, np.ndarray) else (
            as_tensor(spec).aval.dtype if isinstance(spec, Tensor) else None)
        x = E.convert(x, given if given is not None and _dt.is_float(given) else _dt.DEFAULT_FLOAT)
    return x


def _bin_index(name: str, flat: Atom, edges: Atom) -> Atom:
    """The i32 bin of each element of the 1-D ``flat``: half-open bins but the last, which includes its right
    edge; elements outside the edges (or NaN) get the number of bins (past the end)."""
    nb = edges.aval.shape[0] - 1
    if nb < 1:
        raise shape_error(name, "bins needs at least two edges")
    pos = as_tensor(searchsorted(wrap(edges), wrap(flat), side="right")).atom
    last_edge = S.reshape(SL.slice_in_dim(edges, nb, nb + 1, 0), (), ())
    on_last = E.eq(flat, S.broadcast_to(last_edge, flat.aval))
    pos = E.select(on_last, E.scalar(nb, pos), pos)  # the last bin includes its right edge
    below = E.lt(pos, E.scalar(1, pos))
    return E.select(below, E.scalar(nb, pos), E.sub(pos, E.scalar(1, pos)))


@op
def _histogram(a: AnyTensor, spec: Any, weights: Any, density: bool) -> tuple[AnyTensor, AnyTensor]:
    x = _data("histogram", a, spec)
    edges = _edges_atom("histogram", x, spec)
    nb = edges.aval.shape[0] - 1
    flat = _flat(x)
    index = _bin_index("histogram", flat, edges)
    if weights is None:
        w = S.full_like(flat.aval.with_dtype(INDEX), 1)
    else:
        wt = as_tensor(weights)
        if wt.aval.shape != as_tensor(a).aval.shape:
            raise shape_error("histogram", f"weights {describe(wt)} must have the shape of a {describe(a)}")
        w = _flat(wt.atom)
    hist = _scatter("histogram", _full(nb, 0, w), index, w, "add")
    if density:
        h = hist if _dt.is_float(hist.aval.dtype) else E.convert(hist, edges.aval.dtype)
        widths = E.sub(SL.slice_in_dim(edges, 1, nb + 1, 0), SL.slice_in_dim(edges, 0, nb, 0))
        total = S.broadcast_to(R.reduce_sum(h, (0,)), h.aval)
        hist = E.div(E.div(h, widths), total)
    return wrap(hist), wrap(edges)


@_entry
def histogram(a: AnyTensor, bins: Any = 10, range: tuple[float, float] | None = None, weights: Any = None,
              density: bool = False) -> tuple[AnyTensor, AnyTensor]:
    """``(hist, bin_edges)``: ``bins`` equal-width bins over ``range`` (static floats) or a 1-D sequence of
    edges; every bin is half-open but the last, which includes its right edge. Counts are i32 (weights: their
    dtype); edges take ``a``'s float dtype (f32 for integer data; NumPy uses float64). Without ``range`` the data's
    min and max are read: on the host in eager calls, as staged reductions while staging (where a NaN in the data
    then gives NaN edges and empty bins instead of NumPy's error)."""
    return _histogram(a, _resolve_bins("histogram", a, bins, range), weights, bool(density))


@op
def _bin_edges(a: AnyTensor, spec: Any) -> AnyTensor:
    return wrap(_edges_atom("histogram_bin_edges", _data("histogram_bin_edges", a, spec), spec))


@_entry
def histogram_bin_edges(a: AnyTensor, bins: Any = 10, range: tuple[float, float] | None = None,
                        weights: Any = None) -> AnyTensor:
    """The bin edges ``histogram`` would use (``weights`` is accepted and ignored, as in NumPy)."""
    return _bin_edges(a, _resolve_bins("histogram_bin_edges", a, bins, range))


# ------------------------------------------------------------------------------------- histogram2d, histogramdd


def _per_dimension(name: str, value: Any, d: int, what: str) -> list[Any]:
    """``bins`` or ``range`` of ``histogramdd``: one entry per dimension (a scalar ``bins`` or a None ``range``
    serves them all)."""
    if value is None or isinstance(value, (int, float, str, np.generic)):
        return [value] * d
    if isinstance(value, Tensor):
        raise TypeError(f"{name}: {what} must be an int or a sequence of {d} bin counts or edge arrays, got a tensor "
                        f"{describe(value)}")
    items = list(value)
    if len(items) != d:
        raise ValueError(f"{name}: {what} has {len(items)} entries for a sample of {d} dimensions")
    return items


def _columns(name: str, sample: Any) -> list[Any]:
    """The ``D`` coordinate arrays of a sample: a ``(N, D)`` array's columns (a 1-D array is ``(N, 1)``), or a
    sequence of ``D`` arrays (NumPy's ``histogramdd((x, y))``)."""
    if isinstance(sample, (list, tuple)):
        return list(sample)
    t = as_tensor(sample)
    if t.aval.ndim == 1:
        return [t]
    if t.aval.ndim != 2:
        raise shape_error(name, f"sample must be a (N, D) array or a sequence of D 1-D arrays, got {describe(t)}")
    return [wrap(S.reshape(SL.slice_in_dim(t.atom, i, i + 1, 1), (t.aval.shape[0],), (t.aval.dims[0],)))
            for i in range(t.aval.shape[1])]


def _host_columns(name: str, sample: Any) -> list[Any]:
    """Eagerly, the coordinate arrays on the host (to find default ranges); staged, the staged ones."""
    if is_staging():
        return _columns(name, sample)
    if isinstance(sample, (list, tuple)):
        return [as_host_array(c) for c in sample]
    h = as_host_array(sample)
    return [h] if h.ndim == 1 else list(h.T) if h.ndim == 2 else _columns(name, sample)


def _check_bins(name: str, bins: Any, i: int) -> None:
    """NumPy's rule for a scalar entry of histogramdd's ``bins``: an integer."""
    if isinstance(bins, (float, np.floating)) or (isinstance(bins, np.ndarray) and bins.ndim == 0
                                                   and bins.dtype.kind == "f"):
        raise TypeError(f"{name}: bins[{i}] must be an integer when a scalar, got {bins!r}")


@op
def _histogramdd(name: str, sample: Any, specs: list[Any], weights: Any,
                 density: bool) -> tuple[AnyTensor, list[AnyTensor]]:
    columns = _columns(name, sample)
    data = [_data(name, c, spec) for c, spec in zip(columns, specs)]
    n = data[0].aval.shape[0] if data[0].aval.ndim == 1 else -1
    if any(x.aval.ndim != 1 or x.aval.shape[0] != n for x in data):
        raise shape_error(name, f"the coordinates must be 1-D arrays of one length, got "
                          f"{', '.join(describe(c) for c in columns)}")
    edges = [_edges_atom(name, x, spec) for x, spec in zip(data, specs)]
    nbins = [e.aval.shape[0] - 1 for e in edges]
    # the row-major bin number; past the end (dropped) when outside in any dimension
    flat: Atom = literal(0, INDEX)
    outside: Atom = literal(False, _dt.BOOL)
    for x, e, nb in zip(data, edges, nbins):
        index = _bin_index(name, _flat(x), e)
        outside = bind(E.or_p, outside, E.eq(index, E.scalar(nb, index)))
        flat = E.add(E.mul(flat, E.scalar(nb, index)), index)
    total = int(np.prod(nbins))
    flat = E.select(outside, S.full_like(flat.aval, total), flat)
    if weights is None:
        w = S.full_like(Aval((n,), INDEX, (None,)), 1)
    else:
        w = as_tensor(weights).atom
        if w.aval.shape != (n,):
            raise shape_error(name, f"weights {describe(weights)} must be 1-D with the sample's length {n}")
        w = _flat(w)
    hist = _scatter(name, _full(total, 0, w), flat, w, "add")
    hist = S.reshape(hist, tuple(nbins), (None,) * len(nbins))
    if density:  # NumPy's order: divide by each dimension's widths, then by the total
        h = hist if _dt.is_float(hist.aval.dtype) else E.convert(hist, edges[0].aval.dtype)
        total_count = R.reduce_sum(h, tuple(range(len(nbins))))
        for axis, (e, nb) in enumerate(zip(edges, nbins)):
            widths = E.sub(SL.slice_in_dim(e, 1, nb + 1, 0), SL.slice_in_dim(e, 0, nb, 0))
            h = E.div(h, S.broadcast_in_dim(widths, h.aval.shape, (axis,), h.aval.dims))
        hist = E.div(h, S.broadcast_to(total_count, h.aval))
    return wrap(hist), [wrap(e) for e in edges]


def _histogramdd_api(name: str, sample: Any, bins: Any, range: Any, density: Any,
                     weights: Any) -> tuple[AnyTensor, list[AnyTensor]]:
    columns = _host_columns(name, sample)
    d = len(columns)
    if d == 0:
        raise shape_error(name, "the sample has no dimensions")
    per_bins, per_range = _per_dimension(name, bins, d, "bins"), _per_dimension(name, range, d, "range")
    specs = []
    for i, (column, b, r) in enumerate(zip(columns, per_bins, per_range)):
        _check_bins(name, b, i)
        specs.append(_resolve_bins(name, column, b, r))
    return _histogramdd(name, sample, specs, weights, bool(density))


@_entry
def histogramdd(sample: Any, bins: Any = 10, range: Sequence[tuple[float, float] | None] | None = None,
                density: bool | None = None, weights: Any = None) -> tuple[AnyTensor, list[AnyTensor]]:
    """``(hist, edges)``: the D-dimensional histogram of a ``(N, D)`` sample (or a sequence of D coordinate
    arrays) and the list of each dimension's bin edges. ``bins``: an int for every dimension, or one entry per
    dimension (an int or a 1-D array of edges); ``range``: None, or one ``(min, max)`` or None per dimension; the
    bins, defaults and dtypes of each dimension as ``histogram``'s. Counts are i32 (NumPy: float64)."""
    return _histogramdd_api("histogramdd", sample, bins, range, density, weights)


def _length(bins: Any) -> int:
    if isinstance(bins, Tensor):
        return bins.aval.shape[0] if bins.aval.ndim else 1
    try:
        return len(bins)
    except TypeError:
        return 1


@_entry
def histogram2d(x: AnyTensor, y: AnyTensor, bins: Any = 10, range: Any = None, density: bool | None = None,
                weights: Any = None) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``(hist, xedges, yedges)``: the 2-D histogram of the points ``(x[i], y[i])`` (``hist[i, j]`` counts the
    points in x bin ``i`` and y bin ``j``). ``bins``: an int, ``[nx, ny]``, one array of edges for both, or
    ``[xedges, yedges]``; ``range``: ``[[xmin, xmax], [ymin, ymax]]`` or None (as ``histogramdd``)."""
    if _length(bins) not in (1, 2):
        bins = [bins, bins]  # one array of edges for both dimensions (NumPy's rule: any length but 1 and 2)
    hist, (xedges, yedges) = _histogramdd_api("histogram2d", (x, y), bins, range, density, weights)
    return hist, xedges, yedges


@_entry
def digitize(x: Tensor[Any, Unpack[Sh]], bins: Any, right: bool = False) -> Tensor[i32, Unpack[Sh]]:
    """The i32 index of the bin of each element of ``x`` for monotonic 1-D ``bins`` (NumPy's convention:
    ``bins[i-1] <= x < bins[i]``, or ``<= / <`` swapped with ``right``; decreasing bins count the other way).
    Host bins are checked to be monotonic, as NumPy does."""
    if isinstance(bins, np.ndarray):  # checked here: an eager op call stages a NumPy array as a runtime input
        _increasing_bins(bins)
    return _digitize(x, bins, right)


def _increasing_bins(static: np.ndarray[Any, Any]) -> bool:
    """Whether host ``bins`` increase (else they decrease); an error unless they are 1-D and monotonic."""
    if static.ndim != 1:
        raise shape_error("digitize", f"bins must be 1-D, got shape {static.shape}")
    # comparisons, not np.diff: a difference of unsigned bins wraps around
    increasing = bool((static[1:] >= static[:-1]).all())
    if not (increasing or (static[1:] <= static[:-1]).all()):
        raise ValueError("bins must be monotonically increasing or decreasing")
    return increasing


@op
def _digitize(x: Tensor[Any, Unpack[Sh]], bins: Any, right: bool) -> Tensor[i32, Unpack[Sh]]:
    static = None if isinstance(bins, Tensor) else np.asarray(bins)
    increasing = True
    if static is not None:
        increasing = _increasing_bins(static)
        if isinstance(bins, (list, tuple)):  # Python numbers: weakly typed, they take x's dtype
            dtype_x = as_tensor(x).aval.dtype
            if static.dtype.kind == "f" and static.size and not _dt.is_float(dtype_x):
                raise dtype_error("digitize", f"float bins {bins!r:.60} with {describe(x)}: convert one first")
            static = static.astype(dtype_x)
    b = bins if static is None else static
    dtype = result_dtype("digitize", (x, b))
    xs, bs = atom(x, dtype), atom(b, dtype)
    if bs.aval.ndim != 1:
        raise shape_error("digitize", f"bins must be 1-D, got {describe(bins)}")
    n = bs.aval.shape[0]
    up = as_tensor(searchsorted(wrap(bs), wrap(xs), side="left" if right else "right")).atom
    if n < 2 or (static is not None and increasing):
        return wrap(up)
    down = as_tensor(searchsorted(wrap(SL.rev(bs, (0,))), wrap(xs), side="left" if right else "right")).atom
    down = E.sub(E.scalar(n, down), down)
    if static is not None:
        return wrap(down)
    first = S.reshape(SL.slice_in_dim(bs, 0, 1, 0), (), ())
    last = S.reshape(SL.slice_in_dim(bs, n - 1, n, 0), (), ())
    increasing = bind(E.le_p, first, last)
    return wrap(E.select(S.broadcast_to(increasing, up.aval.with_dtype(_dt.BOOL)) if up.aval.ndim else increasing,
                         up, down))


# ------------------------------------------------------------------------------ select, choose, piecewise


@op
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> AnyTensor:
    """The element of the first choice whose condition holds, else ``default`` (all broadcast together; the
    conditions must be bool)."""
    conds, choices = list(condlist), list(choicelist)
    if len(conds) != len(choices):
        raise ValueError(f"select: condlist has {len(conds)} entries but choicelist has {len(choices)}")
    if not conds:
        raise ValueError("select with an empty condition list is not possible")
    dtype = result_dtype("select", (*choices, default))
    from ._core import broadcast_atoms

    cond_atoms = [as_tensor(c).atom for c in conds]
    for c, original in zip(cond_atoms, conds):
        if c.aval.dtype != _dt.BOOL:
            raise dtype_error("select", f"conditions must be bool, got {describe(original)}")
    operands = broadcast_atoms("select", [*cond_atoms, *(atom(c, dtype) for c in choices), atom(default, dtype)])
    shape_aval = next((o.aval for o in operands if o.aval.ndim), operands[0].aval)
    k = len(conds)
    out = operands[-1]
    if out.aval.ndim == 0 and shape_aval.ndim:
        out = S.broadcast_to(out, shape_aval.with_dtype(dtype))
    for c, v in reversed(list(zip(operands[:k], operands[k:2 * k]))):
        out = E.select(c, v, out)
    return wrap(out)


@op
def _choose(a: AnyTensor, choices: Sequence[Any], mode: str) -> AnyTensor:
    idx = as_tensor(a)
    if not _dt.is_integer(idx.aval.dtype):
        raise dtype_error("choose", f"a must be integers, got {describe(a)}")
    k = len(choices)
    if k == 0:
        raise ValueError("choose: choices must not be empty")
    i = _i32(idx.atom)
    if mode == "wrap":
        i = E.rem(E.add(E.rem(i, E.scalar(k, i)), E.scalar(k, i)), E.scalar(k, i))
    else:  # "clip", and "raise" once checked on the host (staged: clipped)
        i = E.clamp(E.scalar(0, i), i, E.scalar(k - 1, i))
    conds = [wrap(E.eq(i, E.scalar(j, i))) for j in range(k)]
    return select(conds[:-1], list(choices)[:-1], list(choices)[-1]) if k > 1 else (
        select(conds, list(choices), list(choices)[0]))


@_entry
def choose(a: AnyTensor, choices: Sequence[Any], out: None = None, mode: str = "raise") -> AnyTensor:
    """``choices[a[i]][i]`` for every position (all broadcast together). ``mode="raise"`` checks the indices in
    eager calls; staged, out-of-range indices are clipped (as ``mode="clip"``)."""
    if out is not None:
        raise TypeError("choose: out= is not supported (arrays are immutable)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if mode == "raise" and not is_staging():
        h = as_host_array(a)
        if h.size and h.dtype.kind in "iu" and ((h < 0) | (h >= len(choices))).any():
            raise ValueError(f"choose: invalid entry in the choice array (an index outside 0..{len(choices) - 1})")
    return _choose(a, list(choices), mode)


@_entry
def piecewise(x: Tensor[DT, Unpack[Sh]], condlist: Any, funclist: Sequence[Any], *args: Any,
              **kw: Any) -> Tensor[DT, Unpack[Sh]]:
    """Piecewise-defined ``x``: where ``condlist[i]`` holds, ``funclist[i](x, *args, **kw)`` (or the constant);
    one extra function applies where no condition holds, and later conditions win (as NumPy). Unlike NumPy,
    every function is evaluated on all of ``x`` and the results selected."""
    from .ufuncs import where as _where3

    single = isinstance(condlist, (Tensor, np.ndarray)) and len(condlist.shape) == len(np.shape(cast(Any, x)))
    conds: list[Any] = [condlist] if single else list(condlist)
    funcs = list(funclist)
    if len(funcs) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: with {len(conds)} conditions, funclist must have {len(conds)} or "
                         f"{len(conds) + 1} entries, got {len(funcs)}")
    from .ufuncs import logical_not, logical_or

    if len(funcs) == len(conds) + 1:
        anything: Any = conds[0] if conds else None
        for c in conds[1:]:
            anything = logical_or(anything, c)
        otherwise = logical_not(anything) if anything is not None else np.ones(np.shape(x), bool)
        conds.append(otherwise)
    out: Any = x * 0 if isinstance(x, Tensor) else np.zeros_like(np.asarray(x))
    for c, f in zip(conds, funcs):
        value = f(x, *args, **kw) if callable(f) else f
        out = _where3(c, value, out)
    return out  # type: ignore[no-any-return]
