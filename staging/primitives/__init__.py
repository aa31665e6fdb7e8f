"""Every primitive, grouped by family; importing this package registers them all."""

from . import elementwise, linalg, reductions, structural
from . import complex_parts  # real, imag, conj, complex
from . import autodiff  # after the families its rules build on
from . import sorting
from . import gather_scatter, slicing
from . import control_flow  # after the families its rules build on
from . import collectives
from . import decompositions  # cholesky, triangular_solve, qr, eigh
from . import svd  # after decompositions, whose helpers it uses
from . import convolution  # conv_general_dilated
from . import remat  # checkpoint_call, optimization_barrier
from . import fft  # after complex_parts, whose rules it uses
from . import eig  # after complex_parts and decompositions, whose helpers it uses
from . import lu  # after decompositions, whose helpers it uses
from . import special  # lgamma, digamma, ...
from . import schur  # after eig, whose helpers it may use
from . import linear_solve  # custom_linear_solve and custom_root
from . import callback  # pure_callback, io_callback
from . import rng_bits  # rng_bit_generator
from . import check  # checkify's runtime assertions
from . import exported_call  # calls of exported programs (ts.export)
from . import sharding_constraint  # with_sharding_constraint
from . import custom_vmap  # functions with a user-defined batching rule

__all__ = ["autodiff", "callback", "collectives", "complex_parts", "control_flow", "convolution", "decompositions", "eig", "elementwise", "fft", "linalg", "linear_solve", "lu", "gather_scatter", "reductions", "remat", "schur", "slicing", "sorting", "special", "structural", "svd"]
