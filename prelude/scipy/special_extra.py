"""More of ``tensorstage.scipy.special`` (imported into it): the regularized incomplete beta function, binomial
coefficients, Box-Cox transforms and the real log-gamma function.

Values follow SciPy: ``betainc`` is NaN outside ``a, b >= 0``, ``0 <= x <= 1`` (accuracy: the ``betainc`` rows of
``lowering/rules/special.py``: ~1e-7 absolute up to ``a, b = 1e6``; beyond 2e6 it is NaN, where JAX's same
construction loses every digit: its ``betainc(1e10, 1e10, 0.5)`` is -5.8, SciPy's 0.5); ``comb`` (``exact=False``) is 0 for ``N < 0``, ``k < 0`` or ``k > N``;
``loggamma`` is inf at 0 and NaN below (real operands only); ``boxcox(x < 0)`` / ``boxcox1p(x < -1)`` are NaN.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives.autodiff import stop_gradient
from ...staging.primitives import special as SP
from ...staging.primitives import structural as ST
from ...tensor import Traced
from ..numpy._core import op, wrap
from ..numpy.mathfuncs import _and, _floats, _or
from .stats._common import floats
from .special import AnyTensor, Operand, _binary, _c, _unary, _where

__all__ = ["betainc", "boxcox", "boxcox1p", "comb", "loggamma"]


@op
def betainc(a: Operand, b: Operand, x: Operand) -> AnyTensor:
    """The regularized incomplete beta function ``I_x(a, b) = B(x; a, b) / B(a, b)``; differentiable in ``x``."""
    return wrap(SP.betainc(*(cast(Traced[Any], t).atom for t in floats("betainc", a, b, x))))


def _lbinom(n: Atom, k: Atom) -> Atom:
    return E.sub(SP.lgamma(E.add(n, _c(1, n))), E.add(SP.lgamma(E.add(k, _c(1, k))),
                                                     SP.lgamma(E.add(E.sub(n, k), _c(1, n)))))


def _comb(n: Atom, k: Atom) -> Atom:
    """``N! / (k! (N - k)!)`` through gammaln, in float64 (float32's lgamma leaves ~1e-6 relative, which a GPU's
    lgamma pushed past SciPy's product formula), rounded to the integer it must be where ``N`` and ``k`` are
    integers (the gradient is the unrounded one's); 0 off ``0 <= k <= N``."""
    dtype = n.aval.dtype
    wide = np.dtype(np.float64)
    n, k = E.convert(n, wide), E.convert(k, wide)
    zero = _c(0, n)
    outside = _or(_or(E.lt(n, zero), E.lt(k, zero)), E.gt(k, n))
    value = E.exp(_lbinom(n, k))
    k_integral = E.eq(k, E.floor(k))
    rounded = E.add(value, stop_gradient(E.sub(bind(E.round_p, value), value)))
    exact = _and(_and(E.eq(n, E.floor(n)), k_integral), E.lt(value, _c(math.inf, n)))
    value = _where(exact, rounded, value)
    # N = inf: lgamma's inf - inf; SciPy's limit is 1 at k = 0, inf at other integers k.
    at_infinity = _where(E.eq(k, zero), _c(1, n), _where(k_integral, _c(math.inf, n), _c(math.nan, n)))
    value = _where(E.eq(n, _c(math.inf, n)), at_infinity, value)
    value = _where(outside, ST.full_like(n, 0), value)
    return value if dtype == wide else E.convert(value, dtype)


@op
def comb(N: Operand, k: Operand, *, exact: bool = False, repetition: bool = False) -> AnyTensor:
    """The number of combinations of ``N`` things taken ``k`` at a time (with ``repetition``: ``comb(N + k - 1,
    k)``), as a float; ``exact=True`` raises (as JAX: no arbitrary-precision integers)."""
    if exact:
        raise ValueError("comb: exact=True is not supported (as in JAX); use exact=False")
    n, kk = _floats("comb", N, k)
    if repetition:
        n = E.sub(E.add(n, kk), _c(1, n))
    return wrap(_comb(n, kk))


def _loggamma(x: Atom) -> Atom:
    """log Gamma(x) for real ``x``: gammaln above 0, inf at ±0 and +inf, NaN below 0."""
    return _where(E.lt(x, _c(0, x)), _c(math.nan, x), SP.lgamma(x))


def _box_cox(log_fn: Any) -> Any:
    def fn(x: Atom, lmbda: Atom) -> Atom:
        is_zero = E.eq(lmbda, _c(0, lmbda))
        safe = _where(is_zero, _c(1, lmbda), lmbda)  # keeps 0/0 out of the unused branch and its gradient
        log_x = log_fn(x)
        return _where(is_zero, log_x, E.div(bind(E.expm1_p, E.mul(safe, log_x)), safe))

    return fn


loggamma = _unary("loggamma", _loggamma)
boxcox = _binary("boxcox", _box_cox(E.log))
boxcox1p = _binary("boxcox1p", _box_cox(lambda x: bind(E.log1p_p, x)))
