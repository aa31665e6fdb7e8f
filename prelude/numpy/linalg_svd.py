"""``tnp.linalg`` functions of the singular value decomposition: svd, svdvals, pinv, matrix_rank, lstsq, cond.

All are built on the ``svd`` primitive (``staging/primitives/svd.py``), which carries the derivative and batching
rules, and works on the last two axes with leading axes as batch axes (``lstsq``: 2-D, as in NumPy). SVD lowers
through LAPACK's ``gesdd`` on CPU (SciPy installed); elsewhere (GPU, ``TENSORSTAGE_LAPACK=0``) through QR and a
Hermitian eigensolver, as accurate (``lowering/rules/svd.py``).

Real (f32, f64) and complex (c64, c128) matrices, as NumPy: singular values, condition numbers and ``lstsq``'s
residuals are real (f32 for c64), factors and solutions keep the operand's dtype. Deliberate differences: the
singular vectors' phases are fixed (each column of ``u`` has its largest-magnitude component real and positive;
NumPy's are LAPACK's), and complex ``hermitian=True`` factors come from tensorstage's ``eigh``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, c64, c128, f32, f64, i32
from ...staging import dtypes
from ...staging.builder import bind
from ...staging.ir import Atom, Aval
from ...staging.primitives import decompositions as D
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import sorting as SO
from ...staging.primitives import structural as S
from ...staging.primitives import svd as SV
from ...tensor import Tensor
from ._core import as_tensor, atom, describe, inexact_operand, op, shape_error, wrap
from .linalg_decompositions import matrix_operand, same_dtype
from .linalg_norms import squared_magnitude

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
K = TypeVar("K")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _last(x: Atom) -> tuple[int]:
    return (x.aval.ndim - 1,)


def _spread_last(v: Atom, like: Atom, axis: int) -> Atom:
    """``v`` (``(..., k)``) broadcast to ``like``'s shape along matrix axis ``axis`` (-1 or -2)."""
    n = like.aval.ndim
    return S.broadcast_in_dim(v, like.aval.shape, (*range(n - 2), n + axis), like.aval.dims)


def _keepdim(v: Atom, like: Atom) -> Atom:
    """Per-matrix scalars ``v`` (``(...,)``) broadcast along the last axis of ``like`` (``(..., k)``)."""
    n = like.aval.ndim
    return S.broadcast_in_dim(v, like.aval.shape, tuple(range(n - 1)), like.aval.dims)


def _tolerance(value: Any, like: Atom) -> Atom:
    """A Python number or tensor threshold as per-matrix values broadcast along ``like``'s last axis."""
    t = atom(value, like.aval.dtype)
    if t.aval.dtype != like.aval.dtype:
        t = E.convert(t, like.aval.dtype)
    if t.aval.ndim == 0:
        return S.broadcast_in_dim(t, like.aval.shape, (), like.aval.dims)
    return _keepdim(t, like)


def _inverse_above(s: Atom, cutoff: Atom) -> Atom:
    """``1 / s`` where ``s > cutoff``, else 0."""
    keep = bind(E.gt_p, s, cutoff)
    one = S.full_like(s, 1)
    return E.select(keep, E.div(one, E.select(keep, s, one)), S.full_like(s, 0))


UFactor = Tensor[DT, Unpack[Batch], M, Any]  # min(M, N) columns (M with full_matrices): no static dim for it
Values = Tensor[DT, Unpack[Batch], Any]
VhFactor = Tensor[DT, Unpack[Batch], Any, N]


@overload
def svd(
    a: Tensor[c64, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    hermitian: bool = False,
) -> tuple[UFactor[c64, Unpack[Batch], M], Values[f32, Unpack[Batch]], VhFactor[c64, Unpack[Batch], N]]: ...
@overload
def svd(
    a: Tensor[c128, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    hermitian: bool = False,
) -> tuple[UFactor[c128, Unpack[Batch], M], Values[f64, Unpack[Batch]], VhFactor[c128, Unpack[Batch], N]]: ...
@overload
def svd(
    a: Tensor[DT, Unpack[Batch], M, N], full_matrices: bool = True, compute_uv: Literal[True] = True,
    hermitian: bool = False,
) -> tuple[UFactor[DT, Unpack[Batch], M], Values[DT, Unpack[Batch]], VhFactor[DT, Unpack[Batch], N]]: ...
@overload
def svd(
    a: Tensor[c64, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    hermitian: bool = False,
) -> Values[f32, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[c128, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    hermitian: bool = False,
) -> Values[f64, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[DT, Unpack[Batch], M, N], full_matrices: bool = True, *, compute_uv: Literal[False],
    hermitian: bool = False,
) -> Values[DT, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[c64, Unpack[Batch], M, N], full_matrices: bool, compute_uv: Literal[False], hermitian: bool = False
) -> Values[f32, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[c128, Unpack[Batch], M, N], full_matrices: bool, compute_uv: Literal[False], hermitian: bool = False
) -> Values[f64, Unpack[Batch]]: ...
@overload
def svd(
    a: Tensor[DT, Unpack[Batch], M, N], full_matrices: bool, compute_uv: Literal[False], hermitian: bool = False
) -> Values[DT, Unpack[Batch]]: ...
@op
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """NumPy's SVD: ``(u, s, vh)`` with ``a = u @ (s[..., None] * vh)`` (reduced factors) and ``s`` descending
    and real, or ``s`` alone with ``compute_uv=False``. ``full_matrices`` (NumPy's default) makes ``u``
    ``(..., M, M)`` and ``vh`` ``(..., N, N)``; else they are ``(..., M, K)`` and ``(..., K, N)``, K = min(M, N).
    ``hermitian``: ``a`` is Hermitian (symmetric), only its lower triangle is read and the factors come from
    ``eigh``, as NumPy's.

    Phases: each column of ``u`` has its largest-magnitude component real and positive, and the matching row of
    ``vh`` follows (NumPy's are LAPACK's, unspecified). Derivatives assume distinct singular values, and with
    ``full_matrices=True`` exist only for square matrices; for complex ``a`` they are JAX's (exact for functions
    that do not depend on the vectors' phases). Lowered through LAPACK's ``gesdd`` on CPU, elsewhere through QR
    and ``eigh`` of ``[[0, A], [Aᴴ, 0]]``."""
    for name, flag in (("full_matrices", full_matrices), ("compute_uv", compute_uv), ("hermitian", hermitian)):
        if not isinstance(flag, bool):
            raise TypeError(f"svd: {name} must be a bool, got {flag!r}")
    x = matrix_operand("svd", a, complex_ok=True)
    if hermitian:
        u, s, vh = _hermitian_svd("svd", x)
        return (wrap(u), wrap(s), wrap(vh)) if compute_uv else wrap(s)
    if not compute_uv:
        return wrap(SV.svd(x, False, False)[0])
    u, s, vh = SV.svd(x, full_matrices, True)
    return wrap(u), wrap(s), wrap(vh)


@overload
def svdvals(x: Tensor[c64, Unpack[Batch], M, N]) -> Tensor[f32, Unpack[Batch], Any]: ...
@overload
def svdvals(x: Tensor[c128, Unpack[Batch], M, N]) -> Tensor[f64, Unpack[Batch], Any]: ...
@overload
def svdvals(x: Tensor[DT, Unpack[Batch], M, N]) -> Tensor[DT, Unpack[Batch], Any]: ...
@op
def svdvals(x: Any) -> Any:
    """Singular values (descending, real) of every matrix: ``svd(x, compute_uv=False)``."""
    return wrap(SV.svd(matrix_operand("svdvals", x, complex_ok=True), False, False)[0])


def _pinv_from(u: Atom, s: Atom, vh: Atom, rcond: Any) -> Atom:
    cutoff = E.mul(_tolerance(rcond, s), _keepdim(R.reduce_max(s, _last(s)), s))
    v = D.mH(vh)
    scaled = E.mul(v, _spread_last(D.as_dtype_of(_inverse_above(s, cutoff), v), v, -1))  # V diag(1/s)
    return D.mm(scaled, D.mH(u))


_UNSET: Any = object()  # pinv's ``rtol`` not passed (NumPy tells that apart from an explicit None)


def _hermitian_svd(name: str, x: Atom) -> tuple[Atom, Atom, Atom]:
    """NumPy's ``svd(x, hermitian=True)``: from ``eigh`` of the lower triangle, ``x = U diag(|w|) (U sign(w))ᴴ``,
    the values sorted descending (the columns of ``U`` ride along: each row sorted by the same keys)."""
    if x.aval.shape[-1] != x.aval.shape[-2]:
        raise shape_error(
            name, f"hermitian=True needs square matrices in the last two axes, got {describe(wrap(x))}"
        )
    w, u = D.eigh(x)
    negative = bind(E.lt_p, w, S.full_like(w, 0))
    signs = E.select(negative, S.full_like(w, -1), S.full_like(w, 1))
    signed = E.mul(u, _spread_last(D.as_dtype_of(signs, u), u, -1))
    magnitude = E.abs(w)
    key = E.neg(magnitude)
    _, s = SO.sort([key, magnitude], w.aval.ndim - 1)
    _, u, signed = SO.sort([_spread_last(key, u, -1), u, signed], u.aval.ndim - 1)
    return u, s, D.mH(signed)


@op
def pinv(
    a: Tensor[DT, Unpack[Batch], M, N], rcond: Any = None, hermitian: bool = False, *, rtol: Any = _UNSET
) -> Tensor[DT, Unpack[Batch], N, M]:
    """Moore-Penrose pseudo-inverse ``V diag(1/s) Uᵀ``, singular values at or below ``rcond * max(s)`` dropped.
    ``rcond`` (a number or per-matrix tensor) defaults to NumPy's 1e-15; ``rtol`` is NumPy 2's name for it (pass
    one of the two; ``rtol=None`` means ``max(M, N) * eps``). ``hermitian``: ``a`` is symmetric, and only its
    lower triangle is read (an eigendecomposition, as NumPy)."""
    if rcond is not None and rtol is not _UNSET:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    x = matrix_operand("pinv", a, complex_ok=True)
    if rcond is not None:
        limit = rcond
    elif rtol is _UNSET:
        limit = 1e-15
    else:
        limit = float(np.finfo(x.aval.dtype).eps) * max(x.aval.shape[-2:]) if rtol is None else rtol
    u, s, vh = _hermitian_svd("pinv", x) if hermitian else SV.svd(x, False, True)
    return wrap(_pinv_from(u, s, vh, limit))


@op
def matrix_rank(
    A: Tensor[DT, Unpack[Sh]], tol: Any = None, hermitian: bool = False, *, rtol: Any = None  # noqa: N803
) -> Tensor[i32, Unpack[tuple[Any, ...]]]:
    """Number of singular values above ``tol`` (absolute), or by default above ``rtol * max(s)`` with ``rtol``
    defaulting to ``max(M, N) * eps`` (NumPy's rule). A vector (or scalar) has rank 1 unless all zero.
    ``hermitian``: ``A`` is symmetric and its singular values are the magnitudes of the eigenvalues of its lower
    triangle, as NumPy."""
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    x = inexact_operand("matrix_rank", A).atom
    if x.aval.ndim < 2:
        nonzero = bind(E.ne_p, x, S.full_like(x, 0))
        any_ = R.reduce_max(E.convert(nonzero, dtypes.DEFAULT_INT), tuple(range(x.aval.ndim)))
        return wrap(any_)
    s = _hermitian_svd("matrix_rank", x)[1] if hermitian else SV.svd(x, False, False)[0]
    if tol is None:
        eps = float(np.finfo(s.aval.dtype).eps) * max(x.aval.shape[-2:])
        relative = _tolerance(eps if rtol is None else rtol, s)
        threshold = E.mul(relative, _keepdim(R.reduce_max(s, _last(s)), s))
    else:
        threshold = _tolerance(tol, s)
    above = E.convert(bind(E.gt_p, s, threshold), dtypes.DEFAULT_INT)
    return wrap(R.reduce_sum(above, _last(s)))


Solution = Tensor[DT, Unpack[tuple[Any, ...]]]


@overload
def lstsq(
    a: Tensor[c64, M, N], b: Tensor[c64, Unpack[Sh]], rcond: float | None = None
) -> tuple[Solution[c64], Tensor[f32, Any], Tensor[i32], Tensor[f32, Any]]: ...
@overload
def lstsq(
    a: Tensor[c128, M, N], b: Tensor[c128, Unpack[Sh]], rcond: float | None = None
) -> tuple[Solution[c128], Tensor[f64, Any], Tensor[i32], Tensor[f64, Any]]: ...
@overload
def lstsq(
    a: Tensor[DT, M, N], b: Tensor[DT, Unpack[Sh]], rcond: float | None = None
) -> tuple[Solution[DT], Tensor[DT, Any], Tensor[i32], Tensor[DT, Any]]: ...
@op
def lstsq(a: Any, b: Any, rcond: float | None = None) -> Any:
    """NumPy's least squares: ``(x, residuals, rank, s)`` for 2-D ``a`` ``(M, N)`` and ``b`` ``(M,)`` or
    ``(M, K)``. ``x = pinv(a) b`` with singular values at or below ``rcond * max(s)`` dropped (``rcond`` defaults
    to ``max(M, N) * eps``); ``rank`` and ``s`` as NumPy. ``residuals`` (squared 2-norm of each column of
    ``b - a x``, real for complex ``a``) has shape ``(K,)`` (``(1,)`` for 1-D ``b``) when ``M > N`` and ``(0,)``
    otherwise; NumPy also empties it for rank-deficient ``a``, which a staged shape cannot depend on, so here it is
    then still computed."""
    x = matrix_operand("lstsq", a, complex_ok=True)
    if x.aval.ndim != 2:
        raise shape_error("lstsq", f"lstsq needs a 2-D matrix a, got {describe(wrap(x))}")
    rhs = inexact_operand("lstsq", b).atom
    same_dtype("lstsq", x, rhs)
    m, n = x.aval.shape
    vector = rhs.aval.ndim == 1
    if rhs.aval.ndim not in (1, 2) or rhs.aval.shape[0] != m:
        raise shape_error("lstsq", f"b must have shape ({m},) or ({m}, K) for a of shape {x.aval.shape}, got {rhs.aval}")
    if vector:
        rhs = S.reshape(rhs, (m, 1), (rhs.aval.dims[0], None))
    u, s, vh = SV.svd(x, False, True)
    limit = float(np.finfo(x.aval.dtype).eps) * max(m, n) if rcond is None else rcond
    solution = D.mm(_pinv_from(u, s, vh, limit), rhs)
    cutoff = E.mul(_tolerance(limit, s), _keepdim(R.reduce_max(s, _last(s)), s))
    rank = R.reduce_sum(E.convert(bind(E.gt_p, s, cutoff), dtypes.DEFAULT_INT), _last(s))
    if m > n:
        residuals = R.reduce_sum(squared_magnitude(E.sub(D.mm(x, solution), rhs)), (0,))
    else:
        residuals = S.zeros(Aval((0,), s.aval.dtype))
    if vector:
        solution = S.reshape(solution, (n,), (solution.aval.dims[0],))
    return wrap(solution), wrap(residuals), wrap(rank), wrap(s)


@overload
def cond(x: Tensor[c64, Unpack[Batch], M, N], p: Any = None) -> Tensor[f32, Unpack[Batch]]: ...
@overload
def cond(x: Tensor[c128, Unpack[Batch], M, N], p: Any = None) -> Tensor[f64, Unpack[Batch]]: ...
@overload
def cond(x: Tensor[DT, Unpack[Batch], M, N], p: Any = None) -> Tensor[DT, Unpack[Batch]]: ...
@op
def cond(x: Any, p: Any = None) -> Any:
    """Condition number: ``max(s) / min(s)`` for ``p`` None or 2 (``min/max`` for -2), else ``norm(x, p) *
    norm(inv(x), p)`` for square ``x`` (p: 'fro', 'nuc', 1, -1, inf, -inf). As NumPy, a NaN result from an input
    without NaNs (a singular matrix) is inf, and empty matrices are an error."""
    a = matrix_operand("cond", x, complex_ok=True)
    if a.aval.shape[-1] * a.aval.shape[-2] == 0:
        raise shape_error("cond", f"cond is not defined on empty matrices, got {describe(wrap(a))}")
    if p is None or p in (2, -2):
        (s,) = SV.svd(a, False, False)
        big, small = R.reduce_max(s, _last(s)), R.reduce_min(s, _last(s))
        ratio = E.div(small, big) if p == -2 else E.div(big, small)
    else:
        ratio = _cond_from_inverse(a, p)
    return wrap(_nan_as_inf(ratio, a))


def _cond_from_inverse(a: Atom, p: Any) -> Atom:
    from .linalg_norms import norm
    from .linalg_solvers import inv

    if a.aval.shape[-1] != a.aval.shape[-2]:
        raise shape_error("cond", f"cond with p={p!r} needs square matrices, got {describe(wrap(a))}")
    t = as_tensor(wrap(a))
    axes = (a.aval.ndim - 2, a.aval.ndim - 1)
    return as_tensor(norm(t, p, axes) * norm(inv(t), p, axes)).atom


def _nan_as_inf(ratio: Atom, a: Atom) -> Atom:
    """``ratio`` with NaNs turned to inf where the matrix they come from has no NaN (NumPy's rule for cond)."""
    matrix_axes = (a.aval.ndim - 2, a.aval.ndim - 1)
    nan_free = R.reduce_min(E.convert(bind(E.eq_p, a, a), dtypes.DEFAULT_INT), matrix_axes)
    fix = bind(E.and_p, bind(E.ne_p, ratio, ratio), bind(E.ne_p, nan_free, S.full_like(nan_free, 0)))
    return E.select(fix, S.full_like(ratio, np.inf), ratio)
