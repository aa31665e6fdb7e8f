"""Elementwise primitives: arithmetic, math, comparisons, logic, select, convert, clamp.

All operands have one shape; rank-0 operands broadcast (the lowering widens them). Every primitive's rules are
next to it. Unary math functions are declared through ``_unary`` with their derivative ``d(x, y) -> dy/dx``:
the JVP multiplies a tangent by it and the VJP a cotangent, so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError
from ..ir import Atom, Aval, literal
from ..primitive import Primitive
from ..shapes import check_dtype, elementwise_result, same_dtype
from ..zeros import MaybeZero, Zero, is_zero
from . import structural as S

# Annotated: other families read these while the package's import cycle is still being resolved (mypy too).
FLOAT: frozenset[np.dtype[Any]] = dtypes.FLOATS
NUMERIC: frozenset[np.dtype[Any]] = dtypes.FLOATS | dtypes.INTEGERS
INTEGRAL: frozenset[np.dtype[Any]] = dtypes.INTEGERS | {dtypes.BOOL}
ANY: frozenset[np.dtype[Any]] = NUMERIC | {dtypes.BOOL}
# Complex numbers join only where the operation means the same for them; ordering, rounding, remainders and
# the real-only functions refuse them at their dtype rule (NumPy orders complex numbers lexicographically).
INEXACT: frozenset[np.dtype[Any]] = dtypes.INEXACT
ARITHMETIC: frozenset[np.dtype[Any]] = NUMERIC | dtypes.COMPLEX
EQUATABLE: frozenset[np.dtype[Any]] = ANY | dtypes.COMPLEX
ORDERED = "real numeric or bool (complex numbers have no order)"
REAL_FLOAT = "real floating-point"
INEXACT_WHAT = "floating-point or complex"

# ----------------------------------------------------------------------------------------------- helpers


def scalar(value: complex, like: Atom | Aval) -> Atom:  # (int, float and bool are complex to the checker)
    aval = like if isinstance(like, Aval) else like.aval
    return literal(value, aval.dtype)


def _shape_rule(name: str, allowed: frozenset[Any], what: str, out_dtype: np.dtype[Any] | None = None) -> Any:
    def rule(*avals: Aval) -> Aval:
        # Fast path, the common case: one allowed dtype and one type among the shaped operands. The general
        # checks below give the same result then; they run for everything else and produce the errors.
        first = avals[0]
        dtype = first.dtype
        if len(avals) < 3 and avals[-1] is first and dtype in allowed:  # one operand, or two of one type
            return first if out_dtype is None else first.with_dtype(out_dtype)
        if len(avals) == 2 and out_dtype is None:  # a rank-0 operand beside a shaped one of its dtype
            second = avals[1]
            if second.dtype is dtype and dtype in allowed:
                if not first.shape:
                    return second
                if not second.shape:
                    return first
        ref = None
        for aval in avals:
            if aval.dtype != dtype or dtype not in allowed:
                break
            if aval.shape:
                if ref is None:
                    ref = aval
                elif aval is not ref and aval._key != ref._key:
                    break
        else:
            same = ref if ref is not None else Aval((), dtype)
            return same.with_dtype(out_dtype) if out_dtype is not None else same
        for aval in avals:
            check_dtype(name, aval, allowed, what)
        same_dtype(name, avals)
        out = elementwise_result(name, avals)
        return out.with_dtype(out_dtype) if out_dtype is not None else out

    return rule


def batch_elementwise(prim: Primitive) -> Callable[..., Any]:
    """Align every batched operand on one batch axis; rank-0 unbatched operands broadcast by themselves."""

    def rule(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> tuple[Any, Any]:
        batched = [(a, d) for a, d in zip(args, dims) if d is not None]
        size = batched[0][0].aval.shape[batched[0][1]]
        example = max((S.unbatched_aval(a, d) for a, d in zip(args, dims)), key=lambda aval: aval.ndim)
        # Keep the batch axis where the first full-shape batched operand has it, so only operands that disagree
        # are moved (per-example scalars and unbatched operands are broadcast there anyway).
        full = [d for a, d in batched if a.aval.ndim - 1 == example.ndim]
        target = full[0] if full else 0
        aligned = [S.align_batch(a, d, target, size, example) for a, d in zip(args, dims)]
        out = bind(prim, *aligned, **params)
        if prim.multiple_results:
            return out, (target,) * len(out)
        return out, target

    return rule


def add_tangents(a: MaybeZero, b: MaybeZero) -> MaybeZero:
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    return add(a, b)  # type: ignore[arg-type]


def bilinear_jvp(prim: Primitive) -> Any:
    """The JVP rule of a primitive bilinear in its two operands (dot_general, convolution): ``f(t_lhs, rhs) +
    f(lhs, t_rhs)`` with the same params, symbolic zeros skipped; integer results have no tangent."""

    def rule(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
        lhs, rhs = primals
        tl, tr = tangents
        if not dtypes.is_inexact(outs[0].aval.dtype):
            return (Zero(outs[0].aval),)
        left: MaybeZero = Zero(outs[0].aval) if isinstance(tl, Zero) else bind(prim, tl, rhs, **params)
        right: MaybeZero = Zero(outs[0].aval) if isinstance(tr, Zero) else bind(prim, lhs, tr, **params)
        return (add_tangents(left, right),)

    return rule


def scale(t: MaybeZero, factor: Atom) -> MaybeZero:
    return t if is_zero(t) else mul(t, factor)  # type: ignore[arg-type]


def _binary(name: str, allowed: frozenset[Any], what: str) -> Primitive:
    prim = Primitive(name)
    prim.def_shape(_shape_rule(name, allowed, what))
    prim.def_batch(batch_elementwise(prim))
    return prim


# ----------------------------------------------------------------------------------------- arithmetic

add_p = _binary("add", ARITHMETIC, "numeric")
sub_p = _binary("sub", ARITHMETIC, "numeric")
mul_p = _binary("mul", ARITHMETIC, "numeric")
div_p = _binary("div", ARITHMETIC, "numeric")
rem_p = _binary("rem", NUMERIC, "real numeric")
pow_p = _binary("pow", INEXACT, "floating-point or complex")
max_p = _binary("max", ANY, ORDERED)
min_p = _binary("min", ANY, ORDERED)


def add(x: Atom, y: Atom) -> Atom:
    return bind(add_p, x, y)  # type: ignore[no-any-return]


def sub(x: Atom, y: Atom) -> Atom:
    return bind(sub_p, x, y)  # type: ignore[no-any-return]


def mul(x: Atom, y: Atom) -> Atom:
    return bind(mul_p, x, y)  # type: ignore[no-any-return]


def div(x: Atom, y: Atom) -> Atom:
    return bind(div_p, x, y)  # type: ignore[no-any-return]


def rem(x: Atom, y: Atom) -> Atom:
    return bind(rem_p, x, y)  # type: ignore[no-any-return]


def pow(x: Atom, y: Atom) -> Atom:  # noqa: A001 - the primitive's name
    return bind(pow_p, x, y)  # type: ignore[no-any-return]


def maximum(x: Atom, y: Atom) -> Atom:
    return bind(max_p, x, y)  # type: ignore[no-any-return]


def minimum(x: Atom, y: Atom) -> Atom:
    return bind(min_p, x, y)  # type: ignore[no-any-return]


def _unbroadcast_scalar(ct: Atom, operand: Atom) -> Atom:
    """Cotangent of a rank-0 operand that was broadcast against a shaped one: sum it."""
    if not operand.aval.shape and ct.aval.shape:
        from . import reductions as R

        return R.reduce_sum(ct, tuple(range(ct.aval.ndim)))
    return ct


def _binary_vjp(
    partials: Callable[[Atom, Atom, Atom, Atom], tuple[Atom | None, Atom | None]],
) -> Callable[..., Any]:
    """VJP from a function giving each operand's cotangent contribution for a dense cotangent."""

    def rule(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
        (ct,) = cts
        if isinstance(ct, Zero):
            return (Zero(primals[0].aval), Zero(primals[1].aval))
        x, y = primals
        gx, gy = partials(ct, x, y, outs[0])
        # ``_unbroadcast_scalar`` only where an operand is rank 0 (operands mostly have the result's shape)
        return (
            (gx if x.aval.shape else _unbroadcast_scalar(gx, x)) if (wants[0] and gx is not None) else Zero(x.aval),
            (gy if y.aval.shape else _unbroadcast_scalar(gy, y)) if (wants[1] and gy is not None) else Zero(y.aval),
        )

    return rule


@add_p.def_jvp
def _add_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Any) -> Any:
    return (_broadcast_tangent(add_tangents(*tangents), outs[0]),)


add_p.def_vjp(_binary_vjp(lambda ct, x, y, out: (ct, ct)))


@sub_p.def_jvp
def _sub_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Any) -> Any:
    tx, ty = tangents
    return (_broadcast_tangent(add_tangents(tx, ty if is_zero(ty) else neg(ty)), outs[0]),)  # type: ignore[arg-type]


sub_p.def_vjp(_binary_vjp(lambda ct, x, y, out: (ct, neg(ct))))


@mul_p.def_jvp
def _mul_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Any) -> Any:
    x, y = primals
    tx, ty = tangents
    return (_broadcast_tangent(add_tangents(scale(tx, y), scale(ty, x)), outs[0]),)


mul_p.def_vjp(_binary_vjp(lambda ct, x, y, out: (mul(ct, y), mul(ct, x))))


@div_p.def_jvp
def _div_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    x, y = primals
    tx, ty = tangents
    out = outs[0]
    num = add_tangents(tx, neg(mul(ty, out)) if not is_zero(ty) else Zero(out.aval))  # type: ignore[arg-type]
    return (_broadcast_tangent(num if is_zero(num) else div(num, y), out),)  # type: ignore[arg-type]


div_p.def_vjp(_binary_vjp(lambda ct, x, y, out: (div(ct, y), neg(div(mul(ct, out), y)))))


def _trunc_quotient(x: Atom, y: Atom) -> Atom:
    q = div(x, y)
    return mul(sign(q), floor(abs(q)))


@rem_p.def_jvp
def _rem_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    x, y = primals
    tx, ty = tangents
    if is_zero(ty):
        return (_broadcast_tangent(tx, outs[0]),)
    return (_broadcast_tangent(add_tangents(tx, neg(mul(ty, _trunc_quotient(x, y)))), outs[0]),)  # type: ignore[arg-type]


rem_p.def_vjp(_binary_vjp(lambda ct, x, y, out: (ct, neg(mul(ct, _trunc_quotient(x, y))))))


def _safe_log(x: Atom) -> Atom:
    return log(select(eq(x, scalar(0, x)), S.full_like(x, 1), x))


@pow_p.def_jvp
def _pow_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    x, y = primals
    tx, ty = tangents
    out = outs[0]
    dx = scale(tx, mul(y, pow(x, sub(y, scalar(1, y)))))
    dy = scale(ty, mul(_safe_log(_as_shaped(x, out)), out))
    return (_broadcast_tangent(add_tangents(dx, dy), out),)


pow_p.def_vjp(
    _binary_vjp(
        lambda ct, x, y, out: (
            mul(ct, mul(y, pow(x, sub(y, scalar(1, y))))),
            mul(ct, mul(_safe_log(_as_shaped(x, out)), out)),
        )
    )
)


def _as_shaped(x: Atom, like: Atom) -> Atom:
    return S.broadcast_to(x, like.aval) if x.aval.ndim == 0 and like.aval.ndim > 0 else x


def _broadcast_tangent(t: MaybeZero, out: Atom) -> MaybeZero:
    """A tangent built only from rank-0 operands must still have the output's shape."""
    if isinstance(t, Zero):
        return Zero(out.aval)
    return _as_shaped(t, out)


def _max_min_rule() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """max/min: the derivative follows the operand equal to the result; ties split evenly, and where the result
    is a NaN that neither operand equals (one of them is NaN) neither gets any, as in JAX."""

    def weights(x: Atom, y: Atom, out: Atom) -> tuple[Atom, Atom]:
        x_won, y_won = eq(_as_shaped(x, out), out), eq(_as_shaped(y, out), out)
        one, half, zero = S.full_like(out, 1), S.full_like(out, 0.5), S.full_like(out, 0)
        return select(x_won, select(y_won, half, one), zero), select(y_won, select(x_won, half, one), zero)

    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
        out = outs[0]
        if not dtypes.is_float(out.aval.dtype):  # (complex operands are refused by the dtype rule)
            return (Zero(out.aval),)
        wx, wy = weights(primals[0], primals[1], out)
        tx = tangents[0] if is_zero(tangents[0]) else _as_shaped(tangents[0], out)  # type: ignore[arg-type]
        ty = tangents[1] if is_zero(tangents[1]) else _as_shaped(tangents[1], out)  # type: ignore[arg-type]
        return (_broadcast_tangent(add_tangents(scale(tx, wx), scale(ty, wy)), out),)

    def partials(ct: Atom, x: Atom, y: Atom, out: Atom) -> tuple[Atom, Atom]:
        wx, wy = weights(x, y, out)
        return mul(ct, wx), mul(ct, wy)

    return jvp, _binary_vjp(partials)


max_p.jvp, max_p.vjp = min_p.jvp, min_p.vjp = _max_min_rule()  # both follow the operand equal to the result

atan2_p = _binary("atan2", FLOAT, REAL_FLOAT)


def atan2(x: Atom, y: Atom) -> Atom:
    """The angle of the point ``(y, x)``: ``arctan(x / y)`` in the right quadrant (NumPy's ``arctan2(x, y)``)."""
    return bind(atan2_p, x, y)  # type: ignore[no-any-return]


def _atan2_partials(x: Atom, y: Atom, out: Atom) -> tuple[Atom, Atom]:
    """``d/dx = y / (x² + y²)`` and ``d/dy = -x / (x² + y²)``, at the output's shape."""
    xs, ys = _as_shaped(x, out), _as_shaped(y, out)
    norm = add(mul(xs, xs), mul(ys, ys))
    return div(ys, norm), neg(div(xs, norm))


@atan2_p.def_jvp
def _atan2_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    out = outs[0]
    wx, wy = _atan2_partials(primals[0], primals[1], out)
    tx = tangents[0] if is_zero(tangents[0]) else _as_shaped(tangents[0], out)  # type: ignore[arg-type]
    ty = tangents[1] if is_zero(tangents[1]) else _as_shaped(tangents[1], out)  # type: ignore[arg-type]
    return (_broadcast_tangent(add_tangents(scale(tx, wx), scale(ty, wy)), out),)


def _atan2_vjp_partials(ct: Atom, x: Atom, y: Atom, out: Atom) -> tuple[Atom, Atom]:
    wx, wy = _atan2_partials(x, y, out)
    return mul(ct, wx), mul(ct, wy)


atan2_p.def_vjp(_binary_vjp(_atan2_vjp_partials))

# ------------------------------------------------------------------------------------------ unary math


def _unary(name: str, allowed: frozenset[Any], what: str, deriv: Callable[[Atom, Atom], Atom] | None) -> Primitive:
    """A unary elementwise primitive; ``deriv(x, y)`` is dy/dx, or None for piecewise-constant functions."""
    prim = Primitive(name)
    prim.def_shape(_shape_rule(name, allowed, what))
    prim.def_batch(batch_elementwise(prim))

    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
        (t,) = tangents
        if deriv is None or is_zero(t) or not dtypes.is_inexact(outs[0].aval.dtype):
            return (Zero(outs[0].aval),)
        return (mul(t, deriv(primals[0], outs[0])),)  # type: ignore[arg-type]

    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
        (ct,) = cts
        # (is_zero, is_inexact). A holomorphic derivative is a complex multiplication, its own transpose.
        if deriv is None or isinstance(ct, Zero) or outs[0].aval.dtype not in INEXACT:
            return (Zero(primals[0].aval),)
        return (mul(ct, deriv(primals[0], outs[0])),)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    return prim


neg_p = _unary("neg", ARITHMETIC, "numeric", None)  # linear: its rules below negate the tangent or cotangent


@neg_p.def_jvp
def _neg_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    (t,) = tangents
    if is_zero(t) or not dtypes.is_inexact(outs[0].aval.dtype):
        return (Zero(outs[0].aval),)
    return (neg(t),)  # type: ignore[arg-type]


@neg_p.def_vjp
def _neg_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
    (ct,) = cts
    if isinstance(ct, Zero) or outs[0].aval.dtype not in INEXACT:
        return (Zero(primals[0].aval),)
    return (neg(ct),)


# Rank-0 constants broadcast inside ``sub``, ``div`` and ``mul`` (one equation where ``full_like`` would add a
# broadcast_in_dim); the result takes the shaped operand's shape and dim names either way.
exp_p = _unary("exp", INEXACT, INEXACT_WHAT, lambda x, y: y)
log_p = _unary("log", INEXACT, INEXACT_WHAT, lambda x, y: div(scalar(1, x), x))
log1p_p = _unary("log1p", INEXACT, INEXACT_WHAT, lambda x, y: div(scalar(1, x), add(x, scalar(1, x))))
expm1_p = _unary("expm1", INEXACT, INEXACT_WHAT, lambda x, y: exp(x))  # not y + 1: that underflows to 0
tanh_p = _unary("tanh", INEXACT, INEXACT_WHAT, lambda x, y: sub(scalar(1, y), mul(y, y)))
logistic_p = _unary("logistic", INEXACT, INEXACT_WHAT, lambda x, y: mul(y, sub(scalar(1, y), y)))
sin_p = _unary("sin", INEXACT, INEXACT_WHAT, lambda x, y: cos(x))
cos_p = _unary("cos", INEXACT, INEXACT_WHAT, lambda x, y: neg(sin(x)))
sqrt_p = _unary("sqrt", INEXACT, INEXACT_WHAT, lambda x, y: div(scalar(0.5, y), y))
rsqrt_p = _unary("rsqrt", INEXACT, INEXACT_WHAT, lambda x, y: mul(scalar(-0.5, y), div(y, x)))
abs_p = _unary("abs", ARITHMETIC, "numeric", lambda x, y: sign(x))  # complex |z|: real, its rules below


@abs_p.def_shape
def _abs_shape(x: Aval) -> Aval:
    check_dtype("abs", x, ARITHMETIC, "numeric")
    return x.with_dtype(dtypes.real_dtype(x.dtype)) if x.dtype in dtypes.COMPLEX else x


def _complex_derivatives(prim: Primitive, rules: str) -> None:
    """Complex operands of the unary ``prim`` take complex_parts' ``<rules>_jvp(z, t, out)`` and
    ``<rules>_vjp(z, ct, out)``; real ones keep the rules ``prim`` has (complex_parts builds on this module, so
    it is imported when a rule first runs)."""
    real_jvp, real_vjp = prim.jvp, prim.vjp

    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
        (z,), (t,) = primals, tangents
        if z.aval.dtype not in dtypes.COMPLEX:
            return real_jvp(primals, tangents, outs)  # type: ignore[misc]
        from . import complex_parts

        return (Zero(outs[0].aval) if is_zero(t) else getattr(complex_parts, f"{rules}_jvp")(z, t, outs[0]),)

    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
        (z,), (ct,) = primals, cts
        if z.aval.dtype not in dtypes.COMPLEX:
            return real_vjp(cts, primals, outs, wants)  # type: ignore[misc]
        from . import complex_parts

        return (Zero(z.aval) if isinstance(ct, Zero) else getattr(complex_parts, f"{rules}_vjp")(z, ct, outs[0]),)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


_complex_derivatives(abs_p, "abs")
# sign of a complex z is z / |z| (0 at 0): not piecewise constant, so complex operands get its derivative (JAX
# gives it none); real sign keeps a zero derivative.
sign_p = _unary("sign", ARITHMETIC, "numeric", None)
_complex_derivatives(sign_p, "sign")
floor_p = _unary("floor", FLOAT, REAL_FLOAT, None)
ceil_p = _unary("ceil", FLOAT, REAL_FLOAT, None)
round_p = _unary("round", FLOAT, REAL_FLOAT, None)  # half to even, as NumPy
# 1 / (3 y²) as y⁻² / 3: differentiating ``mul(y, y)`` at 0 would meet the infinite outer slope as ``inf * 0``.
cbrt_p = _unary("cbrt", FLOAT, REAL_FLOAT, lambda x, y: mul(integer_pow(y, -2), scalar(1 / 3, y)))
# erf and its inverse: XLA expands them (CHLO ops) into rational approximations per dtype. Measured against SciPy:
# erf within 4.3 ulps in f32 and 2 in f64; erf_inv within 7 ulps in f32 and 21 in f64 on |x| <= 0.999, but
# only to ~1e-10 relative in f64 as |x| -> 1 (1 - 1e-8: 5e5 ulps). A composition of other primitives would need
# many more equations to do as well in f64.
erf_p = _unary(
    "erf", FLOAT, REAL_FLOAT, lambda x, y: mul(scalar(2 / np.sqrt(np.pi), x), exp(neg(mul(x, x))))
)
erf_inv_p = _unary("erf_inv", FLOAT, REAL_FLOAT, lambda x, y: mul(scalar(np.sqrt(np.pi) / 2, y), exp(mul(y, y))))


def neg(x: Atom) -> Atom:
    return bind(neg_p, x)  # type: ignore[no-any-return]


def exp(x: Atom) -> Atom:
    return bind(exp_p, x)  # type: ignore[no-any-return]


def log(x: Atom) -> Atom:
    return bind(log_p, x)  # type: ignore[no-any-return]


def sin(x: Atom) -> Atom:
    return bind(sin_p, x)  # type: ignore[no-any-return]


def cos(x: Atom) -> Atom:
    return bind(cos_p, x)  # type: ignore[no-any-return]


def abs(x: Atom) -> Atom:  # noqa: A001 - the primitive's name
    return bind(abs_p, x)  # type: ignore[no-any-return]


def sign(x: Atom) -> Atom:
    return bind(sign_p, x)  # type: ignore[no-any-return]


def floor(x: Atom) -> Atom:
    return bind(floor_p, x)  # type: ignore[no-any-return]


def cbrt(x: Atom) -> Atom:
    return bind(cbrt_p, x)  # type: ignore[no-any-return]


def erf(x: Atom) -> Atom:
    return bind(erf_p, x)  # type: ignore[no-any-return]


def erf_inv(x: Atom) -> Atom:
    return bind(erf_inv_p, x)  # type: ignore[no-any-return]


# integer_pow: x ** n for a static integer n (what ``x ** 2`` stages to).
integer_pow_p = Primitive("integer_pow")


@integer_pow_p.def_shape
def _integer_pow_shape(x: Aval, *, y: int) -> Aval:
    check_dtype("integer_pow", x, ARITHMETIC, "numeric")
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise DTypeError(f"negative exponent {y} needs a floating-point or complex operand, got {x}", "integer_pow")
    return x


def integer_pow(x: Atom, y: int) -> Atom:
    return bind(integer_pow_p, x, y=y)  # type: ignore[no-any-return]


def _integer_pow_deriv(x: Atom, y: int) -> Atom:
    if y == 0:
        return S.full_like(x, 0)
    if y == 1:
        return S.full_like(x, 1)
    return mul(S.full_like(x, y), x if y == 2 else integer_pow(x, y - 1))


@integer_pow_p.def_jvp
def _integer_pow_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, y: int) -> Any:
    (t,) = tangents
    if is_zero(t) or not dtypes.is_inexact(outs[0].aval.dtype):
        return (Zero(outs[0].aval),)
    return (mul(t, _integer_pow_deriv(primals[0], y)),)  # type: ignore[arg-type]


@integer_pow_p.def_vjp
def _integer_pow_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, y: int) -> Any:
    (ct,) = cts
    if is_zero(ct) or not dtypes.is_inexact(primals[0].aval.dtype):
        return (Zero(primals[0].aval),)
    return (mul(ct, _integer_pow_deriv(primals[0], y)),)  # type: ignore[arg-type]


integer_pow_p.def_batch(batch_elementwise(integer_pow_p))

# ------------------------------------------------------------------------------- comparisons and logic


def _no_tangent_jvp(primals: Any, tangents: Any, outs: Sequence[Atom], **params: Any) -> Any:
    return tuple(Zero(o.aval) for o in outs)


def _no_cotangent_vjp(cts: Any, primals: Sequence[Atom], outs: Any, wants: Any, **params: Any) -> Any:
    return tuple(Zero(p.aval) for p in primals)


def _nondifferentiable(name: str, allowed: frozenset[Any], what: str, out_bool: bool) -> Primitive:
    prim = Primitive(name, differentiable=False)
    prim.def_shape(_shape_rule(name, allowed, what, dtypes.BOOL if out_bool else None))
    prim.def_jvp(_no_tangent_jvp)
    prim.def_vjp(_no_cotangent_vjp)
    prim.def_batch(batch_elementwise(prim))
    return prim


eq_p = _nondifferentiable("eq", EQUATABLE, "numeric or bool", True)
ne_p = _nondifferentiable("ne", EQUATABLE, "numeric or bool", True)
lt_p = _nondifferentiable("lt", ANY, ORDERED, True)
le_p = _nondifferentiable("le", ANY, ORDERED, True)
gt_p = _nondifferentiable("gt", ANY, ORDERED, True)
ge_p = _nondifferentiable("ge", ANY, ORDERED, True)
and_p = _nondifferentiable("and", INTEGRAL, "integer or bool", False)
or_p = _nondifferentiable("or", INTEGRAL, "integer or bool", False)
xor_p = _nondifferentiable("xor", INTEGRAL, "integer or bool", False)
not_p = _nondifferentiable("not", INTEGRAL, "integer or bool", False)
is_finite_p = _nondifferentiable("is_finite", FLOAT, REAL_FLOAT, True)
shift_left_p = _nondifferentiable("shift_left", dtypes.INTEGERS, "integer", False)
shift_right_logical_p = _nondifferentiable("shift_right_logical", dtypes.INTEGERS, "integer", False)


def eq(x: Atom, y: Atom) -> Atom:
    return bind(eq_p, x, y)  # type: ignore[no-any-return]


def lt(x: Atom, y: Atom) -> Atom:
    return bind(lt_p, x, y)  # type: ignore[no-any-return]


def gt(x: Atom, y: Atom) -> Atom:
    return bind(gt_p, x, y)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ select

select_p = Primitive("select")


@select_p.def_shape
def _select_shape(pred: Aval, on_true: Aval, on_false: Aval) -> Aval:
    if pred.dtype != dtypes.BOOL:
        raise DTypeError(f"predicate must be bool, got {pred}", "select")
    same_dtype("select", (on_true, on_false))
    out = elementwise_result("select", (pred, on_true, on_false))
    return out.with_dtype(on_true.dtype)


def select(pred: Atom, on_true: Atom, on_false: Atom) -> Atom:
    return bind(select_p, pred, on_true, on_false)  # type: ignore[no-any-return]


@select_p.def_jvp
def _select_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    pred = primals[0]
    _, tt, tf = tangents
    out = outs[0]
    if (is_zero(tt) and is_zero(tf)) or not dtypes.is_inexact(out.aval.dtype):
        return (Zero(out.aval),)
    return (select(pred, _as_shaped(S.instantiate(tt), out), _as_shaped(S.instantiate(tf), out)),)


@select_p.def_vjp
def _select_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
    (ct,) = cts
    pred, on_true, on_false = primals
    if isinstance(ct, Zero) or not dtypes.is_inexact(outs[0].aval.dtype):
        return (None, Zero(on_true.aval), Zero(on_false.aval))
    zero = S.full_like(ct, 0)
    ct_true = _unbroadcast_scalar(select(pred, ct, zero), on_true) if wants[1] else Zero(on_true.aval)
    ct_false = _unbroadcast_scalar(select(pred, zero, ct), on_false) if wants[2] else Zero(on_false.aval)
    return (None, ct_true, ct_false)


select_p.def_batch(batch_elementwise(select_p))

# -------------------------------------------------------------------------------------------------- clamp

clamp_p = Primitive("clamp")


@clamp_p.def_shape
def _clamp_shape(lo: Aval, x: Aval, hi: Aval) -> Aval:
    check_dtype("clamp", x, NUMERIC, ORDERED)
    same_dtype("clamp", (lo, x, hi))
    for bound in (lo, hi):
        if bound.ndim not in (0, x.ndim) or (bound.ndim and bound.shape != x.shape):
            raise DTypeError(f"bounds must be scalars or have the operand's shape: {lo}, {x}, {hi}", "clamp")
    return elementwise_result("clamp", (lo, x, hi)).with_dtype(x.dtype)


def clamp(lo: Atom, x: Atom, hi: Atom) -> Atom:
    return bind(clamp_p, lo, x, hi)  # type: ignore[no-any-return]


def _clamp_masks(lo: Atom, x: Atom, hi: Atom, out: Atom) -> tuple[Atom, Atom, Atom]:
    xs, los = _as_shaped(x, out), _as_shaped(lo, out)
    # clamp is min(max(x, lo), hi): where lo > hi the result is hi, even for x below lo.
    above = gt(maximum(xs, los), _as_shaped(hi, out))
    below = lt(xs, los)
    one, zero = S.full_like(out, 1), S.full_like(out, 0)
    w_hi = select(above, one, zero)
    w_lo = select(above, zero, select(below, one, zero))
    w_x = sub(sub(one, w_lo), w_hi)
    return w_lo, w_x, w_hi


@clamp_p.def_jvp
def _clamp_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    out = outs[0]
    if not dtypes.is_float(out.aval.dtype):
        return (Zero(out.aval),)
    weights = _clamp_masks(primals[0], primals[1], primals[2], out)
    total: MaybeZero = Zero(out.aval)
    for t, w in zip(tangents, weights):
        if not is_zero(t):
            total = add_tangents(total, mul(_as_shaped(t, out), w))  # type: ignore[arg-type]
    return (total,)


@clamp_p.def_vjp
def _clamp_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
    (ct,) = cts
    out = outs[0]
    if isinstance(ct, Zero) or not dtypes.is_float(out.aval.dtype):
        return tuple(Zero(p.aval) for p in primals)
    weights = _clamp_masks(primals[0], primals[1], primals[2], out)
    return tuple(
        _unbroadcast_scalar(mul(ct, w), p) if want else Zero(p.aval) for p, w, want in zip(primals, weights, wants)
    )


clamp_p.def_batch(batch_elementwise(clamp_p))

# ------------------------------------------------------------------------------------------------ convert

convert_p = Primitive("convert")


@convert_p.def_shape
def _convert_shape(x: Aval, *, new_dtype: np.dtype[Any]) -> Aval:
    if x.dtype in dtypes.COMPLEX and new_dtype not in dtypes.COMPLEX and new_dtype != dtypes.BOOL:
        # NumPy drops the imaginary part with a warning; a silent loss here, so the user says which part.
        raise DTypeError(f"cannot convert complex {x} to {dtypes.short_name(new_dtype)}: take .real, .imag or abs() "
                         "first", "convert")
    return x.with_dtype(new_dtype)


def convert(x: Atom, new_dtype: np.dtype[Any]) -> Atom:
    if x.aval.dtype == new_dtype:
        return x
    return bind(convert_p, x, new_dtype=new_dtype)  # type: ignore[no-any-return]


@convert_p.def_jvp
def _convert_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, new_dtype: Any) -> Any:
    (t,) = tangents
    if is_zero(t) or not (dtypes.is_inexact(new_dtype) and dtypes.is_inexact(primals[0].aval.dtype)):
        return (Zero(outs[0].aval),)
    return (convert(t, new_dtype),)  # type: ignore[arg-type]


@convert_p.def_vjp
def _convert_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, new_dtype: Any) -> Any:
    (ct,) = cts
    x = primals[0]
    if is_zero(ct) or not (dtypes.is_inexact(new_dtype) and dtypes.is_inexact(x.aval.dtype)):
        return (Zero(x.aval),)
    if new_dtype in dtypes.COMPLEX and x.aval.dtype not in dtypes.COMPLEX:  # real -> complex: Re(ct t) = Re(ct) t
        from .complex_parts import real

        ct = real(ct)  # type: ignore[arg-type]
    return (convert(ct, x.aval.dtype),)  # type: ignore[arg-type]


convert_p.def_batch(batch_elementwise(convert_p))


# bitcast_convert changes shapes when widths differ: its own module (imported here, where its users find it).
from .bitcast import bitcast_convert as bitcast_convert  # noqa: E402
from .bitcast import bitcast_convert_p as bitcast_convert_p  # noqa: E402
