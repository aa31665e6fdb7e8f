"""``tensorstage.scipy.stats.multivariate_normal``: the normal distribution in ``K`` dimensions, ``x`` ``(..., K)``,
``mean`` ``(K,)`` (or broadcasting against ``x``), ``cov`` ``(K, K)`` positive definite, through its Cholesky factor
(a ``cov`` that is not positive definite gives NaN, where SciPy raises; ``allow_singular`` is not supported)."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ....dtypes import Floating
from ....tensor import Tensor
from ... import numpy as tnp
from ...numpy._core import op
from ...numpy.linalg_decompositions import cholesky, solve_triangular
from ._common import floats

__all__ = ["logpdf", "pdf"]

FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
K = TypeVar("K")


@op
def logpdf(
    x: Tensor[FT, Unpack[S], K], mean: Tensor[FT, K] | Tensor[FT, Unpack[S], K], cov: Tensor[FT, K, K],
    allow_singular: bool = False,
) -> Tensor[FT, Unpack[S]]:
    if allow_singular:
        raise ValueError("multivariate_normal.logpdf: allow_singular=True is not supported (as in JAX)")
    cov = tnp.asarray(cov)
    points, mu = floats("multivariate_normal.logpdf", x, mean)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or points.ndim < 1 or points.shape[-1] != cov.shape[0]:
        raise ValueError(
            f"multivariate_normal.logpdf: cov must be (K, K) with x (..., K), got x {points.shape} and cov {cov.shape}"
        )
    k = cov.shape[0]
    factor = cholesky(cov)
    centered = points - mu
    batch = centered.shape[:-1]
    columns = tnp.reshape(centered, (-1, k)).T  # one right-hand side per point: (K, points)
    whitened = solve_triangular(factor, columns, lower=True)
    maha = tnp.reshape(tnp.sum(whitened * whitened, axis=0), batch)
    half_log_det = tnp.sum(tnp.log(tnp.diagonal(factor)))
    return -0.5 * maha - half_log_det - 0.5 * k * math.log(2 * math.pi)


@op
def pdf(
    x: Tensor[FT, Unpack[S], K], mean: Tensor[FT, K] | Tensor[FT, Unpack[S], K], cov: Tensor[FT, K, K],
    allow_singular: bool = False,
) -> Tensor[FT, Unpack[S]]:
    return tnp.exp(logpdf(x, mean, cov, allow_singular))
