"""``ts.scipy.linalg``'s LU functions: lu, lu_factor, lu_solve (``jax.scipy.linalg``'s, with SciPy's defaults).

All are built on the ``lu`` primitive (``staging/primitives/lu.py``: LAPACK's ``getrf`` on CPU, a portable
elimination elsewhere), which differentiates and batches; leading axes are batch axes. ``lu_factor``'s pivots
are LAPACK's row swaps, 0-based, int32 (SciPy's are int32 too). A singular matrix keeps its zero pivot (no error,
as LAPACK); ``lu_solve`` with it gives infs or NaNs.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...dtypes import DType, c64, c128, f32, f64, i32
from ...staging import dtypes as _dt
from ...staging.ir import Atom, Aval
from ...staging.primitives import decompositions as D
from ...staging.primitives import lu as LU
from ...staging.primitives import structural as S
from ...staging.primitives.slicing import slice_in_dim
from ...tensor import Tensor
from ..numpy import arange, argsort, broadcast_to, take, take_along_axis, where
from ..numpy._core import as_tensor, broadcast_shapes, describe, dtype_error, inexact_operand, op, shape_error, wrap
from ..numpy.linalg_decompositions import matrix_operand, same_dtype, square_operand
from ..numpy.linalg_solvers import _with_batch

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _factors(packed: Atom) -> tuple[Atom, Atom]:
    """``(l, u)`` of packed factors ``(..., M, N)``: ``l`` is ``(..., M, K)`` unit lower trapezoidal, ``u`` is
    ``(..., K, N)`` upper trapezoidal, ``K = min(M, N)``."""
    *batch, m, n = packed.aval.shape
    k = min(m, n)
    low = LU.unit_lower(packed)  # (M, M): identity columns past K
    up = LU.upper(packed)  # (N, N): identity rows past K
    return _leading(low, k, -1), _leading(up, k, -2)


def _leading(x: Atom, size: int, axis: int) -> Atom:
    """The first ``size`` entries of ``x`` along matrix axis ``axis``."""
    return slice_in_dim(x, 0, size, x.aval.ndim + axis)


@overload
def lu(
    a: Tensor[c64, Unpack[Batch], M, N], permute_l: Literal[False] = False, overwrite_a: bool = False,
    check_finite: bool = True,
) -> tuple[
    Tensor[f32, Unpack[Batch], M, M], Tensor[c64, Unpack[Batch], M, Any], Tensor[c64, Unpack[Batch], Any, N]
]: ...
@overload
def lu(
    a: Tensor[c128, Unpack[Batch], M, N], permute_l: Literal[False] = False, overwrite_a: bool = False,
    check_finite: bool = True,
) -> tuple[
    Tensor[f64, Unpack[Batch], M, M], Tensor[c128, Unpack[Batch], M, Any], Tensor[c128, Unpack[Batch], Any, N]
]: ...
@overload
def lu(
    a: Tensor[DT, Unpack[Batch], M, N], permute_l: Literal[False] = False, overwrite_a: bool = False,
    check_finite: bool = True,
) -> tuple[
    Tensor[DT, Unpack[Batch], M, M], Tensor[DT, Unpack[Batch], M, Any], Tensor[DT, Unpack[Batch], Any, N]
]: ...
@overload
def lu(
    a: Tensor[DT, Unpack[Batch], M, N], permute_l: Literal[True], overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Tensor[DT, Unpack[Batch], M, Any], Tensor[DT, Unpack[Batch], Any, N]]: ...
@op
def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p @ l @ u``: ``p`` a permutation matrix ``(..., M, M)`` (real: f32 for c64, f64
    for c128, as SciPy and JAX), ``l`` unit lower ``(..., M, K)``, ``u`` upper ``(..., K, N)``,
    ``K = min(M, N)``; with ``permute_l``, ``(p @ l, u)``.
    ``overwrite_a`` and ``check_finite`` are accepted and ignored (as in JAX)."""
    packed, _, perm = LU.lu(matrix_operand("lu", a, complex_ok=True))
    low, up = _factors(packed)
    real = Aval(packed.aval.shape, _dt.real_dtype(packed.aval.dtype), packed.aval.dims)
    p = D.mT(LU.permutation_matrix(perm, real))  # P a = L U, so a = Pᵀ L U
    if permute_l:
        return wrap(D.mm(D.as_dtype_of(p, low), low)), wrap(up)
    return wrap(p), wrap(low), wrap(up)


@op
def lu_factor(
    a: Tensor[DT, Unpack[Batch], M, N], overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Tensor[DT, Unpack[Batch], M, N], Tensor[i32, Unpack[Batch], Any]]:
    """``(lu, piv)``: the packed factors (``U`` on and above the diagonal, ``L`` below it, its unit diagonal
    implied) and LAPACK's 0-based row swaps (row ``i`` was swapped with row ``piv[i]``)."""
    packed, pivots, _ = LU.lu(matrix_operand("lu_factor", a, complex_ok=True))
    return wrap(packed), wrap(pivots)


def permutation_from_pivots(pivots: Any, m: int) -> Any:
    """The row order (``(..., M)`` int32) that LAPACK's 0-based swaps ``pivots`` (``(..., K)``) make, applied
    in order to ``0, 1, ..., M-1``: a loop of K steps (the swaps are sequential), each O(M) per matrix."""
    piv = as_tensor(pivots)
    rows = broadcast_to(arange(m, dtype=i32), (*piv.aval.shape[:-1], m))

    def swap(i: Any, perm: Any) -> Any:
        at_i, at_p = rows == i, rows == take(piv, i[None], axis=-1)  # piv[..., i], kept as an axis
        held_i = where(at_i, perm, 0).sum(axis=-1, keepdims=True)
        held_p = where(at_p, perm, 0).sum(axis=-1, keepdims=True)
        return where(at_i, held_p, where(at_p, held_i, perm))

    return fori_loop(0, piv.aval.shape[-1], swap, rows)


def rhs_matrices(name: str, a: Atom, b: Any, *, shared_vector: bool) -> tuple[Atom, Atom, bool]:
    """``a`` (square matrices) and the right-hand side ``b`` as matrices ``(..., N, K)``, their batch axes
    broadcast together, and whether ``b`` was vectors: one vector ``(N,)`` for every matrix (``shared_vector``:
    NumPy 2's rule for ``solve``) or one per matrix, ``(..., N)`` of ``a``'s rank less one (SciPy's rule)."""
    rhs = inexact_operand(name, b).atom
    same_dtype(name, a, rhs)
    n = a.aval.shape[-1]
    vector = rhs.aval.ndim == (1 if shared_vector else a.aval.ndim - 1)
    if rhs.aval.ndim == 0 or rhs.aval.shape[-1 if vector else -2] != n:
        raise shape_error(name, f"b must have shape {'(' if shared_vector else '(..., '}{n}) or (..., {n}, K) for "
                          f"a {describe(wrap(a))}, got {describe(wrap(rhs))}")
    if vector:
        rhs = S.reshape(rhs, (*rhs.aval.shape, 1), (*rhs.aval.dims, None))
    batch = broadcast_shapes(name, [_batch(a), _batch(rhs)])
    return _with_batch(a, batch), _with_batch(rhs, batch), vector


def _batch(x: Atom) -> Aval:
    return Aval(x.aval.shape[:-2], x.aval.dtype, x.aval.dims[:-2])


def as_given(x: Atom, vector: bool) -> Atom:
    """Solutions ``(..., N, 1)`` back to vectors ``(..., N)`` where the right-hand side was vectors."""
    return S.reshape(x, x.aval.shape[:-1], x.aval.dims[:-1]) if vector else x


def _pivots(name: str, lu_and_piv: Any) -> tuple[Atom, Any]:
    """The packed factors (square) and their int32 pivots ``(..., N)``, checked."""
    if not isinstance(lu_and_piv, tuple) or len(lu_and_piv) != 2:
        raise TypeError(f"{name}: the first argument must be the pair (lu, piv) that lu_factor returns, got "
                        f"{type(lu_and_piv).__name__}")
    packed = square_operand(name, lu_and_piv[0], complex_ok=True)
    piv = as_tensor(lu_and_piv[1])
    if piv.aval.dtype != np.int32:
        raise dtype_error(name, f"piv must be int32 (as lu_factor returns it), got {describe(piv)}")
    if piv.aval.shape != packed.aval.shape[:-1]:
        raise shape_error(name, f"piv must have shape {packed.aval.shape[:-1]} for lu {describe(wrap(packed))}, got "
                          f"{describe(piv)}")
    return packed, piv


@op
def lu_solve(
    lu_and_piv: tuple[Tensor[DT, Unpack[Batch], N, N], Tensor[i32, Unpack[Batch], N]], b: Tensor[DT, Unpack[Sh]],
    trans: int = 0, overwrite_b: bool = False, check_finite: bool = True,
) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b`` (``trans=0``), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2: the conjugate transpose, the
    same as 1 for real ``a``), from ``lu_factor(a)``. ``b`` is ``(..., N)`` (one vector per matrix) or ``(..., N, K)``; batch axes
    broadcast."""
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    packed, piv = _pivots("lu_solve", lu_and_piv)
    packed, rhs, vector = rhs_matrices("lu_solve", packed, b, shared_vector=False)
    piv = broadcast_to(piv, packed.aval.shape[:-1])
    perm = permutation_from_pivots(piv, packed.aval.shape[-1])[..., None]
    if trans == 0:  # P a = L U: x = U⁻¹ L⁻¹ (P b)
        y = as_tensor(take_along_axis(wrap(rhs), perm, axis=-2)).atom
        y = D.triangular_solve(packed, y, left_side=True, lower=True, transpose_a=False, unit_diagonal=True)
        x = D.triangular_solve(packed, y, left_side=True, lower=False, transpose_a=False)
    else:  # aᵀ = Uᵀ Lᵀ P: x = Pᵀ L⁻ᵀ U⁻ᵀ b (trans=2: the same with conjugate transposes)
        adjoint = trans == 2
        y = D.triangular_solve(packed, rhs, left_side=True, lower=False, transpose_a=True, conjugate_a=adjoint)
        y = D.triangular_solve(packed, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True,
                               conjugate_a=adjoint)
        x = as_tensor(take_along_axis(wrap(y), argsort(perm, axis=-2), axis=-2)).atom
    return wrap(as_given(x, vector))


__all__ = ["lu", "lu_factor", "lu_solve"]
