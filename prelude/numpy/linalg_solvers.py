"""``tnp.linalg`` functions built from the decompositions: solve, inv, det, slogdet, matrix_power, tensorinv,
tensorsolve.

solve and slogdet are primitives whose lowering picks the factorization (staging is platform-agnostic): LAPACK's
LU with partial pivoting (``getrf``) on CPU, as NumPy does; Householder QR (stable without pivoting) elsewhere.
inv is ``solve(a, I)``; det is a primitive (its value ``sign · exp(log|det|)``) whose derivative is the cofactor
matrix, finite at singular matrices. Other derivatives follow from the primitives' rules; a singular ``a`` gives infs
or NaNs, as in JAX (det and slogdet: 0 and -inf on CPU, like NumPy).

Every function takes f32/f64 and c64/c128 matrices; slogdet of a complex matrix gives a complex sign of modulus 1
and a real log|det| (f32 for c64, f64 for c128), as NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, c64, c128, f32, f64
from ...staging import dtypes as _dt
from ...staging.ir import Atom, Aval
from ...staging.primitives import decompositions as D
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import as_tensor, broadcast_shapes, describe, inexact_operand, normalize_axes, op, shape_error, wrap
from .linalg_decompositions import same_dtype, square_operand

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
Sh = TypeVarTuple("Sh")
S2 = TypeVarTuple("S2")


def _identity(a: Atom) -> Atom:
    """Identity matrices with ``a``'s batch axes, both matrix axes named as ``a``'s rows (``solve(a, I)`` then
    gives ``a⁻¹`` with its axes named the other way round)."""
    aval = a.aval
    name = aval.dims[-2]
    like = Aval(aval.shape, aval.dtype, (*aval.dims[:-2], name, name))
    return D.triangle(S.full_like(like, 1), "eq")


def _with_batch(x: Atom, batch: Aval) -> Atom:
    """``x`` (``(..., R, C)``) broadcast to the batch axes ``batch`` (its matrix axes kept)."""
    shape, dims = (*batch.shape, *x.aval.shape[-2:]), (*batch.dims, *x.aval.dims[-2:])
    if x.aval.shape == shape:
        return x
    return S.broadcast_to(x, Aval(shape, x.aval.dtype, dims))


@op
def solve(a: Tensor[DT, Unpack[Batch], N, N], b: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]:
    """``x`` with ``a x = b``. As in NumPy 2, ``b`` is one vector ``(N,)`` if 1-D (solved against every matrix
    of ``a``), else ``(..., N, K)`` whose batch axes broadcast with ``a``'s."""
    x = square_operand("solve", a, complex_ok=True)
    rhs = inexact_operand("solve", b).atom
    same_dtype("solve", x, rhs)
    n = x.aval.shape[-1]
    vector = rhs.aval.ndim == 1
    if rhs.aval.ndim == 0 or rhs.aval.shape[-1 if vector else -2] != n:
        raise shape_error("solve", f"b must have shape ({n},) or (..., {n}, K) for a of shape {describe(wrap(x))}, "
                          f"got {describe(wrap(rhs))}")
    if vector:
        rhs = S.reshape(rhs, (n, 1), (rhs.aval.dims[0], None))
    batch = broadcast_shapes("solve", [Aval(t.aval.shape[:-2], t.aval.dtype, t.aval.dims[:-2]) for t in (x, rhs)])
    out = D.solve(_with_batch(x, batch), _with_batch(rhs, batch))
    if vector:
        out = S.reshape(out, out.aval.shape[:-1], out.aval.dims[:-1])
    return wrap(out)


@op
def inv(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The inverse of every matrix: ``solve(a, I)``."""
    x = square_operand("inv", a, complex_ok=True)
    return wrap(D.solve(x, _identity(x)))


@op
def det(a: Tensor[DT, Unpack[Batch], N, N]) -> Tensor[DT, Unpack[Batch]]:
    """``sign · exp(log|det|)``, as :func:`slogdet` computes them. Its gradient is the cofactor matrix
    ``adj(a)ᵀ`` (``det(a) · a⁻ᵀ`` when ``a`` is invertible), also at singular ``a``: nonzero for rank n-1, zero
    for rank <= n-2 (JAX's rule gives 0 for some rank n-1 matrices). Second derivatives are finite at invertible
    ``a`` only."""
    return wrap(D.det(square_operand("det", a, complex_ok=True)))


@overload
def slogdet(a: Tensor[c64, Unpack[Batch], N, N]) -> tuple[Tensor[c64, Unpack[Batch]], Tensor[f32, Unpack[Batch]]]: ...
@overload
def slogdet(
    a: Tensor[c128, Unpack[Batch], N, N]
) -> tuple[Tensor[c128, Unpack[Batch]], Tensor[f64, Unpack[Batch]]]: ...
@overload
def slogdet(a: Tensor[DT, Unpack[Batch], N, N]) -> tuple[Tensor[DT, Unpack[Batch]], Tensor[DT, Unpack[Batch]]]: ...
@op
def slogdet(a: Any) -> Any:
    """``(sign, log|det|)`` without overflow: sign 0 and log|det| = -inf for a singular matrix. For a complex
    matrix the sign is ``det / |det|`` and log|det| is real."""
    sign, logdet = D.slogdet(square_operand("slogdet", a, complex_ok=True))
    return wrap(sign), wrap(logdet)


def _power_operand(a: Any, n: int) -> Atom:
    """A batch of square float matrices, or integer ones for ``n >= 0`` (NumPy takes those too; a negative power
    of an integer matrix is a float one, which tensorstage does not convert to for the user)."""
    t = as_tensor(a)
    if n >= 0 and _dt.is_integer(t.aval.dtype):
        if t.aval.ndim < 2 or t.aval.shape[-1] != t.aval.shape[-2]:
            raise shape_error("matrix_power", f"needs square matrices in the last two axes, got {describe(t)}")
        return t.atom
    return square_operand("matrix_power", t, complex_ok=True)


@op
def matrix_power(a: Tensor[DT, Unpack[Batch], N, N], n: int) -> Tensor[DT, Unpack[Batch], N, N]:
    """``a`` multiplied by itself ``n`` times by repeated squaring (``n < 0``: powers of the inverse; integer
    matrices need ``n >= 0``)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"exponent must be an int, got {n!r}")
    x = _power_operand(a, n)
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


@op
def tensorinv(a: Tensor[DT, Unpack[Sh]], ind: int = 2) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """NumPy's ``linalg.tensorinv``: the inverse of ``a`` read as a map from its last axes to its first ``ind``
    ones (their sizes' products must agree); the result has shape ``a.shape[ind:] + a.shape[:ind]``."""
    x = inexact_operand("tensorinv", a).atom
    if not isinstance(ind, int) or isinstance(ind, bool) or ind <= 0:
        raise ValueError(f"ind must be a positive int, got {ind!r}")
    shape, dims = x.aval.shape, x.aval.dims
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if ind > x.aval.ndim or rows != cols:
        raise shape_error(
            "tensorinv", f"the first {ind} axes and the rest of {describe(wrap(x))} must have equal size products "
            f"({rows} vs {cols})",
        )
    square = S.reshape(x, (rows, cols), (None, None))
    inverse = D.solve(square, _identity(square))
    return wrap(S.reshape(inverse, (*shape[ind:], *shape[:ind]), (*dims[ind:], *dims[:ind])))


@op
def tensorsolve(
    a: Tensor[DT, Unpack[Sh]], b: Tensor[DT, Unpack[S2]], axes: Sequence[int] | None = None
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """NumPy's ``linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) = b``; ``axes`` of ``a`` are moved to
    the end first. ``x`` has shape ``a.shape[b.ndim:]``; both that and ``a.shape[:b.ndim]`` have ``b``'s size."""
    x = inexact_operand("tensorsolve", a).atom
    rhs = inexact_operand("tensorsolve", b).atom
    same_dtype("tensorsolve", x, rhs)
    if axes is not None:
        moved = normalize_axes("tensorsolve", tuple(axes), wrap(x), allow_none=False)
        rest = [k for k in range(x.aval.ndim) if k not in moved]
        x = S.transpose(x, (*rest, *moved))
    nb = rhs.aval.ndim
    solved_shape, solved_dims = x.aval.shape[nb:], x.aval.dims[nb:]
    size = math.prod(solved_shape)
    if x.aval.ndim < nb or math.prod(x.aval.shape[:nb]) != rhs.aval.size or size != rhs.aval.size:
        raise shape_error(
            "tensorsolve", f"the first {nb} axes of a {describe(wrap(x))} (after moving axes={axes!r}) and the "
            f"others must both have the size of b {describe(wrap(rhs))}",
        )
    square = S.reshape(x, (size, size), (None, None))
    column = S.reshape(rhs, (size, 1), (None, None))
    out = D.solve(square, column)
    return wrap(S.reshape(out, solved_shape, solved_dims))
