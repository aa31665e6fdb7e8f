"""``tensorstage.scipy``: SciPy-compatible special functions, distributions, linear algebra, signal processing,
interpolation, integration and optimization, as ``jax.scipy``."""

from . import fft, integrate, interpolate, linalg, ndimage, optimize, signal, special, stats

__all__ = ["fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "special", "stats"]
