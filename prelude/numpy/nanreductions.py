"""Reductions that ignore NaNs (``nansum``, ``nanmean``, ``nanargmax``...) and a few more of NumPy's statistics
(``count_nonzero``, ``average``, ``ptp``), with ``axis``/``keepdims`` as ``tnp.sum``.

NaNs are replaced before reducing (``where`` on the inputs, not the outputs), so gradients are exactly 0 at NaN
positions and nothing NaN leaks into them. All-NaN slices give NumPy's results (``nansum`` 0, ``nanprod`` 1,
``nanmax``/``nanmin``/``nanmean``/``nanvar`` NaN) without NumPy's warnings; ``nanargmax``/``nanargmin`` cannot
raise at run time as NumPy does for them and return -1 there instead (as JAX does).
"""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, Floating, i32
from ...shape_typing import OpenAxes, as_accumulating_reduction, as_arg_reduction, as_reduction
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as St
from ...tensor import Tensor, Traced
from ._core import as_tensor, dtype_error, float_operand, normalize_axes, op, shape_error, wrap
from .reductions import (
    _accumulator, _broadcast_back, _check_nonempty, _count, _ddof, _keep, _multiplied, _narrowed, _summed, _widened,
)

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Axis = int | type | tuple[int | type, ...] | list[int | type] | None
DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
AnyShape = tuple[Any, ...]

# ---------------------------------------------------------------------------------------------- helpers


def _isnan(a: Atom) -> Atom:
    return bind(E.ne_p, a, a)  # type: ignore[no-any-return]


def _without_nans(t: Traced[Any], fill: float) -> Atom:
    """``t`` with its NaNs replaced by ``fill`` (integers have none)."""
    a = t.atom
    if not _dt.is_float(a.aval.dtype):
        return a
    return E.select(_isnan(a), E.scalar(fill, a), a)


def _valid_count(a: Atom, axes: tuple[int, ...]) -> Atom:
    """How many non-NaN elements each slice has, in ``a``'s float dtype."""
    valid = E.convert(bind(E.eq_p, a, a), a.aval.dtype)
    return R.reduce_sum(valid, axes)


def _reduce(name: str, x: Any, axis: Axis, keepdims: bool, reducer: Any, fill: float) -> AnyTensor:
    t = as_tensor(x)
    axes = normalize_axes(name, axis, t)
    return wrap(_keep(t.atom, reducer(_without_nans(t, fill), axes), axes, keepdims))


# ---------------------------------------------------------------------------------------- sums, products


@as_accumulating_reduction
@op
def nansum(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """``sum`` with NaNs counted as 0 (an all-NaN slice sums to 0)."""
    return _reduce("nansum", _accumulator(x), axis, keepdims, _summed, 0)


@as_accumulating_reduction
@op
def nanprod(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """``prod`` with NaNs counted as 1."""
    return _reduce("nanprod", _accumulator(x), axis, keepdims, _multiplied, 1)


# ------------------------------------------------------------------------------------------- extrema


def _nan_extremum(name: str, x: Any, axis: Axis, keepdims: bool, reducer: Any, fill: float) -> AnyTensor:
    t = as_tensor(x)
    axes = normalize_axes(name, axis, t)
    _check_nonempty(name, t, axes)
    a = t.atom
    out = reducer(_without_nans(t, fill), axes)
    if _dt.is_float(a.aval.dtype):  # an all-NaN slice: NaN, as NumPy
        all_nan = R.reduce_min(_isnan(a), axes)
        out = E.select(all_nan, E.scalar(math.nan, out), out)
    return wrap(_keep(a, out, axes, keepdims))


@as_reduction
@op
def nanmax(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """``max`` ignoring NaNs; NaN for an all-NaN slice. An empty axis is an error, as for ``max``."""
    return _nan_extremum("nanmax", x, axis, keepdims, R.reduce_max, -math.inf)


@as_reduction
@op
def nanmin(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """``min`` ignoring NaNs; NaN for an all-NaN slice."""
    return _nan_extremum("nanmin", x, axis, keepdims, R.reduce_min, math.inf)


@as_reduction
@op
def ptp(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """Peak to peak: ``max - min`` along ``axis`` (NaN if the slice has a NaN)."""
    t = as_tensor(x)
    axes = normalize_axes("ptp", axis, t)
    if t.aval.dtype == _dt.BOOL:
        raise dtype_error("ptp", f"ptp needs a numeric operand, got {t.aval} (max - min of bools is undefined)")
    _check_nonempty("ptp", t, axes)
    spread = E.sub(R.reduce_max(t.atom, axes), R.reduce_min(t.atom, axes))
    return wrap(_keep(t.atom, spread, axes, keepdims))


def _nan_arg(name: str, prim: Any, x: Any, axis: int | type | None, fill: float) -> AnyTensor:
    t = as_tensor(x)
    if axis is None:
        t = wrap(St.reshape(t.atom, (t.aval.size,), (None,)))
        index = 0
    else:
        if isinstance(axis, (tuple, list)):
            raise shape_error(name, f"{name} takes one axis (an int or a Dim), got {axis!r}")
        (index,) = normalize_axes(name, axis, t, allow_none=False)
    _check_nonempty(name, t, (index,))
    a = t.atom
    # NaNs count as the fill (-inf for argmax), as NumPy and JAX count them: a NaN before the first real -inf
    # ties with it and wins (``nanargmax([nan, -inf])`` is 0, a NaN's index, there too).
    found = bind(prim, _without_nans(t, fill), axis=index, index_dtype=_dt.DEFAULT_INT)
    if not _dt.is_float(a.aval.dtype):
        return wrap(found)
    all_nan = R.reduce_min(_isnan(a), (index,))
    return wrap(E.select(all_nan, E.scalar(-1, found), found))


@as_arg_reduction
@op
def nanargmax(x: AnyTensor, axis: int | type | None = None) -> AnyTensor:
    """Index of the largest non-NaN value (the first of ties). NumPy raises for an all-NaN slice; a compiled
    program cannot, so such a slice gives -1. As in NumPy and JAX, NaNs count as -inf otherwise: where the largest
    value is -inf, a NaN before it wins (``nanargmax([nan, -inf])`` is 0)."""
    return _nan_arg("nanargmax", R.argmax_p, x, axis, -math.inf)


@as_arg_reduction
@op
def nanargmin(x: AnyTensor, axis: int | type | None = None) -> AnyTensor:
    """Index of the smallest non-NaN value; -1 for an all-NaN slice (see ``nanargmax``)."""
    return _nan_arg("nanargmin", R.argmin_p, x, axis, math.inf)


# ------------------------------------------------------------------------------------ means, variances


@as_reduction
@op
def nanmean(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """Mean of the non-NaN values; NaN for an all-NaN slice. float16/bfloat16 sum and count in float32."""
    original = float_operand("nanmean", x)
    t = _widened(original)
    axes = normalize_axes("nanmean", axis, t)
    total = R.reduce_sum(_without_nans(t, 0), axes)
    mean = E.div(total, _valid_count(t.atom, axes))
    return wrap(_narrowed(_keep(t.atom, mean, axes, keepdims), original.aval.dtype))


class DdofReduction(Protocol):
    """``nanvar`` / ``nanstd``: the overloads of ``Reduction`` with a ``ddof`` argument."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: None = None, keepdims: Literal[False] = False, ddof: float = 0
    ) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False, ddof: float = 0
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False, ddof: float = 0
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, B, Unpack[S]], axis: type[B] | Literal[1], keepdims: Literal[False] = False,
        ddof: float = 0,
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A, B], axis: type[A] | Literal[-2], keepdims: Literal[False] = False,
        ddof: float = 0,
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2], keepdims: Literal[False] = False,
        ddof: float = 0,
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3], keepdims: Literal[False] = False,
        ddof: float = 0,
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: type[Dim] | OpenAxes | None, keepdims: Literal[True], ddof: float = 0
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: OpenAxes | None = None, keepdims: bool = False, ddof: float = 0
    ) -> Tensor[DT, Unpack[AnyShape]]: ...


def _nanvar(name: str, x: Any, axis: Axis, keepdims: bool, ddof: float, root: bool = False) -> Atom:
    """``nanvar`` (its square root when ``root``), computed in float32 for float16/bfloat16 operands."""
    ddof = _ddof(name, ddof)
    original = float_operand(name, x)
    t = _widened(original)
    axes = normalize_axes(name, axis, t)
    a = t.atom
    valid = bind(E.eq_p, a, a)
    filled = _without_nans(t, 0)
    count = _valid_count(a, axes)
    mean = _keep(a, E.div(R.reduce_sum(filled, axes), count), axes, True)
    centered = E.sub(filled, _broadcast_back(mean, t.aval.shape, t.aval.dims))
    centered = E.select(valid, centered, E.scalar(0, centered))  # NaN positions: no contribution, no gradient
    squares = R.reduce_sum(E.mul(centered, centered), axes)
    dof = E.sub(count, E.scalar(ddof, count))
    # NumPy: NaN where no degrees of freedom are left (an all-NaN slice, or ddof >= count).
    safe = E.select(bind(E.le_p, dof, E.scalar(0, dof)), E.scalar(math.nan, dof), dof)
    out = E.div(squares, safe)
    out = bind(E.sqrt_p, out) if root else out
    return _narrowed(_keep(a, out, axes, keepdims), original.aval.dtype)


def _nanvar_impl(x: AnyTensor, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> AnyTensor:
    """Variance of the non-NaN values, divided by ``count - ddof``; NaN where that is not positive."""
    return wrap(_nanvar("nanvar", x, axis, keepdims, ddof))


def _nanstd_impl(x: AnyTensor, axis: Axis = None, keepdims: bool = False, ddof: float = 0) -> AnyTensor:
    """Square root of ``nanvar``."""
    return wrap(_nanvar("nanstd", x, axis, keepdims, ddof, root=True))


_nanvar_impl.__name__ = _nanvar_impl.__qualname__ = "nanvar"
_nanstd_impl.__name__ = _nanstd_impl.__qualname__ = "nanstd"
nanvar: DdofReduction = op(_nanvar_impl)
nanstd: DdofReduction = op(_nanstd_impl)


# ------------------------------------------------------------------------------------------ counting


class CountReduction(Protocol):
    """``count_nonzero``: i32 counts; the reduced axis disappears as for ``sum``."""

    @overload
    def __call__(
        self, a: Tensor[DT, Unpack[S]], axis: None = None, keepdims: Literal[False] = False
    ) -> Tensor[i32]: ...
    @overload
    def __call__(
        self, a: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(
        self, a: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(
        self, a: Tensor[DT, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[i32, Unpack[AnyShape]]: ...


def _count_nonzero_impl(a: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """How many elements are nonzero (True, for bools), as int32 (NumPy gives its default int, int64)."""
    t = as_tensor(a)
    axes = normalize_axes("count_nonzero", axis, t)
    x = t.atom
    nonzero = x if x.aval.dtype == _dt.BOOL else bind(E.ne_p, x, E.scalar(0, x))
    counts = R.reduce_sum(E.convert(nonzero, _dt.DEFAULT_INT), axes)
    return wrap(_keep(x, counts, axes, keepdims))


_count_nonzero_impl.__name__ = _count_nonzero_impl.__qualname__ = "count_nonzero"
count_nonzero: CountReduction = op(_count_nonzero_impl)


# ------------------------------------------------------------------------------------------- average


@overload
def average(
    a: Tensor[FT, Unpack[S]],
    axis: None = None,
    weights: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    returned: Literal[False] = False,
    keepdims: Literal[False] = False,
) -> Tensor[FT]: ...
@overload
def average(
    a: Tensor[FT, Unpack[S]],
    axis: Axis = None,
    weights: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    returned: Literal[False] = False,
    keepdims: bool = False,
) -> Tensor[FT, Unpack[AnyShape]]: ...
@overload
def average(
    a: Tensor[FT, Unpack[S]],
    axis: Axis,
    weights: Tensor[FT, Unpack[tuple[Any, ...]]] | None,
    returned: Literal[True],
    keepdims: bool = False,
) -> tuple[Tensor[FT, Unpack[AnyShape]], Tensor[FT, Unpack[AnyShape]]]: ...
@overload
def average(
    a: Tensor[FT, Unpack[S]],
    axis: Axis = None,
    weights: Tensor[FT, Unpack[tuple[Any, ...]]] | None = None,
    *,
    returned: Literal[True],
    keepdims: bool = False,
) -> tuple[Tensor[FT, Unpack[AnyShape]], Tensor[FT, Unpack[AnyShape]]]: ...
@op
def average(
    a: AnyTensor, axis: Axis = None, weights: AnyTensor | None = None, returned: bool = False, keepdims: bool = False
) -> Any:
    """Weighted mean ``sum(a * w) / sum(w)`` along ``axis``; ``weights`` has ``a``'s shape, or the sizes of the
    ``axis`` axes (1-D along a single axis; for a tuple, in its order, as NumPy 2). ``returned=True`` also gives the sum of the weights (broadcast to the result's shape). A zero sum of
    weights gives inf/NaN (NumPy raises ZeroDivisionError; a compiled program cannot)."""
    original = float_operand("average", a)
    t = _widened(original)  # float16/bfloat16: sums in float32
    axes = normalize_axes("average", axis, t)
    x = t.atom

    def back(v: Atom) -> AnyTensor:
        return wrap(_narrowed(v, original.aval.dtype))

    if weights is None:
        total = R.reduce_sum(x, axes)
        scale = E.scalar(_count(t, axes), total)
        out = _keep(x, E.div(total, scale), axes, keepdims)
        if not returned:
            return back(out)
        return back(out), back(St.full_like(out, _count(t, axes)))
    w = as_tensor(weights)
    if w.aval.dtype != original.aval.dtype:
        raise dtype_error("average", f"weights {w.aval} and operand {original.aval} have different dtypes; convert one")
    if w.aval.shape != t.aval.shape:
        if axis is None:
            raise shape_error(
                "average", f"weights {w.aval} differ in shape from the operand {original.aval}: give axis= for "
                "weights along some axes"
            )
        along = tuple(t.aval.shape[k] for k in axes)  # NumPy 2: weights sized as the axes, in axis's order
        if w.aval.shape != along:
            what = f"the length of axis {axes[0]}" if len(axes) == 1 else f"the sizes {along} of axes {axes}"
            raise shape_error(
                "average", f"weights along axis must have {what} of the operand {original.aval}, got {w.aval}"
            )
        in_order = sorted(range(len(axes)), key=lambda i: axes[i])
        aligned = St.transpose(w.atom, tuple(in_order)) if in_order != list(range(len(axes))) else w.atom
        w = wrap(St.broadcast_in_dim(aligned, t.aval.shape, tuple(sorted(axes)), t.aval.dims))
    w = _widened(w)
    wsum = R.reduce_sum(w.atom, axes)
    out = _keep(x, E.div(R.reduce_sum(E.mul(x, w.atom), axes), wsum), axes, keepdims)
    if not returned:
        return back(out)
    return back(out), back(_keep(x, wsum, axes, keepdims))


__all__ = [
    "average", "count_nonzero", "nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
    "nansum", "nanvar", "ptp",
]
