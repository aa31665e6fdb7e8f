"""Complex-valued functions of ``tensorstage.scipy.special`` (imported into it): the Faddeeva function ``wofz`` and the
spherical harmonics ``sph_harm_y``, with ``jax.scipy.special``'s names, signatures and result dtypes.

``wofz(z) = exp(-z²) erfc(-i z)`` for ``z = x + i y`` (computed for ``|x|``; ``w(-conj z) = conj(w(z))`` gives
``x < 0``):

- ``|y| < 4`` and ``|x| <= 28``: Zaghloul and Ali's Algorithm 916 (ACM TOMS 38, 2011), its five sums over ``n >= 1``
  of ``exp(-(a n ∓ x)²) / (a² n² + y²)`` taken over all the terms the region needs at once (66 in f64, 48 in f32)
  on a new last axis. The step ``a`` (0.5183 in f64, 0.6890 in f32: truncation error ``exp(-pi²/a²)``, below eps)
  has 12 significant bits, so ``a n`` and ``a² n²`` are exact and ``a n - x`` loses nothing beside the peak term; the
  odd sum's ``exp(-(a n - x)²) - exp(-(a n + x)²)`` is ``expm1`` of ``4 a n x`` times the second for small ``x``.
- ``|y| >= 4`` or ``|x| > 28``: Laplace's continued fraction ``w = (i/sqrt(pi)) / (z - (1/2) / (z - (2/2) / (z -
  ...)))`` in the upper half-plane (24 levels in f64, 12 in f32; ``i / (sqrt(pi) z)``, scaled, beyond ``|z| = 2^60``),
  and ``w(z) = 2 exp(-z²) - w(-z)`` below the axis, with ``exp(-z²) = exp((|y| - x)(|y| + x)) cis(2 x |y|)``
  (inf where that overflows, as SciPy's).

Its derivative is the holomorphic ``w'(z) = -2 (z w(z) - i/sqrt(pi))`` (a ``custom_jvp``, so ``ts.grad(...,
holomorphic=True)``, jvp, vjp and every higher order hold), with ``z w - i/sqrt(pi)`` taken from the continued
fraction's last two levels for ``|x| >= 6.5`` or ``|y| >= 4`` (no cancellation for large ``|z|``, where ``w'`` is
``~-i/(sqrt(pi) z²)``), and directly within (relative error ~``2|z|² eps``).

Accuracy: largest relative error (complex modulus) against SciPy on 1e5 seeded points per range, and ours against
50-digit mpmath values at the three points where we differ most from SciPy:

=====================================  ==============  ==================  ==============
range of z = x + i y                   f64 vs SciPy    there: ours/SciPy   c64 vs SciPy
                                                       vs exact
=====================================  ==============  ==================  ==============
|x|, |y| <= 1e3                        7.2e-15         3.3e-16 / 7.5e-15   (*)
|x|, |y| <= 30                         1.8e-14         1.7e-15 / 1.7e-14   (*)
|x| <= 40, |y| in ±[1e-300, 1]         3.9e-14         2.4e-16 / 3.8e-14   2.5e-7
|x|, |y| in ±[1e-300, 1]               1.1e-15         2.2e-16 / 8.9e-16   3.4e-7
|x| in ±[1e-300, 1], |y| <= 8          7.4e-15         3.2e-15 / 5.4e-15   4.5e-6 (*)
|x|, |y| <= 8                          7.5e-14 (*)     4.6e-14 / 9.9e-14   2.4e-5 (*)
=====================================  ==============  ==================  ==============

(*) below the axis, beside the zeros of ``w`` or where ``|w| ~ 2 |exp(-z²)|`` is large: there the function's condition
number ``~2|z|²`` (the rounding of ``x² - y²`` and ``2xy`` in ``exp(-z²)``, which SciPy shares) bounds both. In the
upper half-plane c64 is within 3e-7 (subnormal parts, flushed to 0 by XLA on CPU, excluded). The derivative is
within 4e-16 of exact for ``|x| >= 6.5`` and ~``2|z|² eps`` (3e-14) below.

Values at the edges are SciPy's: ``w(±inf + i y) = 0`` (NaN for ``y = -inf``), ``w(x + i inf) = 0``, ``w(x - i inf)``
is NaN (``inf`` at ``x = 0``), ``w(±0 + i y) = erfcx(y) ± 0i`` (so ``w(±0 + i nan) = nan ± 0i``), NaN elsewhere for
a NaN part.

``sph_harm_y(n, m, theta, phi)``: ``Y_n^m(theta, phi) = sqrt((2n + 1)/(4 pi) (n - m)!/(n + m)!) P_n^m(cos theta)
exp(i m phi)`` with the Condon-Shortley phase in ``P_n^m`` and ``Y_n^-m = (-1)^m conj(Y_n^m)``: theta polar, phi
azimuthal (SciPy's ``sph_harm_y``, JAX's). The normalized ``P`` come from the standard stable recurrences (the
diagonal ``P_m^m`` by ``-sqrt((2k + 1)/(2k)) sin(theta)``, then three terms in the degree) in one loop over the
degrees ``1 .. n_max`` for every element at once, keeping each element's own ``(n, |m|)``; ``sin(theta)`` is taken as
``|sin(theta)|``, as SciPy (theta outside [0, pi] is theta's mirror image), with the one-sided derivatives at the
poles. Within ~``n eps`` of SciPy (absolutely, relative to ``sqrt((2n + 1)/(4 pi))``).

Deliberate differences:

- ``wofz`` of f32 (f16, bf16) and c64 is c64, of f64 and c128 c128 (JAX's rule; SciPy computes f32 in c128). An
  integer tensor is refused (``.astype`` first), as everywhere in tensorstage. A Python number gives c64.
- ``sph_harm_y`` broadcasts ``n, m, theta, phi`` together (SciPy's rule; JAX wants one-dimensional ``n, m`` and
  makes a scalar ``theta`` one-dimensional). ``n_max`` is JAX's static largest degree (needed where ``n`` is staged;
  without it ``n`` must be concrete). Where ``n > n_max`` the result is NaN (JAX silently clips ``n`` to ``n_max``);
  a concrete ``n`` above ``n_max`` raises. ``|m| > n`` and ``n < 0`` give 0 (SciPy's). ``diff_n`` may be ``None`` or
  0 (JAX accepts only ``None``; SciPy's gradients are ``ts.grad``/``ts.jacfwd`` here); f32 gives c64 (SciPy: c128).
  Derivatives in ``theta`` and ``phi`` are those of the recurrence (exact to rounding); ``n`` and ``m`` are integers.
"""

from __future__ import annotations

import math
from typing import Any, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...custom_derivatives import custom_jvp
from ...dtypes import bf16, c64, c128, f16, f32, f64
from ...staging import dtypes as _dt
from ...staging.primitives import complex_parts as C
from ...tensor import Tensor, Traced
from .. import numpy as tnp
from ..numpy._core import as_tensor, describe, dtype_error, op, wrap
from .special import AnyTensor
from .special_hyper import static_int
from .special_series import _erfcx
from .stats._common import floats

__all__ = ["sph_harm_y", "wofz"]

S = TypeVarTuple("S")
AnyShape = tuple[Any, ...]

_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _complex(re: AnyTensor, im: AnyTensor) -> AnyTensor:
    return wrap(C.complex(cast(Traced[Any], re).atom, cast(Traced[Any], im).atom))


# ------------------------------------------------------------------------------------------------------ wofz


class _WofzSettings:
    """Per real dtype: Algorithm 916's step ``a`` (12 significant bits: ``a n`` and ``a² n²`` exact), its number of
    terms (``exp(-(a n - x)²)`` below the target from there up to ``x = 28``), the continued fraction's depth."""

    def __init__(self, dtype: Any, target: float, fraction_levels: int) -> None:
        reach = math.sqrt(-math.log(target))
        self.step = math.floor(math.pi / reach * 4096) / 4096
        self.terms = math.ceil((_SERIES_REACH + reach) / self.step)
        self.fraction_levels = fraction_levels
        self.dtype = np.dtype(dtype)


_SERIES_REACH = 28.0  # |x| up to which the sums serve near the axis (the fraction converges slowly there)
_SERIES_HEIGHT = 4.0  # |y| from which the fraction takes over (the sums' imaginary part cancels beyond)
_REMAINDER_REACH = 6.5  # |x| from which z w - i/sqrt(pi) comes from the fraction (converged there; the sums' cancels)
_HUGE = 2.0**60  # i / (sqrt(pi) z) is w to eps from here; |z|² overflows f32 just beyond
_WOFZ = {
    np.dtype(np.float64): _WofzSettings(np.float64, 2.0**-53, 24),
    np.dtype(np.float32): _WofzSettings(np.float32, 2.0**-30, 12),
}


def _series(x: AnyTensor, y: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(Re w, Im w)`` at ``x + i y`` for ``0 <= x <= 28``, ``|y| < 4``: Algorithm 916's
    ``w = e^{-x²} erfcx(y) cis(-2xy) - c y s1 cis(-2xy) + c x e^{-x²} (sin²(xy)/(xy), sinc(2xy)) + (c/2)(y (s2 + s3),
    s5 - s4)`` with ``c = 2a/pi``, ``s1 = sum e^{-a²n² - x²} / d_n``, ``s2, s3 = sum e^{-(an ± x)²} / d_n``, ``s4, s5``
    the same times ``a n``, ``d_n = a² n² + y²``."""
    settings = _WOFZ[x.dtype]
    a, dtype = settings.step, settings.dtype
    along = (1,) * len(x.shape) + (settings.terms,)
    steps = a * np.arange(1, settings.terms + 1, dtype=np.float64)
    an = tnp.asarray(steps.astype(dtype).reshape(along))
    an2 = tnp.asarray((steps * steps).astype(dtype).reshape(along))
    xe, ye = tnp.expand_dims(x, -1), tnp.expand_dims(y, -1)
    d = an2 + ye * ye
    below = tnp.exp(-tnp.square(an - xe)) / d  # the terms of s3
    above = tnp.exp(-tnp.square(an + xe)) / d  # of s2
    growth = 4 * an * xe  # log(below / above)
    small = growth < 0.5
    odd = an * tnp.where(small, above * tnp.expm1(tnp.where(small, growth, 0.0)), below - above)  # of s5 - s4
    s1 = tnp.sum(tnp.exp(-(an2 + xe * xe)) / d, axis=-1)
    s23 = tnp.sum(below + above, axis=-1)
    c = 2 * a / math.pi
    expx2 = tnp.exp(-(x * x))
    coef1 = expx2 * _erfcx(y) - c * y * s1
    coef2 = c * x * expx2
    t = x * y
    zero = t == 0
    safe_t = tnp.where(zero, 1.0, t)
    sin_t, sin_2t = tnp.sin(t), tnp.sin(2 * t)
    sinc_t = tnp.where(zero, 1.0, sin_t / safe_t)
    sinc_2t = tnp.where(zero, 1.0, sin_2t / (2 * safe_t))
    re = coef1 * tnp.cos(2 * t) + coef2 * sin_t * sinc_t + (c / 2) * y * s23
    im = coef2 * sinc_2t - coef1 * sin_2t + (c / 2) * tnp.sum(odd, axis=-1)
    return re, im


def _reciprocal(x: AnyTensor, y: AnyTensor) -> AnyTensor:
    """``1 / (x + i y)`` for ``x, y >= 0`` without overflow or underflow of ``x² + y²``."""
    scale = tnp.maximum(x, y)
    p, q = x / scale, y / scale
    size = p * p + q * q
    shrink = 1.0 / scale  # not (p / size) / scale: XLA folds that into p / (size * scale), which overflows
    return _complex((p / size) * shrink, (-q / size) * shrink)


def _fraction(x: AnyTensor, y: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(w, z w - i/sqrt(pi))`` at ``z = x + i y`` (``x, y >= 0``, ``|z| >= 4``) from Laplace's continued fraction
    ``w = (i/sqrt(pi)) / w_0``, ``w_k = z - ((k + 1)/2) / w_{k+1}``: then ``z w - i/sqrt(pi) = (i/sqrt(pi)) (z -
    w_0) / w_0 = (i/(2 sqrt(pi))) / (w_0 w_1)``."""
    levels = _WOFZ[x.dtype].fraction_levels
    huge = tnp.maximum(x, y) > _HUGE
    z = _complex(tnp.where(huge, 0.0, x), tnp.where(huge, 8.0, y))
    w1 = fori_loop(0, levels - 1, lambda i, w: z - ((levels - i).astype(z.dtype) / 2) / w, z)
    w0 = z - 0.5 / w1
    far = _reciprocal(tnp.where(huge, x, 1.0), tnp.where(huge, y, 1.0))  # 1 / z
    w = tnp.where(huge, 1j * _INV_SQRT_PI * far, 1j * _INV_SQRT_PI / w0)
    remainder = tnp.where(huge, (0.5j * _INV_SQRT_PI) * far * far, (0.5j * _INV_SQRT_PI) / (w0 * w1))
    return w, remainder


def _twice_gaussian(x: AnyTensor, y: AnyTensor) -> AnyTensor:
    """``2 exp(-(x - i y)²)`` for ``x, y >= 0``: ``2 exp((y - x)(y + x)) cis(2xy)``; 0 where the modulus underflows
    (whatever the phase), inf where it overflows (the phase's sign), not inf * 0 at a zero phase."""
    half = tnp.exp(0.5 * ((y - x) * (y + x)))  # squared below: finite where the product is
    phase = 2 * x * y
    re = 2 * (half * tnp.cos(phase)) * half
    im = tnp.where(phase == 0, 0.0, 2 * (half * tnp.sin(phase)) * half)
    gone = half == 0
    return _complex(tnp.where(gone, 0.0, re), tnp.where(gone, 0.0, im))


def _by_fraction(x: AnyTensor, y: AnyTensor, use: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(w, z w - i/sqrt(pi))`` at ``z = x + i y`` (``x >= 0``) where ``use``, from the fraction at ``x + i|y|``;
    below the axis ``w(z) = 2 exp(-z²) - w(-z)`` with ``w(-x + i|y|) = conj(w(x + i|y|))``, and so ``z w(z) -
    i/sqrt(pi) = 2 z exp(-z²) - conj(x + i|y| remainder)``."""
    fx, fy = tnp.where(use, x, 0.0), tnp.where(use, tnp.abs(y), _SERIES_HEIGHT)
    upper, upper_remainder = _fraction(fx, fy)
    gaussian = _twice_gaussian(fx, fy)
    lower = y < 0
    w = tnp.where(lower, gaussian - tnp.conj(upper), upper)
    remainder = tnp.where(lower, _complex(fx, -fy) * gaussian - tnp.conj(upper_remainder), upper_remainder)
    return w, remainder


def _by_series(x: AnyTensor, y: AnyTensor, use: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(w, z w - i/sqrt(pi))`` at ``z = x + i y`` (``x >= 0``) where ``use``, from Algorithm 916's sums."""
    sx, sy = tnp.where(use, x, 1.0), tnp.where(use, y, 0.5)
    w = _complex(*_series(sx, sy))
    return w, _complex(sx, sy) * w - 1j * _INV_SQRT_PI


def _wofz_parts(z: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(w(z), z w(z) - i/sqrt(pi))`` for a complex ``z``: computed at ``|Re z| + i Im z``, each method on the
    inputs clamped into its region, then mirrored (``w(-conj z) = conj(w(z))``)."""
    re_z, im_z = tnp.real(z), tnp.imag(z)
    x = tnp.abs(re_z)
    finite = tnp.isfinite(re_z) & tnp.isfinite(im_z)
    far = finite & ((tnp.abs(im_z) >= _SERIES_HEIGHT) | (x > _SERIES_REACH))
    fraction_remainder = far | (finite & (x >= _REMAINDER_REACH))
    fraction, fraction_r = _by_fraction(x, im_z, fraction_remainder)
    series, series_r = _by_series(x, im_z, finite & ~far)
    w = tnp.where(far, fraction, series)
    remainder = tnp.where(fraction_remainder, fraction_r, series_r)
    zero = tnp.zeros_like(x)
    on_axis = _complex(_erfcx(im_z), zero)  # w(i y) = erfcx(y), also at y = ±inf and NaN
    edge = tnp.where(tnp.isnan(re_z) | tnp.isnan(im_z) | (im_z == -math.inf), math.nan, zero)
    w = tnp.where(x == 0, on_axis, tnp.where(finite, w, _complex(edge, edge)))
    remainder = tnp.where(finite, remainder, math.nan)
    mirrored = tnp.signbit(re_z)
    w = tnp.where(mirrored, tnp.conj(w), w)
    w = tnp.where((im_z == math.inf) & (x > 0), _complex(zero, zero), w)  # +0 + 0i there, as SciPy's
    return w, tnp.where(mirrored, -tnp.conj(remainder), remainder)


@custom_jvp
def _wofz(z: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    return _wofz_parts(z)


@_wofz.defjvp
def _wofz_jvp(primals: Any, tangents: Any) -> Any:
    """``w' = -2 r`` and ``r' = w + z w' = w - 2 z r`` for ``r = z w - i/sqrt(pi)``: every order from the pair."""
    (z,), (t,) = primals, tangents
    w, r = _wofz(z)
    return (w, r), (-2 * r * t, (w - 2 * z * r) * t)


def _complex_operand(name: str, z: Any) -> AnyTensor:
    """``z`` as c64 or c128: f32 (f16, bf16) to c64 and f64 to c128, as JAX's; integers refused."""
    t = as_tensor(z)
    dtype = t.aval.dtype
    if _dt.is_complex(dtype):
        return t
    if not _dt.is_float(dtype):
        raise dtype_error(name, f"{name} needs a floating-point or complex operand, got {describe(t)}; convert it with "
                          ".astype(f32)")
    target = np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)
    return t.astype(target)


@overload
def wofz(z: Tensor[f64, Unpack[S]] | Tensor[c128, Unpack[S]]) -> Tensor[c128, Unpack[S]]: ...
@overload
def wofz(
    z: Tensor[f32, Unpack[S]] | Tensor[c64, Unpack[S]] | Tensor[f16, Unpack[S]] | Tensor[bf16, Unpack[S]]
) -> Tensor[c64, Unpack[S]]: ...
@overload
def wofz(z: float | complex) -> Tensor[c64]: ...
@overload
def wofz(z: AnyTensor) -> AnyTensor: ...
@op
def wofz(z: Any) -> Any:
    """The Faddeeva function ``w(z) = exp(-z²) erfc(-i z)``, complex (c64 for f32 and c64 input, c128 for f64 and
    c128), holomorphic: ``w'(z) = -2 z w(z) + 2i/sqrt(pi)``."""
    w, _ = _wofz(_complex_operand("wofz", z))
    return w


# ------------------------------------------------------------------------------------------------ sph_harm_y


def _concrete_degrees(n: Any) -> np.ndarray[Any, Any] | None:
    """``n``'s values where they are known now (a Python or NumPy value, a ``ts.Array``), None when staged."""
    if isinstance(n, Traced):
        return None
    return np.asarray(n)


def _degree_bound(n: Any, n_max: Any) -> int:
    """JAX's ``n_max``: given, or the largest concrete ``n``; a concrete ``n`` above a given bound raises."""
    values = _concrete_degrees(n)
    if values is not None and values.dtype.kind not in "iu":
        return 0 if n_max is None else static_int("sph_harm_y", "n_max", n_max)  # (the op refuses n, naming its dtype)
    if n_max is None:
        if values is None:
            raise ValueError("sph_harm_y: n_max (the largest degree, a static int) must be given where n is staged")
        return max(int(values.max()), 0) if values.size else 0
    bound = static_int("sph_harm_y", "n_max", n_max)
    if values is not None and values.size and int(values.max()) > bound:
        raise ValueError(f"sph_harm_y: n holds degree {int(values.max())}, above n_max={bound}")
    return bound


def _integers(name: str, value: Any) -> AnyTensor:
    t = as_tensor(value)
    if not _dt.is_integer(t.aval.dtype):
        raise dtype_error("sph_harm_y", f"sph_harm_y needs integer {name}, got {describe(t)}; convert it with "
                          ".astype(i32)")
    return t


def _legendre(n: AnyTensor, order: AnyTensor, cos: AnyTensor, sin: AnyTensor, n_max: int) -> AnyTensor:
    """The orthonormal ``P_n^order(cos)`` (with ``1/sqrt(4 pi)`` and the Condon-Shortley phase) for ``0 <= order
    <= n <= n_max``, each element its own ``(n, order)``: one loop over the degrees ``l``, building the diagonal
    ``P_l^l`` while ``l <= order``, then ``P_l = a_l (cos P_{l-1} - b_l P_{l-2})``."""

    def degree(i: Any, carry: tuple[AnyTensor, AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
        previous, current, out = carry
        l = i.astype(cos.dtype)
        diagonal = l <= order
        gap = tnp.where(diagonal, 1.0, l * l - order * order)
        a = tnp.sqrt((4 * l * l - 1) / gap)
        b = tnp.sqrt(tnp.maximum((l - 1) * (l - 1) - order * order, 0.0) / tnp.maximum(4 * (l - 1) * (l - 1) - 1, 1.0))
        step_up = -tnp.sqrt((2 * l + 1) / (2 * l)) * sin * current
        nxt = tnp.where(diagonal, step_up, a * (cos * current - b * previous))
        return tnp.where(diagonal, 0.0, current), nxt, tnp.where(l == n, nxt, out)

    first = tnp.full_like(cos, 0.5 / math.sqrt(math.pi))
    start = (tnp.zeros_like(cos), first, tnp.where(n == 0, first, 0.0))
    if n_max == 0:
        return start[2]
    _, _, out = fori_loop(1, n_max + 1, degree, start)
    return out


@op
def _sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, n_max: int) -> AnyTensor:
    degree, signed = _integers("degrees n", n), _integers("orders m", m)
    theta_t, phi_t = floats("sph_harm_y", theta, phi)
    if theta_t.dtype.itemsize < 4:  # f16, bf16: computed in f32, c64 out (there is no smaller complex dtype)
        theta_t, phi_t = theta_t.astype(np.float32), phi_t.astype(np.float32)
    dtype = theta_t.dtype
    sin = tnp.sin(theta_t)
    # every operand to the common shape: the loop's carry has it
    n_f, m_f, cos, sin, phi_t = tnp.broadcast_arrays(degree.astype(dtype), signed.astype(dtype), tnp.cos(theta_t),
                                                     tnp.where(sin < 0, -sin, sin), phi_t)
    order = tnp.abs(m_f)
    p = _legendre(n_f, order, cos, sin, n_max)
    p = tnp.where(order > n_f, 0.0, tnp.where(n_f > n_max, math.nan, p))
    odd = order - 2 * tnp.floor(order / 2) == 1
    p = tnp.where((m_f < 0) & odd, -p, p)  # Y_n^-m = (-1)^m conj(Y_n^m)
    angle = m_f * phi_t
    return _complex(p * tnp.cos(angle), p * tnp.sin(angle))


Degrees = int | np.ndarray[Any, Any] | Tensor[Any, Unpack[AnyShape]]


@overload
def sph_harm_y(n: Degrees, m: Degrees, theta: Tensor[f64, Unpack[S]], phi: Tensor[f64, Unpack[AnyShape]] | float,
               diff_n: int | None = None, n_max: int | None = None) -> Tensor[c128, Unpack[AnyShape]]: ...
@overload
def sph_harm_y(n: Degrees, m: Degrees, theta: Tensor[f32, Unpack[S]] | float,
               phi: Tensor[f32, Unpack[AnyShape]] | float, diff_n: int | None = None,
               n_max: int | None = None) -> Tensor[c64, Unpack[AnyShape]]: ...
@overload
def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> AnyTensor: ...
def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None, n_max: int | None = None) -> Any:
    """The spherical harmonics ``Y_n^m(theta, phi)`` (theta polar, phi azimuthal; orthonormal on the sphere, with the
    Condon-Shortley phase), broadcasting ``n``, ``m`` (integers), ``theta``, ``phi`` (floats of one dtype; the
    result is their complex dtype). ``n_max`` is the static largest degree (needed where ``n`` is staged): NaN where
    ``n`` exceeds it. 0 where ``|m| > n`` or ``n < 0``. ``diff_n`` must be None or 0 (JAX's; differentiate with
    ``ts.grad``)."""
    if diff_n is not None and (isinstance(diff_n, bool) or diff_n != 0):
        raise NotImplementedError(f"sph_harm_y: diff_n={diff_n!r} is not supported (as in JAX); take derivatives in "
                                  "theta and phi with ts.grad or ts.jacfwd")
    return _sph_harm_y(n, m, theta, phi, n_max=_degree_bound(n, n_max))
