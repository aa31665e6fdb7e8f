"""StableHLO for cholesky, triangular_solve, qr, eigh, solve and slogdet.

XLA expands these itself on every backend: ``stablehlo.cholesky`` and ``stablehlo.triangular_solve`` are ops;
QR is the ``Qr`` custom call (Householder, LAPACK's packed ``geqrf`` layout: R above the diagonal, reflectors
below, plus their ``taus``) and ``ProductOfElementaryHouseholderReflectors`` forms Q; eigh is the ``Eigh``
custom call (parallel Jacobi), whose backend config is ``lower,sort,max_sweeps,tol``. All batch over leading
axes. Only the CPU expansion is tested here; the GPU path of these custom calls is not.

On CPU, when jaxlib's LAPACK kernels and SciPy are available (``lowering/lapack.py``), cholesky, eigh and qr
call LAPACK's ``potrf``, ``syevd`` and ``geqrf``/``orgqr`` instead (typed-FFI custom calls, batched over
leading axes), with the same semantics: the lower triangle read, NaNs where the factorization fails, the same
eigenvector signs. triangular_solve stays XLA's (LAPACK's trsm measured only 1.2-1.4x faster for matrices).

solve and slogdet pick their factorization here (staging is platform-agnostic): LAPACK's LU (``getrf``, partial
pivoting, as NumPy) on CPU, then a row permutation (a short while loop turns the pivots into gather indices) and
LAPACK's ``trsm`` on the packed factors (XLA's triangular solve measured several times slower on batches of
vectors); elsewhere (GPU, no SciPy, ``TENSORSTAGE_LAPACK=0``) the QR lowering above, ``A⁻¹B = R⁻¹QᵀB`` and
``det A = det(Q) · prod(diag R)``.

Complex matrices (c64, c128) take the same paths: LAPACK's c/z kernels (``heevd`` and ``ungqr`` for ``syevd`` and
``orgqr``) on CPU, where the row-major buffer that LAPACK reads as ``Aᵀ`` is the conjugate of the Hermitian matrix
meant (eigenvectors come back conjugated); XLA's expansions elsewhere, with conjugate transposes where the real
formulas transpose (``A⁻¹ = R⁻¹ Qᴴ``). Householder QR's ``det Q`` is then ``∏ (1 - τᵢ vᵢᴴ vᵢ)``, of modulus 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import decompositions as D
from .. import lapack
from ..emit import Emitter, Value, i64_array, int_list, layout, lowers, tensor_type
from .complex_parts import _conj
from .elementwise import compare, widen
from .linalg import precision_props


def masked_triangle(em: Emitter, x: Value, keep: str) -> Value:
    """``x`` with elements where ``row <keep> col`` fails set to zero (``GE``: lower triangle, ``LE``: upper)."""
    n = x.aval.ndim
    index = Aval(x.aval.shape, dtypes.DEFAULT_INT)
    rows = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 2} : i64")[0]
    cols = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 1} : i64")[0]
    mask = compare(em, rows, cols, keep)
    zero = widen(em, em.scalar(0, x.aval.dtype), x.aval.shape)
    return em.op("stablehlo.select", [mask, x, zero], [x.aval])[0]


def sliced(em: Emitter, x: Value, starts: Sequence[int], limits: Sequence[int]) -> Value:
    """``x[starts:limits]`` along every axis."""
    aval = Aval(tuple(hi - lo for lo, hi in zip(starts, limits)), x.aval.dtype)
    props = (
        f"start_indices = {i64_array(list(starts))}, limit_indices = {i64_array(list(limits))}, "
        f"strides = {i64_array([1] * len(starts))}"
    )
    return em.op("stablehlo.slice", [x], [aval], props)[0]


def leading_slice(em: Emitter, x: Value, limits: Sequence[int]) -> Value:
    """The leading ``limits`` of every axis."""
    return sliced(em, x, [0] * len(limits), limits)


def zero_padded(em: Emitter, x: Value, low: Sequence[int], high: Sequence[int]) -> Value:
    """``x`` with ``low``/``high`` zeros before/after each axis."""
    shape = tuple(n + lo + hi for n, lo, hi in zip(x.aval.shape, low, high))
    props = (
        f"edge_padding_low = {i64_array(list(low))}, edge_padding_high = {i64_array(list(high))}, "
        f"interior_padding = {i64_array([0] * len(shape))}"
    )
    return em.op("stablehlo.pad", [x, em.scalar(0, x.aval.dtype)], [Aval(shape, x.aval.dtype)], props)[0]


def _pad(em: Emitter, x: Value, shape: Sequence[int]) -> Value:
    """``x`` padded with zeros at the end of every axis up to ``shape``."""
    return zero_padded(em, x, [0] * len(shape), [t - s for s, t in zip(x.aval.shape, shape)])


def conjugate(em: Emitter, x: Value) -> Value:
    """The complex conjugate of ``x`` (``x`` itself when real)."""
    return _conj(em, [x], [x.aval])[0] if dtypes.is_complex(x.aval.dtype) else x


def real_aval(x: Value) -> Aval:
    """``x``'s shape with the real dtype of its elements' magnitudes."""
    return Aval(x.aval.shape, dtypes.real_dtype(x.aval.dtype))


def as_complex(em: Emitter, x: Value, dtype: np.dtype[Any]) -> Value:
    """A real ``x`` in ``dtype`` (``x`` itself when that is its dtype already)."""
    return x if x.aval.dtype == dtype else _convert(em, x, dtype)


def matrix_adjoint(em: Emitter, x: Value) -> Value:
    """Every matrix of ``x`` conjugate-transposed (transposed when real)."""
    return conjugate(em, matrix_transpose(em, x))


def matrix_transpose(em: Emitter, x: Value) -> Value:
    """Every matrix (last two axes) of ``x`` transposed."""
    *batch, rows, cols = x.aval.shape
    n = len(batch)
    return em.op(
        "stablehlo.transpose", [x], [Aval((*batch, cols, rows), x.aval.dtype)],
        f"permutation = {i64_array([*range(n), n + 1, n])}",
    )[0]


def batched_matmul(em: Emitter, x: Value, y: Value, transpose_x: bool = False) -> Value:
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
    props = f"dot_dimension_numbers = {numbers}" + precision_props(em, x.aval.dtype)
    return em.op("stablehlo.dot_general", [x, y], [out], props)[0]


def _lapack_target(em: Emitter, kernel: str, a: Aval) -> str | None:
    """The LAPACK custom-call target for ``a`` on this emitter's platform, if one is to be used."""
    if min(a.shape) == 0:  # nothing to factor: XLA's expansion handles empty arrays
        return None
    return lapack.target(kernel, a.dtype, em.platform)


def lapack_call(
    em: Emitter, target: str, operands: Sequence[Value], results: Sequence[Aval], column_major: bool = False,
    alias: int = 0, majors: Sequence[bool] | None = None, ints: dict[str, int] | None = None, **chars: str,
) -> list[Value]:
    """``target`` (a typed-FFI LAPACK kernel, batched over leading axes) on ``operands``, its first result
    aliasing operand ``alias``; ``chars`` are its one-character options (``uplo = "U"``), ``ints`` its i32 ones. Matrices are passed
    column major or, by default, row major: LAPACK then sees each matrix transposed, which the callers use
    (the kernels take a matrix's sizes from its shape, so only square ones can be passed transposed).
    ``majors`` says per operand, then per result, whether it is column major (default: ``column_major`` for
    every value of the first operand's rank)."""
    rank = operands[0].aval.ndim
    avals = [*(v.aval for v in operands), *results]
    cols = list(majors) if majors is not None else [column_major and a.ndim == rank for a in avals]
    layouts = [layout(a.ndim, c) for a, c in zip(avals, cols)]
    options = [f"{k} = {ord(v)} : ui8" for k, v in chars.items()] + [f"{k} = {v} : i32" for k, v in (ints or {}).items()]
    config = ", ".join(sorted(options))
    props = (
        f'api_version = 1 : i32, backend_config = "", call_target_name = "{target}", '
        f"operand_layouts = [{', '.join(layouts[: len(operands)])}], "
        "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = "
        f"[{'0' if len(results) > 1 else ''}], operand_index = {alias}, operand_tuple_indices = []>], "
        f"result_layouts = [{', '.join(layouts[len(operands):])}]"
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


def nan_where_failed(em: Emitter, info: Value, x: Value) -> Value:
    """``x`` with every matrix (or vector) whose LAPACK ``info`` is nonzero replaced by NaNs."""
    return nan_where(em, compare(em, info, widen(em, em.scalar(0, info.aval.dtype), info.aval.shape), "NE"), x)


def nan_where(em: Emitter, failed: Value, x: Value) -> Value:
    """``x`` with every matrix (or vector) whose batch entry of ``failed`` (a bool per batch index) is true
    replaced by NaNs."""
    mask = em.op(
        "stablehlo.broadcast_in_dim", [failed], [Aval(x.aval.shape, dtypes.BOOL)],
        f"broadcast_dimensions = {i64_array(list(range(failed.aval.ndim)))}",
    )[0]
    nan = widen(em, em.scalar(float("nan"), x.aval.dtype), x.aval.shape)
    return em.op("stablehlo.select", [mask, nan, x], [x.aval])[0]


def _all_last(em: Emitter, ok: Value, axes: int) -> Value:
    """Per batch index, whether ``ok`` (bool) holds over all of its last ``axes`` axes."""
    aval = ok.aval
    bool_scalar = Aval((), dtypes.BOOL)
    return em.op(
        "stablehlo.reduce", [ok, em.scalar(True, dtypes.BOOL)], [Aval(aval.shape[: aval.ndim - axes], dtypes.BOOL)],
        f"dimensions = {i64_array(list(range(aval.ndim - axes, aval.ndim)))}",
        [em.binary_region("stablehlo.and", bool_scalar)],
    )[0]


def non_finite(em: Emitter, x: Value) -> Value:
    """Per matrix of ``x``, whether it holds a NaN or an infinity (a bool per batch index; complex: in either
    part)."""
    flags = Aval(x.aval.shape, dtypes.BOOL)
    if dtypes.is_complex(x.aval.dtype):
        parts = [em.op(f"stablehlo.{p}", [x], [real_aval(x)])[0] for p in ("real", "imag")]
        both = [em.op("stablehlo.is_finite", [p], [flags])[0] for p in parts]
        finite = em.op("stablehlo.and", both, [flags])[0]
    else:
        finite = em.op("stablehlo.is_finite", [x], [flags])[0]
    return em.op("stablehlo.not", [_all_last(em, finite, 2)], [Aval(x.aval.shape[:-2], dtypes.BOOL)])[0]


# ------------------------------------------------------------------------------- half precision, in f32

_HALF = frozenset((np.dtype(np.float16), dtypes.bfloat16))
_F32 = np.dtype(np.float32)


def in_f32(rule: Callable[..., list[Value]]) -> Callable[..., list[Value]]:
    """``rule`` computed in f32 for f16/bf16 operands, its floating results rounded back: XLA's GPU backend has
    no half-precision triangular solve (nor Cholesky, QR or Jacobi eigh), and XLA's CPU expansions in half
    precision lose most digits. Every platform does the same, so CPU and GPU agree (LAPACK has no half kernels
    either, so the CPU LAPACK path is unaffected)."""

    def wrapped(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], **params: Any) -> list[Value]:
        if not any(v.aval.dtype in _HALF for v in args):
            return rule(em, args, outs, **params)
        wide = [_convert(em, v, _F32) if v.aval.dtype in _HALF else v for v in args]
        wide_outs = [Aval(o.shape, _F32) if o.dtype in _HALF else o for o in outs]
        results = rule(em, wide, wide_outs, **params)
        return [_convert(em, r, o.dtype) if r.aval.dtype != o.dtype else r for r, o in zip(results, outs)]

    wrapped.__name__ = rule.__name__
    wrapped.__doc__ = rule.__doc__
    return wrapped


def _convert(em: Emitter, x: Value, dtype: np.dtype[Any]) -> Value:
    return em.op("stablehlo.convert", [x], [Aval(x.aval.shape, dtype)])[0]


@lowers(D.cholesky_p)
@in_f32
def _cholesky(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (a,) = args
    target = _lapack_target(em, "potrf", a.aval)
    if target is not None:
        # LAPACK sees Aᵀ: its upper triangle is A's lower one, and its factor U (Aᵀ = UᵀU) reads back as L = Uᵀ.
        info = Aval(a.aval.shape[:-2], np.dtype(np.int32))
        factor, status = lapack_call(em, target, [a], [a.aval, info], uplo="U")
        return [nan_where_failed(em, status, masked_triangle(em, factor, "GE"))]
    factor = em.op("stablehlo.cholesky", [_real_diagonal(em, a)], outs, "lower = true")[0]
    # StableHLO leaves the result implementation-defined where A is not positive definite: XLA's CPU expansion
    # gives NaNs, cuSOLVER's potrf stops at the failing column and leaves a non-positive (or NaN) pivot on the
    # diagonal. Either way the failed matrix becomes all NaN, as LAPACK's path makes it.
    return [nan_where(em, _bad_pivots(em, factor), masked_triangle(em, factor, "GE"))]  # other triangle unspecified


def _real_diagonal(em: Emitter, a: Value) -> Value:
    """``a`` with the imaginary part of its diagonal dropped (LAPACK's Hermitian kernels never read it)."""
    if not dtypes.is_complex(a.aval.dtype):
        return a
    part = em.op("stablehlo.real", [a], [real_aval(a)])[0]
    eye = masked_triangle(em, widen(em, em.scalar(True, dtypes.BOOL), a.aval.shape), "EQ")
    return em.op("stablehlo.select", [eye, as_complex(em, part, a.aval.dtype), a], [a.aval])[0]


def _bad_pivots(em: Emitter, factor: Value) -> Value:
    """Per matrix, whether a Cholesky factor's diagonal is not all finite and positive."""
    d = matrix_diagonal(em, factor)
    if dtypes.is_complex(d.aval.dtype):  # a Cholesky factor's diagonal is real
        d = em.op("stablehlo.real", [d], [real_aval(d)])[0]
    positive = compare(em, d, widen(em, em.scalar(0, d.aval.dtype), d.aval.shape), "GT")
    finite = em.op("stablehlo.is_finite", [d], [Aval(d.aval.shape, dtypes.BOOL)])[0]
    good = em.op("stablehlo.and", [positive, finite], [Aval(d.aval.shape, dtypes.BOOL)])[0]
    return em.op("stablehlo.not", [_all_last(em, good, 1)], [Aval(d.aval.shape[:-1], dtypes.BOOL)])[0]


@lowers(D.triangular_solve_p)
@in_f32
def _triangular_solve(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, left_side: bool, lower: bool, transpose_a: bool,
    unit_diagonal: bool, conjugate_a: bool = False,
) -> list[Value]:
    conjugate_a = conjugate_a and dtypes.is_complex(args[0].aval.dtype)
    if conjugate_a and not transpose_a:
        # StableHLO conjugates only with the transpose (ADJOINT): conj(A) X = B is A conj(X) = conj(B).
        a, b = args
        x = _triangular_solve(
            em, [a, conjugate(em, b)], outs, left_side=left_side, lower=lower, transpose_a=False,
            unit_diagonal=unit_diagonal,
        )[0]
        return [conjugate(em, x)]
    how = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    props = (
        f"left_side = {flag(left_side)}, lower = {flag(lower)}, unit_diagonal = {flag(unit_diagonal)}, "
        f"transpose_a = #stablehlo<transpose {how}>"
    )
    return em.op("stablehlo.triangular_solve", args, outs, props)


def flag(value: bool) -> str:
    return "true" if value else "false"


@lowers(D.qr_p)
@in_f32
def qr_lowering(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, full_matrices: bool) -> list[Value]:
    (a,) = args
    *batch, m, n = a.aval.shape
    k = min(m, n)
    taus_aval = Aval((*batch, k), a.aval.dtype)
    geqrf = _lapack_target(em, "geqrf", a.aval)
    if geqrf is not None:
        packed, taus = lapack_call(em, geqrf, [a], [a.aval, taus_aval], column_major=True)
    else:
        packed, taus = em.op("stablehlo.custom_call", [a], [a.aval, taus_aval], 'call_target_name = "Qr"')
    q_aval, r_aval, det_aval = outs
    r = masked_triangle(em, leading_slice(em, packed, r_aval.shape) if r_aval.shape != a.aval.shape else packed, "LE")
    # Q from the reflectors: as many columns of the packed matrix as Q has (zero columns and taus add nothing).
    cols = q_aval.shape[-1]
    reflectors = leading_slice(em, packed, (*batch, m, cols)) if cols < n else _pad(em, packed, (*batch, m, cols))
    q_taus = _pad(em, taus, (*batch, cols)) if cols > k else taus
    orgqr = _lapack_target(em, "orgqr", a.aval)
    if orgqr is not None:
        q = lapack_call(em, orgqr, [reflectors, q_taus], [q_aval], column_major=True)[0]
    else:
        q = em.op(
            "stablehlo.custom_call", [reflectors, q_taus], [q_aval],
            'call_target_name = "ProductOfElementaryHouseholderReflectors"',
        )[0]
    signs = _reflector_determinants(em, packed, taus)
    scalar = Aval((), a.aval.dtype)
    body = em.region([scalar, scalar], lambda r_, xs: r_.op("stablehlo.multiply", xs, [scalar]))
    det = em.op(
        "stablehlo.reduce", [signs, em.scalar(1, a.aval.dtype)], [det_aval],
        f"dimensions = {i64_array([len(batch)])}", [body],
    )[0]
    return [q, r, det]


def _reflector_determinants(em: Emitter, packed: Value, taus: Value) -> Value:
    """``det(I - τ v vᴴ)`` of every Householder reflector (``v``: 1, then its column of ``packed`` below the
    diagonal). Real: a reflection (-1) where ``τ`` is nonzero, the identity (1) where it is 0, exactly. Complex:
    ``1 - τ vᴴv``, of modulus 1."""
    dtype = taus.aval.dtype
    shape = taus.aval.shape
    one = widen(em, em.scalar(1, dtype), shape)
    if not dtypes.is_complex(dtype):
        flips = compare(em, taus, widen(em, em.scalar(0, dtype), shape), "NE")
        return em.op("stablehlo.select", [flips, widen(em, em.scalar(-1, dtype), shape), one], [taus.aval])[0]
    below = masked_triangle(em, packed, "GT")
    magnitude = em.op("stablehlo.abs", [below], [real_aval(below)])[0]
    squares = em.op("stablehlo.multiply", [magnitude, magnitude], [magnitude.aval])[0]
    *batch, m, n = squares.aval.shape
    norms = em.op(
        "stablehlo.reduce", [squares, em.scalar(0, squares.aval.dtype)], [Aval((*batch, n), squares.aval.dtype)],
        f"dimensions = {i64_array([len(batch)])}", [em.binary_region("stablehlo.add", Aval((), squares.aval.dtype))],
    )[0]
    if n != shape[-1]:
        norms = leading_slice(em, norms, shape)
    lengths = em.op("stablehlo.add", [one, as_complex(em, norms, dtype)], [taus.aval])[0]  # vᴴv
    scaled = em.op("stablehlo.multiply", [taus, lengths], [taus.aval])[0]
    return em.op("stablehlo.subtract", [one, scaled], [taus.aval])[0]


@lowers(D.eigh_p)
@in_f32
def eigh_lowering(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (a,) = args
    w_aval, v_aval = outs
    target = _lapack_target(em, "syevd", a.aval)
    if target is not None:
        # LAPACK sees Aᵀ: its upper triangle is A's lower one; its eigenvector columns read back as rows.
        info = Aval(a.aval.shape[:-2], np.dtype(np.int32))
        rows, w, status = lapack_call(em, target, [a], [v_aval, w_aval, info], mode="V", uplo="U")
        v = matrix_adjoint(em, rows)  # complex: LAPACK's matrix is the conjugate of sym(A), so are its vectors
        return [nan_where_failed(em, status, w), _canonical_signs(em, nan_where_failed(em, status, v))]
    tol = float(np.finfo(a.aval.dtype).eps)
    config = f'backend_config = "1,1,100,{tol!r}", call_target_name = "Eigh"'
    v, w = em.op("stablehlo.custom_call", [_real_diagonal(em, a)], [v_aval, w_aval], config)
    if a.aval.dtype in (np.float64, np.complex128):
        v = _refine_eigenvectors(em, a, w, v)
    # Jacobi sweeps on a NaN or infinity give whatever the backend's arithmetic makes of it; LAPACK's path
    # gives an all-NaN result (syevd fails), and so does this one.
    bad = non_finite(em, masked_triangle(em, a, "GE"))
    return [nan_where(em, bad, w), nan_where(em, bad, _canonical_signs(em, v))]


def _canonical_signs(em: Emitter, v: Value) -> Value:
    """Eigenvectors with their largest-magnitude component positive: a deterministic sign (complex: phase) for each
    (Jacobi's and LAPACK's differ); a real sign is locally constant, a complex phase is differentiated in
    ``staging/primitives/decompositions.py``."""
    return apply_signs(em, v, vector_signs(em, v, -2), -2)


def vector_signs(em: Emitter, x: Value, axis: int) -> Value:
    """Per vector of ``x`` (vectors run along matrix axis ``axis``: -2 for columns, -1 for rows), +1 or -1 so that
    the vector's largest-magnitude component becomes positive (on exact ties: the sum of the tied components).
    Complex ``x``: the phase ``conj(s) / |s|`` of that component (or sum) ``s``, which makes it real and positive
    (1 for a zero vector)."""
    aval = x.aval
    n = aval.ndim
    reduced = n + axis
    kept = n - 1 if axis == -2 else n - 2
    vec_aval = Aval((*aval.shape[:-2], aval.shape[kept]), aval.dtype)
    scalar = Aval((), aval.dtype)
    spread_dims = i64_array([*range(n - 2), kept])
    real = real_aval(x)
    real_scalar = Aval((), real.dtype)
    magnitude = em.op("stablehlo.abs", [x], [real])[0]
    largest_body = em.region([real_scalar, real_scalar], lambda r, xs: r.op("stablehlo.maximum", xs, [real_scalar]))
    largest = em.op(
        "stablehlo.reduce", [magnitude, em.scalar(0, real.dtype)], [vec_aval.with_dtype(real.dtype)],
        f"dimensions = {i64_array([reduced])}", [largest_body],
    )[0]
    spread = em.op("stablehlo.broadcast_in_dim", [largest], [real], f"broadcast_dimensions = {spread_dims}")[0]
    zero = widen(em, em.scalar(0, aval.dtype), aval.shape)
    picked = em.op("stablehlo.select", [compare(em, magnitude, spread, "EQ"), x, zero], [aval])[0]
    sum_body = em.region([scalar, scalar], lambda r, xs: r.op("stablehlo.add", xs, [scalar]))
    total = em.op(
        "stablehlo.reduce", [picked, em.scalar(0, aval.dtype)], [vec_aval], f"dimensions = {i64_array([reduced])}",
        [sum_body],
    )[0]
    if dtypes.is_complex(aval.dtype):
        return _unit_phase(em, conjugate(em, total))
    negative = compare(em, total, widen(em, em.scalar(0, aval.dtype), vec_aval.shape), "LT")
    minus = widen(em, em.scalar(-1, aval.dtype), vec_aval.shape)
    plus = widen(em, em.scalar(1, aval.dtype), vec_aval.shape)
    return em.op("stablehlo.select", [negative, minus, plus], [vec_aval])[0]


def _unit_phase(em: Emitter, z: Value) -> Value:
    """``z / |z|``, and 1 where ``z`` is 0."""
    size = em.op("stablehlo.abs", [z], [real_aval(z)])[0]
    real_one = widen(em, em.scalar(1, size.aval.dtype), size.aval.shape)
    zero = compare(em, size, widen(em, em.scalar(0, size.aval.dtype), size.aval.shape), "EQ")
    safe = em.op("stablehlo.select", [zero, real_one, size], [size.aval])[0]
    phase = em.op("stablehlo.divide", [z, as_complex(em, safe, z.aval.dtype)], [z.aval])[0]
    one = widen(em, em.scalar(1, z.aval.dtype), z.aval.shape)
    return em.op("stablehlo.select", [zero, one, phase], [z.aval])[0]


def apply_signs(em: Emitter, x: Value, signs: Value, axis: int) -> Value:
    """``x`` with vector ``i`` (along matrix axis ``axis``) multiplied by ``signs[..., i]``."""
    n = x.aval.ndim
    kept = n - 1 if axis == -2 else n - 2
    spread = em.op(
        "stablehlo.broadcast_in_dim", [signs], [x.aval], f"broadcast_dimensions = {i64_array([*range(n - 2), kept])}"
    )[0]
    return em.op("stablehlo.multiply", [x, spread], [x.aval])[0]


def _refine_eigenvectors(em: Emitter, a: Value, w: Value, v: Value) -> Value:
    """One first-order correction of the eigenvectors: XLA's Jacobi skips rotations whose off-diagonal entry is
    below float32 precision, which leaves float64 eigenvectors accurate to only ~1e-9.

    With ``B = Vᴴ sym(A) V`` (diagonal up to that residue), ``V ← V (I + E)``, ``E_ij = B_ij / (w_j - w_i)``:
    E is anti-Hermitian, so V stays unitary to second order; pairs with nearly equal eigenvalues are left
    alone (any basis of their eigenspace is valid).
    """
    aval = a.aval
    real = real_aval(a)
    n = aval.ndim
    lower = masked_triangle(em, _real_diagonal(em, a), "GE")
    strict = masked_triangle(em, a, "GT")
    sym = em.op("stablehlo.add", [lower, matrix_adjoint(em, strict)], [aval])[0]
    b = batched_matmul(em, conjugate(em, v), batched_matmul(em, sym, v), transpose_x=True)  # Vᴴ sym(A) V
    batch = list(range(n - 2))
    w_col = em.op("stablehlo.broadcast_in_dim", [w], [real], f"broadcast_dimensions = {i64_array([*batch, n - 1])}")[0]
    w_row = em.op("stablehlo.broadcast_in_dim", [w], [real], f"broadcast_dimensions = {i64_array([*batch, n - 2])}")[0]
    gap = em.op("stablehlo.subtract", [w_col, w_row], [real])[0]  # [i, j] = w[j] - w[i]
    big = em.op("stablehlo.multiply", [em.op("stablehlo.abs", [b], [real])[0], widen(em, em.scalar(1e4, real.dtype), real.shape)], [real])[0]
    usable = compare(em, em.op("stablehlo.abs", [gap], [real])[0], big, "GT")
    one = widen(em, em.scalar(1, real.dtype), real.shape)
    zero = widen(em, em.scalar(0, aval.dtype), aval.shape)
    safe_gap = as_complex(em, em.op("stablehlo.select", [usable, gap, one], [real])[0], aval.dtype)
    correction = em.op("stablehlo.select", [usable, em.op("stablehlo.divide", [b, safe_gap], [aval])[0], zero], [aval])[0]
    return em.op("stablehlo.add", [v, batched_matmul(em, v, correction)], [aval])[0]


# ---------------------------------------------------------------------------------------- solve and slogdet

_I32 = np.dtype(np.int32)


def matrix_diagonal(em: Emitter, x: Value) -> Value:
    """The diagonal of every matrix: shape ``(..., n)``."""
    aval = x.aval
    scalar = Aval((), aval.dtype)
    return em.op(
        "stablehlo.reduce", [masked_triangle(em, x, "EQ"), em.scalar(0, aval.dtype)], [Aval(aval.shape[:-1], aval.dtype)],
        f"dimensions = {i64_array([aval.ndim - 1])}", [em.binary_region("stablehlo.add", scalar)],
    )[0]


def _reduce_last(em: Emitter, x: Value, op_name: str, init: float | int) -> Value:
    """``x`` reduced over its last axis with ``op_name`` (``stablehlo.add``, ``stablehlo.multiply``)."""
    aval = x.aval
    return em.op(
        "stablehlo.reduce", [x, em.scalar(init, aval.dtype)], [Aval(aval.shape[:-1], aval.dtype)],
        f"dimensions = {i64_array([aval.ndim - 1])}", [em.binary_region(op_name, Aval((), aval.dtype))],
    )[0]


def _getrf(em: Emitter, target: str, a: Value) -> tuple[Value, Value]:
    """LAPACK's LU with partial pivoting, on the row-major buffer: LAPACK factors ``M = Aᵀ = P L U`` and the
    packed result reads back transposed, ``W = (L\\U)ᵀ``: its lower triangle (with the diagonal) is ``Uᵀ``, its
    strict upper triangle ``Lᵀ`` (unit diagonal), so ``A = Uᵀ Lᵀ Pᵀ``. Also returns the 1-based row swaps
    (``ipiv``: step i swapped rows i and ipiv[i] of M). An exactly singular A has a zero on W's diagonal."""
    *batch, n, _ = a.aval.shape
    pivots = Aval((*batch, n), _I32)
    packed, swaps, _ = lapack_call(em, target, [a], [a.aval, pivots, Aval(tuple(batch), _I32)])
    return packed, swaps


def _swap_indices(em: Emitter, swaps: Value, reverse: bool) -> Value:
    """Row indices ``idx`` (0-based, shape ``(..., n)``) of the permutation the 1-based LAPACK swaps make: in
    order they give ``Pᵀ z = z[idx]``, in reverse ``P z = z[idx]`` (``P = P₁ P₂ ⋯ Pₙ``, ``Pᵢ`` the i-th swap). A
    while loop of n steps, each O(n) per matrix; the swaps are sequential, so no closed form is cheaper."""
    aval = swaps.aval
    *batch, k = aval.shape
    nb = len(batch)
    cols = em.op("stablehlo.iota", [], [aval], f"iota_dimension = {nb} : i64")[0]
    if k == 0:
        return cols
    scalar = Aval((), _I32)
    column = Aval((*batch, 1), _I32)
    spread = f"broadcast_dimensions = {i64_array(list(range(nb + 1)))}"
    state = [scalar, aval, aval, aval]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return [compare(r, vals[0], r.scalar(k, _I32), "LT")]

    def body(r: Emitter, vals: list[Value]) -> list[Value]:
        step, piv, iota, idx = vals
        i = r.op("stablehlo.subtract", [r.scalar(k - 1, _I32), step], [scalar])[0] if reverse else step
        starts = [r.scalar(0, _I32)] * nb + [i]
        sizes = f"slice_sizes = {i64_array([*batch, 1])}"
        p = r.op("stablehlo.dynamic_slice", [piv, *starts], [column], sizes)[0]
        p = r.op("stablehlo.broadcast_in_dim", [p], [aval], spread)[0]
        p = r.op("stablehlo.subtract", [p, widen(r, r.scalar(1, _I32), aval.shape)], [aval])[0]
        held = r.op("stablehlo.dynamic_slice", [idx, *starts], [column], sizes)[0]  # idx[i]
        held = r.op("stablehlo.broadcast_in_dim", [held], [aval], spread)[0]
        at_i = compare(r, iota, i, "EQ")
        at_p = compare(r, iota, p, "EQ")
        zero = widen(r, r.scalar(0, _I32), aval.shape)
        other = _reduce_last(r, r.op("stablehlo.select", [at_p, idx, zero], [aval])[0], "stablehlo.add", 0)
        other = r.op(
            "stablehlo.broadcast_in_dim", [other], [aval], f"broadcast_dimensions = {i64_array(list(range(nb)))}"
        )[0]  # idx[p]
        swapped = r.op("stablehlo.select", [at_p, held, idx], [aval])[0]
        swapped = r.op("stablehlo.select", [at_i, other, swapped], [aval])[0]
        return [r.op("stablehlo.add", [step, r.scalar(1, _I32)], [scalar])[0], piv, iota, swapped]

    init = [em.scalar(0, _I32), swaps, cols, cols]
    return em.op("stablehlo.while", init, state, regions=[em.region(state, cond), em.region(state, body)])[3]


def _take_rows(em: Emitter, x: Value, idx: Value) -> Value:
    """``x[..., idx[..., r], :]``: the rows of every matrix of ``x`` reordered by ``idx`` (batched gather)."""
    rank, nb = x.aval.ndim, idx.aval.ndim - 1
    index = em.op("stablehlo.reshape", [idx], [Aval((*idx.aval.shape, 1), _I32)])[0]
    batch = int_list(range(nb))
    numbers = (
        f"#stablehlo.gather<offset_dims = [{rank - 1}], collapsed_slice_dims = [{rank - 2}], "
        f"operand_batching_dims = {batch}, start_indices_batching_dims = {batch}, "
        f"start_index_map = [{rank - 2}], index_vector_dim = {nb + 1}>"
    )
    sizes = i64_array([1] * (rank - 1) + [x.aval.shape[-1]])
    props = f"dimension_numbers = {numbers}, slice_sizes = {sizes}, indices_are_sorted = false"
    return em.op("stablehlo.gather", [x, index], [Aval(x.aval.shape, x.aval.dtype)], props)[0]


def _tri(em: Emitter, a: Value, b: Value, *, lower: bool, transpose_a: bool, unit_diagonal: bool = False) -> Value:
    """A triangular solve from the left, ``op(T) X = B`` with ``T`` a triangle of ``a``: LAPACK's ``trsm`` on CPU
    (XLA's expansion is several times slower on batches and few right-hand sides), else XLA's."""
    out = Aval(b.aval.shape, b.aval.dtype)
    target = _lapack_target(em, "trsm", a.aval) if min(b.aval.shape) else None
    if target is not None:
        # ``a`` row major (no copy): LAPACK sees M = aᵀ, whose other triangle is T transposed, so op(T) is that
        # triangle of M with the transposition flipped. B and X column major, as they are.
        return lapack_call(
            em, target, [a, b], [out], alias=1, majors=(False, True, True), side="L", uplo="U" if lower else "L",
            trans_x="N" if transpose_a else "T", diag="U" if unit_diagonal else "N",
        )[0]
    return _triangular_solve(
        em, [a, b], [out], left_side=True, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal
    )[0]


def _square_qr(em: Emitter, a: Value) -> list[Value]:
    """``(q, r, det(Q))`` of square matrices, through the QR lowering (XLA's or LAPACK's)."""
    square = Aval(a.aval.shape, a.aval.dtype)
    return list(qr_lowering(em, [a], [square, square, Aval(a.aval.shape[:-2], a.aval.dtype)], full_matrices=False))


@lowers(D.solve_p)
@in_f32
def _solve(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, transpose_a: bool) -> list[Value]:
    a, b = args
    target = _lapack_target(em, "getrf", a.aval)
    if target is None:
        # Householder QR, A = QR: A⁻¹ B = R⁻¹ (Qᴴ B) and A⁻ᵀ B = conj(Q) (R⁻ᵀ B).
        q, r, _ = _square_qr(em, a)
        q = conjugate(em, q)
        if transpose_a:
            return [batched_matmul(em, q, _tri(em, r, b, lower=False, transpose_a=True))]
        return [_tri(em, r, batched_matmul(em, q, b, transpose_x=True), lower=False, transpose_a=False)]
    # With W from _getrf (A = Uᵀ Lᵀ Pᵀ): A X = B is X = P Lᵀ⁻¹ Uᵀ⁻¹ B, Aᵀ X = B is X = U⁻¹ L⁻¹ Pᵀ B.
    packed, swaps = _getrf(em, target, a)
    if transpose_a:
        rhs = _take_rows(em, b, _swap_indices(em, swaps, reverse=False))
        y = _tri(em, packed, rhs, lower=False, transpose_a=True, unit_diagonal=True)
        return [_tri(em, packed, y, lower=True, transpose_a=True)]
    y = _tri(em, packed, b, lower=True, transpose_a=False)
    z = _tri(em, packed, y, lower=False, transpose_a=False, unit_diagonal=True)
    return [_take_rows(em, z, _swap_indices(em, swaps, reverse=True))]


def _swap_parity(em: Emitter, swaps: Value, dtype: np.dtype[Any]) -> Value:
    """``det P`` (±1) of the permutation LAPACK's row swaps make: one sign flip per step that swapped two
    distinct rows."""
    iota = em.op("stablehlo.iota", [], [swaps.aval], f"iota_dimension = {swaps.aval.ndim - 1} : i64")[0]
    one = widen(em, em.scalar(1, _I32), swaps.aval.shape)
    moved = compare(em, swaps, em.op("stablehlo.add", [iota, one], [swaps.aval])[0], "NE")
    zero = widen(em, em.scalar(0, _I32), swaps.aval.shape)
    count = _reduce_last(em, em.op("stablehlo.select", [moved, one, zero], [swaps.aval])[0], "stablehlo.add", 0)
    odd = em.op("stablehlo.and", [count, widen(em, em.scalar(1, _I32), count.aval.shape)], [count.aval])[0]
    flip = compare(em, odd, widen(em, em.scalar(0, _I32), count.aval.shape), "NE")
    shape = count.aval.shape
    return em.op(
        "stablehlo.select",
        [flip, widen(em, em.scalar(-1, dtype), shape), widen(em, em.scalar(1, dtype), shape)],
        [Aval(shape, dtype)],
    )[0]


@lowers(D.slogdet_p)
@in_f32
def _slogdet(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (a,) = args
    dtype = a.aval.dtype
    target = _lapack_target(em, "getrf", a.aval)
    if target is None:
        _, r, q_det = _square_qr(em, a)
        d = matrix_diagonal(em, r)
        parity = q_det  # det(Q) = ±1
    else:
        # det(A) = det(Uᵀ) det(Pᵀ): U's diagonal, and one sign flip per step that swapped two distinct rows.
        packed, swaps = _getrf(em, target, a)
        d = matrix_diagonal(em, packed)
        parity = _swap_parity(em, swaps, dtype)
    signs = _reduce_last(em, em.op("stablehlo.sign", [d], [d.aval])[0], "stablehlo.multiply", 1)  # complex: d / |d|
    sign = em.op("stablehlo.multiply", [parity, signs], [signs.aval])[0]
    magnitude = em.op("stablehlo.abs", [d], [real_aval(d)])[0]
    logdet = _reduce_last(em, em.op("stablehlo.log", [magnitude], [magnitude.aval])[0], "stablehlo.add", 0)
    return [sign, logdet]


@lowers(D.det_p)
@in_f32
def _det(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    (out,) = outs
    sign, logdet = _slogdet(em, args, [out, out.with_dtype(dtypes.real_dtype(out.dtype))])
    magnitude = em.op("stablehlo.exponential", [logdet], [logdet.aval])[0]
    return [em.op("stablehlo.multiply", [sign, as_complex(em, magnitude, out.dtype)], [out])[0]]


def _spread(em: Emitter, x: Value, like: Aval, axes: Sequence[int]) -> Value:
    """``x`` broadcast to ``like``'s shape, its axes landing on ``axes``."""
    return em.op("stablehlo.broadcast_in_dim", [x], [like], f"broadcast_dimensions = {i64_array(list(axes))}")[0]


@lowers(D.cofactors_p)
@in_f32
def _cofactors(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    """``C = adj(A)ᵀ`` from a factorization ``M = (permutation or Q) · (unit lower) · T``, ``T`` triangular:
    ``adj(M) = s · adj(T) · B`` with ``B = L⁻¹Pᵀ`` (LU of ``M = Aᵀ``, so ``adj(M)`` is ``C``; ``s = det P``) or
    ``B = Qᴴ`` (QR of ``M = A``, then ``C = adj(M)ᵀ``; ``s = det Q``).

    ``adj(T)`` never divides by a zero pivot: with ``T₁`` = ``T`` with its zero pivots set to 1 and ``p`` the
    product of ``T₁``'s diagonal, ``T = T₁ - E`` (``E`` the 0/1 diagonal of the zero pivots ``k₁ < ... < k_z``) and
    the Woodbury identity give ``adj(T) = p T₁⁻¹ E adj(S) E T₁⁻¹``, ``S = I - (T₁⁻¹ restricted to the k's)``.
    ``T₁⁻¹`` is triangular with unit diagonal at the k's, so ``S`` is strictly triangular and its adjugate has one
    entry, ``∏ᵢ (T₁⁻¹)[kᵢ, kᵢ₊₁]`` at ``(k₁, k_z)``: ``adj(T) B = p c (T₁⁻¹ e_k₁)(e_k_zᵀ Y)``, ``Y = T₁⁻¹ B``, exact
    for every rank and pivot pattern (rank <= n-2 gives 0 through ``c``). Without zero pivots it is ``p Y`` =
    ``det A · A⁻ᵀ``; ``T₁⁻¹`` and the rank-one factors are computed only when some matrix of the batch has a zero
    pivot."""
    (a,) = args
    aval = Aval(a.aval.shape, a.aval.dtype)
    dtype = aval.dtype
    nd = aval.ndim
    batch = list(range(nd - 2))
    if 0 in aval.shape:
        return [a]
    target = _lapack_target(em, "getrf", a.aval)
    solve_t: Callable[[Emitter, Value, Value], Value]
    make_base: Callable[[Emitter], Value]
    if target is None:
        q, tri, parity = _square_qr(em, a)

        def make_base(e: Emitter) -> Value:
            return matrix_adjoint(e, q)  # Qᴴ

        def solve_t(e: Emitter, t: Value, x: Value) -> Value:
            return _tri(e, t, x, lower=False, transpose_a=False)  # R⁻¹ X

    else:
        # W = (L\\U)ᵀ: U is W's lower triangle transposed, L its strict upper one transposed.
        tri, swaps = _getrf(em, target, a)
        parity = _swap_parity(em, swaps, dtype)
        order = _swap_indices(em, swaps, reverse=False)

        def make_base(e: Emitter) -> Value:
            permuted = _take_rows(e, masked_triangle(e, widen(e, e.scalar(1, dtype), aval.shape), "EQ"), order)  # Pᵀ
            return _tri(e, tri, permuted, lower=False, transpose_a=True, unit_diagonal=True)  # L⁻¹ Pᵀ

        def solve_t(e: Emitter, t: Value, x: Value) -> Value:
            return _tri(e, t, x, lower=True, transpose_a=True)  # U⁻¹ X

    d = matrix_diagonal(em, tri)
    vec = d.aval
    zero_pivot = compare(em, d, widen(em, em.scalar(0, dtype), vec.shape), "EQ")
    mask = em.op(  # 1 at zero pivots
        "stablehlo.select", [zero_pivot, widen(em, em.scalar(1, dtype), vec.shape), widen(em, em.scalar(0, dtype), vec.shape)],
        [vec],
    )[0]
    d1 = em.op("stablehlo.add", [d, mask], [vec])[0]
    scale = em.op("stablehlo.multiply", [parity, _reduce_last(em, d1, "stablehlo.multiply", 1)], [parity.aval])[0]
    count = _reduce_last(em, mask, "stablehlo.add", 0)

    def rank_one(r: Emitter, _: list[Value]) -> list[Value]:
        """``T₁⁻¹ e_k₁``, ``e_k_zᵀ Y`` and ``c`` (zeros for matrices without a zero pivot)."""

        def full(value: float, shape: tuple[int, ...] = aval.shape) -> Value:
            return widen(r, r.scalar(value, dtype), shape)

        def mul(x: Value, y: Value) -> Value:
            return r.op("stablehlo.multiply", [x, y], [x.aval])[0]

        def along_rows(v: Value) -> Value:  # [..., i, j] = v[..., i]
            return _spread(r, v, aval, [*batch, nd - 2])

        def along_cols(v: Value) -> Value:  # [..., i, j] = v[..., j]
            return _spread(r, v, aval, [*batch, nd - 1])

        eye = masked_triangle(r, full(1), "EQ")
        tri1 = r.op("stablehlo.add", [tri, masked_triangle(r, along_cols(mask), "EQ")], [aval])[0]
        inverse = solve_t(r, tri1, eye)  # T₁⁻¹
        # T₁⁻¹ B: a product compiles faster than another triangular solve
        y = batched_matmul(r, inverse, make_base(r))
        flat = r.op("stablehlo.reshape", [mask], [Aval((*aval.shape[:-2], 1, aval.shape[-1]), dtype)])[0]
        cum = r.op("stablehlo.reshape", [batched_matmul(r, flat, masked_triangle(r, full(1), "LE"))], [vec])[0]
        is_zero_pivot = compare(r, mask, full(1, vec.shape), "EQ")  # cum: zero pivots up to each index

        def nth(k: Value) -> Value:  # 0/1 indicator of the zero pivot with cum == k
            both = r.op("stablehlo.and", [compare(r, cum, k, "EQ"), is_zero_pivot], [Aval(vec.shape, dtypes.BOOL)])[0]
            return r.op("stablehlo.select", [both, full(1, vec.shape), full(0, vec.shape)], [vec])[0]

        first, last = nth(full(1, vec.shape)), nth(_spread(r, count, vec, batch))
        # Consecutive zero pivots i < j: both zero, cum[j] = cum[i] + 1; c is the product of T₁⁻¹ over them.
        step = r.op("stablehlo.subtract", [along_cols(cum), along_rows(cum)], [aval])[0]
        chained = r.op("stablehlo.select", [compare(r, step, full(1), "EQ"), mul(along_cols(mask), along_rows(mask)),
                                            full(0)], [aval])[0]
        factors = r.op("stablehlo.select", [compare(r, chained, full(1), "EQ"), inverse, full(1)], [aval])[0]
        c = _reduce_last(r, _reduce_last(r, factors, "stablehlo.multiply", 1), "stablehlo.multiply", 1)
        column = _reduce_last(r, mul(inverse, along_cols(first)), "stablehlo.add", 0)
        picked = matrix_transpose(r, mul(y, along_rows(last)))
        return [column, _reduce_last(r, picked, "stablehlo.add", 0), c]

    def nothing(r: Emitter, _: list[Value]) -> list[Value]:
        zero = r.scalar(0, dtype)
        return [widen(r, zero, vec.shape), widen(r, zero, vec.shape), widen(r, zero, count.aval.shape)]

    any_zero = em.op(
        "stablehlo.reduce", [zero_pivot, em.scalar(False, dtypes.BOOL)], [Aval((), dtypes.BOOL)],
        f"dimensions = {i64_array(list(range(vec.ndim)))}", [em.binary_region("stablehlo.or", Aval((), dtypes.BOOL))],
    )[0]
    # The branch yields only O(n) values per matrix and captures no n x n value that the main path overwrites
    # (LAPACK's trsm works in place): measured, capturing B cost the common path 5-8% (XLA copies it).
    column, row, c = em.op(
        "stablehlo.if", [any_zero], [vec, vec, count.aval], regions=[em.region([], rank_one), em.region([], nothing)]
    )
    outer = em.op(
        "stablehlo.multiply", [_spread(em, column, aval, [*batch, nd - 2]), _spread(em, row, aval, [*batch, nd - 1])],
        [aval],
    )[0]
    outer = em.op("stablehlo.multiply", [outer, _spread(em, c, aval, batch)], [aval])[0]
    singular = compare(em, _spread(em, count, aval, batch), widen(em, em.scalar(0, dtype), aval.shape), "GT")
    solved = em.op("stablehlo.select", [singular, outer, solve_t(em, tri, make_base(em))], [aval])[0]
    cofactors = em.op("stablehlo.multiply", [solved, _spread(em, scale, aval, batch)], [aval])[0]
    if target is None:
        cofactors = matrix_transpose(em, cofactors)
    return [cofactors]
