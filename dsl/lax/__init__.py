"""``tensorstage.lax`` (implemented in ``tensorstage.prelude.lax``): JAX's ``jax.lax`` names, strict typing. A package:
``from tensorstage.lax.linalg import cholesky`` works as JAX's import."""

from ..prelude.lax import *  # noqa: F403
# mypy does not follow the package's ``__all__ += module.__all__`` into a star import: these modules' names directly
from ..prelude.lax.convolution import *  # noqa: F403
from ..prelude.lax.convolution_local import *  # noqa: F403
from ..prelude.lax.convolution_more import *  # noqa: F403
from ..prelude.lax.elementwise import *  # noqa: F403
from ..prelude.lax.extras import *  # noqa: F403
from ..prelude.lax.fourier import *  # noqa: F403
from ..prelude.lax.gather_scatter import *  # noqa: F403
from ..prelude.lax.implicit import *  # noqa: F403
from ..prelude.lax.indexed import *  # noqa: F403
from ..prelude.lax.integer_math import *  # noqa: F403
from ..prelude.lax.padding import *  # noqa: F403
from ..prelude.lax.ragged import *  # noqa: F403
from ..prelude.lax.random_bits import *  # noqa: F403
from ..prelude.lax.reductions import *  # noqa: F403
from ..prelude.lax.scans import *  # noqa: F403
from ..prelude.lax.settings import *  # noqa: F403
from ..prelude.lax.staging_tools import *  # noqa: F403
from ..prelude.lax.structural import *  # noqa: F403
from ..prelude.lax.windows import *  # noqa: F403
from ..prelude.lax import __all__ as __all__
from ..prelude.lax import linalg as linalg  # (lax/linalg.py re-exports it as an importable module)
