"""Creating tensors: filled, ranges, identity, and ``*_like`` variants. Shapes are static."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, f32, to_numpy
from ...staging import dtypes as _dt
from ...staging.ir import Aval, literal
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import ShapeLike, as_tensor, op, parse_shape, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
F = TypeVar("F", bound=Callable[..., Any])
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


def _python(x: Any) -> Any:
    """NumPy scalars as Python ones (recursively in tuples and lists)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (tuple, list)):
        return type(x)(_python(i) for i in x)
    return x


def _static_op(fn: F) -> F:
    """An op whose arguments are all static (sizes, bounds, fill values): NumPy scalars among them (``x.shape[0]``
    of a NumPy array) are passed as Python scalars rather than staged as runtime inputs."""
    staged = op(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return staged(*_python(args), **{k: _python(v) if k != "dtype" else v for k, v in kwargs.items()})

    return cast(F, wrapper)


def _dtype(dtype: Any, default: np.dtype[Any] = _dt.DEFAULT_FLOAT) -> np.dtype[Any]:
    return default if dtype is None else to_numpy(dtype)


def full(shape: ShapeLike, fill_value: float | int | bool, dtype: type[DType] | Any = None) -> AnyTensor:
    if dtype is None and isinstance(fill_value, np.generic):
        dtype = fill_value.dtype  # NumPy: the fill value's dtype (lost once _static_op makes it a Python scalar)
    return _full(shape, fill_value, dtype)


@_static_op
def _full(shape: ShapeLike, fill_value: float | int | bool, dtype: type[DType] | Any) -> AnyTensor:
    sizes, names = parse_shape("full", shape)
    if type(fill_value) not in (int, float, bool) and not isinstance(fill_value, (np.number, np.bool_)):
        raise TypeError(f"full: fill_value must be a Python or NumPy scalar, got {fill_value!r}")
    if dtype is None:
        dtype = _dt.BOOL if type(fill_value) is bool else _dt.DEFAULT_INT if type(fill_value) is int else None
    target = _dtype(dtype)
    return wrap(S.full_like(Aval(sizes, target, names), fill_value))


@_filled
@_static_op
def zeros(shape: ShapeLike, dtype: type[DType] | Any = None) -> AnyTensor:
    sizes, names = parse_shape("zeros", shape)
    return wrap(S.full_like(Aval(sizes, _dtype(dtype), names), 0))


@_filled
@_static_op
def ones(shape: ShapeLike, dtype: type[DType] | Any = None) -> AnyTensor:
    sizes, names = parse_shape("ones", shape)
    return wrap(S.full_like(Aval(sizes, _dtype(dtype), names), 1))


@op
def full_like(x: AnyTensor, fill_value: float | int | bool, dtype: type[DType] | Any = None) -> AnyTensor:
    aval = as_tensor(x).aval
    return wrap(S.full_like(aval.with_dtype(_dtype(dtype, aval.dtype)), fill_value))


@_filled_like
def zeros_like(x: AnyTensor, dtype: type[DType] | Any = None) -> AnyTensor:
    return full_like(x, 0, dtype)


@_filled_like
def ones_like(x: AnyTensor, dtype: type[DType] | Any = None) -> AnyTensor:
    return full_like(x, 1, dtype)


@_static_op
def arange(start: int | float, stop: int | float | None = None, step: int | float = 1,
           dtype: type[DType] | Any = None) -> AnyTensor:
    if start is None:
        raise TypeError("arange: start (or stop, when alone) must be a number, got None")
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, step)
    default = _dt.DEFAULT_FLOAT if values.dtype.kind == "f" else _dt.DEFAULT_INT
    target = _dtype(dtype, default)
    if values.size and _dt.is_integer(target) and values.dtype.kind in "iu":
        info = np.iinfo(target)
        low, high = int(np.min(values)), int(np.max(values))
        if low < info.min or high > info.max:
            raise shape_error("arange", f"values from {low} to {high} do not fit {_dt.short_name(target)}")
    return wrap(literal(values, target))


@_static_op
def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             dtype: type[DType] | Any = None) -> AnyTensor:
    return wrap(literal(np.linspace(start, stop, num, endpoint=endpoint), _dtype(dtype)))


@_static_op
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
