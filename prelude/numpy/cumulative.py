"""Cumulative sums, products, maxima and minima, and differences, with NumPy's names.

No scan primitive: every cumulative op is an associative prefix scan made of slices, concatenates, reshapes and
elementwise ops (a work-efficient pairwise scheme: combine neighbours, scan the half-length result, fill in the
even positions), so ``grad``, ``jvp`` and ``vmap`` come from those primitives' rules and one call stages
O(log n) equations doing O(n) work. Sums pair up elements in a tree, so their rounding error grows like
``log n`` rather than NumPy's sequential ``n``: float results can differ from NumPy in the last bits.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, i32, u8, u16, u32
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, Aval
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...shape_typing import NarrowSigned
from ...tensor import Tensor, Traced
from ._core import as_tensor, atom, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from .reductions import _accumulator, _narrowed, _widened

__all__ = [
    "cummax", "cummin", "cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "diff", "ediff1d", "nancumprod",
    "nancumsum",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
AnyShape = tuple[Any, ...]
DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
Sh = TypeVarTuple("Sh")
NarrowUnsigned = TypeVar("NarrowUnsigned", u8, u16)  # accumulated in u32, as NarrowSigned in i32
AxisArg = int | type[Dim]
Combine = Callable[[Atom, Atom], Atom]


# --------------------------------------------------------------------------------------------------- the scan


def _combine(kind: str) -> Combine:
    if kind == "sum":
        return E.add
    if kind == "prod":
        return E.mul
    if kind == "max":
        return E.maximum
    return E.minimum


def _identity(kind: str, dtype: np.dtype[Any]) -> float | int | bool:
    if kind == "sum":  # -0.0: adding it leaves every float unchanged, -0.0 included
        return False if dtype == _dt.BOOL else (-0.0 if _dt.is_float(dtype) else 0)
    if kind == "prod":
        return True if dtype == _dt.BOOL else 1
    if dtype == _dt.BOOL:
        return kind == "min"
    if _dt.is_float(dtype):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return int(info.min) if kind == "max" else int(info.max)


def _scan(x: Atom, axis: int, kind: str) -> Atom:
    """Inclusive prefix scan of ``x`` along ``axis`` under an associative, commutative ``kind``."""
    out = _scan_rec(x, axis, kind, _combine(kind))
    return SL.renamed(out, x.aval)


def _scan_rec(x: Atom, axis: int, kind: str, combine: Combine) -> Atom:
    n = x.aval.shape[axis]
    if n <= 1:
        return x
    if n == 2:
        first = SL.slice_in_dim(x, 0, 1, axis)
        return SL.concatenate([first, combine(first, SL.slice_in_dim(x, 1, 2, axis))], axis)
    if n % 2:  # an identity element at the end makes pairs; it only reaches the dropped last position
        config = [(0, 0, 0)] * x.aval.ndim
        config[axis] = (0, 1, 0)
        x = SL.pad(x, E.scalar(_identity(kind, x.aval.dtype), x), config)
    m = (n + 1) // 2
    ndim = x.aval.ndim
    starts = [0] * ndim
    limits = list(x.aval.shape)
    strides = [1] * ndim
    strides[axis] = 2
    even = SL.slice_(x, starts, limits, strides)  # x[0], x[2], ...
    starts[axis] = 1
    odd = SL.slice_(x, starts, limits, strides)  # x[1], x[3], ...
    pairs = _scan_rec(combine(even, odd), axis, kind, combine)  # out[2j + 1] = pairs[j]
    # out[2j] = pairs[j - 1] + x[2j], with the identity standing in for pairs[-1]
    shift = [(0, 0, 0)] * ndim
    shift[axis] = (1, 0, 0)
    before = SL.pad(SL.slice_in_dim(pairs, 0, m - 1, axis), E.scalar(_identity(kind, x.aval.dtype), x), shift)
    evens = combine(before, even)
    # Interleave: (..., m, 1, ...) twice -> (..., m, 2, ...) -> (..., 2m, ...).
    shape = list(evens.aval.shape)
    split = (*shape[:axis], m, 1, *shape[axis + 1 :])
    dims = (*evens.aval.dims[:axis], None, None, *evens.aval.dims[axis + 1 :])
    pair_axis = SL.concatenate([S.reshape(evens, split, dims), S.reshape(pairs, split, dims)], axis + 1)
    merged = (*shape[:axis], 2 * m, *shape[axis + 1 :])
    out = S.reshape(pair_axis, merged, (*evens.aval.dims[:axis], None, *evens.aval.dims[axis + 1 :]))
    return SL.slice_in_dim(out, 0, n, axis) if 2 * m != n else out


def _operand(name: str, a: Any, axis: Any, dtype: Any, kind: str) -> tuple[Traced[Any], int]:
    """The operand converted to its accumulation dtype, flattened for ``axis=None``, and the scan axis."""
    t = as_tensor(a)
    if dtype is not None or kind in ("sum", "prod"):
        t = as_tensor(_accumulator(t, dtype))
    if axis is None:
        return wrap(S.reshape(t.atom, (t.aval.size,), (None,))), 0
    if isinstance(axis, (tuple, list)):
        raise shape_error(name, f"{name} takes one axis (an int or a Dim), got {axis!r}")
    return t, normalize_axes(name, axis, t, allow_none=False)[0]


def _cumulative(name: str, kind: str, a: Any, axis: Any, dtype: Any, skip_nan: bool = False) -> AnyTensor:
    t, ax = _operand(name, a, axis, dtype, kind)
    dtype_out = t.aval.dtype
    if kind in ("sum", "prod"):  # float16/bfloat16 accumulate in float32, as ``sum`` does
        t = _widened(t)
    x = t.atom
    if skip_nan and _dt.is_float(x.aval.dtype):
        x = E.select(bind(E.ne_p, x, x), S.full_like(x, 0 if kind == "sum" else 1), x)  # NumPy's +0.0
    return wrap(_narrowed(_scan(x, ax, kind), dtype_out))


# ----------------------------------------------------------------------------------------- public functions


@overload
def cumsum(a: Tensor[NarrowSigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def cumsum(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[u32, Unpack[Sh]]: ...
@overload
def cumsum(a: Tensor[DT, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def cumsum(a: Tensor[Any, Unpack[Sh]], axis: AxisArg, dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
@overload
def cumsum(a: Tensor[NarrowSigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[i32, Any]: ...
@overload
def cumsum(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[u32, Any]: ...
@overload
def cumsum(a: Tensor[DT, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[DT, Any]: ...
@overload
def cumsum(a: Tensor[Any, Unpack[Sh]], axis: None = None, *, dtype: type[DT2]) -> Tensor[DT2, Any]: ...
@op
def cumsum(a: AnyTensor, axis: AxisArg | None = None, dtype: Any = None) -> AnyTensor:
    """Cumulative sum along ``axis`` (the flattened array when None). Bool, i8 and i16 accumulate in i32 and u8
    and u16 in u32, as ``sum`` does."""
    return _cumulative("cumsum", "sum", a, axis, dtype)


@overload
def cumprod(a: Tensor[NarrowSigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def cumprod(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[u32, Unpack[Sh]]: ...
@overload
def cumprod(a: Tensor[DT, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def cumprod(a: Tensor[Any, Unpack[Sh]], axis: AxisArg, dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
@overload
def cumprod(a: Tensor[NarrowSigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[i32, Any]: ...
@overload
def cumprod(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[u32, Any]: ...
@overload
def cumprod(a: Tensor[DT, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[DT, Any]: ...
@overload
def cumprod(a: Tensor[Any, Unpack[Sh]], axis: None = None, *, dtype: type[DT2]) -> Tensor[DT2, Any]: ...
@op
def cumprod(a: AnyTensor, axis: AxisArg | None = None, dtype: Any = None) -> AnyTensor:
    """Cumulative product along ``axis`` (the flattened array when None); accumulates as ``cumsum``. Its
    gradient has no division, so zeros in the input are fine."""
    return _cumulative("cumprod", "prod", a, axis, dtype)


@overload
def nancumsum(a: Tensor[NarrowSigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def nancumsum(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[u32, Unpack[Sh]]: ...
@overload
def nancumsum(a: Tensor[DT, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def nancumsum(a: Tensor[Any, Unpack[Sh]], axis: AxisArg, dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
@overload
def nancumsum(a: Tensor[NarrowSigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[i32, Any]: ...
@overload
def nancumsum(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[u32, Any]: ...
@overload
def nancumsum(a: Tensor[DT, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[DT, Any]: ...
@overload
def nancumsum(a: Tensor[Any, Unpack[Sh]], axis: None = None, *, dtype: type[DT2]) -> Tensor[DT2, Any]: ...
@op
def nancumsum(a: AnyTensor, axis: AxisArg | None = None, dtype: Any = None) -> AnyTensor:
    """``cumsum`` with NaNs counted as zero."""
    return _cumulative("nancumsum", "sum", a, axis, dtype, skip_nan=True)


@overload
def nancumprod(a: Tensor[NarrowSigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[i32, Unpack[Sh]]: ...
@overload
def nancumprod(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[u32, Unpack[Sh]]: ...
@overload
def nancumprod(a: Tensor[DT, Unpack[Sh]], axis: AxisArg, dtype: None = None) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def nancumprod(a: Tensor[Any, Unpack[Sh]], axis: AxisArg, dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
@overload
def nancumprod(a: Tensor[NarrowSigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[i32, Any]: ...
@overload
def nancumprod(a: Tensor[NarrowUnsigned, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[u32, Any]: ...
@overload
def nancumprod(a: Tensor[DT, Unpack[Sh]], axis: None = None, dtype: None = None) -> Tensor[DT, Any]: ...
@overload
def nancumprod(a: Tensor[Any, Unpack[Sh]], axis: None = None, *, dtype: type[DT2]) -> Tensor[DT2, Any]: ...
@op
def nancumprod(a: AnyTensor, axis: AxisArg | None = None, dtype: Any = None) -> AnyTensor:
    """``cumprod`` with NaNs counted as one."""
    return _cumulative("nancumprod", "prod", a, axis, dtype, skip_nan=True)


@overload
def cummax(a: Tensor[DT, Unpack[Sh]], axis: AxisArg) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def cummax(a: Tensor[DT, Unpack[Sh]], axis: None = None) -> Tensor[DT, Any]: ...
@op
def cummax(a: AnyTensor, axis: AxisArg | None = None) -> AnyTensor:
    """Running maximum along ``axis`` (NumPy's ``np.maximum.accumulate``; not a NumPy function name). A NaN
    propagates to every later position."""
    return _cumulative("cummax", "max", a, axis, None)


@overload
def cummin(a: Tensor[DT, Unpack[Sh]], axis: AxisArg) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def cummin(a: Tensor[DT, Unpack[Sh]], axis: None = None) -> Tensor[DT, Any]: ...
@op
def cummin(a: AnyTensor, axis: AxisArg | None = None) -> AnyTensor:
    """Running minimum along ``axis`` (``np.minimum.accumulate``; not a NumPy function name)."""
    return _cumulative("cummin", "min", a, axis, None)


def _include_initial(name: str, kind: str, a: Any, axis: Any, dtype: Any, include_initial: bool) -> AnyTensor:
    t = as_tensor(a)
    if axis is None and t.aval.ndim == 0:  # NumPy reads a 0-d operand as 1-D
        t = wrap(S.reshape(t.atom, (1,)))
    if axis is None and t.aval.ndim != 1:
        raise shape_error(name, f"{name} needs an axis for an operand of rank {t.aval.ndim}: {describe(t)}")
    if axis is None:
        axis = 0
    out = as_tensor(_cumulative(name, kind, t, axis, dtype))
    if not include_initial:
        return out
    ax = normalize_axes(name, axis, t, allow_none=False)[0]
    config = [(0, 0, 0)] * out.aval.ndim
    config[ax] = (1, 0, 0)
    x = out.atom
    return wrap(SL.pad(x, E.scalar(0 if kind == "sum" else 1, x), config))


@overload
def cumulative_sum(
    x: Tensor[NarrowSigned, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None,
    include_initial: bool = False,
) -> Tensor[i32, Unpack[AnyShape]]: ...
@overload
def cumulative_sum(
    x: Tensor[NarrowUnsigned, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None,
    include_initial: bool = False,
) -> Tensor[u32, Unpack[AnyShape]]: ...
@overload
def cumulative_sum(
    x: Tensor[DT, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None, include_initial: bool = False,
) -> Tensor[DT, Unpack[AnyShape]]: ...
@overload
def cumulative_sum(
    x: Tensor[Any, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: type[DT2], include_initial: bool = False,
) -> Tensor[DT2, Unpack[AnyShape]]: ...
@op
def cumulative_sum(
    x: AnyTensor, /, *, axis: AxisArg | None = None, dtype: Any = None, include_initial: bool = False
) -> AnyTensor:
    """NumPy 2's (array API) cumulative sum: ``axis`` may be omitted only for 1-D operands; ``include_initial``
    prepends a zero along the axis. A 0-d operand counts as 1-D."""
    return _include_initial("cumulative_sum", "sum", x, axis, dtype, include_initial)


@overload
def cumulative_prod(
    x: Tensor[NarrowSigned, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None,
    include_initial: bool = False,
) -> Tensor[i32, Unpack[AnyShape]]: ...
@overload
def cumulative_prod(
    x: Tensor[NarrowUnsigned, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None,
    include_initial: bool = False,
) -> Tensor[u32, Unpack[AnyShape]]: ...
@overload
def cumulative_prod(
    x: Tensor[DT, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: None = None, include_initial: bool = False,
) -> Tensor[DT, Unpack[AnyShape]]: ...
@overload
def cumulative_prod(
    x: Tensor[Any, Unpack[Sh]], /, *, axis: AxisArg | None = None, dtype: type[DT2], include_initial: bool = False,
) -> Tensor[DT2, Unpack[AnyShape]]: ...
@op
def cumulative_prod(
    x: AnyTensor, /, *, axis: AxisArg | None = None, dtype: Any = None, include_initial: bool = False
) -> AnyTensor:
    """NumPy 2's cumulative product; ``include_initial`` prepends a one along the axis."""
    return _include_initial("cumulative_prod", "prod", x, axis, dtype, include_initial)


@op
def diff(
    a: Tensor[DT, Unpack[Sh]], n: int = 1, axis: AxisArg = -1, prepend: Any = None, append: Any = None
) -> Tensor[DT, Unpack[AnyShape]]:
    """``n``-th discrete difference along ``axis`` (bool operands: ``!=`` of neighbours, as NumPy).
    ``prepend``/``append`` (scalars or arrays) are joined along the axis first."""
    t = as_tensor(a)
    if t.aval.ndim == 0:
        raise shape_error("diff", f"diff needs an operand of rank >= 1, got {describe(t)}")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative, got n={n}")
    ax = normalize_axes("diff", axis, t, allow_none=False)[0]
    if n == 0:
        return t
    x = t.atom
    parts = [x]
    if prepend is not None:
        parts.insert(0, _edge("diff", prepend, x, ax))
    if append is not None:
        parts.append(_edge("diff", append, x, ax))
    if len(parts) > 1:
        x = SL.concatenate(parts, ax)
    for _ in range(n):
        size = x.aval.shape[ax]
        if size == 0:
            break
        later, earlier = SL.slice_in_dim(x, 1, size, ax), SL.slice_in_dim(x, 0, size - 1, ax)
        x = bind(E.ne_p, later, earlier) if x.aval.dtype == _dt.BOOL else E.sub(later, earlier)
    return wrap(x)


def _edge(name: str, value: Any, x: Atom, axis: int) -> Atom:
    """A ``prepend``/``append`` operand: a scalar becomes a size-1 slab along ``axis``; an array must match the
    other axes."""
    dtype = result_dtype(name, (wrap(x), value))
    v = atom(value, dtype)
    if v.aval.ndim == 0:
        shape = list(x.aval.shape)
        shape[axis] = 1
        dims = list(x.aval.dims)
        dims[axis] = None
        return S.broadcast_to(v, Aval(tuple(shape), dtype, tuple(dims)))
    if v.aval.ndim != x.aval.ndim or any(
        v.aval.shape[k] != x.aval.shape[k] for k in range(x.aval.ndim) if k != axis
    ):
        raise shape_error(name, f"{describe(wrap(v))} cannot be joined to {describe(wrap(x))} along axis {axis}")
    return v


@op
def ediff1d(ary: AnyTensor, to_end: Any = None, to_begin: Any = None) -> Tensor[Any, Any]:
    """Differences of consecutive elements of the flattened array, with optional values around them."""
    t = as_tensor(ary)
    flat = S.reshape(t.atom, (t.aval.size,), (None,))
    size = t.aval.size
    if size:
        out = E.sub(SL.slice_in_dim(flat, 1, size, 0), SL.slice_in_dim(flat, 0, size - 1, 0))
    else:
        out = flat
    parts = [out]
    for value, front in ((to_begin, True), (to_end, False)):
        if value is None:
            continue
        v = atom(value, t.aval.dtype)
        if v.aval.dtype != t.aval.dtype:
            raise dtype_error("ediff1d", f"{describe(wrap(v))} must have the dtype of {describe(t)}")
        v = S.reshape(v, (v.aval.size,), (None,))
        parts.insert(0, v) if front else parts.append(v)
    return wrap(SL.concatenate(parts, 0) if len(parts) > 1 else out)

