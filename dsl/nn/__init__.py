"""``tensorstage.nn`` (implemented in ``tensorstage.prelude.nn``). A package: ``from tensorstage.nn.initializers
import glorot_normal`` works as JAX's import (``nn/initializers.py`` re-exports prelude's module)."""

from ..prelude.nn import *  # noqa: F403
from ..prelude.nn import __all__ as __all__
