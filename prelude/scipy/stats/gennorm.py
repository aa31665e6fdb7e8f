"""``tensorstage.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta`` > 0 (density
``beta / (2 Gamma(1/beta)) exp(-|x|^beta)``; 2 is the normal with variance 1/2, 1 the Laplace). SciPy's ``loc`` and
``scale`` are accepted (JAX's take only ``x`` and ``beta``). No ``ppf``: it needs the inverse incomplete gamma
function, which ``tensorstage.scipy.special`` lacks (as does ``jax.scipy.stats.gennorm``)."""

from __future__ import annotations

from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, shape_standardized

__all__ = ["cdf", "logpdf", "pdf"]


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
