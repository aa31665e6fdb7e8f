"""``tensorstage.scipy.stats.beta``: the beta distribution on ``[loc, loc + scale]``; its CDF is the regularized
incomplete beta function (the survival function ``I_{1-y}(b, a)``, accurate in the upper tail)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape2, defined, floats, positive, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


@as_shape2
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, b, scale = _y("beta.logpdf", x, a, b, loc, scale)
    inside = (y >= 0) & (y <= 1)
    safe = tnp.where(inside, y, 0.5)
    log_density = sp.xlogy(a - 1, safe) + sp.xlog1py(b - 1, -safe) - sp.betaln(a, b) - tnp.log(scale)
    return defined(tnp.where(inside, log_density, -math.inf), y)


@as_shape2
def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, b, loc, scale))


def _y(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, ...]:
    """``(x - loc) / scale`` (NaN for invalid parameters), ``a``, ``b`` and ``scale``."""
    x, a, b, loc, scale = floats(name, x, a, b, loc, scale)
    y, scale = standardized(name, x, loc, scale)
    return tnp.where(positive(a, b), y, math.nan), a, b, scale


def _unit(name: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``(x - loc) / scale`` clipped to [0, 1] (the CDF is 0 below and 1 above; NaN stays NaN), ``a`` and ``b``."""
    y, a, b, _ = _y(name, x, a, b, loc, scale)
    return defined(tnp.clip(y, 0, 1), y), a, b


@as_shape2
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, b = _unit("beta.cdf", x, a, b, loc, scale)
    return defined(sp.betainc(a, b, y), y)


@as_shape2
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, b = _unit("beta.sf", x, a, b, loc, scale)
    return defined(sp.betainc(b, a, 1 - y), y)


@as_shape2
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, a, b, loc, scale))


@as_shape2
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, a, b, loc, scale))
