"""``ts.scipy.linalg``'s matrix constructors: companion, convolution_matrix, dft, fiedler, fiedler_companion,
hadamard, helmert, invhilbert, invpascal, leslie, pascal.

The ones built from vectors gather from them with a static index matrix (one ``take``, as ``toeplitz``), so they
differentiate and batch over leading axes. The ones built from a size alone are constants computed exactly on
the host (Python integers for the binomials) and rounded once. Deliberate differences, as JAX's where SciPy's
differ: ``pascal``, ``invpascal``, ``invhilbert`` and ``helmert`` are float32 (SciPy: int64/uint64/float64; no
``exact=``), ``dft`` is complex64 unless ``dtype`` says otherwise, ``hadamard`` is int32 by default; no runtime
check of a zero leading coefficient (``companion``, ``fiedler_companion`` give infs/NaNs). Besides:
``companion`` and ``fiedler_companion`` need floating-point coefficients (tensorstage never promotes), and
``leslie``'s ``f`` and ``s`` one dtype.
"""

from __future__ import annotations

from math import comb
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, f32
from ...staging.ir import literal
from ...tensor import Tensor
from ..numpy import abs as _abs
from ..numpy import broadcast_shapes, broadcast_to, concatenate, take, zeros
from ..numpy._core import atom, describe, inexact_operand, op, result_dtype, shape_error, wrap
from ..numpy.creation import _dtype

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _size(name: str, n: Any, smallest: int = 0) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < smallest:
        raise ValueError(f"{name}: n must be an int of at least {smallest}, got {n!r}")
    return int(n)


def _vector(name: str, a: Any, smallest: int, dtype: np.dtype[Any] | None = None) -> Any:
    """``a`` as a (batch of) vectors of at least ``smallest`` elements."""
    v = wrap(atom(a, dtype or result_dtype(name, (a,))))
    if v.aval.ndim == 0 or v.shape[-1] < smallest:
        raise shape_error(name, f"needs vectors (..., N) with N >= {smallest}, got {describe(v)}")
    return v


def _gather(elements: Any, index: np.ndarray[Any, Any]) -> AnyTensor:
    """``elements[..., index]``: the matrix ``index`` picks from each vector of ``elements``."""
    return take(elements, index.astype(np.int32), axis=-1)


def _with_constants(v: Any, *values: float) -> Any:
    """``v`` with ``values`` appended along its last axis (their indices are ``len(v)``, ``len(v) + 1``, ...)."""
    tail = np.broadcast_to(np.asarray(values, v.dtype), (*v.shape[:-1], len(values)))
    return concatenate([v, wrap(literal(np.array(tail), np.dtype(v.dtype)))], axis=-1)


@op
def companion(a: Tensor[DT, Unpack[Batch], N]) -> Tensor[DT, Unpack[Batch], Any, Any]:
    """The ``(N-1, N-1)`` companion matrix of the polynomial coefficients ``a`` (highest degree first): first row
    ``-a[1:] / a[0]``, ones on the first subdiagonal."""
    v = _vector("companion", inexact_operand("companion", a), 2)
    n = v.shape[-1] - 1
    index = np.full((n, n), n, np.int64)  # n: the appended 1; n + 1: the appended 0
    index[0] = np.arange(n)
    index[1:][np.eye(n - 1, n, dtype=bool)] = n
    index[1:][~np.eye(n - 1, n, dtype=bool)] = n + 1
    return _gather(_with_constants(-v[..., 1:] / v[..., :1], 1, 0), index)


@op
def fiedler_companion(a: Tensor[DT, Unpack[Batch], N]) -> Tensor[DT, Unpack[Batch], Any, Any]:
    """The pentadiagonal Fiedler companion matrix ``(N-1, N-1)`` of the coefficients ``a`` (highest degree
    first), whose eigenvalues are the polynomial's roots (SciPy's construction)."""
    v = _vector("fiedler_companion", inexact_operand("fiedler_companion", a), 1)
    n = v.shape[-1] - 1
    if n == 0:
        return zeros((*v.shape[:-1], 0, 0), v.dtype)
    one, zero = n + 1, n + 2  # indices of the appended constants; k <= n: -a[k] / a[0]
    index = np.full((n, n), zero, np.int64)
    index[range(3, n, 2), range(1, n - 2, 2)] = one
    index[range(2, n, 2), range(1, n - 1, 2)] = np.arange(3, n + 1, 2)
    index[range(0, n - 2, 2), range(2, n, 2)] = one
    index[range(0, n - 1, 2), range(1, n, 2)] = np.arange(2, n + 1, 2)
    index[0, 0] = 1
    if n > 1:
        index[1, 0] = one
    return _gather(_with_constants(-v / v[..., :1], 1, 0), index)


@op
def fiedler(a: Tensor[DT, Unpack[Batch], N]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The symmetric Fiedler matrix ``|a[i] - a[j]|`` of each vector ``a``."""
    v = _vector("fiedler", a, 0)
    return _abs(v[..., :, None] - v[..., None, :])


@op
def leslie(f: Tensor[DT, Unpack[Batch], N], s: Tensor[DT, Unpack[Batch], Any]) -> Tensor[DT, Unpack[Batch], N, N]:
    """The Leslie matrix: fecundities ``f`` ``(..., N)`` in the first row, survival rates ``s`` ``(..., N-1)`` on
    the first subdiagonal (leading axes broadcast)."""
    dtype = result_dtype("leslie", (f, s))
    fv, sv = _vector("leslie", f, 1, dtype), _vector("leslie", s, 0, dtype)
    n = fv.shape[-1]
    if sv.shape[-1] != n - 1:
        raise shape_error("leslie", f"s needs one element fewer than f, got f {describe(fv)} and s {describe(sv)}")
    batch = tuple(broadcast_shapes(fv.shape[:-1], sv.shape[:-1]))
    elements = concatenate([broadcast_to(fv, (*batch, n)), broadcast_to(sv, (*batch, n - 1))], axis=-1)
    index = np.full((n, n), 2 * n - 1, np.int64)  # 2n - 1: the appended 0
    index[0] = np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _gather(_with_constants(elements, 0), index)


_MODES = ("full", "same", "valid")


@op
def convolution_matrix(
    a: Tensor[DT, Unpack[Batch], N], n: int, mode: str = "full"
) -> Tensor[DT, Unpack[Batch], Any, Any]:
    """The matrix ``A`` with ``A @ v == np.convolve(a, v, mode)`` for ``v`` of length ``n``: ``(m + n - 1, n)``
    ('full'), ``(max(m, n), n)`` ('same') or ``(max(m, n) - min(m, n) + 1, n)`` ('valid')."""
    if mode not in _MODES:
        raise ValueError(f"convolution_matrix: mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    size = _size("convolution_matrix", n, 1)
    v = _vector("convolution_matrix", a, 1)
    m = v.shape[-1]
    lag = np.arange(m + size - 1)[:, None] - np.arange(size)[None, :]  # full rows: a[i - j] where 0 <= i - j < m
    index = np.where((lag >= 0) & (lag < m), lag, m)
    trim = min(m, size) - 1
    start, stop = {"full": (0, m + size - 1), "same": (trim // 2, trim // 2 + max(m, size)),
                   "valid": (trim, m + size - 1 - trim)}[mode]
    return _gather(_with_constants(v, 0), index[start:stop])


@op
def dft(n: int, scale: str | None = None, *, dtype: type[DType] | Any = None) -> Tensor[Any, Any, Any]:
    """The ``n x n`` discrete Fourier transform matrix ``exp(-2πi jk / n)``, unscaled (``scale=None``), or
    divided by ``sqrt(n)`` ('sqrtn') or ``n`` ('n'); complex64 unless ``dtype`` is given."""
    size = _size("dft", n)
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    target = _dtype(dtype, np.dtype(np.complex64))
    if target.kind != "c":
        raise TypeError(f"dft: dtype must be complex, got {target}")
    omegas = np.exp(-2j * np.pi * np.arange(size) / max(size, 1)).reshape(-1, 1)  # SciPy's powers of the root
    w = omegas ** np.arange(size)
    w = w / {None: 1.0, "sqrtn": np.sqrt(size), "n": float(size)}[scale]
    return wrap(literal(w, target))


@op
def hadamard(n: int, dtype: type[DType] | Any = None) -> Tensor[Any, Any, Any]:
    """The ``n x n`` Sylvester Hadamard matrix (``n`` a power of 2): ``H H^T = n I``; int32 unless ``dtype``."""
    size = _size("hadamard", n, 1)
    if size & (size - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n!r}")
    h = np.ones((1, 1))
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    return wrap(literal(h, _dtype(dtype, np.dtype(np.int32))))


@op
def helmert(n: int, full: bool = False) -> Tensor[f32, Any, Any]:
    """The Helmert matrix: ``(n-1, n)`` orthonormal contrasts, or with ``full`` the ``(n, n)`` orthogonal matrix
    whose first row is ``1 / sqrt(n)``. float32."""
    size = _size("helmert", n, 1)
    h = np.tril(np.ones((size, size)), -1) - np.diag(np.arange(size))
    d = np.arange(size) * np.arange(1, size + 1)
    h[0] = 1
    d[0] = size
    full_matrix = h / np.sqrt(d)[:, None]
    return wrap(literal(full_matrix if full else full_matrix[1:], np.dtype(np.float32)))


@op
def invhilbert(n: int) -> Tensor[f32, Any, Any]:
    """The inverse of the ``n x n`` Hilbert matrix (exact integers, rounded to float32 once)."""
    size = _size("invhilbert", n)
    exact = [[(-1) ** (i + j) * (i + j + 1) * comb(size + i, size - j - 1) * comb(size + j, size - i - 1)
              * comb(i + j, i) ** 2 for j in range(size)] for i in range(size)]
    return wrap(literal(np.array(exact, dtype=np.float64).reshape(size, size), np.dtype(np.float32)))


_KINDS = ("symmetric", "lower", "upper")


def _pascal_lower(name: str, n: int, kind: str | None, inverse: bool) -> tuple[int, str, np.ndarray[Any, Any]]:
    size = _size(name, n)
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {', '.join(map(repr, _KINDS))}, got {kind!r}")
    sign = (lambda i, j: (-1) ** (i - j)) if inverse else (lambda i, j: 1)
    lower = np.array([[sign(i, j) * comb(i, j) for j in range(size)] for i in range(size)], dtype=np.float64)
    return size, kind, lower.reshape(size, size)


@op
def pascal(n: int, kind: str | None = None) -> Tensor[f32, Any, Any]:
    """The ``n x n`` Pascal matrix of binomial coefficients: 'symmetric' (default), 'lower' or 'upper'. float32."""
    _, kind, lower = _pascal_lower("pascal", n, kind, inverse=False)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower @ lower.T}[kind]
    return wrap(literal(out, np.dtype(np.float32)))


@op
def invpascal(n: int, kind: str | None = None) -> Tensor[f32, Any, Any]:
    """The inverse of :func:`pascal` (same ``kind``). float32."""
    _, kind, lower = _pascal_lower("invpascal", n, kind, inverse=True)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T @ lower}[kind]
    return wrap(literal(out, np.dtype(np.float32)))


__all__ = ["companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion", "hadamard", "helmert",
           "invhilbert", "invpascal", "leslie", "pascal"]
