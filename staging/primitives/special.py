"""Special functions as primitives: ``lgamma``, ``digamma``, ``zeta``, ``igamma``/``igammac``, ``bessel_i0e``,
``bessel_i1e``, ``erfc`` (real floating-point operands only: f16, bf16, f32, f64; complex and integer operands are a
DTypeError, as for ``erf``).

Unary ones are declared through elementwise's ``_unary`` with their derivative. The binary ones:

- ``zeta(s, q)`` (Hurwitz): ``d/dq = -s zeta(s + 1, q)``; a derivative with respect to ``s`` is a TransformError (as
  JAX).
- ``igamma(a, x)`` / ``igammac(a, x)``: the regularized lower / upper incomplete gamma functions P and Q.
  ``d/dx = ±x^(a-1) e^-x / Gamma(a)``; with respect to ``a`` the derivative is ``±igamma_grad_a(a, x)``, a primitive
  of its own (JAX's), whose own derivative with respect to ``a`` (a second derivative) is a TransformError.
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
    "bessel_i0e", "bessel_i1e", "betainc", "digamma", "erfc", "igamma", "igamma_grad_a", "igammac", "lgamma", "trigamma",
    "zeta",
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


def _gamma_density(a: Atom, x: Atom) -> Atom:
    """``x^(a-1) e^-x / Gamma(a)``, the derivative of P(a, x) in x, through logs (no overflow of the parts)."""
    log_x = E.log(x)
    return E.exp(E.sub(E.sub(E.mul(E.sub(a, _c(1, a)), log_x), x), lgamma(a)))


def _density_dx(a: Atom, x: Atom, out: Atom) -> Atom:
    """``d/dx dP/da = d/da dP/dx = density (log x - digamma(a))``."""
    return E.mul(_gamma_density(a, x), E.sub(E.log(x), digamma(a)))


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
