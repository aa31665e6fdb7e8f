"""``tensorstage.image`` (implemented in ``tensorstage.prelude.image``): image resizing, as ``jax.image``."""

from .prelude.image import *  # noqa: F403
from .prelude.image import __all__ as __all__
