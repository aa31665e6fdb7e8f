"""``tnp.linalg`` functions built from the decompositions: solve, inv, det, slogdet, matrix_power.

All go through Householder QR (stable without pivoting): ``a = QR`` so ``a⁻¹ b = R⁻¹ Qᵀ b`` and
``det(a) = det(Q) · prod(diag R)``, where ``det(Q) = ±1`` comes out of the QR primitive itself. Derivatives
follow from the primitives' rules; a singular ``a`` gives infs or NaNs, as in JAX.
"""

from __future__ import annotations

from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType
from ...staging.ir import Atom
from ...staging.primitives import decompositions as D
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import describe, float_operand, op, shape_error, wrap
from .linalg_decompositions import square_operand

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _factor(name: str, a: Any) -> tuple[Atom, Atom, Atom]:
    """``(q, r, det(Q))`` of a float batch of square matrices."""
    return D.qr(square_operand(name, a))


@op
def solve(a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b``. As in NumPy 2, ``b`` is one vector ``(N,)`` if 1-D, else ``(..., N, K)`` with the
    batch axes of ``a``."""
    q, r, _ = _factor("solve", a)
    rhs = float_operand("solve", b).atom
    if rhs.aval.dtype != q.aval.dtype:
        raise shape_error("solve", f"dtypes differ: {describe(wrap(q))} and {describe(wrap(rhs))}")
    batch, n = q.aval.shape[:-2], q.aval.shape[-1]
    vector = rhs.aval.ndim == 1
    fits = rhs.aval.shape == (n,) if vector else rhs.aval.shape[:-1] == (*batch, n)
    if not fits:
        expected = f"({n},) or {(*batch, n, 'K')}"
        raise shape_error("solve", f"b must have shape {expected} for a of shape {q.aval.shape}, got {rhs.aval}")
    if vector:
        column = S.reshape(rhs, (n, 1), (rhs.aval.dims[0], None))
        rhs = S.broadcast_in_dim(column, (*batch, n, 1), (len(batch), len(batch) + 1))
    x = D.triangular_solve(r, D.mm(D.mT(q), rhs), left_side=True, lower=False, transpose_a=False)
    if vector:
        x = S.reshape(x, x.aval.shape[:-1], x.aval.dims[:-1])
    return wrap(x)


@op
def inv(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The inverse ``R⁻¹ Qᵀ`` of every matrix."""
    q, r, _ = _factor("inv", a)
    return wrap(D.triangular_solve(r, D.mT(q), left_side=True, lower=False, transpose_a=False))


@op
def det(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch]]:
    q, r, q_det = _factor("det", a)
    d = D.diagonal(r)
    return wrap(E.mul(q_det, R.reduce_prod(d, (d.aval.ndim - 1,))))


@op
def slogdet(a: Tensor[DT, Unpack[Batch], N, N]) -> tuple[Tensor[DT, Unpack[Batch]], Tensor[DT, Unpack[Batch]]]:
    """``(sign, log|det|)`` without overflow: sign 0 and log|det| = -inf for a singular matrix."""
    q, r, q_det = _factor("slogdet", a)
    d = D.diagonal(r)
    last = (d.aval.ndim - 1,)
    sign = E.mul(q_det, R.reduce_prod(E.sign(d), last))
    return wrap(sign), wrap(R.reduce_sum(E.log(E.abs(d)), last))


@op
def matrix_power(a: Tensor[DT, Unpack[Batch], N, N], n: int) -> Tensor[DT, Unpack[Batch], N, N]:
    """``a`` multiplied by itself ``n`` times by repeated squaring (``n < 0``: powers of the inverse)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"exponent must be an int, got {n!r}")
    x = square_operand("matrix_power", a)
    if n < 0:
        q, r, _ = D.qr(x)
        x, n = D.triangular_solve(r, D.mT(q), left_side=True, lower=False, transpose_a=False), -n
    result: Atom | None = None
    while n:
        if n & 1:
            result = x if result is None else D.mm(result, x)
        n >>= 1
        if n:
            x = D.mm(x, x)
    return wrap(result if result is not None else D.diag_matrix(S.full_like(D.diagonal(x), 1), x.aval))
