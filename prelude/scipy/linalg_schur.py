"""``ts.scipy.linalg``'s Schur-based functions: schur, hessenberg, rsf2csf, sqrtm, funm, solve_sylvester.

``schur`` and ``hessenberg`` are primitives lowered to LAPACK's ``gees`` and ``gehrd`` on CPU only (as JAX; other
platforms raise ``SchurUnavailableError`` when compiling), batched over leading axes, and not differentiable
(TransformError, as JAX has no rule). The rest work on the complex Schur form ``a = z t zᴴ`` (``t`` upper
triangular) and solve their triangular recurrences one superdiagonal (or anti-diagonal) at a time: each step is
one matrix product for the whole diagonal and every batch matrix, in a ``fori_loop`` of ``N`` steps, where JAX
and SciPy loop over the entries.

Deliberate differences (as JAX where SciPy differs):

- ``sqrtm`` and ``funm`` always return complex matrices (SciPy returns real ones when the result happens to be
  real; a static result type cannot depend on the values). Take ``.real`` when you know it is real.
- ``funm`` applies ``func`` to the vector of eigenvalues (a Tensor), not to each scalar, and works from the complex
  Schur form directly (JAX and SciPy go through ``rsf2csf`` of the real one: the same function, other rounding).
- ``solve_sylvester`` needs one dtype for ``a``, ``b`` and ``c`` (tensorstage never promotes) and gives NaNs when
  some ``|λ_a + λ_b| < tol`` (as JAX; SciPy solves regardless).
- ``schur`` has no ``sort`` (as JAX); ``sqrtm``'s ``blocksize`` other than 1 raises (as JAX).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...staging.primitives import schur as SC
from ...tensor import Tensor
from ..numpy import abs as _abs
from ..numpy import any as _any
from ..numpy import broadcast_shapes, broadcast_to, conj, diagonal, isinf, minimum, sqrt, stack, swapaxes, where
from ..numpy import max as _max
from ..numpy import min as _min
from ..numpy._core import describe, inexact_operand, op, result_dtype, shape_error, wrap
from ..numpy.linalg_eig import eigvals

DT = TypeVar("DT", bound=DType)
M = TypeVar("M")
N = TypeVar("N")
Batch = TypeVarTuple("Batch")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _square(name: str, a: Any) -> Any:
    """``a`` as a float or complex (batch of) square matrices, or an error naming ``name``."""
    x = inexact_operand(name, a)
    if x.aval.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise shape_error(name, f"needs square matrices in the last two axes, got {describe(x)}")
    return x


def _complex(x: Any) -> Any:
    target = _dt.complex_dtype(x.aval.dtype)
    return x if _dt.is_complex(x.aval.dtype) else x.astype(target)


def _ct(x: Any) -> Any:
    """The conjugate transpose of every matrix."""
    return conj(swapaxes(x, -1, -2))


def _complex_schur(x: Any) -> tuple[Any, Any]:
    t, z = SC.schur(_complex(x).atom, compute_vectors=True)
    return wrap(t), wrap(z)


@op
def schur(
    a: Tensor[DT, Unpack[Batch], N, N], output: str = "real", lwork: Any = None, overwrite_a: bool = False,
    sort: None = None, check_finite: bool = True,
) -> tuple[Tensor[Any, Unpack[Batch], N, N], Tensor[Any, Unpack[Batch], N, N]]:
    """``(t, z)`` with ``a = z t zᴴ``, ``z`` unitary: ``t`` quasi upper triangular (``output='real'``, for a real
    ``a``: 2x2 blocks for complex pairs) or upper triangular (``'complex'``, the result complex). A complex ``a``
    always gives the complex form. CPU only (LAPACK's gees)."""
    if output not in ("real", "complex", "r", "c"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    if sort is not None:
        raise NotImplementedError("schur: sort is not supported (as in JAX)")
    x = _square("schur", a)
    if output in ("complex", "c"):
        return _complex_schur(x)
    t, z = SC.schur(x.atom, compute_vectors=True)
    return wrap(t), wrap(z)


@overload
def hessenberg(
    a: Tensor[DT, Unpack[Batch], N, N], calc_q: Literal[False] = False, overwrite_a: bool = False,
    check_finite: bool = True,
) -> Tensor[DT, Unpack[Batch], N, N]: ...
@overload
def hessenberg(
    a: Tensor[DT, Unpack[Batch], N, N], calc_q: Literal[True], overwrite_a: bool = False, check_finite: bool = True,
) -> tuple[Tensor[DT, Unpack[Batch], N, N], Tensor[DT, Unpack[Batch], N, N]]: ...
@op
def hessenberg(a: Any, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``h`` of ``a`` (zero below the first subdiagonal), with ``calc_q`` also the
    unitary ``q`` with ``a = q h qᴴ``. CPU only (LAPACK's gehrd)."""
    if not isinstance(calc_q, bool):
        raise TypeError(f"hessenberg: calc_q must be a bool, got {calc_q!r}")
    outs = [wrap(o) for o in SC.hessenberg(_square("hessenberg", a).atom, compute_q=calc_q)]
    return (outs[0], outs[1]) if calc_q else outs[0]


def _full(mask: Any, shape: Any) -> Any:
    """A mask (static or staged) broadcast to ``shape`` (tensorstage does not stretch and prepend axes in one
    broadcast)."""
    return broadcast_to(mask, tuple(shape)) if isinstance(mask, Tensor) else np.broadcast_to(mask, tuple(shape))


def _offsets(n: int) -> np.ndarray[Any, Any]:
    """``col - row`` of an ``n x n`` matrix: which superdiagonal each element is on."""
    return (np.arange(n)[None, :] - np.arange(n)[:, None]).astype(np.int32)  # int32: the loop counter's type


def _by_superdiagonals(start: Any, step: Callable[[Any], Any]) -> Any:
    """Fill the strictly upper triangle of ``start`` (its diagonal set, zeros above) one superdiagonal at a time:
    superdiagonal ``k`` is ``step(current)`` there, every entry of which may read the diagonals below ``k``."""
    offsets = np.broadcast_to(_offsets(start.shape[-1]), start.shape)

    def fill(k: Any, current: Any) -> Any:
        return where(offsets == k, step(current), current)

    return fori_loop(1, start.shape[-1], fill, start)


def _diag_matrix(d: Any) -> Any:
    n = d.shape[-1]
    return where(_full(_offsets(n) == 0, (*d.shape, n)), d[..., :, None], 0 * d[..., :, None])


def _triangular_sqrt(t: Any) -> Any:
    """The upper triangular square root ``u`` of upper triangular ``t`` (Björck and Hammarling 1983):
    ``u_ij = (t_ij - Σ_{i<k<j} u_ik u_kj) / (u_ii + u_jj)``, where the sum is ``(u u)_ij`` while ``u_ij`` is 0."""
    d = sqrt(diagonal(t, axis1=-2, axis2=-1))
    denominator = d[..., :, None] + d[..., None, :]

    def step(u: Any) -> Any:
        residual = t - u @ u
        return where(residual == 0, 0, residual / denominator)  # 0/0 between equal zero eigenvalues: 0 (as JAX)

    return _by_superdiagonals(_diag_matrix(d), step)


@op
def sqrtm(A: Tensor[DT, Unpack[Batch], N, N], blocksize: int = 1) -> Tensor[Any, Unpack[Batch], N, N]:  # noqa: N803
    """The principal square root ``x`` (``x @ x = A``) of every matrix, complex (the complex Schur method). CPU
    only (it needs ``schur``)."""
    if blocksize != 1:
        raise NotImplementedError(f"sqrtm: only blocksize=1 is implemented (as in JAX), got {blocksize!r}")
    t, z = _complex_schur(_square("sqrtm", A))
    return z @ _triangular_sqrt(t) @ _ct(z)  # type: ignore[no-any-return]


def _parlett(t: Any, f: Any) -> tuple[Any, Any]:
    """``(F, min |t_jj - t_ii|)``: ``F = func(t)`` for upper triangular ``t`` from ``f = func(diag t)`` by
    Parlett's recurrence; ``(t F - F t)_ij`` is the numerator ``t_ij (f_j - f_i) + Σ_{i<k<j} (t_ik F_kj - F_ik
    t_kj)`` while ``F_ij`` is 0."""
    d = diagonal(t, axis1=-2, axis2=-1)
    gaps = d[..., None, :] - d[..., :, None]

    def step(current: Any) -> Any:
        numerator = t @ current - current @ t
        return where(gaps != 0, numerator / where(gaps != 0, gaps, 1), numerator)

    if d.shape[-1] == 0:  # no eigenvalues: nothing bounds the error estimate
        return _diag_matrix(f), _abs(d).sum(axis=-1) + np.inf
    above = _full(_offsets(d.shape[-1]) > 0, t.shape)
    smallest = _min(where(above, _abs(gaps), np.inf), axis=(-2, -1))
    return _by_superdiagonals(_diag_matrix(f), step), minimum(smallest, _abs(d[..., 0]))


@overload
def funm(
    A: Tensor[DT, Unpack[Batch], N, N], func: Callable[[Any], Any], disp: Literal[True] = True  # noqa: N803
) -> Tensor[Any, Unpack[Batch], N, N]: ...
@overload
def funm(
    A: Tensor[DT, Unpack[Batch], N, N], func: Callable[[Any], Any], disp: Literal[False]  # noqa: N803
) -> tuple[Tensor[Any, Unpack[Batch], N, N], Tensor[Any, Unpack[Batch]]]: ...
@op
def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:  # noqa: N803
    """``func(A)`` for a function ``func`` of the eigenvalues (called once on the vector of them, complex),
    by the Schur-Parlett method; with ``disp=False`` also SciPy's error estimate. Complex. CPU only."""
    t, z = _complex_schur(_square("funm", A))
    values = func(diagonal(t, axis1=-2, axis2=-1))
    if not isinstance(values, Tensor) or values.shape != t.shape[:-1]:
        raise ValueError(f"funm: func must return a tensor of the eigenvalues' shape {tuple(t.shape[:-1])}, got "
                         f"{describe(values) if isinstance(values, Tensor) else type(values).__name__}")
    f, smallest = _parlett(t, _complex(values).astype(t.dtype))
    out = z @ f @ _ct(z)
    if disp:
        return out
    return out, _error_estimate(out, t, smallest)


def _error_estimate(f: Any, t: Any, smallest: Any) -> Any:
    """SciPy's ``errest``: ``min(1, max(eps, eps / minden * ‖triu(t, 1)‖₁))``, inf where ``f`` has an inf."""
    eps = _eps(t)
    strict = where(_full(_offsets(t.shape[-1]) > 0, t.shape), t, 0)
    norm = _max(_abs(strict).sum(axis=-2), axis=-1)
    estimate = minimum(1, eps / where(smallest == 0, eps, smallest) * norm)
    estimate = where(estimate < eps, eps, estimate)
    return where(_any(isinf(f), axis=(-2, -1)), np.inf, estimate)


def _eps(x: Any) -> float:
    """The machine epsilon of ``x``'s (real) precision."""
    real: Any = _dt.real_dtype(x.aval.dtype)
    return float(np.finfo(real).eps)


def _triangular_sylvester(r: Any, s: Any, f: Any) -> Any:
    """``y`` with ``r y + y s = f`` for upper triangular ``r`` ``(M, M)`` and lower triangular ``s`` ``(N, N)``:
    ``y_ij`` needs ``y_kj`` (k > i) and ``y_il`` (l > j), so it is solved one anti-diagonal ``(M-1-i) + (N-1-j)``
    at a time, the residual ``f - r y - y s`` holding exactly the known terms while the rest of ``y`` is 0."""
    m, n = f.shape[-2], f.shape[-1]
    level = np.broadcast_to((m - 1 - np.arange(m))[:, None] + (n - 1 - np.arange(n))[None, :], f.shape).astype(np.int32)
    scale = diagonal(r, axis1=-2, axis2=-1)[..., :, None] + diagonal(s, axis1=-2, axis2=-1)[..., None, :]

    def fill(k: Any, y: Any) -> Any:
        return where(level == k, (f - r @ y - y @ s) / scale, y)

    return fori_loop(0, m + n - 1, fill, 0 * f)


@op
def solve_sylvester(
    a: Tensor[DT, Unpack[Batch], M, M], b: Tensor[DT, Unpack[Batch], N, N], q: Tensor[DT, Unpack[Batch], M, N],
    *, method: str = "schur", tol: float = 1e-8,
) -> Tensor[DT, Unpack[Batch], M, N]:
    """``x`` with ``a x + x b = q`` (Bartels-Stewart on the complex Schur forms of ``a`` and ``bᴴ``); leading
    axes broadcast. NaNs where some eigenvalues satisfy ``|λ_a + λ_b| < tol``. CPU only (it needs ``schur``)."""
    if method != "schur":
        raise NotImplementedError(f"solve_sylvester: only method='schur' is implemented, got {method!r}")
    dtype = result_dtype("solve_sylvester", (a, b, q))
    x, y, rhs = (inexact_operand("solve_sylvester", v).astype(dtype) for v in (a, b, q))
    x, y = _square("solve_sylvester", x), _square("solve_sylvester", y)
    if rhs.aval.ndim < 2 or rhs.shape[-2:] != (x.shape[-1], y.shape[-1]):
        raise shape_error("solve_sylvester", f"q must be (..., M, N) for a {describe(x)} and b {describe(y)}, got "
                          f"{describe(rhs)}")
    batch = tuple(broadcast_shapes(x.shape[:-2], y.shape[:-2], rhs.shape[:-2]))
    x, y, rhs = (broadcast_to(v, (*batch, *v.shape[-2:])) for v in (x, y, rhs))
    r, u = _complex_schur(x)
    s, v = _complex_schur(_ct(y))
    lower = _ct(s)  # lower triangular, with b's eigenvalues on its diagonal
    solution = u @ _triangular_sylvester(r, lower, _ct(u) @ _complex(rhs) @ v) @ _ct(v)
    sums = diagonal(r, axis1=-2, axis2=-1)[..., :, None] + diagonal(lower, axis1=-2, axis2=-1)[..., None, :]
    singular = _any(_abs(sums) < tol, axis=(-2, -1))[..., None, None]
    out = solution if _dt.is_complex(dtype) else solution.real
    return where(singular, np.nan, out)


def _rotation_step(m: Any, tz: tuple[Any, Any]) -> tuple[Any, Any]:
    """SciPy's rsf2csf step at ``(m-1, m)``: a Givens rotation that zeroes a 2x2 block's subdiagonal entry (when it
    is not already negligible), applied to rows ``m-1:m+1`` of ``t`` (columns from ``m-1``), to its columns
    ``m-1:m+1`` (rows up to ``m``) and to those columns of ``z``."""
    t, z = tz
    n = t.shape[-1]
    idx = np.arange(n, dtype=np.int32)
    eps = _eps(t)
    a, b, c, d = t[..., m - 1, m - 1], t[..., m - 1, m], t[..., m, m - 1], t[..., m, m]
    block = _stack_block(a, b, c, d)
    mu = eigvals(block)[..., 0] - d
    r = sqrt(_abs(mu) ** 2 + _abs(c) ** 2).astype(t.dtype)
    active = _abs(c) > eps * (_abs(a) + _abs(d))
    cos, sin = where(active, mu / r, 1), where(active, c / r, 0)
    # Left rotation of rows m-1, m (columns from m-1): G = [[c̄, s], [-s, c]].
    upper, lower_row = t[..., m - 1, :], t[..., m, :]
    cols_from = idx >= m - 1
    new_upper = where(cols_from, conj(cos)[..., None] * upper + sin[..., None] * lower_row, upper)
    new_lower = where(cols_from, -sin[..., None] * upper + cos[..., None] * lower_row, lower_row)
    t = where(_full((idx == m - 1)[:, None], t.shape), new_upper[..., None, :],
              where(_full((idx == m)[:, None], t.shape), new_lower[..., None, :], t))
    t = _rotate_columns(t, m, cos, sin, idx <= m)
    z = _rotate_columns(z, m, cos, sin, idx >= 0)
    t = where(_full((idx == m)[:, None] & (idx == m - 1)[None, :], t.shape), 0, t)
    return t, z


def _rotate_columns(x: Any, m: Any, cos: Any, sin: Any, row_mask: Any) -> Any:
    """``x[..., rows, m-1:m+1] @ Gᴴ`` on the masked rows (``Gᴴ = [[c, -s̄], [s̄, c̄]]``)."""
    idx = np.arange(x.shape[-1], dtype=np.int32)
    left, right = x[..., :, m - 1], x[..., :, m]
    new_left = cos[..., None] * left + conj(sin)[..., None] * right
    new_right = -conj(sin)[..., None] * left + conj(cos)[..., None] * right
    new_left, new_right = where(row_mask, new_left, left), where(row_mask, new_right, right)
    return where(_full((idx == m - 1)[None, :], x.shape), new_left[..., :, None],
                 where(_full((idx == m)[None, :], x.shape), new_right[..., :, None], x))


def _stack_block(a: Any, b: Any, c: Any, d: Any) -> Any:
    """The 2x2 matrices ``[[a, b], [c, d]]`` of scalars (one per batch index)."""
    return stack([stack([a, b], axis=-1), stack([c, d], axis=-1)], axis=-2)


@op
def rsf2csf(
    T: Tensor[DT, Unpack[Batch], N, N], Z: Tensor[DT, Unpack[Batch], N, N], check_finite: bool = True  # noqa: N803
) -> tuple[Tensor[Any, Unpack[Batch], N, N], Tensor[Any, Unpack[Batch], N, N]]:
    """The complex Schur form ``(t, z)`` of the real one ``(T, Z)`` (from ``schur(a)``): each 2x2 block is made
    triangular by a Givens rotation, as SciPy (same rotations, same values). CPU only (it uses ``eigvals``)."""
    t, z = _square("rsf2csf", T), _square("rsf2csf", Z)
    if t.shape != z.shape:
        raise shape_error("rsf2csf", f"T and Z must have one shape, got {describe(t)} and {describe(z)}")
    dtype = result_dtype("rsf2csf", (t, z))
    t, z = _complex(t.astype(dtype)), _complex(z.astype(dtype))
    n = t.shape[-1]
    if n <= 1:
        return t, z
    return fori_loop(0, n - 1, lambda i, tz: _rotation_step(n - 1 - i, tz), (t, z))


__all__ = ["funm", "hessenberg", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]
