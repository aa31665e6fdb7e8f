"""``tensorstage.scipy.fft``: JAX's ``jax.scipy.fft``: the discrete cosine transforms ``dct``, ``idct`` and their
n-dimensional forms ``dctn``, ``idctn``, with SciPy's scaling.

A type-2 DCT is one complex FFT of the even-odd interleaved sequence times a quarter-wave twiddle (Makhoul's
algorithm, as JAX); its inverse runs the same steps backwards. Type 3 is the inverse of type 2 up to scale
(SciPy's ``dct(x, 3) = 2N idct(x, 2)``), so both types come from the two kernels; n-dimensional transforms apply
the 1-D ones axis by axis. Complex input is transformed as its real and imaginary parts (the DCT is real-linear).

Deliberate differences from JAX: types 2 and 3 (JAX: 2 only); ``norm='forward'`` as SciPy (JAX refuses it); ``n``
/ ``s`` shorter than the axis truncate as SciPy; the input must be floating-point or complex (JAX converts
integers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import Inexact
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import lax
from .. import numpy as tnp
from ..numpy._core import inexact_operand, normalize_axes, op, shape_error
from ..numpy.static_settings import static_int

__all__ = ["dct", "dctn", "idct", "idctn"]

IT = TypeVar("IT", bound=Inexact)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Norm = Literal["backward", "ortho", "forward"] | None
DctType = Literal[2, 3]


def _check(name: str, x: Any, type_: Any, norm: Any) -> AnyTensor:
    if type_ not in (2, 3) or isinstance(type_, bool):
        raise ValueError(f"{name}: type must be 2 or 3 (the DCT types implemented), got {type_!r}")
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f"{name}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}")
    t = inexact_operand(name, x)
    if t.ndim == 0:
        raise shape_error(name, f"{name} needs an operand of rank >= 1, got {t.aval}")
    return t


def _resized(name: str, x: AnyTensor, axis: int, n: Any) -> AnyTensor:
    """``x`` truncated or zero-padded to ``n`` points along ``axis``."""
    if n is None:
        return x
    size = static_int(name, n, "the transform length")
    if size < 1:
        raise ValueError(f"{name}: invalid number of data points ({size}); it must be at least 1")
    if size <= x.shape[axis]:
        return lax.slice_in_dim(x, 0, size, axis=axis)
    pads = [(0, 0)] * x.ndim
    pads[axis] = (0, size - x.shape[axis])
    return tnp.pad(x, pads)


def _interleave_order(n: int) -> np.ndarray[Any, Any]:
    """Even indices ascending, then odd ones descending: ``v = x[order]`` is Makhoul's reordering."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _twiddle(n: int, axis: int, ndim: int, dtype: np.dtype[Any], sign: float) -> AnyTensor:
    """``exp(sign i pi k / 2n)`` along ``axis`` (float64 values rounded once)."""
    shape = [1] * ndim
    shape[axis] = n
    return tnp.asarray(np.exp(sign * 0.5j * np.pi * np.arange(n) / n).reshape(shape), dtype=dtype)


def _ortho_factors(n: int, axis: int, ndim: int, dtype: np.dtype[Any]) -> AnyTensor:
    """``1 / sqrt(4n)`` for the first coefficient, ``1 / sqrt(2n)`` for the others, along ``axis``."""
    shape = [1] * ndim
    shape[axis] = n
    factors = np.full(n, 1 / math.sqrt(2 * n))
    factors[0] = 1 / math.sqrt(4 * n)
    return tnp.asarray(factors.reshape(shape), dtype=dtype)


def _dct2(x: AnyTensor, axis: int) -> AnyTensor:
    """SciPy's unnormalized type-2 DCT of a real ``x``: ``2 Re(W fft(interleaved x))``."""
    n = x.shape[axis]
    complex_dtype: Any = _dt.complex_dtype(x.dtype)
    spectrum = tnp.fft.fft(tnp.take(x, _interleave_order(n), axis=axis).astype(complex_dtype), axis=axis)
    return 2 * tnp.real(spectrum * _twiddle(n, axis, x.ndim, complex_dtype, -1.0))


def _idct2(x: AnyTensor, axis: int) -> AnyTensor:
    """The inverse of ``_dct2``: the twiddle undone (the first coefficient halved), ``ifft``, de-interleaved."""
    n = x.shape[axis]
    complex_dtype: Any = _dt.complex_dtype(x.dtype)
    halves = np.ones(n)
    halves[0] = 0.5
    shape = [1] * x.ndim
    shape[axis] = n
    weighted = x * tnp.asarray(halves.reshape(shape), dtype=x.dtype)
    v = tnp.real(tnp.fft.ifft(weighted.astype(complex_dtype) * _twiddle(n, axis, x.ndim, complex_dtype, 1.0),
                              axis=axis))
    return tnp.take(v, np.argsort(_interleave_order(n)), axis=axis)


def _transform(x: AnyTensor, axis: int, forward_kernel: bool, norm: Any, inverse: bool) -> AnyTensor:
    """The type-2 DCT (``forward_kernel``) or its inverse along ``axis``, scaled as SciPy's ``dct``/``idct``
    (``inverse``) with ``norm``. Unnormalized, ``dct2`` and ``2N dct2⁻¹`` (= ``dct3``) are both plain cosine
    sums; 'backward' divides the inverse function by ``2N``, 'forward' the forward one; 'ortho' scales the
    coefficients so that the pair is orthonormal."""
    if _dt.is_complex(x.dtype):
        parts = [_transform(p, axis, forward_kernel, norm, inverse) for p in (tnp.real(x), tnp.imag(x))]
        return lax.complex(*parts)
    n = x.shape[axis]
    if norm == "ortho":
        factors = _ortho_factors(n, axis, x.ndim, x.dtype)
        return _dct2(x, axis) * factors if forward_kernel else _idct2(x / factors, axis)
    out = _dct2(x, axis) if forward_kernel else _idct2(x, axis)
    cosine_sum = 1 if forward_kernel else 2 * n
    scale = cosine_sum if (norm == "forward") == inverse else cosine_sum / (2 * n)
    return out if scale == 1 else out * scale


def _dct_along(name: str, x: AnyTensor, type_: int, n: Any, axis: int, norm: Any, inverse: bool) -> AnyTensor:
    x = _resized(name, x, axis, n)
    forward_kernel = (type_ == 2) != inverse
    return _transform(x, axis, forward_kernel, norm, inverse)


@op
def dct(
    x: Tensor[IT, Unpack[Shape]], type: DctType = 2, n: int | None = None, axis: int = -1,  # noqa: A002
    norm: Norm = None,
) -> Tensor[IT, Unpack[tuple[Any, ...]]]:
    """The discrete cosine transform of ``x`` along ``axis`` (SciPy's ``dct``): type 2,
    ``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)``, or type 3, its inverse up to ``2N``; ``n`` pads or truncates
    the input, ``norm`` 'ortho' makes it orthonormal."""
    t = _check("dct", x, type, norm)
    ax = normalize_axes("dct", axis, t, allow_none=False)[0]
    return _dct_along("dct", t, type, n, ax, norm, inverse=False)


@op
def idct(
    x: Tensor[IT, Unpack[Shape]], type: DctType = 2, n: int | None = None, axis: int = -1,  # noqa: A002
    norm: Norm = None,
) -> Tensor[IT, Unpack[tuple[Any, ...]]]:
    """The inverse of ``dct`` of the same ``type`` and ``norm`` along ``axis`` (SciPy's ``idct``)."""
    t = _check("idct", x, type, norm)
    ax = normalize_axes("idct", axis, t, allow_none=False)[0]
    return _dct_along("idct", t, type, n, ax, norm, inverse=True)


def _dctn(name: str, x: Any, type_: Any, s: Any, axes: Any, norm: Any, inverse: bool) -> AnyTensor:
    t = _check(name, x, type_, norm)
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if len(s) > t.ndim:
            raise shape_error(name, f"s={tuple(s)} has more entries than the operand {t.aval} has axes")
    if axes is None:
        chosen = tuple(range(t.ndim - len(s), t.ndim)) if s is not None else tuple(range(t.ndim))
    else:
        chosen = normalize_axes(name, axes, t)
    if s is not None and len(s) != len(chosen):
        raise ValueError(f"{name}: s={tuple(s)} and axes={chosen} have different lengths")
    lengths: Sequence[Any] = s if s is not None else [None] * len(chosen)
    for axis, n in zip(chosen, lengths):
        t = _dct_along(name, t, type_, n, axis, norm, inverse)
    return t


@op
def dctn(
    x: Tensor[IT, Unpack[Shape]], type: DctType = 2, s: Sequence[int] | None = None,  # noqa: A002
    axes: Sequence[int] | None = None, norm: Norm = None,
) -> Tensor[IT, Unpack[tuple[Any, ...]]]:
    """The multidimensional ``dct`` over ``axes`` (default: the last ``len(s)``, or all), each padded or truncated
    to ``s``."""
    return _dctn("dctn", x, type, s, axes, norm, inverse=False)


@op
def idctn(
    x: Tensor[IT, Unpack[Shape]], type: DctType = 2, s: Sequence[int] | None = None,  # noqa: A002
    axes: Sequence[int] | None = None, norm: Norm = None,
) -> Tensor[IT, Unpack[tuple[Any, ...]]]:
    """The multidimensional ``idct`` over ``axes`` (see ``dctn``)."""
    return _dctn("idctn", x, type, s, axes, norm, inverse=True)
