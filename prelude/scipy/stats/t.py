"""``tensorstage.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom. The CDF (which
``jax.scipy.stats.t`` lacks) is ``I_{df/(df+z²)}(df/2, 1/2) / 2`` in the lower tail, by symmetry above."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, shape_standardized

__all__ = ["cdf", "logpdf", "pdf", "sf"]


@as_shape1
def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """The log-density; the normal's for ``df = inf`` (where the t formula is inf - inf)."""
    z, df, scale = shape_standardized("t.logpdf", x, df, loc, scale)
    finite = tnp.isfinite(df)
    nu = tnp.where(finite, df, 1)  # the unused branch stays finite, for the gradient
    norm = sp.gammaln((nu + 1) / 2) - sp.gammaln(nu / 2) - 0.5 * tnp.log(nu * math.pi)
    student = norm - (nu + 1) / 2 * tnp.log1p(z * z / nu)
    normal = -0.5 * z * z - 0.5 * math.log(2 * math.pi)
    return tnp.where(finite, student, normal) - tnp.log(scale)


@as_shape1
def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, df, loc, scale))


def _tail(z: AnyTensor, df: AnyTensor) -> AnyTensor:
    """P(T > z) for z >= 0 and P(T < z) below: half the incomplete beta function, no cancellation in the tail;
    the normal's ``ndtr(-|z|)`` for ``df = inf``."""
    finite = tnp.isfinite(df)
    nu = tnp.where(finite, df, 1)
    student = 0.5 * sp.betainc(nu / 2, tnp.full_like(nu, 0.5), nu / (nu + z * z))
    return defined(tnp.where(finite, student, sp.ndtr(-tnp.abs(z))), z)


@as_shape1
def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, df, _ = shape_standardized("t.cdf", x, df, loc, scale)
    tail = _tail(z, df)
    return tnp.where(z > 0, 1 - tail, tail)


@as_shape1
def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, df, _ = shape_standardized("t.sf", x, df, loc, scale)
    tail = _tail(z, df)
    return tnp.where(z > 0, tail, 1 - tail)
