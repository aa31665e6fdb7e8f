"""``tensorstage.scipy.stats.bernoulli``: 1 with probability ``p``, else 0. ``k`` may be an integer tensor."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_discrete, counts, defined, floats, probability

__all__ = ["cdf", "logpmf", "pmf"]


@as_discrete
def logpmf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    k, p, loc = floats("bernoulli.logpmf", counts("bernoulli.logpmf", k, p), p, loc)
    k = k - loc
    valid = (k == 0) | (k == 1)
    return defined(tnp.where(valid, sp.xlogy(k, p) + sp.xlog1py(1 - k, -p), -math.inf), k, probability(p))


@as_discrete
def pmf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, p, loc))


@as_discrete
def cdf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    k, p, loc = floats("bernoulli.cdf", counts("bernoulli.cdf", k, p), p, loc)
    k = k - loc
    return defined(tnp.where(k < 0, 0, tnp.where(k < 1, 1 - p, 1)), k, probability(p))
