"""``tensorstage.scipy.stats.vonmises``: the von Mises (circular normal) distribution with concentration ``kappa``
>= 0, as SciPy's on the whole real line (the density is 2π-periodic in ``x``); a finite ``kappa`` is required (SciPy:
NaN at inf). SciPy's ``loc`` and ``scale`` are accepted (JAX's take only ``x`` and ``kappa``)."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as tnp
from .. import special as sp
from ._common import AnyTensor, as_shape1, defined, floats, standardized

__all__ = ["logpdf", "pdf"]


@as_shape1
def logpdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    """``kappa (cos z - 1) - log(2π i0e(kappa))``: the exponentially scaled Bessel function keeps a large ``kappa``
    finite, and ``cos z - 1 = -2 sin²(z/2)`` keeps the peak accurate."""
    x, kappa, loc, scale = floats("vonmises.logpdf", x, kappa, loc, scale)
    z, scale = standardized("vonmises.logpdf", x, loc, scale)
    valid = (kappa >= 0) & (kappa < math.inf)
    safe = tnp.where(valid, kappa, 1.0)
    half_sine = tnp.sin(0.5 * z)
    out = -2 * safe * half_sine * half_sine - math.log(2 * math.pi) - tnp.log(sp.i0e(safe)) - tnp.log(scale)
    return defined(out, z, valid)


@as_shape1
def pdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return tnp.exp(logpdf(x, kappa, loc, scale))
