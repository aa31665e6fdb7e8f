"""``tensorstage.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, floats

__all__ = ["logpdf", "pdf"]


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
