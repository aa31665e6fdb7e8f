"""``tensorstage.scipy.signal``: JAX's ``jax.scipy.signal``: convolutions (``convolve``, ``correlate``,
``fftconvolve``, ``convolve2d``, ``correlate2d``), ``detrend``, and the windowed-FFT tools ``stft``, ``istft``,
``csd`` and ``welch`` (in ``_signal_spectral``).

Direct convolutions are one ``conv_general_dilated`` (a complex pair of operands: one convolution of their real and
imaginary parts as a batch of two against two output features), so ``grad`` and ``vmap`` come from the primitive's
rules; ``fftconvolve`` (and ``method='fft'``) multiplies ``rfftn``/``fftn`` spectra of the full size. Results
match SciPy's for every mode, including SciPy's operand swap for 'valid' when ``in2`` is the larger.

Deliberate differences from JAX:
- Operands must be floating-point or complex, of one dtype (JAX promotes integers to float and mixed precisions
  to the wider one; tensorstage never converts implicitly): convert with ``.astype(f32)``.
- ``convolve2d``/``correlate2d`` take SciPy's ``boundary`` ('fill' with any ``fillvalue``, 'wrap', 'symm'); JAX
  accepts only ``boundary='fill', fillvalue=0``.
- ``fftconvolve`` broadcasts the axes it does not convolve (size 1 against n, as SciPy; JAX needs equal sizes).
- ``precision`` is the direct method's convolution precision (``lax.conv_general_dilated``'s, as JAX passes it);
  CPUs compute at full precision whatever it says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import Inexact
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import lax
from .. import numpy as tnp
from ..numpy._core import atom, describe, dtype_error, normalize_axes, op, result_dtype, shape_error, wrap
from ._signal_detrend import detrend
from ._signal_spectral import csd, istft, stft, welch

__all__ = [
    "convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft", "welch",
]

IT = TypeVar("IT", bound=Inexact)
Shape = TypeVarTuple("Shape")
AnyShape = tuple[Any, ...]
Mode = Literal["full", "same", "valid"]
Method = Literal["auto", "direct", "fft"]
Boundary = Literal["fill", "wrap", "symm"]
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

_MODES = ("full", "same", "valid")
_PAD_MODES = {"fill": "constant", "wrap": "wrap", "symm": "symmetric"}

# ------------------------------------------------------------------------------------------------ checks


def _operands(name: str, in1: Any, in2: Any) -> tuple[AnyTensor, AnyTensor]:
    """Both operands as tensors of one floating-point or complex dtype (Python numbers take the other's)."""
    dtype = result_dtype(name, (in1, in2))
    if not _dt.is_inexact(dtype):
        raise dtype_error(name, f"{name} needs floating-point or complex operands, got {describe(in1)} and "
                                f"{describe(in2)}; convert them with .astype(f32)")
    return wrap(atom(in1, dtype, name)), wrap(atom(in2, dtype, name))


def _check_mode(name: str, mode: Any) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def _check_ranks(name: str, x: AnyTensor, k: AnyTensor, rank: int | None = None) -> None:
    if rank is not None and (x.ndim != rank or k.ndim != rank):
        raise shape_error(name, f"{name} needs {rank}-D operands, got in1 {x.aval} and in2 {k.aval}")
    if x.ndim != k.ndim:
        raise shape_error(name, f"in1 and in2 must have the same number of dimensions, got in1 {x.aval} and "
                                f"in2 {k.aval}")
    if x.size == 0 or k.size == 0:
        raise ValueError(f"{name}: zero-size operands are not supported, got in1 {x.aval} and in2 {k.aval}")


def _valid_swap(name: str, s1: Sequence[int], s2: Sequence[int], x: AnyTensor, k: AnyTensor) -> bool:
    """SciPy's rule for 'valid': the operands swap when ``in2`` is at least as large in every axis; one of them
    must be."""
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(a <= b for a, b in zip(s1, s2)):
        return True
    raise shape_error(name, f"for mode 'valid', one operand must be at least as large as the other in every "
                            f"convolved axis, got in1 {x.aval} and in2 {k.aval}")


# ---------------------------------------------------------------------------------------- direct method


def _correlate_padded(x: AnyTensor, k: AnyTensor, pads: Sequence[tuple[int, int]], precision: Any) -> AnyTensor:
    """``x`` (zero-padded by ``pads``) cross-correlated with ``k`` (no conjugation), 'valid' over the padded
    ``x``: one convolution; a complex pair as the batch (re, im) of ``x`` against the features (re, im) of ``k``."""
    strides = (1,) * x.ndim
    if not _dt.is_complex(x.dtype):
        return lax.conv_general_dilated(x[None, None], k[None, None], strides, pads, precision=precision)[0, 0]
    lhs = tnp.stack([tnp.real(x), tnp.imag(x)])[:, None]
    rhs = tnp.stack([tnp.real(k), tnp.imag(k)])[:, None]
    out = lax.conv_general_dilated(lhs, rhs, strides, pads, precision=precision)
    return lax.complex(out[0, 0] - out[1, 1], out[0, 1] + out[1, 0])


def _convolve_direct(name: str, x: AnyTensor, k: AnyTensor, mode: str, precision: Any) -> AnyTensor:
    """SciPy's ``convolve(x, k, mode)`` by a direct convolution (``x``, ``k`` of one rank)."""
    s1, s2 = x.shape, k.shape
    if mode == "valid" and _valid_swap(name, s1, s2, x, k):
        x, k = k, x
    if x.ndim == 0:
        return x * k
    big, small = (x, k) if all(a >= b for a, b in zip(x.shape, k.shape)) else (k, x)
    flipped = tnp.flip(small)
    if mode == "valid":
        return _correlate_padded(big, flipped, [(0, 0)] * x.ndim, precision)
    full = _correlate_padded(big, flipped, [(n - 1, n - 1) for n in small.shape], precision)
    return full if mode == "full" else _centred(full, s1, range(x.ndim))


def _centred(full: AnyTensor, shape: Sequence[int], axes: Sequence[int]) -> AnyTensor:
    """The centred block of ``shape`` (along ``axes``) of a full convolution (SciPy's ``_centered``)."""
    index: list[Any] = [slice(None)] * full.ndim
    for n, axis in zip(shape, axes):
        start = (full.shape[axis] - n) // 2
        index[axis] = slice(start, start + n)
    return full[tuple(index)]


# ------------------------------------------------------------------------------------------- FFT method


def _fftconvolve(name: str, x: AnyTensor, k: AnyTensor, mode: str, axes: tuple[int, ...]) -> AnyTensor:
    """SciPy's ``fftconvolve``: the product of the full-size spectra over ``axes``, cropped for ``mode``."""
    s1, s2 = [x.shape[a] for a in axes], [k.shape[a] for a in axes]
    for axis in range(x.ndim):
        if axis not in axes and x.shape[axis] != k.shape[axis] and 1 not in (x.shape[axis], k.shape[axis]):
            raise shape_error(name, f"axis {axis} is not convolved, so its sizes must be equal or 1, got in1 "
                                    f"{x.aval} and in2 {k.aval}")
    if mode == "valid" and _valid_swap(name, s1, s2, x, k):
        x, k, s1, s2 = k, x, s2, s1
    if not axes:
        return x * k
    full = [a + b - 1 for a, b in zip(s1, s2)]
    if _dt.is_complex(x.dtype):
        spectrum = tnp.fft.fftn(x, s=full, axes=axes) * tnp.fft.fftn(k, s=full, axes=axes)
        out = tnp.fft.ifftn(spectrum, s=full, axes=axes)
    else:
        spectrum = tnp.fft.rfftn(x, s=full, axes=axes) * tnp.fft.rfftn(k, s=full, axes=axes)
        out = tnp.fft.irfftn(spectrum, s=full, axes=axes)
    if mode == "full":
        return out
    shape = s1 if mode == "same" else [a - b + 1 for a, b in zip(s1, s2)]
    return _centred(out, shape, axes)


@op
def fftconvolve(
    in1: Tensor[IT, Unpack[Shape]], in2: Tensor[IT, Unpack[AnyShape]], mode: Mode = "full",
    axes: int | Sequence[int] | None = None,
) -> Tensor[IT, Unpack[AnyShape]]:
    """The convolution of two N-D arrays by FFT (SciPy's ``fftconvolve``): over ``axes`` (default all); the other
    axes are matched elementwise (equal sizes, or 1 broadcast). ``mode`` as ``convolve``."""
    name = "fftconvolve"
    _check_mode(name, mode)
    x, k = _operands(name, in1, in2)
    _check_ranks(name, x, k)
    chosen = normalize_axes(name, axes, x)
    return _fftconvolve(name, x, k, mode, tuple(sorted(chosen)))


# ------------------------------------------------------------------------------------ convolve, correlate


def _method(name: str, method: Any) -> str:
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    return str(method)


def _convolve(name: str, x: AnyTensor, k: AnyTensor, mode: str, method: str, precision: Any) -> AnyTensor:
    _check_ranks(name, x, k)
    if method == "fft":
        return _fftconvolve(name, x, k, mode, tuple(range(x.ndim)))
    return _convolve_direct(name, x, k, mode, precision)


@op
def convolve(
    in1: Tensor[IT, Unpack[Shape]], in2: Tensor[IT, Unpack[AnyShape]], mode: Mode = "full", method: Method = "auto",
    precision: Any = None,
) -> Tensor[IT, Unpack[AnyShape]]:
    """The N-dimensional convolution of ``in1`` and ``in2`` (one rank): ``mode`` 'full' (sizes ``s1 + s2 - 1``),
    'same' (``in1``'s shape, centred) or 'valid' (``|s1 - s2| + 1``, one operand at least as large as the other
    in every axis). ``method``: 'direct' (and 'auto') convolve directly, 'fft' multiplies spectra."""
    name = "convolve"
    _check_mode(name, mode)
    chosen = _method(name, method)
    x, k = _operands(name, in1, in2)
    return _convolve(name, x, k, mode, chosen, precision)


@op
def correlate(
    in1: Tensor[IT, Unpack[Shape]], in2: Tensor[IT, Unpack[AnyShape]], mode: Mode = "full", method: Method = "auto",
    precision: Any = None,
) -> Tensor[IT, Unpack[AnyShape]]:
    """The N-dimensional cross-correlation ``sum in1[n + k] conj(in2[n])``: ``convolve(in1, flip(conj(in2)))``
    (see ``convolve`` for ``mode`` and ``method``)."""
    name = "correlate"
    _check_mode(name, mode)
    chosen = _method(name, method)
    x, k = _operands(name, in1, in2)
    return _convolve(name, x, tnp.flip(tnp.conj(k)), mode, chosen, precision)


# ------------------------------------------------------------------------------- convolve2d, correlate2d


def _convolve2d(name: str, in1: Any, in2: Any, mode: Any, boundary: Any, fillvalue: Any, correlate: bool) -> AnyTensor:
    """SciPy's 2-D convolution with its boundary rules: ``in1`` extended by the boundary ('fill' with
    ``fillvalue``, 'wrap', 'symm') by the kernel's reach, then a 'valid' convolution. SciPy swaps the operands for
    'valid' when ``in2`` is the larger (and then reverses a correlation)."""
    _check_mode(name, mode)
    if boundary not in _PAD_MODES:
        raise ValueError(f"{name}: boundary must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    x, k = _operands(name, in1, in2)
    _check_ranks(name, x, k, rank=2)
    swapped = mode == "valid" and _valid_swap(name, x.shape, k.shape, x, k)
    if swapped:
        x, k = k, x
    if correlate:
        k = tnp.flip(tnp.conj(k))
    if mode == "full":
        reach = [(n - 1, n - 1) for n in k.shape]
    elif mode == "same":  # SciPy centres a correlation's kernel the other way round for an even size
        reach = [_same_reach(n, correlate) for n in k.shape]
    else:
        reach = [(0, 0), (0, 0)]
    extended = _extend(name, x, reach, boundary, fillvalue)
    out = _correlate_padded(extended, tnp.flip(k), [(0, 0), (0, 0)], None)
    return tnp.flip(out) if swapped and correlate else out


def _same_reach(n: int, correlate: bool) -> tuple[int, int]:
    short, long = (n - 1) // 2, n // 2
    return (short, long) if correlate else (long, short)


def _extend(name: str, x: AnyTensor, reach: list[tuple[int, int]], boundary: str, fillvalue: Any) -> AnyTensor:
    if boundary != "fill":
        return tnp.pad(x, reach, mode=_PAD_MODES[boundary])  # type: ignore[arg-type]
    fill = wrap(atom(fillvalue, x.dtype, name))
    if fill.ndim != 0:
        raise shape_error(name, f"fillvalue must be a scalar, got {fill.aval}")
    if fill.dtype != x.dtype:
        raise dtype_error(name, f"fillvalue {fill.aval} does not match the operands' {x.aval}")
    return tnp.pad(x, reach, constant_values=fill)


@op
def convolve2d(
    in1: Tensor[IT, Any, Any], in2: Tensor[IT, Any, Any], mode: Mode = "full", boundary: Boundary = "fill",
    fillvalue: float | Tensor[Any] = 0, precision: Any = None,
) -> Tensor[IT, Any, Any]:
    """The 2-D convolution of ``in1`` and ``in2`` (SciPy's ``convolve2d``): ``mode`` as ``convolve``;
    ``boundary`` extends ``in1`` with ``fillvalue`` ('fill'), periodically ('wrap') or mirrored ('symm')."""
    return _convolve2d("convolve2d", in1, in2, mode, boundary, fillvalue, correlate=False)


@op
def correlate2d(
    in1: Tensor[IT, Any, Any], in2: Tensor[IT, Any, Any], mode: Mode = "full", boundary: Boundary = "fill",
    fillvalue: float | Tensor[Any] = 0, precision: Any = None,
) -> Tensor[IT, Any, Any]:
    """The 2-D cross-correlation of ``in1`` and ``in2`` (SciPy's ``correlate2d``; see ``convolve2d``)."""
    return _convolve2d("correlate2d", in1, in2, mode, boundary, fillvalue, correlate=True)
