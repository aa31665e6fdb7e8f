"""``tensorstage.lax.linalg.qdwh``: the polar decomposition ``x = u h`` by the QR-based dynamically weighted
Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010), JAX's algorithm step for step: a
scaling by ``1 / sqrt(‖x‖₁ ‖x‖∞)``, the precomputed dynamically weighted steps (QR-based while the weight ``c`` is
above 100, Cholesky-based after), then plain Halley steps until the iterates move less than ``cbrt(5 eps)``.

Deliberate differences from jax.lax.linalg.qdwh:
- Leading axes are batch axes (JAX's takes one matrix; its vmap gives the same per-matrix results): each matrix
  stops iterating when it has converged, and ``num_iters`` and ``is_converged`` have the batch shape.
- ``dynamic_shape`` must be Python ints: the ``(m, n)`` corner is decomposed and the rest of ``u`` and ``h`` is zero
  (JAX also takes traced sizes).
- It differentiates in forward mode only (as JAX: reverse mode through the ``while_loop`` is refused).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop, while_loop
from ...dtypes import DType, bool_, i32
from ...staging import dtypes as _dt
from ...tensor import Tensor
from .. import numpy as tnp
from ...staging.primitives import decompositions as D
from ..numpy._core import atom, describe, inexact_operand, op, shape_error, wrap

__all__ = ["qdwh"]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
M = TypeVar("M")
Batch = TypeVarTuple("Batch")

CHOLESKY_CUTOFF = 100  # JAX's: QR-based steps while the weight c exceeds it (Cholesky would lose accuracy)


def _mH(x: Any) -> Any:  # noqa: N802 - the usual name
    t = tnp.swapaxes(x, -1, -2)
    return tnp.conj(t) if _dt.is_complex(x.dtype) else t


Weights = list[tuple[float, float, float]]


def _weights(eps: float, max_iterations: int) -> tuple[Weights, Weights]:
    """The dynamically weighted steps' ``(a, b, c)``, split into the QR-based and the Cholesky-based ones, as the
    paper's bound ``l`` on the smallest singular value grows from ``eps`` to 1."""
    qr_steps: Weights = []
    cholesky_steps: Weights = []
    lower, tol = eps, 10.0 * eps / 2.0
    while lower + tol < 1 and len(qr_steps) + len(cholesky_steps) < max_iterations:
        l2 = lower * lower
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower = lower * (a + b * l2) / (1 + c * l2)
        (qr_steps if c > CHOLESKY_CUTOFF else cholesky_steps).append((a, b, c))
    return qr_steps, cholesky_steps


def _qr_step(u: Any, a: Any, b: Any, c: Any) -> Any:
    """``(b/c) u + (a - b/c) q1 q2ᴴ`` with ``[sqrt(c) u; I] = [q1; q2] r`` (no inverse needed)."""
    n = u.shape[-1]
    eye = tnp.broadcast_to(tnp.eye(n, dtype=u.dtype), (*u.shape[:-2], n, n))
    q: Any = wrap(D.qr(atom(tnp.concatenate([tnp.sqrt(c) * u, eye], axis=-2)), full_matrices=False)[0])
    e = b / c
    return e * u + (a - e) / tnp.sqrt(c) * (q[..., : u.shape[-2], :] @ _mH(q[..., u.shape[-2]:, :]))


def _cholesky_step(u: Any, a: Any, b: Any, c: Any) -> Any:
    """``(b/c) u + (a - b/c) u (c uᴴu + I)⁻¹`` through the Cholesky factor of ``c uᴴu + I``."""
    n = u.shape[-1]
    y = D.cholesky((c * (_mH(u) @ u) + tnp.eye(n, dtype=u.dtype)).atom)
    z = D.triangular_solve(y, _mH(u).atom, left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
    z = D.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, unit_diagonal=False, conjugate_a=True)
    e = b / c
    solved: Any = wrap(z)
    return e * u + (a - e) * _mH(solved)


def _frobenius(x: Any) -> Any:
    squares: Any = tnp.real(x * tnp.conj(x)) if _dt.is_complex(x.dtype) else x * x
    return tnp.sqrt(tnp.sum(squares, axis=(-2, -1)))


def _scaled(x: Any) -> Any:
    """``x / sqrt(‖x‖₁ ‖x‖∞)`` (whose singular values are at most 1); a zero or empty matrix as it is."""
    if 0 in x.shape[-2:]:
        return x
    magnitude: Any = tnp.abs(x)
    one, inf = tnp.max(tnp.sum(magnitude, axis=-2), axis=-1), tnp.max(tnp.sum(magnitude, axis=-1), axis=-1)
    zero = one == 0
    inverse = tnp.where(zero, tnp.ones_like(one), 1 / tnp.sqrt(tnp.where(zero, tnp.ones_like(one), one * inf)))
    return x * inverse.astype(x.dtype)[..., None, None]


def _weights_at(table: Any, i: Any) -> tuple[Any, Any, Any]:
    """Row ``i`` (a traced index) of a table of steps' ``(a, b, c)``, as three scalars."""
    row = tnp.take(table, i, axis=0)
    return row[0], row[1], row[2]


def _polar(x: Any, max_iterations: int, eps: float) -> tuple[Any, Any, Any, Any]:
    u = _scaled(x)
    tol_norm = float(np.cbrt(10.0 * eps / 2.0))
    qr_steps, cholesky_steps = _weights(eps, max_iterations)
    if qr_steps:
        table = tnp.asarray(np.asarray(qr_steps, dtype=np.dtype(u.dtype)))
        u = fori_loop(0, len(qr_steps), lambda i, u: _qr_step(u, *_weights_at(table, i)), u)
    # One loop runs every weighted Cholesky-based step (as JAX's loop over them), then Halley's (3, 1, 3) ones
    # while the iterate moves: each matrix of a batch stops on its own.
    first, weighted = len(qr_steps), len(qr_steps) + len(cholesky_steps)
    table = tnp.asarray(np.asarray([*cholesky_steps, (3.0, 1.0, 3.0)], dtype=np.dtype(u.dtype)))

    def running(k: Any, moving: Any) -> Any:
        return ((k < weighted) | moving) & (k < max_iterations)

    def busy(state: Any) -> Any:
        _, k, _, moving = state
        return tnp.any(running(k, moving))

    def step(state: Any) -> Any:
        s, k, u, moving = state  # s: the steps taken, the same for every matrix still running
        active = running(k, moving)
        new = _cholesky_step(u, *_weights_at(table, tnp.minimum(s, len(cholesky_steps))))
        moving = tnp.where(active, _frobenius(new - u) > tol_norm, moving)
        return s + 1, tnp.where(active, k + 1, k), tnp.where(active[..., None, None], new, u), moving

    batch = x.shape[:-2]
    init = (tnp.asarray(np.int32(0)), tnp.full(batch, first, dtype=i32), u, tnp.ones(batch, dtype=bool_))
    _, num_iters, u, moving = while_loop(busy, step, init)
    u = 1.5 * u - 0.5 * u @ (_mH(u) @ u)
    h = _mH(u) @ x
    return u, (h + _mH(h)) / 2, num_iters, ~moving


def _corner(name: str, x: Any, dynamic_shape: tuple[int, int] | None) -> tuple[int, int]:
    rows, cols = x.shape[-2:]
    if dynamic_shape is None:
        return rows, cols
    m, n = dynamic_shape
    if not all(isinstance(s, (int, np.integer)) for s in (m, n)):
        raise TypeError(f"lax.linalg.{name}: dynamic_shape must be a pair of Python ints, got {dynamic_shape!r}")
    if not (0 < n <= m <= rows and n <= cols):
        raise ValueError(f"lax.linalg.{name}: dynamic_shape {dynamic_shape!r} must be (m, n) with "
                         f"0 < n <= m, within the shape {describe(x)}")
    return int(m), int(n)


@op
def qdwh(x: Tensor[DT, Unpack[Batch], M, N], *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None,
         ) -> tuple[Tensor[DT, Unpack[Batch], M, N], Tensor[DT, Unpack[Batch], N, N], Tensor[i32, Unpack[Batch]],
                    Tensor[bool_, Unpack[Batch]]]:
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` of a full-rank ``(m, n)`` matrix,
    ``m >= n`` (``u`` with orthonormal columns, ``h`` Hermitian positive definite), by at most ``max_iterations``
    (10) QDWH steps, stopping when an iterate moves less than ``cbrt(5 eps)`` (``eps``: the dtype's).
    ``dynamic_shape`` ``(m, n)``: decompose only that corner (``x`` padded with zeros around it).
    ``is_hermitian`` is unused (as JAX's)."""
    t: Any = inexact_operand("qdwh", x)
    if t.ndim < 2 or t.shape[-2] < t.shape[-1]:
        raise shape_error("qdwh", f"lax.linalg.qdwh needs (a batch of) matrices (m, n) with m >= n, got {describe(t)}")
    iterations = 10 if max_iterations is None else int(max_iterations)
    tolerance = float(np.finfo(np.dtype(t.dtype)).eps) if eps is None else float(eps)
    m, n = _corner("qdwh", t, dynamic_shape)
    u, h, num_iters, converged = _polar(t[..., :m, :n], iterations, tolerance)
    if (m, n) != t.shape[-2:]:
        rows, cols = t.shape[-2:]
        pad = [(0, 0)] * (t.ndim - 2)
        u = tnp.pad(u, [*pad, (0, rows - m), (0, cols - n)])
        h = tnp.pad(h, [*pad, (0, cols - n), (0, cols - n)])
    return u, h, num_iters, converged
