"""``tensorstage.scipy`` (implemented in ``tensorstage.prelude.scipy``): special functions, distributions, linalg,
signal processing, interpolation, integration and optimization. A package, so JAX's imports work as they are:
``from tensorstage.scipy.special import logsumexp``, ``import tensorstage.scipy.stats``."""

from . import fft, integrate, interpolate, linalg, ndimage, optimize, signal, special, stats

__all__ = ["fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "special", "stats"]
