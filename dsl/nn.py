"""``tensorstage.nn`` (implemented in ``tensorstage.prelude.nn``)."""

from .prelude.nn import *  # noqa: F403
from .prelude.nn import __all__ as __all__
