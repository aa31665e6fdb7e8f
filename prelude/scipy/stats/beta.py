"""``tensorstage.scipy.stats.beta``: the beta distribution on ``[loc, loc + scale]`` (density only: the CDF needs
the regularized incomplete beta function, not implemented)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape2, floats

__all__ = ["logpdf", "pdf"]


@as_shape2
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, a, b, loc, scale = floats("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    safe = tnp.where(inside, y, 0.5)
    log_density = sp.xlogy(a - 1, safe) + sp.xlog1py(b - 1, -safe) - sp.betaln(a, b) - tnp.log(scale)
    return tnp.where(inside, log_density, -math.inf)


@as_shape2
def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, a, b, loc, scale))
