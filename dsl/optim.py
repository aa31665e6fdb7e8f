"""``tensorstage.optim`` (implemented in ``tensorstage.prelude.optim``)."""

from .prelude.optim import *  # noqa: F403
from .prelude.optim import __all__ as __all__
