"""``tensorstage.scipy.integrate`` (implemented in ``tensorstage.prelude.scipy.integrate``), importable as a module
(``from tensorstage.scipy.integrate import ...``)."""

from ..prelude.scipy.integrate import *  # noqa: F403
from ..prelude.scipy.integrate import __all__ as __all__
