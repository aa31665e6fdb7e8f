"""``tensorstage.lax``: JAX's ``jax.lax`` on tensorstage's primitives. Strict where ``tensorstage.numpy`` is
lenient: no dtype promotion, no broadcasting but of rank-0 operands, XLA's semantics (integer ``div`` toward zero,
``rem`` with the dividend's sign, ``round`` away from zero). Control flow, collectives and ``stop_gradient`` are
the ``tensorstage`` ones under their ``lax`` names."""

from ...custom_derivatives import stop_gradient
from ...collectives import all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, pshuffle, psum
from ...collectives import psum_scatter, pswapaxes
from ...control_flow import cond, fori_loop, scan, switch, while_loop
from . import convolution, convolution_more, elementwise, extras, gather_scatter, implicit, linalg, padding
from . import reductions, scans, structural, windows
from . import convolution_local, fourier, indexed, integer_math, ragged, random_bits, settings, staging_tools
from .convolution import *  # noqa: F403
from .convolution_local import *  # noqa: F403
from .convolution_more import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .extras import *  # noqa: F403
from .fourier import *  # noqa: F403
from .gather_scatter import *  # noqa: F403
from .implicit import *  # noqa: F403
from .indexed import *  # noqa: F403
from .integer_math import *  # noqa: F403
from .padding import *  # noqa: F403
from .ragged import *  # noqa: F403
from .random_bits import *  # noqa: F403
from .reductions import *  # noqa: F403
from .scans import *  # noqa: F403
from .settings import *  # noqa: F403
from .staging_tools import *  # noqa: F403
from .structural import *  # noqa: F403
from .windows import *  # noqa: F403

__all__ = [
    "all_gather", "all_to_all", "axis_index", "cond", "fori_loop", "pmax", "pmean", "pmin", "ppermute", "pshuffle",
    "psum", "psum_scatter", "pswapaxes", "scan",
    "linalg", "stop_gradient", "switch", "while_loop",
]
for _module in (convolution, convolution_more, elementwise, extras, gather_scatter, implicit, padding, reductions, scans,
                structural, windows, convolution_local, fourier, indexed, integer_math, ragged, random_bits, settings,
                staging_tools):
    __all__ += _module.__all__
