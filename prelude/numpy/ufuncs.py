"""Elementwise functions with NumPy's names: arithmetic, transcendental, comparison and logic.

Operands broadcast under tensorstage's policy (see ``_core.broadcast_shapes``); array dtypes never promote,
Python scalars adopt the array's dtype.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, Inexact, bool_, c64, c128, f32, f64, to_numpy
from ...op_signatures import Binary, Comparison, as_arithmetic, as_binary, as_comparison, as_where
from ...shape_typing import FloatUnary
from ...staging import dtypes as _dt
from ...staging.builder import _STACK, bind
from ...staging.errors import StagingError
from ...staging.ir import Atom, literal
from ...staging.primitive import Primitive
from ...staging.source import user_location
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives.autodiff import stop_gradient
from ...tensor import Tensor, Traced
from .mathfuncs import _finfo, _in_f32, float_layout
from ._core import (
    _named, as_tensor, atom, broadcast_atoms, dtype_error, elementwise_operands, float_operand, inexact_operand, op,
    result_dtype, wrap,
)

DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
FT = TypeVar("FT", bound=Floating)
IT = TypeVar("IT", bound=Inexact)
Shape = TypeVarTuple("Shape")
S = TypeVarTuple("S")
Operand = Tensor[Any, Unpack[tuple[Any, ...]]] | int | float | bool


_PY_NUMBERS = (float, int)  # not bool: a Python bool beside a float tensor takes the general path


def _binary(name: str, prim: Primitive, x: Any, y: Any) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    if type(x) is Traced and type(y) is Traced:  # fast path: strong staged operands of one type, as they are
        a, b = x.atom, y.atom
        if a.aval is b.aval or a.aval._key == b.aval._key:
            return wrap(bind(prim, a, b))
        if a.aval.dtype == b.aval.dtype:  # one dtype (``h + bias``): what elementwise_operands gives then
            a, b = broadcast_atoms(name, [a, b])
            return wrap(bind(prim, a, b))
    elif type(x) is Traced and type(y) in _PY_NUMBERS and (dtype := x.atom.aval.dtype) in _dt.FLOATS:
        # Fast path: a float tensor and a Python number (``lr * g``), which adopts the tensor's dtype and stays a
        # rank-0 operand: what elementwise_operands gives, without its general checks. (``atom.aval``, not the
        # ``aval`` property, and ``in FLOATS`` for ``is_float``: this runs per operator staged.)
        return wrap(bind(prim, x.atom, _number(y, dtype)))
    elif type(y) is Traced and type(x) in _PY_NUMBERS and (dtype := y.atom.aval.dtype) in _dt.FLOATS:
        return wrap(bind(prim, _number(x, dtype), y.atom))
    a, b = elementwise_operands(name, x, y)
    return wrap(bind(prim, a, b))


def _number(value: float | int, dtype: Any) -> Atom:
    """``atom(value, dtype)`` for a Python int or float beside a float tensor of ``dtype``."""
    try:
        return literal(value, dtype)
    except OverflowError:
        return atom(value, dtype)  # raises the message


def _unary(prim: Primitive, x: Any) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return wrap(bind(prim, as_tensor(x).atom))


# ----------------------------------------------------------------------------------------------- arithmetic


@as_arithmetic
@op
def add(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("add", E.add_p, x, y)


@as_arithmetic
@op
def subtract(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("subtract", E.sub_p, x, y)


@as_arithmetic
@op
def multiply(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("multiply", E.mul_p, x, y)


@as_arithmetic
@op
def true_divide(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    a, b = elementwise_operands("divide", x, y)
    if not _dt.is_inexact(a.aval.dtype):
        raise dtype_error(
            "divide",
            f"true division of {_dt.short_name(a.aval.dtype)} operands: use // for integer division or convert "
            "with .astype(f32) first (tensorstage never changes dtypes implicitly)",
        )
    return wrap(E.div(a, b))


divide = true_divide


@as_binary
@op
def floor_divide(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """Floor division, as NumPy: integer division by zero gives 0 (without NumPy's warning) and ``min // -1``
    wraps; float division by zero gives ±inf or NaN."""
    a, b = elementwise_operands("floor_divide", x, y)
    _refuse_complex("floor_divide", a)
    if _dt.is_float(a.aval.dtype):
        # Piecewise constant: no derivative (as JAX), where the formula's division would pass one through at 0.
        return wrap(stop_gradient(_in_f32(_float_floor_divide, a, b)))  # halves in f32, rounded once: NumPy's
    quotient = E.div(a, b)  # truncates toward zero
    if not _dt.is_signed(a.aval.dtype):
        return wrap(_zero_where_divisor_zero(b, quotient))
    remainder = E.rem(a, b)
    zero = E.scalar(0, a)
    inexact = bind(E.ne_p, remainder, zero)
    signs_differ = bind(E.ne_p, E.lt(remainder, zero), E.lt(b, zero))
    adjust = bind(E.and_p, inexact, signs_differ)
    return wrap(_zero_where_divisor_zero(b, E.select(adjust, E.sub(quotient, E.scalar(1, a)), quotient)))


def _float_floor_divide(a: Atom, b: Atom) -> Atom:
    """NumPy's float floor division: from the exact remainder, so ``x == (x // y) * y + x % y`` holds as closely
    as it can (``floor(x / y)`` rounds first: it gives 10 for ``1.0 // 0.1`` and -0 for ``-1.0 // inf``)."""
    one, half, zero = E.scalar(1, a), E.scalar(0.5, a), E.scalar(0, a)
    quotient = E.div(a, b)
    mod = E.rem(a, b)  # the sign of the dividend, exact
    div = E.div(E.sub(a, mod), b)
    signs_differ = bind(E.ne_p, E.lt(b, zero), E.lt(mod, zero))
    div = E.select(bind(E.and_p, bind(E.ne_p, mod, zero), signs_differ), E.sub(div, one), div)
    floored = E.floor(div)
    floored = E.select(E.gt(E.sub(div, floored), half), E.add(floored, one), floored)
    floored = E.select(bind(E.eq_p, div, zero), E.mul(quotient, zero), floored)  # a zero with the quotient's sign
    return E.select(bind(E.eq_p, b, zero), quotient, floored)


def _zero_where_divisor_zero(divisor: Atom, out: Atom) -> Atom:
    """Integer ``//`` and ``%`` by zero give 0 as in NumPy (XLA gives -1 or all ones, and the dividend)."""
    return E.select(bind(E.eq_p, divisor, E.scalar(0, divisor)), E.scalar(0, out), out)


@as_binary
@op
def remainder(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """Python/NumPy modulo: the result has the sign of the divisor (a zero result keeps the dividend's sign, as
    in JAX; NumPy gives it the divisor's). Integer ``x % 0`` is 0, as NumPy."""
    a, b = elementwise_operands("remainder", x, y)
    r = E.rem(a, b)
    if _dt.is_integer(a.aval.dtype) and not _dt.is_signed(a.aval.dtype):
        return wrap(_zero_where_divisor_zero(b, r))
    zero = E.scalar(0, r)
    nonzero = bind(E.ne_p, r, zero)
    signs_differ = bind(E.ne_p, E.lt(r, zero), E.lt(b, zero))
    out = E.select(bind(E.and_p, nonzero, signs_differ), E.add(r, b), r)
    # A zero result keeps the dividend's sign (NumPy gives it the divisor's: ``0.0 % -1.0`` is -0.0 there, +0.0
    # here, as in JAX): choosing a signed constant there would cut the derivative, 1 at exact multiples too.
    return wrap(out if _dt.is_float(a.aval.dtype) else _zero_where_divisor_zero(b, out))


mod = remainder


@as_arithmetic
@op
def power(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """``x ** y``. Integer operands: exact with wraparound, as NumPy; a negative exponent gives ``1 // x**-y``
    truncated toward zero (1 for ``x == 1``, ±1 for ``x == -1``, else 0; also 0 for ``x == 0``), as JAX, where
    NumPy raises (it cannot be checked on staged values). A static negative int exponent is a DTypeError."""
    if type(y) is int and not isinstance(x, (int, float)):
        return wrap(E.integer_pow(as_tensor(x).atom, y))
    if (isinstance(x, Tensor) and _dt.is_integer(x.aval.dtype)) or (
        isinstance(y, Tensor) and _dt.is_integer(y.aval.dtype)
    ):
        a, b = elementwise_operands("power", x, y)
        if _dt.is_integer(a.aval.dtype):
            return wrap(_integer_power(a, b))
        # A weakly typed integer exponent (a Python int passed to a program) took the float base's dtype.
        return wrap(bind(E.pow_p, a, b))
    return _binary("power", E.pow_p, x, y)


def _integer_power(a: Atom, b: Atom) -> Atom:
    """``a ** b`` for integer tensors by square-and-multiply over every bit of the exponent."""
    dtype = a.aval.dtype
    one, zero = E.scalar(1, a), E.scalar(0, a)
    signed = _dt.is_signed(dtype)
    exponent = E.select(E.lt(b, zero), zero, b) if signed else b
    acc, base = one, a
    bits = dtype.itemsize * 8 - (1 if signed else 0)
    for k in range(bits):
        bit = E.scalar(k, a)
        chosen = bind(E.ne_p, bind(E.and_p, bind(E.shift_right_logical_p, exponent, bit), one), zero)
        acc = E.select(chosen, E.mul(acc, base), acc)
        if k + 1 < bits:
            base = E.mul(base, base)
    if not signed:
        return acc
    odd = bind(E.ne_p, bind(E.and_p, b, one), zero)
    minus_one = E.scalar(-1, a)
    reciprocal = E.select(
        bind(E.eq_p, a, one), one, E.select(bind(E.eq_p, a, minus_one), E.select(odd, minus_one, one), zero)
    )
    return E.select(E.lt(b, zero), reciprocal, acc)


@as_binary
@op
def maximum(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """Elementwise maximum; NaNs propagate (``fmax`` ignores them). Of ``0.0`` and ``-0.0`` either may be returned."""
    return _binary("maximum", E.max_p, x, y)


@as_binary
@op
def minimum(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """Elementwise minimum; NaNs propagate (``fmin`` ignores them). Of ``0.0`` and ``-0.0`` either may be returned."""
    return _binary("minimum", E.min_p, x, y)


@op
def negative(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return _unary(E.neg_p, x)


def positive(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return x


@overload
def abs(x: Tensor[c64, Unpack[Shape]]) -> Tensor[f32, Unpack[Shape]]: ...  # noqa: A001 - NumPy's name
@overload
def abs(x: Tensor[c128, Unpack[Shape]]) -> Tensor[f64, Unpack[Shape]]: ...  # noqa: A001
@overload
def abs(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]: ...  # noqa: A001
@op
def abs(x: Tensor[Any, Unpack[Shape]]) -> Tensor[Any, Unpack[Shape]]:  # noqa: A001 - NumPy's name
    """``|x|``; of a complex tensor, its modulus in the real dtype of its parts (f32 for c64): inf where a part is
    infinite, even beside a NaN, as NumPy's (C's hypot)."""
    return _unary(E.abs_p, x)


absolute = abs


@op
def sign(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """-1, 0 or 1 in ``x``'s dtype (NaN for NaN). ``sign(-0.0)`` is -0.0, as XLA and JAX give it (NumPy: 0.0).

    Of a complex ``z``: ``z / |z|``, and 0 at 0, as NumPy 2 (the sign of the infinite part on its axis where one
    part is infinite; NaN where a part is NaN and none infinite, or both are infinite). Differences: a zero keeps
    its parts' signs, as the real -0.0 does; where ``|z|`` overflows (a part beyond ~0.7 of the largest float)
    the result is right here and ±1j or ±1 in NumPy; a ``z`` whose parts are both subnormal is 0 to XLA's CPU
    arithmetic, which then returns ``z`` itself (NumPy: its phase), as it reads a real subnormal's sign as 0.
    The derivative of a complex sign is that of z / |z|, where JAX gives none; a real sign's derivative is 0.
    """
    return _unary(E.sign_p, x)


@op
def square(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return wrap(E.integer_pow(as_tensor(x).atom, 2))


@op
def reciprocal(x: Tensor[IT, Unpack[Shape]]) -> Tensor[IT, Unpack[Shape]]:
    a = inexact_operand("reciprocal", x).atom
    return wrap(E.div(E.scalar(1, a), a))


# ------------------------------------------------------------------------------------- transcendental


def _checked_unary(name: str, prim: Primitive, accepted: frozenset[Any], checked: Callable[[str, Any], Traced[Any]],
                   what: str) -> Callable[..., Any]:
    """``prim`` on one operand whose dtype is in ``accepted``; anything else goes through ``checked``, which converts
    it or raises the op's error."""

    def fn(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
        if type(x) is Traced and x.atom.aval.dtype in accepted:  # what ``checked`` accepts, without its calls
            return wrap(bind(prim, x.atom))
        return wrap(bind(prim, checked(name, x).atom))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of a {what} tensor."
    return op(fn)


def _float_unary(name: str, prim: Primitive) -> FloatUnary:
    return cast(FloatUnary, _checked_unary(name, prim, _dt.FLOATS, float_operand, "floating-point"))


class InexactUnary(Protocol):
    """``exp``, ``sqrt``, ...: floating-point or complex in, same type out (an integer tensor is a type error)."""

    def __call__(self, x: Tensor[IT, Unpack[S]]) -> Tensor[IT, Unpack[S]]: ...


def _inexact_unary(name: str, prim: Primitive) -> InexactUnary:
    """A function holomorphic on complex numbers (the principal branch where it has several, as NumPy's)."""
    return cast(InexactUnary, _checked_unary(name, prim, _dt.INEXACT, inexact_operand, "floating-point or complex"))


exp = _inexact_unary("exp", E.exp_p)
log = _inexact_unary("log", E.log_p)
log1p = _inexact_unary("log1p", E.log1p_p)
expm1 = _inexact_unary("expm1", E.expm1_p)
tanh = _inexact_unary("tanh", E.tanh_p)
sin = _inexact_unary("sin", E.sin_p)
cos = _inexact_unary("cos", E.cos_p)
sqrt = _inexact_unary("sqrt", E.sqrt_p)
rsqrt = _inexact_unary("rsqrt", E.rsqrt_p)
rint = _float_unary("rint", E.round_p)  # half to even, as NumPy (which returns floats for integers: refused here)


def _rounded(prim: Primitive, x: Any) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    if type(x) is Traced and x.atom.aval.dtype in _dt.FLOATS:
        return wrap(bind(prim, x.atom))
    a = as_tensor(x).atom
    _refuse_complex(prim.name, a)
    return wrap(bind(prim, a) if a.aval.dtype in _dt.FLOATS else a)  # integers and bools are already integral


def _refuse_complex(name: str, a: Atom) -> None:
    """Rounding has no meaning NumPy and JAX agree on for complex numbers (NumPy refuses ``floor``)."""
    if a.aval.dtype in _dt.COMPLEX:
        raise dtype_error(name, f"{name} needs a real operand, got {a.aval}: round .real and .imag separately")


@op
def floor(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """Round toward -inf; integer and bool tensors come back unchanged (their own dtype, as in NumPy)."""
    return _rounded(E.floor_p, x)


@op
def ceil(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """Round toward +inf; integer and bool tensors come back unchanged (their own dtype, as in NumPy)."""
    return _rounded(E.ceil_p, x)


@op
def round(x: Tensor[DT, Unpack[Shape]], decimals: int = 0) -> Tensor[DT, Unpack[Shape]]:  # noqa: A001 - NumPy's
    """Round half to even at ``decimals`` digits, as NumPy does: ``rint(x * 10**decimals) / 10**decimals``, or
    ``rint(x / 10**-decimals) * 10**-decimals`` for negative ``decimals`` (float16 and bfloat16 are computed in
    float32, so they round exactly where NumPy's rounding of the scaled value in the dtype can miss by a digit).
    Values too large to have such digits are returned as they are and steps past the dtype's range give zeros,
    where NumPy gives inf or NaN. Integers keep their dtype: unchanged for ``decimals >= 0``, rounded half to even
    to a multiple of ``10**-decimals`` otherwise (exactly, where NumPy goes through float64; wrapping where that
    multiple overflows)."""
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    t = as_tensor(x)
    if t.aval.dtype == _dt.BOOL:
        raise dtype_error("round", f"round needs a numeric operand, got {t.aval}")
    _refuse_complex("round", t.atom)
    if not _dt.is_float(t.aval.dtype):
        return wrap(t.atom if decimals >= 0 else _round_integer(t.atom, decimals))
    a = t.atom
    if decimals == 0:
        return wrap(bind(E.round_p, a))
    return wrap(_in_f32(lambda v: _round_float(v, decimals), a))


def _round_float(a: Atom, decimals: int) -> Atom:
    info = _finfo(a.aval.dtype)
    try:
        factor = 10.0 ** builtins.abs(decimals)
    except OverflowError:
        factor = math.inf
    if factor > float(info.max):  # every finite value is within half a step of 0, or has no digits that fine
        return a if decimals > 0 else E.select(bind(E.is_finite_p, a), E.mul(a, E.scalar(0, a)), a)
    # From 2**(mantissa bits + 1) steps on, floats are whole multiples of the step already: returned as they are
    # (the scaling's rounding would move them by an ulp, and ``x * 10**decimals`` could overflow).
    whole = 2.0 ** (info.nmant + 1)
    threshold = whole / factor if decimals > 0 else whole * factor
    if threshold > float(info.max):
        threshold = math.inf
    scale = E.scalar(factor, a)
    # XLA turns a division by a broadcast scalar into a multiplication by its rounded reciprocal (an ulp off for
    # many results); a divisor that depends on ``a`` (the scale, or NaN where ``a`` is NaN anyway) keeps it a
    # correctly rounded division.
    divisor = E.select(bind(E.ne_p, a, a), a, scale)
    if decimals < 0:  # divide by the exact power of ten (10**-k is inexact in binary)
        rounded = E.mul(bind(E.round_p, E.div(a, divisor)), scale)
    else:
        rounded = E.div(bind(E.round_p, E.mul(a, scale)), divisor)
    return E.select(E.lt(E.abs(a), E.scalar(threshold, a)), rounded, a)


def _round_integer(a: Atom, decimals: int) -> Atom:
    """An integer rounded half to even to a multiple of ``10**-decimals``."""
    step = 10**-decimals
    if step > np.iinfo(a.aval.dtype).max:  # no nonzero multiple exists: everything is within half a step of 0
        return E.mul(a, E.scalar(0, a))
    q = E.scalar(step, a)
    quotient, rest = E.div(a, q), E.rem(a, q)
    if _dt.is_signed(a.aval.dtype):  # floor division, so the remainder is in [0, step)
        below = E.lt(rest, E.scalar(0, a))
        quotient = E.select(below, E.sub(quotient, E.scalar(1, a)), quotient)
        rest = E.select(below, E.add(rest, q), rest)
    other = E.sub(q, rest)  # the distance up to the next multiple (``2 * rest`` could overflow)
    odd = bind(E.ne_p, bind(E.and_p, quotient, E.scalar(1, a)), E.scalar(0, a))
    up = bind(E.or_p, E.gt(rest, other), bind(E.and_p, bind(E.eq_p, rest, other), odd))
    return E.select(up, E.add(a, other), E.sub(a, rest))


sigmoid = _float_unary("sigmoid", E.logistic_p)


@op
def tan(x: Tensor[IT, Unpack[Shape]]) -> Tensor[IT, Unpack[Shape]]:
    a = inexact_operand("tan", x).atom
    return wrap(E.div(E.sin(a), E.cos(a)))


@op
def log2(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Base-2 logarithm, exact at powers of 2 as NumPy's (float16 and bfloat16 computed in float32)."""
    return wrap(_in_f32(_log2, float_operand("log2", x).atom))


def _log2(a: Atom) -> Atom:
    out = E.div(E.log(a), E.scalar(float(np.log(2.0)), a))  # can be ulps off an integer at a power of 2
    width, mantissa, bias = float_layout(a.aval.dtype)
    bits = E.bitcast_convert(a, width)  # (shifted logically: a set sign bit makes the field too large)
    field = bind(E.shift_right_logical_p, bits, literal(mantissa, width))
    fraction = bind(E.and_p, bits, literal((1 << mantissa) - 1, width))
    normal = bind(E.and_p, bind(E.ge_p, field, literal(1, width)), bind(E.le_p, field, literal(2 * bias, width)))
    power_of_two = bind(E.and_p, normal, E.eq(fraction, literal(0, width)))
    exponent = E.sub(E.convert(field, a.aval.dtype), E.scalar(bias, a))
    # exact at powers of two, read from the bits (a platform's log may be ulps off); the offset is constant, so
    # the derivative stays 1 / (x log 2)
    return E.add(out, stop_gradient(E.select(power_of_two, E.sub(exponent, out), E.scalar(0, out))))


@op
def log10(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Base-10 logarithm (``log(x) / log(10)``; float16 and bfloat16 computed in float32)."""
    return wrap(_in_f32(lambda a: E.div(E.log(a), E.scalar(float(np.log(10.0)), a)), float_operand("log10", x).atom))


# ------------------------------------------------------------------------------------ comparison and logic


def _compare(name: str, prim: Primitive) -> Comparison:
    def fn(x: Operand, y: Operand) -> Tensor[bool_, Unpack[tuple[Any, ...]]]:
        return _binary(name, prim, x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``; the result is a bool tensor."
    return as_comparison(op(fn))


equal = _compare("equal", E.eq_p)
not_equal = _compare("not_equal", E.ne_p)
less = _compare("less", E.lt_p)
less_equal = _compare("less_equal", E.le_p)
greater = _compare("greater", E.gt_p)
greater_equal = _compare("greater_equal", E.ge_p)


def _logic(name: str, prim: Primitive, bool_only: bool) -> Binary:
    def fn(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
        a, b = elementwise_operands(name, x, y)
        if bool_only and a.aval.dtype != _dt.BOOL:
            raise dtype_error(name, f"{name} needs bool operands, got {a.aval} and {b.aval}")
        return wrap(bind(prim, a, b))

    fn.__name__ = fn.__qualname__ = name
    return as_binary(op(fn))


bitwise_and = _logic("bitwise_and", E.and_p, False)
bitwise_or = _logic("bitwise_or", E.or_p, False)
bitwise_xor = _logic("bitwise_xor", E.xor_p, False)
logical_and = _logic("logical_and", E.and_p, True)
logical_or = _logic("logical_or", E.or_p, True)
logical_xor = _logic("logical_xor", E.xor_p, True)


def _shift_operands(name: str, x: Any, y: Any) -> tuple[Atom, Atom]:
    a, b = elementwise_operands(name, x, y)
    if not _dt.is_integer(a.aval.dtype):
        raise dtype_error(name, f"{name} needs integer operands, got {a.aval} and {b.aval}")
    return a, b


@as_binary
@op
def left_shift(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """``x << y`` in ``x``'s dtype (bits shifted out are lost); a shift by the bit width or more, or by a negative
    amount, gives 0, as NumPy."""
    a, b = _shift_operands("left_shift", x, y)
    return wrap(bind(E.shift_left_p, a, b))


@as_binary
@op
def right_shift(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    """``x >> y``: arithmetic for signed integers (``floor(x / 2**y)``), logical for unsigned ones. A shift by the
    bit width or more, or by a negative amount, gives 0, or -1 for a negative signed ``x``, as NumPy."""
    a, b = _shift_operands("right_shift", x, y)
    if not _dt.is_signed(a.aval.dtype):
        return wrap(bind(E.shift_right_logical_p, a, b))
    # An arithmetic shift from the logical one: a negative x is ~(~x >> y), as ~x is non-negative.
    negative = E.lt(a, E.scalar(0, a))
    magnitude = E.select(negative, bind(E.not_p, a), a)
    shifted = bind(E.shift_right_logical_p, magnitude, b)
    return wrap(E.select(negative, bind(E.not_p, shifted), shifted))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


@op
def divmod(  # noqa: A001 - NumPy's name
    x: Operand, y: Operand
) -> tuple[Tensor[Any, Unpack[tuple[Any, ...]]], Tensor[Any, Unpack[tuple[Any, ...]]]]:
    """``(floor_divide(x, y), remainder(x, y))``; integer division by zero gives ``(0, 0)``, as NumPy."""
    quotient: Any = floor_divide  # its typed overloads want a tensor on one side: checked by those ops
    modulo: Any = remainder
    return quotient(x, y), modulo(x, y)


@op
def invert(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return _unary(E.not_p, x)


bitwise_not = invert


@op
def logical_not(x: Tensor[bool_, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = as_tensor(x).atom
    if a.aval.dtype != _dt.BOOL:
        raise dtype_error("logical_not", f"logical_not needs a bool operand, got {a.aval}")
    return wrap(bind(E.not_p, a))


# Integer and bool operands are always finite, as in NumPy: ``x == x`` / ``x != x`` give those all-true and
# all-false results at the operand's shape.


@op
def isfinite(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = as_tensor(x).atom
    if _dt.is_complex(a.aval.dtype):  # both parts finite
        return wrap(bind(E.and_p, bind(E.is_finite_p, C.real(a)), bind(E.is_finite_p, C.imag(a))))
    if not _dt.is_float(a.aval.dtype):
        return wrap(bind(E.eq_p, a, a))
    return wrap(bind(E.is_finite_p, a))


@op
def isnan(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = as_tensor(x).atom
    return wrap(bind(E.ne_p, a, a))


@op
def isinf(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = as_tensor(x).atom
    if _dt.is_complex(a.aval.dtype):  # either part infinite (NumPy's answer, even beside a NaN part)
        return wrap(bind(E.or_p, _isinf_real(C.real(a)), _isinf_real(C.imag(a))))
    if not _dt.is_float(a.aval.dtype):
        return wrap(bind(E.ne_p, a, a))
    return wrap(_isinf_real(a))


def _isinf_real(a: Atom) -> Atom:
    finite = bind(E.is_finite_p, a)
    not_nan = bind(E.eq_p, a, a)
    return bind(E.and_p, bind(E.not_p, finite), not_nan)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------- selection, dtypes


@as_where
def where(condition: Operand, x: Operand | None = None, y: Operand | None = None, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (all three broadcast together). ``where(condition)`` alone is
    ``nonzero(condition, size=..., fill_value=...)`` (staged calls need the static ``size``)."""
    if x is None and y is None:
        from .selection import where_nonzero

        return where_nonzero(condition, size, fill_value)
    if x is None or y is None:
        raise _named(TypeError("pass both x and y, or neither (where(condition) is nonzero(condition))"), "where")
    if size is not None or fill_value is not None:
        raise _named(TypeError("size= and fill_value= only go with the one-argument form where(condition)"), "where")
    return _where(condition, x, y)


@op
def _where(condition: Operand, x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    cond = as_tensor(condition)
    if cond.aval.dtype != _dt.BOOL:
        raise dtype_error("where", f"condition must be a bool tensor, got {cond.aval}")
    dtype = result_dtype("where", (x, y))
    pred, a, b = broadcast_atoms("where", [cond.atom, atom(x, dtype), atom(y, dtype)])
    return wrap(E.select(pred, a, b))


@op
def clip(
    x: Tensor[DT, Unpack[Shape]], a_min: Operand | None = None, a_max: Operand | None = None
) -> Tensor[DT, Unpack[Shape]]:
    out: Tensor[Any, Unpack[tuple[Any, ...]]] = as_tensor(x)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


@overload
def astype(x: Tensor[Any, Unpack[Shape]], dtype: type[DT2]) -> Tensor[DT2, Unpack[Shape]]: ...
@overload
def astype(x: Tensor[Any, Unpack[Shape]], dtype: Any) -> Tensor[Any, Unpack[Shape]]: ...
@op
def astype(x: Tensor[Any, Unpack[Shape]], dtype: type[DType] | Any) -> Tensor[Any, Unpack[Shape]]:
    """Convert to ``dtype`` (a tensorstage dtype such as ``f32`` or a NumPy dtype). Float -> int truncates toward
    zero and saturates: out-of-range values and infinities become the integer dtype's bounds and NaN becomes 0
    (NumPy leaves these undefined; JAX does the same as here). Integer -> integer wraps, as NumPy; anything ->
    bool is ``x != 0`` (NaN is True)."""
    target = to_numpy(dtype)
    a = as_tensor(x).atom
    if target == _dt.BOOL and a.aval.dtype != _dt.BOOL:
        return wrap(bind(E.ne_p, a, E.scalar(0, a)))
    return wrap(E.convert(a, target))


# ------------------------------------------------------------------------ operators of staged tensors
# ``x + y`` on a staged tensor runs ``Tensor.__add__`` -> ``add`` (the op wrapper, which pins the user's line) ->
# ``_binary`` -> ``bind``. ``Traced`` gets operator methods that go to ``_binary`` directly for a staged or
# Python-number operand, with what the wrapper adds: the user's line pinned once, and errors named by the op.
# Everything else (weak scalars, bools, NumPy arrays, no staging) takes the op as before.


def _fast_operator(name: str, prim: Primitive, slow: Callable[[Any, Any], Any], reflected: bool) -> Any:
    def method(self: Any, other: Any) -> Any:
        if not _STACK or type(self) is not Traced or type(other) not in _OPERATOR_FAST:
            return slow(other, self) if reflected else slow(self, other)
        x, y = (other, self) if reflected else (self, other)
        builder = _STACK[-1]
        pin = builder.loc is None  # else a transform replaying a graph has pinned a line already
        if pin:
            builder.loc = user_location()
        try:
            return _binary(name, prim, x, y)
        except StagingError as err:  # as the op wrapper: say which op the user called
            raise err.within(name)
        except (TypeError, ValueError, IndexError, ArithmeticError) as exc:
            raise _named(exc, name) from exc
        finally:
            if pin:
                builder.loc = None

    return method


_OPERATOR_FAST = frozenset({Traced, float, int})  # not bool: it stays on the op's general path


for _dunder, _name, _prim, _slow, _reflected in (
    ("__add__", "add", E.add_p, add, False),
    ("__radd__", "add", E.add_p, add, True),
    ("__sub__", "subtract", E.sub_p, subtract, False),
    ("__rsub__", "subtract", E.sub_p, subtract, True),
    ("__mul__", "multiply", E.mul_p, multiply, False),
    ("__rmul__", "multiply", E.mul_p, multiply, True),
):
    setattr(Traced, _dunder, _fast_operator(_name, _prim, _slow, _reflected))
del _dunder, _name, _prim, _slow, _reflected


__all__ = [
    "abs", "absolute", "add", "astype", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "cos", "divide", "divmod", "equal", "exp", "expm1", "floor",
    "floor_divide", "greater", "greater_equal", "invert", "isfinite", "isinf", "isnan", "left_shift", "less",
    "less_equal", "log", "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "mod", "multiply", "negative", "not_equal", "positive", "power", "reciprocal", "remainder",
    "right_shift", "rint", "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "subtract", "tan", "tanh",
    "true_divide", "where",
]
