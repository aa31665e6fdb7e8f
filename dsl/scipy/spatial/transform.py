"""``tensorstage.scipy.spatial.transform`` (implemented in ``tensorstage.prelude.scipy.spatial_transform``),
importable as a module (``from tensorstage.scipy.spatial.transform import Rotation``)."""

from ...prelude.scipy.spatial_transform import *  # noqa: F403
from ...prelude.scipy.spatial_transform import __all__ as __all__
