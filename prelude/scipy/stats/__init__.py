"""``tensorstage.scipy.stats``: one module per distribution, as ``jax.scipy.stats`` (``norm.logpdf(x, loc, scale)``,
...), with SciPy's ``loc``/``scale`` defaults and values; out of the support a log-density is -inf and a density 0.

Deliberate differences from SciPy (as JAX): only the functions listed in each module (``beta`` and ``t`` have no
quantiles; ``binom``, ``nbinom``, ``geom`` and ``t`` have CDFs, which JAX's lack); ``dirichlet`` puts the simplex axis
last; ``multivariate_normal`` gives NaN for a covariance that is not positive definite instead of raising; integer
``k`` of the discrete distributions is converted to the parameter's float dtype (elsewhere dtypes never change).
Infinite shape parameters give NaN at a few points where SciPy takes a limit (``beta``'s functions with ``a = b =
inf``, ``beta.pdf(0, 0.5, inf)``, ``pareto.ppf(1, inf)``), and ``chi2.logpdf(1, inf)`` is -inf (SciPy: NaN). As SciPy, a NaN operand, an invalid
parameter or a quantile's ``q`` outside [0, 1] gives NaN (``_common.defined``).
"""

from __future__ import annotations

from . import bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom, gumbel_l
from . import gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t
from . import truncnorm, uniform, vonmises, wrapcauchy
from ._kde import gaussian_kde
from ._summary import ModeResult, mode, rankdata, sem

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm", "geom",
    "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
    "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
    "ModeResult", "gaussian_kde", "mode", "rankdata", "sem",
]
