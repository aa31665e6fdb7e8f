"""StableHLO for ``svd``: LAPACK's divide-and-conquer ``gesdd`` on CPU (jaxlib's typed-FFI kernel, batched over
leading axes; ``?gesdd`` for f32/f64, ``cgesdd``/``zgesdd`` for c64/c128, one signature: the operand, then real
singular values, ``u``, ``vh`` and ``info``), with NaNs in every output of a matrix whose ``info`` is nonzero.

XLA has no SVD expander. Where gesdd is not available (other platforms, CPU without SciPy or with
``TENSORSTAGE_LAPACK=0``) the SVD is built from ops XLA lowers everywhere (see :func:`_svd_by_eigh`): QR, then
the Hermitian eigenproblem of the augmented matrix ``[[0, R], [Rᴴ, 0]]``, whose eigenvalues are ``±σ`` with
eigenvectors ``[u; ±v] / √2``. That keeps SVD accuracy (``AᴴA`` would square the condition number).

After either, the singular vectors get their deterministic phases (see ``staging/primitives/svd.py``): each
column of ``u`` has its largest-magnitude component real and positive.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import svd as SV
from .. import lapack
from ..emit import Emitter, Value, i64_array, lowers
from .decompositions import (
    _unit_phase, apply_signs, batched_matmul, conjugate, eigh_lowering, in_f32, lapack_call, leading_slice,
    masked_triangle, matrix_adjoint, matrix_diagonal, nan_where, nan_where_failed, non_finite, qr_lowering, sliced,
    vector_signs, zero_padded,
)
from .elementwise import compare, widen


def _canonical(em: Emitter, u: Value, vh: Value, k: int) -> tuple[Value, Value]:
    """``u`` with each column's largest-magnitude component real and positive (column j times ``c_j``, the
    conjugate of that component's phase), and the first ``k`` rows of ``vh`` times ``conj(c_j)`` to match; rows
    of ``vh`` beyond ``k`` (complete ``vh`` of a wide matrix) get the rule on their own."""
    u_signs = vector_signs(em, u, -2)
    batch = u.aval.shape[:-2]
    cols, rows = u.aval.shape[-1], vh.aval.shape[-2]
    paired = conjugate(em, u_signs if cols == k else leading_slice(em, u_signs, (*batch, k)))
    if rows > k:
        own = vector_signs(em, vh, -1)
        nb = len(batch)
        rest = sliced(em, own, [0] * nb + [k], [*batch, rows])
        paired = em.op(
            "stablehlo.concatenate", [paired, rest], [Aval((*batch, rows), vh.aval.dtype)], f"dimension = {nb} : i64"
        )[0]
    return apply_signs(em, u, u_signs, -2), apply_signs(em, vh, paired, -1)


def _identity(em: Emitter, aval: Aval) -> Value:
    ones = widen(em, em.scalar(1, aval.dtype), aval.shape)
    return masked_triangle(em, ones, "EQ")


@lowers(SV.svd_p)
@in_f32
def _svd(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, full_matrices: bool, compute_uv: bool
) -> list[Value]:
    (a,) = args
    *batch, m, n = a.aval.shape
    k = min(m, n)
    dtype = a.aval.dtype
    if compute_uv:
        u_aval, s_aval, vh_aval = outs
    else:
        (s_aval,) = outs
        u_aval = Aval((*batch, m, k), dtype)
        vh_aval = Aval((*batch, k, n), dtype)
    if k == 0:  # nothing to factor: empty singular values, identity (or empty) singular vectors
        s = widen(em, em.scalar(0, s_aval.dtype), s_aval.shape)
        if not compute_uv:
            return [s]
        return [_identity(em, u_aval), s, _identity(em, vh_aval)]
    target = lapack.target("gesdd", dtype, em.platform)
    if target is None:
        return _svd_by_eigh(em, a, full_matrices=full_matrices, compute_uv=compute_uv)
    info = Aval(tuple(batch), np.dtype(np.int32))
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    _, s, u, vh, status = lapack_call(
        em, target, [a], [a.aval, s_aval, u_aval, vh_aval, info], column_major=True, mode=mode
    )
    s = nan_where_failed(em, status, s)
    if not compute_uv:
        return [s]
    u, vh = _canonical(em, nan_where_failed(em, status, u), nan_where_failed(em, status, vh), k)
    return [u, s, vh]


# ------------------------------------------------------------------------------------ without LAPACK


def _svd_by_eigh(em: Emitter, a: Value, *, full_matrices: bool, compute_uv: bool) -> list[Value]:
    """The SVD from QR and a symmetric eigensolver (XLA's expansions, on every platform); a wide matrix through
    its transpose. A matrix holding a NaN or an infinity gets all-NaN outputs, as LAPACK's path gives it."""
    *batch, m, n = a.aval.shape
    bad = non_finite(em, a)
    if m >= n:
        outs = _tall_svd(em, a, full_matrices=full_matrices, compute_uv=compute_uv)
    else:  # Aᴴ = U S Vᴴ, so A = V S Uᴴ
        outs = _tall_svd(em, matrix_adjoint(em, a), full_matrices=full_matrices, compute_uv=compute_uv)
        if compute_uv:
            u_t, s_t, vh_t = outs
            outs = [matrix_adjoint(em, vh_t), s_t, matrix_adjoint(em, u_t)]
    outs = [nan_where(em, bad, x) for x in outs]
    if not compute_uv:
        return outs
    u, s, vh = outs
    u, vh = _canonical(em, u, vh, min(m, n))
    return [u, s, vh]


def _tall_svd(em: Emitter, a: Value, *, full_matrices: bool, compute_uv: bool) -> list[Value]:
    """``(u, s, vh)`` (or ``(s,)``) of tall matrices (M >= N), signs not yet canonical.

    ``A = Q R`` first (for M > N), so the eigenproblem is 2N x 2N whatever M is, and a complete ``u`` is
    ``[Q₁ U_R, Q₂]``. The N largest eigenvalues of ``H = [[0, R], [Rᴴ, 0]]`` are the singular values (clamped at
    zero: rounding leaves ~eps·|A| either side of a zero one). Their eigenvectors' halves are ``u``'s and ``v``'s
    columns (times ``1/√2``) when ``σ`` is distinct from the rest of H's spectrum, ``-σ`` included; for zero (or
    tiny) singular values the ``±σ`` eigenvectors mix, the halves are no longer orthonormal and some may vanish.
    So each half goes through a QR with a real positive diagonal: in descending ``σ`` order this normalizes the
    well-separated columns (changing them only by rounding) and replaces the rest with an orthonormal basis of
    what is left, which for ``σ`` ~ 0 is as good as any (its error in ``U S Vᵀ`` is ``σ``), keeping both factors
    unitary to working precision."""
    *batch, m, n = a.aval.shape
    dtype = a.aval.dtype
    nb = len(batch)
    q: Value | None = None
    if m > n:
        rows = m if full_matrices else n
        q, r, _ = qr_lowering(
            em, [a], [Aval((*batch, m, rows), dtype), Aval((*batch, rows, n), dtype), Aval(tuple(batch), dtype)],
            full_matrices=full_matrices,
        )
        r = leading_slice(em, r, (*batch, n, n)) if rows != n else r
    else:
        r = a
    square = Aval((*batch, 2 * n, 2 * n), dtype)
    h = em.op("stablehlo.add", [_place(em, r, n, "high"), _place(em, matrix_adjoint(em, r), n, "low")], [square])[0]
    w, vectors = eigh_lowering(em, [h], [Aval((*batch, 2 * n), dtypes.real_dtype(dtype)), square])
    top = _reverse(em, sliced(em, w, [0] * nb + [n], [*batch, 2 * n]), nb)
    s = em.op("stablehlo.maximum", [top, widen(em, em.scalar(0, top.aval.dtype), top.aval.shape)], [top.aval])[0]
    if not compute_uv:
        return [s]
    top_vectors = _reverse(em, sliced(em, vectors, [0] * (nb + 1) + [n], [*batch, 2 * n, 2 * n]), nb + 1)
    u_r = _orthonormal(em, sliced(em, top_vectors, [0] * (nb + 2), [*batch, n, n]))
    v = _orthonormal(em, sliced(em, top_vectors, [0] * nb + [n, 0], [*batch, 2 * n, n]))
    if q is None:
        u = u_r
    elif not full_matrices:
        u = batched_matmul(em, q, u_r)
    else:
        first = batched_matmul(em, sliced(em, q, [0] * (nb + 2), [*batch, m, n]), u_r)
        rest = sliced(em, q, [0] * (nb + 1) + [n], [*batch, m, m])
        u = em.op(
            "stablehlo.concatenate", [first, rest], [Aval((*batch, m, m), dtype)], f"dimension = {nb + 1} : i64"
        )[0]
    return [u, s, matrix_adjoint(em, v)]


def _orthonormal(em: Emitter, x: Value) -> Value:
    """The Q of square matrices' QR, its columns rotated so that R's diagonal is real and non-negative: column j
    is column j of ``x`` made orthogonal to the columns before it and normalized (any unit vector orthogonal to
    them where nothing is left of it)."""
    aval = x.aval
    q, r, _ = qr_lowering(em, [x], [aval, aval, Aval(aval.shape[:-2], aval.dtype)], full_matrices=False)
    d = matrix_diagonal(em, r)
    if dtypes.is_complex(aval.dtype):
        return apply_signs(em, q, _unit_phase(em, d), -2)
    negative = compare(em, d, widen(em, em.scalar(0, aval.dtype), d.aval.shape), "LT")
    minus_one, one = (widen(em, em.scalar(v, aval.dtype), d.aval.shape) for v in (-1, 1))
    signs = em.op("stablehlo.select", [negative, minus_one, one], [d.aval])[0]
    return apply_signs(em, q, signs, -2)


def _reverse(em: Emitter, x: Value, axis: int) -> Value:
    return em.op("stablehlo.reverse", [x], [x.aval], f"dimensions = {i64_array([axis])}")[0]


def _place(em: Emitter, x: Value, offset: int, corner: str) -> Value:
    """Square ``x`` (N x N) zero-padded to 2N x 2N, at the top right (``corner="high"``: columns from ``offset``)
    or bottom left (``"low"``: rows from ``offset``)."""
    nb = x.aval.ndim - 2
    low = [0] * nb + ([0, offset] if corner == "high" else [offset, 0])
    high = [0] * nb + ([offset, 0] if corner == "high" else [0, offset])
    return zero_padded(em, x, low, high)
