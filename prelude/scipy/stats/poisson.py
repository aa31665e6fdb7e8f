"""``tensorstage.scipy.stats.poisson``: the Poisson distribution of mean ``mu``. ``k`` may be an integer tensor
(counts: converted to ``mu``'s dtype); non-integer ``k`` has probability 0 (the CDF floors it), as SciPy."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_discrete, counts, defined, floats

__all__ = ["cdf", "logpmf", "pmf"]


def _k(name: str, k: Any, mu: Any, loc: Any) -> tuple[AnyTensor, AnyTensor]:
    """``k - loc`` (NaN for ``mu < 0``, out of SciPy's range) and ``mu``."""
    k, mu, loc = floats(name, counts(name, k, mu), mu, loc)
    return tnp.where(mu >= 0, k - loc, math.nan), mu


@as_discrete
def logpmf(k: Any, mu: Any, loc: Any = 0) -> AnyTensor:
    k, mu = _k("poisson.logpmf", k, mu, loc)
    valid = (k >= 0) & (tnp.floor(k) == k)
    safe = tnp.where(valid, k, 0)
    return defined(tnp.where(valid, sp.xlogy(safe, mu) - sp.gammaln(safe + 1) - mu, -math.inf), k)


@as_discrete
def pmf(k: Any, mu: Any, loc: Any = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, mu, loc))


@as_discrete
def cdf(k: Any, mu: Any, loc: Any = 0) -> AnyTensor:
    k, mu = _k("poisson.cdf", k, mu, loc)
    below = sp.gammaincc(tnp.floor(tnp.maximum(k, 0)) + 1, mu)
    return defined(tnp.where(k == math.inf, 1, tnp.where(k >= 0, below, 0)), k)  # (1 at k = inf even for mu = inf)
