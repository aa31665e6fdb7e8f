"""Nominal dtype classes. They are types (for the checker) and carry their numpy dtype (for staging).

The class hierarchy lets signatures ask for a category: ``Tensor[Floating, ...]`` for ``exp``, ``Integer`` for
indices.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .staging import dtypes as _dt


class DType:
    """Base of all element types; never instantiated."""

    numpy: ClassVar[np.dtype[Any]]
    dtype: ClassVar[np.dtype[Any]]  # the same, under the name NumPy reads: np.dtype(f32) is float32

    def __init__(self) -> None:
        raise TypeError("dtype classes are types, not values: use f32, not f32()")


class Number(DType):
    pass


class Inexact(Number):
    """Floating-point and complex: the values that carry derivatives."""


class Floating(Inexact):
    pass


class Complex(Inexact):
    """Complex numbers; their real and imaginary parts are floats of half the width."""


class Integer(Number):
    pass


class Signed(Integer):
    pass


class Unsigned(Integer):
    pass


class Bool(DType):
    pass


class f16(Floating):
    numpy = np.dtype(np.float16)


class bf16(Floating):
    numpy = _dt.bfloat16


class f32(Floating):
    numpy = np.dtype(np.float32)


class f64(Floating):
    numpy = np.dtype(np.float64)


class c64(Complex):
    numpy = np.dtype(np.complex64)


class c128(Complex):
    numpy = np.dtype(np.complex128)


class i8(Signed):
    numpy = np.dtype(np.int8)


class i16(Signed):
    numpy = np.dtype(np.int16)


class i32(Signed):
    numpy = np.dtype(np.int32)


class i64(Signed):
    numpy = np.dtype(np.int64)


class u8(Unsigned):
    numpy = np.dtype(np.uint8)


class u16(Unsigned):
    numpy = np.dtype(np.uint16)


class u32(Unsigned):
    numpy = np.dtype(np.uint32)


class u64(Unsigned):
    numpy = np.dtype(np.uint64)


class bool_(Bool):
    numpy = np.dtype(np.bool_)


ALL: tuple[type[DType], ...] = (f16, bf16, f32, f64, c64, c128, i8, i16, i32, i64, u8, u16, u32, u64, bool_)
for _cls in ALL:
    _cls.dtype = _cls.numpy
_BY_NUMPY: dict[np.dtype[Any], type[DType]] = {cls.numpy: cls for cls in ALL}


def to_numpy(dtype: object) -> np.dtype[Any]:
    """The canonical np.dtype for a dtype class, np.dtype, numpy scalar type or name."""
    if isinstance(dtype, type) and issubclass(dtype, DType):
        if not hasattr(dtype, "numpy"):
            raise TypeError(f"{dtype.__name__} is a dtype category, not a concrete dtype")
        return dtype.numpy
    if dtype is float:
        return _dt.DEFAULT_FLOAT
    if dtype is int:
        return _dt.DEFAULT_INT
    if dtype is bool:
        return _dt.BOOL
    if dtype is complex:
        return _dt.DEFAULT_COMPLEX
    return _dt.canonical(dtype)


def from_numpy(dtype: np.dtype[Any]) -> type[DType]:
    return _BY_NUMPY[dtype]
