"""``tensorstage.scipy.linalg`` (implemented in ``tensorstage.prelude.scipy.linalg``), importable as a module
(``from tensorstage.scipy.linalg import ...``)."""

from ..prelude.scipy.linalg import *  # noqa: F403
from ..prelude.scipy.linalg import __all__ as __all__
