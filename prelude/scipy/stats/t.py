"""``tensorstage.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom. The CDF (which
``jax.scipy.stats.t`` lacks) is ``I_{df/(df+z²)}(df/2, 1/2) / 2`` in the lower tail, by symmetry above."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, floats

__all__ = ["cdf", "logpdf", "pdf", "sf"]


@as_shape1
def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, df, loc, scale = floats("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    norm = sp.gammaln((df + 1) / 2) - sp.gammaln(df / 2) - 0.5 * tnp.log(df * math.pi) - tnp.log(scale)
    out: AnyTensor = norm - (df + 1) / 2 * tnp.log1p(z * z / df)
    return out


@as_shape1
def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, df, loc, scale))


def _tail(z: AnyTensor, df: AnyTensor) -> AnyTensor:
    """P(T > z) for z >= 0 and P(T < z) below: half the incomplete beta function, no cancellation in the tail."""
    return 0.5 * sp.betainc(df / 2, tnp.full_like(df, 0.5), df / (df + z * z))


@as_shape1
def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, df, loc, scale = floats("t.cdf", x, df, loc, scale)
    z = (x - loc) / scale
    tail = _tail(z, df)
    return tnp.where(z > 0, 1 - tail, tail)


@as_shape1
def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, df, loc, scale = floats("t.sf", x, df, loc, scale)
    z = (x - loc) / scale
    tail = _tail(z, df)
    return tnp.where(z > 0, tail, 1 - tail)
