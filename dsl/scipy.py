"""``tensorstage.scipy`` (implemented in ``tensorstage.prelude.scipy``): special functions, distributions, linalg,
signal processing, interpolation, integration and optimization."""

from .prelude.scipy import fft, integrate, interpolate, linalg, ndimage, optimize, signal, special, stats

__all__ = ["fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "special", "stats"]
