"""``tensorstage.numpy``: the NumPy-compatible op library (implemented in ``tensorstage.prelude.numpy``). A package:
``from tensorstage.numpy.linalg import norm`` works as JAX's import."""

from ..prelude import numpy as _prelude_numpy
from ..prelude.numpy import *  # noqa: F403
# mypy does not follow the package's ``__all__ += module.__all__`` into a star import: these modules' names directly
from ..prelude.numpy.bit_packing import *  # noqa: F403
from ..prelude.numpy.complex_sorting import *  # noqa: F403
from ..prelude.numpy.einsum_planning import *  # noqa: F403
from ..prelude.numpy.extremes import *  # noqa: F403
from ..prelude.numpy.flat_updates import *  # noqa: F403
from ..prelude.numpy.float_math import *  # noqa: F403
from ..prelude.numpy.host_io import *  # noqa: F403
from ..prelude.numpy.index_tools import *  # noqa: F403
from ..prelude.numpy.masked_indices import *  # noqa: F403
from ..prelude.numpy.names import *  # noqa: F403
from ..prelude.numpy.polynomials import *  # noqa: F403
from ..prelude.numpy.printing import *  # noqa: F403
from ..prelude.numpy.python_ufuncs import *  # noqa: F403
from ..prelude.numpy.sampled_calculus import *  # noqa: F403
from ..prelude.numpy.signal_tools import *  # noqa: F403
from ..prelude.numpy.type_names import *  # noqa: F403
from ..prelude.numpy.vectorizing import *  # noqa: F403
from . import fft, linalg  # tnp.fft (fft, ifft, rfft, ..., fftshift), tnp.linalg (cholesky, qr, solve, norm, ...)

__all__ = ["fft", "linalg"]
__all__ += _prelude_numpy.__all__
