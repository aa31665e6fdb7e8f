"""``tensorstage.scipy.stats`` (implemented in ``tensorstage.prelude.scipy.stats``), importable as a module
(``from tensorstage.scipy.stats import ...``)."""

from ..prelude.scipy.stats import *  # noqa: F403
from ..prelude.scipy.stats import __all__ as __all__
