"""Creating tensors: filled, ranges, identity, and ``*_like`` variants. Shapes are static."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, f32, to_numpy
from ...staging import dtypes as _dt
from ...staging.ir import Atom, Aval, literal
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import ShapeLike, _python_values, as_tensor, describe, op, parse_shape, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
R = TypeVar("R")
DT2 = TypeVar("DT2", bound=DType)
Sh = TypeVarTuple("Sh")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
AnyShape = tuple[Any, ...]


class Filled(Protocol):
    """``zeros`` / ``ones``: a shape of Dim classes (with fixed sizes) types the result's dims."""

    @overload
    def __call__(self, shape: tuple[type[A]], dtype: type[DT]) -> Tensor[DT, A]: ...
    @overload
    def __call__(self, shape: tuple[type[A], type[B]], dtype: type[DT]) -> Tensor[DT, A, B]: ...
    @overload
    def __call__(self, shape: tuple[type[A], type[B], type[C]], dtype: type[DT]) -> Tensor[DT, A, B, C]: ...
    @overload
    def __call__(self, shape: ShapeLike, dtype: type[DT]) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, shape: ShapeLike, dtype: None = None) -> Tensor[f32, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, shape: ShapeLike, dtype: Any) -> Tensor[Any, Unpack[AnyShape]]: ...


class FilledLike(Protocol):
    """``zeros_like`` / ``ones_like``: the operand's type, or its shape with another dtype."""

    @overload
    def __call__(self, x: Tensor[DT, Unpack[Sh]], dtype: None = None) -> Tensor[DT, Unpack[Sh]]: ...
    @overload
    def __call__(self, x: Tensor[Any, Unpack[Sh]], dtype: type[DT2]) -> Tensor[DT2, Unpack[Sh]]: ...
    @overload
    def __call__(self, x: Tensor[Any, Unpack[Sh]], dtype: Any) -> Tensor[Any, Unpack[Sh]]: ...


def _filled(fn: Callable[..., Any]) -> Filled:
    """Identity at run time: gives the implementation its public overloads."""
    return fn


def _filled_like(fn: Callable[..., Any]) -> FilledLike:
    return fn


def _dtype(dtype: Any, default: np.dtype[Any] = _dt.DEFAULT_FLOAT) -> np.dtype[Any]:
    return default if dtype is None else to_numpy(dtype)


def full(shape: ShapeLike, fill_value: Any, dtype: type[DType] | Any = None) -> AnyTensor:
    """A tensor of ``fill_value``; an array fill value (host or tensor) is broadcast to ``shape``, as in NumPy."""
    if isinstance(fill_value, (Tensor, np.ndarray, list, tuple)):
        return _full_array(shape, array(fill_value, dtype))
    if dtype is None and isinstance(fill_value, np.generic):
        dtype = fill_value.dtype  # NumPy: the fill value's dtype (lost once op makes it a Python scalar)
    return _full(shape, fill_value, dtype)


@op
def _full_array(shape: ShapeLike, fill: AnyTensor) -> AnyTensor:
    sizes, names = parse_shape("full", shape)
    return wrap(S.broadcast_to(_broadcastable("full", fill, sizes), Aval(sizes, fill.aval.dtype, names)))


def _broadcastable(op_name: str, x: AnyTensor, sizes: tuple[int, ...]) -> Atom:
    """``x`` with its leading axes added, checked to broadcast to ``sizes`` by NumPy's rules."""
    shape = x.aval.shape
    if len(shape) > len(sizes) or any(n not in (1, m) for n, m in zip(shape[::-1], sizes[::-1])):
        raise shape_error(op_name, f"cannot broadcast {describe(x)} to {sizes}")
    return S.reshape(as_tensor(x).atom, (1,) * (len(sizes) - len(shape)) + shape)


@op
def _full(shape: ShapeLike, fill_value: complex, dtype: type[DType] | Any) -> AnyTensor:
    sizes, names = parse_shape("full", shape)
    if type(fill_value) not in (int, float, bool, complex) and not isinstance(fill_value, (np.number, np.bool_)):
        raise TypeError(f"full: fill_value must be a Python or NumPy scalar, got {fill_value!r}")
    if dtype is None:
        dtype = _dt.BOOL if type(fill_value) is bool else _dt.DEFAULT_INT if type(fill_value) is int else None
        dtype = _dt.DEFAULT_COMPLEX if type(fill_value) is complex else dtype
    target = _dtype(dtype)
    if type(fill_value) is complex and not _dt.is_complex(target):
        raise TypeError(f"full: complex fill_value {fill_value!r} for dtype {_dt.short_name(target)} (it would drop "
                        "the imaginary part)")
    return wrap(S.full_like(Aval(sizes, target, names), fill_value))


@_filled
@op
def zeros(shape: ShapeLike, dtype: type[DType] | Any = None) -> AnyTensor:
    sizes, names = parse_shape("zeros", shape)
    return wrap(S.full_like(Aval(sizes, _dtype(dtype), names), 0))


@_filled
@op
def ones(shape: ShapeLike, dtype: type[DType] | Any = None) -> AnyTensor:
    sizes, names = parse_shape("ones", shape)
    return wrap(S.full_like(Aval(sizes, _dtype(dtype), names), 1))


@op
def full_like(
    x: AnyTensor, fill_value: float | int | bool, dtype: type[DType] | Any = None, shape: ShapeLike | None = None
) -> AnyTensor:
    """A tensor like ``x`` (its dtype, shape and dim names) filled with ``fill_value``; ``shape=`` overrides the
    shape (with no dim names), as in NumPy."""
    aval = as_tensor(x).aval.with_dtype(_dtype(dtype, as_tensor(x).aval.dtype))
    if shape is not None:
        sizes, names = parse_shape("full_like", shape)
        aval = Aval(sizes, aval.dtype, names)
    return wrap(S.full_like(aval, fill_value))


@_filled_like
def zeros_like(x: AnyTensor, dtype: type[DType] | Any = None, shape: ShapeLike | None = None) -> AnyTensor:
    return full_like(x, 0, dtype, shape)


@_filled_like
def ones_like(x: AnyTensor, dtype: type[DType] | Any = None, shape: ShapeLike | None = None) -> AnyTensor:
    return full_like(x, 1, dtype, shape)


@_filled
def empty(shape: ShapeLike, dtype: type[DType] | Any = None) -> AnyTensor:
    """``zeros``: arrays are immutable, so uninitialized memory would be of no use (and not deterministic)."""
    return zeros(shape, dtype)


@_filled_like
def empty_like(x: AnyTensor, dtype: type[DType] | Any = None, shape: ShapeLike | None = None) -> AnyTensor:
    """``zeros_like``, as ``empty`` is ``zeros``."""
    return full_like(x, 0, dtype, shape)


@op
def arange(start: int | float, stop: int | float | None = None, step: int | float = 1,
           dtype: type[DType] | Any = None) -> AnyTensor:
    if start is None:
        raise TypeError("arange: start (or stop, when alone) must be a number, got None")
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, step)
    default = _dt.DEFAULT_FLOAT if values.dtype.kind == "f" else _dt.DEFAULT_INT
    target = _dtype(dtype, default)
    if target == _dt.BOOL and values.size > 2:
        raise TypeError(f"arange: a bool result can have at most 2 elements, not {values.size} (as in NumPy)")
    if values.size and _dt.is_integer(target) and values.dtype.kind in "iu":
        info = np.iinfo(target)
        low, high = int(np.min(values)), int(np.max(values))
        if low < info.min or high > info.max:
            raise shape_error("arange", f"values from {low} to {high} do not fit {_dt.short_name(target)}")
    return wrap(literal(values, target))


@overload
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: Literal[False] = False,
             dtype: type[DType] | Any = None, axis: int = 0) -> AnyTensor: ...
@overload
def linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: Literal[True],
             dtype: type[DType] | Any = None, axis: int = 0) -> tuple[AnyTensor, AnyTensor]: ...
@overload
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, *, retstep: Literal[True],
             dtype: type[DType] | Any = None, axis: int = 0) -> tuple[AnyTensor, AnyTensor]: ...
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: type[DType] | Any = None, axis: int = 0) -> AnyTensor | tuple[AnyTensor, AnyTensor]:
    """NumPy's linspace (array ``start``/``stop`` too, their samples along ``axis``); integer dtypes floor the
    samples as NumPy does. With ``retstep`` it also gives the step, as a tensor of the float type used."""
    samples: AnyTensor | tuple[AnyTensor, AnyTensor] = _linspace(
        _hashable(start), _hashable(stop), _python_values(num), endpoint, retstep, dtype, _python_values(axis)
    )
    return samples


def _hashable(x: Any) -> Any:
    """Host bounds as static Python values (arrays as nested tuples); tensors stay tensors."""
    if isinstance(x, np.ndarray):
        return _hashable(x.tolist())
    if isinstance(x, (tuple, list)):
        return tuple(_hashable(v) for v in x)
    return _python_values(x)


@op
def _linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, dtype: Any, axis: int) -> Any:
    if num < 0:
        raise ValueError(f"linspace: number of samples {num} must be non-negative")
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        return _linspace_staged(start, stop, num, endpoint, retstep, _dtype_of_bounds(dtype, start, stop), axis)
    target = _dtype(dtype)
    work = target if _dt.is_integer(target) else None  # NumPy floors integer samples
    values, step = np.linspace(start, stop, num, endpoint, retstep=True, dtype=work, axis=axis)
    samples = wrap(literal(np.asarray(values), target))
    return (samples, wrap(literal(np.asarray(step), _step_dtype(target)))) if retstep else samples


def _step_dtype(target: np.dtype[Any]) -> np.dtype[Any]:
    return target if _dt.is_float(target) else _dt.DEFAULT_FLOAT


def _dtype_of_bounds(dtype: Any, *bounds: Any) -> np.dtype[Any]:
    """``dtype``, else the float type of the tensor bounds (f32 for integer ones)."""
    floats = [b.aval.dtype for b in bounds if isinstance(b, Tensor) and _dt.is_float(b.aval.dtype)]
    return _dtype(dtype, floats[0] if floats else _dt.DEFAULT_FLOAT)


def _linspace_staged(
    start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, target: np.dtype[Any], axis: int
) -> Any:
    """Samples ``start + k * step`` stacked on a new leading axis (moved to ``axis``), the last one exactly
    ``stop`` when ``endpoint``: NumPy's formula."""
    from .joining import concatenate
    from .rearranging import broadcast_arrays
    from .shaping import expand_dims, moveaxis
    from .ufuncs import astype, floor

    work = _step_dtype(target)
    lo, hi = broadcast_arrays(*(astype(array(b), work) for b in (start, stop)))
    div = num - 1 if endpoint else num
    step = (hi - lo) / div if div > 0 else (hi - lo) * np.nan
    k = wrap(literal(np.arange(num, dtype=work).reshape((num,) + (1,) * lo.aval.ndim), work))
    samples = k * expand_dims(step if div > 0 else hi - lo, 0) + expand_dims(lo, 0)  # num == 1: just ``start``
    if endpoint and num > 1:
        samples = concatenate([samples[: num - 1], expand_dims(hi, 0)], 0)
    samples = astype(floor(samples) if _dt.is_integer(target) else samples, target)
    samples = moveaxis(samples, 0, axis)
    return (samples, step) if retstep else samples


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: type[DType] | Any = None, axis: int = 0) -> AnyTensor:
    """``base ** linspace(start, stop, ...)``, computed on the host (NumPy's values) for static bounds."""
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        from .ufuncs import astype, power

        samples = linspace(start, stop, num, endpoint, dtype=_step_dtype(_dtype(dtype)), axis=axis)
        return astype(power(astype(as_tensor(base), samples.aval.dtype), samples), _dtype(dtype))
    return _host_space("logspace", np.logspace, start, stop, num, endpoint, dtype, axis, base=base)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              dtype: type[DType] | Any = None, axis: int = 0) -> AnyTensor:
    """NumPy's geomspace of static bounds (a geometric sequence; NumPy's values, signs and exact ends)."""
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        raise TypeError("geomspace: start and stop must be static (Python or NumPy values), not tensors")
    return _host_space("geomspace", np.geomspace, start, stop, num, endpoint, dtype, axis)


def _host_space(name: str, fn: Callable[..., Any], start: Any, stop: Any, num: int, endpoint: bool, dtype: Any,
                axis: int, **extra: Any) -> AnyTensor:
    target = _dtype(dtype)
    try:
        values = fn(start, stop, num, endpoint, dtype=target if _dt.is_integer(target) else None, axis=axis, **extra)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None
    if np.iscomplexobj(values):
        raise TypeError(f"{name}: complex results are not supported (bounds {start!r}, {stop!r})")
    return array(np.asarray(values).astype(target))


@overload
def indices(
    dimensions: Sequence[int], dtype: type[DType] | Any = None, sparse: Literal[False] = False
) -> AnyTensor: ...
@overload
def indices(
    dimensions: Sequence[int], dtype: type[DType] | Any = None, *, sparse: Literal[True]
) -> tuple[AnyTensor, ...]: ...
@op
def indices(
    dimensions: Sequence[int], dtype: type[DType] | Any = None, sparse: bool = False
) -> AnyTensor | tuple[AnyTensor, ...]:
    """NumPy's indices (a stacked array, or a tuple when ``sparse``); the default dtype is i32."""
    target = _dtype(dtype, _dt.DEFAULT_INT)
    if sparse:
        return tuple(wrap(literal(g, target)) for g in np.indices(tuple(dimensions), dtype=target, sparse=True))
    return wrap(literal(np.indices(tuple(dimensions), dtype=target), target))


def fromfunction(function: Callable[..., R], shape: Sequence[int], *, dtype: type[DType] | Any = None,
                 **kwargs: Any) -> R:
    """``function(*indices)`` with one index tensor per axis of ``shape`` (of ``dtype``, f32 by default)."""
    grids: AnyTensor = indices(shape, _dtype(dtype))
    return function(*(grids[i] for i in range(len(shape))), **kwargs)


@op
def eye(n: int, m: int | None = None, k: int = 0, dtype: type[DType] | Any = None) -> AnyTensor:
    return wrap(literal(np.eye(n, m, k), _dtype(dtype)))


def array(x: Any, dtype: type[DType] | Any = None) -> AnyTensor:
    """A tensor from a nested list, NumPy array or tensor (a constant when staging, a device array otherwise)."""
    from ...array import asarray
    from ...staging.builder import is_staging

    if isinstance(x, Tensor):
        return x if dtype is None else _astype(x, dtype)
    if is_staging():
        return _array(x, dtype)
    return asarray(x, dtype)


@op
def _array(x: Any, dtype: type[DType] | Any) -> AnyTensor:
    """A host value as a graph constant (the op wrapper names ``array`` in errors about ``x``), of the dtype the
    eager ``asarray`` gives it: Python ints and floats are i32 and f32 here too."""
    from ...array import as_host_array

    host = as_host_array(x) if dtype is None else np.asarray(x)
    return wrap(literal(host, _dtype(dtype, host.dtype)))


def _astype(x: AnyTensor, dtype: Any) -> AnyTensor:
    from .ufuncs import astype

    return astype(x, dtype)


asarray = array
