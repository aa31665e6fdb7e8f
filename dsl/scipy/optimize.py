"""``tensorstage.scipy.optimize`` (implemented in ``tensorstage.prelude.scipy.optimize``), importable as a module
(``from tensorstage.scipy.optimize import ...``)."""

from ..prelude.scipy.optimize import *  # noqa: F403
from ..prelude.scipy.optimize import __all__ as __all__
