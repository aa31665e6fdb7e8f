"""``tensorstage.random``: counter-based pseudo-random numbers (Threefry-2x32) built from u32 primitives.

Keys are values: ``key = ts.random.key(0)``; ``k1, k2 = ts.random.split(key)``; ``ts.random.normal(k1, (3, 4))``.
A key is its own raw key data (``u32[2]``, as ``jax.random.PRNGKey`` gives): ``PRNGKey``, ``key_data``,
``wrap_key_data`` and ``clone`` exist under JAX's names and pass keys through.
The same key gives the same numbers inside and outside programs and on every run; float32 draws match JAX's
(``jax_threefry_partitionable`` layout) bit for bit for uniform, normal, randint, bernoulli, exponential, laplace,
logistic, gumbel, truncated_normal, geometric, rademacher, choice (with replacement, no ``p``), lognormal, pareto,
rayleigh, maxwell, double_sided_maxwell, weibull_min, wald, triangular, and binomial where
``n * min(p, 1 - p) <= 10``.
Rejection samplers (gamma and its family, poisson, binomial's BTRS regime) use bounded vectorized
``while_loop``s: same distributions as JAX, different draws.
"""

from ._binomial import binomial, multinomial
from ._continuous import (
    beta, cauchy, chisquare, dirichlet, exponential, gamma, gumbel, laplace, logistic, multivariate_normal, t,
    truncated_normal,
)
from ._discrete import choice, geometric, orthogonal, poisson, rademacher, shuffle
from ._distributions import bernoulli, categorical, normal, randint, uniform
from ._gamma_derived import ball, f, generalized_normal, loggamma
from ._keys import Key, PRNGKey, bits, clone, fold_in, key, key_data, split, wrap_key_data
from ._permutation import permutation
from ._transformed import (
    double_sided_maxwell, lognormal, maxwell, pareto, rayleigh, triangular, wald, weibull_min,
)

__all__ = [
    "Key", "PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare",
    "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma",
    "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace", "logistic", "loggamma", "lognormal",
    "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson",
    "rademacher", "randint", "rayleigh", "shuffle", "split", "t", "triangular", "truncated_normal", "uniform",
    "wald", "weibull_min", "wrap_key_data",
]
