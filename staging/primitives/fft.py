"""fft: XLA's discrete Fourier transform over the trailing 1 to 3 axes (StableHLO's ``fft``).

``fft_type`` is one of ``FFT`` (complex to complex), ``IFFT`` (its inverse, scaled by 1/n as NumPy's ``ifft``),
``RFFT`` (real to the ``n // 2 + 1`` non-negative frequencies of its last axis) and ``IRFFT`` (back, to a real
signal of ``fft_length``). The transform is linear, so its tangent is the same transform of the tangent; the
cotangent rules transpose it under JAX's real pairing (see complex_parts): the DFT matrix is symmetric, so FFT and
IFFT are their own transposes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval, literal
from ..primitive import Primitive
from ..zeros import MaybeZero, Zero
from . import complex_parts as C
from . import elementwise as E
from . import slicing as SL
from . import structural as S

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = Primitive("fft")


def _trailing(x: Aval, k: int) -> tuple[int, ...]:
    return x.shape[x.ndim - k:]


@fft_p.def_shape
def _fft_shape(x: Aval, *, fft_type: str, fft_length: tuple[int, ...]) -> Aval:
    op = "fft"
    if fft_type not in FFT_TYPES:
        raise ShapeError(f"unknown fft_type {fft_type!r}; expected one of {FFT_TYPES}", op)
    k = len(fft_length)
    if not 1 <= k <= 3 or any(type(n) is not int or n < 1 for n in fft_length):
        raise ShapeError(f"fft_length must be 1 to 3 positive ints, got {fft_length}", op)
    if x.ndim < k:
        raise ShapeError(f"a {k}-d transform needs an operand of rank >= {k}, got {x}", op)
    if fft_type == "RFFT":
        if not dtypes.is_float(x.dtype) or dtypes.complex_dtype(x.dtype) is None:
            raise DTypeError(f"RFFT expects an f32 or f64 operand, got {x}", op)
    elif x.dtype not in dtypes.COMPLEX:
        raise DTypeError(f"{fft_type} expects a complex operand, got {x}", op)
    expected = fft_length[:-1] + (fft_length[-1] // 2 + 1,) if fft_type == "IRFFT" else fft_length
    if _trailing(x, k) != expected:
        raise ShapeError(f"{fft_type} of length {list(fft_length)} needs trailing axes {expected}, got {x}", op)
    if fft_type in ("FFT", "IFFT"):
        return x
    last = fft_length[-1] // 2 + 1 if fft_type == "RFFT" else fft_length[-1]
    out_dtype = dtypes.complex_dtype(x.dtype) if fft_type == "RFFT" else dtypes.real_dtype(x.dtype)
    # The last axis changes size: its name goes (it no longer measures the same thing).
    return Aval(x.shape[:-1] + (last,), out_dtype, x.dims[:-1] + (None,))  # type: ignore[arg-type]


def fft(x: Atom, fft_type: str, fft_length: Sequence[int]) -> Atom:
    return bind(fft_p, x, fft_type=fft_type, fft_length=tuple(int(n) for n in fft_length))  # type: ignore[no-any-return]


@fft_p.def_jvp
def _fft_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval) if isinstance(t, Zero) else bind(fft_p, t, **params),)


@fft_p.def_vjp
def _fft_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], *, fft_type: str,
    fft_length: tuple[int, ...],
) -> Any:
    (ct,) = cts
    x = primals[0]
    if isinstance(ct, Zero) or not wants[0]:
        return (Zero(x.aval),)
    if fft_type == "RFFT":
        return (_rfft_transpose(ct, fft_length),)
    if fft_type == "IRFFT":
        return (_irfft_transpose(ct, fft_length),)
    return (fft(ct, fft_type, fft_length),)


def _rfft_transpose(ct: Atom, fft_length: tuple[int, ...]) -> Atom:
    """RFFT is "convert to complex, FFT, keep the first n // 2 + 1 frequencies": its transpose zero-pads the
    cotangent back to n frequencies, applies the (symmetric) FFT and keeps the real part."""
    n = fft_length[-1]
    kept = ct.aval.shape[-1]
    config = [(0, 0, 0)] * (ct.aval.ndim - 1) + [(0, n - kept, 0)]
    padded = SL.pad(ct, E.scalar(0, ct), config)
    return C.real(fft(padded, "FFT", fft_length))


def _irfft_transpose(ct: Atom, fft_length: tuple[int, ...]) -> Atom:
    """IRFFT reads each frequency strictly between 0 and Nyquist twice (it and its mirror image): its transpose
    is the RFFT of the cotangent, scaled by 1/n and by 2 at those frequencies, conjugated (JAX's rule)."""
    spectrum = fft(ct, "RFFT", fft_length)
    m = spectrum.aval.shape[-1]
    n = fft_length[-1]
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0  # the Nyquist frequency has no mirror image
    weights /= math.prod(fft_length)
    aval = spectrum.aval
    scale = S.broadcast_in_dim(literal(weights, aval.dtype), aval.shape, (aval.ndim - 1,), aval.dims)
    return C.conj(E.mul(spectrum, scale))


@fft_p.def_batch
def _fft_batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
    """The transform works on trailing axes: the batch axis goes first."""
    (x,), (d,) = args, dims
    assert d is not None
    if d != 0:
        x = S.moveaxis(x, d, 0)
    return bind(fft_p, x, **params), 0
