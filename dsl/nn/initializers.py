"""``tensorstage.nn.initializers`` (implemented in ``tensorstage.prelude.nn.initializers``), importable as a module
(``from tensorstage.nn.initializers import ...``, as JAX's)."""

from ..prelude.nn.initializers import *  # noqa: F403
from ..prelude.nn.initializers import __all__ as __all__
