"""``tensorstage.scipy.stats``: one module per distribution, as ``jax.scipy.stats`` (``norm.logpdf(x, loc, scale)``,
...), with SciPy's ``loc``/``scale`` defaults and values; out of the support a log-density is -inf and a density 0.

Deliberate differences from SciPy (as JAX): only the functions listed in each module (``beta`` has no CDF, ``t``
only its density); ``dirichlet`` puts the simplex axis last; ``multivariate_normal`` gives NaN for a covariance that
is not positive definite instead of raising; integer ``k`` of ``poisson``/``bernoulli`` is converted to the
parameter's float dtype (elsewhere dtypes never change).
"""

from __future__ import annotations

from . import bernoulli, beta, cauchy, chi2, dirichlet, expon, gamma, laplace, logistic, multivariate_normal, norm
from . import poisson, t, uniform

__all__ = [
    "bernoulli", "beta", "cauchy", "chi2", "dirichlet", "expon", "gamma", "laplace", "logistic",
    "multivariate_normal", "norm", "poisson", "t", "uniform",
]
