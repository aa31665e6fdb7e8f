"""``tensorstage.scipy.stats.pareto``: the Pareto distribution of shape ``b`` (support ``x >= loc + scale``)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_shape1, defined, quantile, shape_standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _log_z(name: str, x: Any, b: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """``log z`` for ``z = (x - loc) / scale`` (0 below the support, so no NaN reaches a gradient), whether ``z >=
    1``, ``b`` and ``scale``; NaN (all through) for a NaN ``x`` or invalid parameters."""
    z, b, scale = shape_standardized(name, x, b, loc, scale)
    inside = z >= 1
    return defined(tnp.log(tnp.where(inside, z, 1)), z), inside, b, scale


@as_shape1
def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    log_z, inside, b, scale = _log_z("pareto.logpdf", x, b, loc, scale)
    decay = tnp.where(log_z > 0, (b + 1) * log_z, 0)  # (0 at z = 1 even for b = inf)
    return defined(tnp.where(inside, tnp.log(b) - decay - tnp.log(scale), -math.inf), log_z)


@as_shape1
def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, b, loc, scale))


@as_shape1
def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    log_z, inside, b, _ = _log_z("pareto.logsf", x, b, loc, scale)
    return defined(tnp.where(log_z > 0, -b * log_z, 0), log_z)  # (0 up to z = 1 even for b = inf)


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
    return quantile("pareto.ppf", lambda p, shape: tnp.exp(-tnp.log1p(-p) / shape), q, loc, scale, b)
