"""``tensorstage.numpy``: the NumPy-compatible op library (implemented in ``tensorstage.prelude.numpy``)."""

from .prelude import numpy as _prelude_numpy
from .prelude.numpy import *  # noqa: F403
from .prelude.numpy import linalg_namespace as linalg  # tnp.linalg: cholesky, qr, eigh, solve, det, norm, ...

__all__ = ["linalg"]
__all__ += _prelude_numpy.__all__
