"""``tensorstage.scipy`` (implemented in ``tensorstage.prelude.scipy``): special functions, distributions, linalg."""

from .prelude.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
