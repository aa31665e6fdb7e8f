"""``tensorstage.random``: counter-based pseudo-random numbers (Threefry-2x32) built from u32 primitives.

Keys are values: ``key = ts.random.key(0)``; ``k1, k2 = ts.random.split(key)``; ``ts.random.normal(k1, (3, 4))``.
The same key gives the same numbers inside and outside programs and on every run; float32 draws match JAX's
(``jax_threefry_partitionable`` layout) bit for bit.
"""

from ._distributions import bernoulli, categorical, normal, randint, uniform
from ._keys import Key, bits, fold_in, key, split
from ._permutation import permutation

__all__ = [
    "Key", "bernoulli", "bits", "categorical", "fold_in", "key", "normal", "permutation", "randint", "split",
    "uniform",
]
