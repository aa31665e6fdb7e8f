"""Floating-point anatomy and integer arithmetic with NumPy's names: ``fabs``, ``around``, ``isposinf`` /
``isneginf``, ``frexp``, ``ldexp``, ``modf``, ``nextafter``, ``spacing``, ``gcd``, ``lcm``, ``bitwise_count``.

The functions that take floats apart read and build their bits (``bitcast_convert`` and integer arithmetic), so
``frexp``, ``modf``, ``nextafter`` and ``spacing`` give NumPy's answers exactly, at subnormals too, on every
platform: XLA:CPU flushes subnormal operands and results of float arithmetic and comparisons to zero, but not of
bit operations. ``ldexp`` multiplies by powers of two: exact wherever its operand and result are normal numbers;
where the platform flushes subnormals (XLA:CPU for bfloat16, float32 and float64; it computes float16 in float32)
it reads subnormal operands as zero and gives zero for subnormal results, elsewhere such a result may be rounded
twice (by at most one ulp of the subnormal).

Differences from NumPy, all deliberate: dtypes never change, so ``fabs``, ``frexp``, ``ldexp``, ``modf``,
``nextafter`` and ``spacing`` need float operands (NumPy computes integers in float64) and ``ldexp``'s exponent
must be an integer or bool tensor or a Python int; ``gcd``/``lcm`` need integers (NumPy refuses bools too).
``spacing`` of a negative float16 is negative, as NumPy's float32/64 loops (its float16 loop steps toward +inf).
``frexp``, ``nextafter`` and ``spacing`` are not differentiable (zero gradients, as in jax.numpy); ``fabs``, ``ldexp``
(in ``x1``) and ``modf`` are, and ``around`` has a zero gradient.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import while_loop
from ...dtypes import DType, Floating, bool_, i32, u8
from ...op_signatures import as_binary
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as S
from ...staging.primitives.autodiff import stop_gradient
from ...tensor import Tensor
from ._core import (
    as_tensor, atom, broadcast_atoms, describe, dtype_error, elementwise_operands, float_operand, op, wrap,
)
from .mathfuncs import FloatLayout, _and, _finfo, _floats, _isnan, _or, float_layout
from .ufuncs import round as _round

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
Operand = Tensor[Any, Unpack[tuple[Any, ...]]] | int | float | bool
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

_I32 = np.dtype(np.int32)

# ------------------------------------------------------------------------------------------ helpers


def _k(value: int, like: Atom) -> Atom:
    return literal(value, like.aval.dtype)


def _shr(a: Atom, n: Atom) -> Atom:
    return bind(E.shift_right_logical_p, a, n)  # type: ignore[no-any-return]


def _shl(a: Atom, n: Atom) -> Atom:
    return bind(E.shift_left_p, a, n)  # type: ignore[no-any-return]


def _fields(bits: Atom, layout: FloatLayout) -> tuple[Atom, Atom]:
    """The magnitude bits (all but the sign) and the exponent field of a float's bits."""
    magnitude = _and(bits, _k(layout.magnitude, bits))
    return magnitude, _shr(magnitude, _k(layout.mantissa, bits))


def _pow2(k: Atom, dtype: np.dtype[Any]) -> Atom:
    """``2.0 ** k`` in ``dtype`` for integer ``k`` (of the dtype's width) in the normal exponent range."""
    layout = float_layout(dtype)
    return E.bitcast_convert(_shl(E.add(k, _k(layout.bias, k)), _k(layout.mantissa, k)), dtype)


# ----------------------------------------------------------------------------------- simple ones


@op
def fabs(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The absolute value of a float tensor (``abs`` takes integers too; NumPy's ``fabs`` makes them float64)."""
    return wrap(E.abs(float_operand("fabs", x).atom))


around = _round


@op
def isposinf(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    """Where ``x`` is +inf (nowhere for integers and bools)."""
    return wrap(_is_infinity(as_tensor(x).atom, math.inf))


@op
def isneginf(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    """Where ``x`` is -inf (nowhere for integers and bools)."""
    return wrap(_is_infinity(as_tensor(x).atom, -math.inf))


def _is_infinity(a: Atom, infinity: float) -> Atom:
    if _dt.is_complex(a.aval.dtype):  # NumPy refuses these too: a complex infinity has no sign
        name = "isposinf" if infinity > 0 else "isneginf"
        raise dtype_error(name, f"{name} needs a real operand, got {a.aval}")
    if not _dt.is_float(a.aval.dtype):
        return bind(E.ne_p, a, a)  # type: ignore[no-any-return]  # all False, at the operand's shape
    return E.eq(a, E.scalar(infinity, a))


# ------------------------------------------------------------------------------- taking floats apart


@op
def frexp(x: Tensor[FT, Unpack[Shape]]) -> tuple[Tensor[FT, Unpack[Shape]], Tensor[i32, Unpack[Shape]]]:
    """Mantissa and exponent: ``x == mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1`` and an int32
    exponent; ``(x, 0)`` for zeros, infinities and NaN. Exact for subnormals (read from the bits)."""
    a = float_operand("frexp", x).atom
    layout = float_layout(a.aval.dtype)
    bits = E.bitcast_convert(a, layout.int_dtype)
    magnitude, field = _fields(bits, layout)
    # A subnormal's fraction bits, as an integer below 2**mantissa, convert to the float exactly: a normal number
    # 2**(mantissa + bias - 1) times the subnormal's magnitude.
    subnormal = E.eq(field, _k(0, field))
    normalized = E.bitcast_convert(E.convert(magnitude, a.aval.dtype), layout.int_dtype)
    source = E.select(subnormal, normalized, magnitude)
    source_field = _shr(source, _k(layout.mantissa, source))
    shift = E.select(subnormal, _k(1 - layout.bias - layout.mantissa, field), _k(0, field))
    exponent = E.add(E.sub(source_field, _k(layout.bias - 1, field)), shift)
    half_exponent = _k((layout.bias - 1) << layout.mantissa, bits)  # the field of [0.5, 1)
    mantissa_bits = _or(_or(_and(source, _k(layout.fraction, bits)), half_exponent), _and(bits, _k(layout.sign, bits)))
    special = _or(E.eq(magnitude, _k(0, bits)), E.eq(field, _k(layout.top_field, field)))
    mantissa = E.select(special, a, E.bitcast_convert(mantissa_bits, a.aval.dtype))
    exponent = E.select(special, _k(0, exponent), exponent)
    return wrap(mantissa), wrap(E.convert(exponent, _I32))


@overload
def ldexp(
    x1: Tensor[FT, Unpack[Shape]], x2: Tensor[Any, Unpack[Shape]] | Tensor[Any] | int
) -> Tensor[FT, Unpack[Shape]]: ...
@overload
def ldexp(x1: Tensor[FT] | float, x2: Tensor[Any, Unpack[Shape]]) -> Tensor[Any, Unpack[Shape]]: ...
@op
def ldexp(x1: Operand, x2: Operand) -> AnyTensor:
    """``x1 * 2**x2`` for float ``x1`` and integer ``x2``, without overflow in between: exact wherever the result
    is a normal number (see the module docstring for subnormal results)."""
    a = atom(x1, _dt.DEFAULT_FLOAT, "ldexp") if type(x1) in (int, float) else float_operand("ldexp", x1).atom
    layout = float_layout(a.aval.dtype)
    # Beyond this every nonzero finite x1 overflows or underflows: clamping keeps the pieces below in range.
    limit = 2 * layout.bias + layout.mantissa + 2
    n = _exponent_operand(x2, limit, a)
    a, n = broadcast_atoms("ldexp", [a, E.convert(n, layout.int_dtype)])
    # Three steps of at most limit / 3 each: every power of two stays a normal number, and the intermediates stay
    # between x1 and the result, so none of them overflows or underflows on its own.
    first = E.div(n, _k(3, n))
    second = E.div(E.sub(n, first), _k(2, n))
    third = E.sub(E.sub(n, first), second)
    out = a
    for k in (first, second, third):
        out = E.mul(out, _pow2(k, a.aval.dtype))
    return wrap(out)


def _exponent_operand(x2: Any, limit: int, like: Atom) -> Atom:
    """``x2`` as an int32 clamped to ``[-limit, limit]``: a Python int, or an integer or bool tensor."""
    if type(x2) in (int, bool):
        return literal(max(-limit, min(limit, int(x2))), _I32)
    if type(x2) is float:
        raise dtype_error("ldexp", f"ldexp needs an integer exponent, got {x2!r}")
    t = as_tensor(x2).atom
    dtype = t.aval.dtype
    if not (_dt.is_integer(dtype) or dtype == _dt.BOOL):
        raise dtype_error("ldexp", f"ldexp needs an integer exponent, got {t.aval} (with {like.aval})")
    if dtype.itemsize >= 4:
        lo = literal(-limit if _dt.is_signed(dtype) else 0, dtype)
        t = E.clamp(lo, t, literal(limit, dtype))
    return E.convert(t, _I32)


@op
def modf(x: Tensor[FT, Unpack[Shape]]) -> tuple[Tensor[FT, Unpack[Shape]], Tensor[FT, Unpack[Shape]]]:
    """Fractional and integral parts, both with the sign of ``x``: ``modf(-3.5) == (-0.5, -3.0)``,
    ``modf(-3.0) == (-0.0, -3.0)``, ``modf(±inf) == (±0.0, ±inf)``. The fractional part has derivative 1."""
    a = float_operand("modf", x).atom
    bits = E.bitcast_convert(a, float_layout(a.aval.dtype).int_dtype)
    negative = E.lt(bits, _k(0, bits))  # the sign bit: -0.0 and negative NaNs too
    whole = E.select(E.lt(a, E.scalar(0, a)), bind(E.ceil_p, a), E.floor(a))
    fraction = E.select(_is_infinity(E.abs(a), math.inf), E.scalar(0, a), E.sub(a, whole))
    # below 1 the fraction is x itself: taken as it is, so subnormals survive platforms that flush ``x - 0``
    fraction = E.select(E.eq(whole, E.scalar(0, a)), a, fraction)
    # ``x - whole`` is +0 at negative integers: -0 there, as ``-0 - (f0 - f)`` (exactly -0, derivative 1).
    negative_zero = E.sub(E.scalar(-0.0, a), E.sub(stop_gradient(fraction), fraction))
    fraction_bits = E.bitcast_convert(fraction, bits.aval.dtype)  # not ``fraction == 0``: subnormals may flush
    wrong_sign = _and(negative, E.eq(fraction_bits, _k(0, bits)))  # +0 exactly
    return wrap(E.select(wrong_sign, negative_zero, fraction)), wrap(whole)


@as_binary
@op
def nextafter(x1: Operand, x2: Operand) -> AnyTensor:
    """The next representable number after ``x1`` toward ``x2`` (``x2`` where they are equal, NaN if either is);
    found on the bits, so exact at subnormals and across zero."""
    a, b = _floats("nextafter", x1, x2)
    layout = float_layout(a.aval.dtype)
    ka, kb = _ordered(a, layout), _ordered(b, layout)
    step = E.select(E.lt(ka, kb), _k(1, ka), _k(-1, ka))
    k = E.add(ka, step)
    bits = E.select(E.lt(k, _k(0, k)), _or(E.neg(k), _k(layout.sign, k)), k)
    # stepping to zero keeps x1's sign (nextafter(-tiny, 1) is -0.0)
    bits = E.select(E.eq(k, _k(0, k)), _and(E.bitcast_convert(a, layout.int_dtype), _k(layout.sign, k)), bits)
    out = E.select(E.eq(ka, kb), b, E.bitcast_convert(bits, a.aval.dtype))
    return wrap(E.select(_or(_isnan(a), _isnan(b)), E.scalar(math.nan, out), out))


def _ordered(a: Atom, layout: FloatLayout) -> Atom:
    """A float's bits as an integer that orders as the floats do (``-x`` maps to ``-bits(x)``; both zeros to 0),
    so comparisons and steps are exact where float comparisons would flush subnormals."""
    bits = E.bitcast_convert(a, layout.int_dtype)
    magnitude = _and(bits, _k(layout.magnitude, bits))
    return E.select(E.lt(bits, _k(0, bits)), E.neg(magnitude), magnitude)


@op
def spacing(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The distance from ``x`` to the next number away from zero, with the sign of ``x`` (positive at -0.0: the
    smallest subnormal): one ulp of ``x``; inf at the largest float, NaN at infinities and NaN."""
    a = float_operand("spacing", x).atom
    layout = float_layout(a.aval.dtype)
    bits = E.bitcast_convert(a, layout.int_dtype)
    magnitude, field = _fields(bits, layout)
    one, zero = _k(1, field), _k(0, field)
    ulp_field = E.sub(field, _k(layout.mantissa, field))
    normal_ulp = _shl(E.maximum(ulp_field, one), _k(layout.mantissa, field))  # 2**(field - bias - mantissa)
    subnormal_ulp = _shl(one, E.maximum(E.sub(field, one), zero))  # below 2**(1 - bias): a subnormal's bits
    ulp = E.bitcast_convert(E.select(E.gt(ulp_field, zero), normal_ulp, subnormal_ulp), a.aval.dtype)
    infinity_bits = layout.top_field << layout.mantissa
    ulp = E.select(E.eq(magnitude, _k(infinity_bits - 1, bits)), E.scalar(math.inf, a), ulp)  # the next is inf
    ulp = E.select(_and(E.lt(bits, zero), bind(E.ne_p, magnitude, zero)), E.neg(ulp), ulp)
    return wrap(E.select(E.eq(field, _k(layout.top_field, field)), E.scalar(math.nan, a), ulp))


# ------------------------------------------------------------------------------------------- integers


def _integers(name: str, x: Any, y: Any) -> tuple[Atom, Atom]:
    """Integer operands broadcast to one full shape (the loop below carries both)."""
    a, b = elementwise_operands(name, x, y)
    if not _dt.is_integer(a.aval.dtype):
        raise dtype_error(name, f"{name} needs integer operands, got {describe(x)} and {describe(y)}")
    full = a if a.aval.ndim >= b.aval.ndim else b
    return S.broadcast_to(a, full.aval), S.broadcast_to(b, full.aval)


def _gcd(a: Atom, b: Atom) -> Atom:
    """Euclid's algorithm on every element at once, until every remainder is 0. Truncated remainders keep the
    operands' signs, so the last nonzero one is ±gcd; its absolute value wraps for gcd(MIN, 0), as in NumPy."""

    def more(carry: tuple[Any, Any]) -> Any:
        _, r = carry
        return wrap(R.reduce_max(bind(E.ne_p, r.atom, _k(0, r.atom)), tuple(range(r.atom.aval.ndim))))

    def step(carry: tuple[Any, Any]) -> tuple[Any, Any]:
        p, q = carry[0].atom, carry[1].atom
        done = E.eq(q, _k(0, q))
        r = E.rem(p, E.select(done, _k(1, q), q))
        return wrap(E.select(done, p, q)), wrap(E.select(done, q, r))

    g, _ = while_loop(more, step, (wrap(a), wrap(b)))
    out: Atom = g.atom
    return E.abs(out) if _dt.is_signed(out.aval.dtype) else out


@as_binary
@op
def gcd(x1: Operand, x2: Operand) -> AnyTensor:
    """The greatest common divisor of integers, nonnegative (``gcd(0, 0) == 0``)."""
    return wrap(_gcd(*_integers("gcd", x1, x2)))


@as_binary
@op
def lcm(x1: Operand, x2: Operand) -> AnyTensor:
    """The least common multiple of integers (0 if either is 0): ``|x1| / gcd * |x2|``, which wraps where it
    overflows (to negative values too), exactly as NumPy's."""
    a, b = _integers("lcm", x1, x2)
    g = _gcd(a, b)
    zero = E.eq(g, _k(0, g))
    if _dt.is_signed(a.aval.dtype):  # NumPy's order: |a| / gcd * |b|, each step wrapping (|MIN| is MIN)
        a, b = E.abs(a), E.abs(b)
    out = E.mul(E.div(a, E.select(zero, _k(1, g), g)), b)
    return wrap(E.select(zero, _k(0, out), out))


@op
def bitwise_count(x: Tensor[Any, Unpack[Shape]]) -> Tensor[u8, Unpack[Shape]]:
    """The number of 1 bits in ``|x|`` (NumPy 2's popcount; ``|MIN|`` wraps to MIN, whose one bit is right), as
    uint8; bools count as 0 and 1."""
    a = as_tensor(x).atom
    dtype = a.aval.dtype
    if dtype == _dt.BOOL:
        return wrap(E.convert(a, np.dtype(np.uint8)))
    if not _dt.is_integer(dtype):
        raise dtype_error("bitwise_count", f"bitwise_count needs an integer or bool operand, got {a.aval}")
    if _dt.is_signed(dtype):
        a = E.abs(a)
    return wrap(E.convert(_popcount(a), np.dtype(np.uint8)))


def _popcount(v: Atom) -> Atom:
    """Bits counted in parallel within pairs, nibbles and bytes, then the bytes summed by one multiplication
    (its top byte); shifts are logical, so signed dtypes work too, and the multiplication wraps."""
    width = 8 * v.aval.dtype.itemsize

    def pattern(byte: int) -> Atom:
        return _k(int.from_bytes(bytes([byte]) * (width // 8), "little"), v)

    v = E.sub(v, _and(_shr(v, _k(1, v)), pattern(0x55)))
    v = E.add(_and(v, pattern(0x33)), _and(_shr(v, _k(2, v)), pattern(0x33)))
    v = _and(E.add(v, _shr(v, _k(4, v))), pattern(0x0F))
    if width == 8:
        return v
    return _shr(E.mul(v, pattern(0x01)), _k(width - 8, v))


__all__ = [
    "around", "bitwise_count", "fabs", "frexp", "gcd", "isneginf", "isposinf", "lcm", "ldexp", "modf", "nextafter",
    "spacing",
]
