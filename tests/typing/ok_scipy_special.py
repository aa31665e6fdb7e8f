"""ts.scipy.special and ts.scipy.stats keep dtypes and dims: a Gaussian mixture's log-likelihood and friends."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64
from tensorstage import numpy as tnp
from tensorstage.scipy import special, stats
from tensorstage.scipy.special import logsumexp  # JAX's import style: tensorstage.scipy is a package


class Batch(Dim): ...
class Comp(Dim): ...
class Feat(Dim): ...


DIMS = dict(Batch=4, Comp=3, Feat=2)


@ts.program
def mixture_loglik(x: Tensor[f32, Batch], mu: Tensor[f32, Comp], log_w: Tensor[f32, Comp]) -> Tensor[f32, Batch]:
    per_comp: Tensor[f32, Batch, Comp] = stats.norm.logpdf(x[:, None], mu[None, :], 1.5) + log_w
    total: Tensor[f32, Batch] = logsumexp(per_comp, axis=1)
    return total


@ts.program
def special_values(a_raw: Tensor[f64, Batch], x_raw: Tensor[f64, Batch]) -> Tensor[f64, Batch]:
    a = tnp.abs(a_raw) + 1.0  # positive shapes and points: finite results for any inputs
    x = tnp.abs(x_raw) + 0.5
    lg: Tensor[f64, Batch] = special.gammaln(a)
    p: Tensor[f64, Batch] = special.gammainc(a, x)
    q: Tensor[f64, Batch] = special.ndtri(special.expit(x))
    d: Tensor[f64, Batch] = special.digamma(a) + special.xlogy(a, x) + special.zeta(a + 2.0, 1.0)
    cdf: Tensor[f64, Batch] = stats.gamma.cdf(x, a) + stats.poisson.logpmf(tnp.floor(x), a) + stats.t.logpdf(x, a)
    return lg + p + q + d + cdf + special.i0e(x) + special.multigammaln(a + 2.0, 2)


@ts.program
def mvn(x: Tensor[f64, Batch, Feat], mean: Tensor[f64, Feat], m: Tensor[f64, Feat, Feat]) -> Tensor[f64, Batch]:
    cov = m @ m.T + 2.0 * tnp.eye(2, dtype=f64)  # positive definite for any m
    logp: Tensor[f64, Batch] = stats.multivariate_normal.logpdf(x, mean, cov)
    probs: Tensor[f64, Batch, Feat] = special.softmax(x, axis=1)
    return logp + tnp.sum(probs, axis=1)
