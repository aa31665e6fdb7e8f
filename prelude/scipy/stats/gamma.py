"""``tensorstage.scipy.stats.gamma``: the gamma distribution with shape ``a`` (``scale`` = 1 / rate)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, floats

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _y(name: str, x: Any, a: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    x, a, loc, scale = floats(name, x, a, loc, scale)
    return (x - loc) / scale, a, scale


@as_shape1
def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, scale = _y("gamma.logpdf", x, a, loc, scale)
    inside = y >= 0
    safe = tnp.where(inside, y, 1)
    return tnp.where(inside, sp.xlogy(a - 1, safe) - safe - sp.gammaln(a) - tnp.log(scale), -math.inf)


@as_shape1
def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, loc, scale))


@as_shape1
def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = _y("gamma.cdf", x, a, loc, scale)
    return sp.gammainc(a, tnp.maximum(y, 0))


@as_shape1
def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, a, loc, scale))


@as_shape1
def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = _y("gamma.sf", x, a, loc, scale)
    return sp.gammaincc(a, tnp.maximum(y, 0))


@as_shape1
def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, a, loc, scale))
