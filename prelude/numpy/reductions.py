"""Reductions with NumPy's names and ``axis``/``keepdims`` (axes may be ints or Dim classes)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...dtypes import DType, to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as S
from ...shape_typing import as_accumulating_reduction, as_arg_reduction, as_mean_reduction, as_reduction
from ...tensor import Tensor, Traced
from ._core import as_tensor, dtype_error, float_operand, inexact_operand, normalize_axes, op, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Axis = int | type | Sequence[int | type] | None


def _keep(x: Atom, reduced: Atom, axes: tuple[int, ...], keepdims: bool) -> Atom:
    if not keepdims:
        return reduced
    sizes = tuple(1 if a in axes else n for a, n in enumerate(x.aval.shape))
    names = tuple(None if a in axes else d for a, d in enumerate(x.aval.dims))
    return S.reshape(reduced, sizes, names)


_F32 = np.dtype(np.float32)


def _is_narrow_float(dtype: np.dtype[Any]) -> bool:
    return dtype.itemsize == 2 and _dt.is_float(dtype)


def _widened(t: Traced[Any]) -> Traced[Any]:
    """``t`` in float32 when it is float16/bfloat16 (the type its sums and counts are computed in: a bf16 count of
    300 is 304), else as it is. Convert the result back with ``_narrowed``."""
    return wrap(E.convert(t.atom, _F32)) if _is_narrow_float(t.aval.dtype) else t


def _narrowed(x: Atom, dtype: np.dtype[Any]) -> Atom:
    """A result computed on a ``_widened`` operand, back in the operand's ``dtype``."""
    return x if x.aval.dtype == dtype else E.convert(x, dtype)


def _summed(x: Atom, axes: Sequence[int]) -> Atom:
    """``reduce_sum``, accumulated in f32 for f16/bf16 operands and converted back (as JAX does): a bf16 running sum
    of 256 values near 30 is off by whole units."""
    return _accumulated(R.reduce_sum, x, axes)


def _multiplied(x: Atom, axes: Sequence[int]) -> Atom:
    """``reduce_prod``, accumulated in f32 for f16/bf16 operands (as ``_summed``)."""
    return _accumulated(R.reduce_prod, x, axes)


def _accumulated(reducer: Callable[[Atom, Sequence[int]], Atom], x: Atom, axes: Sequence[int]) -> Atom:
    dtype = x.aval.dtype
    if _is_narrow_float(dtype):
        return E.convert(reducer(E.convert(x, _F32), axes), dtype)
    return reducer(x, axes)


def _reduce(name: str, reducer: Callable[[Atom, Sequence[int]], Atom], x: Any, axis: Axis, keepdims: bool) -> AnyTensor:
    t = as_tensor(x)
    axes = normalize_axes(name, axis, t)
    return wrap(_keep(t.atom, reducer(t.atom, axes), axes, keepdims))


@as_accumulating_reduction
@op
def sum(  # noqa: A001 - NumPy's name
    x: AnyTensor, axis: Axis = None, keepdims: bool = False, *, dtype: type[DType] | Any = None
) -> AnyTensor:
    """NumPy's ``sum``; ``dtype`` (keyword): the elements are converted to it and summed in it."""
    return _reduce("sum", _summed, _accumulator(x, dtype), axis, keepdims)


@as_accumulating_reduction
@op
def prod(x: AnyTensor, axis: Axis = None, keepdims: bool = False, *, dtype: type[DType] | Any = None) -> AnyTensor:
    """NumPy's ``prod``; ``dtype`` (keyword): the elements are converted to it and multiplied in it."""
    return _reduce("prod", _multiplied, _accumulator(x, dtype), axis, keepdims)


def _accumulator(x: Any, dtype: Any = None) -> AnyTensor:
    """The operand in the type it is accumulated in: ``dtype`` when given; else bools and integers narrower than
    32 bits in i32/u32, as JAX does (a u8 sum of 300 ones is 300, not 44), wider dtypes in their own type."""
    t = as_tensor(x)
    if dtype is not None:
        target = to_numpy(dtype)
        return t if t.aval.dtype == target else wrap(E.convert(t.atom, target))
    dtype = t.aval.dtype
    if dtype == _dt.BOOL:
        return wrap(E.convert(t.atom, _dt.DEFAULT_INT))
    if _dt.is_integer(dtype) and dtype.itemsize < 4:
        wide = np.dtype(np.int32) if _dt.is_signed(dtype) else np.dtype(np.uint32)
        return wrap(E.convert(t.atom, wide))
    return t


def _check_nonempty(name: str, x: AnyTensor, axes: tuple[int, ...]) -> None:
    if builtins.any(x.aval.shape[a] == 0 for a in axes):
        raise shape_error(name, f"{name} of an empty axis of {x.aval} has no identity")


@as_reduction
@op
def max(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:  # noqa: A001 - NumPy's name
    t = as_tensor(x)
    _check_nonempty("max", t, normalize_axes("max", axis, t))
    return _reduce("max", R.reduce_max, t, axis, keepdims)


@as_reduction
@op
def min(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:  # noqa: A001 - NumPy's name
    t = as_tensor(x)
    _check_nonempty("min", t, normalize_axes("min", axis, t))
    return _reduce("min", R.reduce_min, t, axis, keepdims)


amax = max
amin = min


def _count(x: AnyTensor, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= x.aval.shape[a]
    return n


def _in_float(op_name: str, x: Any, dtype: Any) -> Traced[Any]:
    """The operand of a mean or spread: converted to ``dtype`` when given (as NumPy's ``dtype=``: the computation
    and result type, which must be a float or complex), else a float or complex operand as it is."""
    if dtype is None:
        return inexact_operand(op_name, x)
    target = to_numpy(dtype)
    if not _dt.is_inexact(target):
        raise dtype_error(op_name, f"{op_name}(..., dtype={_dt.short_name(target)}): dtype must be a float dtype")
    return as_tensor(_accumulator(x, target))


@as_mean_reduction
@op
def mean(x: AnyTensor, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None) -> AnyTensor:
    """NumPy's mean; ``dtype=`` (a float dtype) converts first and computes in it, so integer data can be averaged
    (``tnp.mean(counts, dtype=f32)``). float16 and bfloat16 sum and divide in float32."""
    t = _in_float("mean", x, dtype)
    axes = normalize_axes("mean", axis, t)
    dtype = t.atom.aval.dtype
    if dtype.itemsize == 2:  # f16/bf16: sum and divide in f32 (JAX's upcast)
        wide = E.convert(t.atom, _F32)
        total = _keep(wide, R.reduce_sum(wide, axes), axes, keepdims)
        return wrap(E.convert(E.div(total, E.scalar(_count(t, axes), total)), dtype))
    total = _keep(t.atom, R.reduce_sum(t.atom, axes), axes, keepdims)
    return wrap(E.div(total, E.scalar(_count(t, axes), total)))


def _ddof(op_name: str, ddof: Any) -> float:
    """``ddof`` checked to be a real number (NumPy also takes fractional and negative ones)."""
    if not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op_name}: ddof must be a number, got {ddof!r:.60}")
    return float(ddof) if isinstance(ddof, (float, np.floating)) else int(ddof)


@op
def var(x: AnyTensor, axis: Axis = None, keepdims: bool = False, ddof: float = 0, *, dtype: Any = None) -> AnyTensor:
    """NumPy's variance (``ddof`` as NumPy's; ``dtype=`` as ``mean``'s)."""
    ddof = _ddof("var", ddof)
    t = _in_float("var", x, dtype)
    axes = normalize_axes("var", axis, t)
    centered = E.sub(t.atom, _broadcast_back(as_tensor(mean(t, axes, True)).atom, t.aval.shape, t.aval.dims))
    if _dt.is_complex(centered.aval.dtype):  # |x - mean|², real (NumPy's variance of complex data)
        re, im = C.real(centered), C.imag(centered)
        squared = E.add(E.mul(re, re), E.mul(im, im))
    else:
        squared = E.mul(centered, centered)
    squares = _keep(squared, _summed(squared, axes), axes, keepdims)
    return wrap(E.div(squares, E.scalar(builtins.max(_count(t, axes) - ddof, 0), squares)))  # NumPy: never < 0


def _broadcast_back(kept: Atom, shape: tuple[int, ...], dims: tuple[Any, ...]) -> Atom:
    """Stretch a keepdims result back to the operand's shape."""
    squeezed = [a for a, n in enumerate(kept.aval.shape) if n == 1 and shape[a] != 1]
    keep_axes = [a for a in range(len(shape)) if a not in squeezed]
    flat = S.reshape(kept, tuple(shape[a] for a in keep_axes), tuple(dims[a] for a in keep_axes))
    return S.broadcast_in_dim(flat, shape, tuple(keep_axes), dims)


@op
def std(x: AnyTensor, axis: Axis = None, keepdims: bool = False, ddof: float = 0, *, dtype: Any = None) -> AnyTensor:
    """NumPy's standard deviation (``ddof`` as NumPy's; ``dtype=`` as ``mean``'s)."""
    v = var(x, axis, keepdims, _ddof("std", ddof), dtype=dtype)
    return wrap(bind(E.sqrt_p, as_tensor(v).atom))


def _arg_reduce(name: str, prim: Any, x: Any, axis: int | type | None) -> AnyTensor:
    t = as_tensor(x)
    if axis is None:
        flat = S.reshape(t.atom, (t.aval.size,), (None,))
        t, index = wrap(flat), 0
    else:
        if isinstance(axis, (tuple, list)):
            raise shape_error(name, f"{name} takes one axis (an int or a Dim), got {axis!r}")
        (index,) = normalize_axes(name, axis, t, allow_none=False)
    _check_nonempty(name, t, (index,))
    return wrap(bind(prim, t.atom, axis=index, index_dtype=_dt.DEFAULT_INT))


@as_arg_reduction
@op
def argmax(x: AnyTensor, axis: int | type | None = None) -> AnyTensor:
    return _arg_reduce("argmax", R.argmax_p, x, axis)


@as_arg_reduction
@op
def argmin(x: AnyTensor, axis: int | type | None = None) -> AnyTensor:
    return _arg_reduce("argmin", R.argmin_p, x, axis)


def _bool_input(x: Any) -> Traced[Any]:
    t = as_tensor(x)
    if t.aval.dtype != _dt.BOOL:
        return wrap(bind(E.ne_p, t.atom, E.scalar(0, t.atom)))
    return t


@op
def all(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:  # noqa: A001 - NumPy's name
    return _reduce("all", R.reduce_min, _bool_input(x), axis, keepdims)


@op
def any(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:  # noqa: A001 - NumPy's name
    return _reduce("any", R.reduce_max, _bool_input(x), axis, keepdims)


@as_reduction
@op
def logsumexp(x: AnyTensor, axis: Axis = None, keepdims: bool = False) -> AnyTensor:
    """``log(sum(exp(x)))`` computed stably: the (finite) max is subtracted first and added back, so its
    gradient contributions cancel exactly."""
    t = float_operand("logsumexp", x)
    axes = normalize_axes("logsumexp", axis, t)
    peak = R.reduce_max(t.atom, axes)
    finite_peak = E.select(bind(E.is_finite_p, peak), peak, E.scalar(0, peak))
    peak_kept = _keep(t.atom, finite_peak, axes, True)
    shifted = E.sub(t.atom, _broadcast_back(peak_kept, t.aval.shape, t.aval.dims))
    total = R.reduce_sum(E.exp(shifted), axes)
    out = E.add(E.log(total), finite_peak)
    return wrap(_keep(t.atom, out, axes, keepdims))
