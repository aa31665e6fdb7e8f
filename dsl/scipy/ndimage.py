"""``tensorstage.scipy.ndimage`` (implemented in ``tensorstage.prelude.scipy.ndimage``), importable as a module
(``from tensorstage.scipy.ndimage import ...``)."""

from ..prelude.scipy.ndimage import *  # noqa: F403
from ..prelude.scipy.ndimage import __all__ as __all__
