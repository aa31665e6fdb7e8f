"""``tensorstage.random``: counter-based pseudo-random numbers (Threefry-2x32) built from u32 primitives.

Keys are values: ``key = ts.random.key(0)``; ``k1, k2 = ts.random.split(key)``; ``ts.random.normal(k1, (3, 4))``.
The same key gives the same numbers inside and outside programs and on every run; float32 draws match JAX's
(``jax_threefry_partitionable`` layout) bit for bit for uniform, normal, randint, bernoulli, exponential, laplace,
logistic, gumbel, truncated_normal, geometric, rademacher and choice (with replacement, no ``p``).
Rejection samplers (gamma and its family, poisson) use bounded vectorized ``while_loop``s: same distributions as
JAX, different draws.
"""

from ._continuous import (
    beta, cauchy, chisquare, dirichlet, exponential, gamma, gumbel, laplace, logistic, multivariate_normal, t,
    truncated_normal,
)
from ._discrete import choice, geometric, orthogonal, poisson, rademacher, shuffle
from ._distributions import bernoulli, categorical, normal, randint, uniform
from ._keys import Key, bits, fold_in, key, split
from ._permutation import permutation

__all__ = [
    "Key", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare", "choice", "dirichlet", "exponential",
    "fold_in", "gamma", "geometric", "gumbel", "key", "laplace", "logistic", "multivariate_normal", "normal",
    "orthogonal", "permutation", "poisson", "rademacher", "randint", "shuffle", "split", "t", "truncated_normal",
    "uniform",
]
