"""``tensorstage.numpy.linalg`` (implemented in ``tensorstage.prelude.numpy.linalg_namespace``), importable as a module
(``from tensorstage.numpy.linalg import ...``, as JAX's)."""

from ..prelude.numpy.linalg_namespace import *  # noqa: F403
from ..prelude.numpy.linalg_namespace import __all__ as __all__
