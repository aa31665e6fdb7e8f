"""``tensorstage.scipy.sparse.linalg`` (implemented in ``tensorstage.prelude.scipy.sparse_linalg``), importable as a
module (``from tensorstage.scipy.sparse.linalg import cg``)."""

from ...prelude.scipy.sparse_linalg import *  # noqa: F403
from ...prelude.scipy.sparse_linalg import __all__ as __all__
