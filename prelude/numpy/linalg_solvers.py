"""``tnp.linalg`` functions built from the decompositions: solve, inv, det, slogdet, matrix_power.

solve and slogdet are primitives whose lowering picks the factorization (staging is platform-agnostic): LAPACK's
LU with partial pivoting (``getrf``) on CPU, as NumPy does; Householder QR (stable without pivoting) elsewhere.
inv is ``solve(a, I)`` and det is ``sign · exp(log|det|)``. Derivatives follow from the primitives' rules; a
singular ``a`` gives infs or NaNs, as in JAX (det and slogdet: 0 and -inf on CPU, like NumPy).
"""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType
from ...staging.ir import Atom, Aval
from ...staging.primitives import decompositions as D
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import describe, float_operand, op, shape_error, wrap
from .linalg_decompositions import square_operand

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")


def _identity(a: Atom) -> Atom:
    """Identity matrices with ``a``'s batch axes, both matrix axes named as ``a``'s rows (``solve(a, I)`` then
    gives ``a⁻¹`` with its axes named the other way round)."""
    aval = a.aval
    name = aval.dims[-2]
    like = Aval(aval.shape, aval.dtype, (*aval.dims[:-2], name, name))
    return D.triangle(S.full_like(like, 1), "eq")


@op
def solve(a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b``. As in NumPy 2, ``b`` is one vector ``(N,)`` if 1-D, else ``(..., N, K)`` with the
    batch axes of ``a``."""
    x = square_operand("solve", a)
    rhs = float_operand("solve", b).atom
    if rhs.aval.dtype != x.aval.dtype:
        raise shape_error("solve", f"dtypes differ: {describe(wrap(x))} and {describe(wrap(rhs))}")
    batch, n = x.aval.shape[:-2], x.aval.shape[-1]
    vector = rhs.aval.ndim == 1
    fits = rhs.aval.shape == (n,) if vector else rhs.aval.shape[:-1] == (*batch, n)
    if not fits:
        expected = f"({n},) or {(*batch, n, 'K')}"
        raise shape_error("solve", f"b must have shape {expected} for a of shape {x.aval.shape}, got {rhs.aval}")
    if vector:
        column = S.reshape(rhs, (n, 1), (rhs.aval.dims[0], None))
        rhs = S.broadcast_in_dim(column, (*batch, n, 1), (len(batch), len(batch) + 1))
    out = D.solve(x, rhs)
    if vector:
        out = S.reshape(out, out.aval.shape[:-1], out.aval.dims[:-1])
    return wrap(out)


@op
def inv(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The inverse of every matrix: ``solve(a, I)``."""
    x = square_operand("inv", a)
    return wrap(D.solve(x, _identity(x)))


@op
def det(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch]]:
    """``sign · exp(log|det|)`` from :func:`slogdet`; its gradient is ``det(a) · a⁻ᵀ``."""
    sign, logdet = D.slogdet(square_operand("det", a))
    return wrap(E.mul(sign, E.exp(logdet)))


@op
def slogdet(a: Tensor[DT, Unpack[Batch], N, N]) -> tuple[Tensor[DT, Unpack[Batch]], Tensor[DT, Unpack[Batch]]]:
    """``(sign, log|det|)`` without overflow: sign 0 and log|det| = -inf for a singular matrix."""
    sign, logdet = D.slogdet(square_operand("slogdet", a))
    return wrap(sign), wrap(logdet)


@op
def matrix_power(a: Tensor[DT, Unpack[Batch], N, N], n: int) -> Tensor[DT, Unpack[Batch], N, N]:
    """``a`` multiplied by itself ``n`` times by repeated squaring (``n < 0``: powers of the inverse)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"exponent must be an int, got {n!r}")
    x = square_operand("matrix_power", a)
    if n < 0:
        x, n = D.solve(x, _identity(x)), -n
    result: Atom | None = None
    while n:
        if n & 1:
            result = x if result is None else D.mm(result, x)
        n >>= 1
        if n:
            x = D.mm(x, x)
    return wrap(result if result is not None else D.diag_matrix(S.full_like(D.diagonal(x), 1), x.aval))
