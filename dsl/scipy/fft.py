"""``tensorstage.scipy.fft`` (implemented in ``tensorstage.prelude.scipy.fft``), importable as a module
(``from tensorstage.scipy.fft import ...``)."""

from ..prelude.scipy.fft import *  # noqa: F403
from ..prelude.scipy.fft import __all__ as __all__
