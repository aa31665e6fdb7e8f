"""``tensorstage.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta`` > 0 (density
``beta / (2 Gamma(1/beta)) exp(-|x|^beta)``; 2 is the normal with variance 1/2, 1 the Laplace). SciPy's ``loc`` and
``scale`` are accepted (JAX's take only ``x`` and ``beta``). ``ppf`` and ``isf`` (SciPy's; JAX has neither) invert
the tail ``Q(1/beta, |z|^beta)`` with ``gammainccinv`` (no cancellation near q = 0 or 1)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, quantile, shape_standardized

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf"]


@as_shape1
def logpdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, beta, scale = shape_standardized("gennorm.logpdf", x, beta, loc, scale)
    out = tnp.log(0.5 * beta) - sp.gammaln(1 / beta) - tnp.abs(z) ** beta - tnp.log(scale)
    return defined(out, z)


@as_shape1
def pdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, beta, loc, scale))


@as_shape1
def cdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """``1/2 + sign(z)/2 - sign(z)/2 Q(1/beta, |z|^beta)``: the tail ``Q`` is taken directly (no cancellation)."""
    z, beta, _ = shape_standardized("gennorm.cdf", x, beta, loc, scale)
    half = 0.5 * tnp.sign(z)
    return defined(0.5 + half - half * sp.gammaincc(1 / beta, tnp.abs(z) ** beta), z)


def _standard_ppf(q: AnyTensor, beta: AnyTensor) -> AnyTensor:
    """``sign(q - 1/2) gammainccinv(1/beta, 2 min(q, 1 - q))^(1/beta)``; ±inf at q = 0 and 1 for every beta, as SciPy
    (``beta = inf``, the uniform on [-1, 1], included)."""
    tail = 2 * tnp.minimum(q, 1 - q)
    magnitude = tnp.where(tail == 0, math.inf, sp.gammainccinv(1 / beta, tail) ** (1 / beta))
    return tnp.sign(q - 0.5) * magnitude


@as_shape1
def ppf(q: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gennorm.ppf", _standard_ppf, q, loc, scale, beta)


@as_shape1
def isf(q: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gennorm.isf", _standard_ppf, q, loc, scale, beta, upper=True)
