"""Bessel functions of integer order and the confluent hypergeometric function (star-imported into
``special_more``), built from elementwise operations in loops with static trip counts (scans: every transform goes
through them), each on its region selected by ``where`` on clamped inputs. f16 and bf16 are computed in f32.

- ``bessel_jn(z, v=v)``: ``J_0 .. J_v`` of real ``z`` stacked on a new leading axis (JAX's layout). Below ``R =
  max(25, 2 v)`` (f32: ``max(10, 2 v)``): Miller's backward recurrence, run on the ratios ``r_k = J_k / J_(k-1) =
  z / (2k - z r_(k+1))`` (nothing overflows, ``z = 0`` included) from ``N = max(n_iter, R + 8 R^(1/3) + 20)``,
  normalized by ``J_0 + 2 J_2 + 2 J_4 + ... = 1``; from ``R`` up: Hankel's expansions of ``J_0`` and ``J_1`` (their
  phases from ``cos z ± sin z``, no rounded ``z - pi/4``) and the forward recurrence, stable there as ``v <= R/2``.
- ``hyp1f1(a, b, x)``: the best (smallest error bound, elementwise) of four estimates: the series (400 terms),
  Kummer's transformation ``exp(x) 1F1(b - a, b, -x)`` (its series: positive terms for ``x < 0``, ``a <= b``), the
  asymptotic expansion in ``|x|`` (dominant part only, summed to its smallest term; Kummer's transformation for
  ``x < 0``), each with a bound on its relative error (rounding times the series' cancellation ``sum |t_k| /
  |sum|``, truncation, the neglected recessive part, the exponent's rounding), and where the series cancel (``x > 0
  > a``, and ``x < 0 < b < a`` through Kummer's transformation) the three-term recurrence in ``b`` (DLMF 13.3.2) run
  downwards from where the series is well conditioned (``special_hyper_recur``: ``1F1`` is its minimal solution as
  ``b`` grows; at most 2048 steps, so ``|a x|`` up to about 5600), its error estimated from its rounding and from a
  second run started elsewhere. Where no estimate is below ``2^-36`` the value is NaN: beside zeros of Kummer's
  function (in ``x``, or in ``b`` along the recurrence's path) and beyond the loop's reach (``|a x| >~ 5600``,
  ``|x| > 500``).
  f32 (and f16, bf16) are computed in f64. Supported: ``b > 0``, and the polynomials (``a`` a non-positive integer,
  ``b <= a``); inf at the other non-positive integers ``b`` (SciPy), NaN at other ``b < 0``, at infinite ``a`` or
  ``b``, and at ``x = ±inf`` unless ``a > 0`` (limits inf and 0) or ``a = 0`` (1).

Accuracy of ``bessel_jn`` (1e5 points per range): the absolute error in units of ``eps max(|J_n(z)|, min(1,
sqrt(2 / (pi |z|))))`` (the envelope: beside its zeros J's error is absolute, as SciPy's). Against SciPy's ``jv``
most of it is SciPy's: at the worst points, ours is within 3 of 40-digit references (mpmath):

================================  ===================  ===========================  =============
range                             f64 vs SciPy         f64 vs exact (worst points)  f32 vs SciPy
================================  ===================  ===========================  =============
v = 5, |z| < 25 (Miller)          14                   2                            4.4
v = 5, z in [25, 1e4] (Hankel)    3.7                  (as SciPy)                   2.2
v = 20, |z| < 60                  35                   1.7                          8.3
v = 40, |z| < 200                 570                  2.8                          11
v = 3, z in [0, 1e-3]             1.0                                               0.5
================================  ===================  ===========================  =============

Accuracy of ``hyp1f1`` in f64: the share of NaN (before the recurrence in ``b`` → now) and the relative error
against exact values (the series in 220-digit decimal arithmetic; 2000 points per range), maximum (median), with
SciPy's (Boost's) for comparison. f32: within 0.5 ulp of the exact values wherever not NaN (normal results).

=========================================  ==============  ==================  ==================
range                                      NaN             ours                SciPy
=========================================  ==============  ==================  ==================
a, b in (0, 10), |x| < 30                  1.1 % → 0       4.9e-13 (5.7e-16)   8.7e-12 (6.5e-16)
a, b in (0, 10), |x| < 300                 0 → 0           4.0e-13 (2.3e-15)   4.1e-13 (4.2e-16)
a in (-10, 10), b in (0, 10), |x| < 30     6.8 % → 0       2.6e-13 (4.9e-16)   7.8e-13 (7.2e-16)
a, b in (0, 30), |x| < 100                 12 % → 0.2 %    4.6e-13 (1.8e-15)   1.0e-12 (1.4e-15)
x < 0 < b < a < 50, x > -100               50 % → 0.9 %    3.1e-12 (5.1e-15)   2.2e-12 (1.8e-15)
-50 < a < 0 < x < 100, b in (0, 50)        81 % → 2.1 %    2.8e-12 (1.9e-14)   4.6e-12 (2.2e-15)
|a|, b < 50, |x| < 100                     28 % → 0.6 %    9.4e-13 (1.4e-15)   1.2e-12 (1.6e-15)
=========================================  ==============  ==================  ==================

The recurrence's error estimate is empirical where its two runs' difference decides (beside zeros of ``1F1`` in
``b``): on 32000 points of ``-50 < a < 0 < b < 50``, ``0 < x < 100`` (a fifth with ``a`` within 1e-5 to 1e-15 of
an integer, a quarter taken to ``x < 0 < b < a`` by Kummer's transformation; 2.5 % NaN) the largest error it let
through was 1.1e-11, none above ``2^-36``. The loop's static 2308 steps make ``hyp1f1`` about 10 times slower than
the series alone (CPU: 40 ms per 1000 elements); gradients through it cost three forward runs, no stored steps.

Deliberate differences from JAX's ``bessel_jn`` (which runs the unnormalized recurrence from ``n_iter`` alone):

- ``n_iter`` only raises the start of the backward recurrence above the one chosen here (JAX's values are NaN at
  ``z = 0`` and for tiny ``|z|`` where the recurrence overflows, and wrong for ``|z|`` near or above ``n_iter``; for
  ``v > n_iter`` its output has only ``n_iter + 1`` orders). Ours has ``v + 1`` orders, accurate for every ``z``.
- ``v < 0`` raises ValueError (JAX returns an empty array); integer ``z`` is refused (``.astype`` first), as
  everywhere in ``tensorstage.scipy.special``. At ``±inf`` the values are NaN (SciPy's ``jv``; JAX's are NaN/±inf).

Deliberate differences of ``hyp1f1`` from JAX's (which sums the series for ``|x| < 100`` and the asymptotic
expansion above, for positive inputs) and SciPy's:

- NaN where the error estimate exceeds ``2^-36`` (above: 0.2 to 2 % of the ranges measured, where SciPy's values
  are mostly right). JAX's values where the series cancel are often wrong in their leading digits.
- ``hyp1f1(0, 0, x)`` is inf (SciPy's; JAX's convention is 1); ``x = -inf`` with ``a > 0`` gives 0 (SciPy: 0 or NaN
  depending on ``a`` and ``b``); ``b = ±inf`` gives NaN (SciPy: 1).
- Gradients (in ``x``; ``a`` and ``b`` too) are those of the selected expansion (the recurrence's by forward mode
  through its loop, a ``custom_jvp``); JAX defines them by series.
"""

from __future__ import annotations

import math
import operator
from typing import Any, cast

import numpy as np

from ...control_flow import cond, fori_loop, scan
from .. import numpy as tnp
from ..numpy._core import float_operand, op
from .special import AnyTensor, gammaln, gammasgn
from .special_more import _in_f32_below  # (imported at the end of special_more)
from .special_hyper_recur import hyp1f1_b_recurrence, series_error
from .special_series import _clamp_below
from .stats._common import floats

__all__: list[str] = ["bessel_jn", "hyp1f1"]

_Five = tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor, AnyTensor]  # loop carries
_Six = tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor, AnyTensor, AnyTensor]


# ------------------------------------------------------------------------------------------------- bessel_jn

# From here up Hankel's expansion reaches eps (its smallest term is ~exp(-2 z)), in this many terms.
_HANKEL_SWITCH = {np.dtype(np.float64): 25.0, np.dtype(np.float32): 10.0}
_HANKEL_TERMS = {np.dtype(np.float64): 32, np.dtype(np.float32): 14}


def _miller_start(reach: float) -> int:
    """Where the backward recurrence starts for ``|z| < reach``: ``J_N(reach)`` is far below eps there."""
    return int(math.ceil(reach + 8 * reach ** (1 / 3) + 20))


def _bessel_miller(z: AnyTensor, v: int, start: int) -> AnyTensor:
    """``J_0 .. J_v`` (stacked) for ``|z| < reach``: the ratios ``r_k = J_k / J_(k-1)`` from ``r_(N+1) = 0`` down,
    with ``h_(k-1) = r_k ([k even] + h_k)`` so that ``1 / J_0 = 1 + 2 h_0`` (the normalization sum, in Horner form)."""

    def step(k: AnyTensor, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        ratio, h = carry
        denominator = 2 * k - z * ratio
        # exactly 0 only where J_(k-1) is: a tiny one keeps the products finite (they cancel in r_(k-1) r_k)
        ratio = z / tnp.where(denominator == 0, np.finfo(z.dtype).tiny, denominator)
        return ratio, ratio * ((1.0 - tnp.remainder(k, 2.0)) + h)  # [k even] + h

    def high(i: Any, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        return step((start - i).astype(z.dtype), carry)

    zero = tnp.zeros_like(z)
    carry = fori_loop(0, start - v, high, (zero, zero))  # k = N .. v + 1
    if v == 0:
        return tnp.expand_dims(1.0 / (1.0 + 2.0 * carry[1]), 0)

    def low(carry: tuple[AnyTensor, AnyTensor], k: AnyTensor) -> tuple[tuple[AnyTensor, AnyTensor], AnyTensor]:
        carry = step(k, carry)
        return carry, carry[0]

    orders = tnp.arange(1, v + 1).astype(z.dtype)
    (_, h), ratios = scan(low, carry, orders, reverse=True)  # ratios[k - 1] = r_k
    j0 = 1.0 / (1.0 + 2.0 * h)
    return tnp.concatenate([tnp.expand_dims(j0, 0), j0 * tnp.cumprod(ratios, axis=0)], axis=0)


def _hankel_pq(z: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """Hankel's ``P`` and ``Q`` of orders 0 and 1: ``sum_k (-1)^k a_2k / z^2k`` and ``sum_k (-1)^k a_(2k+1) /
    z^(2k+1)``, ``a_k(nu) = prod_(j <= k) (4 nu² - (2j - 1)²) / (k! 8^k)``; two terms per loop step."""

    def body(i: Any, carry: _Six) -> _Six:
        t0, t1, p0, q0, p1, q1 = carry
        odd = (2 * i + 1).astype(z.dtype)  # the terms of orders 2i + 1 (into Q) and 2i + 2 (into P)
        even = odd + 1
        t0, t1 = t0 * -((2 * odd - 1) ** 2) / (8 * odd * z), t1 * (4 - (2 * odd - 1) ** 2) / (8 * odd * z)
        q0, q1 = q0 + t0, q1 + t1
        t0, t1 = t0 * ((2 * even - 1) ** 2) / (8 * even * z), t1 * -(4 - (2 * even - 1) ** 2) / (8 * even * z)
        return t0, t1, p0 + t0, q0, p1 + t1, q1

    one, zero = tnp.ones_like(z), tnp.zeros_like(z)
    terms = _HANKEL_TERMS[z.dtype] // 2
    _, _, p0, q0, p1, q1 = fori_loop(0, terms, body, (one, one, one, zero, one, zero))
    return p0, q0, p1, q1


def _bessel_forward(z: AnyTensor, v: int) -> AnyTensor:
    """``J_0 .. J_v`` (stacked) for ``z >= reach >= 2 v``: ``J_0`` and ``J_1`` from Hankel's expansions with
    ``cos(z - pi/4) = (cos z + sin z) / sqrt 2`` (and so on: exact phases), then ``J_(n+1) = 2n/z J_n - J_(n-1)``."""
    p0, q0, p1, q1 = _hankel_pq(z)
    cos, sin = tnp.cos(z), tnp.sin(z)
    amplitude = tnp.sqrt(1.0 / (math.pi * z))  # sqrt(2 / (pi z)) / sqrt 2
    j0 = amplitude * (p0 * (cos + sin) - q0 * (sin - cos))
    if v == 0:
        return tnp.expand_dims(j0, 0)
    j1 = amplitude * (p1 * (sin - cos) + q1 * (sin + cos))

    def up(carry: tuple[AnyTensor, AnyTensor], n: AnyTensor) -> tuple[tuple[AnyTensor, AnyTensor], AnyTensor]:
        below, here = carry
        above = 2 * n / z * here - below
        return (here, above), above

    first = [tnp.expand_dims(j0, 0), tnp.expand_dims(j1, 0)]
    if v == 1:
        return tnp.concatenate(first, axis=0)
    _, rest = scan(up, (j0, j1), tnp.arange(1, v).astype(z.dtype))
    return tnp.concatenate([*first, rest], axis=0)


def _bessel_jn(z: AnyTensor, v: int, n_iter: int) -> AnyTensor:
    reach = max(_HANKEL_SWITCH[z.dtype], 2.0 * v)
    magnitude = tnp.abs(z)
    near = magnitude < reach
    finite = magnitude < math.inf
    # the Miller form is odd/even in z as written (no |z|, whose derivative at 0 is not J's)
    miller = _bessel_miller(_clamp_below(z, near, 1.0), v, max(n_iter, _miller_start(reach)))
    far_use = ~near & finite
    forward = _bessel_forward(_clamp_below(magnitude, far_use, reach), v)
    signs = np.where(np.arange(v + 1) % 2 == 1, -1.0, 1.0).reshape((v + 1,) + (1,) * len(z.shape))
    odd_negative = tnp.where(tnp.expand_dims(z < 0, 0), tnp.asarray(signs.astype(z.dtype)), 1.0)  # J_n(-z) = (-1)^n J_n(z)
    out = tnp.where(tnp.expand_dims(near, 0), miller, forward * odd_negative)
    return tnp.where(tnp.expand_dims(finite, 0), out, math.nan)  # NaN at ±inf (SciPy's jv) and NaN


def static_int(op_name: str, name: str, value: Any, least: int = 0) -> int:
    """A static integer argument (an order, a degree, a loop count): an int of at least ``least``, or a clear
    error naming ``op_name``."""
    if isinstance(value, bool):
        raise TypeError(f"{op_name}: {name} must be an int, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{op_name}: {name} must be an int (static, not a staged value), got {value!r}") from None
    if number < least:
        raise ValueError(f"{op_name}: {name} must be >= {least}, got {number}")
    return number


@op
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> AnyTensor:
    """Bessel functions of the first kind ``J_0(z) .. J_v(z)`` of real ``z``, stacked on a new leading axis: shape
    ``(v + 1, *z.shape)``, ``z``'s dtype. ``n_iter`` (JAX's start of the backward recurrence) is a lower bound on
    ours, which is chosen for full accuracy."""
    order, start = static_int("bessel_jn", "v", v), static_int("bessel_jn", "n_iter", n_iter)
    return cast(AnyTensor, _in_f32_below(lambda t: _bessel_jn(t, order, start), float_operand("bessel_jn", z)))


# ---------------------------------------------------------------------------------------------------- hyp1f1

# Loop lengths: the series converges in them for |x| up to where the asymptotic expansion takes over (moderate a,
# b); the asymptotic expansion is summed up to its smallest term.
_SERIES_TERMS = {np.dtype(np.float64): 400, np.dtype(np.float32): 300}
_ASYMPTOTIC_TERMS = {np.dtype(np.float64): 120, np.dtype(np.float32): 50}
# NaN where the estimated relative error exceeds this (half the digits): no candidate converged without cancellation.
# The recurrence in b up to |x| = 500: its values, up to exp(|x|) times a power, stay finite (beyond, the asymptotic
# expansion serves).
_RECURRENCE_REACH = 500.0
_HYP1F1_TOLERANCE = {np.dtype(np.float64): 2.0 ** -36, np.dtype(np.float32): 2.0 ** -16}


class _Estimate:
    """A candidate value of ``1F1`` and a bound on its relative error (inf where it does not apply)."""

    def __init__(self, value: AnyTensor, error: AnyTensor) -> None:
        self.value = value
        self.error = tnp.where(tnp.isnan(error), math.inf, error)


def _hyp1f1_sum(a: AnyTensor, b: AnyTensor, x: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``sum_k t_k`` with ``t_k = (a)_k / (b)_k x^k / k!``, ``sum_k |t_k|`` and the last term; stops at ``a + k = 0``
    (the polynomials)."""

    def body(i: Any, carry: tuple[AnyTensor, AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
        term, total, size = carry
        k = i.astype(x.dtype)
        top = a + k
        bottom = b + k
        term = term * tnp.where(top == 0, 0.0, top / tnp.where(bottom == 0, 1.0, bottom)) * x / (k + 1)
        return term, total + term, size + tnp.abs(term)

    one = tnp.ones_like(x)
    last, total, size = fori_loop(0, _SERIES_TERMS[x.dtype], body, (one, one, one))
    return total, size, last


def _sum_error(total: AnyTensor, size: AnyTensor, last: AnyTensor) -> AnyTensor:
    """The relative error bound of a series sum: rounding amplified by cancellation, and truncation."""
    return series_error(total, size, last, _SERIES_TERMS[total.dtype])


def _scaled(value: AnyTensor, exponent: AnyTensor) -> AnyTensor:
    """``exp(exponent) value`` through ``log |value|`` (no underflow of the one beside an overflow of the other)."""
    return tnp.sign(value) * tnp.exp(exponent + tnp.log(tnp.abs(value)))


def _hyp1f1_direct(a: AnyTensor, b: AnyTensor, x: AnyTensor) -> _Estimate:
    """The series itself (for the polynomials and small ``|x|``; it cancels for ``x < 0`` or ``a < 0``)."""
    total, size, last = _hyp1f1_sum(a, b, x)
    return _Estimate(total, _sum_error(total, size, last))


def _hyp1f1_kummer(a: AnyTensor, b: AnyTensor, x: AnyTensor) -> _Estimate:
    """Kummer's transformation ``exp(x) 1F1(b - a, b, -x)`` (positive terms for ``x < 0``, ``a <= b``)."""
    total, size, last = _hyp1f1_sum(b - a, b, -x)
    error = _sum_error(total, size, last) + float(np.finfo(x.dtype).eps) * tnp.abs(x)
    return _Estimate(_scaled(total, x), error)


def _hyp1f1_asymptotic(a: AnyTensor, b: AnyTensor, y: AnyTensor, exponent: AnyTensor) -> _Estimate:
    """``Gamma(b) / Gamma(a) exp(exponent) y^(a - b) sum_k (b - a)_k (1 - a)_k / (k! y^k)`` for ``y > 0`` (the
    dominant part of ``1F1(a, b, y)`` times ``exp(exponent - y)``), summed up to its smallest term. Its error bound
    adds the smallest term, the cancellation, the rounding of the exponent and the neglected recessive part,
    ``Gamma(a) / Gamma(b - a) exp(-y) y^(b - 2a)`` relative (0 where ``b - a`` is a non-positive integer)."""
    eps = float(np.finfo(y.dtype).eps)

    def body(i: Any, carry: _Five) -> _Five:
        term, total, size, smallest, growing = carry
        k = i.astype(y.dtype)
        term = term * (b - a + k) * (1 - a + k) / ((k + 1) * y)
        growing = growing | (tnp.abs(term) > smallest)  # from here on the expansion diverges
        kept = tnp.where(growing, 0.0, term)
        return term, total + kept, size + tnp.abs(kept), tnp.where(growing, smallest, tnp.abs(term)), growing

    one = tnp.ones_like(y)
    _, total, size, smallest, _ = fori_loop(0, _ASYMPTOTIC_TERMS[y.dtype], body,
                                            (one, one, one, one, tnp.zeros_like(y) > 1))
    log_a, log_b = gammaln(a), gammaln(b)
    log_y = tnp.log(y)
    power = exponent + (a - b) * log_y
    value = gammasgn(a) * tnp.exp(log_b - log_a + power) * total
    recessive = tnp.exp(log_a - gammaln(b - a) - y + (b - 2 * a) * log_y)
    rounding = eps * (16 * size / tnp.abs(total) + tnp.abs(log_b) + tnp.abs(log_a) + tnp.abs(power) + 1)
    return _Estimate(value, rounding + smallest / tnp.abs(total) + recessive)


def _hyp1f1_recurrence(a: AnyTensor, b: AnyTensor, x: AnyTensor, wanted: AnyTensor) -> _Estimate:
    """The recurrence in ``b`` where the series cancel: ``a < 0 < b``, ``0 < x``, and through Kummer's transformation
    ``exp(x) 1F1(b - a, b, -x)`` for ``x < 0 < b < a``, for the ``wanted`` elements (no other estimate is good
    enough); inf error elsewhere."""
    positive = x > 0
    mapped = tnp.where(positive, a, b - a)
    z = tnp.abs(x)
    use = wanted & (mapped < 0) & (b > 0) & (z > 0) & (z <= _RECURRENCE_REACH)
    operands = (_clamp_below(mapped, use, -0.5), _clamp_below(b, use, 1.0), _clamp_below(z, use, 1.0))
    terms = _SERIES_TERMS[x.dtype]
    # The loop runs its full length for every element: skipped when no element needs it (the common case)
    value, error = cond(tnp.any(use), lambda m, c, z: hyp1f1_b_recurrence(m, c, z, terms),
                        lambda m, c, z: (tnp.ones_like(m), tnp.full_like(m, math.inf)), *operands)
    exponent = tnp.where(positive | ~use, 0.0, x)
    error = error + float(np.finfo(x.dtype).eps) * tnp.abs(exponent)
    return _Estimate(_scaled(value, exponent), tnp.where(use, error, math.inf))


def _best(candidates: list[_Estimate]) -> _Estimate:
    """The candidate with the smallest error bound, elementwise."""
    best = candidates[0]
    for other in candidates[1:]:
        better = other.error < best.error
        best = _Estimate(tnp.where(better, other.value, best.value), tnp.where(better, other.error, best.error))
    return best


def _hyp1f1(a: AnyTensor, b: AnyTensor, x: AnyTensor) -> AnyTensor:
    """Kummer's function by the best of five estimates, elementwise: the series at ``x`` and (Kummer's
    transformation) ``exp(x) 1F1(b - a, b, -x)``; the asymptotic expansion in ``|x|`` with ``a`` (``x > 0``) or ``b -
    a`` (``x < 0``, again Kummer's transformation) in the dominant part; the recurrence in ``b`` where the series
    cancel."""
    finite = tnp.isfinite(a) & tnp.isfinite(b) & tnp.isfinite(x)
    b_pole = (b <= 0) & (tnp.floor(b) == b)
    polynomial = (a <= 0) & (tnp.floor(a) == a) & (a >= b)  # SciPy's reading at b = a non-positive integer too
    supported = finite & ((b > 0) | polynomial)
    a_, b_, x_ = (_clamp_below(t, supported, 0.5) for t in (a, b, x))
    positive = x_ > 0
    y = _clamp_below(tnp.abs(x_), x_ != 0, 1.0)
    dominant = tnp.where(positive, a_, b_ - a_)
    asymptotic = _hyp1f1_asymptotic(dominant, b_, y, tnp.where(positive, x_, 0.0))
    tolerance = _HYP1F1_TOLERANCE[x.dtype]
    best = _best([_hyp1f1_direct(a_, b_, x_), _hyp1f1_kummer(a_, b_, x_), asymptotic])
    best = _best([best, _hyp1f1_recurrence(a_, b_, x_, best.error > tolerance)])
    value = tnp.where(best.error <= tolerance, best.value, math.nan)
    inf, nan = tnp.full_like(x, math.inf), tnp.full_like(x, math.nan)
    value = tnp.where(supported, value, tnp.where(finite & b_pole, inf, nan))
    value = tnp.where(a == 0, tnp.where(b_pole, inf, 1.0), value)
    # the limits at x = ±inf for a > 0 (b > 0): +inf and 0
    positive_a = (a > 0) & (b > 0) & tnp.isfinite(a) & tnp.isfinite(b)
    value = tnp.where(positive_a & (x == math.inf), math.inf, value)
    value = tnp.where(positive_a & (x == -math.inf), 0.0, value)
    return tnp.where(tnp.isnan(a) | tnp.isnan(b) | tnp.isnan(x), math.nan, value)


@op
def hyp1f1(a: Any, b: Any, x: Any) -> AnyTensor:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!`` of real ``a``,
    ``b > 0``, ``x`` (and the polynomials: ``a`` a non-positive integer, ``b <= a``); NaN where it cannot be
    computed to half the digits (see the module docstring), inf at the poles ``b = 0, -1, ...``."""
    operands = floats("hyp1f1", a, b, x)
    dtype = operands[0].dtype
    if dtype == np.float64:
        return _hyp1f1(*operands)
    # in f64 for the narrower floats: f32's gammaln near its poles and f32's range (exp(x) overflows at 88, where
    # the asymptotic expansion is not yet valid for every a, b) would leave a wide NaN region
    return _hyp1f1(*(t.astype(np.float64) for t in operands)).astype(dtype)
