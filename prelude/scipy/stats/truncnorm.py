"""``tensorstage.scipy.stats.truncnorm``: the normal distribution truncated to the standardized interval [a, b]
(``a < b``; either may be infinite; ``a >= b`` gives NaN, as SciPy). The masses ``Phi(hi) - Phi(lo)`` are taken in
log space from the tail nearer the interval (``log_ndtr``), and by a series for a narrow interval, so the functions
stay finite and accurate far in the tails (``a = 30``) and next to an end (where SciPy's difference of two ``Phi``
loses all digits: ``logcdf(a + 1e-16, ...)``). ``ppf`` inverts through ``ndtri`` on the nearer tail: accurate while
that tail's mass is a normal number of the dtype (|a| or |b| below ~37 in f64, ~13 in f32)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape2, defined, floats, probability, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _log1mexp(d: AnyTensor) -> AnyTensor:
    """log(1 - e^d) for d <= 0, without cancellation at either end (Maechler's switch at -log 2)."""
    near = d > -math.log(2)
    return tnp.where(near, tnp.log(-tnp.expm1(tnp.where(near, d, -1.0))), tnp.log1p(-tnp.exp(tnp.where(near, -1.0, d))))


def _log_lower_mass(lo: AnyTensor, hi: AnyTensor) -> AnyTensor:
    """log(Phi(hi) - Phi(lo)) for lo <= hi <= 0 (both in the lower tail, where log_ndtr is accurate)."""
    log_hi = sp.log_ndtr(hi)
    return log_hi + _log1mexp(sp.log_ndtr(lo) - log_hi)


def _log_narrow_mass(m: AnyTensor, d: AnyTensor) -> AnyTensor:
    """log(Phi(m + d) - Phi(m - d)) for a narrow interval, d (|m| + 3) <= 0.1, where the difference of two
    ``Phi`` (or ``log_ndtr``) would cancel: ``phi(m) int_{-d}^{d} exp(-m s - s²/2) ds``, the integrand's Hermite
    series (``sum He_n(-m) s^n / n!``) to He_6 (truncation below 1e-16 relative there)."""
    m2, d2 = m * m, d * d
    he2, he4, he6 = m2 - 1, (m2 - 6) * m2 + 3, ((m2 - 15) * m2 + 45) * m2 - 15
    series = 1 + d2 * (he2 / 6 + d2 * (he4 / 120 + d2 * he6 / 5040))
    return -0.5 * m2 - 0.5 * math.log(2 * math.pi) + tnp.log(2 * d) + tnp.log(series)


def log_mass(lo: AnyTensor, hi: AnyTensor) -> AnyTensor:
    """log(Phi(hi) - Phi(lo)) for lo <= hi: by a series for a narrow interval, else from the lower tail, the upper
    one by symmetry, or around 0. Each branch sees operands of its own range (placeholders elsewhere), so no NaN of
    an unused branch reaches a gradient."""
    m, d = 0.5 * (lo + hi), 0.5 * (hi - lo)
    narrow = d * (tnp.abs(m) + 3) <= 0.1  # (false at infinite ends: NaN there)
    upper, lower = ~narrow & (lo > 0), ~narrow & (hi < 0)
    tail = upper | lower
    middle = ~(narrow | tail)
    # the upper tail mirrored into the lower one: one pair of log_ndtr serves both
    tail_lo = tnp.where(upper, -hi, tnp.where(lower, lo, -1.0))
    tail_hi = tnp.where(upper, -lo, tnp.where(lower, hi, -1.0))
    around = tnp.log1p(-sp.ndtr(tnp.where(middle, lo, 0.0)) - sp.ndtr(-tnp.where(middle, hi, 0.0)))
    series = _log_narrow_mass(tnp.where(narrow, m, 0.0), tnp.where(narrow, d, 0.01))
    return tnp.where(narrow, series, tnp.where(tail, _log_lower_mass(tail_lo, tail_hi), around))


def _operands(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """The standardized ``x`` (NaN unless ``a < b`` and ``scale > 0``), ``a`` and ``b``."""
    x, a, b, loc, scale = floats(name, x, a, b, loc, scale)
    z, _ = standardized(name, x, loc, scale)
    return tnp.where(a < b, z, math.nan), a, b


def _interval(a: AnyTensor, b: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``a`` and ``b`` where the interval is valid, (-1, 1) elsewhere (keeps NaN out of gradients)."""
    valid = a < b
    return tnp.where(valid, a, -1.0), tnp.where(valid, b, 1.0)


@as_shape2
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, a, b, loc, scale = floats("truncnorm.logpdf", x, a, b, loc, scale)
    z = tnp.where(a < b, standardized("truncnorm.logpdf", x, loc, scale)[0], math.nan)
    lo, hi = _interval(a, b)
    inside = (z >= a) & (z <= b)
    safe = tnp.where(inside, z, 0.0)
    out = -0.5 * safe * safe - 0.5 * math.log(2 * math.pi) - log_mass(lo, hi) - tnp.log(scale)
    return defined(tnp.where(inside, out, -math.inf), z)


@as_shape2
def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, b, loc, scale))


def _log_tails(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor]:
    """log P(Z <= z) and log P(Z >= z) of the truncated standard normal Z. Each is a ratio of masses only where it
    is below 1/2; above, it is log(1 - the other) (a ratio near 1 would lose its small logarithm)."""
    z, a, b = _operands(name, x, a, b, loc, scale)
    lo, hi = _interval(a, b)
    below, above = z <= lo, z >= hi
    cut = tnp.where(below | above, 0.5 * (lo + tnp.where(hi == math.inf, lo + 2, hi)), z)  # interior, for gradients
    cut = tnp.where(tnp.isfinite(cut), cut, 0.0)
    below_cut, above_cut = log_mass(lo, cut), log_mass(cut, hi)
    total = tnp.logaddexp(below_cut, above_cut)  # (both parts are accurate: no third mass to take)
    lower = tnp.minimum(below_cut - total, 0.0)
    upper = tnp.minimum(above_cut - total, 0.0)
    small_lower = lower < -math.log(2)
    lower, upper = (tnp.where(small_lower, lower, _log1mexp(tnp.where(small_lower, -1.0, upper))),
                    tnp.where(small_lower, _log1mexp(tnp.where(small_lower, lower, -1.0)), upper))
    lower = tnp.where(below, -math.inf, tnp.where(above, 0.0, lower))
    upper = tnp.where(below, 0.0, tnp.where(above, -math.inf, upper))
    return defined(lower, z), defined(upper, z)


@as_shape2
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return _log_tails("truncnorm.logcdf", x, a, b, loc, scale)[0]


@as_shape2
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(_log_tails("truncnorm.cdf", x, a, b, loc, scale)[0])


@as_shape2
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return _log_tails("truncnorm.logsf", x, a, b, loc, scale)[1]


@as_shape2
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(_log_tails("truncnorm.sf", x, a, b, loc, scale)[1])


def _standard_ppf(q: AnyTensor, a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """The quantile of the truncated standard normal for a valid ``q``, ``a < b``: ``ndtri`` of the lower tail's
    ``Phi(a) + q (Phi(b) - Phi(a))``, or by symmetry of the upper tail's when the interval lies above 0 (where
    ``Phi`` rounds to 1)."""
    upper = a > 0
    lo = tnp.where(upper, -b, a)
    hi = tnp.where(upper, -a, b)
    p = tnp.where(upper, 1 - q, q)
    log_p = tnp.logaddexp(sp.log_ndtr(lo), tnp.log(p) + log_mass(lo, hi))
    z = sp.ndtri(tnp.exp(log_p))
    return tnp.clip(tnp.where(upper, -z, z), a, b)


@as_shape2
def ppf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """``loc + scale z`` with ``z`` in [a, b]: ``a`` at 0 and ``b`` at 1 exactly."""
    q, a, b, loc, scale = floats("truncnorm.ppf", q, a, b, loc, scale)
    valid = probability(q) & (a < b) & (scale > 0)
    lo, hi = _interval(a, b)
    z = _standard_ppf(tnp.where(valid, q, 0.5), lo, hi)
    z = tnp.where(q == 0, a, tnp.where(q == 1, b, z))
    return defined(loc + scale * z, q, valid)
