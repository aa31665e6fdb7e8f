"""``tnp.linalg``: NumPy's ``numpy.linalg`` names (plus SciPy's ``solve_triangular``), as one namespace.

The products NumPy also lists there (matmul, tensordot, vdot) are the ones of ``tnp`` itself; diagonal, trace,
outer, cross and vecdot have the array API's semantics here (last two axes, 1-D operands, 3-vectors), which are
stricter than ``tnp``'s functions of the same names.
"""

from __future__ import annotations

from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType
from ...tensor import Tensor
from . import matrices as _matrices
from ._core import as_tensor, describe, op, shape_error
from .linalg import matmul, multi_dot, tensordot, vdot
from .linalg import outer as _outer
from .linalg_decompositions import cholesky, eigh, eigvalsh, qr, solve_triangular
from .linalg_eig import EigResult, eig, eigvals
from .linalg_norms import matrix_norm, norm, vector_norm
from .linalg_solvers import det, inv, matrix_power, slogdet, solve, tensorinv, tensorsolve
from .linalg_svd import cond, lstsq, matrix_rank, pinv, svd, svdvals
from .matrices import matrix_transpose

__all__ = [
    "EigResult", "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_power", "norm",
    "outer", "qr", "slogdet", "solve", "solve_triangular", "tensordot", "vdot",
    "cond", "lstsq", "matrix_rank", "pinv", "svd", "svdvals",
    "cross", "diagonal", "matrix_norm", "matrix_transpose", "multi_dot", "tensorinv", "tensorsolve", "trace",
    "vecdot", "vector_norm",
]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
M = TypeVar("M")
A = TypeVar("A")
B = TypeVar("B")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")
S2 = TypeVarTuple("S2")


@op
def diagonal(x: Tensor[DT, Unpack[Batch], N, M], offset: int = 0) -> Tensor[DT, Unpack[Batch], Any]:
    """The ``offset`` diagonal of every matrix in the last two axes (array API; ``tnp.diagonal`` defaults to the
    first two)."""
    return _matrices.diagonal(x, offset, -2, -1)


@op
def trace(x: Tensor[DT, Unpack[Batch], N, M], offset: int = 0, dtype: Any = None) -> Tensor[Any, Unpack[Batch]]:
    """Sum along the ``offset`` diagonal of every matrix in the last two axes (array API; ``tnp.trace``'s
    default axes are the first two). Integers narrower than 32 bits sum in i32/u32."""
    return _matrices.trace(x, offset, -2, -1, dtype)


@op
def outer(x1: Tensor[DT, A], x2: Tensor[DT, B]) -> Tensor[DT, A, B]:
    """Outer product of two vectors: both must be 1-D (``tnp.outer`` flattens)."""
    a, b = as_tensor(x1), as_tensor(x2)
    if a.aval.ndim != 1 or b.aval.ndim != 1:
        raise shape_error("outer", f"needs 1-D vectors, got {describe(a)} and {describe(b)}")
    return _outer(a, b)


@op
def cross(
    x1: Tensor[DT, Unpack[Sh]], x2: Tensor[DT, Unpack[S2]], axis: int = -1
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """Cross product of 3-vectors along ``axis`` of both operands (the other axes broadcast)."""
    return _matrices.cross(x1, x2, axis=axis)


@op
def vecdot(
    x1: Tensor[DT, Unpack[Sh]], x2: Tensor[DT, Unpack[S2]], axis: int = -1
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """Dot products of vectors along ``axis``, the other axes broadcast (complex ``x1`` is conjugated, as NumPy's)."""
    return _matrices.vecdot(x1, x2, axis)
