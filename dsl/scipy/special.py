"""``tensorstage.scipy.special`` (implemented in ``tensorstage.prelude.scipy.special``), importable as a module
(``from tensorstage.scipy.special import ...``)."""

from ..prelude.scipy.special import *  # noqa: F403
# mypy does not follow ``__all__ += module.__all__`` into a star import: these modules' names directly
from ..prelude.scipy.special_more import *  # noqa: F403
from ..prelude.scipy.special_hyper import *  # noqa: F403
from ..prelude.scipy.special_inverse import *  # noqa: F403
from ..prelude.scipy.special_hyp2f1 import *  # noqa: F403
from ..prelude.scipy.special_complex import *  # noqa: F403
from ..prelude.scipy.special import __all__ as __all__
