"""``tensorstage.random`` (implemented in ``tensorstage.prelude.random``)."""

from .prelude.random import *  # noqa: F403
from .prelude.random import __all__ as __all__
