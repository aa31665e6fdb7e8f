"""``tensorstage.scipy.stats.norm``: the normal distribution (``loc`` = mean, ``scale`` = standard deviation)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_loc_scale, quantile, standardized

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]



@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("norm.logpdf", x, loc, scale)
    return -0.5 * z * z - tnp.log(scale) - 0.5 * math.log(2 * math.pi)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.ndtr(standardized("norm.cdf", x, loc, scale)[0])


@as_loc_scale
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.log_ndtr(standardized("norm.logcdf", x, loc, scale)[0])


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.ndtr(-standardized("norm.sf", x, loc, scale)[0])


@as_loc_scale
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.log_ndtr(-standardized("norm.logsf", x, loc, scale)[0])


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """The quantile ``loc + scale ndtri(q)``."""
    return quantile("norm.ppf", sp.ndtri, q, loc, scale)


@as_loc_scale
def isf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("norm.isf", sp.ndtri, q, loc, scale, upper=True)
