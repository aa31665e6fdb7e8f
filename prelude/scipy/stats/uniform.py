"""``tensorstage.scipy.stats.uniform``: uniform on ``[loc, loc + scale]``."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_loc_scale, floats

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, loc, scale = floats("uniform.logpdf", x, loc, scale)
    z = (x - loc) / scale  # (SciPy's test: ``x <= loc + scale`` can round the other way)
    inside = (z >= 0) & (z <= 1)
    return tnp.where(inside, -tnp.log(scale), -math.inf)


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    x, loc, scale = floats("uniform.cdf", x, loc, scale)
    return tnp.clip((x - loc) / scale, 0, 1)


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    q, loc, scale = floats("uniform.ppf", q, loc, scale)
    return tnp.where((q >= 0) & (q <= 1), loc + q * scale, math.nan)
