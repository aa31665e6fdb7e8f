"""``tensorstage.scipy.stats.nbinom``: the negative binomial distribution, the number of failures before the
``n``-th success at success probability ``p``. ``k`` as in ``binom``; ``cdf`` is ``I_p(n, k + 1)``."""

from __future__ import annotations

import math

from ... import numpy as tnp
from ...numpy._core import op
from .. import special as sp
from ._common import AnyTensor, Operand, counts, floats

__all__ = ["cdf", "logpmf", "pmf"]


def _operands(name: str, k: Operand, n: Operand, p: Operand, loc: Operand) -> list[AnyTensor]:
    k, n, p, loc = floats(name, counts(name, k, p), n, p, loc)
    return [k - loc, n, p]


@op
def logpmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("nbinom.logpmf", k, n, p, loc)
    valid = (k >= 0) & (tnp.floor(k) == k)
    safe = tnp.where(valid, k, 0)
    log_count = sp.gammaln(n + safe) - sp.gammaln(safe + 1) - sp.gammaln(n)
    return tnp.where(valid, log_count + sp.xlogy(n, p) + sp.xlog1py(safe, -p), -math.inf)


@op
def pmf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, n, p, loc))


@op
def cdf(k: Operand, n: Operand, p: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, p = _operands("nbinom.cdf", k, n, p, loc)
    j = tnp.floor(k)
    return tnp.where(j >= 0, sp.betainc(n, tnp.maximum(j, 0) + 1, p), 0)
