"""``tensorstage.lax.linalg`` (implemented in ``tensorstage.prelude.lax.linalg``), importable as a module
(``from tensorstage.lax.linalg import ...``, as JAX's)."""

from ..prelude.lax.linalg import *  # noqa: F403
from ..prelude.lax.linalg import __all__ as __all__
