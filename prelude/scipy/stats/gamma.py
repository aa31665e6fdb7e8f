"""``tensorstage.scipy.stats.gamma``: the gamma distribution with shape ``a`` (``scale`` = 1 / rate). ``ppf`` and
``isf`` (SciPy's; ``jax.scipy.stats.gamma`` has neither) invert ``gammainc`` / ``gammaincc``."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, quantile, shape_standardized

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


@as_shape1
def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, scale = shape_standardized("gamma.logpdf", x, a, loc, scale)
    inside = y >= 0
    safe = tnp.where(inside, y, 1)
    return defined(tnp.where(inside, sp.xlogy(a - 1, safe) - safe - sp.gammaln(a) - tnp.log(scale), -math.inf), y)


@as_shape1
def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, loc, scale))


@as_shape1
def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = shape_standardized("gamma.cdf", x, a, loc, scale)
    return defined(tnp.where(y == math.inf, 1, sp.gammainc(a, tnp.maximum(y, 0))), y)  # (1 there even for a = inf)


@as_shape1
def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, a, loc, scale))


@as_shape1
def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = shape_standardized("gamma.sf", x, a, loc, scale)
    return defined(tnp.where(y == math.inf, 0, sp.gammaincc(a, tnp.maximum(y, 0))), y)


@as_shape1
def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, a, loc, scale))


@as_shape1
def ppf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gamma.ppf", lambda p, a: sp.gammaincinv(a, p), q, loc, scale, a)


@as_shape1
def isf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gamma.isf", lambda p, a: sp.gammainccinv(a, p), q, loc, scale, a)
