"""``tensorstage.scipy.stats.pareto``: the Pareto distribution of shape ``b`` (support ``x >= loc + scale``)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_shape1, floats

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _log_z(name: str, x: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """``log z`` for ``z = (x - loc) / scale`` (0 below the support, so no NaN reaches a gradient), whether ``z >=
    1``, ``b`` and ``scale``."""
    x, b, loc, scale = floats(name, x, b, loc, scale)
    z = (x - loc) / scale
    inside = z >= 1
    return tnp.log(tnp.where(inside, z, 1)), inside, b, scale


@as_shape1
def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    log_z, inside, b, scale = _log_z("pareto.logpdf", x, b, loc, scale)
    return tnp.where(inside, tnp.log(b) - (b + 1) * log_z - tnp.log(scale), -math.inf)


@as_shape1
def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, b, loc, scale))


@as_shape1
def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    log_z, _, b, _ = _log_z("pareto.logsf", x, b, loc, scale)
    out: AnyTensor = -b * log_z
    return out


@as_shape1
def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logsf(x, b, loc, scale))


@as_shape1
def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return -tnp.expm1(logsf(x, b, loc, scale))


@as_shape1
def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.log1p(-sf(x, b, loc, scale))


@as_shape1
def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    q, b, loc, scale = floats("pareto.ppf", q, b, loc, scale)
    out: AnyTensor = loc + scale * tnp.exp(-tnp.log1p(-q) / b)
    return out
