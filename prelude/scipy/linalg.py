"""``tensorstage.scipy.linalg``: ``jax.scipy.linalg``'s names and semantics, with SciPy's defaults (which differ from
``numpy.linalg``'s: ``cholesky`` gives the upper factor unless ``lower=True``; ``qr`` is complete unless
``mode='economic'``; ``eigh`` reads the lower triangle unless ``lower=False``).

Every function works on the last two axes with leading axes as batch axes, differentiates (through the primitives'
rules: ``lu``, ``cholesky``, ``triangular_solve``, ``solve``, ``eigh``, ``qr``, ``svd``) and batches under
``vmap``. Every function takes f32/f64 and c64/c128 matrices (``eigh_tridiagonal`` real ones only, as SciPy), with
SciPy's complex semantics: ``cholesky`` and ``eigh`` read a Hermitian matrix from one triangle (the imaginary part
of its diagonal ignored), ``trans=2``/'C' is the conjugate transpose, and eigenvalues, singular values and
``lu``'s permutation matrix are real (f32 for c64, f64 for c128). Complex derivatives follow JAX's convention
(``staging/primitives/decompositions.py``). SciPy's ``overwrite_*``, ``check_finite``, ``lwork`` and ``debug``
arguments are accepted and ignored, as in JAX. Deliberate differences (besides those of the functions reused from
``tnp.linalg``):

- ``solve(..., assume_a='pos')`` is ``cho_solve(cho_factor(a, lower), b)``: it reads one triangle of ``a`` and
  so does its derivative (JAX differentiates as if the whole ``a`` had been read, and for a complex ``a`` as if
  ``aᵀ = a``, which misses finite differences). ``'sym'`` and ``'her'`` solve with the whole matrix, as JAX
  (SciPy reads one triangle).
- ``cho_factor`` leaves zeros in the triangle it does not use (SciPy leaves whatever was there).
- ``qr(..., pivoting=True)`` raises a ValueError; ``eigh`` with ``b`` (the generalized problem), ``eigvals`` or
  ``subset_by_index`` raises NotImplementedError, as in JAX.
- ``expm`` uses one Padé degree per precision (13 for f64 and c128, 7 for f32 and c64: JAX's and SciPy's
  largest); see ``linalg_expm.py``.
- The batch axes of ``solve_triangular``'s operands must agree exactly (no broadcasting).
- The matrix constructors (``linalg_constructors.py``), ``polar``, ``expm_frechet``, ``qr_multiply``,
  ``eigh_tridiagonal`` (``linalg_more.py``) and the Schur family (``schur``, ``hessenberg``, ``rsf2csf``, ``sqrtm``,
  ``funm``, ``solve_sylvester``: ``linalg_schur.py``, CPU only, not differentiable) list their own differences.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, c64, c128, f32, f64
from ...staging.ir import Atom
from ...staging.primitives import decompositions as D
from ...tensor import Tensor
from ..numpy import linalg_decompositions as _dec
from ..numpy import linalg_solvers as _solvers
from ..numpy import linalg_svd as _svd
from ..numpy._core import op, wrap
from ..numpy.linalg_decompositions import matrix_operand, square_operand
from .linalg_constructors import (
    companion, convolution_matrix, dft, fiedler, fiedler_companion, hadamard, helmert, invhilbert, invpascal, leslie,
    pascal,
)
from .linalg_expm import expm
from .linalg_lu import as_given, lu, lu_factor, lu_solve, rhs_matrices
from .linalg_matrices import block_diag, circulant, hankel, hilbert, toeplitz
from .linalg_more import eigh_tridiagonal, expm_frechet, polar, qr_multiply
from .linalg_schur import funm, hessenberg, rsf2csf, schur, solve_sylvester, sqrtm

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det", "dft",
    "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard",
    "hankel", "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor",
    "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
    "solve_triangular", "sqrtm", "svd", "toeplitz",
]


def _cholesky(x: Atom, lower: bool) -> Atom:
    """The ``lower`` (else upper) Cholesky factor, reading that triangle of ``x``."""
    return D.cholesky(x) if lower else D.mH(D.cholesky(D.mH(x)))  # xᴴ's lower triangle is x's upper one


@op
def cholesky(
    a: Tensor[DT, Unpack[Batch], N, N], lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Tensor[DT, Unpack[Batch], N, N]:
    """The Cholesky factor of a Hermitian (real: symmetric) positive definite ``a``: upper ``U`` (``a = Uᴴ U``,
    SciPy's default) or, with ``lower=True``, lower ``L`` (``a = L Lᴴ``), reading only that triangle of ``a`` (the
    imaginary part of its diagonal ignored). NaNs where ``a`` is not positive definite (SciPy raises; that check
    would need the host)."""
    return wrap(_cholesky(square_operand("cholesky", a, complex_ok=True), lower))


def cho_factor(
    a: Tensor[DT, Unpack[Batch], N, N], lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Tensor[DT, Unpack[Batch], N, N], bool]:
    """``(c, lower)`` for :func:`cho_solve`: ``c`` is :func:`cholesky`'s factor (zeros in its other triangle);
    ``lower`` stays the Python bool it was (a setting, not data)."""
    if not isinstance(lower, bool):
        raise TypeError(f"cho_factor: lower must be a bool, got {lower!r}")
    return _cho_factor(a, lower), lower


@op
def _cho_factor(a: Tensor[DT, Unpack[Batch], N, N], lower: bool) -> Tensor[DT, Unpack[Batch], N, N]:
    return wrap(_cholesky(square_operand("cho_factor", a, complex_ok=True), lower))


def _cho_solve(c: Atom, rhs: Atom, lower: bool) -> Atom:
    """``x`` with ``c cᴴ x = rhs`` (``lower``) or ``cᴴ c x = rhs``; ``rhs`` is ``(..., N, K)`` with ``c``'s
    batch."""
    def solve(y: Atom, adjoint: bool) -> Atom:  # c⁻¹ y, or c⁻ᴴ y
        return D.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=adjoint, conjugate_a=adjoint)

    return solve(solve(rhs, not lower), lower)  # L⁻ᴴ (L⁻¹ b), or U⁻¹ (U⁻ᴴ b)


@op
def cho_solve(
    c_and_lower: tuple[Tensor[DT, Unpack[Batch], N, N], bool], b: Tensor[DT, Unpack[Sh]], overwrite_b: bool = False,
    check_finite: bool = True,
) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b`` from ``cho_factor(a)``: two triangular solves. ``b`` is ``(..., N)`` or
    ``(..., N, K)``; batch axes broadcast."""
    if not isinstance(c_and_lower, tuple) or len(c_and_lower) != 2 or not isinstance(c_and_lower[1], bool):
        raise TypeError("cho_solve: the first argument must be the pair (c, lower) that cho_factor returns, got "
                        f"{type(c_and_lower).__name__}")
    c = square_operand("cho_solve", c_and_lower[0], complex_ok=True)
    c, rhs, vector = rhs_matrices("cho_solve", c, b, shared_vector=False)
    return wrap(as_given(_cho_solve(c, rhs, c_and_lower[1]), vector))


@op
def solve_triangular(
    a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]], trans: int | str = 0, lower: bool = False,
    unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None, check_finite: bool = True,
) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``op(a) x = b`` for triangular ``a`` (``trans`` 0/'N': ``a``; 1/'T': ``aᵀ``; 2/'C': the
    conjugate transpose ``aᴴ``), reading only the ``lower`` (else upper, SciPy's default) triangle;
    ``unit_diagonal`` assumes ones on the diagonal. ``b`` is ``(..., N)`` or ``(..., N, K)`` with ``a``'s batch
    axes."""
    return _dec.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


_ASSUME = ("gen", "sym", "her", "pos")


@op
def solve(
    a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]], lower: bool = False, overwrite_a: bool = False,
    overwrite_b: bool = False, debug: bool = False, check_finite: bool = True, assume_a: str = "gen",
) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b``. ``assume_a``: 'gen', 'sym' or 'her' (LU with partial pivoting on the whole
    matrix, as JAX) or 'pos' (Cholesky, reading the ``lower`` (else upper) triangle). ``b`` is one vector
    ``(N,)`` for every matrix, or ``(..., N, K)`` whose batch axes broadcast with ``a``'s."""
    if assume_a not in _ASSUME:
        raise ValueError(f"solve: assume_a must be one of {', '.join(map(repr, _ASSUME))}, got {assume_a!r}")
    if assume_a != "pos":
        return _solvers.solve(a, b)
    x, rhs, vector = rhs_matrices("solve", square_operand("solve", a, complex_ok=True), b, shared_vector=True)
    return wrap(as_given(_cho_solve(_cholesky(x, lower), rhs, lower), vector))


@op
def inv(
    a: Tensor[DT, Unpack[Batch], N, N], overwrite_a: bool = False, check_finite: bool = True
) -> Tensor[DT, Unpack[Batch], N, N]:
    """The inverse of every matrix (LU with partial pivoting; infs or NaNs for a singular one)."""
    return _solvers.inv(a)


@op
def det(a: Tensor[DT, Unpack[Batch], N, N], overwrite_a: bool = False, check_finite: bool = True) -> Tensor[DT, Unpack[Batch]]:
    """The determinant of every matrix; its gradient is the cofactor matrix, also at singular matrices."""
    return _solvers.det(a)


@overload
def eigh(
    a: Tensor[c64, Unpack[Batch], N, N], b: None = None, lower: bool = True, eigvals_only: Literal[False] = False,
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> tuple[Tensor[f32, Unpack[Batch], N], Tensor[c64, Unpack[Batch], N, N]]: ...
@overload
def eigh(
    a: Tensor[c128, Unpack[Batch], N, N], b: None = None, lower: bool = True, eigvals_only: Literal[False] = False,
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> tuple[Tensor[f64, Unpack[Batch], N], Tensor[c128, Unpack[Batch], N, N]]: ...
@overload
def eigh(
    a: Tensor[DT, Unpack[Batch], N, N], b: None = None, lower: bool = True, eigvals_only: Literal[False] = False,
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> tuple[Tensor[DT, Unpack[Batch], N], Tensor[DT, Unpack[Batch], N, N]]: ...
@overload
def eigh(
    a: Tensor[c64, Unpack[Batch], N, N], b: None = None, lower: bool = True, *, eigvals_only: Literal[True],
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> Tensor[f32, Unpack[Batch], N]: ...
@overload
def eigh(
    a: Tensor[c128, Unpack[Batch], N, N], b: None = None, lower: bool = True, *, eigvals_only: Literal[True],
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> Tensor[f64, Unpack[Batch], N]: ...
@overload
def eigh(
    a: Tensor[DT, Unpack[Batch], N, N], b: None = None, lower: bool = True, *, eigvals_only: Literal[True],
    overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None, type: int = 1,
    check_finite: bool = True,
) -> Tensor[DT, Unpack[Batch], N]: ...
@op
def eigh(
    a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
    overwrite_b: bool = False, turbo: bool = True, eigvals: Any = None, type: int = 1,  # noqa: A002 - SciPy's name
    check_finite: bool = True,
) -> Any:
    """Eigenvalues (ascending, real: f32 for c64, f64 for c128) and eigenvectors (columns) of a symmetric or
    Hermitian matrix, reading its ``lower`` (else upper) triangle; ``eigvals_only`` gives the eigenvalues alone.
    Only the standard problem (``b=None``, ``type=1``, all eigenvalues), as JAX."""
    if b is not None or eigvals is not None or type != 1:
        raise NotImplementedError("eigh: only the standard eigenproblem of all eigenvalues is implemented (b=None, "
                                  "eigvals=None, type=1), as in JAX")
    w, v = _dec.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


Factor = Tensor[DT, Unpack[tuple[Any, ...]]]  # QR's factors have min(M, N) along one axis in economic mode


@overload
def qr(
    a: Tensor[DT, Unpack[Sh]], overwrite_a: bool = False, lwork: Any = None,
    mode: Literal["full", "economic"] = "full", pivoting: Literal[False] = False, check_finite: bool = True,
) -> tuple[Factor[DT], Factor[DT]]: ...
@overload
def qr(
    a: Tensor[DT, Unpack[Sh]], overwrite_a: bool = False, lwork: Any = None, *, mode: Literal["r"],
    pivoting: Literal[False] = False, check_finite: bool = True,
) -> tuple[Factor[DT]]: ...
@op
def qr(
    a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
    check_finite: bool = True,
) -> Any:
    """SciPy's QR: ``(q, r)`` with ``q`` square ``(..., M, M)`` and ``r`` ``(..., M, N)`` (``mode='full'``, the
    default), ``q`` ``(..., M, K)`` and ``r`` ``(..., K, N)`` (``'economic'``), or ``(r,)`` (``'r'``: the full
    ``r`` alone, in a tuple, as SciPy). Column pivoting is not supported."""
    if pivoting:
        raise ValueError("qr: pivoting=True (QR with column pivoting) is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    q, r, _ = D.qr(matrix_operand("qr", a, complex_ok=True), full_matrices=mode != "economic")
    return (wrap(r),) if mode == "r" else (wrap(q), wrap(r))


@overload
def svd(
    a: Tensor[c64, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> tuple[
    _svd.UFactor[c64, Unpack[Batch], M], _svd.Values[f32, Unpack[Batch]], _svd.VhFactor[c64, Unpack[Batch], N]
]: ...
@overload
def svd(
    a: Tensor[c128, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> tuple[
    _svd.UFactor[c128, Unpack[Batch], M], _svd.Values[f64, Unpack[Batch]], _svd.VhFactor[c128, Unpack[Batch], N]
]: ...
@overload
def svd(
    a: Tensor[DT, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> tuple[
    _svd.UFactor[DT, Unpack[Batch], M], _svd.Values[DT, Unpack[Batch]], _svd.VhFactor[DT, Unpack[Batch], N]
]: ...
@overload
def svd(
    a: Tensor[c64, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> _svd.Values[f32, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[c128, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> _svd.Values[f64, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[DT, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    overwrite_a: bool = False, check_finite: bool = True, lapack_driver: str = "gesdd",
) -> _svd.Values[DT, Unpack[Batch]]: ...
@op
def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False, check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """``(u, s, vh)`` with ``a = u @ diag(s) @ vh`` (``s`` descending and real: f32 for c64, f64 for c128), or
    ``s`` alone without ``compute_uv``; ``tnp.linalg.svd``'s signs (complex: phases). ``lapack_driver`` is
    accepted and ignored."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    if compute_uv:
        return _svd.svd(a, full_matrices)
    return _svd.svd(a, full_matrices, False)
