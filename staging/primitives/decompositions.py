"""Matrix decompositions: cholesky, triangular_solve, qr, eigh, and the LU-based solve and slogdet (whose
lowering picks the factorization: LAPACK's LU on CPU, Householder QR elsewhere). Each works on the last two axes;
leading axes are batch axes (XLA's ops batch over them natively, so batching rules only move the vmapped axis
to the front).

Derivative rules are written with primitives only (triangular solves, dots, masks), so they nest and batch like
everything else. Cholesky and eigh read only the lower triangle of their operand (as LAPACK and NumPy do): the
function they compute is of ``sym(A) = tril(A) + tril(A, -1)ᴴ`` (for complex ``A`` with the diagonal's real
part only, which LAPACK reads), and their rules differentiate exactly that.

Complex matrices (c64, c128) follow JAX's convention (``complex_parts.py``): tangents are real-linear maps of the
input's tangent and cotangents their transposes under the pairing ``Re(Σ x y)`` (no conjugation), so a
conjugate transpose in a tangent rule (``Qᴴ dA``) becomes a conjugated factor in the cotangent (``conj(Q) C̄``).
Gauge choices are differentiated exactly: R's diagonal stays real in QR (LAPACK's and JAX's convention), and
each eigh eigenvector keeps its largest-magnitude component real and positive (an imaginary diagonal term in its
tangent keeps that component real). eigh's eigenvalues and slogdet's log|det| are real (f32 for c64, f64 for
c128); slogdet's sign is complex of modulus 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..builder import bind
from ..errors import ShapeError, TransformError
from ..ir import Atom, Aval, DimName
from ..primitive import Primitive
from ..shapes import check_dtype, same_dtype, unify_axis
from ..zeros import MaybeZero, Zero, is_zero
from . import complex_parts as C
from . import elementwise as E
from . import linalg as L
from . import reductions as R
from . import structural as S
from .slicing import iota, with_batch

# ------------------------------------------------------------------------------------------------ helpers


def _square(op: str, a: Aval) -> DimName:
    """Check ``a`` is a float or complex batch of square matrices; the one dim name both matrix axes share."""
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"expects square matrices in the last two axes, got {a}", op)
    return unify_axis(op, (a, a), (a.ndim - 2, a.ndim - 1))


def _same_batch(op: str, a: Aval, b: Aval, b_rank: int) -> list[DimName]:
    """Leading (batch) axes of ``a`` (matrices) and ``b`` (rank ``b_rank`` per example) must agree exactly."""
    if a.ndim - 2 != b.ndim - b_rank or a.shape[:-2] != b.shape[: b.ndim - b_rank]:
        raise ShapeError(f"batch axes differ: {a} vs {b}", op)
    return [unify_axis(op, (a, b), (i, i)) for i in range(a.ndim - 2)]


def mT(x: Atom) -> Atom:
    """Swap the last two axes (matrix transpose of every matrix in a batch)."""
    n = x.aval.ndim
    return S.transpose(x, (*range(n - 2), n - 1, n - 2))


def is_complex(x: Atom) -> bool:
    return dtypes.is_complex(x.aval.dtype)


def conj(x: Atom) -> Atom:
    """The complex conjugate of ``x`` (``x`` itself when real: no equation)."""
    return C.conj(x) if is_complex(x) else x


def mH(x: Atom) -> Atom:  # noqa: N802 - the usual name
    """The conjugate transpose of every matrix (the transpose for real matrices)."""
    return conj(mT(x))


def as_dtype_of(x: Atom, like: Atom) -> Atom:
    """A real ``x`` widened to ``like``'s complex dtype (``x`` itself when the dtypes agree)."""
    return x if x.aval.dtype == like.aval.dtype else C.as_complex(x, like.aval.dtype)


def real_part(x: Atom) -> Atom:
    """``Re(x)`` with ``x``'s dtype (``x`` itself when real)."""
    return as_dtype_of(C.real(x), x) if is_complex(x) else x


def imaginary_part(x: Atom) -> Atom:
    """``i Im(x)`` with complex ``x``'s dtype."""
    return E.sub(x, real_part(x))


def mm(x: Atom, y: Atom) -> Atom:
    """Batched matrix product over the last two axes; leading axes must agree."""
    n = x.aval.ndim
    batch = tuple(range(n - 2))
    return L.dot_general(x, y, ((n - 1,), (n - 2,)), (batch, batch))


def triangle(x: Atom, keep: str) -> Atom:
    """``x`` with every element outside a triangle zeroed: ``keep`` compares row with column (``ge``: lower
    with diagonal, ``gt``: strictly lower, ``le``/``lt``: upper, ``eq``: diagonal)."""
    aval = x.aval
    n = aval.ndim
    rows = iota(dtypes.DEFAULT_INT, aval.shape, n - 2, aval.dims)
    cols = iota(dtypes.DEFAULT_INT, aval.shape, n - 1, aval.dims)
    mask = bind(getattr(E, f"{keep}_p"), rows, cols)
    return E.select(mask, x, S.zeros(aval))


def diagonal(x: Atom) -> Atom:
    """The diagonal of every matrix: shape ``(..., n)``."""
    return R.reduce_sum(triangle(x, "eq"), (x.aval.ndim - 1,))


def diag_matrix(d: Atom, like: Aval) -> Atom:
    """Matrices of ``like``'s type with diagonal ``d`` (shape ``(..., n)``) and zeros elsewhere."""
    n = like.ndim
    spread = S.broadcast_in_dim(d, like.shape, (*range(n - 2), n - 1), like.dims)
    return triangle(spread, "eq")


def _real_diagonal(x: Atom) -> Atom:
    """The diagonal matrices of ``x`` with only their real part (the part of the diagonal LAPACK reads)."""
    return real_part(triangle(x, "eq"))


def _imaginary_diagonal(x: Atom) -> Atom:
    """``i Im(diag x)`` as diagonal matrices (complex ``x`` only)."""
    return imaginary_part(triangle(x, "eq"))


def _symmetrize_tangent(t: Atom) -> Atom:
    """The tangent of ``sym(A)``: the strict lower triangle mirrored (conjugated), the diagonal's real part."""
    strict = triangle(t, "gt")
    return E.add(E.add(strict, mH(strict)), _real_diagonal(t))


def _symmetrize_cotangent(g: Atom) -> Atom:
    """Transpose of ``_symmetrize_tangent``: ``tril(g + gᴴ, -1)`` plus the real part of ``g``'s diagonal."""
    return E.add(triangle(E.add(g, mH(g)), "gt"), _real_diagonal(g))


def _batch_to_front(args: Sequence[Atom], dims: Sequence[int | None]) -> list[Atom]:
    """Every operand with its vmapped axis first (unbatched operands broadcast), so the op batches natively."""
    d0 = next(d for d in dims if d is not None)
    size = next(a for a, d in zip(args, dims) if d is not None).aval.shape[d0]
    return [with_batch(a, d, 0, size) for a, d in zip(args, dims)]


# ----------------------------------------------------------------------------------------------- cholesky

cholesky_p = Primitive("cholesky")


@cholesky_p.def_shape
def _cholesky_shape(a: Aval) -> Aval:
    name = _square("cholesky", a)
    return Aval(a.shape, a.dtype, (*a.dims[:-2], name, name))


def cholesky(a: Atom) -> Atom:
    """Lower Cholesky factor ``L`` of ``sym(a)`` (``L Lᴴ = sym(a)``); NaNs where ``a`` is not positive definite."""
    return bind(cholesky_p, a)  # type: ignore[no-any-return]


def _phi(x: Atom) -> Atom:
    """Lower triangle with the diagonal halved: ``dL = L Φ(L⁻¹ dA L⁻ᵀ)``."""
    return E.sub(triangle(x, "ge"), E.mul(triangle(x, "eq"), E.scalar(0.5, x)))


@cholesky_p.def_jvp
def _cholesky_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (t,), (low,) = tangents, outs
    if is_zero(t):
        return (Zero(low.aval),)
    sym = _symmetrize_tangent(t)  # type: ignore[arg-type]
    half = triangular_solve(low, sym, left_side=True, lower=True, transpose_a=False)  # L⁻¹ dA
    inner = triangular_solve(low, half, left_side=False, lower=True, transpose_a=True, conjugate_a=True)  # · L⁻ᴴ
    return (mm(low, _phi(inner)),)


@cholesky_p.def_vjp
def _cholesky_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (ct,), (a,), (low,) = cts, primals, outs
    if is_zero(ct) or not wants[0]:
        return (Zero(a.aval),)
    # Transpose of the JVP, step by step in reverse: Φ is self-adjoint, solves transpose into solves.
    inner = _phi(mm(mT(low), ct))  # type: ignore[arg-type]
    half = triangular_solve(low, inner, left_side=False, lower=True, transpose_a=False, conjugate_a=True)  # · L̄⁻¹
    g = triangular_solve(low, half, left_side=True, lower=True, transpose_a=True)  # L⁻ᵀ ·
    return (_symmetrize_cotangent(g),)


@cholesky_p.def_batch
def _cholesky_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return cholesky(_batch_to_front(args, dims)[0]), 0


# --------------------------------------------------------------------------------------- triangular_solve

triangular_solve_p = Primitive("triangular_solve")


@triangular_solve_p.def_shape
def _triangular_solve_shape(
    a: Aval, b: Aval, *, left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool,
    conjugate_a: bool = False,
) -> Aval:
    op = "triangular_solve"
    _square(op, a)
    same_dtype(op, (a, b))
    if b.ndim < 2:
        raise ShapeError(f"right-hand side {b} must be a (batch of) matrices", op)
    batch = _same_batch(op, a, b, 2)
    axis = b.ndim - 2 if left_side else b.ndim - 1
    if b.shape[axis] != a.shape[-1]:
        side = "rows" if left_side else "columns"
        raise ShapeError(f"right-hand side {b} needs {a.shape[-1]} {side} to match matrices {a}", op)
    dims = [*batch, *b.dims[-2:]]
    dims[axis] = unify_axis(op, (a, b), (a.ndim - 1, axis))
    return Aval(b.shape, b.dtype, dims)


def triangular_solve(
    a: Atom, b: Atom, *, left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool = False,
    conjugate_a: bool = False,
) -> Atom:
    """``X`` with ``op(A) X = B`` (``left_side``) or ``X op(A) = B``; ``op(A)`` is ``Aᵀ`` if ``transpose_a``,
    conjugated if ``conjugate_a`` (``Aᴴ`` with both; ignored for real ``A``). Only the ``lower`` (or upper)
    triangle of ``A`` is read; ``unit_diagonal`` assumes ones on its diagonal."""
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    if conjugate_a and is_complex(a):  # real graphs keep the four params they always had
        params["conjugate_a"] = True
    return bind(triangular_solve_p, a, b, **params)  # type: ignore[no-any-return]


def _used_triangle(x: Atom, lower: bool, unit_diagonal: bool) -> Atom:
    """The part of ``x`` a solve reads: its triangle, without the diagonal when that is assumed to be ones."""
    return triangle(x, ("gt" if lower else "lt") if unit_diagonal else ("ge" if lower else "le"))


@triangular_solve_p.def_jvp
def _triangular_solve_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any
) -> Any:
    (a, _), (ta, tb), (x,) = primals, tangents, outs
    if is_zero(ta) and is_zero(tb):
        return (Zero(x.aval),)
    # op(A) X = B  =>  op(A) dX = dB - op(dA) X  (and the mirror image on the right side).
    rhs = S.instantiate(tb)
    if not is_zero(ta):
        da = _used_triangle(ta, params["lower"], params["unit_diagonal"])  # type: ignore[arg-type]
        da = conj(da) if params.get("conjugate_a") else da
        op_da = mT(da) if params["transpose_a"] else da
        rhs = E.sub(rhs, mm(op_da, x) if params["left_side"] else mm(x, op_da))
    return (triangular_solve(a, rhs, **params),)


@triangular_solve_p.def_vjp
def _triangular_solve_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], **params: Any
) -> Any:
    (ct,), (a, b), (x,) = cts, primals, outs
    if is_zero(ct):
        return (Zero(a.aval), Zero(b.aval))
    # Linear in B: its transpose is the solve with op(A) transposed (a conjugation stays).
    ct_b = triangular_solve(a, ct, **{**params, "transpose_a": not params["transpose_a"]})  # type: ignore[arg-type]
    ct_a: MaybeZero = Zero(a.aval)
    if wants[0]:
        # left: <X̄, dX> = -<B̄ Xᵀ, op(dA)>; right: -<Xᵀ B̄, op(dA)>.
        g = mm(ct_b, mT(x)) if params["left_side"] else mm(mT(x), ct_b)
        g = mT(g) if params["transpose_a"] else g
        g = conj(g) if params.get("conjugate_a") else g
        ct_a = E.neg(_used_triangle(g, params["lower"], params["unit_diagonal"]))
    return (ct_a, ct_b if wants[1] else Zero(b.aval))


@triangular_solve_p.def_batch
def _triangular_solve_batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
    a, b = _batch_to_front(args, dims)
    return triangular_solve(a, b, **params), 0


# ------------------------------------------------------------------------------------------------------ qr

qr_p = Primitive("qr", multiple_results=True)


@qr_p.def_shape
def _qr_shape(a: Aval, *, full_matrices: bool) -> tuple[Aval, Aval, Aval]:
    """Outputs ``q``, ``r`` and ``q_det``: the determinant (±1, or of modulus 1 when complex) of the complete
    ``Q``, a by-product of Householder QR that gives determinants their sign."""
    op = "qr"
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.ndim < 2:
        raise ShapeError(f"expects a (batch of) matrices, got {a}", op)
    *batch, m, n = a.shape
    *names, m_name, n_name = a.dims
    k, k_name = (m, m_name) if full_matrices or m < n else (n, n_name)
    q = Aval((*batch, m, k), a.dtype, (*names, m_name, k_name))
    r = Aval((*batch, k, n), a.dtype, (*names, k_name, n_name))
    return q, r, Aval(tuple(batch), a.dtype, names)


def qr(a: Atom, full_matrices: bool = False) -> tuple[Atom, Atom, Atom]:
    """``(q, r, det(Q))``: ``a = q r`` with orthonormal columns in ``q`` and upper-triangular ``r`` (its diagonal
    real, as LAPACK's Householder QR makes it)."""
    return tuple(bind(qr_p, a, full_matrices=full_matrices))


def _qr_differentiable(a: Aval, full_matrices: bool) -> None:
    m, n = a.shape[-2:]
    if m < n or (full_matrices and m > n):
        raise TransformError(
            f"QR is differentiable only for square or tall matrices in reduced mode, got {a} with "
            f"full_matrices={full_matrices}",
            "qr",
        )


@qr_p.def_jvp
def _qr_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, full_matrices: bool) -> Any:
    (a,), (t,), (q, r, q_det) = primals, tangents, outs
    if is_zero(t):
        return (Zero(q.aval), Zero(r.aval), Zero(q_det.aval))
    _qr_differentiable(a.aval, full_matrices)
    # C = Qᴴ dA R⁻¹, ω = tril(C, -1) - tril(C, -1)ᴴ (+ i Im diag C: R's diagonal stays real);
    # dQ = Qω + (I - QQᴴ) dA R⁻¹, dR = Qᴴ dA - ωR.
    da_rinv = triangular_solve(r, t, left_side=False, lower=False, transpose_a=False)  # type: ignore[arg-type]
    c = mm(mH(q), da_rinv)
    low = triangle(c, "gt")
    omega = E.sub(low, mH(low))
    if is_complex(c):
        omega = E.add(omega, _imaginary_diagonal(c))
    dq = E.add(mm(q, E.sub(omega, c)), da_rinv)
    dr = E.sub(mm(mH(q), t), mm(omega, r))  # type: ignore[arg-type]
    return (dq, dr, _q_det_tangent(q_det, c, a.aval))


def _trace(x: Atom) -> Atom:
    return R.reduce_sum(diagonal(x), (x.aval.ndim - 2,))


def _q_det_tangent(q_det: Atom, c: Atom, a: Aval) -> MaybeZero:
    """``d det(Q)``: 0 for real Q (±1, locally constant); for a complex square one ``det(Q) tr(Qᴴ dQ)`` =
    ``det(Q) · i Im tr(C)``. A tall complex matrix's complete Q has columns its Householder reflectors choose,
    whose derivative is not computed here: NaN (never a silent wrong value)."""
    if not is_complex(c):
        return Zero(q_det.aval)
    if a.shape[-2] != a.shape[-1]:
        return S.full_like(q_det.aval, float("nan"))
    return E.mul(q_det, imaginary_part(_trace(c)))


def _q_det_cotangent(ct: MaybeZero, q_det: Atom, a: Aval) -> Atom | None:
    """The transpose of ``_q_det_tangent`` as a function of ``tr(C)``: ``τ̄ = i Im(ct · det(Q))`` (None when
    nothing flows back)."""
    if is_zero(ct) or not is_complex(q_det):
        return None
    if a.shape[-2] != a.shape[-1]:
        raise TransformError(
            f"the determinant of the complete Q of a tall complex matrix {a} is not differentiated", "qr"
        )
    return imaginary_part(E.mul(ct, q_det))  # type: ignore[arg-type]


@qr_p.def_vjp
def _qr_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any, *, full_matrices: bool
) -> Any:
    (ct_q, ct_r, ct_det), (a,), (q, r, q_det) = cts, primals, outs
    tau_bar = _q_det_cotangent(ct_det, q_det, a.aval)
    if (is_zero(ct_q) and is_zero(ct_r) and tau_bar is None) or not wants[0]:
        return (Zero(a.aval),)
    _qr_differentiable(a.aval, full_matrices)
    # The JVP transposed: with G = QᵀQ̄ - R̄Rᵀ and H = tril(G - Gᴴ, -1) (+ i Im diag G) - QᵀQ̄,
    # Ā = (Q̄ + conj(Q) H) R⁻ᵀ + conj(Q) R̄.
    qbar, rbar = S.instantiate(ct_q), S.instantiate(ct_r)
    qt_qbar = mm(mT(q), qbar)
    g = E.sub(qt_qbar, mm(rbar, mT(r)))
    skew = triangle(E.sub(g, mH(g)), "gt")
    h = E.sub(E.add(skew, _imaginary_diagonal(g)) if is_complex(g) else skew, qt_qbar)
    if tau_bar is not None:  # det(Q)'s cotangent reaches tr(C): C̄ += τ̄ I
        h = E.add(h, diag_matrix(S.broadcast_in_dim(tau_bar, q.aval.shape[:-1], tuple(range(q.aval.ndim - 2)),
                                                    q.aval.dims[:-1]), q.aval))
    left = triangular_solve(r, E.add(qbar, mm(conj(q), h)), left_side=False, lower=False, transpose_a=True)
    return (E.add(left, mm(conj(q), rbar)),)


@qr_p.def_batch
def _qr_batch(args: Sequence[Atom], dims: Sequence[int | None], *, full_matrices: bool) -> Any:
    return qr(_batch_to_front(args, dims)[0], full_matrices), (0, 0, 0)


# ---------------------------------------------------------------------------------------------------- eigh

eigh_p = Primitive("eigh", multiple_results=True)


@eigh_p.def_shape
def _eigh_shape(a: Aval) -> tuple[Aval, Aval]:
    name = _square("eigh", a)
    names = a.dims[:-2]
    w = Aval(a.shape[:-1], dtypes.real_dtype(a.dtype), (*names, name))
    return w, Aval(a.shape, a.dtype, (*names, name, name))


def eigh(a: Atom) -> tuple[Atom, Atom]:
    """``(w, v)`` with ``sym(a) = v diag(w) vᴴ``, eigenvalues (real) ascending, eigenvectors in the columns of
    ``v``, each with its largest-magnitude component real and positive."""
    return tuple(bind(eigh_p, a))


def _eigh_gaps(w: Atom, v: Atom) -> Atom:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it, in ``v``'s dtype."""
    like = v.aval.with_dtype(w.aval.dtype)
    n = like.ndim
    batch = tuple(range(n - 2))
    w_col = _column_spread(w, like)  # [i, j] = w[j]
    w_row = S.broadcast_in_dim(w, like.shape, (*batch, n - 2), like.dims)  # [i, j] = w[i]
    diff = E.sub(w_col, w_row)
    eye = triangle(S.full_like(like, 1), "eq")
    safe = E.add(diff, eye)  # 1 on the diagonal: no division by zero there
    off = E.sub(S.full_like(like, 1), eye)
    return as_dtype_of(E.mul(E.div(S.full_like(like, 1), safe), off), v)


def _column_spread(x: Atom, like: Aval) -> Atom:
    """Per-column values (shape ``(..., n)``) spread over ``like``'s matrices: ``[..., i, j] = x[..., j]``."""
    n = like.ndim
    return S.broadcast_in_dim(x, like.shape, (*range(n - 2), n - 1), like.dims)


def _column_sums(x: Atom) -> Atom:
    return R.reduce_sum(x, (x.aval.ndim - 2,))


def _largest_components(v: Atom) -> tuple[Atom, Atom]:
    """Per eigenvector (column) of ``v``: a mask of its largest-magnitude component(s), and their sum's real part
    (positive: the lowering made it so, summing exact ties as this does), spread over the column."""
    magnitude = E.abs(v)
    mask = E.eq(magnitude, _column_spread(R.reduce_max(magnitude, (v.aval.ndim - 2,)), magnitude.aval))
    total = _column_sums(E.select(mask, v, S.zeros(v.aval)))
    return mask, _column_spread(C.real(total), magnitude.aval)


def _phase_gauge(v: Atom, dv: Atom) -> Atom:
    """``V diag(iθ)``, the tangent term that keeps each eigenvector's largest component real: ``dv + V diag(iθ)``
    has a real sum over those components (``θ_j = -Im(Σ_mask dv_j) / Σ_mask v_j``)."""
    mask, scale = _largest_components(v)
    im = _column_sums(C.imag(E.select(mask, dv, S.zeros(dv.aval))))
    theta = E.div(_column_spread(im, scale.aval), scale)
    return E.mul(v, C.complex(S.zeros(theta.aval), E.neg(theta)))


def _phase_gauge_cotangent(v: Atom, ct_v: Atom) -> Atom:
    """The transpose of ``_phase_gauge`` (as a function of ``dv``): ``mask · (-i Im(Σ_m V̄ V)_j / Σ_mask v_j)``."""
    mask, scale = _largest_components(v)
    spread = _column_spread(C.imag(_column_sums(E.mul(ct_v, v))), scale.aval)
    term = C.complex(S.zeros(scale.aval), E.neg(E.div(spread, scale)))
    return E.select(mask, term, S.zeros(term.aval))


@eigh_p.def_jvp
def _eigh_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (t,), (w, v) = tangents, outs
    if is_zero(t):
        return (Zero(w.aval), Zero(v.aval))
    k = mm(mH(v), mm(_symmetrize_tangent(t), v))  # type: ignore[arg-type]  # Vᴴ dA V
    dv = mm(v, E.mul(_eigh_gaps(w, v), k))
    if not is_complex(v):
        return diagonal(k), dv
    return C.real(diagonal(k)), E.add(dv, _phase_gauge(v, dv))


@eigh_p.def_vjp
def _eigh_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (ct_w, ct_v), (a,), (w, v) = cts, primals, outs
    if (is_zero(ct_w) and is_zero(ct_v)) or not wants[0]:
        return (Zero(a.aval),)
    # Ā_sym = conj(V) (diag(w̄) + F ∘ Vᵀ Ȳ) Vᵀ, Ȳ = V̄ plus the phase gauge's cotangent; then the transpose of
    # reading only the lower triangle.
    inner: Atom | None = None
    if not is_zero(ct_v):
        ybar: Atom = ct_v  # type: ignore[assignment]
        if is_complex(v):
            ybar = E.add(ybar, _phase_gauge_cotangent(v, ybar))
        inner = E.mul(_eigh_gaps(w, v), mm(mT(v), ybar))
    if not is_zero(ct_w):
        d = as_dtype_of(diag_matrix(ct_w, v.aval.with_dtype(w.aval.dtype)), v)  # type: ignore[arg-type]
        inner = d if inner is None else E.add(inner, d)
    assert inner is not None
    return (_symmetrize_cotangent(mm(conj(v), mm(inner, mT(v)))),)


@eigh_p.def_batch
def _eigh_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return eigh(_batch_to_front(args, dims)[0]), (0, 0)


# --------------------------------------------------------------------------------------------------- solve

solve_p = Primitive("solve")


@solve_p.def_shape
def _solve_shape(a: Aval, b: Aval, *, transpose_a: bool) -> Aval:
    """``x`` with ``op(A) x = b``: ``b``'s rows match ``op(A)``'s rows, ``x``'s rows are ``op(A)``'s columns
    (a square matrix's two axes may carry different dim names: it maps one space onto another)."""
    op = "solve"
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"expects square matrices in the last two axes, got {a}", op)
    same_dtype(op, (a, b))
    if b.ndim < 2:
        raise ShapeError(f"right-hand side {b} must be a (batch of) matrices", op)
    batch = _same_batch(op, a, b, 2)
    rows, cols = (a.ndim - 1, a.ndim - 2) if transpose_a else (a.ndim - 2, a.ndim - 1)
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"right-hand side {b} needs {a.shape[-1]} rows to match matrices {a}", op)
    unify_axis(op, (a, b), (rows, b.ndim - 2))
    return Aval(b.shape, b.dtype, (*batch, a.dims[cols], b.dims[-1]))


def solve(a: Atom, b: Atom, *, transpose_a: bool = False) -> Atom:
    """``X`` with ``op(A) X = B`` for square ``A`` (``op(A) = Aᵀ`` if ``transpose_a``), ``B`` a batch of
    matrices with ``A``'s batch axes. Lowered to LAPACK's LU (``getrf``) on CPU, Householder QR elsewhere; a
    singular ``A`` gives infs or NaNs."""
    return bind(solve_p, a, b, transpose_a=transpose_a)  # type: ignore[no-any-return]


@solve_p.def_jvp
def _solve_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, transpose_a: bool
) -> Any:
    (a, _), (ta, tb), (x,) = primals, tangents, outs
    if is_zero(ta) and is_zero(tb):
        return (Zero(x.aval),)
    # op(A) X = B  =>  op(A) dX = dB - op(dA) X.
    rhs = S.instantiate(tb)
    if not is_zero(ta):
        da: Atom = ta  # type: ignore[assignment]
        rhs = E.sub(rhs, mm(mT(da) if transpose_a else da, x))
    return (solve(a, rhs, transpose_a=transpose_a),)


@solve_p.def_vjp
def _solve_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *,
    transpose_a: bool,
) -> Any:
    (ct,), (a, b), (x,) = cts, primals, outs
    if is_zero(ct):
        return (Zero(a.aval), Zero(b.aval))
    ct_b = solve(a, ct, transpose_a=not transpose_a)  # type: ignore[arg-type]  # B̄ = op(A)⁻ᵀ X̄
    ct_a: MaybeZero = Zero(a.aval)
    if wants[0]:
        ct_a = E.neg(mm(x, mT(ct_b)) if transpose_a else mm(ct_b, mT(x)))  # Ā = -B̄ Xᵀ, transposed for Aᵀ
    return (ct_a, ct_b if wants[1] else Zero(b.aval))


@solve_p.def_batch
def _solve_batch(args: Sequence[Atom], dims: Sequence[int | None], *, transpose_a: bool) -> Any:
    a, b = _batch_to_front(args, dims)
    return solve(a, b, transpose_a=transpose_a), 0


# ------------------------------------------------------------------------------------------------- slogdet

slogdet_p = Primitive("slogdet", multiple_results=True)


@slogdet_p.def_shape
def _slogdet_shape(a: Aval) -> tuple[Aval, Aval]:
    op = "slogdet"
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"expects square matrices in the last two axes, got {a}", op)
    sign = Aval(a.shape[:-2], a.dtype, a.dims[:-2])
    return sign, sign.with_dtype(dtypes.real_dtype(a.dtype))


def slogdet(a: Atom) -> tuple[Atom, Atom]:
    """``(sign, log|det|)`` of every matrix: sign 0 and log|det| = -inf for an exactly singular one (LAPACK's LU
    on CPU; Householder QR elsewhere, where rounding leaves a tiny determinant instead). For complex matrices the
    sign is ``det / |det|`` (complex) and log|det| is real."""
    return tuple(bind(slogdet_p, a))


def _identity(a: Aval) -> Atom:
    """Identity matrices batched like ``a``, both matrix axes named as ``a``'s columns."""
    name = a.dims[-1]
    return triangle(S.full_like(Aval(a.shape, a.dtype, (*a.dims[:-2], name, name)), 1), "eq")


@slogdet_p.def_jvp
def _slogdet_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (a,), (t,), (sign, logdet) = primals, tangents, outs
    if is_zero(t):
        return (Zero(sign.aval), Zero(logdet.aval))
    # d log det A = tr(A⁻¹ dA) = τ: log|det| moves by Re τ, the sign by i Im(τ) sign (a real sign is locally
    # constant).
    tau = _trace(solve(a, t))  # type: ignore[arg-type]
    if not is_complex(a):
        return (Zero(sign.aval), tau)
    return (E.mul(sign, imaginary_part(tau)), C.real(tau))


@slogdet_p.def_vjp
def _slogdet_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (ct_sign, ct), (a,), (sign, _) = cts, primals, outs
    complex_sign = is_complex(a) and not is_zero(ct_sign)
    if (is_zero(ct) and not complex_sign) or not wants[0]:
        return (Zero(a.aval),)
    # Ā = τ̄ A⁻ᵀ with τ̄ = ḡ (+ i Im(s̄ sign) for a complex sign): the transpose of the JVP through τ.
    tau_bar = S.zeros(sign.aval) if is_zero(ct) else as_dtype_of(ct, sign)  # type: ignore[arg-type]
    if complex_sign:
        tau_bar = E.add(tau_bar, imaginary_part(E.mul(ct_sign, sign)))  # type: ignore[arg-type]
    aval = a.aval
    n = aval.ndim
    spread = S.broadcast_in_dim(tau_bar, aval.shape, tuple(range(n - 2)), aval.dims)
    return (E.mul(spread, solve(a, _identity(aval), transpose_a=True)),)


@slogdet_p.def_batch
def _slogdet_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return slogdet(_batch_to_front(args, dims)[0]), (0, 0)


# ------------------------------------------------------------------------------------------ det, cofactors

det_p = Primitive("det")
cofactors_p = Primitive("cofactors")


@det_p.def_shape
def _det_shape(a: Aval) -> Aval:
    _slogdet_shape(a)
    return Aval(a.shape[:-2], a.dtype, a.dims[:-2])


def det(a: Atom) -> Atom:
    """``det A`` of every matrix (``sign · exp(log|det|)``, as :func:`slogdet` computes them). Its derivative is
    the cofactor matrix (:func:`cofactors`), finite at singular matrices too."""
    return bind(det_p, a)  # type: ignore[no-any-return]


@cofactors_p.def_shape
def _cofactors_shape(a: Aval) -> Aval:
    _slogdet_shape(a)
    return a


def cofactors(a: Atom) -> Atom:
    """The cofactor matrix ``adj(A)ᵀ`` of every matrix (``det A · A⁻ᵀ`` when ``A`` is invertible), at any rank:
    its lowering never divides by a zero pivot of the factorization (LU on CPU with LAPACK, QR elsewhere), so it
    is exact for rank n-1 (nonzero) and rank <= n-2 (zero) alike."""
    return bind(cofactors_p, a)  # type: ignore[no-any-return]


def _spread_batch(x: Atom, like: Aval) -> Atom:
    """Per-matrix scalars (shape ``like.shape[:-2]``) broadcast over ``like``'s matrices."""
    return S.broadcast_in_dim(x, like.shape, tuple(range(like.ndim - 2)), like.dims)


def _inner(x: Atom, y: Atom) -> Atom:
    """``Σᵢⱼ x[..., i, j] y[..., i, j]``: the Frobenius inner product of every pair of matrices."""
    n = x.aval.ndim
    return R.reduce_sum(E.mul(x, y), (n - 2, n - 1))


@det_p.def_jvp
def _det_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (a,), (t,), (d,) = primals, tangents, outs
    if is_zero(t):
        return (Zero(d.aval),)
    return (_inner(cofactors(a), t),)  # type: ignore[arg-type]  # d det A = <adj(A)ᵀ, dA>


@det_p.def_vjp
def _det_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (ct,), (a,) = cts, primals
    if is_zero(ct) or not wants[0]:
        return (Zero(a.aval),)
    return (E.mul(_spread_batch(ct, a.aval), cofactors(a)),)  # type: ignore[arg-type]


@det_p.def_batch
def _det_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return det(_batch_to_front(args, dims)[0]), 0


def _cofactors_step(c: Atom, h: Atom, d: Atom) -> Atom:
    """``(<C, H> C - C Hᵀ C) / det A``: both the JVP of ``C = det A · A⁻ᵀ`` along ``H`` and (with ``H`` the
    cotangent) its transpose. Divides by det A: second derivatives of det are finite only at invertible A."""
    scaled = E.mul(_spread_batch(_inner(c, h), c.aval), c)
    return E.div(E.sub(scaled, mm(c, mm(mT(h), c))), _spread_batch(d, c.aval))


@cofactors_p.def_jvp
def _cofactors_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (a,), (t,), (c,) = primals, tangents, outs
    if is_zero(t):
        return (Zero(c.aval),)
    return (_cofactors_step(c, t, det(a)),)  # type: ignore[arg-type]


@cofactors_p.def_vjp
def _cofactors_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any) -> Any:
    (ct,), (a,), (c,) = cts, primals, outs
    if is_zero(ct) or not wants[0]:
        return (Zero(a.aval),)
    return (_cofactors_step(c, ct, det(a)),)  # type: ignore[arg-type]


@cofactors_p.def_batch
def _cofactors_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return cofactors(_batch_to_front(args, dims)[0]), 0
