"""``tnp.linalg`` decompositions: cholesky, qr, eigh, eigvalsh, and solve_triangular (SciPy's/JAX's name).

Each works on the last two axes, with leading axes as batch axes, on f32/f64 and c64/c128 matrices (NumPy's
semantics: a Hermitian matrix is read from one triangle, the imaginary part of its diagonal ignored; eigenvalues
of a Hermitian matrix are real, f32 for c64 and f64 for c128). They are thin typed wrappers around the primitives
in ``staging/primitives/decompositions.py``, which carry every derivative and batching rule.

Deliberate difference: eigenvectors have a fixed phase, their largest-magnitude component real and positive
(NumPy returns LAPACK's, which differ between platforms and libraries); JAX's conventions otherwise.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, c64, c128, f32, f64
from ...staging.ir import Atom
from ...staging.primitives import decompositions as D
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import describe, dtype_error, float_operand, inexact_operand, op, shape_error, wrap

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
K = TypeVar("K")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _operand(name: str, a: Any, complex_ok: bool) -> Atom:
    return (inexact_operand if complex_ok else float_operand)(name, a).atom


def matrix_operand(name: str, a: Any, complex_ok: bool = False) -> Atom:
    """A float (batch of) matrices (or complex: ``complex_ok``), or an error naming ``name`` and the operand's
    shape."""
    x = _operand(name, a, complex_ok)
    if x.aval.ndim < 2:
        raise shape_error(name, f"{name} needs a (batch of) matrices, got {describe(wrap(x))}")
    return x


def square_operand(name: str, a: Any, complex_ok: bool = False) -> Atom:
    """A float batch of square matrices (or complex: ``complex_ok``), or an error naming ``name`` and the
    operand's shape."""
    x = _operand(name, a, complex_ok)
    if x.aval.ndim < 2 or x.aval.shape[-1] != x.aval.shape[-2]:
        raise shape_error(name, f"{name} needs square matrices in the last two axes, got {describe(wrap(x))}")
    return x


def same_dtype(name: str, a: Atom, b: Atom) -> None:
    """An error naming ``name`` unless ``a`` and ``b`` have one dtype (tensorstage never promotes)."""
    if a.aval.dtype != b.aval.dtype:
        raise dtype_error(name, f"dtypes differ: {describe(wrap(a))} and {describe(wrap(b))}; tensorstage never "
                          "promotes between array dtypes: convert one with .astype(...)")


@op
def cholesky(a: Tensor[DT, Unpack[Batch], N, N], upper: bool = False) -> Tensor[DT, Unpack[Batch], N, N]:
    """Cholesky factor ``L`` (lower, ``L Lᴴ = a``), reading the lower triangle of ``a``; ``upper=True``: ``U``
    (``Uᴴ U = a``) reading the upper triangle, as NumPy. A matrix that is not positive definite gives NaNs (no
    exception: the check would need the host)."""
    x = square_operand("cholesky", a, complex_ok=True)
    if not upper:
        return wrap(D.cholesky(x))
    return wrap(D.mH(D.cholesky(D.mH(x))))  # a's upper triangle is aᴴ's lower one


@op
def solve_triangular(
    a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]], trans: int | str = 0, lower: bool = False,
    unit_diagonal: bool = False,
) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``op(a) x = b`` for triangular ``a`` (SciPy's signature: ``trans`` 0/'N', 1/'T' or 2/'C' for
    ``op(a) = a``, ``aᵀ`` or ``aᴴ``). ``b`` is ``(..., N, K)``, or ``(..., N)`` for one right-hand side; batch
    axes of ``a`` and ``b`` must agree. Only the ``lower`` (else upper) triangle of ``a`` is read."""
    x = square_operand("solve_triangular", a, complex_ok=True)
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    rhs = inexact_operand("solve_triangular", b).atom
    same_dtype("solve_triangular", x, rhs)
    vector = rhs.aval.ndim == x.aval.ndim - 1
    if vector:
        rhs = S.reshape(rhs, (*rhs.aval.shape, 1), (*rhs.aval.dims, None))
    out = D.triangular_solve(
        x, rhs, left_side=True, lower=lower, transpose_a=trans not in (0, "N"), unit_diagonal=unit_diagonal,
        conjugate_a=trans in (2, "C"),
    )
    if vector:
        out = S.reshape(out, out.aval.shape[:-1], out.aval.dims[:-1])
    return wrap(out)


QrMode = Literal["reduced", "complete"]
Factor = Tensor[DT, Unpack[tuple[Any, ...]]]  # QR's factors have min(M, N) along one axis: no static dim for it


@overload
def qr(a: Tensor[DT, Unpack[Sh]], mode: QrMode = "reduced") -> tuple[Factor[DT], Factor[DT]]: ...
@overload
def qr(a: Tensor[DT, Unpack[Sh]], mode: Literal["r"]) -> Factor[DT]: ...
@op
def qr(a: Any, mode: str = "reduced") -> Any:
    """NumPy's QR: ``(q, r)`` with orthonormal columns in ``q`` and upper-triangular ``r`` (Householder, so the
    signs match NumPy's; for complex ``a``, ``r``'s diagonal is real). ``mode``: 'reduced' (``q`` is
    ``(..., M, K)``, K = min(M, N)), 'complete' (``q`` is square) or 'r'. Differentiable for square and tall
    matrices in reduced mode (and 'r')."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    x = matrix_operand("qr", a, complex_ok=True)
    q, r, _ = D.qr(x, full_matrices=mode == "complete")
    return wrap(r) if mode == "r" else (wrap(q), wrap(r))


def _lower_read(name: str, a: Any, UPLO: str) -> Atom:  # noqa: N803 - NumPy's name
    if UPLO not in ("L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    x = square_operand(name, a, complex_ok=True)
    return x if UPLO == "L" else D.mH(x)  # the upper triangle of a is the lower one of aᴴ


@overload
def eigh(
    a: Tensor[c64, Unpack[Batch], N, N], UPLO: str = "L"  # noqa: N803 - NumPy's name
) -> tuple[Tensor[f32, Unpack[Batch], N], Tensor[c64, Unpack[Batch], N, N]]: ...
@overload
def eigh(
    a: Tensor[c128, Unpack[Batch], N, N], UPLO: str = "L"  # noqa: N803
) -> tuple[Tensor[f64, Unpack[Batch], N], Tensor[c128, Unpack[Batch], N, N]]: ...
@overload
def eigh(
    a: Tensor[DT, Unpack[Batch], N, N], UPLO: str = "L"  # noqa: N803
) -> tuple[Tensor[DT, Unpack[Batch], N], Tensor[DT, Unpack[Batch], N, N]]: ...
@op
def eigh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """Eigenvalues (ascending, real) and eigenvectors (columns) of a symmetric or Hermitian matrix, reading its
    ``UPLO`` triangle. Each eigenvector's largest-magnitude component is real and positive. Derivatives assume
    distinct eigenvalues."""
    w, v = D.eigh(_lower_read("eigh", a, UPLO))
    return wrap(w), wrap(v)


@overload
def eigvalsh(a: Tensor[c64, Unpack[Batch], N, N], UPLO: str = "L") -> Tensor[f32, Unpack[Batch], N]: ...  # noqa: N803
@overload
def eigvalsh(a: Tensor[c128, Unpack[Batch], N, N], UPLO: str = "L") -> Tensor[f64, Unpack[Batch], N]: ...  # noqa: N803
@overload
def eigvalsh(a: Tensor[DT, Unpack[Batch], N, N], UPLO: str = "L") -> Tensor[DT, Unpack[Batch], N]: ...  # noqa: N803
@op
def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """Eigenvalues (ascending, real) of a symmetric or Hermitian matrix, reading its ``UPLO`` triangle."""
    w, _ = D.eigh(_lower_read("eigvalsh", a, UPLO))
    return wrap(w)
