"""``tensorstage.scipy.cluster.vq`` (implemented in ``tensorstage.prelude.scipy.cluster_vq``), importable as a
module (``from tensorstage.scipy.cluster.vq import vq``)."""

from ...prelude.scipy.cluster_vq import *  # noqa: F403
from ...prelude.scipy.cluster_vq import __all__ as __all__
