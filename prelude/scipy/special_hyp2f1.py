"""Gauss's hypergeometric function ``hyp2f1(a, b, c, x) = 2F1(a, b; c; x)`` for real arguments (star-imported into
``special``), built from elementwise operations in a loop with a static trip count, on clamped inputs selected by
``where``. Every element is computed in f64 (f32, f16 and bf16 are rounded from it).

Eight convergent series and two ψ-function (logarithmic) series run as the rows of one loop (the ψ forms' two
sums are hypergeometric series too; their ψ bracket is carried beside), each candidate with a bound on its
relative error (rounding amplified by the series' cancellation ``sum (8 + 2n) |t_n| / |sum|``, the tail past the
last term, the gamma functions' and the powers' rounding, the cancellation between the two terms of a connection
formula); the candidate with the smallest bound is kept, and where none is below ``2^-36`` (f32: ``2^-20``) the
value is NaN, never a doubtful one:

- ``x`` itself and Euler's ``(1 - x)^(c - a - b) 2F1(c - a, c - b; c; x)`` (``|x| < 1``);
- Pfaff's ``(1 - x)^-a 2F1(a, c - b; c; x / (x - 1))`` and its twin in ``b`` (``x < 1/2``);
- the connection formulas in ``1 - x`` (A&S 15.3.6, ``0 < x < 1``) and in ``1 / (1 - x)`` (Pfaff's, then 15.3.6:
  A&S 15.3.8, ``x < 0``). Where ``c - a - b`` (resp. ``b - a``) is an integer their gamma functions have poles and
  the limiting ψ-function forms (A&S 15.3.10-12, with Euler's transformation for a negative integer) are used.
- polynomials (``a`` or ``b`` a non-positive integer): the terminating series, for every ``x`` (also ``x >= 1``),
  and their Pfaff and Euler transforms.

The gamma and ψ functions are each evaluated in one call on stacked arguments, and every series in the one loop:
XLA's compile time grows with the number of such expansions, loops and loop carries.

The edge rules are SciPy's: 1 at ``x = 0`` and (``c != 0``) at ``a = 0`` or ``b = 0``; ``1 - b x / c`` at ``a = -1``;
``(1 - x)^-b`` at ``a = c`` and ``(1 - x)^-a`` at ``b = c`` (the finite sum ``sum_(k <= -b) (a)_k x^k / k!`` at ``b = c``
a non-positive integer), for ``x < 1``; at a non-positive integer ``c``: the polynomial where ``a`` (or ``b``) is a
non-positive integer above ``c``, inf otherwise; at ``x = 1``: Gauss's ``Gamma(c) Gamma(c - a - b) / (Gamma(c - a)
Gamma(c - b))`` for ``c - a - b > 0``, inf otherwise (polynomials: their value); for ``x > 1``: inf unless a
polynomial (SciPy's value; the real function is not defined there).

Derivatives: in ``x`` by ``d/dx 2F1 = a b / c 2F1(a + 1, b + 1; c + 1; x)`` (a custom JVP, both modes, any order).
Derivatives in ``a``, ``b`` or ``c`` raise a TransformError (JAX defines them by series, which are wrong where its
values are); the library does not compute them.

Accuracy in f64 against 40-digit references (mpmath), 300 random points per range (seed 0), ``a, b, c`` in
(-30, 30) unless said: the share of NaN, our median and worst error in ulps, SciPy's, and the share of points where
SciPy and JAX are off by more than 1e6 ulps (often entirely wrong; none of ours is):

=================================  ======  ===============  ==================  =============  ===========
range                              NaN     ours med / max   SciPy med / max     SciPy > 1e6    JAX > 1e6
=================================  ======  ===============  ==================  =============  ===========
x in (-0.5, 0.5)                   8.3 %   1.4 / 161        15 / 9.5e19         20 %           5 %
x in (-1, -0.5)                    17.7 %  3.0 / 361        109 / 2.3e19        20 %           7 %
x in (0.5, 1)                      11.0 %  5.8 / 1.2e3      19 / 1.1e15         18 %           30 %
x in (-50, -1)                     10.3 %  25 / 2.9e3       9.5e3 / 4.1e19      35 %           98 %
a, b, c in (-5, 5), x in (-50, 1)  0.3 %   5.3 / 1.3e3      2.2 / 5.4e3         0              97 %
a, b, c in (0, 30), x in (-50, 1)  8.7 %   16 / 4.4e4       1.1e4 / 4.0e14      24 %           94 %
c - a - b integer, x in (0.5, 1)   2.0 %   3.3 / 557        4.1 / 1.7e16        1 %            1 %
b - a integer, x in (-50, -1)      1.3 %   11 / 719         13 / 6.2e11         1 %            100 %
a in {0, .., -15}, x in (-50, 50)  2.0 %   3.0 / 133        0.9 / 679           0              55 %
=================================  ======  ===============  ==================  =============  ===========

Deliberate differences from SciPy:

- NaN where no candidate's error bound is below the tolerance (large parameters whose series alternate and
  cancel; ``c - a - b`` within ~1e-8 of an integer but not one, near ``x = 1``); SciPy returns a value there,
  often with few or no correct digits (it warns).
- Integers are exact integers here (SciPy treats ``a`` within 1e-13 of an integer as one).
- For ``x > 1`` SciPy gives ``-inf`` or a finite value in some cases where ``c - a - b`` is a negative integer (its
  Euler transformation); here always inf (non-polynomials).
- ``x`` far below -1 (``1 / (1 - x)`` underflowing) keeps its exact value (SciPy: inf at ``hyp2f1(1, 1, 2, -1e100)``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np

from ...control_flow import fori_loop
from ...custom_derivatives import custom_jvp
from ...staging.primitives import autodiff as A
from .. import numpy as tnp
from ...tensor import Traced
from ..numpy._core import op, wrap
from .special import AnyTensor, Operand, digamma, gammaln, gammasgn
from .special_hyper import _best, _Estimate, _scaled
from .special_more import _log1m
from .special_series import _EULER_GAMMA, _clamp_below
from .stats._common import floats

__all__: list[str] = ["hyp2f1"]

_TERMS = 400  # enough for |z| <= 0.9 with parameters up to ~60 (the error bound says where it is not)
_EPS = float(np.finfo(np.float64).eps)
_TOLERANCE = {np.dtype(np.float64): 2.0 ** -36, np.dtype(np.float32): 2.0 ** -20}
_NARROW_TOLERANCE = 2.0 ** -10  # f16, bf16


def _nonpositive_integer(t: AnyTensor) -> AnyTensor:
    return (t <= 0) & (tnp.floor(t) == t)


def _integer(t: AnyTensor) -> AnyTensor:
    return (tnp.floor(t) == t) & tnp.isfinite(t)


def _stack(parts: list[AnyTensor]) -> AnyTensor:
    """``tnp.stack(parts)`` by selects on the row index: XLA:CPU compiles a concatenation of computed operands as one
    loop per operand, each vectorized and unrolled apart (several times the compile time); the selects compute every
    operand at every row, which costs little beside the series."""
    same = tnp.broadcast_arrays(*parts)
    row = tnp.arange(len(same)).reshape((len(same),) + (1,) * same[0].ndim)
    out = tnp.broadcast_to(same[-1], (len(same),) + same[0].shape)
    for i in range(len(same) - 1):
        out = tnp.where(row == i, same[i][None], out)
    return out


def _psi(t: AnyTensor) -> AnyTensor:
    """ψ(t), below 1/2 by the reflection ``ψ(1 - t) - pi / tan(pi r)`` with ``r = t - round(t)`` exact (XLA's
    digamma loses digits near the negative integers); one digamma call (a large XLA expansion) for both sides."""
    low = t < 0.5
    psi = digamma(tnp.where(low, 1.0 - _clamp_below(t, low, 0.0), t))
    r = _clamp_below(t - tnp.round(t), low, 0.25)
    return tnp.where(low, psi - math.pi / tnp.tan(math.pi * r), psi)


class _Gammas(NamedTuple):
    """``Gamma(top...) / Gamma(bottom...)`` as a sign and a logarithm (0 where a bottom argument is a pole; the
    error bound inf where a top one is), with a bound on the relative error of ``exp(log)``."""

    sign: AnyTensor
    log: AnyTensor
    error: AnyTensor


_Ratio = tuple[list[AnyTensor], list[AnyTensor]]  # the arguments of Gamma(top...) / Gamma(bottom...)


def _gamma_ratios(ratios: list[_Ratio]) -> list[_Gammas]:
    """Every ratio, computed stacked: one gammaln and one gammasgn call on all the arguments (each call is a large
    XLA expansion, and XLA's compile time grows with their number), then the ratios' products over their
    arguments (as many in every ratio)."""
    width = len(ratios[0][0]) + len(ratios[0][1])
    if any(len(top) + len(bottom) != width for top, bottom in ratios):
        raise ValueError("hyp2f1: internal error: gamma ratios of unequal lengths")
    arguments = _stack([t for top, bottom in ratios for t in top + bottom])
    up = np.array([[i < len(top) for i in range(width)] for top, _ in ratios]).reshape(-1, *(1,) * (arguments.ndim - 1))
    pole = _nonpositive_integer(arguments)
    safe = _clamp_below(arguments, ~pole, 1.0)
    log = gammaln(safe)
    factor = tnp.where(pole, tnp.asarray(np.where(up, math.inf, 0.0)), gammasgn(safe))
    signed = log * np.where(up, 1.0, -1.0)
    error = _EPS * (2 * tnp.abs(log) + tnp.abs(safe) + 1)  # (the reflection's sin(pi t))
    factor, signed, error = (t.reshape(len(ratios), width, *t.shape[1:]) for t in (factor, signed, error))
    sign, total, bound = factor[:, 0], signed[:, 0], error[:, 0]
    for i in range(1, width):
        sign, total, bound = sign * factor[:, i], total + signed[:, i], bound + error[:, i]
    return [_Gammas(sign[r], total[r], bound[r]) for r in range(len(ratios))]


# --------------------------------------------------------------------------------------------------- series
# Every series is a row of one stacked loop (the ψ form's two sums too: their terms are hypergeometric), with the
# ψ form's bracket carried beside: XLA compiles each loop's body, carries and their starts apart (most of this
# function's compile time), so one loop with few carries compiles markedly faster than several.


def _error(total: AnyTensor, size: AnyTensor, tail: AnyTensor) -> AnyTensor:
    return (_EPS * size + tail) / tnp.abs(total)


def _tail(last: AnyTensor, ratio: AnyTensor, z: AnyTensor) -> AnyTensor:
    """A bound on the terms past the last one: geometric with the larger of the last ratio and its limit ``|z|``
    (the ratios are monotone that far out)."""
    r = tnp.maximum(tnp.abs(ratio), tnp.abs(z))
    bound = tnp.abs(last) * r / _clamp_below(1.0 - r, r < 1, 1.0)
    return tnp.where(last == 0, 0.0, tnp.where(r < 1, bound, math.inf))


class _Series:
    """Rows of ``sum_n (a)_n (b)_n / ((c)_n n!) z^n`` (stopping where ``a + n`` or ``b + n`` is 0), each with a
    relative error bound (the sum and bound NaN where ``(c)_n`` reaches 0 first: ``_Estimate`` reads the bound as
    inf). The rows ``finite`` (a constant mask) end instead at ``n = -c`` (the ψ form's finite sums, ``c = 1 -
    m``)."""

    def __init__(self, a: AnyTensor, b: AnyTensor, c: AnyTensor, z: AnyTensor, finite: np.ndarray) -> None:
        self.a, self.b, self.c, self.z, self.finite = a, b, c, z, finite

    def start(self) -> tuple[AnyTensor, ...]:
        one = tnp.ones_like(self.z)
        return one, one, 8 * one  # term, total, size

    def ratio(self, k: AnyTensor | float) -> tuple[AnyTensor, AnyTensor]:
        """``t_(k+1) / t_k``, and whether ``(c)_(k+1)`` reaches 0 there with a nonzero ``(a)_(k+1) (b)_(k+1)``."""
        top = (self.a + k) * (self.b + k)
        bottom = (self.c + k) * (k + 1)
        ratio = tnp.where(top == 0, 0.0, top / tnp.where(bottom == 0, 1.0, bottom)) * self.z
        return ratio, (self.c + k == 0) & (top != 0)

    def step(self, k: AnyTensor, carry: tuple[AnyTensor, ...]) -> tuple[AnyTensor, ...]:
        term, total, size = carry
        ratio, zero = self.ratio(k)
        live = ~((self.c + k >= 0) & self.finite)
        # a pole makes the rest NaN (the error bound NaN, read as inf)
        term = tnp.where(live, tnp.where(zero & (term != 0), math.nan, term * ratio), 0.0)
        return term, total + term, size + (10 + 2 * k) * tnp.abs(term)

    def finish(self, carry: tuple[AnyTensor, ...]) -> tuple[AnyTensor, AnyTensor]:
        last, total, size = carry
        return total, _error(total, size, _tail(last, self.last_ratio(), self.z))

    def last_ratio(self) -> AnyTensor:
        return self.ratio(float(_TERMS - 1))[0]


class _PsiBracket:
    """The ψ form's infinite sum ``sum_n p_n [log w - ψ(n + 1) - ψ(n + m + 1) + ψ(alpha + n + m) + ψ(beta + n +
    m)]`` with its error bound, ``p_n = (alpha + m)_n (beta + m)_n / (n! (m + 1)_n) w^n`` the series rows ``rows``.
    ``shifts``: ``1, m + 1, alpha + m, beta + m`` stacked; ``psis``: ψ at the last three."""

    def __init__(self, rows: slice, shifts: AnyTensor, psis: AnyTensor, w: AnyTensor, log_w: AnyTensor) -> None:
        self.rows, self.shifts, self.psis, self.w, self.log_w = rows, shifts, psis, w, log_w

    def start(self) -> tuple[AnyTensor, ...]:
        one = tnp.ones_like(self.w)
        psi = _stack([-_EULER_GAMMA * one, self.psis[0], self.psis[1], self.psis[2]])
        size = (8 + 4 * tnp.abs(self.log_w) + 4 * (tnp.abs(psi[0]) + tnp.abs(psi[1]) + tnp.abs(psi[2])
                                                   + tnp.abs(psi[3])))
        return psi, self._bracket(psi), size * one  # ψ(n + shift), total, size

    def _bracket(self, psi: AnyTensor) -> AnyTensor:
        return self.log_w - psi[0] - psi[1] + psi[2] + psi[3]

    def _spread(self, psi: AnyTensor) -> AnyTensor:
        return tnp.abs(self.log_w) + tnp.abs(psi[0]) + tnp.abs(psi[1]) + tnp.abs(psi[2]) + tnp.abs(psi[3])

    def step(self, k: AnyTensor, carry: tuple[AnyTensor, ...], terms: AnyTensor) -> tuple[AnyTensor, ...]:
        psi, total, size = carry
        p = terms[self.rows]
        psi = psi + 1 / (self.shifts + k)
        bracket = self._bracket(psi)
        size = size + tnp.abs(p) * (4 * self._spread(psi) + (10 + 2 * k) * tnp.abs(bracket))
        return psi, total + p * bracket, size

    def finish(self, carry: tuple[AnyTensor, ...], series: _Series, last: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
        psi, total, size = carry
        ratio = series.last_ratio()[self.rows]
        return total, _error(total, size, _tail(last[self.rows] * self._spread(psi), ratio, self.w))


def _sum_together(series: _Series, bracket: _PsiBracket) -> tuple[tuple[AnyTensor, AnyTensor],
                                                                   tuple[AnyTensor, AnyTensor]]:
    """Both ``finish``es, after ``_TERMS`` steps in one loop."""

    def body(i: Any, carry: Any) -> Any:
        k = i.astype(series.z.dtype)
        rows = series.step(k, carry[0])
        return rows, bracket.step(k, carry[1], rows[0])

    out = fori_loop(0, _TERMS, body, (series.start(), bracket.start()))
    return series.finish(out[0]), bracket.finish(out[1], series, out[0][0])


# ------------------------------------------------------------------------------------------------ candidates


def _term(gammas: _Gammas, exponent: AnyTensor, total: AnyTensor) -> AnyTensor:
    """``Gamma ratio * exp(exponent) * total`` through logarithms (no intermediate overflow)."""
    return gammas.sign * _scaled(total, gammas.log + exponent)


def _combined(t1: AnyTensor, e1: AnyTensor, t2: AnyTensor, e2: AnyTensor) -> _Estimate:
    """``t1 + t2`` with relative errors ``e1``, ``e2``: the bound grows with their cancellation."""
    value = t1 + t2
    spread = tnp.where(t1 == 0, 0.0, tnp.abs(t1) * e1) + tnp.where(t2 == 0, 0.0, tnp.abs(t2) * e2)
    return _Estimate(value, spread / tnp.abs(value) + _EPS)


class _Near1:
    """``2F1(alpha, beta; gamma; 1 - w) * exp(exponent)`` for ``0 < w < 1`` by the connection formula in ``w``:
    the generic form (two series) or, where ``sigma = gamma - alpha - beta`` is an integer, the ψ-function form
    (two more). Its series, gamma functions and ψ functions are evaluated with the other candidates' (``series``,
    ``psi_series``, ``ratios``, ``psi_shifts``), then combined (``generic``, ``psi``)."""

    def __init__(self, alpha: AnyTensor, beta: AnyTensor, gamma: AnyTensor, w: AnyTensor, exponent: AnyTensor,
                 use: AnyTensor) -> None:
        self.alpha, self.beta, self.gamma, self.w, self.exponent = alpha, beta, gamma, w, exponent
        self.sigma = gamma - alpha - beta
        self.log_w = tnp.log(w)
        self.degenerate = _integer(self.sigma)
        self.use = use
        self.s = _clamp_below(self.sigma, ~self.degenerate, 0.5)  # the generic form's sigma
        polynomial = _nonpositive_integer(alpha) | _nonpositive_integer(beta)
        # sigma within the rounding of gamma - alpha - beta of an integer m: the ψ form at m (its error bound adds
        # the offset times an estimate of log F's derivative)
        self.m = tnp.round(self.sigma)
        self.offset = self.sigma - self.m
        near_integer = tnp.abs(self.offset) <= 8 * _EPS * (tnp.abs(alpha) + tnp.abs(beta) + tnp.abs(gamma) + 1)
        self.degenerate_use = use & near_integer & tnp.isfinite(self.sigma) & ~polynomial
        # the ψ form's 2F1(psi_alpha, psi_beta; psi_alpha + psi_beta + psi_m; 1 - w) exp(psi_exponent), psi_m =
        # |sigma|: Euler's transformation w^sigma 2F1(gamma - alpha, gamma - beta; gamma; 1 - w) first where sigma < 0
        flip = self.m < 0
        self.psi_alpha = _clamp_below(tnp.where(flip, gamma - alpha, alpha), self.degenerate_use, 0.5)
        self.psi_beta = _clamp_below(tnp.where(flip, gamma - beta, beta), self.degenerate_use, 0.5)
        self.psi_m = _clamp_below(tnp.abs(self.m), self.degenerate_use, 0.0)
        self.psi_exponent = exponent + tnp.where(flip, self.m, 0.0) * self.log_w

    def series(self) -> list[tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]]:
        """The generic form's two series: ``2F1(alpha, beta; 1 - sigma; w)``, ``2F1(gamma - alpha, gamma - beta;
        1 + sigma; w)``."""
        return [(self.alpha, self.beta, 1 - self.s, self.w), (self.gamma - self.alpha, self.gamma - self.beta,
                                                              1 + self.s, self.w)]

    def psi_series(self) -> list[tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]]:
        """The ψ form's terms as series: the infinite sum's ``(alpha + m)_n (beta + m)_n / (n! (m + 1)_n) w^n``,
        the finite sum ``sum_(n < m) (alpha)_n (beta)_n / (n! (1 - m)_n) w^n``."""
        alpha, beta, m = self.psi_alpha, self.psi_beta, self.psi_m
        return [(alpha + m, beta + m, m + 1, self.w), (alpha, beta, 1 - m, self.w)]

    def ratios(self) -> list[_Ratio]:
        """The gamma ratios of the generic form's two terms, then of the ψ form's two."""
        alpha, beta, m = self.psi_alpha, self.psi_beta, self.psi_m
        return [([self.gamma, self.s], [self.gamma - self.alpha, self.gamma - self.beta]),
                ([self.gamma, -self.s], [self.alpha, self.beta]),
                ([tnp.maximum(m, 1.0), alpha + beta + m], [alpha + m, beta + m]),
                ([alpha + beta + m], [alpha, beta, m + 1])]

    def psi_shifts(self) -> list[AnyTensor]:
        """``1, m + 1, alpha + m, beta + m, alpha + beta + m``: the ψ form's ψ functions are at ``n`` plus these."""
        alpha, beta, m = self.psi_alpha, self.psi_beta, self.psi_m
        return [tnp.ones_like(m), m + 1, alpha + m, beta + m, alpha + beta + m]

    def generic(self, first: tuple[AnyTensor, AnyTensor], second: tuple[AnyTensor, AnyTensor],
                gammas: list[_Gammas]) -> _Estimate:
        """The generic form from its two series' sums and error bounds and its two gamma ratios."""
        g1, g2 = gammas
        power = self.s * self.log_w
        t1 = _term(g1, self.exponent, first[0])
        t2 = _term(g2, self.exponent + power, second[0])
        rounding = _EPS * (tnp.abs(self.exponent) + tnp.abs(power) + 2)
        estimate = _combined(t1, first[1] + g1.error + rounding, t2, second[1] + g2.error + rounding)
        return _Estimate(estimate.value, tnp.where(self.use & ~self.degenerate, estimate.error, math.inf))

    def psi(self, finite: tuple[AnyTensor, AnyTensor], infinite: tuple[AnyTensor, AnyTensor],
            gammas: list[_Gammas], psis: list[AnyTensor]) -> _Estimate:
        """The ψ form from its finite and infinite sums with their error bounds, its two gamma ratios and ψ at
        ``psi_shifts`` past the first."""
        first, second = gammas
        m, exponent = self.psi_m, self.psi_exponent
        finite_sum, finite_error = tnp.where(m > 0, finite[0], 0.0), tnp.where(m > 0, finite[1], 0.0)
        t1 = tnp.where(m > 0, _term(first, exponent, finite_sum), 0.0)
        power_term = _term(second, exponent + m * self.log_w, infinite[0])
        t2 = tnp.where(tnp.remainder(m, 2.0) == 1, power_term, -power_term)  # -(-1)^m
        rounding = _EPS * (tnp.abs(exponent) + tnp.abs(m * self.log_w) + 2)
        estimate = _combined(t1, finite_error + first.error + rounding, t2, infinite[1] + second.error + rounding)
        slope = 4 * (tnp.abs(self.log_w) + tnp.abs(psis[1]) + tnp.abs(psis[2]) + tnp.abs(psis[3])
                     + tnp.abs(self.exponent) + 1)
        error = estimate.error + tnp.abs(self.offset) * slope
        return _Estimate(estimate.value, tnp.where(self.degenerate_use, error, math.inf))


def _gauss_ratio(a: AnyTensor, b: AnyTensor, c: AnyTensor) -> _Ratio:
    """``2F1(a, b; c; 1) = Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b))`` for ``c - a - b > 0``."""
    d = c - a - b
    return [_clamp_below(c, ~_nonpositive_integer(c), 1.0), _clamp_below(d, d > 0, 1.0)], [c - a, c - b]


def _hyp2f1_finite(a: AnyTensor, b: AnyTensor, c: AnyTensor, x: AnyTensor) -> tuple[_Estimate, _Estimate,
                                                                                      AnyTensor]:
    """The best candidate (value and error bound) for finite ``a, b, c, x``, the series at ``x`` itself, and
    Gauss's value at ``x = 1``: the candidates' series run as the rows of one loop, and their gamma and ψ
    functions are each evaluated in one call on stacked arguments."""
    poly_ab = _nonpositive_integer(a) | _nonpositive_integer(b)
    below = x < 1
    inside = tnp.abs(x) < 1
    xb = _clamp_below(x, below, 0.0)
    log1m = _log1m(xb)  # log(1 - x), exact to rounding for every x < 1
    y = xb / (xb - 1)
    ca, cb = c - a, c - b
    poly_d2 = _nonpositive_integer(ca) | _nonpositive_integer(cb)
    poly_d3 = _nonpositive_integer(a) | _nonpositive_integer(cb)
    poly_d4 = _nonpositive_integer(ca) | _nonpositive_integer(b)
    zero = tnp.zeros_like(x)
    # (alpha, beta, gamma, z, exponent of (1 - x), where)
    direct = [
        (a, b, c, _clamp_below(x, inside | poly_ab, 0.0), zero, (inside | poly_ab) & tnp.isfinite(x)),
        (ca, cb, c, _clamp_below(xb, inside | poly_d2, 0.0), (c - a - b) * log1m, below & (inside | poly_d2)),
        (a, cb, c, _clamp_below(y, (y > -1) | poly_d3, 0.0), -a * log1m, below & ((y > -1) | poly_d3)),
        (ca, b, c, _clamp_below(y, (y > -1) | poly_d4, 0.0), -b * log1m, below & ((y > -1) | poly_d4)),
    ]
    near_x = (x > 0) & below
    w1 = _clamp_below(1.0 - xb, near_x, 0.5)
    far_x = x < 0
    w2 = 1.0 / (1.0 - _clamp_below(xb, far_x, -1.0))
    near = [_Near1(a, b, c, w1, zero, near_x), _Near1(a, cb, c, w2, -a * _clamp_below(log1m, far_x, 0.0), far_x)]
    *gammas, gauss = _gamma_ratios([r for n in near for r in n.ratios()] + [_gauss_ratio(a, b, c)])
    shifts = _stack([_stack(list(t)) for t in zip(*[n.psi_shifts() for n in near])])  # (shift, near, ...)
    psis = _psi(shifts[1:])
    # the rows: direct, generic (two per near), the ψ forms' infinite sums, then their finite ones
    rows = ([(d[0], d[1], d[2], d[3]) for d in direct] + [s for n in near for s in n.series()]
            + [n.psi_series()[0] for n in near] + [n.psi_series()[1] for n in near])
    generic_row, infinite_row, finite_row = len(direct), len(direct) + 2 * len(near), len(direct) + 3 * len(near)
    finite_rows = np.arange(len(rows)).reshape(-1, *(1,) * x.ndim) >= finite_row
    alpha, beta, gamma, z = (_stack([r[j] for r in rows]) for j in range(4))
    (totals, errors), (infinite, infinite_errors) = _sum_together(
        _Series(alpha, beta, gamma, z, finite_rows),
        _PsiBracket(slice(infinite_row, finite_row), shifts[:4], psis[:3], _stack([n.w for n in near]),
                    _stack([n.log_w for n in near])))
    candidates = [_Estimate(_scaled(totals[i], d[4]), tnp.where(d[5], errors[i] + _EPS * (tnp.abs(d[4]) + 1),
                                                                math.inf)) for i, d in enumerate(direct)]
    for j, n in enumerate(near):
        first = generic_row + 2 * j
        candidates.append(n.generic((totals[first], errors[first]), (totals[first + 1], errors[first + 1]),
                                    gammas[4 * j:4 * j + 2]))
    for j, n in enumerate(near):
        candidates.append(n.psi((totals[finite_row + j], errors[finite_row + j]), (infinite[j], infinite_errors[j]),
                                gammas[4 * j + 2:4 * j + 4], [psis[i][j] for i in range(4)]))
    return _best(candidates), candidates[0], gauss.sign * tnp.exp(gauss.log)


# ------------------------------------------------------------------------------------------------ edge rules


def _hyp2f1(a: AnyTensor, b: AnyTensor, c: AnyTensor, x: AnyTensor, tolerance: float) -> AnyTensor:
    """SciPy's rules at the edges (the module docstring) around the best candidate."""
    finite = tnp.isfinite(a) & tnp.isfinite(b) & tnp.isfinite(c) & tnp.isfinite(x)
    a_, b_, c_, x_ = (_clamp_below(t, finite, 0.5) for t in (a, b, c, x))
    best, direct, gauss = _hyp2f1_finite(a_, b_, c_, x_)
    value = tnp.where(best.error <= tolerance, best.value, math.nan)
    terminating = tnp.where(direct.error <= tolerance, direct.value, math.nan)  # (the sum to k = -b at b = c)
    poly_a, poly_b = _nonpositive_integer(a), _nonpositive_integer(b)
    poly = poly_a | poly_b
    inf = tnp.full_like(x, math.inf)
    value = tnp.where(finite, value, math.nan)
    value = tnp.where((x > 1) & ~poly, inf, value)
    value = tnp.where((x == 1) & ~poly, tnp.where(c - a - b > 0, gauss, inf), value)
    value = tnp.where((x == -math.inf) & poly, inf, value)
    c_pole = _nonpositive_integer(c)
    terminates = (poly_a & (a > c)) | (poly_b & (b > c))
    value = tnp.where(c_pole & ~terminates, inf, value)
    # (SciPy's order: these come before the pole rule, for |x| < 1 and x = -1; at b = c a non-positive integer
    # the value is the terminating sum, the candidates' then)
    unit = (tnp.abs(x) < 1) | (x == -1)
    one_minus = 1.0 - _clamp_below(x_, unit, 0.0)
    value = tnp.where((a == c) & unit, tnp.exp(-b_ * tnp.log(one_minus)), value)
    value = tnp.where((b == c) & unit, tnp.where(poly_b, terminating, tnp.exp(-a_ * tnp.log(one_minus))), value)
    value = tnp.where(tnp.isnan(a) | tnp.isnan(b) | tnp.isnan(c) | tnp.isnan(x), math.nan, value)
    line = 1.0 - b / _clamp_below(c, c != 0, 1.0) * x
    value = tnp.where((a == -1) & (c != 0), tnp.where(tnp.abs(line) < 1e-15, 0.0, line), value)
    value = tnp.where(((a == 0) | (b == 0)) & (c != 0), 1.0, value)
    return tnp.where(x == 0, 1.0, value)


def _tolerance(dtype: Any) -> float:
    return _TOLERANCE.get(np.dtype(dtype), _NARROW_TOLERANCE)


def _with_x_derivative(tolerance: float) -> Any:
    """``_hyp2f1`` at this tolerance, with its derivative in ``x`` as a custom JVP."""

    @custom_jvp
    def function(a: AnyTensor, b: AnyTensor, c: AnyTensor, x: AnyTensor) -> AnyTensor:
        return _hyp2f1(a, b, c, x, tolerance)

    @function.defjvp
    def rule(primals: Any, tangents: Any) -> tuple[AnyTensor, AnyTensor]:
        a, b, c, x = primals
        a_dot, b_dot, c_dot, x_dot = tangents
        slope = a * b / c * function(a + 1, b + 1, c + 1, x)
        # a, b, c's tangents are zero (no_derivative in front refuses others): they are kept in the rule so that
        # reverse mode sends their cotangents (zeros) back to no_derivative, which then names the problem
        kept = 0.0 * (a_dot + b_dot + c_dot)
        return function(a, b, c, x), tnp.where(a * b == 0, 0.0, slope) * x_dot + kept

    return function


_BY_TOLERANCE = {tolerance: _with_x_derivative(tolerance) for tolerance in (*_TOLERANCE.values(), _NARROW_TOLERANCE)}


_NO_PARAMETER_DERIVATIVE = ("hyp2f1: derivatives with respect to a, b and c are not implemented (only x's); "
                            "wrap them in stop_gradient if they are constants")


@op
def hyp2f1(a: Operand, b: Operand, c: Operand, x: Operand) -> AnyTensor:
    """Gauss's hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / ((c)_k k!) x^k`` of real arguments
    (analytically continued to ``x < -1``); NaN where it cannot be computed to ``2^-36`` (see the module
    docstring); SciPy's values at the edges."""
    operands = floats("hyp2f1", a, b, c, x)
    dtype = operands[0].dtype
    wide = [t.astype(np.float64) for t in operands]
    a_, b_, c_ = (wrap(A.no_derivative(cast(Traced[Any], t).atom, _NO_PARAMETER_DERIVATIVE)) for t in wide[:3])
    out = _BY_TOLERANCE[_tolerance(dtype)](a_, b_, c_, wide[3])
    return cast(AnyTensor, out if dtype == np.float64 else out.astype(dtype))
