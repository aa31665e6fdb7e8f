"""Singular value decomposition: ``a = u diag(s) vh`` over the last two axes (leading axes are batch axes).

One primitive, ``svd``, with params ``full_matrices`` and ``compute_uv``, on f32, f64, c64 and c128 matrices. Its
outputs are ``(u, s, vh)``, or ``(s,)`` alone without ``compute_uv``; ``s`` is descending, non-negative and real
(f32 for c64, f64 for c128), ``u`` and ``vh`` have ``a``'s dtype. Singular vectors carry a fixed phase: the
largest-magnitude component of each column of ``u`` is real and positive and the matching row of ``vh`` follows
(the rows of a complete ``vh`` beyond ``min(M, N)`` get the same rule on their own), so results are deterministic
and comparable with NumPy's up to that convention.

Derivatives (reduced mode; for ``full_matrices`` only square matrices, where the two modes agree) are JAX's
(``svd_jvp_rule``) for distinct nonzero singular values, with ``dP = uᴴ dA v``, ``F_ij = 1 / (s_j² - s_i²)`` off
the diagonal (``ᴴ`` is the transpose for real matrices)::

    ds = Re diag(dP)
    du = u (F ∘ (dP S + S dPᴴ) + i Im(diag(dP)) S⁻¹) + (I - u uᴴ) dA v S⁻¹   (last term only when M > N)
    dv = v (F ∘ (S dP + dPᴴ S)) + (I - v vᴴ) dAᴴ u S⁻¹                    (last term only when N > M)

and the VJP is their transpose under the pairing ``Re(sum(a b))`` (JAX's). For real matrices the sign rule is
locally constant, so these are the derivatives of the outputs themselves. For complex ones, as in JAX, the phase
of each singular vector pair is a gauge the rules do not follow: ``du`` and ``dv`` are those of *a* smooth SVD,
which differ from the derivative of the phase-fixed ``u``, ``v`` by ``i θ_j u_j``, ``i θ_j v_j``; functions
invariant under that gauge (``s``, ``u diag(s) vh``, ``|u|``, projectors ``u uᴴ``) get exact derivatives.
Repeated singular values give infinities (as in JAX); a zero singular value contributes no ``S⁻¹`` term. Without
``compute_uv`` the rules compute the vectors with a second ``svd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError, TransformError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype
from ..zeros import MaybeZero, Zero, is_zero
from . import complex_parts as C
from . import elementwise as E
from . import structural as S
from .decompositions import (
    as_dtype_of, conj, diag_matrix, diagonal, imaginary_part, is_complex, mH, mm, mT, triangle,
)
from .slicing import with_batch

svd_p = Primitive("svd", multiple_results=True)
_LAPACK_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


@svd_p.def_shape
def _svd_shape(a: Aval, *, full_matrices: bool, compute_uv: bool) -> tuple[Aval, ...]:
    op = "svd"
    check_dtype(op, a, E.INEXACT, E.INEXACT_WHAT)
    if a.dtype not in _LAPACK_DTYPES:  # gesdd is its only lowering: f16/bf16 would fail later, in XLA's compile
        raise DTypeError(f"supports f32 and f64 and their complex c64, c128 (LAPACK's gesdd), got {a}; convert it "
                         "with .astype(f32)", op)
    if not isinstance(full_matrices, bool) or not isinstance(compute_uv, bool):
        raise TypeError(f"svd: full_matrices and compute_uv must be bools, got {full_matrices!r}, {compute_uv!r}")
    if a.ndim < 2:
        raise ShapeError(f"expects a (batch of) matrices, got {a}", op)
    *batch, m, n = a.shape
    *names, m_name, n_name = a.dims
    k, k_name = (m, m_name) if m < n else (n, n_name)
    s = Aval((*batch, k), dtypes.real_dtype(a.dtype), (*names, k_name))
    if not compute_uv:
        return (s,)
    if full_matrices:
        u = Aval((*batch, m, m), a.dtype, (*names, m_name, m_name))
        vh = Aval((*batch, n, n), a.dtype, (*names, n_name, n_name))
    else:
        u = Aval((*batch, m, k), a.dtype, (*names, m_name, k_name))
        vh = Aval((*batch, k, n), a.dtype, (*names, k_name, n_name))
    return u, s, vh


def svd(a: Atom, full_matrices: bool = False, compute_uv: bool = True) -> tuple[Atom, ...]:
    """``(u, s, vh)`` with ``a = u diag(s) vh`` (``s`` descending), or ``(s,)`` without ``compute_uv``."""
    return tuple(bind(svd_p, a, full_matrices=full_matrices, compute_uv=compute_uv))


def _differentiable(a: Aval, full_matrices: bool) -> None:
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise TransformError(
            f"SVD with full_matrices=True is differentiable only for square matrices, got {a} (the extra singular "
            "vectors are not unique); use full_matrices=False",
            "svd",
        )


def _reduced(a: Atom) -> tuple[Atom, Atom, Atom]:
    u, s, vh = svd(a, full_matrices=False, compute_uv=True)
    return u, s, vh


def _spread(d: Atom, like: Aval, axis: int) -> Atom:
    """Vector(s) ``d`` (shape ``(..., k)``) broadcast along matrix axis ``axis`` (-1: ``[i, j] = d[j]``)."""
    n = like.ndim
    return S.broadcast_in_dim(d, like.shape, (*range(n - 2), n + axis), like.dims)


def _scale_cols(x: Atom, d: Atom) -> Atom:
    """``x diag(d)`` (real ``d``)."""
    return E.mul(x, _spread(as_dtype_of(d, x), x.aval, -1))


def _scale_rows(x: Atom, d: Atom) -> Atom:
    """``diag(d) x`` (real ``d``)."""
    return E.mul(x, _spread(as_dtype_of(d, x), x.aval, -2))


def _gaps(s: Atom, like: Atom) -> Atom:
    """``F[i, j] = 1 / (s_j² - s_i²)`` off the diagonal, 0 on it, in ``like``'s dtype (k x k)."""
    square = _square_aval(s)
    sq = E.mul(s, s)
    diff = E.sub(_spread(sq, square, -1), _spread(sq, square, -2))
    eye = triangle(S.full_like(square, 1), "eq")
    off = E.sub(S.full_like(square, 1), eye)
    return as_dtype_of(E.mul(E.div(S.full_like(square, 1), E.add(diff, eye)), off), like)


def _safe_inverse(s: Atom) -> Atom:
    """``1 / s`` with 0 where ``s`` is 0."""
    zero = S.full_like(s, 0)
    is_zero_ = bind(E.eq_p, s, zero)
    return E.select(is_zero_, zero, E.div(S.full_like(s, 1), E.select(is_zero_, S.full_like(s, 1), s)))


def _square_aval(s: Atom) -> Aval:
    a = s.aval
    return Aval((*a.shape, a.shape[-1]), a.dtype, (*a.dims, a.dims[-1]))


def _phase_term(x: Atom, s: Atom) -> Atom:
    """``diag(i Im(diag(x)) / s)`` (k x k): the part of ``du`` along ``u`` itself that a complex SVD's rules carry
    (JAX's ``dUdV_diag``; ``½ (x - xᴴ)`` on the diagonal, over ``s``)."""
    return _scale_cols(imaginary_part(triangle(x, "eq")), _safe_inverse(s))


@svd_p.def_jvp
def _svd_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, full_matrices: bool,
    compute_uv: bool,
) -> Any:
    (a,), (t,) = primals, tangents
    if is_zero(t):
        return tuple(Zero(o.aval) for o in outs)
    dA: Atom = t  # type: ignore[assignment]
    if compute_uv:
        _differentiable(a.aval, full_matrices)
        u, s, vh = outs
    else:
        u, s, vh = _reduced(a)
    v = mH(vh)
    dp = mm(mH(u), mm(dA, v))  # k × k
    ds = diagonal(C.real(dp) if is_complex(dp) else dp)
    if not compute_uv:
        return (ds,)
    f = _gaps(s, dp)
    dps, sdp = _scale_cols(dp, s), _scale_rows(dp, s)
    inner = E.mul(f, E.add(dps, mH(dps)))
    if is_complex(dp):
        inner = E.add(inner, _phase_term(dp, s))
    du = mm(u, inner)
    dv = mm(v, E.mul(f, E.add(sdp, mH(sdp))))
    m, n = a.aval.shape[-2:]
    if m > n:
        dav = mm(dA, v)
        du = E.add(du, _scale_cols(E.sub(dav, mm(u, mm(mH(u), dav))), _safe_inverse(s)))
    if n > m:
        dau = mm(mH(dA), u)
        dv = E.add(dv, _scale_cols(E.sub(dau, mm(v, mm(vh, dau))), _safe_inverse(s)))
    return du, ds, mH(dv)


@svd_p.def_vjp
def _svd_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *,
    full_matrices: bool, compute_uv: bool,
) -> Any:
    (a,) = primals
    if not wants[0] or all(is_zero(c) for c in cts):
        return (Zero(a.aval),)
    ct_u: MaybeZero
    ct_vh: MaybeZero
    if compute_uv:
        _differentiable(a.aval, full_matrices)
        (ct_u, ct_s, ct_vh), (u, s, vh) = cts, outs
    else:
        (ct_s,) = cts
        u, s, vh = _reduced(a)
        ct_u, ct_vh = Zero(u.aval), Zero(vh.aval)
    # The JVP transposed under Re(sum(a b)) (ᴴ transposes to ᴴ, conj to conj). With Ū the cotangent of u, V̄ that
    # of vh conjugate-transposed, vᵀ = conj(vh), G = uᵀŪ and G₂ = vᵀV̄:
    #   Ā = conj(u) P̄ vᵀ + (Ū - conj(u) G) S⁻¹ vᵀ [M > N] + conj(u) S⁻¹ (V̄ - conj(v) G₂)ᴴ [N > M],
    #   P̄ = diag(s̄) + (F ∘ (G - Gᴴ)) S + S (F ∘ (G₂ - G₂ᴴ)) + diag(i Im(diag G) / s) [complex].
    cu, v_t = conj(u), conj(vh)
    square = _square_aval(s).with_dtype(a.aval.dtype)
    pbar: Atom | None = None if is_zero(ct_s) else diag_matrix(as_dtype_of(ct_s, u), square)  # type: ignore[arg-type]
    extra: list[Atom] = []
    m, n = a.aval.shape[-2:]
    if not is_zero(ct_u):
        ubar: Atom = ct_u  # type: ignore[assignment]
        g = mm(mT(u), ubar)
        term = _scale_cols(E.mul(_gaps(s, g), E.sub(g, mH(g))), s)
        if is_complex(g):
            term = E.add(term, _phase_term(g, s))
        pbar = term if pbar is None else E.add(pbar, term)
        if m > n:
            extra.append(mm(_scale_cols(E.sub(ubar, mm(cu, g)), _safe_inverse(s)), v_t))
    if not is_zero(ct_vh):
        vbar = mH(ct_vh)  # type: ignore[arg-type]
        g2 = mm(v_t, vbar)
        term = _scale_rows(E.mul(_gaps(s, g2), E.sub(g2, mH(g2))), s)
        pbar = term if pbar is None else E.add(pbar, term)
        if n > m:
            extra.append(mm(cu, _scale_rows(mH(E.sub(vbar, mm(mT(vh), g2))), _safe_inverse(s))))
    assert pbar is not None
    abar = mm(cu, mm(pbar, v_t))
    for term in extra:
        abar = E.add(abar, term)
    return (abar,)


@svd_p.def_batch
def _svd_batch(args: Sequence[Atom], dims: Sequence[int | None], *, full_matrices: bool, compute_uv: bool) -> Any:
    (a,), (d,) = args, dims
    outs = svd(with_batch(a, d, 0, a.aval.shape[d] if d is not None else 1), full_matrices, compute_uv)
    return outs, tuple(0 for _ in outs)
