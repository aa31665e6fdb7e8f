"""LU factorization with partial pivoting, as ``jax.lax.linalg.lu``: one primitive, ``lu``, on the last two axes
(leading axes are batch axes) of a float or complex matrix ``a`` of shape ``(..., M, N)``, square or not.

Outputs, with ``K = min(M, N)``:

- ``lu`` ``(..., M, N)``: the packed factors, LAPACK's layout: ``U`` on and above the diagonal, the strict lower
  part of the unit lower-triangular ``L`` below it;
- ``pivots`` ``(..., K)`` int32: LAPACK's row swaps, 0-based (step ``i`` swapped rows ``i`` and ``pivots[i]``);
- ``permutation`` ``(..., M)`` int32: the row order those swaps make, ``a[..., permutation, :] = L @ U``.

A singular matrix keeps its zero pivot, as LAPACK does (no error, no NaN); a solve with its factors then gives
infs or NaNs. Lowering (``lowering/rules/lu.py``): LAPACK's ``getrf`` on CPU; elsewhere, and with LAPACK disabled,
an unblocked right-looking elimination (a while loop over columns) with the same pivoting rule.

Derivatives (JAX's rule, De Hoog, Anderssen and Lukas): with ``L`` padded to ``M x M`` and ``U`` to ``N x N`` by
identity blocks, ``X = P dA`` the permuted tangent and ``Φ = L⁻¹ X U⁻¹``, ``d(lu) = L tril(Φ, -1) + triu(Φ) U``.
The pivots and the permutation are locally constant. LU is holomorphic, so for complex ``a`` the same rule holds
with no conjugation, and its transpose under the pairing ``Re(sum(a b))`` (JAX's) is the plain transpose. The
reverse rule is that map transposed, written with triangular solves, so it differentiates again and batches like
the rest. The pivot row is LAPACK's (``i?amax``: largest ``|Re| + |Im|`` for complex ``a``) on every platform.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from . import structural as S
from .decompositions import mm, mT, triangle, triangular_solve
from .slicing import iota, pad, renamed, slice_in_dim

lu_p = Primitive("lu", multiple_results=True)
_I32 = np.dtype(np.int32)


@lu_p.def_shape
def _lu_shape(a: Aval) -> tuple[Aval, Aval, Aval]:
    op = "lu"
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.ndim < 2:
        raise ShapeError(f"expects a (batch of) matrices in the last two axes, got {a}", op)
    *batch, m, n = a.shape
    *names, rows, cols = a.dims
    k, k_name = (m, rows) if m <= n else (n, cols)
    return a, Aval((*batch, k), _I32, (*names, k_name)), Aval((*batch, m), _I32, (*names, rows))


def lu(a: Atom) -> tuple[Atom, Atom, Atom]:
    """``(lu, pivots, permutation)`` of every matrix of ``a``: packed factors with ``a[permutation] = L U``."""
    return tuple(bind(lu_p, a))


# ------------------------------------------------------------------------------------- the factors, padded


def _fitted(x: Atom, axis: int, size: int, like: Aval) -> Atom:
    """``x`` cut or zero-padded along matrix ``axis`` (-1 or -2) to ``size``, with the dim names of ``like``."""
    pos = x.aval.ndim + axis
    have = x.aval.shape[pos]
    if have > size:
        x = slice_in_dim(x, 0, size, pos)
    elif have < size:
        config = [(0, 0, 0)] * x.aval.ndim
        config[pos] = (0, size - have, 0)
        x = pad(x, E.scalar(0, x), config)
    return renamed(x, like)


def _with_ones(x: Atom, first: int) -> Atom:
    """``x`` (square matrices) with ones on the diagonal from index ``first`` on."""
    aval = x.aval
    n = aval.ndim
    rows = iota(dtypes.DEFAULT_INT, aval.shape, n - 2, aval.dims)
    cols = iota(dtypes.DEFAULT_INT, aval.shape, n - 1, aval.dims)
    on = bind(E.and_p, E.eq(rows, cols), bind(E.ge_p, rows, E.scalar(first, rows)))
    return E.select(on, S.full_like(aval, 1), x)


def unit_lower(packed: Atom) -> Atom:
    """``L`` of the packed factors as ``M x M`` matrices (identity columns past ``K``), both axes named as rows."""
    aval = packed.aval
    m = aval.shape[-2]
    like = Aval((*aval.shape[:-1], m), aval.dtype, (*aval.dims[:-1], aval.dims[-2]))
    return _with_ones(triangle(_fitted(packed, -1, m, like), "gt"), 0)


def upper(packed: Atom) -> Atom:
    """``U`` of the packed factors as ``N x N`` matrices (identity rows past ``K``), both axes named as columns."""
    aval = packed.aval
    m, n = aval.shape[-2:]
    like = Aval((*aval.shape[:-2], n, n), aval.dtype, (*aval.dims[:-2], aval.dims[-1], aval.dims[-1]))
    return _with_ones(triangle(_fitted(packed, -2, n, like), "le"), min(m, n))


def permutation_matrix(permutation: Atom, like: Aval) -> Atom:
    """``P`` (``M x M``, ``like``'s dtype and batch axes) with ``P @ x = x[permutation]``: ``P[i, j] = 1`` where
    ``permutation[i] = j``. Products with it are exact for finite operands (each sum has one nonzero term)."""
    m = permutation.aval.shape[-1]
    n = like.ndim
    shape = (*like.shape[:-2], m, m)
    names = (*like.dims[:-2], like.dims[-2], like.dims[-2])
    source = S.broadcast_in_dim(permutation, shape, tuple(range(n - 1)), names)
    hit = E.eq(source, iota(_I32, shape, n - 1, names))
    aval = Aval(shape, like.dtype, names)
    return E.select(hit, S.full_like(aval, 1), S.full_like(aval, 0))


# -------------------------------------------------------------------------------------------- derivatives


def _phi_parts(x: Atom) -> tuple[Atom, Atom]:
    return triangle(x, "gt"), triangle(x, "le")


@lu_p.def_jvp
def _lu_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (t,), (packed, pivots, perm) = tangents, outs
    zeros = (Zero(pivots.aval), Zero(perm.aval))
    if is_zero(t):
        return (Zero(packed.aval), *zeros)
    low, up = unit_lower(packed), upper(packed)
    x = mm(permutation_matrix(perm, packed.aval), t)  # type: ignore[arg-type]
    phi = triangular_solve(low, x, left_side=True, lower=True, transpose_a=False, unit_diagonal=True)
    phi = triangular_solve(up, phi, left_side=False, lower=False, transpose_a=False)  # L⁻¹ X U⁻¹
    strict, upper_part = _phi_parts(phi)
    return (E.add(mm(low, strict), mm(upper_part, up)), *zeros)


@lu_p.def_vjp
def _lu_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (a,), (ct, _, _), (packed, _, perm) = primals, cts, outs
    if is_zero(ct) or not wants[0]:
        return (Zero(a.aval),)
    # The JVP transposed, step by step in reverse: Φ̄ = tril(Lᵀ C, -1) + triu(C Uᵀ), X̄ = L⁻ᵀ Φ̄ U⁻ᵀ, Ā = Pᵀ X̄.
    c: Atom = ct  # type: ignore[assignment]
    low, up = unit_lower(packed), upper(packed)
    phi = E.add(_phi_parts(mm(mT(low), c))[0], _phi_parts(mm(c, mT(up)))[1])
    x = triangular_solve(up, phi, left_side=False, lower=False, transpose_a=True)
    x = triangular_solve(low, x, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
    return (renamed(mm(mT(permutation_matrix(perm, packed.aval)), x), a.aval),)


@lu_p.def_batch
def _lu_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    (a,), (d,) = args, dims
    return lu(S.moveaxis(a, d, 0)), (0, 0, 0)  # type: ignore[arg-type]  # its only operand is the batched one
