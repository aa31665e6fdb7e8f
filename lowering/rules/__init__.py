"""One lowering module per primitive family; importing this package registers them all."""

from . import elementwise, linalg, reductions, structural
from . import complex_parts
from . import autodiff  # after the families its rules build on
from . import sorting
from . import gather_scatter, slicing
from . import control_flow
from . import collectives
from . import decompositions  # cholesky, triangular_solve, qr, eigh
from . import svd
from . import convolution
from . import remat
from . import fft
from . import eig
from . import lu
from . import special
from . import schur
from . import linear_solve  # custom_linear_solve and custom_root
from . import callback  # pure_callback, io_callback
from . import rng_bits  # rng_bit_generator
from . import check  # checkify's check: refused when it reaches lowering
from . import exported_call  # calls of exported programs: a func.call of the embedded module
from . import sharding_constraint  # @Sharding custom calls in partitioned programs
from . import custom_vmap  # its function inlined

__all__ = ["autodiff", "callback", "collectives", "complex_parts", "control_flow", "convolution", "decompositions", "eig", "elementwise", "fft", "linalg", "linear_solve", "lu", "gather_scatter", "reductions", "remat", "schur", "slicing", "sorting", "special", "structural", "svd"]
