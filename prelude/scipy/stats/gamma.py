"""``tensorstage.scipy.stats.gamma``: the gamma distribution with shape ``a`` (``scale`` = 1 / rate)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, floats, positive, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _y(name: str, x: Any, a: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``(x - loc) / scale`` (NaN for ``a <= 0`` or ``scale <= 0``), ``a`` and ``scale``."""
    x, a, loc, scale = floats(name, x, a, loc, scale)
    y, scale = standardized(name, x, loc, scale)
    return tnp.where(positive(a), y, math.nan), a, scale


@as_shape1
def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, scale = _y("gamma.logpdf", x, a, loc, scale)
    inside = y >= 0
    safe = tnp.where(inside, y, 1)
    return defined(tnp.where(inside, sp.xlogy(a - 1, safe) - safe - sp.gammaln(a) - tnp.log(scale), -math.inf), y)


@as_shape1
def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, loc, scale))


@as_shape1
def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = _y("gamma.cdf", x, a, loc, scale)
    return defined(tnp.where(y == math.inf, 1, sp.gammainc(a, tnp.maximum(y, 0))), y)  # (1 there even for a = inf)


@as_shape1
def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(cdf(x, a, loc, scale))


@as_shape1
def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    y, a, _ = _y("gamma.sf", x, a, loc, scale)
    return defined(tnp.where(y == math.inf, 0, sp.gammaincc(a, tnp.maximum(y, 0))), y)


@as_shape1
def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log(sf(x, a, loc, scale))
