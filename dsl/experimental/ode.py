"""``tensorstage.experimental.ode`` (implemented in ``tensorstage.prelude.experimental.ode``): ``odeint``, importable
as a module (``from tensorstage.experimental.ode import odeint``)."""

from ..prelude.experimental.ode import *  # noqa: F403
from ..prelude.experimental.ode import __all__ as __all__
