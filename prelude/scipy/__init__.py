"""``tensorstage.scipy``: SciPy-compatible special functions, distributions and linear algebra, as ``jax.scipy``."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
