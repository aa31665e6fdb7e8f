"""``tensorstage.lax.linalg``'s Householder functions, in LAPACK's packed form, as prelude code: ``hessenberg``
(``gehrd``), ``tridiagonal`` (``sytrd``/``hetrd``), ``householder_product`` (``orgqr``/``ungqr``) and ``ormqr``
(``ormqr``/``unmqr``). Each reflector is a ``fori_loop`` step of rank-1 updates on the whole (batch of) matrices, with
the step's column picked by a dynamic index, so they batch over leading axes, vmap, and lower on every platform.

A reflector ``H = I - tau v vᴴ`` is LAPACK's ``larfg``'s: ``v[i] = 1``, ``Hᴴ [alpha; x] = [beta; 0]`` with ``beta``
real, ``-sign(Re alpha)`` times the norm, and ``tau = 0`` (``H = I``) where ``x`` is zero and ``alpha`` real.

Deliberate differences from jax.lax.linalg:
- They differentiate (JAX's primitives have no derivative rules): the derivative is that of the algorithm, which
  is smooth wherever no reflector is trivial (``tau = 0``).
- ``hessenberg`` and ``tridiagonal`` run on every platform (JAX: CPU, and CPU/GPU); LAPACK's rescaling of
  ``larfg`` for norms below ``safmin / eps`` (about 1e-292 in f64) is not done, and the unblocked algorithm
  rounds differently from LAPACK's blocked one (the same factors up to rounding).
- ``tridiagonal`` of a 0x0 matrix and ``hessenberg`` of one raise ShapeError (JAX: an error or a negative shape).
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...dtypes import DType, c64, c128, f32, f64, i32
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import describe, inexact_operand, op, shape_error, wrap
from ..numpy.linalg_decompositions import matrix_operand, same_dtype, square_operand

__all__ = ["hessenberg", "householder_product", "ormqr", "tridiagonal"]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
M = TypeVar("M")
K = TypeVar("K")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _conj(x: Any) -> Any:
    return tnp.conj(x) if _dt.is_complex(x.dtype) else x


def _real(x: Any) -> Any:
    """The real part of a complex ``x``; a real ``x`` itself."""
    if _dt.is_complex(x.dtype):
        return tnp.real(x)
    return x


def _mH(x: Any) -> Any:  # noqa: N802 - the usual name
    return _conj(tnp.swapaxes(x, -1, -2))


def _column(x: Any, i: Any) -> Any:
    """Column ``i`` (a traced index) of every matrix in ``x``."""
    return tnp.take(x, i, axis=-1)


def _larfg(alpha: Any, x_norm2: Any) -> tuple[Any, Any, Any]:
    """``(beta, tau, scale)`` of LAPACK's ``larfg`` for the leading entry ``alpha`` and the squared norm of the rest
    ``x`` (the reflector's tail is ``x * scale``). ``beta`` is real, in ``alpha``'s dtype.

    A trivial reflector (``x`` zero, ``alpha`` real) takes its values from safe stand-ins, so that neither the value
    nor the derivative of the other branch is ever a NaN (a ``where`` passes a NaN derivative on)."""
    real = _real(alpha)
    trivial = x_norm2 == 0
    if _dt.is_complex(alpha.dtype):
        trivial = trivial & (tnp.imag(alpha) == 0)
    norm2 = _real(alpha * _conj(alpha)) + x_norm2
    norm = tnp.sqrt(tnp.where(trivial, tnp.ones_like(norm2), norm2))
    beta = tnp.where(trivial, real, -tnp.copysign(norm, real)).astype(alpha.dtype)
    safe_beta = tnp.where(trivial, tnp.ones_like(beta), beta)
    gap = tnp.where(trivial, tnp.ones_like(alpha), alpha - beta)
    tau = tnp.where(trivial, tnp.zeros_like(alpha), (beta - alpha) / safe_beta)
    return beta, tau, 1 / gap


def _reflector(col: Any, i: Any) -> tuple[Any, Any, Any]:
    """``(v, tau, beta)``: the reflector annihilating ``col[i + 1:]`` into ``col[i]`` (a batch of columns);
    ``v`` is zero above ``i`` and one at ``i``."""
    rows = tnp.arange(col.shape[-1], dtype=i32)
    tail = tnp.where(rows > i, col, tnp.zeros_like(col))
    beta, tau, scale = _larfg(_column(col, i), tnp.sum(_real(tail * _conj(tail)), axis=-1))
    v = tnp.where(rows == i, tnp.ones_like(col), tail * scale[..., None])
    return v, tau, beta


def _reflect_left(c: Any, v: Any, tau: Any) -> Any:
    """``(I - tau v vᴴ) c``."""
    return c - (tau[..., None] * v)[..., :, None] * (_conj(v)[..., None, :] @ c)


def _reflect_right(c: Any, v: Any, tau: Any) -> Any:
    """``c (I - tau v vᴴ)``."""
    return c - (c @ v[..., :, None]) * (tau[..., None] * _conj(v))[..., None, :]


def _set_column(x: Any, i: Any, column: Any) -> Any:
    at = tnp.broadcast_to(tnp.arange(x.shape[-1], dtype=i32) == i, x.shape)  # tnp refuses implicit outer broadcasts
    return tnp.where(at, tnp.broadcast_to(column[..., :, None], x.shape), x)


def _set_entry(x: Any, i: Any, value: Any) -> Any:
    at = tnp.broadcast_to(tnp.arange(x.shape[-1], dtype=i32) == i, x.shape)
    return tnp.where(at, tnp.broadcast_to(value[..., None], x.shape), x)


def _grid(n: int) -> Any:
    """Row and column indices of an ``(n, n)`` matrix (NumPy arrays: static masks)."""
    return np.indices((n, n))


def _rows_of(v: Any, like: Any) -> Any:
    """``v`` (a batch of rows) repeated down ``like``'s matrices."""
    return tnp.broadcast_to(v[..., None, :], like.shape)


def _reflectors(a: Any, k: int) -> Any:
    """The reflectors ``v_i`` (columns, ``i < k``) kept below the diagonal of ``a``, with the implied unit diagonal."""
    m = a.shape[-2]
    unit = tnp.eye(m, k, dtype=a.dtype)
    return tnp.tril(a[..., :, :k], -1) + unit


def _apply_reflectors(a: Any, taus: Any, c: Any, left: bool, adjoint: bool) -> Any:
    """``Q c``, ``Qᴴ c``, ``c Q`` or ``c Qᴴ`` for ``Q = H_0 ... H_{k-1}``, one reflector per loop step."""
    k = taus.shape[-1]
    if k == 0:
        return c  # no reflectors (and none to stage: the loop body's dynamic index needs a nonempty axis)
    vs = _reflectors(a, k)
    coefs = _conj(taus) if adjoint else taus
    backwards = left != adjoint  # Q c and c Qᴴ apply H_{k-1} first

    def step(j: Any, c: Any) -> Any:
        i = k - 1 - j if backwards else j
        v, tau = _column(vs, i), tnp.take(coefs, i, axis=-1)
        return _reflect_left(c, v, tau) if left else _reflect_right(c, v, tau)

    return fori_loop(0, k, step, c)


def _reflector_operands(name: str, a: Any, taus: Any) -> tuple[Any, Any]:
    """``a`` (a batch of matrices) and ``taus`` (one dtype, the same batch, at most ``min(m, n)`` of them)."""
    x = wrap(matrix_operand(name, a, complex_ok=True))
    t = inexact_operand(name, taus)
    same_dtype(name, x.atom, t.atom)
    if t.ndim != x.ndim - 1 or t.shape[:-1] != x.shape[:-2] or t.shape[-1] > min(x.shape[-2:]):
        raise shape_error(name, f"lax.linalg.{name}: taus {describe(t)} must be (..., k) with the batch axes of a "
                          f"{describe(x)} and k <= min(m, n)")
    return x, t


@op
def householder_product(a: Tensor[DT, Unpack[Batch], M, N],
                        taus: Tensor[DT, Unpack[Batch], K]) -> Tensor[DT, Unpack[Batch], M, N]:
    """The first ``n`` columns of ``Q = H_0 ... H_{k-1}`` (LAPACK's ``orgqr``/``ungqr``): ``H_i = I - taus[i] v vᴴ``
    with ``v`` zero above row ``i``, one at row ``i`` and ``a[i + 1:, i]`` below. Needs ``m >= n``."""
    x, t = _reflector_operands("householder_product", a, taus)
    m, n = x.shape[-2:]
    if m < n:
        raise shape_error("householder_product", f"lax.linalg.householder_product needs at least as many rows as "
                          f"columns, got {describe(x)}")
    eye = tnp.broadcast_to(tnp.eye(m, n, dtype=x.dtype), x.shape)
    return _apply_reflectors(x, t, eye, left=True, adjoint=False)  # type: ignore[no-any-return]


@op
def ormqr(a: Tensor[DT, Unpack[Batch], M, N], taus: Tensor[DT, Unpack[Batch], K], c: Tensor[DT, Unpack[Sh]], *,
          left: bool = True, transpose: bool = False) -> Tensor[DT, Unpack[Sh]]:
    """``Q c`` (``left``) or ``c Q``, with ``Qᴴ`` for ``Q`` if ``transpose``, without forming ``Q = H_0 ... H_{k-1}``
    (the reflectors as :func:`householder_product` reads them; LAPACK's ``ormqr``/``unmqr``)."""
    x, t = _reflector_operands("ormqr", a, taus)
    y = wrap(matrix_operand("ormqr", c, complex_ok=True))
    same_dtype("ormqr", x.atom, y.atom)
    m = x.shape[-2]
    if y.shape[:-2] != x.shape[:-2] or y.shape[-2 if left else -1] != m:
        where = "rows" if left else "columns"
        raise shape_error("ormqr", f"lax.linalg.ormqr(left={left}): c {describe(y)} must have the batch axes of a "
                          f"{describe(x)} and as many {where} as a has rows")
    return _apply_reflectors(x, t, y, left=left, adjoint=transpose)  # type: ignore[no-any-return]


def _nonempty_square(name: str, a: Any) -> Any:
    x = wrap(square_operand(name, a, complex_ok=True))
    if x.shape[-1] == 0:
        raise shape_error(name, f"lax.linalg.{name} needs matrices of at least 1x1, got {describe(x)}")
    return x


@op
def hessenberg(a: Tensor[DT, Unpack[Batch], N, N]) -> tuple[Tensor[DT, Unpack[Batch], N, N],
                                                             Tensor[DT, Unpack[Batch], Any]]:
    """``(packed, taus)``: ``a = Q H Qᴴ`` in LAPACK's ``gehrd`` form: ``H`` (upper Hessenberg) on and above the
    first subdiagonal, reflector ``i``'s tail (from row ``i + 2``) below it in column ``i``, ``Q = H_0 ... H_{n-2}``
    (``householder_product`` of the packed matrix shifted one row down and one column right)."""
    x = _nonempty_square("hessenberg", a)
    n = x.shape[-1]

    def step(i: Any, carry: Any) -> Any:
        h, tails, taus = carry
        v, tau, _ = _reflector(_column(h, i), i + 1)
        h = _reflect_right(_reflect_left(h, v, _conj(tau)), v, tau)
        return h, _set_column(tails, i, v), _set_entry(taus, i, tau)

    init = (x, tnp.zeros_like(x), tnp.zeros((*x.shape[:-2], n - 1), dtype=x.dtype))
    h, tails, taus = fori_loop(0, n - 1, step, init)
    rows, cols = _grid(n)
    return tnp.where(rows > cols + 1, tails, h), taus


def _hermitian_from_lower(x: Any) -> Any:
    """The Hermitian matrix LAPACK's ``hetrd`` reads from the lower triangle (the diagonal's real part)."""
    diagonal = _real(tnp.diagonal(x, axis1=-2, axis2=-1)).astype(x.dtype)
    below = tnp.tril(x, -1)
    rows, cols = _grid(x.shape[-1])
    return tnp.where(rows == cols, _rows_of(diagonal, x), below + _mH(below))


def _tridiagonal_lower(x: Any) -> tuple[Any, Any, Any, Any]:
    """LAPACK's ``sytd2``/``hetd2`` with ``uplo='L'``: reflector ``i`` annihilates column ``i`` below row ``i + 1``
    of the Hermitian matrix, applied on both sides."""
    n = x.shape[-1]

    def step(i: Any, carry: Any) -> Any:
        t, tails, es, taus = carry
        v, tau, beta = _reflector(_column(t, i), i + 1)
        t = _reflect_right(_reflect_left(t, v, _conj(tau)), v, tau)
        return t, _set_column(tails, i, v), _set_entry(es, i, beta), _set_entry(taus, i, tau)

    vector = tnp.zeros((*x.shape[:-2], n - 1), dtype=x.dtype)
    t, tails, es, taus = fori_loop(0, n - 1, step, (_hermitian_from_lower(x), tnp.zeros_like(x), vector, vector))
    d = tnp.diagonal(t, axis1=-2, axis2=-1)
    real_d, real_e = _real(d), _real(es)
    rows, cols = _grid(n)
    subdiagonal = tnp.pad(es, [(0, 0)] * (es.ndim - 1) + [(0, 1)])  # row j + 1 of column j
    packed = tnp.where(rows > cols + 1, tails, tnp.where(rows == cols + 1, _rows_of(subdiagonal, x), x))
    packed = tnp.where(rows == cols, _rows_of(real_d.astype(x.dtype), x), packed)
    return packed, real_d, real_e, taus


@overload
def tridiagonal(a: Tensor[c64, Unpack[Batch], N, N], *, lower: bool = True) -> tuple[
    Tensor[c64, Unpack[Batch], N, N], Tensor[f32, Unpack[Batch], N], Tensor[f32, Unpack[Batch], Any],
    Tensor[c64, Unpack[Batch], Any]]: ...
@overload
def tridiagonal(a: Tensor[c128, Unpack[Batch], N, N], *, lower: bool = True) -> tuple[
    Tensor[c128, Unpack[Batch], N, N], Tensor[f64, Unpack[Batch], N], Tensor[f64, Unpack[Batch], Any],
    Tensor[c128, Unpack[Batch], Any]]: ...
@overload
def tridiagonal(a: Tensor[DT, Unpack[Batch], N, N], *, lower: bool = True) -> tuple[
    Tensor[DT, Unpack[Batch], N, N], Tensor[DT, Unpack[Batch], N], Tensor[DT, Unpack[Batch], Any],
    Tensor[DT, Unpack[Batch], Any]]: ...
@op
def tridiagonal(a: Any, *, lower: bool = True) -> Any:
    """``(packed, d, e, taus)``: ``a = Q T Qᴴ`` for the symmetric (Hermitian) matrix whose ``lower`` (else upper)
    triangle is ``a``'s, in LAPACK's ``sytrd``/``hetrd`` form: ``T``'s diagonal ``d`` and off-diagonal ``e`` (real),
    the reflectors' tails beyond them in that triangle (the other triangle is ``a``'s, untouched). ``lower``:
    ``Q = H_0 ... H_{n-2}``, reflector ``i`` below row ``i + 1`` of column ``i``; upper: ``Q = H_{n-2} ... H_0``,
    reflector ``i`` above row ``i`` of column ``i + 1``."""
    x = _nonempty_square("tridiagonal", a)
    if lower:
        return _tridiagonal_lower(x)
    # Upper is lower on the matrix reversed along both axes (LAPACK runs its steps from the last column back).
    packed, d, e, taus = _tridiagonal_lower(tnp.flip(x, axis=(-2, -1)))
    return tnp.flip(packed, axis=(-2, -1)), tnp.flip(d, axis=-1), tnp.flip(e, axis=-1), tnp.flip(taus, axis=-1)
