"""``tnp.fft``: NumPy's ``numpy.fft`` on XLA's FFT.

Transforms take NumPy's arguments (``n`` / ``s`` zero-pad or truncate the input, ``axis`` / ``axes``, ``norm`` of
``"backward"``, ``"ortho"`` or ``"forward"``). Results are complex64 for f32 or c64 input and complex128 for f64 or
c128 (``rfft`` needs real input: f32 or f64). Where NumPy converts other input, tensorstage refuses it as its
other float functions do (``tnp.sin`` of an int tensor is an error too): integer and bool tensors, and f16/bf16
(no complex type of their width), need ``.astype(f32)`` first. Axes may not repeat (NumPy transforms a repeated
axis twice). ``fftfreq`` and ``rfftfreq`` give float32 unless ``dtype=`` says otherwise.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, c64, c128, f32, f64, to_numpy
from ...staging import dtypes as _dt
from ...staging.ir import Atom
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import fft as F
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import as_tensor, dtype_error, normalize_axes, op, shape_error, wrap

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft", "irfft",
    "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]

DT = TypeVar("DT", bound=DType)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Norm = Literal["backward", "ortho", "forward"] | None
Axis = int | type[Dim]
Axes = Sequence[int | type[Dim]] | None
Lengths = Sequence[int] | None

_MAX_AXES_PER_OP = 3  # XLA's FFT transforms at most the 3 trailing axes at once


# ------------------------------------------------------------------------------------------------ checks


def _norm(name: str, norm: Any) -> str:
    if norm is None:
        return "backward"
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f'{name}: norm must be "backward", "ortho" or "forward" (or None), got {norm!r}')
    return str(norm)


def _length(name: str, n: Any) -> int:
    if isinstance(n, bool) or isinstance(n, Tensor):
        raise TypeError(f"{name}: the number of points must be a static int, got {n!r:.60}")
    value = operator.index(n)
    if value < 1:
        raise ValueError(f"{name}: invalid number of FFT data points ({value}); it must be at least 1")
    return value


def _complex_operand(name: str, x: Any) -> Atom:
    """``x`` as complex: f32 as c64 and f64 as c128 (NumPy converts real input too)."""
    t = as_tensor(x)
    dtype = t.aval.dtype
    if dtype in _dt.COMPLEX:
        return t.atom
    wide = _dt.complex_dtype(dtype) if _dt.is_float(dtype) else None
    if wide is None:
        raise dtype_error(name, f"{name} needs an f32, f64, c64 or c128 operand, got {t.aval}; convert it with "
                                ".astype(f32)")
    return E.convert(t.atom, wide)


def _real_operand(name: str, x: Any) -> Atom:
    t = as_tensor(x)
    dtype = t.aval.dtype
    if dtype in _dt.COMPLEX:
        raise dtype_error(name, f"{name} needs a real operand, got {t.aval}: take .real, or use fft")
    if not _dt.is_float(dtype) or _dt.complex_dtype(dtype) is None:
        raise dtype_error(name, f"{name} needs an f32 or f64 operand, got {t.aval}; convert it with .astype(f32)")
    return t.atom


def _axes_and_lengths(
    name: str, x: Atom, s: Lengths, axes: Axes, default_axes: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """NumPy's rules: ``axes`` default to the last ``len(s)`` axes when ``s`` is given, else to every axis (or
    ``default_axes``); ``s`` and ``axes`` must pair up. Lengths are None where ``s`` is."""
    t = wrap(x)
    if axes is None:
        if s is not None:
            if len(s) > x.aval.ndim:
                raise shape_error(name, f"s={tuple(s)} has more entries than the operand {t.aval} has axes")
            chosen = tuple(range(x.aval.ndim - len(s), x.aval.ndim))
        elif default_axes is not None:
            chosen = normalize_axes(name, default_axes, t)
        else:
            chosen = tuple(range(x.aval.ndim))
    else:
        if isinstance(axes, (int, type)):
            raise TypeError(f"{name}: axes must be a sequence of axes, got {axes!r}")
        chosen = normalize_axes(name, tuple(axes), t)
    if not chosen:
        raise shape_error(name, f"needs at least one axis to transform, got {t.aval}")
    if s is None:
        return chosen, None
    lengths = tuple(_length(name, n) for n in s)
    if len(lengths) != len(chosen):
        raise ValueError(f"{name}: s={tuple(s)} and axes={chosen} have different lengths")
    return chosen, lengths


# --------------------------------------------------------------------------------------------- building


def _resized(x: Atom, axis: int, n: int) -> Atom:
    """``x`` truncated or zero-padded to ``n`` entries along ``axis``."""
    size = x.aval.shape[axis]
    if n == size:
        return x
    if n < size:
        return SL.slice_in_dim(x, 0, n, axis)
    config = [(0, 0, 0)] * x.aval.ndim
    config[axis] = (0, n - size, 0)
    return SL.pad(x, E.scalar(0, x), config)


def _transform(x: Atom, kind: str, axes: tuple[int, ...], lengths: tuple[int, ...]) -> Atom:
    """XLA's ``kind`` transform over ``axes`` (the real axis of RFFT/IRFFT last), moving them to the end and
    back. More than 3 axes take several ops: the complex axes first for IRFFT, last for RFFT."""
    if len(axes) > _MAX_AXES_PER_OP:
        split = len(axes) - _MAX_AXES_PER_OP
        head, tail = axes[:split], axes[split:]
        complex_kind = "IFFT" if kind == "IRFFT" else "FFT" if kind == "RFFT" else kind
        if kind == "IRFFT":
            x = _transform(x, complex_kind, head, lengths[:split])
            return _transform(x, kind, tail, lengths[split:])
        x = _transform(x, kind, tail, lengths[split:])
        return _transform(x, complex_kind, head, lengths[:split])
    ndim = x.aval.ndim
    perm = tuple([a for a in range(ndim) if a not in axes] + list(axes))
    moved = x if perm == tuple(range(ndim)) else S.transpose(x, perm)
    out = F.fft(moved, kind, lengths)
    return out if perm == tuple(range(ndim)) else S.transpose(out, S.inverse_permutation(perm))


def _scaled(x: Atom, norm: str, count: int, forward: bool) -> Atom:
    """NumPy's normalizations; XLA's inverse transforms already divide by the number of points."""
    if norm == "backward":
        return x
    factor = 1 / math.sqrt(count) if norm == "ortho" else 1 / count
    if not forward:
        factor = 1 / factor
    return E.mul(x, E.scalar(factor, x))


def _complex_nd(name: str, a: Any, s: Lengths, axes: Axes, norm: Norm, inverse: bool,
                default_axes: tuple[int, ...] | None = None) -> AnyTensor:
    how = _norm(name, norm)
    x = _complex_operand(name, a)
    chosen, lengths = _axes_and_lengths(name, x, s, axes, default_axes)
    if lengths is None:
        lengths = tuple(x.aval.shape[i] for i in chosen)
        for n in lengths:
            _length(name, n)
    for axis, n in zip(chosen, lengths):
        x = _resized(x, axis, n)
    out = _transform(x, "IFFT" if inverse else "FFT", chosen, lengths)
    return wrap(_scaled(out, how, math.prod(lengths), not inverse))


def _real_nd(name: str, a: Any, s: Lengths, axes: Axes, norm: Norm,
             default_axes: tuple[int, ...] | None = None) -> AnyTensor:
    how = _norm(name, norm)
    x = _real_operand(name, a)
    chosen, lengths = _axes_and_lengths(name, x, s, axes, default_axes)
    if lengths is None:
        lengths = tuple(x.aval.shape[i] for i in chosen)
        for n in lengths:
            _length(name, n)
    for axis, n in zip(chosen, lengths):
        x = _resized(x, axis, n)
    out = _transform(x, "RFFT", chosen, lengths)
    return wrap(_scaled(out, how, math.prod(lengths), True))


def _inverse_real_nd(name: str, a: Any, s: Lengths, axes: Axes, norm: Norm,
                     default_axes: tuple[int, ...] | None = None) -> AnyTensor:
    how = _norm(name, norm)
    x = _complex_operand(name, a)
    chosen, lengths = _axes_and_lengths(name, x, s, axes, default_axes)
    if lengths is None:  # the last axis holds n // 2 + 1 frequencies of an even-length signal, as NumPy assumes
        lengths = tuple(x.aval.shape[i] for i in chosen[:-1]) + (2 * (x.aval.shape[chosen[-1]] - 1),)
        for n in lengths:
            _length(name, n)
    for axis, n in zip(chosen[:-1], lengths[:-1]):
        x = _resized(x, axis, n)
    x = _resized(x, chosen[-1], lengths[-1] // 2 + 1)
    out = _transform(x, "IRFFT", chosen, lengths)
    return wrap(_scaled(out, how, math.prod(lengths), False))


def _one(name: str, n: int | None) -> tuple[int] | None:
    return None if n is None else (_length(name, n),)


def _one_axis(axis: Axis) -> tuple[Axis]:
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"axis must be one int or Dim, got {axis!r} (use the n-d functions for several)")
    return (axis,)


def _swapped(name: str, norm: Norm) -> Norm:
    """hfft and ihfft are irfft and rfft in the other direction: their normalizations swap."""
    how = _norm(name, norm)
    return "forward" if how == "backward" else "backward" if how == "forward" else "ortho"


# ------------------------------------------------------------------------------------------ transforms


@overload
def fft(a: Tensor[c64, Unpack[Shape]] | Tensor[f32, Unpack[Shape]], n: None = None, axis: Axis = -1,
        norm: Norm = None) -> Tensor[c64, Unpack[Shape]]: ...
@overload
def fft(a: Tensor[c128, Unpack[Shape]] | Tensor[f64, Unpack[Shape]], n: None = None, axis: Axis = -1,
        norm: Norm = None) -> Tensor[c128, Unpack[Shape]]: ...
@overload
def fft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor: ...
@op
def fft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The 1-d discrete Fourier transform along ``axis`` (``n`` points: the input truncated or zero-padded)."""
    return _complex_nd("fft", a, _one("fft", n), _one_axis(axis), norm, inverse=False)


@overload
def ifft(a: Tensor[c64, Unpack[Shape]] | Tensor[f32, Unpack[Shape]], n: None = None, axis: Axis = -1,
         norm: Norm = None) -> Tensor[c64, Unpack[Shape]]: ...
@overload
def ifft(a: Tensor[c128, Unpack[Shape]] | Tensor[f64, Unpack[Shape]], n: None = None, axis: Axis = -1,
         norm: Norm = None) -> Tensor[c128, Unpack[Shape]]: ...
@overload
def ifft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor: ...
@op
def ifft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The inverse of ``fft`` (scaled by 1/n under the default ``norm``)."""
    return _complex_nd("ifft", a, _one("ifft", n), _one_axis(axis), norm, inverse=True)


@op
def rfft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequencies along ``axis``."""
    return _real_nd("rfft", a, _one("rfft", n), _one_axis(axis), norm)


@op
def irfft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The real signal of ``n`` points (default ``2 * (m - 1)``) whose ``rfft`` is ``a``."""
    return _inverse_real_nd("irfft", a, _one("irfft", n), _one_axis(axis), norm)


@op
def hfft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The transform of a signal with Hermitian symmetry (given by its first half): a real spectrum of ``n``."""
    conjugated = wrap(C.conj(_complex_operand("hfft", a)))
    return _inverse_real_nd("hfft", conjugated, _one("hfft", n), _one_axis(axis), _swapped("hfft", norm))


@op
def ihfft(a: AnyTensor, n: int | None = None, axis: Axis = -1, norm: Norm = None) -> AnyTensor:
    """The inverse of ``hfft``: the first half of the Hermitian-symmetric transform of a real signal."""
    out = _real_nd("ihfft", a, _one("ihfft", n), _one_axis(axis), _swapped("ihfft", norm))
    return wrap(C.conj(as_tensor(out).atom))


@op
def fftn(a: AnyTensor, s: Lengths = None, axes: Axes = None, norm: Norm = None) -> AnyTensor:
    """The n-d transform over ``axes`` (every axis by default; the last ``len(s)`` when only ``s`` is given)."""
    return _complex_nd("fftn", a, s, axes, norm, inverse=False)


@op
def ifftn(a: AnyTensor, s: Lengths = None, axes: Axes = None, norm: Norm = None) -> AnyTensor:
    return _complex_nd("ifftn", a, s, axes, norm, inverse=True)


@op
def rfftn(a: AnyTensor, s: Lengths = None, axes: Axes = None, norm: Norm = None) -> AnyTensor:
    """The n-d transform of a real signal: the last of ``axes`` keeps its non-negative frequencies."""
    return _real_nd("rfftn", a, s, axes, norm)


@op
def irfftn(a: AnyTensor, s: Lengths = None, axes: Axes = None, norm: Norm = None) -> AnyTensor:
    return _inverse_real_nd("irfftn", a, s, axes, norm)


_LAST_TWO = (-2, -1)


@op
def fft2(a: AnyTensor, s: Lengths = None, axes: Axes = _LAST_TWO, norm: Norm = None) -> AnyTensor:
    return _complex_nd("fft2", a, s, axes, norm, inverse=False)


@op
def ifft2(a: AnyTensor, s: Lengths = None, axes: Axes = _LAST_TWO, norm: Norm = None) -> AnyTensor:
    return _complex_nd("ifft2", a, s, axes, norm, inverse=True)


@op
def rfft2(a: AnyTensor, s: Lengths = None, axes: Axes = _LAST_TWO, norm: Norm = None) -> AnyTensor:
    return _real_nd("rfft2", a, s, axes, norm)


@op
def irfft2(a: AnyTensor, s: Lengths = None, axes: Axes = _LAST_TWO, norm: Norm = None) -> AnyTensor:
    return _inverse_real_nd("irfft2", a, s, axes, norm)


# --------------------------------------------------------------------------------- frequencies and shifts


def fftfreq(n: int, d: float = 1.0, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The sample frequencies of an ``n``-point ``fft``: ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)``."""
    count = _length("fftfreq", n)
    cycles = np.concatenate([np.arange((count - 1) // 2 + 1), -np.arange(count // 2, 0, -1)])
    return _frequencies("fftfreq", cycles / (float(d) * count), dtype)


def rfftfreq(n: int, d: float = 1.0, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``."""
    count = _length("rfftfreq", n)
    return _frequencies("rfftfreq", np.arange(count // 2 + 1) / (float(d) * count), dtype)


def _frequencies(name: str, values: np.ndarray[Any, Any], dtype: Any) -> Tensor[Any, Any]:
    from .creation import array

    target = _dt.DEFAULT_FLOAT if dtype is None else to_numpy(dtype)
    if not _dt.is_float(target):
        raise TypeError(f"{name}: dtype must be a float dtype, got {_dt.short_name(target)}")
    return array(values.astype(target))  # computed in float64, rounded once


@op
def fftshift(x: Tensor[DT, Unpack[Shape]], axes: Axis | Axes = None) -> Tensor[DT, Unpack[Shape]]:
    """Rolls the zero frequency to the middle of ``axes`` (every axis by default)."""
    return _rolled("fftshift", x, axes, inverse=False)


@op
def ifftshift(x: Tensor[DT, Unpack[Shape]], axes: Axis | Axes = None) -> Tensor[DT, Unpack[Shape]]:
    """The inverse of ``fftshift`` (they differ for odd lengths)."""
    return _rolled("ifftshift", x, axes, inverse=True)


def _rolled(name: str, x: Any, axes: Any, inverse: bool) -> AnyTensor:
    t = as_tensor(x)
    a = t.atom
    for axis in normalize_axes(name, axes, t):
        size = a.aval.shape[axis]
        if size < 2:
            continue
        shift = size - size // 2 if inverse else size // 2  # the first `size - shift` entries move to the end
        first = SL.slice_in_dim(a, 0, size - shift, axis)
        last = SL.slice_in_dim(a, size - shift, size, axis)
        a = SL.concatenate([last, first], axis)
    return wrap(a)
