"""``tensorstage.scipy.special``: SciPy's special functions with ``jax.scipy.special``'s names and semantics.

Elementwise functions take floating-point tensors (f16, bf16, f32, f64) or Python numbers, keep dims, and
broadcast their operands as ``tensorstage.numpy`` does; like every tensorstage function they never convert an
integer tensor to float for you (``.astype(f32)`` first; SciPy and JAX compute integers in float64/float32). Values
follow SciPy at the edges: ``gammaln`` is inf at 0 and the negative integers, ``digamma(±0)`` is ∓inf,
``xlogy(0, y)`` is 0 (NaN for a NaN ``y``), ``logit(0)`` is -inf, ``entr(x < 0)`` is -inf, ``rel_entr``/``kl_div`` are
inf off their domain.

Deliberate differences from SciPy (most shared with JAX):

- ``polygamma(n, x)`` for ``n >= 2`` and ``x <= 0`` is NaN (XLA's Hurwitz zeta is NaN for ``q <= 0``; ``n`` of 0 and 1
  are exact there: digamma, and trigamma by reflection). A non-integer ``n`` gives NaN. Its derivative in ``n`` and
  ``zeta``'s in ``x`` are TransformErrors.
- ``zeta(x)`` (Riemann, ``q=None``) is NaN for ``x < 1`` (SciPy continues it analytically there).
- ``ndtri`` (and the ``ppf``/``isf`` built on it) is an A&S 26.2.23 guess polished by Newton steps on ``log_ndtr``, in
  the input's dtype: within 5 ulps of SciPy in f64 over [1e-307, 1], 2.4 ulps in f32 over [1e-37, 1].
- ``gammainc``/``gammaincc`` are clamped into [0, 1]: for tiny ``a`` and ``x`` (1e-300) ``gammaincc`` is 0 where
  SciPy's is 7e-298 (XLA's continued fraction has an absolute error of ~1e-14 there).
- ``kl_div``/``rel_entr`` take ``x (log x - log y)``: finite where ``x / y`` overflows (``kl_div(1e10, 1e-300)`` is
  7.1e12; SciPy's is inf).
- ``beta``/``betaln`` of a NaN and an argument at a pole (0, a negative integer, -inf) are NaN (SciPy's are inf);
  ``poch`` at negative integers and infinite arguments is NaN where SciPy takes limits (``poch(-2, -2)`` = 1/12);
  ``boxcox(0, 1e-300)`` is -1e300 (SciPy: -inf).
- ``betaln``/``beta`` are sums of ``gammaln`` (absolute error ~eps·|gammaln|, so a larger relative error than SciPy's
  where the terms cancel, e.g. one huge and one tiny argument).
- ``factorial(n, exact=True)`` raises (as JAX): exact integer factorials overflow every dtype here.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import Floating
from ...op_signatures import Binary, as_binary
from ...shape_typing import FloatUnary
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives import special as SP
from ...staging.primitives import structural as ST
from ...tensor import Tensor, Traced
from ...staging.primitives.autodiff import stop_gradient
from ..numpy._core import float_operand, normalize_axes, op, wrap
from ..numpy.mathfuncs import _and, _floats, _isnan, _or
from ..numpy.reductions import logsumexp as _logsumexp
from .. import numpy as tnp
from ..numpy import ufuncs as _uf

FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Operand = AnyTensor | int | float
Axis = int | type[Dim] | tuple[int | type[Dim], ...] | None

__all__ = [
    "betainc", "boxcox", "boxcox1p", "comb", "loggamma",
    "beta", "betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "factorial", "gamma", "gammainc",
    "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "poch", "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy",
    "zeta",
]
__all__ += ["erfcx", "exp1", "expi"]  # from .special_series

# ----------------------------------------------------------------------------------------------- helpers


def _c(value: float, like: Atom) -> Atom:
    return E.scalar(value, like)


def _where(pred: Atom, on_true: Atom, on_false: Atom) -> Atom:
    return E.select(pred, on_true, on_false)





def _ge(a: Atom, b: Atom) -> Atom:
    return bind(E.ge_p, a, b)  # type: ignore[no-any-return]






def _unary_atom(name: str, x: Any) -> Atom:
    return float_operand(name, x).atom


def _unary(name: str, fn: Any) -> FloatUnary:
    """A public unary function from ``fn(atom) -> atom``."""

    def public(x: Any) -> AnyTensor:
        return wrap(fn(_unary_atom(name, x)))

    public.__name__ = public.__qualname__ = name
    public.__doc__ = fn.__doc__
    return op(public)


def _binary(name: str, fn: Any) -> Binary:
    """A public broadcasting binary function from ``fn(atom, atom) -> atom``."""

    def public(x: Operand, y: Operand) -> AnyTensor:
        return wrap(fn(*_floats(name, x, y)))

    public.__name__ = public.__qualname__ = name
    public.__doc__ = fn.__doc__
    return as_binary(op(public))


# -------------------------------------------------------------------------------------- gamma family


def _digamma(x: Atom) -> Atom:
    """psi(x); ∓inf at ±0 (-1/x there), NaN at the negative integers, as SciPy."""
    return _where(E.eq(x, _c(0, x)), E.div(_c(-1, x), x), SP.digamma(x))


def _gammasgn(x: Atom) -> Atom:
    """The sign of Gamma(x): 1 for x > 0, ±1 at ±0, alternating below 0, NaN at the negative integers and -inf."""
    floor = E.floor(x)
    odd = E.eq(E.sub(floor, E.mul(_c(2, x), E.floor(E.mul(x, _c(0.5, x))))), _c(1, x))
    negative_side = _where(odd, _c(-1, x), _c(1, x))
    at_zero = _where(E.eq(E.div(_c(1, x), x), _c(-math.inf, x)), _c(-1, x), _c(1, x))
    out = _where(E.gt(x, _c(0, x)), ST.full_like(x, 1), negative_side)
    out = _where(E.eq(x, _c(0, x)), at_zero, out)
    pole = _or(_and(E.lt(x, _c(0, x)), E.eq(floor, x)), _isnan(x))
    return _where(pole, _c(math.nan, x), out)


def _gamma(x: Atom) -> Atom:
    """Gamma(x) = gammasgn(x) exp(gammaln(x)): ±inf at ±0, NaN at the negative integers."""
    return E.mul(_gammasgn(x), E.exp(SP.lgamma(x)))


def _polygamma(n: Atom, x: Atom) -> Atom:
    """The n-th derivative of digamma: ``(-1)^(n+1) n! zeta(n + 1, x)`` for ``n >= 1``."""
    one = _c(1, x)
    safe_n = _where(E.eq(n, _c(0, n)), one, n)  # the n = 0 branch is digamma: keep zeta's s > 1 elsewhere
    odd = E.eq(E.sub(safe_n, E.mul(_c(2, n), E.floor(E.mul(safe_n, _c(0.5, n))))), one)
    sign = _where(odd, one, _c(-1, x))
    general = E.mul(E.mul(sign, E.exp(SP.lgamma(E.add(safe_n, one)))), SP.zeta(E.add(safe_n, one), x))
    out = _where(E.eq(n, one), SP.trigamma(x), general)
    out = _where(E.eq(n, _c(0, n)), _digamma(x), out)
    not_order = _or(E.lt(n, _c(0, n)), bind(E.ne_p, E.floor(n), n))
    return _where(not_order, _c(math.nan, x), out)


def _betaln(a: Atom, b: Atom) -> Atom:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    return E.sub(E.add(SP.lgamma(a), SP.lgamma(b)), SP.lgamma(E.add(a, b)))


def _beta(a: Atom, b: Atom) -> Atom:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), signed, through logs (no overflow of the parts)."""
    sign = E.mul(E.mul(_gammasgn(a), _gammasgn(b)), _gammasgn(E.add(a, b)))
    return E.mul(sign, E.exp(_betaln(a, b)))


def _poch(z: Atom, m: Atom) -> Atom:
    """The rising factorial Gamma(z + m) / Gamma(z) (1 for m = 0)."""
    zm = E.add(z, m)
    sign = E.mul(_gammasgn(zm), _gammasgn(z))
    out = E.mul(sign, E.exp(E.sub(SP.lgamma(zm), SP.lgamma(z))))
    return _where(E.eq(m, _c(0, m)), ST.full_like(z, 1), out)


def _zeta_of(s: Atom, q: Atom) -> Atom:
    """Hurwitz zeta; 0 at q = inf (XLA's expansion gives NaN there)."""
    out = SP.zeta(s, q)
    return _where(_and(E.eq(q, _c(math.inf, q)), E.gt(s, _c(1, s))), ST.full_like(out, 0), out)




def _gammaln(x: Atom) -> Atom:
    """log|Gamma(x)|: inf at 0 and the negative integers; -inf at -inf, as SciPy."""
    return _where(E.eq(x, _c(-math.inf, x)), x, SP.lgamma(x))


gammaln = _unary("gammaln", _gammaln)
digamma = _unary("digamma", _digamma)
gammasgn = _unary("gammasgn", _gammasgn)
gamma = _unary("gamma", _gamma)
polygamma = _binary("polygamma", _polygamma)
betaln = _binary("betaln", _betaln)
beta = _binary("beta", _beta)
poch = _binary("poch", _poch)
def _incomplete_gamma(lower: bool) -> Any:
    """P(a, x) (``lower``) or Q(a, x) with SciPy's values where XLA's expansions are NaN (``a = 0 < x``: P = 1;
    ``x = inf`` with a finite ``a >= 0``: P = 1; ``a = inf`` with a finite ``x >= 0``: P = 0), clamped into [0, 1]
    (the continued fraction can end slightly below 0 for tiny ``a``). NaN for ``a < 0`` or ``x < 0``."""

    def fn(a: Atom, x: Atom) -> Atom:
        zero = _c(0, a)
        settled_one = _and(_ge(a, zero), _or(_and(E.eq(a, zero), E.gt(x, zero)),
                                             _and(E.eq(x, _c(math.inf, x)), bind(E.is_finite_p, a))))
        settled_zero = _and(E.eq(a, _c(math.inf, a)), _and(_ge(x, zero), bind(E.is_finite_p, x)))
        settled = _or(settled_one, settled_zero)
        # the settled points go through the primitive at (1, 1), so its NaN does not reach a gradient
        safe_a, safe_x = _where(settled, _c(1, a), a), _where(settled, _c(1, x), x)
        out = SP.igamma(safe_a, safe_x) if lower else SP.igammac(safe_a, safe_x)
        out = _where(E.lt(out, zero), _c(0, out), _where(E.gt(out, _c(1, out)), _c(1, out), out))
        edge_p = _where(settled_one, _c(1, a), _c(0, a))
        out = _where(settled, edge_p if lower else E.sub(_c(1, a), edge_p), out)
        both_infinite = _and(E.eq(a, _c(math.inf, a)), E.eq(x, _c(math.inf, x)))
        return _where(both_infinite, _c(math.nan, a), out)

    return fn


gammainc = _binary("gammainc", _incomplete_gamma(True))
gammaincc = _binary("gammaincc", _incomplete_gamma(False))


@overload
def zeta(x: Tensor[FT, Unpack[S]], q: None = None) -> Tensor[FT, Unpack[S]]: ...
@overload
def zeta(x: Operand, q: Operand) -> AnyTensor: ...
@op
def zeta(x: Operand, q: Operand | None = None) -> AnyTensor:
    """The Hurwitz zeta function ``sum_k (k + q)^-x``; the Riemann zeta function without ``q`` (``x > 1``)."""
    if q is None:
        s = float_operand("zeta", x).atom
        return wrap(_zeta_of(s, _c(1, s)))
    return wrap(_zeta_of(*_floats("zeta", x, q)))


@op
def multigammaln(a: Tensor[FT, Unpack[S]], d: int) -> Tensor[FT, Unpack[S]]:
    """log of the multivariate gamma function of dimension ``d``:
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)``."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"multigammaln: d must be a positive int, got {d!r}")
    x = _unary_atom("multigammaln", a)
    total = _c(d * (d - 1) / 4 * math.log(math.pi), x)
    for j in range(int(d)):
        total = E.add(total, SP.lgamma(E.sub(x, _c(j / 2, x))))
    return wrap(total)


@op
def factorial(n: Tensor[FT, Unpack[S]], exact: bool = False) -> Tensor[FT, Unpack[S]]:
    """``gamma(n + 1)``, and 0 for negative ``n`` (SciPy's ``exact=False``)."""
    if exact:
        raise ValueError("factorial: exact=True is not supported (as in JAX); use exact=False")
    x = _unary_atom("factorial", n)
    out = _gamma(E.add(x, _c(1, x)))
    return wrap(_where(E.lt(x, _c(0, x)), ST.full_like(out, 0), out))


# ------------------------------------------------------------------------------------- error functions


def _ndtr(x: Atom) -> Atom:
    """The standard normal CDF ``erfc(-x / sqrt 2) / 2`` (accurate in both tails)."""
    return E.mul(_c(0.5, x), SP.erfc(E.mul(x, _c(-1 / math.sqrt(2), x))))


# Abramowitz & Stegun 26.2.23: -x ~ t - (c0 + c1 t + c2 t²) / (1 + d1 t + d2 t² + d3 t³), t = sqrt(-2 log q)
_AS_NUMERATOR = (2.515517, 0.802853, 0.010328)
_AS_DENOMINATOR = (1.0, 1.432788, 0.189269, 0.001308)


def _polynomial(coefficients: tuple[float, ...], t: Atom) -> Atom:
    out = _c(coefficients[-1], t)
    for c in reversed(coefficients[:-1]):
        out = E.add(E.mul(out, t), _c(c, t))
    return out


def _ndtri_guess(log_q: Atom) -> Atom:
    """ndtri(q) for q in (0, 1/2] to 4.5e-4 absolute (A&S 26.2.23), from ``log q``: a cheap starting point."""
    t = bind(E.sqrt_p, E.mul(_c(-2, log_q), log_q))
    return E.neg(E.sub(t, E.div(_polynomial(_AS_NUMERATOR, t), _polynomial(_AS_DENOMINATOR, t))))


def _lower_ndtri(q: Atom, log_q: Atom) -> Atom:
    """ndtri(q) for q in (0, 1/2]: A&S 26.2.23 (4.5e-4 absolute), then Newton steps on ``log_ndtr(x) = log q``
    (quadratic, and relative in q down to the smallest doubles): 3 in f64 (2.8 ulps), 2 in f32 (2.4 ulps)."""
    x = _ndtri_guess(log_q)
    half_log_2pi = 0.5 * math.log(2 * math.pi)
    for _ in range(3 if q.aval.dtype == np.float64 else 2):
        log_cdf = _log_ndtr(x)
        log_pdf = E.sub(E.mul(E.mul(x, x), _c(-0.5, x)), _c(half_log_2pi, x))
        x = E.sub(x, E.div(E.sub(log_cdf, log_q), E.exp(E.sub(log_pdf, log_cdf))))
    return x


def _ndtri(p: Atom) -> Atom:
    """The standard normal quantile, in ``p``'s dtype (f16/bf16 in f32): the lower tail's for q = min(p, 1 - p)
    (``1 - p`` is exact above 1/2), mirrored; -inf at 0, inf at 1, NaN outside [0, 1]."""
    dtype = p.aval.dtype
    work = p if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else E.convert(p, np.dtype(np.float32))
    upper = E.gt(work, _c(0.5, work))
    q = _where(upper, E.sub(_c(1, work), work), work)
    interior = E.gt(q, _c(0, q))  # (false at NaN and below 0)
    safe_q = _where(interior, q, _c(0.5, q))  # keeps log(0) and its NaN out of the gradient
    x = _where(interior, _lower_ndtri(safe_q, E.log(safe_q)), _c(-math.inf, q))
    # exactly 0 at 1/2, as SciPy, through the tangent line there (so the gradient is still 1 / pdf)
    centre = E.mul(_c(math.sqrt(2 * math.pi), work), E.sub(work, _c(0.5, work)))
    x = _where(upper, E.neg(x), _where(E.eq(q, _c(0.5, q)), centre, x))
    outside = _or(_or(E.lt(work, _c(0, work)), E.gt(work, _c(1, work))), _isnan(work))
    x = _where(outside, _c(math.nan, x), x)
    return x if work is p else E.convert(x, dtype)


def _log_ndtr_asymptotic(x: Atom) -> Atom:
    """``log ndtr(x)`` for ``x << 0``: ``-x²/2 - log(-x) - log(2 pi)/2 + log(1 + sum_k (-1)^k (2k-1)!! / x^2k)``."""
    inv_x2 = E.div(_c(1, x), E.mul(x, x))
    series = _c(0, x)
    term = _c(1, x)
    for k in range(1, 11):  # the 10th term is below f64's eps for x <= -20
        term = E.mul(term, E.mul(inv_x2, _c(-(2 * k - 1), x)))
        series = E.add(series, term)
    head = E.sub(E.mul(E.mul(x, x), _c(-0.5, x)), E.log(E.neg(x)))
    return E.add(E.sub(head, _c(0.5 * math.log(2 * math.pi), x)), bind(E.log1p_p, series))


def _log_ndtr(x: Atom) -> Atom:
    """``log ndtr(x)``: log1p(-ndtr(-x)) above 6, log(ndtr(x)) down to -20 (f64; -10 below f64), an asymptotic
    series below (where erfc underflows). The first two share one ``ndtr`` (erfc is a large expansion to compile),
    at ``-x`` above 6 and at ``x`` (at least -20) below."""
    lower = -20.0 if x.aval.dtype == np.float64 else -10.0
    upper, middle = _c(6, x), _c(lower, x)
    high_side, above_middle = E.gt(x, upper), E.gt(x, middle)
    mass = _ndtr(_where(high_side, E.neg(x), _where(above_middle, x, middle)))
    half = _c(0.5, x)  # each log sees its own branch's mass only (the other's, near 0 or 1, would NaN a gradient)
    high = bind(E.log1p_p, E.neg(_where(high_side, mass, half)))
    mid = E.log(_where(high_side, half, mass))
    low = _log_ndtr_asymptotic(_where(above_middle, middle, x))
    return _where(high_side, high, _where(above_middle, mid, low))


def _logit(p: Atom) -> Atom:
    """``log(p / (1 - p))``: -inf at 0, inf at 1, NaN outside [0, 1]."""
    return E.sub(E.log(p), bind(E.log1p_p, E.neg(p)))


erf = _uf._float_unary("erf", E.erf_p)
erfc = _unary("erfc", SP.erfc)
erfinv = _uf._float_unary("erfinv", E.erf_inv_p)
ndtr = _unary("ndtr", _ndtr)
ndtri = _unary("ndtri", _ndtri)
log_ndtr = _unary("log_ndtr", _log_ndtr)
expit = _uf._float_unary("expit", E.logistic_p)
logit = _unary("logit", _logit)

# ------------------------------------------------------------------------------- information theory


def _xlog(log_fn: Any) -> Any:
    def fn(x: Atom, y: Atom) -> Atom:
        zero = E.eq(x, _c(0, x))
        safe_y = _where(zero, ST.full_like(y, 1), y)  # log(0) must not reach the gradient
        out = _where(zero, ST.full_like(y, 0), E.mul(x, log_fn(safe_y)))
        return _where(_isnan(y), y, out)

    return fn


def _entr(x: Atom) -> Atom:
    """``-x log x``; 0 at 0 and -inf below."""
    positive = E.gt(x, _c(0, x))
    safe = _where(positive, x, _c(1, x))
    out = _where(positive, E.neg(E.mul(x, E.log(safe))), _where(E.eq(x, _c(0, x)), _c(0, x), _c(-math.inf, x)))
    return _where(_isnan(x), x, out)


def _entropy_terms(x: Atom, y: Atom, extra: bool) -> Atom:
    """``x log(x / y)`` (plus ``y - x`` for kl_div) for positive operands, ``0`` (``y``) at ``x = 0, y >= 0``, inf
    elsewhere; NaN in, NaN out."""
    both = _and(E.gt(x, _c(0, x)), E.gt(y, _c(0, y)))
    sx, sy = _where(both, x, _c(1, x)), _where(both, y, _c(1, y))
    inside = E.mul(x, E.sub(E.log(sx), E.log(sy)))  # (x / y can underflow to a flushed subnormal, or overflow)
    if extra:
        inside = E.add(E.sub(inside, x), y)
    edge = _and(E.eq(x, _c(0, x)), _ge(y, _c(0, y)))
    out = _where(both, inside, _where(edge, y if extra else ST.full_like(y, 0), _c(math.inf, x)))
    return _where(_or(_isnan(x), _isnan(y)), E.add(x, y), out)


xlogy = _binary("xlogy", _xlog(E.log))
xlog1py = _binary("xlog1py", _xlog(lambda y: bind(E.log1p_p, y)))
entr = _unary("entr", _entr)
rel_entr = _binary("rel_entr", lambda x, y: _entropy_terms(x, y, False))
kl_div = _binary("kl_div", lambda x, y: _entropy_terms(x, y, True))

# ---------------------------------------------------------------------------------------------- bessel

i0e = _unary("i0e", SP.bessel_i0e)
i1e = _unary("i1e", SP.bessel_i1e)
i0 = _unary("i0", lambda x: E.mul(E.exp(E.abs(x)), SP.bessel_i0e(x)))
i1 = _unary("i1", lambda x: E.mul(E.exp(E.abs(x)), SP.bessel_i1e(x)))

# ------------------------------------------------------------------------------------------- reductions


def _finite_peak(t: AnyTensor, axis: Axis) -> AnyTensor:
    """The maximum over ``axis`` (kept), 0 where it is not finite, as a constant for autodiff: the shift that keeps
    ``exp`` in range (logsumexp and log_softmax are shift invariant, so its gradient contributions cancel)."""
    peak = tnp.max(t, axis=cast(Any, axis), keepdims=True)
    finite = tnp.where(tnp.isfinite(peak), peak, tnp.zeros_like(peak))
    return wrap(stop_gradient(cast(Traced[Any], finite).atom))


@op
def logsumexp(a: AnyTensor, axis: Axis = None, b: Operand | None = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes by default), computed stably. With ``return_sign`` a pair
    ``(log|sum|, sign)``; without it a negative sum gives NaN, as SciPy's."""
    if b is None and not return_sign:
        return _logsumexp(a, axis=cast(Any, axis), keepdims=keepdims)
    t = float_operand("logsumexp", a)
    weights = tnp.ones_like(t) if b is None else tnp.broadcast_to(tnp.asarray(b, dtype=t.dtype), t.shape)
    peak = _finite_peak(tnp.where(weights != 0, t, -tnp.inf), axis)
    total = tnp.sum(weights * tnp.exp(t - peak), axis=cast(Any, axis), keepdims=True)
    sign = tnp.sign(total)
    out = tnp.log(tnp.abs(total)) + peak
    if not keepdims:
        axes = normalize_axes("logsumexp", axis, t)
        out, sign = tnp.squeeze(out, axis=axes), tnp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    return tnp.where(sign < 0, tnp.nan, out)


@op
def log_softmax(x: Tensor[FT, Unpack[S]], axis: Axis = None) -> Tensor[FT, Unpack[S]]:
    """``x - logsumexp(x, axis)`` (over every axis by default, as SciPy; a row of -inf is NaN, as there)."""
    t = float_operand("log_softmax", x)
    shifted = t - _finite_peak(t, axis)
    out: Tensor[FT, Unpack[S]] = shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=cast(Any, axis), keepdims=True))
    return out


@op
def softmax(x: Tensor[FT, Unpack[S]], axis: Axis = None) -> Tensor[FT, Unpack[S]]:
    """``exp(log_softmax(x, axis))`` (over every axis by default, as SciPy)."""
    return tnp.exp(log_softmax(x, axis=axis))


from .special_extra import betainc, boxcox, boxcox1p, comb, loggamma  # noqa: E402 - it builds on the helpers above
from .special_series import erfcx, exp1, expi  # noqa: E402 - it builds on the helpers above
from .special_more import *  # noqa: E402, F403 - it builds on the helpers above
from .special_inverse import *  # noqa: E402, F403 - it builds on the helpers above
from . import special_inverse as _special_inverse, special_more as _special_more  # noqa: E402

from .special_hyp2f1 import *  # noqa: E402, F403 - it builds on the helpers above
from .special_complex import *  # noqa: E402, F403 - it builds on the helpers above
from . import special_complex as _special_complex, special_hyp2f1 as _special_hyp2f1  # noqa: E402

__all__ += _special_more.__all__ + _special_inverse.__all__ + _special_hyp2f1.__all__ + _special_complex.__all__
