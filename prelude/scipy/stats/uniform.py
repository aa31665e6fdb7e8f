"""``tensorstage.scipy.stats.uniform``: uniform on ``[loc, loc + scale]``."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, defined, quantile, standardized

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, scale = standardized("uniform.logpdf", x, loc, scale)  # (SciPy's ``x <= loc + scale`` can round otherwise)
    return defined(tnp.where((z >= 0) & (z <= 1), -tnp.log(scale), -math.inf), z)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    z, _ = standardized("uniform.cdf", x, loc, scale)
    return defined(tnp.clip(z, 0, 1), z)


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("uniform.ppf", lambda p: p, q, loc, scale)
