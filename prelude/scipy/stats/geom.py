"""``tensorstage.scipy.stats.geom``: the geometric distribution, the trial of the first success at probability
``p`` (support ``k >= 1``). ``k`` as in ``binom``."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_discrete, counts, defined, floats

__all__ = ["cdf", "logpmf", "pmf"]


@as_discrete
def logpmf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    k, p, loc = floats("geom.logpmf", counts("geom.logpmf", k, p), p, loc)
    k = k - loc
    valid = (k >= 1) & (tnp.floor(k) == k)
    safe = tnp.where(valid, k, 1)
    return defined(tnp.where(valid, sp.xlog1py(safe - 1, -p) + tnp.log(p), -math.inf), k, (p > 0) & (p <= 1))


@as_discrete
def pmf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    return tnp.exp(logpmf(k, p, loc))


@as_discrete
def cdf(k: Any, p: Any, loc: Any = 0) -> AnyTensor:
    """``1 - (1 - p)^floor(k)``, through expm1 (accurate for small ``p``)."""
    k, p, loc = floats("geom.cdf", counts("geom.cdf", k, p), p, loc)
    j = tnp.floor(k - loc)
    return defined(tnp.where(j >= 1, -tnp.expm1(tnp.maximum(j, 1) * tnp.log1p(-p)), 0), k, (p > 0) & (p <= 1))
