"""``ts.scipy.linalg``'s special matrices: block_diag, toeplitz, circulant, hankel, hilbert.

``toeplitz``, ``circulant`` and ``hankel`` gather from their vectors with a static index matrix (one ``take``),
so they differentiate and batch; leading axes of their operands are batch axes (broadcast between ``c`` and
``r``). Deliberate differences: ``block_diag`` needs operands of one dtype (tensorstage never promotes; Python
scalars adopt it), and ``hilbert(n)`` is float32, the default float dtype, as JAX's (SciPy's is float64).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, f32
from ...staging.ir import literal
from ...tensor import Tensor
from ..numpy import atleast_2d, broadcast_shapes, broadcast_to, concatenate, conj, flip, pad, take, zeros_like
from ..numpy._core import atom, describe, op, result_dtype, shape_error, wrap

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def block_diag(*arrs: Tensor[DT, Unpack[tuple[Any, ...]]] | float) -> Tensor[DT, Any, Any]:
    """The block diagonal matrix of the operands (each at most 2-D: 0-D is ``(1, 1)``, 1-D a row), zeros
    elsewhere. No operands: a ``(1, 0)`` float32 matrix, as SciPy's shape."""
    if not arrs:
        return wrap(literal(np.zeros((1, 0)), np.dtype(np.float32)))
    dtype = result_dtype("block_diag", arrs)
    blocks = [wrap(atom(a, dtype)) for a in arrs]
    for i, b in enumerate(blocks):
        if b.aval.ndim > 2:
            raise shape_error("block_diag", f"operands must have at most 2 dimensions, got {describe(b)} at {i}")
    mats = [atleast_2d(b) for b in blocks]
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        rows.append(pad(m, ((0, 0), (left, width - left - m.shape[1]))))
        left += m.shape[1]
    return concatenate(rows, axis=0)


def _vectors(name: str, c: Any, r: Any) -> tuple[Any, Any]:
    """``c`` and ``r`` (at least 1-D, one dtype) with their leading (batch) axes broadcast together."""
    dtype = result_dtype(name, (c, r))
    cv, rv = wrap(atom(c, dtype)), wrap(atom(r, dtype))
    for v in (cv, rv):
        if v.aval.ndim == 0:
            raise shape_error(name, f"needs vectors (..., N), got {describe(v)}")
    batch = tuple(broadcast_shapes(cv.shape[:-1], rv.shape[:-1]))
    return broadcast_to(cv, (*batch, cv.shape[-1])), broadcast_to(rv, (*batch, rv.shape[-1]))


def _gather(elements: Any, index: np.ndarray[Any, Any]) -> AnyTensor:
    """``elements[..., index]``: the matrix ``index`` picks from each vector of ``elements``."""
    return take(elements, index.astype(np.int32), axis=-1)


@op
def toeplitz(c: Tensor[DT, Unpack[Batch], M], r: Tensor[DT, Unpack[Batch], N] | None = None) -> Tensor[DT, Unpack[Batch], M, Any]:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored; ``conj(c)`` by default,
    as SciPy and JAX): ``t[i, j] = c[i - j]`` for ``i >= j``, ``r[j - i]`` above. Shape ``(..., M, N)``."""
    cv, rv = _vectors("toeplitz", c, conj(c) if r is None else r)
    m, n = cv.shape[-1], rv.shape[-1]
    elements = concatenate([flip(cv, axis=-1), rv[..., 1:]], axis=-1)  # c[m-1], ..., c[0], r[1], ..., r[n-1]
    return _gather(elements, m - 1 - np.arange(m)[:, None] + np.arange(n)[None, :])


@op
def circulant(c: Tensor[DT, Unpack[Batch], N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The circulant matrix with first column ``c``: ``t[i, j] = c[(i - j) mod N]``. Shape ``(..., N, N)``."""
    cv, _ = _vectors("circulant", c, c)
    n = cv.shape[-1]
    return _gather(cv, (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1))


@op
def hankel(c: Tensor[DT, Unpack[Batch], M], r: Tensor[DT, Unpack[Batch], N] | None = None) -> Tensor[DT, Unpack[Batch], M, Any]:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored; zeros by default, then
    ``N = M``): ``h[i, j] = c[i + j]`` while ``i + j < M``, ``r[i + j - M + 1]`` after. Shape ``(..., M, N)``."""
    cv, rv = _vectors("hankel", c, zeros_like(c) if r is None else r)
    m, n = cv.shape[-1], rv.shape[-1]
    elements = concatenate([cv, rv[..., 1:]], axis=-1)
    return _gather(elements, np.arange(m)[:, None] + np.arange(n)[None, :])


@op
def hilbert(n: int) -> Tensor[f32, Any, Any]:
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)``, float32 (JAX's default float; SciPy's is float64)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"hilbert: n must be a non-negative int, got {n!r}")
    i = np.arange(n, dtype=np.float64)
    return wrap(literal(1.0 / (i[:, None] + i[None, :] + 1), np.dtype(np.float32)))
