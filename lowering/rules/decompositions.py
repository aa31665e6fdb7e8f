"""StableHLO for cholesky, triangular_solve, qr and eigh.

XLA expands these itself on every backend: ``stablehlo.cholesky`` and ``stablehlo.triangular_solve`` are ops;
QR is the ``Qr`` custom call (Householder, LAPACK's packed ``geqrf`` layout: R above the diagonal, reflectors
below, plus their ``taus``) and ``ProductOfElementaryHouseholderReflectors`` forms Q; eigh is the ``Eigh``
custom call (parallel Jacobi), whose backend config is ``lower,sort,max_sweeps,tol``. All batch over leading
axes. Only the CPU expansion is tested here; the GPU path of these custom calls is not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import decompositions as D
from ..emit import Emitter, Value, i64_array, lowers
from .elementwise import compare, widen


def _triangle(em: Emitter, x: Value, keep: str) -> Value:
    """``x`` with elements where ``row <keep> col`` fails set to zero (``GE``: lower triangle, ``LE``: upper)."""
    n = x.aval.ndim
    index = Aval(x.aval.shape, dtypes.DEFAULT_INT)
    rows = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 2} : i64")[0]
    cols = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 1} : i64")[0]
    mask = compare(em, rows, cols, keep)
    zero = widen(em, em.scalar(0, x.aval.dtype), x.aval.shape)
    return em.op("stablehlo.select", [mask, x, zero], [x.aval])[0]


def _slice(em: Emitter, x: Value, limits: Sequence[int]) -> Value:
    """The leading ``limits`` of every axis."""
    aval = Aval(tuple(limits), x.aval.dtype)
    props = (
        f"start_indices = {i64_array([0] * len(limits))}, limit_indices = {i64_array(limits)}, "
        f"strides = {i64_array([1] * len(limits))}"
    )
    return em.op("stablehlo.slice", [x], [aval], props)[0]


def _pad(em: Emitter, x: Value, shape: Sequence[int]) -> Value:
    """``x`` padded with zeros at the end of every axis up to ``shape``."""
    highs = [t - s for s, t in zip(x.aval.shape, shape)]
    props = (
        f"edge_padding_low = {i64_array([0] * len(shape))}, edge_padding_high = {i64_array(highs)}, "
        f"interior_padding = {i64_array([0] * len(shape))}"
    )
    return em.op("stablehlo.pad", [x, em.scalar(0, x.aval.dtype)], [Aval(tuple(shape), x.aval.dtype)], props)[0]


def _matmul(em: Emitter, x: Value, y: Value, transpose_x: bool = False) -> Value:
    """Batched ``x @ y`` (``xᵀ @ y`` with ``transpose_x``) over the last two axes."""
    n = x.aval.ndim
    batch = list(range(n - 2))
    contract = n - 2 if transpose_x else n - 1
    rows = x.aval.shape[n - 1] if transpose_x else x.aval.shape[n - 2]
    out = Aval((*x.aval.shape[:-2], rows, y.aval.shape[-1]), x.aval.dtype)
    numbers = (
        f"#stablehlo.dot<lhs_batching_dimensions = {batch}, rhs_batching_dimensions = {batch}, "
        f"lhs_contracting_dimensions = [{contract}], rhs_contracting_dimensions = [{n - 2}]>"
    )
    return em.op("stablehlo.dot_general", [x, y], [out], f"dot_dimension_numbers = {numbers}")[0]


@lowers(D.cholesky_p)
def _cholesky(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    factor = em.op("stablehlo.cholesky", args, outs, "lower = true")[0]
    return [_triangle(em, factor, "GE")]  # the other triangle is unspecified


@lowers(D.triangular_solve_p)
def _triangular_solve(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, left_side: bool, lower: bool, transpose_a: bool,
    unit_diagonal: bool,
) -> list[Value]:
    props = (
        f"left_side = {flag(left_side)}, lower = {flag(lower)}, unit_diagonal = {flag(unit_diagonal)}, "
        f"transpose_a = #stablehlo<transpose {'TRANSPOSE' if transpose_a else 'NO_TRANSPOSE'}>"
    )
    return em.op("stablehlo.triangular_solve", args, outs, props)


def flag(value: bool) -> str:
    return "true" if value else "false"


@lowers(D.qr_p)
def _qr(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, full_matrices: bool) -> list[Value]:
    (a,) = args
    *batch, m, n = a.aval.shape
    k = min(m, n)
    taus_aval = Aval((*batch, k), a.aval.dtype)
    packed, taus = em.op("stablehlo.custom_call", [a], [a.aval, taus_aval], 'call_target_name = "Qr"')
    q_aval, r_aval, det_aval = outs
    r = _triangle(em, _slice(em, packed, r_aval.shape) if r_aval.shape != a.aval.shape else packed, "LE")
    # Q from the reflectors: as many columns of the packed matrix as Q has (zero columns and taus add nothing).
    cols = q_aval.shape[-1]
    reflectors = _slice(em, packed, (*batch, m, cols)) if cols < n else _pad(em, packed, (*batch, m, cols))
    q_taus = _pad(em, taus, (*batch, cols)) if cols > k else taus
    q = em.op(
        "stablehlo.custom_call", [reflectors, q_taus], [q_aval],
        'call_target_name = "ProductOfElementaryHouseholderReflectors"',
    )[0]
    # Every reflector with a nonzero tau is a reflection (determinant -1); tau = 0 is the identity.
    flips = compare(em, taus, widen(em, em.scalar(0, a.aval.dtype), taus.aval.shape), "NE")
    signs = em.op(
        "stablehlo.select",
        [flips, widen(em, em.scalar(-1, a.aval.dtype), taus.aval.shape), widen(em, em.scalar(1, a.aval.dtype), taus.aval.shape)],
        [taus.aval],
    )[0]
    scalar = Aval((), a.aval.dtype)
    body = em.region([scalar, scalar], lambda r_, xs: r_.op("stablehlo.multiply", xs, [scalar]))
    det = em.op(
        "stablehlo.reduce", [signs, em.scalar(1, a.aval.dtype)], [det_aval],
        f"dimensions = {i64_array([len(batch)])}", [body],
    )[0]
    return [q, r, det]


@lowers(D.eigh_p)
def _eigh(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (a,) = args
    w_aval, v_aval = outs
    tol = float(np.finfo(a.aval.dtype).eps)
    config = f'backend_config = "1,1,100,{tol!r}", call_target_name = "Eigh"'
    v, w = em.op("stablehlo.custom_call", [a], [v_aval, w_aval], config)
    if a.aval.dtype == np.float64:
        v = _refine_eigenvectors(em, a, w, v)
    return [w, _canonical_signs(em, v)]


def _canonical_signs(em: Emitter, v: Value) -> Value:
    """Eigenvectors with their largest-magnitude component positive: a deterministic sign for each (Jacobi's
    and LAPACK's signs differ), locally constant, so the derivative rules hold unchanged."""
    aval = v.aval
    n = aval.ndim
    columns = Aval((*aval.shape[:-2], aval.shape[-1]), aval.dtype)
    scalar = Aval((), aval.dtype)
    magnitude = em.op("stablehlo.abs", [v], [aval])[0]
    largest_body = em.region([scalar, scalar], lambda r, xs: r.op("stablehlo.maximum", xs, [scalar]))
    largest = em.op(
        "stablehlo.reduce", [magnitude, em.scalar(0, aval.dtype)], [columns], f"dimensions = {i64_array([n - 2])}",
        [largest_body],
    )[0]
    spread = em.op(
        "stablehlo.broadcast_in_dim", [largest], [aval], f"broadcast_dimensions = {i64_array([*range(n - 2), n - 1])}"
    )[0]
    zero = widen(em, em.scalar(0, aval.dtype), aval.shape)
    picked = em.op("stablehlo.select", [compare(em, magnitude, spread, "EQ"), v, zero], [aval])[0]
    sum_body = em.region([scalar, scalar], lambda r, xs: r.op("stablehlo.add", xs, [scalar]))
    total = em.op(
        "stablehlo.reduce", [picked, em.scalar(0, aval.dtype)], [columns], f"dimensions = {i64_array([n - 2])}",
        [sum_body],
    )[0]
    negative = compare(em, total, widen(em, em.scalar(0, aval.dtype), columns.shape), "LT")
    sign = em.op(
        "stablehlo.select",
        [negative, widen(em, em.scalar(-1, aval.dtype), columns.shape), widen(em, em.scalar(1, aval.dtype), columns.shape)],
        [columns],
    )[0]
    signs = em.op(
        "stablehlo.broadcast_in_dim", [sign], [aval], f"broadcast_dimensions = {i64_array([*range(n - 2), n - 1])}"
    )[0]
    return em.op("stablehlo.multiply", [v, signs], [aval])[0]


def _refine_eigenvectors(em: Emitter, a: Value, w: Value, v: Value) -> Value:
    """One first-order correction of the eigenvectors: XLA's Jacobi skips rotations whose off-diagonal entry is
    below float32 precision, which leaves float64 eigenvectors accurate to only ~1e-9.

    With ``B = Vᵀ sym(A) V`` (diagonal up to that residue), ``V ← V (I + E)``, ``E_ij = B_ij / (w_j - w_i)``:
    E is antisymmetric, so V stays orthogonal to second order; pairs with nearly equal eigenvalues are left
    alone (any basis of their eigenspace is valid).
    """
    aval = a.aval
    n = aval.ndim
    lower = _triangle(em, a, "GE")
    strict = _triangle(em, a, "GT")
    perm = i64_array([*range(n - 2), n - 1, n - 2])
    sym = em.op("stablehlo.add", [lower, em.op("stablehlo.transpose", [strict], [aval], f"permutation = {perm}")[0]], [aval])[0]
    b = _matmul(em, v, _matmul(em, sym, v), transpose_x=True)
    batch = list(range(n - 2))
    w_col = em.op("stablehlo.broadcast_in_dim", [w], [aval], f"broadcast_dimensions = {i64_array([*batch, n - 1])}")[0]
    w_row = em.op("stablehlo.broadcast_in_dim", [w], [aval], f"broadcast_dimensions = {i64_array([*batch, n - 2])}")[0]
    gap = em.op("stablehlo.subtract", [w_col, w_row], [aval])[0]  # [i, j] = w[j] - w[i]
    big = em.op("stablehlo.multiply", [em.op("stablehlo.abs", [b], [aval])[0], widen(em, em.scalar(1e4, aval.dtype), aval.shape)], [aval])[0]
    usable = compare(em, em.op("stablehlo.abs", [gap], [aval])[0], big, "GT")
    one = widen(em, em.scalar(1, aval.dtype), aval.shape)
    zero = widen(em, em.scalar(0, aval.dtype), aval.shape)
    safe_gap = em.op("stablehlo.select", [usable, gap, one], [aval])[0]
    correction = em.op("stablehlo.select", [usable, em.op("stablehlo.divide", [b, safe_gap], [aval])[0], zero], [aval])[0]
    return em.op("stablehlo.add", [v, _matmul(em, v, correction)], [aval])[0]
