"""``tensorstage.scipy.stats.nbinom``: the negative binomial distribution, the number of failures before the
``n``-th success at success probability ``p``. ``k`` as in ``binom``; ``cdf`` is ``I_p(n, k + 1)``."""

from __future__ import annotations

import math

from ... import numpy as tnp
from ...numpy._core import op
from .. import special as sp
from ._common import AnyTensor, Operand, counts, defined, floats

__all__ = ["cdf", "logpmf", "pmf"]


def _operands(name: str, k: Operand, n: Operand, p: Operand, loc: Operand) -> list[AnyTensor]:
    """``k - loc`` (NaN for parameters out of SciPy's range ``n > 0``, ``0 < p <= 1``), ``n`` and ``p``."""
    k, n, p, loc = floats(name, counts(name, k, p), n, p, loc)
    return [tnp.where((n > 0) & (p > 0) & (p <= 1), k - loc, math.nan), n, p]


@op
def logpmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("nbinom.logpmf", k, n, p, loc)
    valid = (k >= 0) & (tnp.floor(k) == k)
    safe = tnp.where(valid, k, 0)
    log_count = sp.gammaln(n + safe) - sp.gammaln(safe + 1) - sp.gammaln(n)
    return defined(tnp.where(valid, log_count + sp.xlogy(n, p) + sp.xlog1py(safe, -p), -math.inf), k)


@op
def pmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, n, p, loc))


@op
def cdf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("nbinom.cdf", k, n, p, loc)
    j = tnp.floor(k)
    out = tnp.where(j == math.inf, 1, tnp.where(j >= 0, sp.betainc(n, tnp.maximum(j, 0) + 1, p), 0))
    return defined(out, k, ~((j >= 0) & (j < math.inf) & (n == math.inf)))  # (SciPy: NaN there)
