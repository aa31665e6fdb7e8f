"""``tnp.linalg``: NumPy's ``numpy.linalg`` names (plus SciPy's ``solve_triangular``), as one namespace.

The products NumPy also lists there (matmul, outer, ...) are the ones of ``tnp`` itself.
"""

from .linalg import matmul, outer, tensordot, vdot
from .linalg_decompositions import cholesky, eigh, eigvalsh, qr, solve_triangular
from .linalg_norms import norm
from .linalg_solvers import det, inv, matrix_power, slogdet, solve
from .linalg_svd import cond, lstsq, matrix_rank, pinv, svd, svdvals

__all__ = [
    "cholesky", "det", "eigh", "eigvalsh", "inv", "matmul", "matrix_power", "norm", "outer", "qr", "slogdet",
    "solve", "solve_triangular", "tensordot", "vdot",
    "cond", "lstsq", "matrix_rank", "pinv", "svd", "svdvals",
]
