"""Inverses of ``tensorstage.scipy.special``'s incomplete gamma functions (imported into it): ``gammaincinv(a, y)``
and ``gammainccinv(a, y)``, the ``x`` with ``gammainc(a, x) = y`` / ``gammaincc(a, x) = y`` (SciPy's; JAX has
neither).

Method: an initial guess from Wilson-Hilferty's normal approximation, the small-``x`` ``P ~ x^a / Gamma(a + 1)``
and the large-``x`` ``Q ~ x^(a-1) e^-x / Gamma(a)`` (``_initial``), then a fixed number (24) of safeguarded Newton
steps in ``log x`` (positive by construction; bisection where a step leaves the bracket) on ``log(tail / target)``
for the smaller tail (P or Q: no cancellation in ``1 - y``). The derivative is the implicit one (a ``custom_jvp``;
the loop is not differentiated): ``dx/dy = ±1 / density`` and ``dx/da = -(dP/da) / density``. Computed in float64
for every dtype (float32's own P and Q are ~10 ulps off, which the inverse would inherit), rounded once.

Edges as SciPy: ``y = 0`` gives 0 (``gammainccinv``: inf), ``y = 1`` gives inf (0); NaN for ``y`` outside [0, 1],
``a < 0``, a NaN, and ``a`` of 0 or inf with ``0 < y < 1``. Deliberate differences: where SciPy answers 0 for an
invalid ``y`` beside ``a = 1e-300`` (``gammaincinv(1e-300, -1)``) and for ``gammainccinv(0, 1e-300)`` (but NaN for
``gammainccinv(0, 0.3)``), this is NaN.

Accuracy (3000 random points, a in (1e-3, 1e6), y uniform or down to 1e-300): median 0.75 ulps from SciPy in
float64, at most a few ulps times the condition ``1 / |d log y / d log x|`` where that exceeds 1 (74 ulps at a =
0.5, y = 0.17); float32 within 2 ulps. Where SciPy's own gammainc is wrong (a > 1e5 beyond 4.5 sqrt(a) from the
mean, where its series stops at 2000 terms), its inverses are too: ``gammaincinv(8.56e5, 4.65e-12)`` is 2e4 ulps
off in SciPy, exact here (mpmath), as is ``gammaincinv(1e10, 1e-300)``.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ...control_flow import fori_loop
from ...custom_derivatives import SymbolicZero, custom_jvp
from ...staging.ir import Atom
from ...staging.primitives import special as SP
from ...tensor import Traced
from .. import numpy as tnp
from ..numpy._core import wrap
from .special import AnyTensor, _binary, _ndtri_guess, gammainc, gammaincc

__all__ = ["gammainccinv", "gammaincinv"]

_STEPS = 24  # the guesses converge in ~4; a bisection of the whole range in log x takes ~14 more
_LARGEST_STEP = 5.0  # in log x


def _tensor(x: Atom) -> AnyTensor:
    return wrap(x)


def _atom(x: AnyTensor) -> Atom:
    return cast(Traced[Any], x).atom


def _log_prefactor(a: AnyTensor, x: AnyTensor) -> AnyTensor:
    """``log(x^a e^-x / Gamma(a))``: ``x`` times the density, the slope of P in ``log x``."""
    return _tensor(SP.log_gamma_prefactor(_atom(a), _atom(x)))


def _clip(x: AnyTensor) -> AnyTensor:
    info = np.finfo(x.dtype)
    return tnp.clip(tnp.where(tnp.isnan(x), 1, x), float(info.tiny), float(info.max) / 4)


def _initial(a: AnyTensor, p: AnyTensor, q: AnyTensor, lower: AnyTensor) -> AnyTensor:
    """A guess from bounds: ``x_small = (p Gamma(a + 1))^(1/a)`` is below the answer (``P <= x^a / Gamma(a + 1)``);
    ``x_large`` from ``Q ~ x^(a-1) e^-x / Gamma(a)`` is below it for ``a >= 1`` (above for ``a < 1``); Wilson-Hilferty's
    normal approximation is close in the bulk for ``a >= 1``. Each tail takes the larger of its candidates. Only a
    start (the Newton steps polish it): the normal quantile to 4.5e-4 and ``log Gamma(a + 1)`` as ``log Gamma(a) +
    log a``, one lgamma, keep it cheap to compile."""
    log_p, log_q = tnp.log(p), tnp.log(q)
    normal = _tensor(_ndtri_guess(_atom(tnp.where(lower, log_p, log_q))))  # the smaller tail's
    z = tnp.where(lower, normal, -normal)
    bracket = 1 - 1 / (9 * a) + z / (3 * tnp.sqrt(a))
    wilson_hilferty = tnp.where(bracket > 0.25, _clip(a * tnp.maximum(bracket, 0.25) ** 3), 0)  # (no use below)
    log_gamma = _tensor(SP.lgamma(_atom(a)))  # (a is positive and finite here)
    small = _clip(tnp.exp((log_p + log_gamma + tnp.log(a)) / a))
    leading = tnp.maximum(-log_q - log_gamma, 1.0)  # x from e^-x / Gamma(a) = q, then one fixed-point step
    large = _clip(-log_q - log_gamma + (a - 1) * tnp.log(leading))
    upper = tnp.where(a >= 1, tnp.maximum(wilson_hilferty, large), tnp.maximum(small, large))
    return tnp.where(lower, tnp.maximum(small, wilson_hilferty), upper)


def _newton(a: AnyTensor, state: tuple[AnyTensor, AnyTensor, AnyTensor], p: AnyTensor, q: AnyTensor,
            lower: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """One safeguarded Newton step in ``u = log x`` on ``log(tail / target)`` (the tail: P or Q): quadratic near the
    answer, and far out in a tail it follows ``log Q ~ -x``, where a step on ``Q - q`` itself would crawl. The
    bracket ``[low, high]`` shrinks to each side's last point; a step that leaves it (or that is too long to trust:
    a tail underflowed to 0 or 1) bisects it in ``log x`` instead."""
    x, low, high = state
    tail = tnp.where(lower, gammainc(a, x), gammaincc(a, x))
    miss = tnp.log(tail / tnp.where(lower, p, q))
    below = tnp.where(lower, miss < 0, miss > 0)  # x is below the answer
    low, high = tnp.where(below, x, low), tnp.where(below, high, x)
    # |d log(tail) / du| = x density / tail, as a difference of logs: near 1e-300 the product would be subnormal
    rate = tnp.exp(_log_prefactor(a, x) - tnp.log(tail))
    step = miss / tnp.where(lower, rate, -rate)
    sane = (tnp.abs(step) < _LARGEST_STEP) & (tail > 0)  # (false at NaN, and where a tail is 0 or 1)
    newton = x * tnp.exp(-tnp.where(sane, step, 0))
    inside = sane & (newton >= low) & (newton <= high)
    middle = tnp.exp(0.5 * (tnp.log(low) + tnp.log(high)))
    return tnp.where(inside, newton, middle), low, high


def _solve(upper: bool, a: AnyTensor, y: AnyTensor) -> AnyTensor:
    """The ``x`` with ``Q(a, x) = y`` (``upper``) or ``P(a, x) = y``, for ``0 < y < 1`` and ``0 < a < inf``."""
    p, q = (1 - y, y) if upper else (y, 1 - y)
    lower = p <= 0.5
    info = np.finfo(y.dtype)
    bracket = tnp.full_like(y, float(info.tiny)), tnp.full_like(y, float(info.max) / 4)
    start = (_initial(a, p, q, lower), *bracket)
    x, _, _ = fori_loop(0, _STEPS, lambda i, state: _newton(a, state, p, q, lower), start)
    return tnp.where(x > float(info.tiny), x, 0)  # stopped at the bracket's end: below the smallest normal


_solve_inverse = custom_jvp(_solve, nondiff_argnums=(0,))


def _solve_inverse_jvp(upper: bool, primals: Any, tangents: Any) -> Any:
    """The implicit derivative (the loop is not differentiated): ``dx = (±dy - dP/da da) / density``. With
    symbolic zeros, a term whose tangent is not perturbed is left out: ``dP/da`` (igamma_grad_a, the costliest
    part to compile) only where ``a`` is differentiated."""
    (a, y), (ta, ty) = primals, tangents
    x = _solve_inverse(upper, a, y)
    if isinstance(ta, SymbolicZero) and isinstance(ty, SymbolicZero):
        return x, ty
    density = tnp.exp(_log_prefactor(a, x)) / x
    usable = density > 0  # (0 where the answer underflows or overflows)
    inverse_density = tnp.where(usable, 1 / tnp.where(usable, density, 1), 0)
    numerator = tnp.zeros_like(x)
    if not isinstance(ty, SymbolicZero):
        numerator = -ty if upper else ty
    if not isinstance(ta, SymbolicZero):
        numerator = numerator - _tensor(SP.igamma_grad_a(_atom(a), _atom(tnp.where(usable, x, 1)))) * ta
    return x, numerator * inverse_density


_solve_inverse.defjvp(_solve_inverse_jvp, symbolic_zeros=True)


def _inverse(upper: bool) -> Any:
    def fn(a_atom: Atom, y_atom: Atom) -> Atom:
        a, y = _tensor(a_atom), _tensor(y_atom)
        dtype = y.dtype
        if dtype != np.float64:  # solved in float64 and rounded once: float32's P and Q are ~10 ulps off
            a, y = a.astype(np.float64), y.astype(np.float64)
        valid = (a >= 0) & (y >= 0) & (y <= 1)
        interior = valid & (y > 0) & (y < 1) & (a > 0) & (a < math.inf)
        safe_a, safe_y = tnp.where(interior, a, 1), tnp.where(interior, y, 0.5)
        x = _solve_inverse(upper, safe_a, safe_y)
        zero_at, inf_at = (1, 0) if upper else (0, 1)
        edge = tnp.where(y == zero_at, 0, tnp.where(y == inf_at, tnp.full_like(y, math.inf), math.nan))
        out = tnp.where(interior, x, tnp.where(valid, edge, math.nan))
        return _atom(out.astype(dtype))

    fn.__doc__ = (f"The inverse of ``gammainc{'c' if upper else ''}(a, x)`` in ``x``: "
                  f"``gammainc{'c' if upper else ''}(a, gammainc{'c' if upper else ''}inv(a, y)) = y``.")
    return fn


gammaincinv = _binary("gammaincinv", _inverse(False))
gammainccinv = _binary("gammainccinv", _inverse(True))
