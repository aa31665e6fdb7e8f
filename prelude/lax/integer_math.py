"""``lax.mulhi``: the high half of integer products."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType
from ...staging import dtypes as _dt
from ...tensor import Tensor
from ..numpy._core import dtype_error, op, shape_error, wrap
from ._operands import strict_atoms
from .elementwise import shift_right_arithmetic, shift_right_logical
from .structural import convert_element_type

__all__ = ["mulhi"]

DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")


@op
def mulhi(x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | int) -> Tensor[DT, Unpack[S]]:
    """The high half of each integer product: the top N bits of the 2N-bit ``x * y`` (signed or unsigned)."""
    a, b = strict_atoms("mulhi", x, y)
    dtype = a.aval.dtype
    if not _dt.is_integer(dtype):
        raise dtype_error("mulhi", f"lax.mulhi needs integer operands, got {a.aval} and {b.aval}")
    if a.aval.shape and b.aval.shape and a.aval.shape != b.aval.shape:
        raise shape_error("mulhi", f"lax.mulhi requires operands of one shape (or rank 0), got {a.aval} and {b.aval}")
    bits = dtype.itemsize * 8
    if bits == 64:
        return _mulhi64(wrap(a), wrap(b), _dt.is_signed(dtype))  # type: ignore[no-any-return]
    # Narrower: the exact product fits 64 bits (wrapped as i64 for u32: its logical shift still reads it right).
    wide = np.dtype(np.int64)
    product = convert_element_type(wrap(a), wide) * convert_element_type(wrap(b), wide)
    shift = shift_right_arithmetic if _dt.is_signed(dtype) else shift_right_logical
    return convert_element_type(shift(product, bits), dtype)


def _mulhi64(x: Any, y: Any, signed: bool) -> Any:
    """The high 64 bits of the 128-bit product from four 32x32-bit partial products (i64 holds the u64 bits:
    products and sums wrap alike, and the shifts are logical)."""
    mask = 0xFFFFFFFF
    x_lo, x_hi = x & mask, shift_right_logical(x, 32)
    y_lo, y_hi = y & mask, shift_right_logical(y, 32)
    lo_lo, lo_hi, hi_lo = x_lo * y_lo, x_lo * y_hi, x_hi * y_lo
    cross = (lo_hi & mask) + (hi_lo & mask) + shift_right_logical(lo_lo, 32)
    high = (x_hi * y_hi + shift_right_logical(lo_hi, 32) + shift_right_logical(hi_lo, 32)
            + shift_right_logical(cross, 32))
    if signed:  # the unsigned product less y for a negative x and x for a negative y (mod 2^64)
        high = high + shift_right_arithmetic(x, 63) * y + shift_right_arithmetic(y, 63) * x
    return high
