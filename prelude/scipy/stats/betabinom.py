"""``tensorstage.scipy.stats.betabinom``: the beta-binomial distribution (``n`` trials, success probability drawn
from ``beta(a, b)``). ``k`` as in ``binom``."""

from __future__ import annotations

import math

from ... import numpy as tnp
from ...numpy._core import op
from .. import special as sp
from ._common import AnyTensor, Operand, counts, defined, floats, positive
from .binom import log_count, trials

__all__ = ["logpmf", "pmf"]


@op
def logpmf(k: Operand, n: Operand, a: Operand, b: Operand, loc: Operand = 0) -> AnyTensor:
    k, n, a, b, loc = floats("betabinom.logpmf", counts("betabinom.logpmf", k, a), n, a, b, loc)
    k = k - loc
    valid = (k >= 0) & (k <= n) & (tnp.floor(k) == k)
    safe, lc = log_count(k, n, valid)
    out = tnp.where(valid, lc + sp.betaln(safe + a, n - safe + b) - sp.betaln(a, b), -math.inf)
    return defined(out, k, trials(n) & positive(a, b))


@op
def pmf(k: Operand, n: Operand, a: Operand, b: Operand, loc: Operand = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, n, a, b, loc))
