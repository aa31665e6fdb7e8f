"""One-dimensional signal tools with NumPy's names: ``convolve`` and ``correlate``, the window functions
``hanning``, ``hamming``, ``blackman``, ``bartlett`` and ``kaiser``, the modified Bessel function ``i0``, and
``unwrap``.

``convolve``/``correlate`` are one ``conv_general_dilated`` each (so ``grad`` in both operands and ``vmap`` come
from the primitive's rules), with NumPy's rule of swapping the operands when ``v`` is the longer one.
``i0`` evaluates the Cephes Chebyshev expansions NumPy uses; its derivative (``i1``) comes from differentiating
them. Windows of a static length are NumPy's own float64 values, rounded once to the result dtype (as
``arange``/``linspace`` build their constants); ``kaiser`` with a staged ``beta`` is computed on the device.

Deliberate differences from NumPy:
- Windows are float32 by default (the library's default float, as ``linspace`` and ``jax.numpy``'s windows; NumPy:
  float64); an extra keyword ``dtype=`` picks another float type.
- No complex dtypes, so ``correlate`` never conjugates; bool operands of ``convolve``/``correlate`` are an error
  (NumPy computes a logical sum of products).
- ``i0`` and ``unwrap`` need floating-point operands (NumPy computes integers in float64); ``i0`` keeps its dtype
  (computed in float64 and rounded once). ``i0`` is finite wherever the true value is (NumPy's ``exp(x) * ...``
  overflows early: at 88.7 in float32, 709.8 in float64), and ``i0(±inf)`` is inf (NumPy: NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, Floating, to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, literal
from ...staging.primitives import convolution as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import (
    as_tensor, atom, describe, dtype_error, float_operand, normalize_axes, op, result_dtype, shape_error, wrap,
)
from .cumulative import cumsum
from .static_settings import static_int
from .ufuncs import abs as abs_, remainder, where

__all__ = ["bartlett", "blackman", "convolve", "correlate", "hamming", "hanning", "i0", "kaiser", "unwrap"]

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Mode = Literal["full", "same", "valid"]
_F64 = np.dtype(np.float64)

# ----------------------------------------------------------------------------------- convolve, correlate


@op
def convolve(a: Tensor[DT, Any], v: Tensor[DT, Any], mode: Mode = "full") -> Tensor[DT, Any]:
    """Discrete linear convolution of two 1-D sequences: ``out[k] = sum_n a[n] v[k - n]``. ``mode``: 'full'
    (length ``N + M - 1``), 'same' (``max(M, N)``, centred) or 'valid' (``max(M, N) - min(M, N) + 1``). As in
    NumPy, the operands are swapped when ``v`` is longer (convolution is symmetric)."""
    return wrap(_sliding("convolve", a, v, mode, flip_kernel=True))


@op
def correlate(a: Tensor[DT, Any], v: Tensor[DT, Any], mode: Mode = "valid") -> Tensor[DT, Any]:
    """Cross-correlation of two 1-D sequences: ``out[k] = sum_n a[n + k] v[n]`` (NumPy's default mode is
    'valid'; see ``convolve`` for the modes). When ``v`` is longer, the result is that of the swapped operands
    reversed, as in NumPy."""
    return wrap(_sliding("correlate", a, v, mode, flip_kernel=False))


def _sliding(name: str, a: Any, v: Any, mode: str, flip_kernel: bool) -> Atom:
    """``a`` correlated with ``v`` (``v`` reversed first for a convolution), both 1-D, as one convolution."""
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    dtype = result_dtype(name, (a, v))
    if dtype == _dt.BOOL:
        raise dtype_error(name, f"{name} needs numeric operands, got {describe(a)} and {describe(v)}")
    x, k = atom(a, dtype, name), atom(v, dtype, name)
    for operand, what in ((x, "a"), (k, "v")):
        if operand.aval.ndim != 1:
            raise shape_error(name, f"{name} needs 1-D operands, got {what}: {operand.aval}")
        if operand.aval.shape[0] == 0:
            raise ValueError(f"{name}: {what} cannot be empty")
    swapped = k.aval.shape[0] > x.aval.shape[0]
    if swapped:
        x, k = k, x
    if flip_kernel:
        k = SL.rev(k, (0,))
    n, m = x.aval.shape[0], k.aval.shape[0]
    pads = {"full": (m - 1, m - 1), "same": (m // 2, m - 1 - m // 2), "valid": (0, 0)}[mode]
    out = C.conv_general_dilated(S.reshape(x, (1, 1, n)), S.reshape(k, (1, 1, m)), padding=(pads,))
    out = S.reshape(out, out.aval.shape[2:], (None,))
    # correlate(v, a) is correlate(a, v) reversed; a convolution is symmetric, so its swap needs no reversal.
    return SL.rev(out, (0,)) if swapped and not flip_kernel else out


# ---------------------------------------------------------------------------------------------- windows


def _window_length(name: str, M: Any) -> int:
    """``M`` as an int: a static length (a float that holds an integer is accepted, as NumPy does)."""
    if isinstance(M, float) and M.is_integer():
        return int(M)
    return static_int(name, M, "the window length M")


def _float_dtype(name: str, dtype: Any, default: np.dtype[Any] = _dt.DEFAULT_FLOAT) -> np.dtype[Any]:
    target = default if dtype is None else to_numpy(dtype)
    if not _dt.is_float(target):
        raise dtype_error(name, f"{name} gives a floating-point window, not {_dt.short_name(target)}")
    return target


def _host_window(name: str, M: Any, dtype: Any, window: Callable[[int], np.ndarray[Any, Any]]) -> AnyTensor:
    """A window of a static length: NumPy's float64 values as a constant, rounded once to ``dtype``."""
    target = _float_dtype(name, dtype)
    return wrap(literal(np.asarray(window(_window_length(name, M)), np.float64), target))


@op
def hanning(M: int, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The Hann window: ``0.5 + 0.5 cos(pi n / (M - 1))`` for ``n`` in ``1 - M, 3 - M, ..., M - 1``; empty for
    ``M < 1``, ``[1.]`` for ``M == 1``."""
    return _host_window("hanning", M, dtype, np.hanning)


@op
def hamming(M: int, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The Hamming window: ``0.54 + 0.46 cos(pi n / (M - 1))`` (see ``hanning``)."""
    return _host_window("hamming", M, dtype, np.hamming)


@op
def blackman(M: int, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The Blackman window: ``0.42 + 0.5 cos(pi n / (M - 1)) + 0.08 cos(2 pi n / (M - 1))`` (see ``hanning``)."""
    return _host_window("blackman", M, dtype, np.blackman)


@op
def bartlett(M: int, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The Bartlett (triangular) window: ``1 - |n| / (M - 1)`` (see ``hanning``), zero at both ends."""
    return _host_window("bartlett", M, dtype, np.bartlett)


@op
def kaiser(M: int, beta: float | Tensor[Any], *, dtype: type[DType] | Any = None) -> Tensor[Any, Any]:
    """The Kaiser window: ``i0(beta sqrt(1 - ((n - a) / a)²)) / i0(beta)`` for ``n = 0..M-1``, ``a = (M - 1) / 2``.
    A Python ``beta`` gives NumPy's float64 values rounded to ``dtype``; an array ``beta`` (float, 0-d) is
    computed on the device in its dtype, differentiably."""
    if not isinstance(beta, (Tensor, np.ndarray, np.generic)):  # a NumPy scalar is data, as everywhere
        if not isinstance(beta, (int, float)) or isinstance(beta, bool):
            raise TypeError(f"kaiser: beta must be a number or a 0-d float tensor, got {beta!r}")
        return _host_window("kaiser", M, dtype, lambda m: np.kaiser(m, float(beta)))
    b = float_operand("kaiser", beta)
    if b.aval.ndim != 0:
        raise shape_error("kaiser", f"beta must be 0-d, got {describe(b)}")
    target = _float_dtype("kaiser", dtype, b.aval.dtype)
    if target != b.aval.dtype:
        raise dtype_error("kaiser", f"dtype={_dt.short_name(target)} with beta {describe(b)}: convert beta instead")
    m = _window_length("kaiser", M)
    if m <= 1:
        return wrap(literal(np.ones(max(m, 0)), target))
    alpha = (m - 1) / 2.0
    # sqrt(1 - ((n - alpha) / alpha)²) depends on M only: NumPy's float64 values, a constant.
    shape = np.sqrt(1 - ((np.arange(m) - alpha) / alpha) ** 2.0)
    scaled = E.mul(b.atom, literal(shape, target))
    return wrap(E.div(_i0_any(scaled), _i0_any(b.atom)))


# ------------------------------------------------------------------------------------------------- i0

# Cephes' Chebyshev coefficients (NumPy's ``_i0A``/``_i0B``): exp(-x) i0(x) on [0, 8] in T_k(x/4 - 1), and
# exp(-x) sqrt(x) i0(x) on [8, inf) in T_k(16/x - 1).
_I0_NEAR = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0_FAR = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


@op
def i0(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The modified Bessel function of the first kind of order 0, by Cephes' Chebyshev expansions (NumPy's
    method): ``exp(|x|) P(|x| / 2 - 2)`` up to 8, ``exp(|x|) Q(32 / |x| - 2) / sqrt(|x|)`` beyond. Its derivative
    is ``i1``."""
    return wrap(_i0_any(float_operand("i0", x).atom))


def _i0_any(x: Atom) -> Atom:
    """``i0`` of any float dtype: narrower ones are computed in float64 and rounded once (in their own precision,
    the 30-term recurrence and ``exp`` cost float32 up to 5 ulps; this way it is within 1)."""
    if x.aval.dtype == _F64:
        return _i0(x)
    return E.convert(_i0(E.convert(x, _F64)), x.aval.dtype)


def _chebyshev(t: Atom, coefficients: Sequence[float]) -> Atom:
    """Cephes' ``chbevl``: Clenshaw's recurrence for ``sum c_k T_k(t / 2)`` (``t`` in [-2, 2])."""
    b0, b1, b2 = E.scalar(coefficients[0], t), E.scalar(0, t), E.scalar(0, t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = E.add(E.sub(E.mul(t, b1), b2), E.scalar(c, t))
    return E.mul(E.sub(b0, b2), E.scalar(0.5, t))


def _i0(x: Atom) -> Atom:
    # |x| whose derivative is ±1 also at 0 (abs's is 0 there, which would zero i0''(0) = 1/2).
    m = E.select(E.lt(x, E.scalar(0, x)), E.neg(x), x)
    eight = E.scalar(8, m)
    far = E.gt(m, eight)
    # Each expansion reads |x| only where it is chosen: elsewhere it would overflow, and select would send its
    # derivative a zero cotangent that 0 * inf turns into NaN.
    near_x = E.select(far, E.scalar(0, m), m)
    far_x = E.select(far, m, eight)
    near = E.mul(E.exp(near_x), _chebyshev(E.sub(E.mul(near_x, E.scalar(0.5, m)), E.scalar(2, m)), _I0_NEAR))
    # exp(x/2)² rather than exp(x): finite up to the largest i0 the dtype holds (exp(x) overflows ~3 sooner).
    half = E.exp(E.mul(far_x, E.scalar(0.5, m)))
    series = _chebyshev(E.sub(E.div(E.scalar(32, m), far_x), E.scalar(2, m)), _I0_FAR)
    tail = E.mul(half, E.div(E.mul(half, series), bind(E.sqrt_p, far_x)))
    tail = E.select(E.eq(m, E.scalar(math.inf, m)), E.scalar(math.inf, m), tail)  # not inf / inf
    return E.select(far, tail, near)


# ------------------------------------------------------------------------------------------------ unwrap


@op
def unwrap(
    p: Tensor[FT, Unpack[Shape]], discont: float | Tensor[Any] | None = None, axis: int | type[Dim] = -1,
    period: float | Tensor[Any] = 2 * math.pi,
) -> Tensor[FT, Unpack[Shape]]:
    """``p`` with every jump between neighbours along ``axis`` larger than ``max(discont, period / 2)`` taken
    down to its remainder modulo ``period`` (NumPy's algorithm: the corrections are summed along the axis)."""
    t = float_operand("unwrap", p)
    if t.aval.ndim == 0:
        raise shape_error("unwrap", f"unwrap needs an operand of rank >= 1, got {describe(t)}")
    ax = normalize_axes("unwrap", axis, t, allow_none=False)[0]
    size = t.aval.shape[ax]
    if size < 2:
        return t
    later, earlier = wrap(SL.slice_in_dim(t.atom, 1, size, ax)), wrap(SL.slice_in_dim(t.atom, 0, size - 1, ax))
    jumps = later - earlier
    high = period / 2
    if discont is None:
        discont = high
    low = -high
    wrapped = remainder(jumps - low, period) + low
    # A jump of exactly period / 2 goes forward (NumPy's tie rule).
    wrapped = where((wrapped == low) & (jumps > 0), high, wrapped)
    correction = where(abs_(jumps) < discont, 0.0, wrapped - jumps)
    rest = later + cumsum(correction, axis=ax)
    return wrap(SL.concatenate([SL.slice_in_dim(t.atom, 0, 1, ax), as_tensor(rest).atom], ax))
