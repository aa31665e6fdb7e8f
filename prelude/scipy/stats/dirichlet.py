"""``tensorstage.scipy.stats.dirichlet``: the Dirichlet distribution over the simplex, concentrations ``alpha``
``(K,)`` and points ``x`` ``(..., K)`` (SciPy takes ``x`` as ``(K, ...)``; JAX and tensorstage put the simplex axis
last). Points off the simplex (a negative coordinate, or coordinates whose sum is not 1 within ``8 K eps``) have
log-density -inf."""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ....dtypes import Floating
from ....tensor import Tensor
from ... import numpy as tnp
from ...numpy._core import op
from ...numpy.mathfuncs import _finfo
from .. import special as sp
from ._common import floats

__all__ = ["logpdf", "pdf"]

FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
K = TypeVar("K")


def _checked(x: Any, alpha: Any) -> tuple[Any, Any]:
    x, alpha = tnp.asarray(x), tnp.asarray(alpha)
    if alpha.ndim != 1 or x.ndim < 1 or x.shape[-1] != alpha.shape[0]:
        raise ValueError(f"dirichlet: alpha must be (K,) and x (..., K), got x {x.shape} and alpha {alpha.shape}")
    (x_b, alpha_b) = floats("dirichlet.logpdf", x, alpha)
    return x_b, alpha_b


@op
def logpdf(x: Tensor[FT, Unpack[S], K], alpha: Tensor[FT, K]) -> Tensor[FT, Unpack[S]]:
    x, alpha = _checked(x, alpha)
    k = alpha.shape[-1]
    log_norm = tnp.sum(sp.gammaln(alpha), axis=-1) - sp.gammaln(tnp.sum(alpha, axis=-1))
    tolerance = 8 * k * float(_finfo(np.dtype(x.dtype)).eps)
    on_simplex = tnp.all(x >= 0, axis=-1) & (tnp.abs(tnp.sum(x, axis=-1) - 1) <= tolerance)
    log_density = tnp.sum(sp.xlogy(alpha - 1, x), axis=-1) - log_norm
    return tnp.where(on_simplex, log_density, -math.inf)


@op
def pdf(x: Tensor[FT, Unpack[S], K], alpha: Tensor[FT, K]) -> Tensor[FT, Unpack[S]]:
    return tnp.exp(logpdf(x, alpha))
