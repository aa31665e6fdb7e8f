"""``tensorstage.scipy.stats.gumbel_r``: the right-skewed Gumbel (extreme value) distribution."""

from __future__ import annotations

from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, quantile, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("gumbel_r.logpdf", x, loc, scale)
    out: AnyTensor = -z - tnp.exp(-z) - tnp.log(scale)
    return out


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, _ = standardized("gumbel_r.logcdf", x, loc, scale)
    out: AnyTensor = -tnp.exp(-z)
    return out


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logcdf(x, loc, scale))


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return -tnp.expm1(logcdf(x, loc, scale))


@as_loc_scale
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, loc, scale))


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gumbel_r.ppf", lambda p: -tnp.log(-tnp.log(p)), q, loc, scale)
