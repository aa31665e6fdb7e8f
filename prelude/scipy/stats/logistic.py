"""``tensorstage.scipy.stats.logistic``: the logistic distribution."""

from __future__ import annotations

from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_loc_scale, quantile, standardized

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]



@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("logistic.logpdf", x, loc, scale)
    a = tnp.abs(z)  # the density is even: -|z| - 2 log(1 + e^-|z|) never overflows
    return -a - 2 * tnp.log1p(tnp.exp(-a)) - tnp.log(scale)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.expit(standardized("logistic.cdf", x, loc, scale)[0])


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return sp.expit(-standardized("logistic.sf", x, loc, scale)[0])


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("logistic.ppf", sp.logit, q, loc, scale)


@as_loc_scale
def isf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("logistic.isf", sp.logit, q, loc, scale, upper=True)
