"""``tensorstage.numpy.fft`` (implemented in ``tensorstage.prelude.numpy.fft``), importable as a module
(``from tensorstage.numpy.fft import ...``, as JAX's)."""

from ..prelude.numpy.fft import *  # noqa: F403
from ..prelude.numpy.fft import __all__ as __all__
