"""``tensorstage.scipy.interpolate`` (implemented in ``tensorstage.prelude.scipy.interpolate``), importable as a module
(``from tensorstage.scipy.interpolate import ...``)."""

from ..prelude.scipy.interpolate import *  # noqa: F403
from ..prelude.scipy.interpolate import __all__ as __all__
