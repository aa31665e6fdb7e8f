"""``tensorstage.lax.linalg``: JAX's ``jax.lax.linalg`` on tensorstage's decomposition primitives, with JAX's
argument conventions and output orders (``eigh`` returns ``(vectors, values)``; ``qr`` and ``svd`` default to
full matrices; ``triangular_solve`` defaults to solving ``X op(A) = B``; ``eig`` returns a list). Every function
takes f32/f64 and c64/c128 matrices, with JAX's complex semantics (``cholesky`` and ``eigh`` symmetrize as
``(x + xᴴ) / 2``; eigenvalues and singular values are real: f32 for c64, f64 for c128) and derivative convention.

Deliberate differences from jax.lax.linalg:
- Eigenvector and singular-vector signs (complex: phases) are tensorstage's (each vector's largest-magnitude
  component real and positive), where JAX's are LAPACK's (unspecified); ``eigh`` always sorts
  (``sort_eigenvalues=False`` allows any order).
- ``qr(pivoting=True)`` raises ValueError (no column-pivoted QR primitive).
- ``tridiagonal_solve`` is LU with partial pivoting (LAPACK ``gtsv``'s algorithm, which JAX calls on CPU) written
  as two ``scan``s, so it differentiates, vmaps and lowers everywhere; ``perturb_singular`` is refused. For
  complex matrices it pivots on the modulus where ``cgtsv`` compares ``|re| + |im|``: near ties may pick the
  other row (same solution up to rounding).
- ``implementation``/``algorithm``/``use_magma`` are accepted and ignored.

``hessenberg``, ``tridiagonal``, ``householder_product`` and ``ormqr`` (``linalg_householder.py``),
``cholesky_update`` and ``symmetric_product`` (``linalg_updates.py``) and ``qdwh`` (``linalg_qdwh.py``) are prelude
code on these primitives; their modules list their differences (chiefly: they differentiate where JAX's do not,
and run on every platform).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop, scan
from ...dtypes import DType, c64, c128, f32, f64, i32
from ...staging.ir import Atom
from ...staging.primitives import decompositions as D
from ...staging.primitives import eig as EG
from ...staging.primitives import elementwise as E
from ...staging.primitives import lu as LU
from ...staging.primitives import schur as SC
from ...staging.primitives import svd as SV
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, dtype_error, inexact_operand, op, shape_error, wrap
from ..numpy.linalg_decompositions import matrix_operand, same_dtype, square_operand
from .linalg_householder import hessenberg, householder_product, ormqr, tridiagonal
from .linalg_qdwh import qdwh
from .linalg_updates import cholesky_update, symmetric_product

__all__ = [
    "cholesky", "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
    "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd", "symmetric_product", "triangular_solve",
    "tridiagonal", "tridiagonal_solve",
]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
M = TypeVar("M")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _tensor(a: Atom) -> Any:
    """``a`` as a tensor that may be sliced whatever its rank (mypy's shape plugin reads ``wrap``'s as rank 0)."""
    return wrap(a)


def _symmetrized(name: str, x: Any) -> Any:
    """``(x + xᴴ) / 2``, the matrix JAX factors when ``symmetrize_input`` (both triangles then matter)."""
    a = square_operand(name, x, complex_ok=True)
    return E.mul(E.add(a, D.mH(a)), E.scalar(0.5, a))


@op
def cholesky(x: Tensor[DT, Unpack[Batch], N, N], *, symmetrize_input: bool = True) -> Tensor[DT, Unpack[Batch], N, N]:
    """Lower ``L`` with ``L Lᴴ = x`` (Hermitian positive definite; real: symmetric); NaNs where ``x`` is not
    positive definite. Without ``symmetrize_input`` only ``x``'s lower triangle is read."""
    a = _symmetrized("cholesky", x) if symmetrize_input else square_operand("cholesky", x, complex_ok=True)
    return wrap(D.cholesky(a))


def _index_range(name: str, subset: tuple[int, int] | None, n: int) -> tuple[int, int]:
    if subset is None:
        return 0, n
    lo, hi = (int(i) for i in subset)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"lax.linalg.{name}: subset_by_index must be (lo, hi) with 0 <= lo <= hi <= {n}, got {subset!r}")
    return lo, hi


@overload
def eigh(
    x: Tensor[c64, Unpack[Batch], N, N], *, lower: bool = True, symmetrize_input: bool = True,
    sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None, implementation: Any = None,
) -> tuple[Tensor[c64, Unpack[Batch], N, Any], Tensor[f32, Unpack[Batch], Any]]: ...
@overload
def eigh(
    x: Tensor[c128, Unpack[Batch], N, N], *, lower: bool = True, symmetrize_input: bool = True,
    sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None, implementation: Any = None,
) -> tuple[Tensor[c128, Unpack[Batch], N, Any], Tensor[f64, Unpack[Batch], Any]]: ...
@overload
def eigh(
    x: Tensor[DT, Unpack[Batch], N, N], *, lower: bool = True, symmetrize_input: bool = True,
    sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None, implementation: Any = None,
) -> tuple[Tensor[DT, Unpack[Batch], N, Any], Tensor[DT, Unpack[Batch], Any]]: ...
@op
def eigh(
    x: Any, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
    subset_by_index: tuple[int, int] | None = None, implementation: Any = None,
) -> Any:
    """``(v, w)``: eigenvectors (columns of ``v``) and ascending eigenvalues (real: f32 for c64, f64 for c128) of
    a symmetric or Hermitian matrix, as JAX orders them. Without ``symmetrize_input`` only the ``lower`` (else
    upper) triangle is read; ``subset_by_index`` ``(lo, hi)`` keeps eigenpairs ``lo`` to ``hi - 1``."""
    if symmetrize_input:
        a = _symmetrized("eigh", x)
    else:
        a = square_operand("eigh", x, complex_ok=True)
        a = a if lower else D.mH(a)  # the upper triangle of x is the lower one of xᴴ
    w, v = D.eigh(a)
    lo, hi = _index_range("eigh", subset_by_index, a.aval.shape[-1])
    if (lo, hi) == (0, a.aval.shape[-1]):
        return wrap(v), wrap(w)
    return _tensor(v)[..., lo:hi], _tensor(w)[..., lo:hi]


@op
def lu(x: Tensor[DT, Unpack[Batch], M, N]) -> tuple[Tensor[DT, Unpack[Batch], M, N], Tensor[i32, Unpack[Batch], Any],
                                                   Tensor[i32, Unpack[Batch], M]]:
    """``(lu, pivots, permutation)`` with ``x[permutation] = L U``: the packed factors (``L``'s unit diagonal
    implied), LAPACK's 0-based row swaps and the permutation they make."""
    packed, pivots, perm = LU.lu(matrix_operand("lu", x, complex_ok=True))
    return wrap(packed), wrap(pivots), wrap(perm)


@op
def lu_pivots_to_permutation(pivots: Tensor[i32, Unpack[Batch], Any],
                             permutation_size: int) -> Tensor[i32, Unpack[Batch], Any]:
    """The permutation that the row swaps ``pivots`` (swap row ``i`` with row ``pivots[i]``, in order) make of
    ``range(permutation_size)``."""
    p = as_tensor(pivots)
    if p.dtype != i32 or p.ndim < 1:
        raise dtype_error("lu_pivots_to_permutation",
                          f"lax.linalg.lu_pivots_to_permutation needs int32 pivots (..., k), got {p.aval}")
    k = p.shape[-1]
    if permutation_size < k:
        raise shape_error("lu_pivots_to_permutation",
                          f"permutation_size {permutation_size} is below the {k} pivots of {p.aval}")
    positions = tnp.broadcast_to(tnp.arange(permutation_size, dtype=i32), (*p.shape[:-1], permutation_size))

    def swap(i: Any, perm: Any) -> Any:
        j = tnp.take(p, i, axis=-1)[..., None]
        at_i, at_j = tnp.take(perm, i, axis=-1)[..., None], tnp.take_along_axis(perm, j, axis=-1)
        return tnp.where(positions == i, at_j, tnp.where(positions == j, at_i, perm))

    return fori_loop(0, k, swap, positions)


Factor = Tensor[DT, Unpack[tuple[Any, ...]]]  # min(M, N) along one axis in reduced mode: no static dim for it


@op
def qr(x: Tensor[DT, Unpack[Sh]], *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Factor[DT], Factor[DT]]:
    """``(q, r)`` with ``x = q r`` (Householder: LAPACK's signs); ``q`` square unless ``full_matrices=False``."""
    if pivoting:
        raise ValueError("lax.linalg.qr: pivoting=True (column-pivoted QR) is not offered")
    q, r, _ = D.qr(matrix_operand("qr", x, complex_ok=True), full_matrices=full_matrices)
    return wrap(q), wrap(r)


@overload
def svd(x: Tensor[c64, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[True] = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: Any = None) -> tuple[Factor[c64], Factor[f32], Factor[c64]]: ...
@overload
def svd(x: Tensor[c128, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[True] = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: Any = None) -> tuple[Factor[c128], Factor[f64], Factor[c128]]: ...
@overload
def svd(x: Tensor[DT, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[True] = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: Any = None) -> tuple[Factor[DT], Factor[DT], Factor[DT]]: ...
@overload
def svd(x: Tensor[c64, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[False],
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Factor[f32]: ...
@overload
def svd(x: Tensor[c128, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[False],
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Factor[f64]: ...
@overload
def svd(x: Tensor[DT, Unpack[Sh]], *, full_matrices: bool = True, compute_uv: Literal[False],
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Factor[DT]: ...
@op
def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """``(u, s, vh)`` with ``x = u diag(s) vh`` and ``s`` descending (real: f32 for c64, f64 for c128), or ``s``
    alone; ``subset_by_index`` ``(lo, hi)`` keeps singular triplets ``lo`` to ``hi - 1`` (and implies reduced
    factors, as in JAX)."""
    a = matrix_operand("svd", x, complex_ok=True)
    lo, hi = _index_range("svd", subset_by_index, min(a.aval.shape[-2:]))
    full = full_matrices and subset_by_index is None
    outs = [_tensor(t) for t in SV.svd(a, full, compute_uv)]
    if subset_by_index is not None:
        outs = [outs[0][..., lo:hi], outs[1][..., lo:hi], outs[2][..., lo:hi, :]] if compute_uv else [outs[0][..., lo:hi]]
    return tuple(outs) if compute_uv else outs[0]


@op
def triangular_solve(
    a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]], *, left_side: bool = False, lower: bool = False,
    transpose_a: bool = False, conjugate_a: bool = False, unit_diagonal: bool = False,
) -> Tensor[DT, Unpack[Sh]]:
    """``X`` with ``op(a) X = b`` (``left_side``) or ``X op(a) = b``: ``op(a)`` is ``a``, transposed if
    ``transpose_a``, conjugated if ``conjugate_a`` (``aᴴ`` with both; no effect on real matrices). Only the
    ``lower`` (else upper) triangle of ``a`` is read. ``b`` of one rank less than ``a`` is one right-hand side."""
    x = square_operand("triangular_solve", a, complex_ok=True)
    rhs = inexact_operand("triangular_solve", b).atom
    same_dtype("triangular_solve", x, rhs)
    single = rhs.aval.ndim == x.aval.ndim - 1
    rhs_t = _tensor(rhs)[..., :, None] if single and left_side else _tensor(rhs)[..., None, :] if single else _tensor(rhs)
    out = _tensor(D.triangular_solve(x, rhs_t.atom, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                     unit_diagonal=unit_diagonal, conjugate_a=conjugate_a))
    return (out[..., 0] if left_side else out[..., 0, :]) if single else out  # type: ignore[no-any-return]


def _pivoting_tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """LU with partial pivoting along the leading axis (LAPACK ``gtsv``'s algorithm), then back substitution.

    Step ``i`` holds row ``i`` as eliminated so far (entries in columns ``i`` and ``i + 1`` only) and meets row
    ``i + 1``; the one whose column-``i`` entry is larger in magnitude becomes ``U``'s row ``i`` (an interchange
    gives ``U`` a second superdiagonal), the other, minus a multiple of it, is carried on."""

    def eliminate(carry: Any, row: Any) -> tuple[Any, Any]:
        pivot, right, rhs = carry  # the row being eliminated: columns i, i + 1
        lo, mid, up, rhs_next = row  # the next original row: columns i, i + 1, i + 2
        swap = tnp.abs(lo) > tnp.abs(pivot)
        top = [tnp.where(swap, lo, pivot), tnp.where(swap, mid, right), tnp.where(swap, up, tnp.zeros_like(up))]
        top_rhs = tnp.where(swap[..., None], rhs_next, rhs)
        factor = tnp.where(swap, pivot, lo) / top[0]
        below = [tnp.where(swap, right, mid) - factor * top[1], tnp.where(swap, tnp.zeros_like(up), up) - factor * top[2]]
        below_rhs = tnp.where(swap[..., None], rhs, rhs_next) - factor[..., None] * top_rhs
        return (below[0], below[1], below_rhs), (*top, top_rhs)

    def substitute(carry: Any, row: Any) -> tuple[Any, Any]:
        x1, x2 = carry  # x[i + 1], x[i + 2]
        u0, u1, u2, y = row
        x = (y - u1[..., None] * x1 - u2[..., None] * x2) / u0[..., None]
        return (x, x1), x

    (last, _, last_rhs), (u0, u1, u2, ys) = scan(eliminate, (d[0], du[0], b[0]), (dl[1:], d[1:], du[1:], b[1:]))
    zero = tnp.zeros_like(last)
    u0, u1, u2 = (tnp.concatenate([u, v[None]]) for u, v in ((u0, last), (u1, zero), (u2, zero)))
    ys = tnp.concatenate([ys, last_rhs[None]])
    _, xs = scan(substitute, (tnp.zeros_like(b[0]), tnp.zeros_like(b[0])), (u0, u1, u2, ys), reverse=True)
    return xs


@op
def tridiagonal_solve(
    dl: Tensor[DT, Unpack[Batch], M], d: Tensor[DT, Unpack[Batch], M], du: Tensor[DT, Unpack[Batch], M],
    b: Tensor[DT, Unpack[Batch], M, N], *, perturb_singular: bool = False,
) -> Tensor[DT, Unpack[Batch], M, N]:
    """``X`` with ``A X = b`` for the tridiagonal ``A`` with ``A[i, i-1] = dl[i]``, ``A[i, i] = d[i]``,
    ``A[i, i+1] = du[i]`` (``dl[0]`` and ``du[-1]`` are not read), by LU with partial pivoting."""
    if perturb_singular:
        raise ValueError("lax.linalg.tridiagonal_solve: perturb_singular=True is not offered")
    diagonals: list[Any] = [inexact_operand("tridiagonal_solve", t) for t in (dl, d, du)]
    rhs = _tensor(matrix_operand("tridiagonal_solve", b, complex_ok=True))
    for t in diagonals:
        same_dtype("tridiagonal_solve", t.atom, rhs.atom)
        if t.shape != rhs.shape[:-1]:
            shapes = ", ".join(str(s.aval) for s in diagonals)
            raise shape_error("tridiagonal_solve", f"lax.linalg.tridiagonal_solve: diagonals {shapes} "
                              f"must have the shape (..., m) of b {rhs.aval} without its last axis")
    if rhs.shape[-2] == 0:
        return b  # nothing to solve
    lows, mids, ups = (tnp.moveaxis(t, -1, 0) for t in diagonals)
    return tnp.moveaxis(_pivoting_tridiagonal_solve(lows, mids, ups, tnp.moveaxis(rhs, -2, 0)), 0, -2)


@op
def eig(x: AnyTensor, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: Any = None, use_magma: bool | None = None) -> list[AnyTensor]:
    """``[w, vl, vr]`` (the eigenvectors asked for): complex eigenvalues and left and right eigenvectors
    (columns, LAPACK's ``geev`` normalization) of a general matrix. CPU only, as ``geev`` is."""
    outs = EG.eig(as_tensor(x).atom, compute_left_eigenvectors, compute_right_eigenvectors)
    return [wrap(t) for t in outs]


@op
def schur(x: AnyTensor, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> tuple[AnyTensor, ...]:
    """``(t, vs)``: the Schur form (real quasi-triangular for a real ``x``) and the Schur vectors. CPU only
    (LAPACK's ``gees``); eigenvalue sorting is not offered (JAX offers it on no platform either)."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lax.linalg.schur: sort_eig_vals and select_callable are not implemented (as JAX)")
    return tuple(wrap(t) for t in SC.schur(as_tensor(x).atom, compute_schur_vectors))
