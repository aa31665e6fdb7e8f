"""More of ``tensorstage.scipy.special`` (imported into it): Dawson's integral, the dilogarithm, the generalized
exponential integral, the sine/cosine and Fresnel integrals, Owen's T function and the Bernoulli numbers, built from
elementwise operations as fixed-length series, continued fractions, asymptotic series and a Gauss-Legendre rule
(loops with static trip counts: scans, so every transform goes through them), each on its region selected by
``where`` on clamped inputs. f16 and bf16 are computed in f32. Values at the edges (NaN, ±inf, ±0, off the domain)
are SciPy's.

- ``dawsn(x)``: ``x exp(-x²) sum_k x^2k / (k! (2k+1))`` (positive terms) below 6 (f32: 4), ``1/(2x) sum_k
  (2k-1)!! / (2x²)^k`` above.
- ``spence(x) = Li2(1 - x)``: the Bernoulli series in ``-log x`` on [1/2, 2], reflection below, inversion above.
- ``expn(n, x)``: the power series (``x <= 1``, ``n < 25``), else the continued fraction (100 terms).
- ``sici(x)``: power series below 4; above, ``E1(i x)`` from its continued fraction in real arithmetic.
- ``fresnel(x)``: power series below 1.5; above, the auxiliary functions from erfc's continued fraction, with the
  phase ``pi x² / 2`` taken from an exact ``x² = hi + lo`` reduced mod 4.
- ``owens_t(h, a)``: 40-point Gauss-Legendre on ``[0, min(|a|, 9/|h|)]`` for ``|a| <= 1``, ``T(h, a) = (Phi(h)
  Q(ah) + Phi(ah) Q(h))/2 - T(ah, 1/a)`` above.
- ``bernoulli(n)``: exact rationals, rounded (a constant).

Maximum error against 40-digit references (mpmath; 1500 random points per range, 600 for owens_t), and against
SciPy on 1e5 points per range, in ulps (f32: subnormal inputs and outputs excluded, XLA on CPU flushes them):

==========  ==================================  =====================  ===================  =============
function    range                               f64 vs exact (SciPy)   f64 vs SciPy (1e5)   f32 vs exact
==========  ==================================  =====================  ===================  =============
dawsn       [-10, 10]                           9.7 (6.3)              31                   4.1
dawsn       ±[1e-300, 1e300]                    1.0 (20)               66                   0.8
spence      [0, 4]                              1.9 (15)               17                   1.7
spence      [1e-300, 1e300]                     5.5 (4.3)              12                   1.1
expn        n < 50, x in [0, 5]                 3.7 (8.0)              11                   2.6
expn        n < 6, x in [1e-300, 700]           1.4 (3.8)              6.8                  1.0
expn        n in [1, 1e6], x in [0, 50]         2.6 (33)               87                   1.6
sici: Si    [-50, 50]                           2.8 (1.6)              4.0                  1.8
sici: Si    [1e-300, 1e300]                     1.0 (1.0)              2.2                  0.6
sici: Ci    [-50, 50] (*)                       4.8 (2.4)              6.0                  2.3
sici: Ci    [1e-300, 1e300] (*)                 1.0 (1.0)              4.0                  0.9
fresnel: S  [-6, 6]                             2.3 (3.1)              4.2                  3.0
fresnel: S  [1e-300, 1e150]                     1.8 (2e7)              3.7e7                1.4
fresnel: C  [-6, 6]                             3.1 (2.6)              5.7                  2.5
fresnel: C  [1e-300, 1e150]                     1.5 (2.2e7)            2.9e7                0.8
owens_t     |h| < 8, |a| < 1 (*)                1.6 (94)               281                  1.1
owens_t     |h| < 8, |a| < 12 (*)               3.1 (26)               123                  2.2
owens_t     h < 35, a in [1e-10, 1e10] (*)      2.1 (1.6e7)            7e7                  2.7 (**)
==========  ==================================  =====================  ===================  =============

(*) Ci and owens_t: Ci's error is absolute (in eps) beside its zeros; owens_t's is in units of ``(1 + h²/2) eps``,
T's condition number in ``h`` (an ulp of ``h`` moves T by ~h² ulps; the exponent's rounding costs the same).
(**) for results above 1e-35: below, f32 intermediates reach the flushed subnormals (1e-4 relative at 8e-36).

Deliberate differences from SciPy (where SciPy is less accurate, ours follows the exact value):

- ``fresnel(x)`` far out: SciPy rounds ``pi x² / 2`` (phase error ``pi x² eps``: 1e-7 relative at x = 1e8) and is NaN
  above 1.3e154 (``x²`` overflows); ours is exact there, and ±1/2 in the limit.
- ``owens_t``: SciPy's is off by up to 1.5e-7 relative (tiny ``a``, large ``h``), 1.5e-13 for ``|h| < 8``.
- ``expn(n, x)`` truncates a non-integer ``n`` (as SciPy, without its warning); integer tensors are refused (as
  everywhere here: ``.astype`` first). Gradients in ``n`` are zero.
- ``dawsn`` near 0.011 and ``expn`` for ``n > 50``: SciPy's errors (1.4e-14, 4e-14), not ours.
- Results in the subnormal range are 0 (XLA on CPU flushes subnormals, f64 too): ``fresnel(1e-103)``'s S is 0.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ...control_flow import fori_loop
from .. import numpy as tnp
from ...staging.primitives.autodiff import stop_gradient
from ...tensor import Traced
from ..numpy._core import float_operand, op, wrap
from .special import AnyTensor, Operand, ndtr
from .special_series import _EULER_GAMMA, _backward, _clamp_below, _tensor_unary
from .stats._common import floats

__all__: list[str] = ["bernoulli", "dawsn", "expn", "fresnel", "owens_t", "sici", "spence"]


_Quad = tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]  # a four-part loop carry


def _f64(x: AnyTensor) -> bool:
    return bool(x.dtype == np.float64)


def _signless_zero(x: AnyTensor) -> AnyTensor:
    """+0 where ``x`` is ±0 (SciPy's value of several odd functions at -0; elsewhere 0), with ``x``'s derivative
    (XLA folds ``x + 0``; not ``x - x``)."""
    return x - wrap(stop_gradient(cast(Traced[Any], x).atom))


def _in_f32_below(fn: Any, *operands: AnyTensor) -> Any:
    """``fn(*operands)`` (a tensor or a tuple of them), computed in f32 for f16/bf16 operands."""
    dtype = operands[0].dtype
    if dtype.itemsize >= 4:
        return fn(*operands)
    out = fn(*(t.astype(np.float32) for t in operands))
    return tuple(t.astype(dtype) for t in out) if isinstance(out, tuple) else out.astype(dtype)


def _series(terms: int, start: AnyTensor, ratio: Any) -> AnyTensor:
    """``sum_{k=0..terms} t_k`` with ``t_0 = start`` and ``t_k = t_{k-1} * ratio(k)`` (``k`` a float tensor), as
    one loop summed from the first term (the terms here shrink, so the sum is exact to its last bits)."""

    def body(i: Any, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        term = carry[0] * ratio(i.astype(start.dtype))
        return term, carry[1] + term

    _, total = fori_loop(1, terms + 1, body, (start, start))
    return total


# ----------------------------------------------------------------------------------------------------- dawsn

# Where the asymptotic series takes over: its smallest term, ~exp(-x²), is below eps from here up.
_DAWSN_SWITCH = {np.dtype(np.float64): 6.0, np.dtype(np.float32): 4.0}


def _dawsn_series(x: AnyTensor) -> AnyTensor:
    """``x exp(-s) sum_k s^k / (k! (2k + 1))`` with ``s = x²`` (``sqrt(pi)/2 erfi(x)``: positive terms, no
    cancellation). The same rounded ``s`` in the sum and the exponential: ``exp(-s) sum`` is well conditioned in
    ``s``, while each alone carries ``s`` times its rounding (``exp(-x²)`` exact would leave 30 ulps at x = 5.7)."""
    s = x * x
    terms = 130 if _f64(x) else 60
    total = _series(terms, x, lambda k: s * (2 * k - 1) / (k * (2 * k + 1)))
    return total * tnp.exp(-s)


def _dawsn_asymptotic(x: AnyTensor) -> AnyTensor:
    """``1/(2x) sum_k (2k - 1)!! / (2x²)^k``, from where its smallest term is below eps."""
    inv = 1.0 / (2 * x * x)
    terms = int(_DAWSN_SWITCH[x.dtype] ** 2)
    return _series(terms, 0.5 / x, lambda k: (2 * k - 1) * inv)


def _dawsn(x: AnyTensor) -> AnyTensor:
    """Dawson's integral ``F(x) = exp(-x²) int_0^x exp(t²) dt``; odd, ±0 at ±inf."""
    switch = _DAWSN_SWITCH[x.dtype]
    large = tnp.abs(x) >= switch
    # both expansions are odd as written: no |x| (whose derivative at 0 is not F'(0) = 1)
    near = _dawsn_series(_clamp_below(x, ~large, 0.0))
    far = _dawsn_asymptotic(_clamp_below(x, large, switch))
    return tnp.where(large, far, near)


# ---------------------------------------------------------------------------------------------------- spence

_PI2_6 = math.pi ** 2 / 6


def _bernoulli_numbers(count: int) -> list[float]:
    """B_0 .. B_{count - 1} (B_1 = -1/2), exactly as fractions, rounded to floats."""
    from fractions import Fraction

    b = [Fraction(1)]
    for m in range(1, count):
        b.append(-sum((math.comb(m + 1, j) * b[j] for j in range(m)), Fraction(0)) / (m + 1))
    return [float(v) for v in b]


def _spence_near_one(u: AnyTensor) -> AnyTensor:
    """``spence(exp(-u)) = sum_n B_n u^(n+1) / (n+1)!`` for ``|u| <= log 2`` (the even terms shrink as
    ``(u / 2 pi)²``: 9 of them reach f64's eps)."""
    coefficients = [b / math.factorial(n + 1) for n, b in enumerate(_bernoulli_numbers(20)) if n < 2 or n % 2 == 0]
    u2 = u * u
    total = tnp.full_like(u, coefficients[-1])
    for c in reversed(coefficients[2:-1]):
        total = total * u2 + c
    return u * (1.0 + u * (coefficients[1] + u * total))


def _log1m(x: AnyTensor) -> AnyTensor:
    """``log(1 - x)`` for ``0 <= x <= 1/2``, as ``log(u) + e / u`` with ``u + e = 1 - x`` exactly (XLA's f64
    ``log1p`` is off by up to 120 ulps on [-0.4143, -0.3645])."""
    u = 1.0 - x
    return tnp.log(u) + ((1.0 - u) - x) / u


def _spence(x: AnyTensor) -> AnyTensor:
    """SciPy's dilogarithm ``spence(x) = int_1^x log t / (1 - t) dt = Li2(1 - x)``: the Bernoulli series in
    ``-log x`` on [1/2, 2], the reflection ``pi²/6 - log x log(1 - x) - spence(1 - x)`` below, the inversion
    ``-log² x / 2 - spence(1 / x)`` above; NaN below 0 and at inf (as SciPy)."""
    low, high = x < 0.5, x > 2.0
    middle = ~(low | high)
    mid = _spence_near_one(-tnp.log(_clamp_below(x, middle, 1.0)))
    # below 1/2: reflection, with spence(1 - x) from -log(1 - x) (1 - x itself is rounded)
    small = _clamp_below(x, low & (x > 0), 0.25)
    log_small = tnp.log(small)
    log1m_small = _log1m(small)
    below = _PI2_6 - log_small * log1m_small - _spence_near_one(-log1m_small)
    below = tnp.where(x == 0, _PI2_6, below)
    # above 2: inversion, then the reflection of spence(1/x) (1/x < 1/2)
    big = _clamp_below(x, high & (x < math.inf), 4.0)
    log_big = tnp.log(big)
    inv_log1p = _log1m(1.0 / big)
    above = -0.5 * log_big * log_big - _PI2_6 - log_big * inv_log1p + _spence_near_one(-inv_log1p)
    out = tnp.where(low, below, tnp.where(high, above, mid))
    return tnp.where((x < 0) | (x == math.inf), math.nan, out)


dawsn = _tensor_unary("dawsn", _dawsn)
spence = _tensor_unary("spence", _spence)


# ------------------------------------------------------------------------------------------------------ expn

_EXPN_SERIES_TERMS = 25  # x^k / k! below eps from here for x <= 1
_EXPN_FRACTION_TERMS = 100  # 1 ulp at x = 1, n = 1 (the slowest corner of the fraction's region)
_EXPN_FRACTION_N = 25  # from this order up the fraction converges in its terms down to x = 0


def _expn_fraction(n: AnyTensor, x: AnyTensor) -> AnyTensor:
    """``E_n(x) = exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))``, evaluated backward."""
    terms = _EXPN_FRACTION_TERMS
    denominator = _backward(terms, lambda k, d: x + n + 2 * (k - 1) - k * (n + k - 1) / d, x + n + 2 * terms)
    return tnp.exp(-x) / denominator


def _expn_series(n: AnyTensor, x: AnyTensor) -> AnyTensor:
    """``E_n(x)`` for ``0 < x <= 1``, ``1 <= n < 25``: ``(-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1}
    (-x)^k / ((k - n + 1) k!)``, with ``(-x)^(n-1) / (n-1)!`` and ``psi(n) = -gamma + sum_{k < n} 1/k`` taken from
    the loop (exact to rounding: f32's lgamma and digamma are not)."""

    def body(i: Any, carry: _Quad) -> _Quad:
        term, total, power, harmonic = carry
        k = i.astype(x.dtype)
        term = term * -x / k
        gap = k - n + 1
        at_gap = gap == 0
        total = total - tnp.where(at_gap, 0.0, term / tnp.where(at_gap, 1.0, gap))
        return term, total, tnp.where(at_gap, term, power), harmonic + tnp.where(gap <= 0, 1.0 / k, 0.0)

    first = n == 1  # the k = 0 term is the power's
    start = (tnp.ones_like(x), tnp.where(first, 0.0, 1.0 / (n - 1)), tnp.where(first, 1.0, tnp.zeros_like(x)),
             tnp.zeros_like(x))
    _, total, power, harmonic = fori_loop(1, _EXPN_SERIES_TERMS + 1, body, start)
    return total + power * ((harmonic - _EULER_GAMMA) - tnp.log(x))


def _expn(n: AnyTensor, x: AnyTensor) -> AnyTensor:
    """The generalized exponential integral, branch by branch on clamped inputs."""
    n = tnp.trunc(n)  # as SciPy, which casts n to an integer
    positive = (x > 0) & (n >= 1) & (n < math.inf) & (x < math.inf)
    series_use = positive & (x <= 1) & (n < _EXPN_FRACTION_N)
    fraction_use = positive & ~series_use
    series = _expn_series(_clamp_below(n, series_use, 1.0), _clamp_below(x, series_use, 0.5))
    fraction = _expn_fraction(_clamp_below(n, fraction_use, 1.0), _clamp_below(x, fraction_use, 1.0))
    out = tnp.where(series_use, series, fraction)
    # n = 0: exp(-x) / x; x = 0: 1 / (n - 1) (inf for n <= 1); x = inf: 0
    x0 = _clamp_below(x, x > 0, 1.0)
    out = tnp.where(n == 0, tnp.where(x > 0, tnp.exp(-x0) / x0, math.inf), out)
    out = tnp.where(x == 0, tnp.where(n <= 1, math.inf, 1.0 / _clamp_below(n - 1, n > 1, 1.0)), out)
    out = tnp.where((x == math.inf) & (n < math.inf), 0.0, out)
    return tnp.where((x < 0) | (n < 0) | (n == math.inf) | tnp.isnan(n) | tnp.isnan(x), math.nan, out)


@op
def expn(n: Operand, x: Operand) -> AnyTensor:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt`` (``n`` truncated to an
    integer, as SciPy); NaN for ``n < 0`` or ``x < 0``."""
    return cast(AnyTensor, _in_f32_below(_expn, *floats("expn", n, x)))


# ------------------------------------------------------------------------------------------ complex helpers


def _reciprocal(re: AnyTensor, im: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``1 / (re + i im)`` (operands whose squares stay finite)."""
    scale = re * re + im * im
    return re / scale, -im / scale


def _complex_fraction(terms: int, numerator: Any, base: tuple[AnyTensor, AnyTensor],
                      step: float) -> tuple[AnyTensor, AnyTensor]:
    """``1 / (b - a_1 / (b + s - a_2 / (b + 2 s - ...)))`` for a complex ``b`` and real ``a_k = numerator(k)``,
    evaluated backward in real and imaginary parts."""
    re, im = base

    def body(i: Any, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        k = (terms - i).astype(re.dtype)
        inv_re, inv_im = _reciprocal(*carry)
        a = numerator(k)
        return re + step * (k - 1) - a * inv_re, im - a * inv_im

    denominator = fori_loop(0, terms, body, (re + step * terms, im))
    return _reciprocal(*denominator)


# ------------------------------------------------------------------------------------------------------ sici

_SICI_SWITCH = 4.0  # the series loses a factor ~exp(x) / x to cancellation, the fraction converges from here
_SICI_FAR = 2.0 ** 26  # 1 / (1 + i x) is E1(i x) exp(i x) to eps from here


def _sici_series(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``Si = sum (-1)^k x^(2k+1) / ((2k+1) (2k+1)!)``, ``Ci = gamma + log x + sum (-1)^k x^2k / (2k (2k)!)``."""
    x2 = x * x

    def body(i: Any, carry: _Quad) -> _Quad:
        k = i.astype(x.dtype)
        even = carry[0] * -x2 / ((2 * k - 1) * (2 * k))  # (-1)^k x^2k / (2k)!
        odd = carry[1] * -x2 / ((2 * k) * (2 * k + 1))  # (-1)^k x^(2k+1) / (2k+1)!
        return even, odd, carry[2] + odd / (2 * k + 1), carry[3] + even / (2 * k)

    terms = 22 if _f64(x) else 13
    zero = tnp.zeros_like(x)
    _, _, si, ci_sum = fori_loop(1, terms + 1, body, (tnp.ones_like(x), x, x, zero))
    return si, _EULER_GAMMA + tnp.log(tnp.abs(x)) + ci_sum


def _sici_fraction(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(p, q) = exp(i x) E1(i x) = 1 / (1 + i x - 1 / (3 + i x - 4 / (5 + i x - ...)))``; the limit
    ``1 / (1 + i x)`` far out (where ``x²`` would overflow)."""
    far = x >= _SICI_FAR
    near_x = _clamp_below(x, ~far, 1.0)
    p, q = _complex_fraction(60 if _f64(x) else 30, lambda k: k * k, (tnp.ones_like(x), near_x), 2.0)
    inv = 1.0 / _clamp_below(x, far, _SICI_FAR)
    scale = 1.0 / (1.0 + inv * inv)
    return tnp.where(far, inv * inv * scale, p), tnp.where(far, -inv * scale, q)


def _sici_far(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(Si, Ci)`` for ``x >= 4``: ``Si = pi/2 + Im E1(i x)``, ``Ci = -Re E1(i x)``; ``(pi/2, 0)`` at inf."""
    finite = _clamp_below(x, x < math.inf, _SICI_SWITCH)
    p, q = _sici_fraction(finite)
    cos, sin = tnp.cos(finite), tnp.sin(finite)
    si = tnp.where(x == math.inf, math.pi / 2, math.pi / 2 + q * cos - p * sin)
    return si, tnp.where(x == math.inf, 0.0, -(p * cos + q * sin))


def _sici(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    magnitude = tnp.abs(x)
    large = magnitude >= _SICI_SWITCH
    si_near, ci_near = _sici_series(_clamp_below(x, ~large & (x != 0), 1.0))  # Si's series is odd as written
    si_far, ci_far = _sici_far(_clamp_below(magnitude, large, _SICI_SWITCH))
    si = tnp.where(large, tnp.copysign(si_far, x), tnp.where(x == 0, _signless_zero(x), si_near))
    ci = tnp.where(large, ci_far, tnp.where(x == 0, -math.inf, ci_near))
    return si, tnp.where(x == -math.inf, math.nan, ci)


@op
def sici(x: Operand) -> tuple[AnyTensor, AnyTensor]:
    """The sine and cosine integrals ``(Si(x), Ci(x))``: ``Si = int_0^x sin t / t dt`` (odd), ``Ci = gamma + log|x| +
    int_0^|x| (cos t - 1) / t dt`` (SciPy's real part for ``x < 0``; NaN at -inf, -inf at 0)."""
    return cast(tuple[AnyTensor, AnyTensor], _in_f32_below(_sici, float_operand("sici", x)))


# --------------------------------------------------------------------------------------------------- fresnel

_FRESNEL_SWITCH = 1.5  # as for sici: the series below, the continued fraction above
_FRESNEL_FAR = {np.dtype(np.float64): 2.0 ** 14, np.dtype(np.float32): 2.0 ** 7}  # (f, g) = (1/(pi x), 1/(pi² x³))
_FRESNEL_FLAT = {np.dtype(np.float64): 2.0 ** 55, np.dtype(np.float32): 2.0 ** 26}  # 1/(pi x) < eps/2 from here


def _half_pi_square_phase(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(cos, sin)(pi x² / 2)`` with ``x²`` exact as ``hi + lo`` and ``hi`` reduced mod 4 exactly (the rounded
    ``x²`` would put an error of ``pi x² eps`` into the phase)."""
    split = 2.0 ** (27 if _f64(x) else 12) + 1.0
    scaled = x * split
    head = scaled - (scaled - x)
    tail = x - head
    hi = x * x
    lo = ((head * head - hi) + 2 * head * tail) + tail * tail
    reduced = hi - 4.0 * tnp.round(hi * 0.25)
    phase = (math.pi / 2) * (reduced + lo)
    return tnp.cos(phase), tnp.sin(phase)


def _fresnel_series(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """With ``t = pi x² / 2``: ``C = x sum (-1)^k t^2k / ((2k)! (4k+1))``, ``S = x sum (-1)^k t^(2k+1) /
    ((2k+1)! (4k+3))``."""
    t = (math.pi / 2) * x * x
    t2 = t * t

    def body(i: Any, carry: _Quad) -> _Quad:
        k = i.astype(x.dtype)
        even = carry[0] * -t2 / ((2 * k - 1) * (2 * k))
        odd = carry[1] * -t2 / ((2 * k) * (2 * k + 1))
        return even, odd, carry[2] + even / (4 * k + 1), carry[3] + odd / (4 * k + 3)

    terms = 14 if _f64(x) else 9
    one = tnp.ones_like(x)
    _, _, c, s = fori_loop(1, terms + 1, body, (one, t, one, t / 3))
    return x * c, x * s


def _fresnel_auxiliary(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(f, g)`` with ``C = 1/2 + f sin(pi x²/2) - g cos(pi x²/2)``, ``S = 1/2 - f cos - g sin``: from erfc's
    Laplace fraction, ``C + i S = (1 + i)/2 - x exp(i pi x²/2) G`` with ``G = 1 / (b - 1·2 / (b + 4 - 3·4 / (b + 8 -
    ...)))``, ``b = 1 - i pi x²``, so ``f = x Im G``, ``g = x Re G``; far out their limits ``1 / (pi x)`` and
    ``1 / (pi² x³)``."""
    far = x >= _FRESNEL_FAR[x.dtype]
    near = _clamp_below(x, ~far, 2.0)
    base = (tnp.ones_like(near), -math.pi * near * near)
    g_re, g_im = _complex_fraction(60 if _f64(x) else 30, lambda k: (2 * k - 1) * (2 * k), base, 4.0)
    inv = 1.0 / (math.pi * _clamp_below(x, far, 2.0))
    return tnp.where(far, inv, near * g_im), tnp.where(far, inv * inv * inv * math.pi, near * g_re)


def _fresnel_far(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``(C, S)`` for ``x >= 1.5`` from the auxiliary functions; ``(1/2, 1/2)`` where ``f < eps/2``."""
    flat = x >= _FRESNEL_FLAT[x.dtype]
    near = _clamp_below(x, ~flat, _FRESNEL_SWITCH)
    f, g = _fresnel_auxiliary(near)
    cos, sin = _half_pi_square_phase(near)
    return tnp.where(flat, 0.5, 0.5 + f * sin - g * cos), tnp.where(flat, 0.5, 0.5 - f * cos - g * sin)


def _fresnel(x: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    large = tnp.abs(x) >= _FRESNEL_SWITCH
    c_near, s_near = _fresnel_series(_clamp_below(x, ~large, 1.0))  # odd as written
    c_far, s_far = _fresnel_far(_clamp_below(tnp.abs(x), large, _FRESNEL_SWITCH))
    s_near = tnp.where(x == 0, 0.0, s_near)  # +0 at -0, as SciPy
    c_near = tnp.where(x == 0, _signless_zero(x), c_near)
    return tnp.where(large, tnp.copysign(s_far, x), s_near), tnp.where(large, tnp.copysign(c_far, x), c_near)


@op
def fresnel(x: Operand) -> tuple[AnyTensor, AnyTensor]:
    """The Fresnel integrals ``(S(x), C(x)) = (int_0^x sin(pi t²/2) dt, int_0^x cos(pi t²/2) dt)`` (SciPy's order);
    odd, ±1/2 at ±inf."""
    return cast(tuple[AnyTensor, AnyTensor], _in_f32_below(_fresnel, float_operand("fresnel", x)))


# --------------------------------------------------------------------------------------------------- owens_t

_OWENS_NODES = 40  # Gauss-Legendre nodes on [0, b]: 1 ulp for h b <= 9 and b <= 1
_OWENS_REACH = 9.0  # exp(-s²/2) beyond s = h x = 9 is below f64's eps relative to the integral


def _owens_quadrature(h: AnyTensor, a: AnyTensor) -> AnyTensor:
    """``T(h, a)`` for ``h >= 0``, ``|a| <= 1``: ``1/(2 pi) int_0^b exp(-h² (1 + x²)/2) / (1 + x²) dx`` with ``|b| =
    min(|a|, 9/h)`` (past ``x = 9/h`` the Gaussian adds nothing), by Gauss-Legendre (the integrand is positive and
    smooth there: relative accuracy ~(1 + h²/2) eps, the exponent's rounding, which is also T's conditioning in h).
    Odd in ``a`` as written (no ``|a|``, whose derivative at 0 is not T's)."""
    nodes, weights = np.polynomial.legendre.leggauss(_OWENS_NODES)
    nodes, weights = (nodes + 1) / 2, weights / 2
    reach = _OWENS_REACH / _clamp_below(h, h > 0, 1.0)
    b = tnp.where((h > 0) & (reach < tnp.abs(a)), tnp.copysign(reach, a), a)
    along = (1,) * len(b.shape) + (_OWENS_NODES,)  # a new last axis: the nodes
    x = tnp.expand_dims(b, -1) * tnp.asarray(nodes.reshape(along).astype(h.dtype))
    x2p1 = 1.0 + x * x
    half_h2 = tnp.expand_dims(h * h * 0.5, -1)
    integrand = tnp.asarray(weights.reshape(along).astype(h.dtype)) * tnp.exp(-half_h2 * x2p1) / x2p1
    return b * tnp.sum(integrand, axis=-1) / (2 * math.pi)


def _owens_wide(h: AnyTensor, a: AnyTensor) -> AnyTensor:
    """``T(h, a)`` for ``h > 0`` finite and ``a > 1``: ``(Phi(h) Q(a h) + Phi(a h) Q(h)) / 2 - T(a h, 1/a)`` (``Q = 1 -
    Phi``: the tails, without cancellation); ``Q(h)/2`` at ``a = inf``."""
    finite = _clamp_below(a, a < math.inf, 2.0)
    ah = finite * h
    halves = 0.5 * (ndtr(h) * ndtr(-ah) + ndtr(ah) * ndtr(-h))
    return tnp.where(a == math.inf, 0.5 * ndtr(-h), halves - _owens_quadrature(ah, 1.0 / finite))


def _owens_t(h: AnyTensor, a: AnyTensor) -> AnyTensor:
    """Even in ``h``, odd in ``a``; ``arctan(a) / (2 pi)`` at ``h = 0``, 0 at ``h = ±inf``."""
    magnitude, width = tnp.abs(h), tnp.abs(a)
    inside = (magnitude > 0) & (magnitude < math.inf)
    wide = width > 1
    positive_h = _clamp_below(magnitude, inside, 1.0)
    near = _owens_quadrature(positive_h, _clamp_below(a, ~wide, 0.5))
    far = _owens_wide(positive_h, _clamp_below(width, wide, 2.0))
    near = tnp.where(a == 0, _signless_zero(near), near)  # +0 at a = -0, as SciPy
    value = tnp.where(wide, tnp.where(a < 0, -far, far), near)
    zero = tnp.zeros_like(value)
    at_infinity = tnp.where(a < 0, -zero, zero)  # (-0 for a < 0, as SciPy)
    value = tnp.where(inside, value, tnp.where(magnitude == 0, tnp.arctan(a) / (2 * math.pi), at_infinity))
    return tnp.where(tnp.isnan(h) | tnp.isnan(a), math.nan, value)


@op
def owens_t(h: Operand, a: Operand) -> AnyTensor:
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h² (1 + x²)/2) / (1 + x²) dx``."""
    return cast(AnyTensor, _in_f32_below(_owens_t, *floats("owens_t", h, a)))


# ------------------------------------------------------------------------------------------------- bernoulli


def bernoulli(n: int) -> AnyTensor:
    """The Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``), in the default float dtype (exact to rounding)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative int, got {n!r}")
    return tnp.asarray(_bernoulli_numbers(int(n) + 1))


from .special_hyper import *  # noqa: E402, F403 - Bessel and hypergeometric functions, in their own module
from . import special_hyper as _special_hyper  # noqa: E402

__all__ += _special_hyper.__all__
