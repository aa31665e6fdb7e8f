"""``tensorstage.scipy.stats.expon``: the exponential distribution (rate ``1 / scale``, starting at ``loc``)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, defined, quantile, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]



@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("expon.logpdf", x, loc, scale)
    return defined(tnp.where(z >= 0, -z - tnp.log(scale), -math.inf), z)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, _ = standardized("expon.cdf", x, loc, scale)
    return -tnp.expm1(-tnp.maximum(z, 0))


@as_loc_scale
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, loc, scale))


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logsf(x, loc, scale))


@as_loc_scale
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, _ = standardized("expon.logsf", x, loc, scale)
    return -tnp.maximum(z, 0)


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("expon.ppf", lambda p: -tnp.log1p(-p), q, loc, scale)
