"""StableHLO for cholesky, triangular_solve, qr and eigh.

XLA expands these itself on every backend: ``stablehlo.cholesky`` and ``stablehlo.triangular_solve`` are ops;
QR is the ``Qr`` custom call (Householder, LAPACK's packed ``geqrf`` layout: R above the diagonal, reflectors
below, plus their ``taus``) and ``ProductOfElementaryHouseholderReflectors`` forms Q; eigh is the ``Eigh``
custom call (parallel Jacobi), whose backend config is ``lower,sort,max_sweeps,tol``. All batch over leading
axes. Only the CPU expansion is tested here; the GPU path of these custom calls is not.

On CPU, when jaxlib's LAPACK kernels and SciPy are available (``lowering/lapack.py``), cholesky, eigh and qr
call LAPACK's ``potrf``, ``syevd`` and ``geqrf``/``orgqr`` instead (typed-FFI custom calls, batched over
leading axes), with the same semantics: the lower triangle read, NaNs where the factorization fails, the same
eigenvector signs. triangular_solve stays XLA's (LAPACK's trsm measured only 1.2-1.4x faster for matrices).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import decompositions as D
from .. import lapack
from ..emit import Emitter, Value, i64_array, lowers, tensor_type
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


def _lapack_target(em: Emitter, kernel: str, a: Aval) -> str | None:
    """The LAPACK custom-call target for ``a`` on this emitter's platform, if one is to be used."""
    if min(a.shape) == 0:  # nothing to factor: XLA's expansion handles empty arrays
        return None
    return lapack.target(kernel, a.dtype, em.platform)


def _layout(rank: int, column_major: bool) -> str:
    """Minor-to-major order: row major, or column major matrices (the last two axes) in row-major batches."""
    if not rank:
        return "dense<> : tensor<0xindex>"
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if column_major else range(rank - 1, -1, -1)
    return f"dense<[{', '.join(str(d) for d in order)}]> : tensor<{rank}xindex>"


def _lapack_call(
    em: Emitter, target: str, operands: Sequence[Value], results: Sequence[Aval], column_major: bool = False,
    **chars: str,
) -> list[Value]:
    """``target`` (a typed-FFI LAPACK kernel, batched over leading axes) on ``operands``, its first result
    aliasing the first operand; ``chars`` are its one-character options (``uplo = "U"``). Matrices are passed
    column major or, by default, row major: LAPACK then sees each matrix transposed, which the callers use."""
    rank = operands[0].aval.ndim
    config = ", ".join(f"{k} = {ord(v)} : ui8" for k, v in sorted(chars.items()))
    props = (
        f'api_version = 1 : i32, backend_config = "", call_target_name = "{target}", '
        f"operand_layouts = [{', '.join(_layout(v.aval.ndim, column_major and v.aval.ndim == rank) for v in operands)}], "
        "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = "
        f"[{'0' if len(results) > 1 else ''}], operand_index = 0, operand_tuple_indices = []>], "
        f"result_layouts = [{', '.join(_layout(r.ndim, column_major and r.ndim == rank) for r in results)}]"
    )
    types = [tensor_type(r) for r in results]
    base = em.fresh()
    lhs = f"{base}:{len(results)}" if len(results) > 1 else base
    em.lines.append(
        f'{em.indent}{lhs} = "stablehlo.custom_call"({", ".join(v.name for v in operands)}) <{{{props}}}> '
        f"{{mhlo.backend_config = {{{config}}}}} : ({', '.join(v.type for v in operands)}) -> "
        f"({', '.join(types)}) {em.loc}"
    )
    if len(results) == 1:
        return [Value(base, results[0], types[0])]
    return [Value(f"{base}#{i}", r, t) for i, (r, t) in enumerate(zip(results, types))]


def _nan_where_failed(em: Emitter, info: Value, x: Value) -> Value:
    """``x`` with every matrix (or vector) whose LAPACK ``info`` is nonzero replaced by NaNs."""
    batch = info.aval.ndim
    failed = compare(em, info, widen(em, em.scalar(0, info.aval.dtype), info.aval.shape), "NE")
    mask = em.op(
        "stablehlo.broadcast_in_dim", [failed], [Aval(x.aval.shape, dtypes.BOOL)],
        f"broadcast_dimensions = {i64_array(list(range(batch)))}",
    )[0]
    nan = widen(em, em.scalar(float("nan"), x.aval.dtype), x.aval.shape)
    return em.op("stablehlo.select", [mask, nan, x], [x.aval])[0]


@lowers(D.cholesky_p)
def _cholesky(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (a,) = args
    target = _lapack_target(em, "potrf", a.aval)
    if target is not None:
        # LAPACK sees Aᵀ: its upper triangle is A's lower one, and its factor U (Aᵀ = UᵀU) reads back as L = Uᵀ.
        info = Aval(a.aval.shape[:-2], np.dtype(np.int32))
        factor, status = _lapack_call(em, target, [a], [a.aval, info], uplo="U")
        return [_nan_where_failed(em, status, _triangle(em, factor, "GE"))]
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
    geqrf = _lapack_target(em, "geqrf", a.aval)
    if geqrf is not None:
        packed, taus = _lapack_call(em, geqrf, [a], [a.aval, taus_aval], column_major=True)
    else:
        packed, taus = em.op("stablehlo.custom_call", [a], [a.aval, taus_aval], 'call_target_name = "Qr"')
    q_aval, r_aval, det_aval = outs
    r = _triangle(em, _slice(em, packed, r_aval.shape) if r_aval.shape != a.aval.shape else packed, "LE")
    # Q from the reflectors: as many columns of the packed matrix as Q has (zero columns and taus add nothing).
    cols = q_aval.shape[-1]
    reflectors = _slice(em, packed, (*batch, m, cols)) if cols < n else _pad(em, packed, (*batch, m, cols))
    q_taus = _pad(em, taus, (*batch, cols)) if cols > k else taus
    orgqr = _lapack_target(em, "orgqr", a.aval)
    if orgqr is not None:
        q = _lapack_call(em, orgqr, [reflectors, q_taus], [q_aval], column_major=True)[0]
    else:
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
    target = _lapack_target(em, "syevd", a.aval)
    if target is not None:
        # LAPACK sees Aᵀ: its upper triangle is A's lower one; its eigenvector columns read back as rows.
        info = Aval(a.aval.shape[:-2], np.dtype(np.int32))
        rows, w, status = _lapack_call(em, target, [a], [v_aval, w_aval, info], mode="V", uplo="U")
        n = v_aval.ndim
        perm = i64_array([*range(n - 2), n - 1, n - 2])
        v = em.op("stablehlo.transpose", [rows], [v_aval], f"permutation = {perm}")[0]
        return [_nan_where_failed(em, status, w), _canonical_signs(em, _nan_where_failed(em, status, v))]
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
