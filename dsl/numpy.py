"""``tensorstage.numpy``: the NumPy-compatible op library (implemented in ``tensorstage.prelude.numpy``)."""

from .prelude.numpy import *  # noqa: F403
from .prelude.numpy import __all__ as __all__
