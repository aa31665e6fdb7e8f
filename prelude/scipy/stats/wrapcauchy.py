"""``tensorstage.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on [0, 2π] with shape 0 < ``c`` < 1 (the
density is 0 outside). SciPy's ``loc`` and ``scale`` are accepted (JAX's take only ``x`` and ``c``)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from ._common import AnyTensor, as_shape1, defined, floats, standardized

__all__ = ["logpdf", "pdf"]


@as_shape1
def logpdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """``log((1 - c²) / (2π (1 + c² - 2c cos z)))``, the denominator as ``(1 - c)² + 4c sin²(z/2)`` (no
    cancellation near z = 0 for c near 1)."""
    x, c, loc, scale = floats("wrapcauchy.logpdf", x, c, loc, scale)
    z, scale = standardized("wrapcauchy.logpdf", x, loc, scale)
    valid = (c > 0) & (c < 1)
    safe_c = tnp.where(valid, c, 0.5)
    inside = (z >= 0) & (z <= 2 * math.pi)
    half_sine = tnp.sin(0.5 * tnp.where(inside, z, 1.0))
    denominator = (1 - safe_c) ** 2 + 4 * safe_c * half_sine * half_sine
    out = tnp.log1p(-safe_c * safe_c) - math.log(2 * math.pi) - tnp.log(denominator) - tnp.log(scale)
    return defined(tnp.where(inside, out, -math.inf), z, valid)


@as_shape1
def pdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, c, loc, scale))
