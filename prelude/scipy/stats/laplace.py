"""``tensorstage.scipy.stats.laplace``: the double exponential distribution."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, standardized

__all__ = ["cdf", "logpdf", "pdf"]


@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("laplace.logpdf", x, loc, scale)
    return -tnp.abs(z) - tnp.log(scale) - math.log(2)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, _ = standardized("laplace.cdf", x, loc, scale)
    half_tail = 0.5 * tnp.exp(-tnp.abs(z))
    return tnp.where(z < 0, half_tail, 1 - half_tail)
