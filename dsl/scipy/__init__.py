"""``tensorstage.scipy`` (implemented in ``tensorstage.prelude.scipy``): special functions, distributions, linalg,
signal processing, interpolation, integration, optimization, Krylov solvers (``sparse.linalg``), rotations
(``spatial.transform``) and vector quantization (``cluster.vq``). A package, so JAX's imports work as they are:
``from tensorstage.scipy.special import logsumexp``, ``import tensorstage.scipy.stats``."""

from . import cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, spatial, special, stats

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse", "spatial",
           "special", "stats"]
