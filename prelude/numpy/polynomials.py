"""NumPy's polynomial functions on 1-D coefficient arrays, highest power first: ``polyval`` (Horner's rule),
``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``polyfit`` (least squares), ``poly``
(coefficients from real zeros) and ``roots`` (eigenvalues of the companion matrix, complex, CPU only).

Coefficient arrays have static lengths, so, as in JAX, results keep every slot: ``polymul`` and ``polydiv`` do not
trim leading zeros (NumPy's do, which makes the length depend on the values; ``trim_leading_zeros=True`` trims them
in eager calls, as NumPy, and is an error while staging), and ``polydiv``'s remainder has ``u``'s length. Beyond
JAX and NumPy: coefficients must be 1-D (``polyadd``/``polysub``/``polymul``/``poly`` take a 0-d one as length 1,
as NumPy), and dtypes never change implicitly: ``polyint``, ``polydiv``, ``polyfit`` and ``poly`` need
floating-point operands (NumPy computes integer ones in float64), while ``polyval``, ``polyadd``, ``polysub``,
``polymul`` and ``polyder`` keep an integer dtype, as NumPy does.

``roots`` strips leading zeros and turns trailing zeros into exact zero roots, as NumPy does, which reads the
coefficients: in staged programs it needs ``strip_zeros=False`` (JAX's option; a leading zero gives a NaN root).

Left out: ``poly`` of a square matrix raises NotImplementedError (its characteristic polynomial has the complex
eigenvalues of a non-symmetric matrix as zeros, and ``poly`` takes real ones).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...array import as_host_array
from ...control_flow import scan
from ...dtypes import DType, Floating, c64, c128, f32, f64
from ...staging import dtypes as _dt
from ...staging.builder import bind, is_staging
from ...staging.ir import Atom, Aval, literal
from ...staging.primitives import decompositions as D
from ...staging.primitives import eig as EG
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...staging.source import user_location
from ...tensor import Tensor, Traced
from ._core import as_tensor, atom, describe, dtype_error, op, result_dtype, shape_error, wrap
from .linalg_solvers import inv
from .linalg_svd import lstsq
from .matrices import vander
from .selection import _entry
from .static_settings import static_int

__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub", "polyval", "roots"]

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Sh = TypeVarTuple("Sh")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

# Loops over at most this many coefficients (or zeros) are unrolled; longer ones run as one staged scan.
_UNROLLED = 32


# ------------------------------------------------------------------------------------------------ helpers


def _numeric(op_name: str, c: Atom, what: str) -> None:
    if not (_dt.is_float(c.aval.dtype) or _dt.is_integer(c.aval.dtype)):
        raise dtype_error(op_name, f"{what} must be numbers (ints or floats), got {c.aval}")


def _floating(op_name: str, c: Atom, what: str) -> None:
    if not _dt.is_float(c.aval.dtype):
        raise dtype_error(op_name, f"{op_name} needs floating-point {what}, got {c.aval}; convert them with "
                          ".astype(f32)")


def _vector(op_name: str, c: Atom, what: str = "coefficients", *, scalar_ok: bool = False) -> Atom:
    """A 1-D coefficient array without dim names (a 0-d one as length 1 where NumPy allows it)."""
    if c.aval.ndim == 0 and scalar_ok:
        return S.reshape(c, (1,), (None,))
    if c.aval.ndim != 1:
        raise shape_error(op_name, f"{what} must be a 1-D array, got {describe(wrap(c))}")
    return S.reshape(c, c.aval.shape, (None,))


def _order(op_name: str, m: Any, what: str) -> int:
    """The static order of a derivative or integral."""
    n = static_int(op_name, m, "m")
    if n < 0:
        raise ValueError(f"{op_name}: the order of the {what} must be non-negative, got m={n}")
    return n


def _lists_adopting(*operands: Any) -> list[Any]:
    """Lists and tuples of Python numbers take the dtype of the (first) array operand, as Python scalars do
    (float lists beside an integer array are left to the dtype check)."""
    like = next((x for x in operands if isinstance(x, (Tensor, np.ndarray))), None)
    if like is None:
        return list(operands)
    dtype = as_tensor(like).aval.dtype if isinstance(like, Tensor) else _dt.canonical(like.dtype)
    out = []
    for x in operands:
        if isinstance(x, (list, tuple)) and (_dt.is_float(dtype) or np.asarray(x).dtype.kind in "iub"):
            x = np.asarray(x, dtype=dtype)
        out.append(x)
    return out


def _not_implemented(message: str) -> NotImplementedError:
    loc = user_location()
    return NotImplementedError(message if loc is None else f"{message}\n  at {loc}")


def _element(c: Atom, i: int) -> Atom:
    return S.reshape(SL.slice_in_dim(c, i, i + 1, 0), (), ())


def _zeros(n: int, dtype: np.dtype[Any]) -> Atom:
    return S.full_like(Aval((n,), dtype, (None,)), 0)


def _left_padded(c: Atom, n: int) -> Atom:
    """``c`` with leading zeros up to length ``n`` (higher powers with zero coefficients)."""
    k = n - c.aval.shape[0]
    return c if k == 0 else SL.pad(c, literal(0, c.aval.dtype), [(k, 0, 0)])


def _fold(step: Callable[[Traced[Any], Traced[Any]], Traced[Any]], init: Atom, items: Atom) -> Atom:
    """``carry = step(carry, item)`` over the items of a 1-D array: unrolled when short, else one staged scan
    (so a long polynomial stays a small graph)."""
    carry = wrap(init)
    n = items.aval.shape[0]
    if n <= _UNROLLED:
        for i in range(n):
            carry = step(carry, wrap(_element(items, i)))
        return carry.atom
    out, _ = scan(lambda c, x: (step(c, x), None), carry, wrap(items))
    return as_tensor(out).atom


# ---------------------------------------------------------------------------------------------- evaluation


@overload
def polyval(p: Tensor[DT, Any], x: Tensor[DT, Unpack[Sh]]) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def polyval(p: Tensor[DT, Any], x: float) -> Tensor[DT]: ...
@op
def polyval(p: Any, x: Any) -> AnyTensor:
    """The polynomial with 1-D coefficients ``p`` (highest power first) at each element of ``x``, by Horner's
    rule from 0 as NumPy (so an empty ``p`` gives zeros, and an infinite ``x`` gives NaN)."""
    p, x = _lists_adopting(p, x)
    dtype = result_dtype("polyval", (p, x))
    c = _vector("polyval", atom(p, dtype, "polyval"))
    _numeric("polyval", c, "coefficients")
    xs = atom(x, dtype, "polyval")

    def horner(y: Traced[Any], coefficient: Traced[Any]) -> Traced[Any]:
        return wrap(E.add(E.mul(y.atom, xs), coefficient.atom))

    return wrap(_fold(horner, S.full_like(xs.aval, 0), c))


# -------------------------------------------------------------------------------------------- arithmetic


def _pair(op_name: str, a1: Any, a2: Any, what: tuple[str, str] = ("a1", "a2")) -> tuple[Atom, Atom]:
    a1, a2 = _lists_adopting(a1, a2)
    dtype = result_dtype(op_name, (a1, a2))
    a, b = (_vector(op_name, atom(v, dtype, op_name), name, scalar_ok=True) for v, name in zip((a1, a2), what))
    _numeric(op_name, a, "coefficients")
    return a, b


def _aligned(op_name: str, a1: Any, a2: Any) -> tuple[Atom, Atom]:
    a, b = _pair(op_name, a1, a2)
    n = max(a.aval.shape[0], b.aval.shape[0])
    return _left_padded(a, n), _left_padded(b, n)


@op
def polyadd(a1: Tensor[DT, Any], a2: Tensor[DT, Any]) -> Tensor[DT, Any]:
    """The sum of two polynomials: the shorter coefficient array is padded with leading zeros."""
    return wrap(E.add(*_aligned("polyadd", a1, a2)))


@op
def polysub(a1: Tensor[DT, Any], a2: Tensor[DT, Any]) -> Tensor[DT, Any]:
    """The difference ``a1 - a2`` of two polynomials (the shorter one padded with leading zeros)."""
    return wrap(E.sub(*_aligned("polysub", a1, a2)))


def _convolve(a: Atom, b: Atom) -> Atom:
    """The full convolution of two non-empty 1-D arrays: the outer product summed along its anti-diagonals,
    which a reshape lines up (row ``i`` of the (n, m + n) zero-padded product, read with width n + m - 1, starts
    at column ``i``)."""
    n, m = a.aval.shape[0], b.aval.shape[0]
    outer = E.mul(S.broadcast_in_dim(a, (n, m), (0,), (None, None)), S.broadcast_in_dim(b, (n, m), (1,), (None, None)))
    padded = SL.pad(outer, literal(0, a.aval.dtype), [(0, 0, 0), (0, n, 0)])
    flat = SL.slice_in_dim(S.reshape(padded, (n * (m + n),), (None,)), 0, n * (n + m - 1), 0)
    return R.reduce_sum(S.reshape(flat, (n, n + m - 1), (None, None)), (0,))


def _at_least_zero(c: Atom) -> Atom:
    """NumPy's ``poly1d``: no coefficients at all is the zero polynomial ``[0]``."""
    return c if c.aval.shape[0] else _zeros(1, c.aval.dtype)


@op
def _polymul(a1: Any, a2: Any) -> AnyTensor:
    a, b = _pair("polymul", a1, a2)
    return wrap(_convolve(_at_least_zero(a), _at_least_zero(b)))


def _trimmed(op_name: str, c: Any) -> Any:
    """Eagerly, ``c`` without its leading zeros (NumPy's ``poly1d``); staged, an error."""
    if isinstance(c, (int, float)):
        return c
    if is_staging():
        raise shape_error(op_name, "trim_leading_zeros=True makes the result's length depend on the values of the "
                          "coefficients, which a staged program cannot read; leave it False (the default)")
    h = as_host_array(c)
    return np.trim_zeros(h.reshape(-1), "f") if h.ndim <= 1 else h


@_entry
def polymul(a1: Tensor[DT, Any], a2: Tensor[DT, Any], *, trim_leading_zeros: bool = False) -> Tensor[DT, Any]:
    """The product of two polynomials: the full convolution of their coefficients, of length
    ``len(a1) + len(a2) - 1`` (an empty array counts as ``[0]``). Leading zeros are kept (JAX's default);
    ``trim_leading_zeros=True`` drops them from the operands first, as NumPy does, in eager calls only."""
    if trim_leading_zeros:
        a1, a2 = _trimmed("polymul", a1), _trimmed("polymul", a2)
    return _polymul(a1, a2)


@op
def _polydiv(u: Any, v: Any) -> tuple[AnyTensor, AnyTensor]:
    a, b = _pair("polydiv", u, v, ("u", "v"))
    _floating("polydiv", a, "coefficients")
    b = _at_least_zero(b)
    m, n = a.aval.shape[0] - 1, b.aval.shape[0] - 1
    scale = E.div(literal(1, a.aval.dtype), _element(b, 0))
    quotient: list[Atom] = []
    remainder = a
    for k in range(m - n + 1):  # long division: one quotient coefficient per step, as NumPy
        d = E.mul(scale, _element(remainder, k))
        quotient.append(S.reshape(d, (1,), (None,)))
        update = E.mul(S.broadcast_to(d, b.aval), b)
        shifted = SL.pad(update, literal(0, a.aval.dtype), [(k, m - n - k, 0)])
        remainder = E.sub(remainder, shifted)
    q = SL.concatenate(quotient, 0) if quotient else _zeros(1, a.aval.dtype)
    return wrap(q), wrap(remainder)


@_entry
def polydiv(u: Tensor[FT, Any], v: Tensor[FT, Any], *,
            trim_leading_zeros: bool = False) -> tuple[Tensor[FT, Any], Tensor[FT, Any]]:
    """``(quotient, remainder)`` of the polynomial division ``u / v`` (floats). The quotient has
    ``max(len(u) - len(v) + 1, 1)`` coefficients; the remainder keeps ``u``'s length, its leading zeros included
    (as JAX; NumPy trims the near-zero ones: ``trim_leading_zeros=True`` does so in eager calls, with NumPy's
    ``allclose(r[0], 0)`` test). A leading zero in ``v``
    divides by zero (inf/NaN, as NumPy)."""
    q, r = _polydiv(u, v)
    if trim_leading_zeros:
        if is_staging():
            raise shape_error("polydiv", "trim_leading_zeros=True makes the remainder's length depend on its values, "
                              "which a staged program cannot read; leave it False (the default)")
        host = as_host_array(r)
        k = 0
        while k < host.size - 1 and np.allclose(host[k], 0, rtol=1e-14):  # NumPy's test for a zero
            k += 1
        r = r[k:]
    return q, r


# ------------------------------------------------------------------------------------- calculus on coefficients


@op
def polyder(p: Tensor[DT, Any], m: int = 1) -> Tensor[DT, Any]:
    """The coefficients of the ``m``-th derivative (static ``m >= 0``): ``len(p) - m`` of them, none when
    ``m >= len(p)``. Integer coefficients stay integers, as NumPy (JAX returns floats)."""
    order = _order("polyder", m, "derivative")
    c = _vector("polyder", as_tensor(p).atom, "p")
    _numeric("polyder", c, "coefficients")
    for _ in range(order):  # NumPy's steps, in the same order (so the same rounding)
        n = c.aval.shape[0] - 1
        if n <= 0:
            return wrap(_zeros(0, c.aval.dtype))
        powers = literal(np.arange(n, 0, -1).astype(c.aval.dtype), c.aval.dtype)
        c = E.mul(SL.slice_in_dim(c, 0, n, 0), powers)
    return wrap(c)


def _constants(op_name: str, k: Any, order: int, dtype: np.dtype[Any]) -> Atom:
    """The ``order`` integration constants from NumPy's ``k``: None (zeros), one value for every step, or at
    least ``order`` values (the first ones used)."""
    if k is None:
        return _zeros(order, dtype)
    if isinstance(k, (list, tuple)):
        k = np.asarray(k, dtype=dtype)
    c = atom(k, dtype, op_name)
    if c.aval.dtype != dtype:
        raise dtype_error(op_name, f"k {describe(k)} and p of dtype {_dt.short_name(dtype)} differ; convert one")
    if c.aval.ndim > 1:
        raise shape_error(op_name, f"k must be a scalar or 1-D, got {describe(k)}")
    if c.aval.size == 1:
        return S.broadcast_to(S.reshape(c, (), ()), Aval((order,), dtype, (None,)))
    if c.aval.shape[0] < order:
        raise ValueError(f"{op_name}: k must be a scalar or a 1-D array of length 1 or >= m={order}, got "
                         f"{describe(k)}")
    return SL.slice_in_dim(_vector(op_name, c, "k"), 0, order, 0)


@op
def polyint(p: Tensor[FT, Any], m: int = 1, k: Any = None) -> Tensor[FT, Any]:
    """The coefficients of the ``m``-th antiderivative (static ``m >= 0``, float ``p``): ``len(p) + m`` of them.
    ``k`` holds the integration constants, the first one added by the first integration (None: zeros; a scalar:
    the same constant every time)."""
    order = _order("polyint", m, "integral")
    c = _vector("polyint", as_tensor(p).atom, "p")
    _floating("polyint", c, "coefficients")
    if order == 0:
        return wrap(c)
    constants = _constants("polyint", k, order, c.aval.dtype)
    for j in range(order):  # NumPy's steps: divide by the new powers, append the constant
        n = c.aval.shape[0]
        powers = literal(np.arange(n, 0, -1).astype(c.aval.dtype), c.aval.dtype)
        parts = [E.div(c, powers)] if n else []
        c = SL.concatenate([*parts, SL.slice_in_dim(constants, j, j + 1, 0)], 0)
    return wrap(c)


# --------------------------------------------------------------------------------------------------- fitting


def _fit_operands(x: Any, y: Any, w: Any) -> tuple[Atom, Atom, Atom | None]:
    dtype = result_dtype("polyfit", (x, y) if w is None else (x, y, w))
    xs, ys = atom(x, dtype, "polyfit"), atom(y, dtype, "polyfit")
    _floating("polyfit", xs, "x and y")
    if xs.aval.ndim != 1 or xs.aval.size == 0:
        raise shape_error("polyfit", f"x must be a non-empty 1-D array, got {describe(wrap(xs))}")
    if ys.aval.ndim not in (1, 2) or ys.aval.shape[0] != xs.aval.shape[0]:
        raise shape_error("polyfit", f"y must be 1-D or 2-D with x's length {xs.aval.shape[0]} along its first axis, "
                          f"got x {describe(wrap(xs))} and y {describe(wrap(ys))}")
    if w is None:
        return xs, ys, None
    ws = atom(w, dtype, "polyfit")
    if ws.aval.ndim != 1 or ws.aval.shape[0] != xs.aval.shape[0]:
        raise shape_error("polyfit", f"w must be 1-D with x's length, got x {describe(wrap(xs))} and w "
                          f"{describe(wrap(ws))}")
    return xs, ys, ws


def _column_scaled(a: Atom, column: Atom) -> Atom:
    """Each row of ``a`` (and each element of a 1-D ``a``) times ``column``'s element of that row."""
    if a.aval.ndim == 1:
        return E.mul(a, column)
    return E.mul(a, S.broadcast_in_dim(column, a.aval.shape, (0,), a.aval.dims))


@op
def _polyfit(x: Any, y: Any, deg: int, rcond: float | None, w: Any, cov: Any) -> tuple[AnyTensor, ...]:
    xs, ys, ws = _fit_operands(x, y, w)
    order = deg + 1
    count = xs.aval.shape[0]
    limit = count * float(np.finfo(xs.aval.dtype).eps) if rcond is None else float(rcond)
    lhs, rhs = as_tensor(vander(wrap(xs), order)).atom, ys
    if ws is not None:
        lhs, rhs = _column_scaled(lhs, ws), _column_scaled(rhs, ws)
    # the columns scaled to unit norm, as NumPy, for a better-conditioned least-squares problem
    scale = bind(E.sqrt_p, R.reduce_sum(E.mul(lhs, lhs), (0,)))
    lhs = E.div(lhs, S.broadcast_in_dim(scale, lhs.aval.shape, (1,), lhs.aval.dims))
    c, residuals, rank, s = (as_tensor(t).atom for t in lstsq(wrap(lhs), wrap(rhs), limit))
    c = E.div(c, scale if c.aval.ndim == 1 else S.broadcast_in_dim(scale, c.aval.shape, (0,), c.aval.dims))
    outs = [wrap(c), wrap(residuals), wrap(rank), wrap(s), wrap(literal(limit, xs.aval.dtype))]
    if cov is not False:
        outs.append(wrap(_covariance(lhs, scale, residuals, count, order, ys.aval.ndim, cov == "unscaled")))
    return tuple(outs)


def _covariance(lhs: Atom, scale: Atom, residuals: Atom, count: int, order: int, y_ndim: int,
                unscaled: bool) -> Atom:
    """NumPy's covariance of the coefficients: ``inv(lhs.T lhs) / outer(scale, scale)`` times the residual
    variance (one matrix per column of a 2-D ``y``, stacked last)."""
    gram = as_tensor(inv(wrap(D.mm(S.transpose(lhs, (1, 0)), lhs)))).atom
    square = (order, order)
    base = E.div(gram, E.mul(S.broadcast_in_dim(scale, square, (0,), (None, None)),
                             S.broadcast_in_dim(scale, square, (1,), (None, None))))
    if unscaled:
        return base
    if count <= order:
        raise ValueError(f"polyfit: the number of data points ({count}) must exceed order ({order}) to scale the "
                         "covariance matrix (or pass cov='unscaled')")
    factor = E.div(residuals, E.scalar(float(count - order), residuals))
    if y_ndim == 1:
        return E.mul(base, S.reshape(factor, (), ()))
    k = factor.aval.shape[0]
    shape = (order, order, k)
    return E.mul(S.broadcast_in_dim(base, shape, (0, 1), (None,) * 3), S.broadcast_in_dim(factor, shape, (2,),
                                                                                            (None,) * 3))


def _degree(deg: Any) -> int:
    n = static_int("polyfit", deg, "deg")
    if n < 0:
        raise ValueError(f"polyfit: deg must be >= 0, got {n}")
    return n


@overload
def polyfit(x: Tensor[FT, Any], y: Tensor[FT, Unpack[Sh]], deg: int, rcond: float | None = None,
            full: Literal[False] = False, w: Tensor[FT, Any] | None = None,
            cov: Literal[False] = False) -> Tensor[FT, Unpack[tuple[Any, ...]]]: ...
@overload
def polyfit(x: Tensor[FT, Any], y: Tensor[FT, Unpack[Sh]], deg: int, rcond: float | None = None,
            full: bool = False, w: Tensor[FT, Any] | None = None,
            cov: bool | str = False) -> Tensor[FT, Unpack[tuple[Any, ...]]] | tuple[AnyTensor, ...]: ...
@_entry
def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: bool | str = False) -> AnyTensor | tuple[AnyTensor, ...]:
    """The least-squares polynomial of degree ``deg`` (static) through the points ``(x, y)`` (``y`` 1-D, or 2-D
    with one fit per column), optionally weighted by ``w``: its coefficients, highest power first. ``full=True``
    also returns ``residuals, rank, singular_values, rcond`` (as NumPy; but the residuals are computed even where
    NumPy returns none for a rank-deficient fit, and ``rcond`` is a 0-d array); ``cov=True`` (or ``'unscaled'``)
    returns ``(coefficients, covariance)``. Eager calls warn (NumPy's RankWarning) when the fit is rank-deficient;
    staged ones cannot."""
    order = _degree(deg) + 1
    if not (cov is False or cov is True or cov == "unscaled"):
        raise ValueError(f"polyfit: cov must be a bool or 'unscaled', got {cov!r}")
    outs = _polyfit(x, y, order - 1, None if rcond is None else float(rcond), w, False if full else cov)
    if not full and not is_staging() and int(np.asarray(outs[2])) != order:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=3)
    if full:
        return outs[:5]
    return (outs[0], outs[5]) if cov is not False else outs[0]


# --------------------------------------------------------------------------------------------- zeros and roots


@op
def poly(seq_of_zeros: Tensor[FT, Any]) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """The monic polynomial whose zeros are the given real numbers (1-D, float; a 0-d one is one zero): the
    coefficients of ``(x - z0)(x - z1)...``, highest power first; no zeros at all give the 0-d ``1``. A square
    matrix (NumPy: its characteristic polynomial) raises NotImplementedError."""
    t = as_tensor(seq_of_zeros)
    shape = t.aval.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0]:
        raise _not_implemented(
            f"poly: the characteristic polynomial of a square matrix {describe(t)} is not implemented (its zeros "
            "are the eigenvalues tnp.linalg.eigvals(a), which are complex, and poly takes real zeros); for a "
            "symmetric matrix a, use poly(tnp.linalg.eigvalsh(a))")
    if len(shape) > 1:
        raise shape_error("poly", f"the zeros must be a 1-D array (or a non-empty square matrix), got {describe(t)}")
    zeros = _vector("poly", t.atom, "the zeros", scalar_ok=True)
    _floating("poly", zeros, "zeros")
    n, dtype = zeros.aval.shape[0], zeros.aval.dtype
    if n == 0:
        return wrap(literal(1, dtype))

    def times_root(a: Traced[Any], z: Traced[Any]) -> Traced[Any]:
        # a(x) * (x - z), as NumPy's convolve(a, [1, -z]): a[i] - z * a[i - 1]
        shifted = SL.pad(SL.slice_in_dim(a.atom, 0, n, 0), literal(0, dtype), [(1, 0, 0)])
        return wrap(E.sub(a.atom, E.mul(S.broadcast_to(z.atom, a.aval), shifted)))

    # the running product after k zeros: its k + 1 coefficients in the first slots, zeros after them
    one = SL.pad(literal(np.ones(1, dtype), dtype), literal(0, dtype), [(0, n, 0)])
    return wrap(_fold(times_root, one, zeros))


def _companion_roots(q: Atom, degree: Atom | None = None) -> Atom:
    """The ``n`` eigenvalues of the companion matrix of ``q`` (1-D, ``n + 1 >= 2`` coefficients, highest power
    first): the roots of the polynomial. With ``degree`` (a staged i32 scalar ``d``; ``q`` then has only zeros
    after its first ``d + 1`` coefficients) the matrix is block diagonal, the companion of those ``d + 1``
    coefficients and an ``n - d`` square of zeros, whose eigenvalues LAPACK returns as exact zeros (its balancing
    isolates zero rows and columns) instead of the ill-conditioned cluster of a zero root of multiplicity
    ``n - d``."""
    n = q.aval.shape[0] - 1
    dtype = q.aval.dtype
    lead = _element(q, 0)
    zero, one = literal(0, dtype), literal(1, dtype)
    safe_lead = E.select(E.eq(lead, zero), one, lead)  # the zero polynomial: a zero matrix rather than NaNs
    first_row = E.neg(E.div(SL.slice_in_dim(q, 1, n + 1, 0), safe_lead))
    rows = SL.iota(_dt.DEFAULT_INT, (n, n), 0)
    cols = SL.iota(_dt.DEFAULT_INT, (n, n), 1)
    below_diagonal = E.eq(rows, E.add(cols, literal(1, _dt.DEFAULT_INT)))
    if degree is not None:
        below_diagonal = E.select(E.lt(rows, degree), below_diagonal, S.full_like(below_diagonal, False))
    square = Aval((n, n), dtype)
    subdiagonal = E.select(below_diagonal, S.full_like(square, 1), S.full_like(square, 0))
    spread_row = S.broadcast_in_dim(first_row, (n, n), (1,), (None, None))
    companion = E.select(E.eq(rows, literal(0, _dt.DEFAULT_INT)), spread_row, subdiagonal)
    (w,) = EG.eig(companion, compute_left=False, compute_right=False)
    return w


def _roots_operand(p: Any) -> Atom:
    c = as_tensor(p).atom
    if c.aval.dtype not in EG.LAPACK_DTYPES:
        raise dtype_error("roots", f"roots needs f32, f64, c64 or c128 coefficients, got {describe(wrap(c))}; "
                          "convert them with .astype(f32)")
    return _vector("roots", c)


def _complex_zeros(n: int, dtype: np.dtype[Any]) -> Atom:
    out = dtype if _dt.is_complex(dtype) else _dt.complex_dtype(dtype)
    return _zeros(n, out)  # type: ignore[arg-type]


def _named_roots(fn: Callable[..., AnyTensor]) -> Callable[..., AnyTensor]:
    """A helper of ``roots`` staged as an op whose errors name ``roots``."""
    fn.__name__ = "roots"
    return op(fn)


@_named_roots
def _stripped_roots(core: Any, trailing_zeros: int) -> AnyTensor:
    """NumPy's roots of coefficients without leading or trailing zeros, and ``trailing_zeros`` zero roots."""
    q = _roots_operand(core)
    found = [_companion_roots(q)] if q.aval.shape[0] >= 2 else []
    return wrap(SL.concatenate([*found, _complex_zeros(trailing_zeros, q.aval.dtype)], 0))


@_named_roots
def _roots_keeping_zeros(p: Any) -> AnyTensor:
    """JAX's ``strip_zeros=False``: one root per coefficient after the first, the ``k`` leading zeros giving NaNs.
    The coefficients are shifted left by ``k`` on the device (static shapes), so the polynomial's own zero roots
    (its trailing zeros) come from the eigensolver, not exactly."""
    c = _roots_operand(p)
    n = c.aval.shape[0] - 1
    dtype = c.aval.dtype
    if n < 1:
        return wrap(_complex_zeros(0, dtype))
    index = SL.iota(_dt.DEFAULT_INT, (n + 1,), 0)
    is_zero = E.eq(c, literal(0, dtype))
    leading = R.reduce_min(E.select(is_zero, S.full_like(index, n + 1), index), (0,))  # k (n + 1: all zero)
    shifted = SL.dynamic_slice(SL.pad(c, literal(0, dtype), [(0, n + 1, 0)]), [leading], [n + 1])
    w = _companion_roots(shifted, E.sub(literal(n, _dt.DEFAULT_INT), leading))
    # the k padding eigenvalues are exact zeros: mark the last k exact zeros (any k of them are alike)
    exact_zero = E.eq(w, literal(0, w.aval.dtype))
    vector = Aval((n,), _dt.DEFAULT_INT)
    counts = E.select(exact_zero, S.full_like(vector, 1), S.full_like(vector, 0))
    at_or_after = literal(np.triu(np.ones((n, n), np.int32)), _dt.DEFAULT_INT)  # [i, j] = (j >= i)
    zeros_from_here = R.reduce_sum(E.mul(S.broadcast_in_dim(counts, (n, n), (1,), (None, None)), at_or_after), (1,))
    padding = E.select(exact_zero, E.lt(E.sub(zeros_from_here, literal(1, _dt.DEFAULT_INT)), leading), exact_zero)
    nan = S.full_like(w, complex(float("nan"), float("nan")))
    return wrap(E.select(padding, nan, w))


@overload
def roots(p: Tensor[f32, Any] | Tensor[c64, Any], *, strip_zeros: bool = True) -> Tensor[c64, Any]: ...
@overload
def roots(p: Tensor[f64, Any] | Tensor[c128, Any], *, strip_zeros: bool = True) -> Tensor[c128, Any]: ...
@overload
def roots(p: AnyTensor, *, strip_zeros: bool = True) -> AnyTensor: ...
def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients ``p`` (1-D, highest power first), as NumPy: the eigenvalues
    of its companion matrix (LAPACK's geev, so CPU only), always complex (as JAX: c64 for f32 and c64, c128 for
    f64 and c128), in LAPACK's order. Leading zeros are stripped and each trailing zero gives an exact zero root,
    as NumPy does; that reads the coefficients, so in a staged program pass ``strip_zeros=False`` (JAX's
    option): one root per coefficient after the first, a NaN for each leading zero."""
    if not isinstance(strip_zeros, bool):
        raise TypeError(f"roots: strip_zeros must be a bool, got {strip_zeros!r}")
    if not strip_zeros:
        return _roots_keeping_zeros(p)
    if is_staging():
        raise shape_error("roots", "strip_zeros=True (the default, as NumPy) makes the number of roots depend on the "
                          "values of the coefficients, which a staged program cannot read; pass strip_zeros=False "
                          "(a leading zero then gives a NaN root)")
    host = as_host_array(p)
    if host.ndim != 1:
        return _stripped_roots(host, 0)  # the error names the shape
    nonzero = np.flatnonzero(host)
    if nonzero.size == 0:
        return _stripped_roots(host[:0], 0)
    return _stripped_roots(host[nonzero[0]: nonzero[-1] + 1], host.size - 1 - int(nonzero[-1]))

