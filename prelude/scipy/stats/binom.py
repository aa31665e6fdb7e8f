"""``tensorstage.scipy.stats.binom``: the binomial distribution of ``n`` trials with success probability ``p``.
``k`` may be an integer tensor (converted to ``p``'s dtype); a ``k`` that is not an integer in [0, n] has
probability 0 and the CDF floors ``k`` (as SciPy). ``cdf`` is ``I_{1-p}(n - k, k + 1)`` (``jax.scipy.stats.binom``
has no CDF)."""

from __future__ import annotations

import math

from ... import numpy as tnp
from .. import special as sp
from ...numpy._core import op
from ._common import AnyTensor, Operand, counts, defined, floats, probability

__all__ = ["cdf", "logpmf", "pmf"]


def _lcomb(n: AnyTensor, k: AnyTensor) -> AnyTensor:
    out: AnyTensor = sp.gammaln(n + 1) - sp.gammaln(k + 1) - sp.gammaln(n - k + 1)
    return out


def trials(n: AnyTensor) -> AnyTensor:
    """Whether ``n`` is a valid number of trials (an integer >= 0)."""
    return (n >= 0) & (tnp.floor(n) == n)


def log_count(k: AnyTensor, n: AnyTensor, valid: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``k`` where it is a valid count of ``n`` trials (0 elsewhere, so no NaN reaches a gradient) and
    ``log C(n, k)`` there."""
    safe = tnp.where(valid, k, 0)
    return safe, _lcomb(n, safe)


def _operands(name: str, k: Operand, n: Operand, p: Operand, loc: Operand) -> list[AnyTensor]:
    k, n, p, loc = floats(name, counts(name, k, p), n, p, loc)
    return [k - loc, n, p]


@op
def logpmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("binom.logpmf", k, n, p, loc)
    valid = (k >= 0) & (k <= n) & (tnp.floor(k) == k)
    safe, lc = log_count(k, n, valid)
    out = tnp.where(valid, lc + sp.xlogy(safe, p) + sp.xlog1py(n - safe, -p), -math.inf)
    return defined(out, k, trials(n) & probability(p))


@op
def pmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, n, p, loc))


@op
def cdf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("binom.cdf", k, n, p, loc)
    j = tnp.floor(k)
    inside = (j >= 0) & (j < n)
    safe = tnp.where(inside, j, 0)
    below = sp.betainc(tnp.where(inside, n - safe, 1), safe + 1, 1 - p)
    out = tnp.where(j >= n, 1, tnp.where(j < 0, 0, below))
    finite_count = (j >= 0) & (j < math.inf)
    return defined(out, k, trials(n) & probability(p) & ~(finite_count & (n == math.inf)))  # (SciPy: NaN there)
