"""``tensorstage.scipy.stats.cauchy``: the Cauchy distribution."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, quantile, standardized

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]



@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("cauchy.logpdf", x, loc, scale)
    return -math.log(math.pi) - tnp.log(scale) - tnp.log1p(z * z)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


def _tail(z: AnyTensor) -> AnyTensor:
    """P(Z > z) = arctan(1/z)/pi for z > 0 (no cancellation in the tail), 1/2 - arctan(z)/pi otherwise."""
    return tnp.where(z > 0, tnp.arctan2(1.0, z) / math.pi, 0.5 - tnp.arctan(z) / math.pi)


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return _tail(-standardized("cauchy.cdf", x, loc, scale)[0])


@as_loc_scale
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, loc, scale))


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return _tail(standardized("cauchy.sf", x, loc, scale)[0])


@as_loc_scale
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, loc, scale))


def _standard_ppf(q: AnyTensor) -> AnyTensor:
    """``tan(pi (q - 1/2))`` as ``-1 / tan(pi q)`` below 1/2 and ``1 / tan(pi (1 - q))`` above (exact ``1 - q``): no
    cancellation in ``q - 1/2`` near the poles, and ±inf at 0 and 1."""
    return tnp.where(q < 0.5, -1 / tnp.tan(math.pi * q), 1 / tnp.tan(math.pi * (1 - q)))


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("cauchy.ppf", _standard_ppf, q, loc, scale)


@as_loc_scale
def isf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("cauchy.isf", _standard_ppf, q, loc, scale, upper=True)
