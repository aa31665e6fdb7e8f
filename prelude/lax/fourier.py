"""``lax.fft``: XLA's FFT of an array's trailing axes (1 to 3 of them)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...staging.primitives import elementwise as E
from ...staging.primitives import fft as F
from ...tensor import Tensor
from ..numpy._core import as_tensor, dtype_error, op, wrap
from .settings import FftType

__all__ = ["fft"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _fft_type(value: FftType | str) -> FftType:
    if isinstance(value, FftType):
        return value
    if isinstance(value, str) and value.upper() in FftType.__members__ and value in (value.upper(), value.lower()):
        return FftType[value.upper()]
    raise TypeError(f"lax.fft: unknown FFT type {value!r}; use a lax.FftType or one of 'fft', 'ifft', 'rfft', 'irfft'")


def _fft_operand(x: Any, kind: FftType) -> Any:
    """``x`` in the dtype ``kind`` transforms, converted as JAX does (real to complex; integers to the default)."""
    t = as_tensor(x)
    dtype = t.aval.dtype
    if kind is FftType.RFFT:
        if _dt.is_complex(dtype):
            raise dtype_error("fft", f"lax.fft: RFFT takes real operands, got {t.aval}")
        target = dtype if _dt.is_float(dtype) else _dt.DEFAULT_FLOAT
    else:
        target = _dt.complex_dtype(dtype) or _dt.DEFAULT_COMPLEX  # a complex dtype is its own
    return t if target == dtype else wrap(E.convert(t.atom, target))


@op
def fft(x: AnyTensor, fft_type: FftType | str, fft_lengths: Sequence[int]) -> AnyTensor:
    """XLA's FFT of the trailing ``len(fft_lengths)`` axes (1 to 3): FFT, IFFT (scaled by 1/n), RFFT (real in,
    ``n // 2 + 1`` frequencies out) or IRFFT (back to ``fft_lengths[-1]`` real values)."""
    kind = _fft_type(fft_type)
    t = _fft_operand(x, kind)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    if not lengths:
        return t  # type: ignore[no-any-return]
    return wrap(F.fft(t.atom, kind.name, lengths))
