"""``tensorstage.scipy``: SciPy-compatible special functions, distributions, linear algebra, signal processing,
interpolation, integration, optimization, Krylov solvers, rotations and vector quantization, as ``jax.scipy``.
``sparse_linalg``, ``spatial_transform`` and ``cluster_vq`` (the public ``sparse.linalg``, ``spatial.transform`` and
``cluster.vq``) are not imported here: they import ``prelude.lax`` and ``prelude.random``, which import this package,
so ``tensorstage.scipy`` imports them once those are loaded."""

from . import fft, integrate, interpolate, linalg, ndimage, optimize, signal, special, stats

__all__ = ["fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "special", "stats"]
