"""Special functions as primitives: ``lgamma``, ``digamma``, ``zeta``, ``igamma``/``igammac``, ``bessel_i0e``,
``bessel_i1e``, ``erfc`` (real floating-point operands only: f16, bf16, f32, f64; complex and integer operands are a
DTypeError, as for ``erf``).

Unary ones are declared through elementwise's ``_unary`` with their derivative. The binary ones:

- ``zeta(s, q)`` (Hurwitz): ``d/dq = -s zeta(s + 1, q)``; a derivative with respect to ``s`` is a TransformError (as
  JAX).
- ``igamma(a, x)`` / ``igammac(a, x)``: the regularized lower / upper incomplete gamma functions P and Q.
  ``d/dx = ±x^(a-1) e^-x / Gamma(a)``; with respect to ``a`` the derivative is ``±igamma_grad_a(a, x)``, a primitive
  of its own (JAX's), whose own derivative with respect to ``a`` (a second derivative) is a TransformError. The
  density's ``log(x^a e^-x / Gamma(a))`` is ``log_gamma_prefactor`` (Stirling's series for ``a >= 10``, without the
  cancellation of ``a log x - x - lgamma(a)``, which loses ``a eps``), shared with the lowering.
- ``betainc(a, b, x)``: the regularized incomplete beta function ``I_x(a, b)``. ``d/dx = x^(a-1) (1-x)^(b-1) /
  B(a, b)``; derivatives with respect to ``a`` and ``b`` are TransformErrors (JAX has none either).

``digamma``'s derivative, the trigamma function, is ``zeta(2, x)`` for ``x > 0`` and, by the reflection formula
``psi1(1 - x) + psi1(x) = pi² / sin²(pi x)``, ``pi² / sin²(pi x) - zeta(2, 1 - x)`` below.

Lowerings and their accuracy (measured against SciPy in f32 and f64): ``lowering/rules/special.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..builder import bind
from ..errors import TransformError
from ..ir import Atom
from ..primitive import Primitive
from ..source import user_location
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from .elementwise import FLOAT, REAL_FLOAT

__all__ = [
    "bessel_i0e", "bessel_i1e", "betainc", "digamma", "erfc", "igamma", "igamma_grad_a", "igammac", "lgamma",
    "horner", "log1pmx_ratio", "log_gamma_prefactor", "trigamma", "zeta",
]

# ---------------------------------------------------------------------------------------------------- unary


def lgamma(x: Atom) -> Atom:
    return bind(lgamma_p, x)  # type: ignore[no-any-return]


def digamma(x: Atom) -> Atom:
    return bind(digamma_p, x)  # type: ignore[no-any-return]


def erfc(x: Atom) -> Atom:
    return bind(erfc_p, x)  # type: ignore[no-any-return]


def bessel_i0e(x: Atom) -> Atom:
    return bind(bessel_i0e_p, x)  # type: ignore[no-any-return]


def bessel_i1e(x: Atom) -> Atom:
    return bind(bessel_i1e_p, x)  # type: ignore[no-any-return]


def _c(value: float, like: Atom) -> Atom:
    return E.scalar(value, like)


def trigamma(x: Atom) -> Atom:
    """``psi'(x)``: ``zeta(2, x)`` for ``x > 0``, the reflection formula below (XLA's zeta is NaN for ``q <= 0``)."""
    positive = E.gt(x, _c(0, x))
    safe_x = E.select(positive, x, _c(1, x))  # each branch is fed an input in its domain: no NaN leaks to a gradient
    reflected = E.select(positive, _c(0.5, x), x)
    sin_pi_x = E.sin(E.mul(reflected, _c(np.pi, x)))
    mirror = E.sub(E.div(_c(np.pi**2, x), E.mul(sin_pi_x, sin_pi_x)), zeta(_c(2, x), E.sub(_c(1, x), reflected)))
    return E.select(positive, zeta(_c(2, x), safe_x), mirror)


def _erfc_deriv(x: Atom, y: Atom) -> Atom:
    return E.mul(_c(-2 / np.sqrt(np.pi), x), E.exp(E.neg(E.mul(x, x))))


def _i1e_deriv(x: Atom, y: Atom) -> Atom:
    """``i0e(x) - i1e(x) (sign(x) + 1/x)``, and its limit 1/2 at |x| <= eps (JAX's form)."""
    eps = float(np.finfo(np.float16 if x.aval.dtype.itemsize == 2 else x.aval.dtype).eps)
    not_tiny = E.gt(E.abs(x), _c(eps, x))
    safe_x = E.select(not_tiny, x, E.add(E.mul(x, _c(0, x)), _c(eps, x)))
    slope = E.sub(bessel_i0e(safe_x), E.mul(y, E.add(E.sign(safe_x), E.div(_c(1, x), safe_x))))
    return E.select(not_tiny, slope, E.add(E.mul(x, _c(0, x)), _c(0.5, x)))


lgamma_p = E._unary("lgamma", FLOAT, REAL_FLOAT, lambda x, y: digamma(x))
digamma_p = E._unary("digamma", FLOAT, REAL_FLOAT, lambda x, y: trigamma(x))
erfc_p = E._unary("erfc", FLOAT, REAL_FLOAT, _erfc_deriv)
bessel_i1e_p = E._unary("bessel_i1e", FLOAT, REAL_FLOAT, _i1e_deriv)
bessel_i0e_p = E._unary(
    "bessel_i0e", FLOAT, REAL_FLOAT, lambda x, y: E.sub(bessel_i1e(x), E.mul(E.sign(x), y))
)

# --------------------------------------------------------------------------------------------------- binary


def _second_operand_only(
    prim: Primitive, partial_x: Any, partial_a: Any | None, refusal: str
) -> None:
    """JVP and VJP of ``f(a, x)`` from ``partial_x(a, x, out)`` (the derivative in x) and ``partial_a`` (in a), or,
    where ``partial_a`` is None, a TransformError saying ``refusal`` when a derivative in ``a`` is asked for."""

    def partial_in_a(a: Atom, x: Atom, out: Atom, mode: str) -> Atom:
        if partial_a is None:
            raise TransformError(refusal, mode, user_location())
        return partial_a(a, x, out)  # type: ignore[no-any-return]

    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
        (a, x), (ta, tx), out = primals, tangents, outs[0]
        total: MaybeZero = Zero(out.aval)
        if not is_zero(ta):
            total = E.mul(ta, partial_in_a(a, x, out, "jvp"))  # type: ignore[arg-type]
        if not is_zero(tx):
            total = E.add_tangents(total, E.mul(tx, partial_x(a, x, out)))  # type: ignore[arg-type]
        return (E._broadcast_tangent(total, out),)

    def partials(ct: Atom, a: Atom, x: Atom, out: Atom) -> tuple[Atom | None, Atom | None]:
        return None, E.mul(ct, partial_x(a, x, out))

    dense = E._binary_vjp(partials)

    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
        ct_a, ct_x = dense(cts, primals, outs, [False, wants[1]])
        if wants[0] and not isinstance(cts[0], Zero):
            a, x = primals
            ct_a = E._unbroadcast_scalar(E.mul(cts[0], partial_in_a(a, x, outs[0], "grad")), a)
        return ct_a, ct_x

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


zeta_p = E._binary("zeta", FLOAT, REAL_FLOAT)
igamma_p = E._binary("igamma", FLOAT, REAL_FLOAT)
igammac_p = E._binary("igammac", FLOAT, REAL_FLOAT)
igamma_grad_a_p = E._binary("igamma_grad_a", FLOAT, REAL_FLOAT)


def zeta(s: Atom, q: Atom) -> Atom:
    """The Hurwitz zeta function ``sum_k (k + q)^-s`` (``s > 1``)."""
    return bind(zeta_p, s, q)  # type: ignore[no-any-return]


def igamma(a: Atom, x: Atom) -> Atom:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    return bind(igamma_p, a, x)  # type: ignore[no-any-return]


def igammac(a: Atom, x: Atom) -> Atom:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return bind(igammac_p, a, x)  # type: ignore[no-any-return]


def igamma_grad_a(a: Atom, x: Atom) -> Atom:
    """``dP(a, x) / da``."""
    return bind(igamma_grad_a_p, a, x)  # type: ignore[no-any-return]


def _zeta_dq(s: Atom, q: Atom, out: Atom) -> Atom:
    return E.neg(E.mul(s, zeta(E.add(s, _c(1, s)), q)))


def horner(x: Atom, coefficients: Sequence[float]) -> Atom:
    """``sum_i coefficients[i] x^i``."""
    out = _c(coefficients[-1], x)
    for c in coefficients[-2::-1]:
        out = E.add(E.mul(out, x), _c(c, x))
    return out


def _single(x: Atom) -> bool:
    return x.aval.dtype.itemsize <= 4  # f32, and the half types (computed in their own precision in derivative rules)


def log1pmx_ratio(s: Atom) -> Atom:
    """``g(s) = -2 (log(1 + s) - s) / s²`` for ``s > -1``: smooth and positive, 1 at ``s = 0``, so that Temme's
    ``eta = s sqrt(g(s))`` and ``a (log(1 + s) - s) = -a s² g / 2`` keep every digit near ``s = 0``, where the
    difference cancels. There (``|t| < 1/3``, ``t = s / (2 + s)``, i.e. ``-1/2 < s < 1``) by ``log(1 + s) = 2
    atanh(t)``: ``g = (1 - t) - (1 - t)² t sum_j t^(2j) / (2j + 3)``; elsewhere directly (a cancellation of at most
    a factor 3.6)."""
    t = E.div(s, E.add(s, _c(2, s)))
    near = E.lt(E.abs(t), _c(1 / 3, t))
    t = E.select(near, t, _c(0, t))  # each branch is fed an input in its domain: no NaN reaches a gradient
    odd = horner(E.mul(t, t), [1 / (2 * j + 3) for j in range(8 if _single(s) else 17)])
    one_minus_t = E.sub(_c(1, t), t)
    series = E.sub(one_minus_t, E.mul(E.mul(E.mul(one_minus_t, one_minus_t), t), odd))
    far_s = E.select(near, _c(1, s), s)
    direct = E.div(E.mul(_c(-2, s), E.sub(bind(E.log1p_p, far_s), far_s)), E.mul(far_s, far_s))
    return E.select(near, series, direct)


def _log1pmx_of_ratio(x: Atom, a: Atom) -> Atom:
    """``log(x / a) - (x - a) / a``: through ``log1pmx_ratio`` from ``s = (x - a) / a`` (exact there), except below
    ``x = a / 2``, where ``s`` would have lost ``x``'s low digits (``x - a`` rounds to ``a``'s ulp): ``log(x / a) -
    s`` there (no cancellation: ``log(x / a) < 2.7 s``)."""
    s = E.div(E.sub(x, a), a)
    low = E.lt(s, _c(-0.5, s))
    near = E.mul(E.mul(_c(-0.5, s), E.mul(s, s)), log1pmx_ratio(E.select(low, _c(0, s), s)))
    return E.select(low, E.sub(_log_ratio(x, a), s), near)


def _log_ratio(x: Atom, a: Atom) -> Atom:
    """``log(x / a)``: ``log1p((x - a) / a)`` from ``x = a / 2`` up (exact near ``x = a``), ``log(x / a)`` below."""
    s = E.div(E.sub(x, a), a)
    low = E.lt(s, _c(-0.5, s))
    return E.select(low, E.log(E.div(x, a)), bind(E.log1p_p, E.select(low, _c(0, s), s)))


_STIRLING_LARGE = 10.0  # from here on, Stirling's series (7 terms) gives log Gamma to an absolute 1e-17
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_LOG_SQRT_2PI = 0.5 * float(np.log(2 * np.pi))


def _stirling_split(a: Atom) -> tuple[Atom, Atom, Atom, Atom]:
    """``(a >= 10, a there (else 10), a below (else 1), 1 / the former)``: each branch is fed an ``a`` in its range,
    so that neither leaks a NaN or inf into a gradient."""
    large = bind(E.ge_p, a, _c(_STIRLING_LARGE, a))
    big_a = E.select(large, a, _c(_STIRLING_LARGE, a))
    return large, big_a, E.select(large, _c(1, a), a), E.div(_c(1, a), big_a)


def log_gamma_prefactor(a: Atom, x: Atom) -> Atom:
    """``log(x^a e^-x / Gamma(a))``. For ``a >= 10`` as ``a (log(1 + s) - s) + log(a) / 2 - log(2 pi) / 2 -
    stirling(a)`` with ``s = (x - a) / a`` and Stirling's series ``stirling(a) = log Gamma(a) - (a - 1/2) log a + a -
    log(2 pi) / 2``: the terms of ``a log x - x - lgamma(a)``, each ~``a log a``, cancel to ~``a s²`` near ``x = a``
    and would lose ``a eps`` of the result (all of it in float32 by ``a = 1e6``)."""
    large, big_a, small_a, inverse = _stirling_split(a)
    tail = E.mul(inverse, horner(E.mul(inverse, inverse), _STIRLING))
    exponent = E.mul(big_a, _log1pmx_of_ratio(x, big_a))
    stirling = E.sub(E.add(exponent, E.sub(E.mul(_c(0.5, a), E.log(big_a)), _c(_LOG_SQRT_2PI, a))), tail)
    plain = E.sub(E.sub(E.mul(small_a, E.log(x)), x), lgamma(small_a))
    return E.select(large, stirling, plain)


_LOG_MINUS_DIGAMMA = (0.5, 1 / 12, 0, -1 / 120, 0, 1 / 252, 0, -1 / 240, 0, 1 / 132, 0, -691 / 32760, 0, 1 / 12)


def _log_minus_digamma(a: Atom) -> Atom:
    """``log(a) - digamma(a)``: for ``a >= 10`` its series ``1/(2a) + 1/(12a²) - 1/(120a⁴) + 1/(252a⁶) - ...``,
    where the difference of the two would lose ``log(a) eps``."""
    large, big_a, small_a, inverse = _stirling_split(a)
    series = E.mul(inverse, horner(inverse, _LOG_MINUS_DIGAMMA))
    return E.select(large, series, E.sub(E.log(small_a), digamma(small_a)))


def _gamma_density(a: Atom, x: Atom) -> Atom:
    """``x^(a-1) e^-x / Gamma(a)``, the derivative of P(a, x) in x, through logs (no overflow of the parts)."""
    return E.exp(E.sub(log_gamma_prefactor(a, x), E.log(x)))


def _density_dx(a: Atom, x: Atom, out: Atom) -> Atom:
    """``d/dx dP/da = d/da dP/dx = density (log x - digamma(a))``, as ``log(x / a) + (log a - digamma(a))``."""
    return E.mul(_gamma_density(a, x), E.add(_log_ratio(x, a), _log_minus_digamma(a)))


_SECOND_DERIVATIVE = "the second derivative of the incomplete gamma functions in a (igamma_grad_a in a) is not implemented"
_second_operand_only(zeta_p, _zeta_dq, None, "zeta's derivative with respect to s (its first operand) is not implemented")
_second_operand_only(igamma_p, lambda a, x, out: _gamma_density(a, x), lambda a, x, out: igamma_grad_a(a, x), "")
_second_operand_only(
    igammac_p,
    lambda a, x, out: E.neg(_gamma_density(a, x)),
    lambda a, x, out: E.neg(igamma_grad_a(a, x)),
    "",
)
_second_operand_only(igamma_grad_a_p, _density_dx, None, _SECOND_DERIVATIVE)

# -------------------------------------------------------------------------------------------------- ternary

betainc_p = E._binary("betainc", FLOAT, REAL_FLOAT)  # (the elementwise shape/batch rules take any arity)
_BETAINC_REFUSAL = "betainc's derivative with respect to a or b (its first two operands) is not implemented (as JAX)"


def betainc(a: Atom, b: Atom, x: Atom) -> Atom:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    return bind(betainc_p, a, b, x)  # type: ignore[no-any-return]


def _beta_density(a: Atom, b: Atom, x: Atom) -> Atom:
    """``x^(a-1) (1-x)^(b-1) / B(a, b)``, dI/dx, through logs."""
    log_beta = E.sub(E.add(lgamma(a), lgamma(b)), lgamma(E.add(a, b)))
    log_density = E.add(E.mul(E.sub(a, _c(1, a)), E.log(x)), E.mul(E.sub(b, _c(1, b)), bind(E.log1p_p, E.neg(x))))
    return E.exp(E.sub(log_density, log_beta))


@betainc_p.def_jvp
def _betainc_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    if not (is_zero(tangents[0]) and is_zero(tangents[1])):
        raise TransformError(_BETAINC_REFUSAL, "jvp", user_location())
    out, tx = outs[0], tangents[2]
    if is_zero(tx):
        return (Zero(out.aval),)
    return (E._broadcast_tangent(E.mul(tx, _beta_density(*primals)), out),)  # type: ignore[arg-type]


@betainc_p.def_vjp
def _betainc_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
    (ct,) = cts
    zeros = tuple(Zero(p.aval) for p in primals)
    if isinstance(ct, Zero):
        return zeros
    if wants[0] or wants[1]:
        raise TransformError(_BETAINC_REFUSAL, "grad", user_location())
    ct_x = E._unbroadcast_scalar(E.mul(ct, _beta_density(*primals)), primals[2]) if wants[2] else zeros[2]
    return zeros[0], zeros[1], ct_x
