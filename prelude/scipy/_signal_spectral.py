"""Windowed-FFT spectral tools of ``jax.scipy.signal``: ``stft``, ``istft``, ``csd`` and ``welch``.

The signal is cut into segments by one gather (a static table of indices), detrended, windowed and transformed
(``rfft`` one-sided, ``fft`` two-sided); ``istft`` adds the inverse transforms back with one scatter-add. So
``grad`` (through the signal and an array window) and ``vmap`` follow from the primitives' rules.

Deliberate differences from JAX (each SciPy's behaviour):
- ``csd``/``welch`` with a named window and ``nperseg=None`` use 256-point segments (or the whole signal when it
  is shorter); JAX uses the whole signal.
- ``istft(noverlap=0)`` means no overlap (JAX reads 0 as "default", ``nperseg // 2``).
- A callable ``detrend`` with ``axis != -1`` sees each segment along ``axis``, as SciPy passes it.
- Windows are computed here, not by SciPy (see ``_signal_windows``); named windows are float64 values rounded once
  to the signal's dtype.
- The signal must be floating-point or complex, and ``x``, ``y`` of one dtype (no implicit conversions); an empty
  signal is an error (SciPy and JAX return empty arrays).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import numpy as np
from typing_extensions import Unpack

from ...dtypes import Inexact
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import lax
from .. import numpy as tnp
from ..numpy._core import as_tensor, atom, inexact_operand, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from ..numpy.static_settings import static_int
from ._signal_detrend import detrend
from ._signal_windows import get_window

IT = TypeVar("IT", bound=Inexact)
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Scaling = Literal["density", "spectrum"]
Average = Literal["mean", "median"]
Detrend = Literal["linear", "constant"] | bool | Callable[[Any], Any]
WindowLike = str | tuple[Any, ...] | AnyTensor | np.ndarray[Any, Any] | list[float]
Boundary = Literal["even", "odd", "constant", "zeros"] | None

_DEFAULT_SEGMENT = 256


class _Segments:
    """The static segmentation: window values, segment length, overlap, FFT length."""

    def __init__(self, win: AnyTensor, nperseg: int, noverlap: int, nfft: int) -> None:
        self.win, self.nperseg, self.noverlap, self.nfft = win, nperseg, noverlap, nfft

    @property
    def step(self) -> int:
        return self.nperseg - self.noverlap


# ------------------------------------------------------------------------------------------------ checks


def _signal(name: str, x: Any, y: Any = None) -> tuple[AnyTensor, AnyTensor | None]:
    """The signal(s) as tensors of one floating-point or complex dtype."""
    dtype = result_dtype(name, (x,) if y is None else (x, y))
    if not _dt.is_inexact(dtype):
        given = describe(x) if y is None else f"{describe(x)} and {describe(y)}"
        raise dtype_error(name, f"{name} needs floating-point or complex data, got {given}; convert with .astype(f32)")
    xt = wrap(atom(x, dtype, name))
    return xt, None if y is None else wrap(atom(y, dtype, name))


def _optional_int(name: str, value: Any, what: str) -> int | None:
    return None if value is None else static_int(name, value, what)


def _segments(name: str, x: AnyTensor, window: Any, nperseg: Any, noverlap: Any, nfft: Any, length: int,
              default_nperseg: int | None) -> _Segments:
    """SciPy's ``_triage_segments`` and the checks of the overlap and the FFT length."""
    segment = _optional_int(name, nperseg, "nperseg")
    if segment is not None and segment < 1:
        raise ValueError(f"{name}: nperseg must be a positive integer, got {segment}")
    if isinstance(window, (str, tuple)):
        segment = default_nperseg if segment is None else segment
        segment = length if segment is None else segment
        if segment > length:
            warnings.warn(f"{name}: nperseg={segment} is greater than the input length {length}, using "
                          f"nperseg={length}", stacklevel=3)
            segment = length
        win = tnp.asarray(get_window(name, window, segment), dtype=x.dtype)
    else:
        win = _array_window(name, window, x)
        if length < win.shape[0]:
            raise ValueError(f"{name}: the window {win.aval} is longer than the input signal ({length} points)")
        if segment is not None and segment != win.shape[0]:
            raise ValueError(f"{name}: nperseg={segment} differs from the length of the window {win.aval}")
        segment = win.shape[0]
    overlap = _optional_int(name, noverlap, "noverlap")
    overlap = segment // 2 if overlap is None else overlap
    fft_length = _optional_int(name, nfft, "nfft")
    fft_length = segment if fft_length is None else fft_length
    if fft_length < segment:
        raise ValueError(f"{name}: nfft={fft_length} must be at least nperseg={segment}")
    if not 0 <= overlap < segment:
        raise ValueError(f"{name}: noverlap={overlap} must be in [0, nperseg={segment})")
    return _Segments(win, segment, overlap, fft_length)


def _array_window(name: str, window: Any, x: AnyTensor) -> AnyTensor:
    """A window given as values: host values take ``x``'s dtype; a tensor must have it."""
    if isinstance(window, Tensor):
        win: AnyTensor = window
        if win.dtype != x.dtype and not (_dt.is_complex(x.dtype) and win.dtype == _dt.real_dtype(x.dtype)):
            raise dtype_error(name, f"the window {win.aval} does not match the signal's dtype {x.aval}")
        win = win.astype(x.dtype) if win.dtype != x.dtype else win
    else:
        win = tnp.asarray(np.asarray(window), dtype=x.dtype)
    if win.ndim != 1:
        raise shape_error(name, f"the window must be 1-D, got {win.aval}")
    return win


def _detrend_function(name: str, detrend_type: Any, axis: int, ndim: int) -> Callable[[AnyTensor], AnyTensor]:
    if detrend_type is False or detrend_type is None:
        return lambda d: d
    if isinstance(detrend_type, str):
        if detrend_type not in ("linear", "constant"):
            raise ValueError(f"{name}: detrend must be 'linear', 'constant', False or a function, got {detrend_type!r}")
        kind: Any = detrend_type
        return lambda d: detrend(d, axis=-1, type=kind)
    if callable(detrend_type):
        user = detrend_type
        if axis == ndim - 1:
            return lambda d: as_tensor(user(d))
        # SciPy hands a user's function each segment along the axis the data had.
        return lambda d: tnp.moveaxis(as_tensor(user(tnp.moveaxis(d, -1, axis))), axis, -1)
    raise ValueError(f"{name}: detrend must be 'linear', 'constant', False or a function, got {detrend_type!r}")


# ------------------------------------------------------------------------------------------------ helpers


def _frame_indices(length: int, nperseg: int, step: int) -> np.ndarray[Any, Any]:
    """Indices ``(segments, nperseg)`` of the segments that fit in ``length`` points."""
    starts = np.arange(0, length - nperseg + 1, step)
    return starts[:, None] + np.arange(nperseg)[None, :]


def _extend(x: AnyTensor, n: int, boundary: str) -> AnyTensor:
    """``x`` extended by ``n`` points at both ends of its last axis."""
    pads = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    if boundary == "odd":
        if n > x.shape[-1] - 1:
            raise ValueError(f"stft: the odd extension of {n} points needs a signal longer than {n}, got {x.aval}")
        left, right = x[..., :1], x[..., -1:]
        before = 2 * left - tnp.flip(x[..., 1:n + 1], axis=-1)
        after = 2 * right - tnp.flip(x[..., -n - 1:-1], axis=-1)
        return tnp.concatenate([before, x, after], axis=-1)
    mode: Any = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    return tnp.pad(x, pads, mode=mode)


def _padded_to(x: AnyTensor, length: int) -> AnyTensor:
    if x.shape[-1] == length:
        return x
    return tnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, length - x.shape[-1])])


def _spectra(x: AnyTensor, seg: _Segments, detrend: Callable[[AnyTensor], AnyTensor], onesided: bool) -> AnyTensor:
    """The transform of every detrended, windowed segment: ``(..., segments, frequencies)``."""
    frames = x[..., _frame_indices(x.shape[-1], seg.nperseg, seg.step)]
    frames = detrend(frames) * seg.win
    if onesided:
        return tnp.fft.rfft(tnp.real(frames) if _dt.is_complex(frames.dtype) else frames, n=seg.nfft)
    return tnp.fft.fft(frames, n=seg.nfft)


def _frequencies(nfft: int, fs: Any, onesided: bool, dtype: np.dtype[Any]) -> AnyTensor:
    counts = np.arange(nfft // 2 + 1) if onesided else np.fft.fftfreq(nfft) * nfft
    freqs: AnyTensor = tnp.asarray(counts / nfft, dtype=dtype) * fs
    return freqs


def _scale(seg: _Segments, fs: Any, scaling: str, name: str) -> AnyTensor:
    real = tnp.real(seg.win) if _dt.is_complex(seg.win.dtype) else seg.win
    scale: AnyTensor
    if scaling == "density":
        scale = 1.0 / (fs * tnp.sum(real * real))
        return scale
    if scaling == "spectrum":
        scale = 1.0 / tnp.sum(real) ** 2
        return scale
    raise ValueError(f"{name}: scaling must be 'density' or 'spectrum', got {scaling!r}")


def _fs(name: str, fs: Any, dtype: np.dtype[Any]) -> Any:
    """The sampling frequency: a Python number, or a 0-d tensor of the signal's real dtype."""
    if isinstance(fs, (int, float)) and not isinstance(fs, bool):
        return float(fs)
    f = as_tensor(fs)
    if f.ndim != 0 or f.dtype != dtype:
        raise dtype_error(name, f"fs must be a number or a 0-d {_dt.short_name(dtype)} tensor, got {describe(fs)}")
    return f


# ---------------------------------------------------------------------------------------- the core


def _spectral(name: str, x: AnyTensor, y: AnyTensor | None, fs: Any, window: Any, nperseg: Any, noverlap: Any,
              nfft: Any, detrend_type: Any, return_onesided: bool, scaling: str, axis: Any, mode: str,
              boundary: Any = None, padded: bool = False,
              default_nperseg: int | None = None) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """SciPy's ``_spectral_helper``: frequencies, segment times, and the segments' spectra (``mode='stft'``) or
    cross-spectral densities (``'psd'``), frequency axis at ``axis`` and segments last."""
    if boundary not in (None, "even", "odd", "constant", "zeros"):
        raise ValueError(f"{name}: boundary must be 'even', 'odd', 'constant', 'zeros' or None, got {boundary!r}")
    if x.ndim == 0:
        raise shape_error(name, f"{name} needs data of rank >= 1, got {x.aval}")
    ax = normalize_axes(name, axis, x, allow_none=False)[0]
    xs = tnp.moveaxis(x, ax, -1)
    ys = None
    if y is not None:
        if y.ndim != x.ndim:
            raise shape_error(name, f"x and y must have the same rank, got x {x.aval} and y {y.aval}")
        ys = tnp.moveaxis(y, ax, -1)
        tnp.broadcast_shapes(xs.shape[:-1], ys.shape[:-1])  # raises for x and y that do not broadcast
        longest = max(xs.shape[-1], ys.shape[-1])
        xs, ys = _padded_to(xs, longest), _padded_to(ys, longest)
    freq_dtype = _dt.real_dtype(x.dtype)
    rate = _fs(name, fs, freq_dtype)
    if xs.shape[-1] == 0:
        raise ValueError(f"{name}: the signal is empty: {x.aval}")
    seg = _segments(name, x, window, nperseg, noverlap, nfft, xs.shape[-1], default_nperseg)
    signals = [s for s in (xs, ys) if s is not None]
    if boundary is not None:
        signals = [_extend(s, seg.nperseg // 2, boundary) for s in signals]
    if padded:
        extra = (-(signals[0].shape[-1] - seg.nperseg) % seg.step) % seg.nperseg
        signals = [_padded_to(s, s.shape[-1] + extra) for s in signals]
    onesided = bool(return_onesided)
    if onesided and _dt.is_complex(x.dtype):
        warnings.warn(f"{name}: input data is complex, switching to return_onesided=False", stacklevel=3)
        onesided = False
    detrend = _detrend_function(name, detrend_type, ax, x.ndim)
    spectra = [_spectra(s, seg, detrend, onesided) for s in signals]
    scale = _scale(seg, rate, scaling, name)
    if mode == "stft":
        result = spectra[0] * tnp.sqrt(scale).astype(spectra[0].dtype)
    else:
        result = tnp.conj(spectra[0]) * spectra[-1] * scale.astype(spectra[0].dtype)
        if onesided:
            doubled = np.full(result.shape[-1], 2.0)
            doubled[0] = 1.0
            if seg.nfft % 2 == 0:
                doubled[-1] = 1.0
            result = result * tnp.asarray(doubled, dtype=result.dtype)
        if y is None:
            result = tnp.real(result)
    starts = np.arange(seg.nperseg / 2, signals[0].shape[-1] - seg.nperseg / 2 + 1, seg.step)
    if boundary is not None:
        starts = starts - seg.nperseg / 2
    time = tnp.asarray(starts, dtype=freq_dtype) / rate
    result = tnp.moveaxis(result, -1, ax if ax < x.ndim - 1 else -2)
    return _frequencies(seg.nfft, rate, onesided, freq_dtype), time, result


# ----------------------------------------------------------------------------------------- public


@op
def stft(
    x: Tensor[IT, Unpack[tuple[Any, ...]]], fs: float | Tensor[Any] = 1.0, window: WindowLike = "hann",
    nperseg: int = 256, noverlap: int | None = None, nfft: int | None = None, detrend: Detrend = False,
    return_onesided: bool = True, boundary: Boundary = "zeros", padded: bool = True, axis: int = -1,
) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """The short-time Fourier transform of ``x`` along ``axis``: ``(f, t, Zxx)``, ``Zxx`` complex with the
    frequencies at ``axis`` and the segments last (SciPy's ``stft``, scaled as its 'spectrum')."""
    name = "stft"
    xt, _ = _signal(name, x)
    return _spectral(name, xt, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum",
                     axis, "stft", boundary, padded)


@op
def csd(
    x: Tensor[IT, Unpack[tuple[Any, ...]]], y: Tensor[IT, Unpack[tuple[Any, ...]]] | None,
    fs: float | Tensor[Any] = 1.0, window: WindowLike = "hann", nperseg: int | None = None,
    noverlap: int | None = None, nfft: int | None = None, detrend: Detrend = "constant",
    return_onesided: bool = True, scaling: Scaling = "density", axis: int = -1, average: Average = "mean",
) -> tuple[AnyTensor, AnyTensor]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method: ``(f, Pxy)``, the segments'
    cross-spectra averaged ('mean', or 'median' divided by its bias); ``y=None`` gives ``x``'s own (real)."""
    name = "csd"
    xt, yt = _signal(name, x, y)
    return _csd(name, xt, yt, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average)


def _csd(name: str, x: AnyTensor, y: AnyTensor | None, fs: Any, window: Any, nperseg: Any, noverlap: Any,
         nfft: Any, detrend: Any, return_onesided: bool, scaling: Any, axis: Any,
         average: Any) -> tuple[AnyTensor, AnyTensor]:
    if average not in ("mean", "median"):
        raise ValueError(f"{name}: average must be 'mean' or 'median', got {average!r}")
    freqs, _, pxy = _spectral(name, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                              axis, "psd", default_nperseg=_DEFAULT_SEGMENT)
    count = pxy.shape[-1]
    if count == 1:
        return freqs, pxy[..., 0]
    if average == "mean":
        return freqs, tnp.mean(pxy, axis=-1)
    bias = 1 + np.sum(1.0 / (np.arange(2.0, count, 2) + 1) - 1.0 / np.arange(2.0, count, 2))
    if _dt.is_complex(pxy.dtype):
        parts = [tnp.median(p, axis=-1) / bias for p in (tnp.real(pxy), tnp.imag(pxy))]
        return freqs, lax.complex(parts[0], parts[1])
    return freqs, tnp.median(pxy, axis=-1) / bias


@op
def welch(
    x: Tensor[IT, Unpack[tuple[Any, ...]]], fs: float | Tensor[Any] = 1.0, window: WindowLike = "hann",
    nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None, detrend: Detrend = "constant",
    return_onesided: bool = True, scaling: Scaling = "density", axis: int = -1, average: Average = "mean",
) -> tuple[AnyTensor, AnyTensor]:
    """The power spectral density of ``x`` by Welch's method: ``(f, Pxx)`` (``csd(x, None, ...)``, real)."""
    name = "welch"
    xt, _ = _signal(name, x)
    freqs, pxx = _csd(name, xt, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                      average)
    return freqs, tnp.real(pxx) if _dt.is_complex(pxx.dtype) else pxx


# -------------------------------------------------------------------------------------------- istft


def _overlap_add(frames: AnyTensor, step: int) -> AnyTensor:
    """Segments ``(..., n, length)`` added at ``step`` apart: ``(..., (n - 1) step + length)``."""
    count, length = frames.shape[-2], frames.shape[-1]
    total = (count - 1) * step + length
    out = tnp.zeros((*frames.shape[:-2], total), dtype=frames.dtype)
    return out.at[..., _frame_indices(total, length, step)].add(frames)


@op
def istft(
    Zxx: Tensor[Any, Unpack[tuple[Any, ...]]], fs: float | Tensor[Any] = 1.0,  # noqa: N803 - SciPy's name
    window: WindowLike = "hann", nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
    input_onesided: bool = True, boundary: bool = True, time_axis: int = -1, freq_axis: int = -2,
) -> tuple[AnyTensor, AnyTensor]:
    """The inverse short-time Fourier transform (SciPy's ``istft``): ``(t, x)``, the segments' inverse
    transforms windowed and overlap-added, divided by the summed squared window where it is not tiny."""
    name = "istft"
    z: AnyTensor = inexact_operand(name, Zxx)
    if z.ndim < 2:
        raise shape_error(name, f"{name} needs an STFT of rank >= 2, got {z.aval}")
    fa, ta = normalize_axes(name, (freq_axis, time_axis), z, allow_none=False)
    complex_dtype: Any = z.dtype if _dt.is_complex(z.dtype) else _dt.complex_dtype(z.dtype)
    z = z.astype(complex_dtype) if z.dtype != complex_dtype else z
    z = tnp.moveaxis(z, (fa, ta), (-2, -1))
    default = 2 * (z.shape[-2] - 1) if input_onesided else z.shape[-2]
    segment = _optional_int(name, nperseg, "nperseg") or default
    if segment < 1:
        raise ValueError(f"{name}: nperseg must be a positive integer, got {segment}")
    fft_length = _optional_int(name, nfft, "nfft")
    if fft_length is None:
        fft_length = default + 1 if input_onesided and segment == default + 1 else default
    if fft_length < segment:
        raise ValueError(f"{name}: nfft={fft_length} must be at least nperseg={segment}")
    overlap = _optional_int(name, noverlap, "noverlap")
    overlap = segment // 2 if overlap is None else overlap
    if not 0 <= overlap < segment:
        raise ValueError(f"{name}: noverlap={overlap} must be in [0, nperseg={segment})")
    inverse = tnp.fft.irfft if input_onesided else tnp.fft.ifft
    segments = inverse(z, n=fft_length, axis=-2)[..., :segment, :]
    real_dtype = _dt.real_dtype(z.dtype)
    if isinstance(window, (str, tuple)):
        win = tnp.asarray(get_window(name, window, segment), dtype=segments.dtype)
    else:
        win = _array_window(name, window, segments)
        if win.shape[0] != segment:
            raise ValueError(f"{name}: the window {win.aval} must have nperseg={segment} points")
    segments = segments * tnp.sum(win)  # undoes the 'spectrum' scaling
    frames = tnp.swapaxes(segments * win[:, None], -2, -1)
    x = _overlap_add(frames, segment - overlap)
    squares = tnp.broadcast_to(win * win, (frames.shape[-2], segment))
    norm = _overlap_add(squares, segment - overlap)
    if boundary:
        half = segment // 2
        x, norm = x[..., half:x.shape[-1] - half], norm[..., half:norm.shape[-1] - half]
    norm = tnp.real(norm) if _dt.is_complex(norm.dtype) else norm
    x = x / tnp.where(norm > 1e-10, norm, 1.0).astype(x.dtype)
    if x.ndim > 1 and ta != z.ndim - 1:
        x = tnp.moveaxis(x, -1, ta - 1 if fa < ta else ta)
    time = tnp.arange(x.shape[0], dtype=real_dtype) / _fs(name, fs, real_dtype)
    return time, x
