"""``ts.scipy.linalg``'s polar, expm_frechet, qr_multiply and eigh_tridiagonal, built on the existing primitives
(svd, expm, qr, eigh), so they differentiate and batch over leading axes as those do.

Deliberate differences:

- ``polar`` always goes through the SVD (``a = u s vh``: ``u vh`` and ``vh^H s vh`` or ``u s u^H``); ``method``
  'qdwh' (JAX's default iteration) is accepted and computed the same way, for every shape and side, so
  ``eps`` and ``max_iterations`` are ignored.
- ``expm_frechet`` is the forward derivative of :func:`expm` (as JAX); SciPy's ``method`` is accepted and ignored.
- ``qr_multiply`` has no ``pivoting`` (ValueError, as ``qr``); ``a`` and ``c`` need one dtype.
- ``eigh_tridiagonal`` runs the dense symmetric eigensolver on the tridiagonal matrix (``O(N³)`` where SciPy's
  ``stemr`` is ``O(N²)``; JAX bisects); the results are the same up to rounding. ``select='a'`` or ``'i'`` (a
  static index range); ``'v'`` raises NotImplementedError, as in JAX. Eigenvectors are given too (JAX gives them
  by inverse iteration), with ``tnp.linalg.eigh``'s signs.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...autodiff import jvp
from ...dtypes import DType
from ...staging.primitives import decompositions as D
from ...tensor import Tensor
from ..numpy import broadcast_shapes, broadcast_to, conj, swapaxes, where
from ..numpy import linalg_decompositions as _dec
from ..numpy import linalg_svd as _svd
from ..numpy._core import atom, describe, float_operand, inexact_operand, op, result_dtype, shape_error, wrap
from .linalg_expm import expm

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _ct(x: Any) -> Any:
    return conj(swapaxes(x, -1, -2))


@op
def polar(
    a: Tensor[DT, Unpack[Batch], M, N], side: str = "right", *, method: str = "qdwh", eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple[Tensor[DT, Unpack[Batch], M, N], Tensor[DT, Unpack[Batch], Any, Any]]:
    """``(u, p)`` with ``a = u p`` (``side='right'``, ``p`` ``(N, N)``) or ``a = p u`` (``'left'``, ``p``
    ``(M, M)``): ``u`` has orthonormal columns (rows when ``N > M``), ``p`` is Hermitian positive semidefinite."""
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    x: Any = inexact_operand("polar", a)
    if x.aval.ndim < 2:
        raise shape_error("polar", f"needs a (batch of) matrices, got {describe(x)}")
    parts: Any = _svd.svd(x, full_matrices=False)
    u, s, vh = parts
    scale = s.astype(x.dtype)
    if side == "right":
        return u @ vh, (_ct(vh) * scale[..., None, :]) @ vh
    return u @ vh, (u * scale[..., None, :]) @ _ct(u)


@overload
def expm_frechet(
    A: Tensor[DT, Unpack[Batch], N, N], E: Tensor[DT, Unpack[Batch], N, N], method: str | None = None,  # noqa: N803
    compute_expm: Literal[True] = True, check_finite: bool = True,
) -> tuple[Tensor[DT, Unpack[Batch], N, N], Tensor[DT, Unpack[Batch], N, N]]: ...
@overload
def expm_frechet(
    A: Tensor[DT, Unpack[Batch], N, N], E: Tensor[DT, Unpack[Batch], N, N], method: str | None = None,  # noqa: N803
    *, compute_expm: Literal[False], check_finite: bool = True,
) -> Tensor[DT, Unpack[Batch], N, N]: ...
@op
def expm_frechet(
    A: Any, E: Any, method: str | None = None, compute_expm: bool = True, check_finite: bool = True  # noqa: N803
) -> Any:
    """The Fréchet derivative of the matrix exponential at ``A`` in direction ``E`` (and ``expm(A)`` first, with
    ``compute_expm``): the forward derivative of :func:`expm`."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got {method!r}")
    dtype = result_dtype("expm_frechet", (A, E))
    x, e = wrap(atom(A, dtype)), wrap(atom(E, dtype))
    if x.shape != e.shape:
        raise shape_error("expm_frechet", f"A and E must have one shape, got {describe(x)} and {describe(e)}")
    pair: Any = jvp(expm, (x,), (e,))
    value, derivative = pair
    return (value, derivative) if compute_expm else derivative


@op
def qr_multiply(
    a: Tensor[DT, Unpack[tuple[Any, ...]]], c: Tensor[DT, Unpack[tuple[Any, ...]]], mode: str = "right",
    pivoting: bool = False, conjugate: bool = False, overwrite_a: bool = False, overwrite_c: bool = False,
) -> tuple[Tensor[DT, Unpack[tuple[Any, ...]]], Tensor[DT, Unpack[tuple[Any, ...]]]]:
    """``(Q @ c, R)`` (``mode='left'``, ``c`` ``(..., K, P)``) or ``(c @ Q, R)`` (``'right'``, ``c`` ``(..., P,
    M)``) from the economic QR of ``a`` ``(..., M, N)`` (``K = min(M, N)``; ``conj(Q)`` with ``conjugate``). A 1-D
    ``c`` is a column (left) or a row (right), and the product comes back 1-D. Leading axes broadcast."""
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise ValueError("qr_multiply: pivoting=True (QR with column pivoting) is not supported")
    dtype = result_dtype("qr_multiply", (a, c))
    x: Any = wrap(atom(inexact_operand("qr_multiply", a), dtype))
    y: Any = wrap(atom(c, dtype))
    if x.aval.ndim < 2 or y.aval.ndim < 1:
        raise shape_error("qr_multiply", f"needs a matrix a and a vector or matrix c, got {describe(x)}, {describe(y)}")
    vector = y.aval.ndim == 1
    y = (y[:, None] if mode == "left" else y[None, :]) if vector else y
    m, n = x.shape[-2:]
    k = min(m, n)
    size, axis = (y.shape[-2], "rows") if mode == "left" else (y.shape[-1], "columns")
    if size != (k if mode == "left" else m):
        raise shape_error("qr_multiply", f"c needs {k if mode == 'left' else m} {axis} for Q of a {describe(x)} "
                          f"(mode={mode!r}), got {describe(y)}")
    batch = tuple(broadcast_shapes(x.shape[:-2], y.shape[:-2]))
    x, y = broadcast_to(x, (*batch, m, n)), broadcast_to(y, (*batch, *y.shape[-2:]))
    q, r, _ = D.qr(x.atom, full_matrices=False)
    factor = conj(wrap(q)) if conjugate else wrap(q)
    product = factor @ y if mode == "left" else y @ factor
    return (product.reshape(-1) if vector else product), wrap(r)


@overload
def eigh_tridiagonal(
    d: Tensor[DT, Unpack[Batch], N], e: Tensor[DT, Unpack[Batch], Any], *, eigvals_only: Literal[True],
    select: str = "a", select_range: tuple[float, float] | None = None, tol: float | None = None, key: Any = None,
) -> Tensor[DT, Unpack[Batch], Any]: ...
@overload
def eigh_tridiagonal(
    d: Tensor[DT, Unpack[Batch], N], e: Tensor[DT, Unpack[Batch], Any], *, eigvals_only: Literal[False] = False,
    select: str = "a", select_range: tuple[float, float] | None = None, tol: float | None = None, key: Any = None,
) -> tuple[Tensor[DT, Unpack[Batch], Any], Tensor[DT, Unpack[Batch], N, Any]]: ...
@op
def eigh_tridiagonal(
    d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a", select_range: tuple[float, float] | None = None,
    tol: float | None = None, key: Any = None,
) -> Any:
    """Eigenvalues (ascending) of the real symmetric tridiagonal matrix with diagonal ``d`` ``(..., N)`` and
    off-diagonal ``e`` ``(..., N-1)``, and unless ``eigvals_only`` its eigenvectors (columns). ``select='i'``
    keeps the eigenvalues with indices ``select_range[0] <= i <= select_range[1]``."""
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' is not implemented (as in JAX)")
    dtype = result_dtype("eigh_tridiagonal", (d, e))
    dv, ev = (float_operand("eigh_tridiagonal", wrap(atom(v, dtype))) for v in (d, e))
    if dv.aval.ndim < 1 or ev.aval.ndim < 1 or ev.shape[-1] != max(dv.shape[-1] - 1, 0):
        raise shape_error("eigh_tridiagonal",
                          f"needs d (..., N) and e (..., N-1), got {describe(dv)} and {describe(ev)}")
    n = dv.shape[-1]
    first, last = _index_range(select, select_range, n)
    batch = tuple(broadcast_shapes(dv.shape[:-1], ev.shape[:-1]))
    matrix = _tridiagonal(broadcast_to(dv, (*batch, n)), broadcast_to(ev, (*batch, max(n - 1, 0))))
    w, v = _dec.eigh(matrix)
    w, v = w[..., first:last + 1], v[..., first:last + 1]
    return w if eigvals_only else (w, v)


def _index_range(select: str, select_range: Any, n: int) -> tuple[int, int]:
    if select == "a":
        return 0, n - 1
    if (not isinstance(select_range, (tuple, list)) or len(select_range) != 2
            or not all(isinstance(i, (int, np.integer)) for i in select_range)
            or not 0 <= select_range[0] <= select_range[1] < n):
        raise ValueError(f"eigh_tridiagonal: select='i' needs select_range=(lo, hi) ints with 0 <= lo <= hi < {n}, "
                         f"got {select_range!r}")
    return int(select_range[0]), int(select_range[1])


def _tridiagonal(d: Any, e: Any) -> Any:
    """The symmetric tridiagonal matrices with diagonal ``d`` and off-diagonal ``e``."""
    n = d.shape[-1]
    offsets: Any = np.arange(n)[None, :] - np.arange(n)[:, None]
    padded: Any = (0 * d).at[..., :-1].set(e) if n > 1 else 0 * d  # e_i at index i, 0 last
    below = broadcast_to(padded[..., None, :], (*d.shape, n))  # m[i, j] = e_j where i = j + 1
    above = broadcast_to(padded[..., :, None], (*d.shape, n))  # m[i, j] = e_i where j = i + 1
    diag = broadcast_to(d[..., :, None], (*d.shape, n))
    shape = (*d.shape, n)
    on: Any = {k: np.broadcast_to(offsets == k, shape) for k in (-1, 0, 1)}
    return where(on[0], diag, where(on[-1], below, where(on[1], above, 0 * diag)))


__all__ = ["eigh_tridiagonal", "expm_frechet", "polar", "qr_multiply"]
