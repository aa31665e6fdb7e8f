"""``tensorstage.lax.linalg``'s ``cholesky_update`` (rank-1 update of a Cholesky factor by Givens rotations, the
algorithm of JAX's portable lowering) and ``symmetric_product`` (``alpha a aᵀ + beta c``, BLAS's ``syrk``), as
prelude code. Both take real floating-point matrices only, as JAX's.

Deliberate differences from jax.lax.linalg:
- Both differentiate (JAX's primitives have no derivative rules); ``cholesky_update`` also batches over leading
  axes and vmaps (JAX's refuses to batch).
- ``symmetric_product`` fills the whole matrix (JAX guarantees only the lower triangle unless
  ``symmetrize_output``, on some platforms).
"""

from __future__ import annotations

from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...dtypes import DType, i32
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import describe, float_operand, op, shape_error
from ..numpy.linalg_decompositions import same_dtype

__all__ = ["cholesky_update", "symmetric_product"]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
M = TypeVar("M")
Batch = TypeVarTuple("Batch")


def _real_matrices(name: str, x: Any) -> Any:
    t = float_operand(name, x)
    if t.ndim < 2:
        raise shape_error(name, f"lax.linalg.{name} needs a (batch of) matrices, got {describe(t)}")
    return t


def _givens(x: Any, y: Any) -> tuple[Any, Any]:
    """``(c, s)`` rotating ``(x, y)`` onto ``(r, 0)`` (BLAS's ``drotg``, scaled against overflow; ``(1, 0)`` where
    ``y`` is zero, with safe stand-ins so that the unused branch's derivative is never a NaN)."""
    skip = y == 0
    scale = tnp.where(skip, tnp.ones_like(x), tnp.maximum(tnp.abs(x), tnp.abs(y)))
    xs, ys = x / scale, tnp.where(skip, tnp.zeros_like(y), y / scale)
    rh = 1 / tnp.sqrt(tnp.where(skip, tnp.ones_like(x), xs * xs + ys * ys))
    return tnp.where(skip, tnp.ones_like(x), xs * rh), -ys * rh


@op
def cholesky_update(r_matrix: Tensor[DT, Unpack[Batch], N, N],
                    w_vector: Tensor[DT, Unpack[Batch], N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The upper Cholesky factor ``R'`` of ``Rᵀ R + w wᵀ`` (``R'ᵀ R' = Rᵀ R + w wᵀ``) from the upper ``R``, in
    ``O(n²)`` (one Givens rotation per row)."""
    r = _real_matrices("cholesky_update", r_matrix)
    w = float_operand("cholesky_update", w_vector)
    same_dtype("cholesky_update", r.atom, w.atom)
    n = r.shape[-1]
    if r.shape[-2] != n or w.shape != r.shape[:-1]:
        raise shape_error("cholesky_update", f"lax.linalg.cholesky_update needs square R (..., n, n) and w (..., n) "
                          f"with the same batch axes, got {describe(r)} and {describe(w)}")
    if n == 0:
        return r  # type: ignore[no-any-return]
    rows = tnp.arange(n, dtype=i32)

    def step(k: Any, carry: Any) -> Any:
        r, z = carry
        row = tnp.take(r, k, axis=-2)
        c, s = _givens(tnp.take(row, k, axis=-1), tnp.take(z, k, axis=-1))
        c, s = c[..., None], s[..., None]
        new_row, z = c * row - s * z, c * z + s * row
        at_row = tnp.broadcast_to((rows == k)[:, None], r.shape)  # tnp refuses implicit outer broadcasts
        return tnp.where(at_row, tnp.broadcast_to(new_row[..., None, :], r.shape), r), z

    out, _ = fori_loop(0, n, step, (r, w))
    return out  # type: ignore[no-any-return]


@op
def symmetric_product(a_matrix: Tensor[DT, Unpack[Batch], M, N], c_matrix: Tensor[DT, Unpack[Batch], M, M], *,
                      alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Tensor[DT, Unpack[Batch], M, M]:
    """``alpha a aᵀ + beta c`` (``c`` symmetric); ``symmetrize_output`` mirrors the lower triangle onto the upper."""
    a = _real_matrices("symmetric_product", a_matrix)
    c = _real_matrices("symmetric_product", c_matrix)
    same_dtype("symmetric_product", a.atom, c.atom)
    m = a.shape[-2]
    if c.shape != (*a.shape[:-2], m, m):
        raise shape_error("symmetric_product", f"lax.linalg.symmetric_product needs a (..., m, n) and c (..., m, m) "
                          f"with the same batch axes, got {describe(a)} and {describe(c)}")
    out = alpha * (a @ a.mT) + beta * c
    if symmetrize_output:
        out = tnp.tril(out) + tnp.tril(out, -1).mT
    return out  # type: ignore[no-any-return]
