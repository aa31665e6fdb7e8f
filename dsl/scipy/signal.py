"""``tensorstage.scipy.signal`` (implemented in ``tensorstage.prelude.scipy.signal``), importable as a module
(``from tensorstage.scipy.signal import ...``)."""

from ..prelude.scipy.signal import *  # noqa: F403
from ..prelude.scipy.signal import __all__ as __all__
