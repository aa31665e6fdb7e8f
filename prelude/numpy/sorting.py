"""Sorting, searching and order statistics with NumPy's names, on the stable key-value ``sort`` primitive.

Every sort is stable (``kind`` is accepted and ignored) and orders NaNs last, as NumPy does; ``-0.0`` and ``0.0``
compare equal and keep their input order. Gradients flow through the sort primitive's rules, so ``sort``,
``median`` and ``quantile`` are differentiable (the derivative of an order statistic is the derivative of the
element it picks).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...array import as_host_array
from ...dims import Dim
from ...dtypes import DType, Floating, i32
from ...shape_typing import as_reduction
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, Aval, DimName
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import sorting as T
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import _named, as_tensor, atom, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from .indexing import index_atom

__all__ = [
    "argpartition", "argsort", "lexsort", "median", "nanmedian", "nanpercentile", "nanquantile", "partition",
    "percentile", "quantile", "searchsorted", "sort",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
AnyShape = tuple[Any, ...]
DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Sh = TypeVarTuple("Sh")
N = TypeVar("N")
AxisArg = int | type[Dim]
Axes = int | type[Dim] | Sequence[int | type[Dim]] | None
QuantileMethod = Literal[
    "linear", "lower", "higher", "nearest", "midpoint", "interpolated_inverted_cdf", "hazen", "weibull",
    "median_unbiased", "normal_unbiased", "inverted_cdf", "averaged_inverted_cdf", "closest_observation",
]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


# ----------------------------------------------------------------------------------------------- atom helpers


def _isnan(x: Atom) -> Atom:
    return bind(E.ne_p, x, x)  # type: ignore[no-any-return]


def _and(x: Atom, y: Atom) -> Atom:
    return bind(E.and_p, x, y)  # type: ignore[no-any-return]


def _or(x: Atom, y: Atom) -> Atom:
    return bind(E.or_p, x, y)  # type: ignore[no-any-return]


def _not(x: Atom) -> Atom:
    return bind(E.not_p, x)  # type: ignore[no-any-return]


def _before(x: Atom, y: Atom) -> Atom:
    """``x`` sorts strictly before ``y`` in NumPy's order (NaNs after everything, equal to each other)."""
    less = E.lt(x, y)
    if not _dt.is_float(x.aval.dtype):
        return less
    return _or(less, _and(_isnan(y), _not(_isnan(x))))


def _one_axis(name: str, axis: Any, t: Traced[Any]) -> int:
    if isinstance(axis, (tuple, list)):
        raise shape_error(name, f"{name} takes one axis (an int or a Dim), got {axis!r}")
    return normalize_axes(name, axis, t, allow_none=False)[0]


def _flat(t: Traced[Any]) -> Traced[Any]:
    return wrap(S.reshape(t.atom, (t.aval.size,), (None,)))


def _check_sort_args(name: str, kind: Any, order: Any) -> None:
    if order is not None:
        raise TypeError(f"{name}: order= sorts structured arrays by field name; tensorstage has no structured dtypes")
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {', '.join(map(repr, _KINDS))}, got {kind!r}")


def _sorted_with(x: Atom, riders: Sequence[Atom], axis: int, descending: bool) -> tuple[Atom, ...]:
    """``x`` and ``riders`` sorted along ``axis`` by ``x`` (stable both ways: reversing, sorting ascending and
    reversing back keeps equal keys in input order, and puts NaNs first when descending)."""
    if x.aval.shape[axis] <= 1:
        return (x, *riders)
    if not descending:
        return T.sort([x, *riders], axis)
    flipped = [SL.rev(a, (axis,)) for a in (x, *riders)]
    return tuple(SL.rev(a, (axis,)) for a in T.sort(flipped, axis))


def _positions(aval: Aval, axis: int) -> Atom:
    return T.positions(aval, axis)


# ------------------------------------------------------------------------------------------------ sort, argsort


@overload
def sort(
    a: Tensor[DT, Unpack[Sh]], axis: AxisArg = -1, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def sort(
    a: Tensor[DT, Unpack[Sh]], axis: None, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> Tensor[DT, Any]: ...
@op
def sort(
    a: AnyTensor, axis: AxisArg | None = -1, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> AnyTensor:
    """Sorted copy along ``axis`` (the flattened array when None); always stable, NaNs last. ``descending=True``
    (as in the array API and JAX) keeps equal elements in input order and puts NaNs first."""
    _check_sort_args("sort", kind, order)
    t = as_tensor(a)
    if axis is None:
        t, ax = _flat(t), 0
    else:
        ax = _one_axis("sort", axis, t)
    return wrap(_sorted_with(t.atom, (), ax, descending)[0])


@overload
def argsort(
    a: Tensor[Any, Unpack[Sh]], axis: AxisArg = -1, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def argsort(
    a: Tensor[Any, Unpack[Sh]], axis: None, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> Tensor[i32, Any]: ...
@op
def argsort(
    a: AnyTensor, axis: AxisArg | None = -1, kind: str | None = None, order: None = None, *,
    stable: bool | None = None, descending: bool = False,
) -> AnyTensor:
    """i32 indices that sort ``a`` along ``axis`` (stable: equal elements keep their order, also when
    descending)."""
    _check_sort_args("argsort", kind, order)
    t = as_tensor(a)
    if axis is None:
        t, ax = _flat(t), 0
    else:
        ax = _one_axis("argsort", axis, t)
    x = t.atom
    index = _positions(x.aval, ax)
    if x.aval.shape[ax] <= 1:
        return wrap(index)
    if not descending:
        return wrap(T.sort([x, index], ax)[1])
    # Sorting the reversed input ascending and reversing back is stable descending; positions count from the end.
    order_ = T.sort([SL.rev(x, (ax,)), index], ax)[1]
    last = E.scalar(x.aval.shape[ax] - 1, order_)
    return wrap(SL.rev(E.sub(last, order_), (ax,)))


@overload
def partition(
    a: Tensor[DT, Unpack[Sh]], kth: int | Sequence[int], axis: AxisArg = -1, kind: str = "introselect",
    order: None = None,
) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def partition(
    a: Tensor[DT, Unpack[Sh]], kth: int | Sequence[int], axis: None, kind: str = "introselect", order: None = None
) -> Tensor[DT, Any]: ...
@op
def partition(
    a: AnyTensor, kth: int | Sequence[int], axis: AxisArg | None = -1, kind: str = "introselect",
    order: None = None,
) -> AnyTensor:
    """NumPy's partition contract, met by a full sort (every element is in its sorted place, not just ``kth``)."""
    t = _check_kth("partition", a, kth, axis, order)
    return sort(t, axis)


@overload
def argpartition(
    a: Tensor[Any, Unpack[Sh]], kth: int | Sequence[int], axis: AxisArg = -1, kind: str = "introselect",
    order: None = None,
) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def argpartition(
    a: Tensor[Any, Unpack[Sh]], kth: int | Sequence[int], axis: None, kind: str = "introselect",
    order: None = None,
) -> Tensor[i32, Any]: ...
@op
def argpartition(
    a: AnyTensor, kth: int | Sequence[int], axis: AxisArg | None = -1, kind: str = "introselect",
    order: None = None,
) -> AnyTensor:
    """Indices that partition ``a`` (a full stable argsort, which meets NumPy's contract)."""
    t = _check_kth("argpartition", a, kth, axis, order)
    return argsort(t, axis)


def _check_kth(name: str, a: Any, kth: int | Sequence[int], axis: Any, order: Any) -> Traced[Any]:
    _check_sort_args(name, None, order)
    t = as_tensor(a)
    n = t.aval.size if axis is None else t.aval.shape[_one_axis(name, axis, t)]
    items: Any = kth
    for k in tuple(items) if isinstance(items, (list, tuple)) or np.ndim(items) > 0 else (items,):
        try:
            index = operator.index(k)
        except TypeError:
            hint = " (a tensor's value is not known while staging: pass Python ints)" if isinstance(k, Tensor) else ""
            raise TypeError(f"{name}: kth must be an integer or a sequence of integers, got {k!r:.60}{hint}") from None
        if not -n <= index < n:
            raise shape_error(name, f"kth {k} is out of bounds for an axis of size {n} of {describe(t)}")
    return t


@op
def lexsort(keys: Sequence[AnyTensor], axis: int = -1) -> Tensor[i32, Unpack[AnyShape]]:
    """Indices that sort by several keys along ``axis``: the LAST key is the primary one (as NumPy)."""
    if isinstance(keys, Tensor):
        stacked = as_tensor(keys)
        if stacked.aval.ndim < 2:
            raise shape_error("lexsort", f"a tensor of keys needs rank >= 2 (one key per row), got {describe(keys)}")
        items = [wrap(SL.slice_in_dim(stacked.atom, i, i + 1, 0)) for i in range(stacked.aval.shape[0])]
        items = [wrap(S.reshape(k.atom, k.aval.shape[1:], k.aval.dims[1:])) for k in items]
    else:
        items = [as_tensor(k) for k in keys]
    if not items:
        raise shape_error("lexsort", "needs at least one key")
    first = items[0]
    if any(k.aval.shape != first.aval.shape for k in items):
        raise shape_error("lexsort", f"keys must have one shape, got {', '.join(describe(k) for k in items)}")
    ax = _one_axis("lexsort", axis, first)
    perm = _positions(first.atom.aval, ax)
    if first.aval.shape[ax] <= 1:
        return wrap(perm)
    # Stable sorts from the least significant key to the most: each keeps the order the earlier ones made.
    for k in items:
        key = k.atom if k.atom.aval.dims == perm.aval.dims else S.reshape(k.atom, perm.aval.shape, perm.aval.dims)
        reordered = _gather_along(key, perm, ax)
        perm = T.sort([reordered, perm], ax)[1]
    return wrap(perm)


def _gather_along(x: Atom, index: Atom, axis: int) -> Atom:
    """``take_along_axis(x, index, axis)`` for an ``index`` of ``x``'s shape."""
    parts: list[Any] = []
    for k, n in enumerate(x.aval.shape):
        if k == axis:
            parts.append(wrap(index))
        else:
            shape = [1] * x.aval.ndim
            shape[k] = n
            parts.append(np.arange(n, dtype=np.int32).reshape(shape))
    return SL.renamed(index_atom("lexsort", x, tuple(parts)), x.aval)


# ----------------------------------------------------------------------------------------------- searchsorted


@overload
def searchsorted(
    a: Tensor[DT, N], v: Tensor[DT, Unpack[Sh]], side: Literal["left", "right"] = "left", sorter: Any = None
) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def searchsorted(
    a: Tensor[DT, N], v: int | float | bool, side: Literal["left", "right"] = "left", sorter: Any = None
) -> Tensor[i32]: ...
def searchsorted(
    a: AnyTensor, v: AnyTensor | int | float | bool, side: Literal["left", "right"] = "left", sorter: Any = None
) -> AnyTensor:
    """Where ``v`` would be inserted into the sorted 1-D ``a`` to keep it sorted (i32, ``v``'s shape), NaNs
    ordered last as by ``sort``. A binary search of ``ceil(log2(len(a) + 1))`` gathers. A ``sorter`` known on the
    host is checked as NumPy does; a staged one is not (an out-of-range entry reads the nearest end)."""
    if sorter is not None and not isinstance(sorter, Tensor):
        try:
            _check_host_sorter(as_host_array(sorter), np.shape(a))
        except (TypeError, ValueError) as exc:
            raise _named(exc, "searchsorted") from exc
    return _searchsorted(a, v, side, sorter)


def _check_host_sorter(sorter: np.ndarray[Any, Any], shape: tuple[int, ...]) -> None:
    """NumPy's checks of a ``sorter``: integers in ``[0, len(a))`` (a gather would clamp a bad one silently)."""
    if sorter.dtype.kind not in "iu":
        raise TypeError(f"searchsorted: sorter must hold integers, got {sorter.dtype}")
    if len(shape) != 1:
        return  # the op says that ``a`` must be 1-D
    n = shape[0]
    if sorter.size and (sorter.min() < 0 or sorter.max() >= n):
        raise ValueError(f"searchsorted: sorter index out of range: sorter holds {sorter.min()}..{sorter.max()} "
                         f"for an array of length {n}")


@op
def _searchsorted(a: AnyTensor, v: AnyTensor | int | float | bool, side: str, sorter: Any) -> AnyTensor:
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    keys = as_tensor(a)
    if isinstance(v, (list, tuple)):  # Python numbers: weakly typed, like a scalar v
        host = np.asarray(v)
        if host.dtype.kind == "f" and not _dt.is_float(keys.aval.dtype):
            raise dtype_error("searchsorted", f"float values {v!r:.60} with {describe(keys)}: convert one first")
        v = host.astype(keys.aval.dtype)
    dtype = result_dtype("searchsorted", (keys, v))
    if keys.aval.ndim != 1:
        raise shape_error("searchsorted", f"the sorted array must be 1-D, got {describe(keys)}")
    if sorter is not None:
        if isinstance(sorter, list):
            sorter = np.asarray(sorter)
        keys = wrap(index_atom("searchsorted", keys.atom, (sorter,)))
        if keys.aval.ndim != 1 or keys.aval.shape[0] != as_tensor(a).aval.shape[0]:
            raise shape_error("searchsorted", f"sorter must be a permutation of a's indices, got {describe(sorter)}")
    values = atom(v, dtype)
    count = S.full_like(values.aval.with_dtype(_dt.DEFAULT_INT), 0)
    n = keys.aval.shape[0]
    step = 1 << (n.bit_length() - 1) if n else 0
    # Greedy on the bits of the answer: the elements that go before v are a prefix of a, and count grows by
    # each power of two whose next element still goes before v.
    while step:
        candidate = E.add(count, E.scalar(step, count))
        probe = index_atom("searchsorted", keys.atom, (wrap(E.sub(E.minimum(candidate, E.scalar(n, count)),
                                                                  E.scalar(1, count))),))
        goes_before = _before(probe, values) if side == "left" else _not(_before(values, probe))
        goes_before = _and(goes_before, bind(E.le_p, candidate, E.scalar(n, candidate)))
        count = E.select(goes_before, candidate, count)
        step >>= 1
    return wrap(count)


# ------------------------------------------------------------------------------------------ order statistics

# Hyndman & Fan's continuous methods: the virtual index is n*q + alpha + q*(1 - alpha - beta) - 1.
_CONTINUOUS = {
    "linear": (1.0, 1.0),
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3, 1 / 3),
    "normal_unbiased": (3 / 8, 3 / 8),
}
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = (*_CONTINUOUS, *_DISCRETE, "midpoint", "averaged_inverted_cdf")


def _host_q(q: Any) -> tuple[tuple[float, ...], tuple[int, ...]] | None:
    """A host-known ``q`` as (flat values, shape); None for a staged or device ``q``."""
    if isinstance(q, Tensor) or not isinstance(q, (int, float, list, tuple, np.ndarray, np.generic)):
        return None
    host = np.asarray(q, dtype=np.float64)
    return tuple(float(v) for v in host.ravel()), host.shape


def _quantile_ops(name: str, skip_nan: bool, scale: float) -> tuple[Any, Any]:
    """The two staged bodies of a quantile-like op, named after it (for its error messages): a host-known ``q``
    is a static argument (indices and weights computed on the host), a tensor ``q`` an operand."""

    def static(a: AnyTensor, values: tuple[float, ...], q_shape: tuple[int, ...], axis: Any, keepdims: bool,
               method: str) -> AnyTensor:
        q = np.asarray(np.asarray(values, np.float64).reshape(q_shape) / scale)
        if q.size and not (np.all(q >= 0) and np.all(q <= 1)):
            bound = "[0, 100]" if scale == 100 else "[0, 1]"
            raise ValueError(f"{name}: q must be in the range {bound}, got {values if q_shape else values[0]!r}")
        return _quantile(name, a, q, axis, keepdims, method, skip_nan, 1)

    def dynamic(a: AnyTensor, q: AnyTensor, axis: Any, keepdims: bool, method: str) -> AnyTensor:
        return _quantile(name, a, q, axis, keepdims, method, skip_nan, scale)

    static.__name__ = dynamic.__name__ = name
    return op(static), op(dynamic)


_QUANTILE_OPS = {
    "quantile": _quantile_ops("quantile", False, 1),
    "percentile": _quantile_ops("percentile", False, 100),
    "nanquantile": _quantile_ops("nanquantile", True, 1),
    "nanpercentile": _quantile_ops("nanpercentile", True, 100),
}


def _quantile_entry(name: str, a: Any, q: Any, axis: Axes, keepdims: bool, method: str) -> AnyTensor:
    static, dynamic = _QUANTILE_OPS[name]
    host = _host_q(q)
    axis = _tuple_axis(axis)
    if host is not None:
        return static(a, host[0], host[1], axis, keepdims, method)  # type: ignore[no-any-return]
    return dynamic(a, q, axis, keepdims, method)  # type: ignore[no-any-return]


def _quantile(
    name: str, a: Any, q: Any, axis: Axes, keepdims: bool, method: str, skip_nan: bool, scale: float
) -> AnyTensor:
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    t = as_tensor(a)
    dtype = t.aval.dtype
    if not (_dt.is_float(dtype) or (method in _DISCRETE and _dt.is_integer(dtype))):
        need = "a floating-point operand" if method not in _DISCRETE else "a floating-point or integer operand"
        raise dtype_error(name, f"{name} with method={method!r} needs {need}, got {t.aval}; convert it with .astype")
    axes = normalize_axes(name, axis, t)
    kept = [k for k in range(t.aval.ndim) if k not in axes]
    n = 1
    for k in axes:
        n *= t.aval.shape[k]
    rows_shape = tuple(t.aval.shape[k] for k in kept)
    rows_dims = tuple(t.aval.dims[k] for k in kept)
    rows = 1
    for size in rows_shape:
        rows *= size
    if isinstance(q, np.ndarray):
        q_shape: tuple[int, ...] = q.shape
        q_atom: Atom | None = None
    else:
        qt = as_tensor(q)
        if qt.aval.dtype != dtype:
            raise dtype_error(name, f"q {describe(qt)} must have the dtype of the operand {describe(t)}")
        q_shape = qt.aval.shape
        q_atom = qt.atom if scale == 1 else E.div(qt.atom, E.scalar(scale, qt.atom))
    nq = 1
    for size in q_shape:
        nq *= size
    if n == 0:
        # NumPy: NaN (with a warning) for an empty median; an integer result has no NaN to give
        if (name in ("median", "nanmedian") or skip_nan) and _dt.is_float(dtype):
            out: Atom = S.full_like(Aval((rows, nq), dtype), np.nan)
            return _shape_result(out, q_shape, rows_shape, rows_dims, axes, t.aval.ndim, keepdims)
        raise shape_error(name, f"{name} over an empty axis of {describe(t)} is undefined")
    # Reduced axes last, merged into one, sorted: (rows, n) with NaNs at the end of each row.
    moved = S.transpose(t.atom, (*kept, *axes)) if axes != tuple(range(len(kept), t.aval.ndim)) else t.atom
    flat = S.reshape(moved, (rows, n), (None, None))
    ordered = T.sort([flat], 1)[0] if n > 1 else flat
    nan_row: Atom | None = None
    if skip_nan and _dt.is_float(dtype):
        valid = E.convert(_not(_isnan(ordered)), _dt.DEFAULT_INT)
        # (rows, 1): the non-NaN elements, first in each row
        count: Atom | int = S.reshape(R.reduce_sum(valid, (1,)), (rows, 1), (None, None))
    else:
        count = n
        if _dt.is_float(dtype):
            last = SL.slice_in_dim(ordered, n - 1, n, 1)
            nan_row = _isnan(last)  # (rows, 1): NumPy's quantile of a row with a NaN is NaN
    picked = _pick(ordered, q, q_atom, count, rows, nq, method, name in ("median", "nanmedian"))
    undefined = bind(E.eq_p, count, E.scalar(0, count)) if not isinstance(count, int) else nan_row
    if undefined is not None:  # a row with a NaN (an all-NaN row for the nan* variants) has no quantile
        mask = S.broadcast_to(undefined, picked.aval.with_dtype(_dt.BOOL))
        picked = E.select(mask, S.full_like(picked, np.nan), picked)
    return _shape_result(picked, q_shape, rows_shape, rows_dims, axes, t.aval.ndim, keepdims)


def _pick(
    ordered: Atom, q: Any, q_atom: Atom | None, count: Atom | int, rows: int, nq: int, method: str,
    mean_of_middle: bool = False,
) -> Atom:
    """(rows, nq): each row's order statistic(s) at each q, interpolated as ``method`` says. ``mean_of_middle``
    (median): the middle element, or the mean of the two middle ones, as NumPy's median (exact next to infinities,
    where interpolating would give NaN)."""
    dtype = ordered.aval.dtype
    lerp = _mean_of_middle if mean_of_middle else _lerp
    if isinstance(count, int) and q_atom is None:  # everything static: indices and weights on the host
        lo, hi, weights = _host_positions(np.asarray(q, np.float64).ravel(), count, method)
        below = index_atom("quantile", ordered, (slice(None), lo.astype(np.int32)))
        if method in _DISCRETE:
            return below
        above = index_atom("quantile", ordered, (slice(None), hi.astype(np.int32)))
        weight = _literal_row(weights.astype(dtype), rows)
        return lerp(below, above, weight)
    # Staged positions: q is a tensor, or the row length (non-NaN count) differs per row.
    qf = q_atom if q_atom is not None else _literal_row(np.asarray(q, np.float64).ravel().astype(dtype), 1)
    qf = S.reshape(qf, (1, nq), (None, None))
    qf = S.broadcast_to(qf, Aval((rows, nq), dtype))
    length = E.convert(count, dtype) if not isinstance(count, int) else E.scalar(count, qf)
    if not isinstance(count, int):
        length = S.broadcast_to(length, qf.aval)
    one = E.scalar(1, qf)
    last = E.sub(length, one)
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        virtual = E.add(E.mul(length, qf), E.sub(E.add(E.scalar(alpha, qf), E.mul(qf, E.scalar(1 - alpha - beta, qf))),
                                                 one))
    elif method in _INVERTED_CDF:
        virtual = _inverted_cdf_position(E.mul(length, qf), method)
    else:
        virtual = E.mul(qf, last)
    zero = E.scalar(0, qf)
    top = E.maximum(last, zero)
    before_first = E.lt(virtual, zero)
    virtual = E.minimum(E.maximum(virtual, zero), top)
    floor = E.floor(virtual)
    if method in _DISCRETE:
        if method in ("lower", "inverted_cdf", "closest_observation"):  # the latter two: integers already
            position = floor
        else:
            position = bind(E.ceil_p if method == "higher" else E.round_p, virtual)  # round: half to even
        return _gather_rows(ordered, E.convert(position, _dt.DEFAULT_INT))
    below = _gather_rows(ordered, E.convert(floor, _dt.DEFAULT_INT))
    # Clipped below the first element, both neighbours are the first one (as above the last), as NumPy.
    next_ = E.select(before_first, floor, E.minimum(E.add(floor, one), top))
    above = _gather_rows(ordered, E.convert(next_, _dt.DEFAULT_INT))
    gamma = E.sub(virtual, floor)
    if method == "midpoint":
        gamma = E.select(bind(E.eq_p, gamma, zero), gamma, S.full_like(gamma, 0.5))
    elif method == "averaged_inverted_cdf":
        gamma = E.select(bind(E.eq_p, gamma, zero), S.full_like(gamma, 0.5), S.full_like(gamma, 1))
    return lerp(below, above, gamma)


# Hyndman & Fan's discontinuous methods 1-3, from n*q: the element at ceil(n*q) (1-based); the two elements
# around n*q averaged where it is an integer; the element nearest n*q - 1/2, the even one (1-based) on a tie.
_INVERTED_CDF = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation")


def _inverted_cdf_position(nq: Atom, method: str) -> Atom:
    one = E.scalar(1, nq)
    if method == "averaged_inverted_cdf":
        return E.sub(nq, one)
    if method == "inverted_cdf":
        return E.sub(bind(E.ceil_p, nq), one)
    shifted = E.sub(nq, E.scalar(0.5, nq))
    j = E.floor(shifted)
    tie_even = bind(E.and_p, E.eq(shifted, j), E.eq(E.rem(j, E.scalar(2, j)), E.scalar(0, j)))
    return E.select(tie_even, E.sub(j, one), j)


def _host_positions(q: np.ndarray, n: int, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        virtual = n * q + alpha + q * (1 - alpha - beta) - 1
    elif method in _INVERTED_CDF:
        nq = n * q
        if method == "averaged_inverted_cdf":
            virtual = nq - 1
        elif method == "inverted_cdf":
            virtual = np.ceil(nq) - 1
        else:
            j = np.floor(nq - 0.5)
            virtual = j - ((nq - 0.5 == j) & (j % 2 == 0))
    else:
        virtual = q * (n - 1)
    before_first = virtual < 0
    virtual = np.clip(virtual, 0, n - 1)
    if method in _DISCRETE:
        rounding: dict[str, Any] = {"lower": np.floor, "higher": np.ceil, "nearest": np.round,
                                    "inverted_cdf": np.floor, "closest_observation": np.floor}
        position = rounding[method](virtual)
        return position, position, np.zeros_like(virtual)
    lo = np.floor(virtual)
    gamma = virtual - lo
    if method == "midpoint":
        gamma = np.where(gamma == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        gamma = np.where(gamma == 0, 0.5, 1.0)
    return lo, np.where(before_first, lo, np.minimum(lo + 1, n - 1)), gamma


def _literal_row(values: np.ndarray, rows: int) -> Atom:
    row = atom(np.ascontiguousarray(values).reshape(1, -1))
    return S.broadcast_to(row, Aval((rows, values.size), row.aval.dtype)) if rows != 1 else row


def _gather_rows(ordered: Atom, index: Atom) -> Atom:
    """``ordered[r, index[r, k]]`` for a (rows, nq) i32 ``index``."""
    rows = ordered.aval.shape[0]
    return index_atom("quantile", ordered, (np.arange(rows, dtype=np.int32)[:, None], wrap(index)))


def _lerp(below: Atom, above: Atom, gamma: Atom) -> Atom:
    """``below + (above - below) * gamma``, from the nearer end (exact at gamma 0 and 1, monotone in gamma)."""
    span = E.sub(above, below)
    near_low = E.add(below, E.mul(span, gamma))
    near_high = E.sub(above, E.mul(span, E.sub(E.scalar(1, gamma), gamma)))
    return E.select(bind(E.ge_p, gamma, E.scalar(0.5, gamma)), near_high, near_low)


def _mean_of_middle(below: Atom, above: Atom, gamma: Atom) -> Atom:
    """``below`` where ``gamma`` is 0, else ``(below + above) / 2`` (``gamma`` is 0 or 1/2 for a median)."""
    half = E.scalar(0.5, below)
    mean = E.add(E.mul(below, half), E.mul(above, half))
    return E.select(bind(E.eq_p, gamma, E.scalar(0, gamma)), below, mean)


def _shape_result(
    picked: Atom, q_shape: tuple[int, ...], rows_shape: tuple[int, ...], rows_dims: tuple[DimName, ...],
    axes: tuple[int, ...], ndim: int, keepdims: bool,
) -> AnyTensor:
    """(rows, nq) -> q's shape first, then the kept axes (size-1 reduced axes in place with keepdims)."""
    out = S.transpose(picked, (1, 0))
    if keepdims:
        rest_shape: list[int] = []
        rest_dims: list[DimName] = []
        kept = iter(zip(rows_shape, rows_dims))
        for k in range(ndim):
            if k in axes:
                rest_shape.append(1)
                rest_dims.append(None)
            else:
                size, dim = next(kept)
                rest_shape.append(size)
                rest_dims.append(dim)
    else:
        rest_shape, rest_dims = list(rows_shape), list(rows_dims)
    shape = (*q_shape, *rest_shape)
    dims = (*((None,) * len(q_shape)), *rest_dims)
    return wrap(S.reshape(out, shape, dims))


@overload
def quantile(
    a: Tensor[DT, Unpack[Sh]], q: float, axis: None = None, keepdims: Literal[False] = False,
    method: QuantileMethod = "linear",
) -> Tensor[DT]: ...
@overload
def quantile(
    a: Tensor[DT, Unpack[Sh]], q: float | Sequence[float] | np.ndarray | AnyTensor, axis: Axes = None,
    keepdims: bool = False, method: QuantileMethod = "linear",
) -> Tensor[DT, Unpack[AnyShape]]: ...
def quantile(a: Any, q: Any, axis: Axes = None, keepdims: bool = False, method: str = "linear") -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1]: a number, a sequence or a tensor) over ``axis``; the result has
    ``q``'s shape first. A slice with a NaN gives NaN. Integer operands need a float dtype except for the
    methods that pick an element (``lower``, ``higher``, ``nearest``, ``inverted_cdf``, ``closest_observation``;
    NumPy converts them to float64 instead)."""
    return _quantile_entry("quantile", a, q, axis, keepdims, method)


@overload
def percentile(
    a: Tensor[DT, Unpack[Sh]], q: float, axis: None = None, keepdims: Literal[False] = False,
    method: QuantileMethod = "linear",
) -> Tensor[DT]: ...
@overload
def percentile(
    a: Tensor[DT, Unpack[Sh]], q: float | Sequence[float] | np.ndarray | AnyTensor, axis: Axes = None,
    keepdims: bool = False, method: QuantileMethod = "linear",
) -> Tensor[DT, Unpack[AnyShape]]: ...
def percentile(a: Any, q: Any, axis: Axes = None, keepdims: bool = False, method: str = "linear") -> Any:
    """``quantile`` with ``q`` in percent ([0, 100])."""
    return _quantile_entry("percentile", a, q, axis, keepdims, method)


@overload
def nanquantile(
    a: Tensor[FT, Unpack[Sh]], q: float, axis: None = None, keepdims: Literal[False] = False,
    method: QuantileMethod = "linear",
) -> Tensor[FT]: ...
@overload
def nanquantile(
    a: Tensor[FT, Unpack[Sh]], q: float | Sequence[float] | np.ndarray | AnyTensor, axis: Axes = None,
    keepdims: bool = False, method: QuantileMethod = "linear",
) -> Tensor[FT, Unpack[AnyShape]]: ...
def nanquantile(a: Any, q: Any, axis: Axes = None, keepdims: bool = False, method: str = "linear") -> Any:
    """``quantile`` ignoring NaNs (an all-NaN slice gives NaN, without NumPy's warning)."""
    return _quantile_entry("nanquantile", a, q, axis, keepdims, method)


@overload
def nanpercentile(
    a: Tensor[FT, Unpack[Sh]], q: float, axis: None = None, keepdims: Literal[False] = False,
    method: QuantileMethod = "linear",
) -> Tensor[FT]: ...
@overload
def nanpercentile(
    a: Tensor[FT, Unpack[Sh]], q: float | Sequence[float] | np.ndarray | AnyTensor, axis: Axes = None,
    keepdims: bool = False, method: QuantileMethod = "linear",
) -> Tensor[FT, Unpack[AnyShape]]: ...
def nanpercentile(a: Any, q: Any, axis: Axes = None, keepdims: bool = False, method: str = "linear") -> Any:
    """``percentile`` ignoring NaNs."""
    return _quantile_entry("nanpercentile", a, q, axis, keepdims, method)


@as_reduction
@op
def median(a: AnyTensor, axis: Axes = None, keepdims: bool = False) -> AnyTensor:
    """The median over ``axis`` (the mean of the two middle elements for an even count); NaN where a slice has
    a NaN, and for an empty slice."""
    return _quantile("median", a, np.asarray(0.5), _tuple_axis(axis), keepdims, "linear", False, 1)


@as_reduction
@op
def nanmedian(a: AnyTensor, axis: Axes = None, keepdims: bool = False) -> AnyTensor:
    """``median`` ignoring NaNs (NaN for an all-NaN slice)."""
    return _quantile("nanmedian", a, np.asarray(0.5), _tuple_axis(axis), keepdims, "linear", True, 1)


def _tuple_axis(axis: Axes) -> Axes:
    return tuple(axis) if isinstance(axis, list) else axis

