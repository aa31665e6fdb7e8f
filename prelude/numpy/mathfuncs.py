"""More elementwise math with NumPy's names: inverse trigonometric and hyperbolic functions, ``hypot``,
``logaddexp``, ``fmod``, ``copysign``, ``nan_to_num``, ``isclose`` and friends.

Each is a composition of primitives chosen to stay within a few ulps of NumPy over the whole float range:
``expm1``/``log1p`` forms near 0, rescaled forms where a plain formula would overflow, exact behaviour at ±0,
±inf and NaN. Gradients come from the compositions; the unused side of a branch is fed a harmless input so no
NaN or inf leaks into a gradient. As everywhere in ``tensorstage.numpy``, dtypes never change implicitly: functions
NumPy computes in float64 for integer inputs (``arcsin``, ``hypot``, ``copysign``...) need float operands here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, bool_, f64
from ...op_signatures import as_binary
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives.autodiff import stop_gradient
from ...staging.primitives import reductions as R
from ...tensor import Tensor
from ._core import as_tensor, atom, dtype_error, elementwise_operands, float_operand, op, result_dtype, wrap

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
S = TypeVarTuple("S")
K = TypeVar("K")
Operand = Tensor[Any, Unpack[tuple[Any, ...]]] | int | float | bool
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Scalar = int | float

# ---------------------------------------------------------------------------------------------- helpers


def _finfo(dtype: np.dtype[Any]) -> Any:
    try:
        return np.finfo(dtype)
    except ValueError:  # bfloat16 and other ml_dtypes types
        import ml_dtypes

        return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]


class FloatLayout(NamedTuple):
    """A float dtype's bit layout: the signed integer of its width, mantissa bits, exponent bias."""

    int_dtype: np.dtype[Any]
    mantissa: int
    bias: int

    @property
    def sign(self) -> int:  # the sign bit, as a value of ``int_dtype``
        return -(1 << (8 * self.int_dtype.itemsize - 1))

    @property
    def magnitude(self) -> int:  # every bit but the sign
        return (1 << (8 * self.int_dtype.itemsize - 1)) - 1

    @property
    def fraction(self) -> int:
        return (1 << self.mantissa) - 1

    @property
    def top_field(self) -> int:  # the exponent field of infinities and NaNs
        return 2 * self.bias + 1


def float_layout(dtype: np.dtype[Any]) -> FloatLayout:
    info = _finfo(dtype)
    return FloatLayout(np.dtype(f"int{8 * dtype.itemsize}"), int(info.nmant), int(info.maxexp) - 1)


def _c(value: float, like: Atom) -> Atom:
    return E.scalar(value, like)


def _and(a: Atom, b: Atom) -> Atom:
    return bind(E.and_p, a, b)  # type: ignore[no-any-return]


def _or(a: Atom, b: Atom) -> Atom:
    return bind(E.or_p, a, b)  # type: ignore[no-any-return]


def _isnan(a: Atom) -> Atom:
    return bind(E.ne_p, a, a)  # type: ignore[no-any-return]


def _isinf(a: Atom) -> Atom:
    return E.eq(E.abs(a), _c(math.inf, a))


def _sqrt(a: Atom) -> Atom:
    return bind(E.sqrt_p, a)  # type: ignore[no-any-return]


def _log1p(a: Atom) -> Atom:
    return bind(E.log1p_p, a)  # type: ignore[no-any-return]


def _expm1(a: Atom) -> Atom:
    return bind(E.expm1_p, a)  # type: ignore[no-any-return]


_WORK_FLOAT = np.dtype(np.float32)


def _in_f32(fn: Callable[..., Atom], *operands: Atom) -> Atom:
    """``fn`` of float16/bfloat16 operands computed in float32 and rounded once: the compositions here round at
    every step, which costs those 8- and 11-bit types many ulps (``logaddexp`` 20, ``logaddexp2`` 130). XLA's
    CPU computes their primitives in float32 anyway. Other dtypes are passed through."""
    dtype = operands[0].aval.dtype
    if dtype.itemsize >= 4:
        return fn(*operands)
    return E.convert(fn(*(E.convert(a, _WORK_FLOAT) for a in operands)), dtype)


def _floats(name: str, x: Any, y: Any) -> tuple[Atom, Atom]:
    a, b = elementwise_operands(name, x, y)
    if not _dt.is_float(a.aval.dtype):
        raise dtype_error(
            name, f"{name} needs floating-point operands, got {a.aval} and {b.aval}; convert them with .astype(f32)"
        )
    return a, b


def _odd(x: Atom, magnitude: Atom) -> Atom:
    """``f(x)`` of an odd function from ``f(|x|)``: the sign of ``x``, and ``x`` itself at ±0 (so -0 stays -0 and
    the derivative there, 1 for every caller, survives: ``abs`` has none at 0)."""
    signed = E.select(E.lt(x, _c(0, x)), E.neg(magnitude), magnitude)
    return E.select(E.eq(x, _c(0, x)), x, signed)


def _signbit(a: Atom) -> Atom:
    """True where a float's sign bit is set: negative numbers, -0 and negative NaNs (read from the bits)."""
    bits = E.bitcast_convert(a, float_layout(a.aval.dtype).int_dtype)
    return E.lt(bits, E.scalar(0, bits))


# ------------------------------------------------------------------------------------ trigonometric


@as_binary
@op
def arctan2(x: Operand, y: Operand) -> AnyTensor:
    """The angle of the point ``(y, x)`` in radians, in ``[-pi, pi]`` (``arctan(x / y)`` in the right quadrant)."""
    a, b = _floats("arctan2", x, y)
    return wrap(E.atan2(a, b))


def _cos_of_arcsin(a: Atom) -> Atom:
    """``sqrt(1 - a²)`` as ``sqrt((1 - a)(1 + a))``: exact factors near ±1, where ``1 - a²`` would cancel. The
    derivatives are those of ``1 - a²``: the product rule would meet ``sqrt``'s infinite slope at ±1 as
    ``inf * 0`` (NaN), where arcsin' and arccos' are ±inf."""
    one = _c(1, a)
    fixed = stop_gradient(a)
    return _sqrt(_with_derivatives(E.mul(E.sub(one, fixed), E.add(one, fixed)), E.sub(one, E.mul(a, a))))


def _with_derivatives(value: Atom, smooth: Atom) -> Atom:
    """``value`` (computed from stop-gradient operands), differentiated as ``smooth``, a formula for the same
    function that is less accurate but whose derivatives stay finite: ``value + (smooth - smooth)``, where the
    difference is exactly 0 wherever ``smooth`` is finite."""
    return E.add(value, E.sub(smooth, stop_gradient(smooth)))


@op
def arcsin(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse sine in ``[-pi/2, pi/2]``; NaN outside ``[-1, 1]``."""
    a = float_operand("arcsin", x).atom
    return wrap(E.atan2(a, _cos_of_arcsin(a)))


@op
def arccos(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse cosine in ``[0, pi]``; NaN outside ``[-1, 1]``."""
    a = float_operand("arccos", x).atom
    return wrap(E.atan2(_cos_of_arcsin(a), a))


@op
def arctan(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse tangent in ``[-pi/2, pi/2]``."""
    a = float_operand("arctan", x).atom
    return wrap(E.atan2(a, _c(1, a)))


@op
def deg2rad(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Degrees to radians: ``x * (pi / 180)``."""
    a = float_operand("deg2rad", x).atom
    return wrap(E.mul(a, _c(math.pi / 180.0, a)))


@op
def rad2deg(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Radians to degrees: ``x * (180 / pi)``."""
    a = float_operand("rad2deg", x).atom
    return wrap(E.mul(a, _c(180.0 / math.pi, a)))


radians = deg2rad
degrees = rad2deg


@as_binary
@op
def hypot(x: Operand, y: Operand) -> AnyTensor:
    """``sqrt(x² + y²)`` without overflow or underflow: the larger magnitude is factored out. ``hypot(±inf, nan)``
    is inf, as in NumPy."""
    return wrap(_in_f32(_hypot, *_floats("hypot", x, y)))


def _hypot(a: Atom, b: Atom) -> Atom:
    # The operands are ordered by a comparison, which has no derivative, and keep their signs: ``abs``, ``max`` and
    # ``min`` would put kinks (zero second derivatives) where hypot is smooth, at ``a == 0`` or ``|a| == |b|``.
    a_bigger = bind(E.ge_p, E.abs(a), E.abs(b))
    big, small = E.select(a_bigger, a, b), E.select(a_bigger, b, a)
    zero = E.eq(big, _c(0, big))
    safe = E.select(zero, E.scalar(1, big), big)  # both zero: 0 * sqrt(1 + 0), with a finite gradient
    ratio = E.div(small, safe)
    out = E.mul(E.abs(big), _sqrt(E.add(_c(1, ratio), E.mul(ratio, ratio))))
    return E.select(_or(_isinf(a), _isinf(b)), E.scalar(math.inf, out), out)


@op
def sinc(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``sin(pi x) / (pi x)``, 1 at 0; a Taylor polynomial near 0 keeps every derivative right there. ``sin(pi x)``
    is taken as ``±sin(pi f)`` with ``f = x - round(x)`` (exact), so sinc is exactly 0 at nonzero integers and
    keeps its relative accuracy near them, where ``sin(pi * x)`` rounds ``pi * x`` first (NumPy's way)."""
    return wrap(_in_f32(_sinc, float_operand("sinc", x).atom))


def _sinc(a: Atom) -> Atom:
    y = E.mul(a, _c(math.pi, a))
    small = E.lt(E.abs(y), _c(1e-2, y))
    safe = E.select(small, E.scalar(1, y), y)
    # The polynomial reads ``y`` only where it is chosen: for large ``y`` it overflows, and ``select`` would send
    # its derivative a zero cotangent that ``0 * inf`` turns into NaN.
    y_small = E.select(small, y, E.scalar(0, y))
    y2 = E.mul(y_small, y_small)
    # 1 - y²/6 + y⁴/120: the next term, y⁶/5040, is below half an ulp of 1 in float64 for |y| < 1e-2.
    taylor = E.sub(_c(1, y), E.mul(E.div(y2, _c(6, y)), E.sub(_c(1, y), E.div(y2, _c(20, y)))))
    n = bind(E.round_p, a)
    half_n = E.mul(n, _c(0.5, n))
    odd = bind(E.ne_p, E.floor(half_n), half_n)
    s = E.sin(E.mul(E.sub(a, n), _c(math.pi, a)))  # sin(pi x) = (-1)^n sin(pi (x - n))
    sine = E.select(odd, E.neg(s), s)
    return E.select(small, taylor, E.div(sine, safe))


# --------------------------------------------------------------------------------------- hyperbolic


def _overflow_threshold(a: Atom) -> float:
    """Below this ``exp`` is finite with room to spare."""
    return float(math.floor(math.log(float(_finfo(a.aval.dtype).max)))) - 1.0


@op
def sinh(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Hyperbolic sine: its Taylor series below 1, ``(e + e / (e + 1)) / 2`` with ``e = expm1(|x|)`` above, and
    ``exp(|x|/2)² / 2`` near overflow (finite up to the largest sinh the dtype holds)."""
    a = float_operand("sinh", x).atom
    m = E.abs(a)
    small = E.lt(m, _c(1, m))
    moderate = E.lt(m, _c(_overflow_threshold(a), m))
    s = E.select(small, m, _c(0, m))
    series = E.add(s, E.mul(s, _odd_series(E.mul(s, s), _sinh_coefficients(a.aval.dtype))))
    e = _expm1(E.select(_and(moderate, bind(E.not_p, small)), m, _c(1, m)))
    mid = E.mul(_c(0.5, e), E.add(e, E.div(e, E.add(e, _c(1, e)))))  # (e^m - e^-m) / 2 with e = e^m - 1
    half = E.exp(E.mul(E.select(moderate, _c(0, m), m), _c(0.5, m)))
    far = E.mul(E.mul(half, _c(0.5, half)), half)
    return wrap(_odd(a, E.select(small, series, E.select(moderate, mid, far))))


def _sinh_coefficients(dtype: np.dtype[Any]) -> list[float]:
    """``1/3!, 1/5!, ...`` until the terms at |x| = 1 fall well below the dtype's ulp."""
    eps = float(_finfo(dtype).eps)
    coefficients: list[float] = []
    k, term = 3, 1.0 / 6.0
    while term > eps * 1e-3:
        coefficients.append(term)
        term /= (k + 1) * (k + 2)
        k += 2
    return coefficients


def _odd_series(s2: Atom, coefficients: list[float]) -> Atom:
    """``c0 s² + c1 s⁴ + ...`` by Horner's rule in ``s²`` (with ``s * this``: the odd terms from s³ on)."""
    acc = _c(coefficients[-1], s2)
    for c in reversed(coefficients[:-1]):
        acc = E.add(E.mul(acc, s2), _c(c, s2))
    return E.mul(acc, s2)


@op
def cosh(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Hyperbolic cosine, finite up to the largest cosh the dtype holds (``exp(|x|/2)²/2`` near overflow)."""
    a = float_operand("cosh", x).atom
    m = E.select(E.lt(a, _c(0, a)), E.neg(a), a)  # |x| that keeps cosh''(0) = 1 (abs has no derivative at 0)
    moderate = E.lt(m, _c(_overflow_threshold(a), m))
    e = E.exp(E.select(moderate, m, _c(0, m)))
    near = E.add(E.mul(_c(0.5, e), e), E.div(_c(0.5, e), e))
    half = E.exp(E.mul(E.select(moderate, _c(0, m), m), _c(0.5, m)))
    far = E.mul(E.mul(half, _c(0.5, half)), half)
    return wrap(E.select(moderate, near, far))


def _large_argument(a: Atom) -> float:
    """Above this ``1 + x²`` rounds to ``x²``, and ``asinh``/``acosh`` are ``log(2x)``."""
    return 1.0 / math.sqrt(float(_finfo(a.aval.dtype).eps))


@op
def arcsinh(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse hyperbolic sine: ``log1p(m + m² / (1 + sqrt(1 + m²)))`` for ``m = |x|``, ``log(m) + log 2`` for
    large ``m`` (where ``m²`` would overflow)."""
    a = float_operand("arcsinh", x).atom
    m = E.abs(a)
    moderate = E.lt(m, _c(_large_argument(a), m))
    s = E.select(moderate, m, _c(0, m))
    s2 = E.mul(s, s)
    one = _c(1, s)
    near = _log1p(E.add(s, E.div(s2, E.add(one, _sqrt(E.add(one, s2))))))
    far = E.add(E.log(E.select(moderate, _c(1, m), m)), _c(math.log(2.0), m))
    return wrap(_odd(a, E.select(moderate, near, far)))


@op
def arccosh(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse hyperbolic cosine: ``log1p(t + sqrt(t (t + 2)))`` for ``t = x - 1`` (exact near 1); NaN below 1.
    ``t (t + 2)`` is differentiated as ``x² - 1``: the product rule would give NaN (``inf * 0``) at 1, not inf."""
    a = float_operand("arccosh", x).atom
    moderate = E.lt(a, _c(_large_argument(a), a))
    near_one = E.select(moderate, a, _c(1, a))
    t = E.sub(near_one, _c(1, a))
    fixed = stop_gradient(t)
    square = _with_derivatives(E.mul(fixed, E.add(fixed, _c(2, t))), E.sub(E.mul(near_one, near_one), _c(1, a)))
    near = _log1p(E.add(t, _sqrt(square)))
    far = E.add(E.log(E.select(moderate, _c(1, a), a)), _c(math.log(2.0), a))
    out = E.select(moderate, near, far)
    return wrap(E.select(E.lt(a, _c(1, a)), E.scalar(math.nan, out), out))  # x < -1 would pass the formulas


@op
def arctanh(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """Inverse hyperbolic tangent: ``log1p(2m / (1 - m)) / 2`` for ``m = |x|``; ±inf at ±1, NaN beyond. At 1 it is
    ``-log1p(-m) / 2`` instead, whose derivative is inf there too (the quotient's is ``0 / 0``)."""
    a = float_operand("arctanh", x).atom
    m = E.abs(a)
    one = _c(1, m)
    at_one = E.eq(m, one)
    inside = E.select(at_one, _c(0, m), m)  # so the unused quotient's derivative stays finite
    inner = E.div(E.add(inside, inside), E.sub(one, inside))
    edge = E.mul(_log1p(E.neg(m)), _c(-0.5, m))
    return wrap(_odd(a, E.select(at_one, edge, E.mul(_log1p(inner), _c(0.5, m)))))


# ------------------------------------------------------------------------------------ exponentials


@op
def exp2(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """``2 ** x`` (exact at integers)."""
    a = float_operand("exp2", x).atom
    return wrap(E.pow(_c(2, a), a))


@as_binary
@op
def logaddexp(x: Operand, y: Operand) -> AnyTensor:
    """``log(exp(x) + exp(y))`` without overflow: ``max + log1p(exp(-|x - y|))``, and ``x + log 2`` where
    ``x == y`` (so ``logaddexp(-inf, -inf)`` is -inf and ``logaddexp(inf, inf)`` inf)."""
    return wrap(_in_f32(_logaddexp, *_floats("logaddexp", x, y)))


def _logaddexp(a: Atom, b: Atom) -> Atom:
    big, gap = _max_and_gap(a, b)
    return _tied(a, b, math.log(2.0), E.add(big, _log1p(E.exp(gap))))


@as_binary
@op
def logaddexp2(x: Operand, y: Operand) -> AnyTensor:
    """``log2(2**x + 2**y)`` without overflow, as ``logaddexp`` (exactly ``x + 1`` where ``x == y``)."""
    return wrap(_in_f32(_logaddexp2, *_floats("logaddexp2", x, y)))


def _logaddexp2(a: Atom, b: Atom) -> Atom:
    big, gap = _max_and_gap(a, b)
    return _tied(a, b, 1.0, E.add(big, E.div(_log1p(E.pow(_c(2, gap), gap)), _c(math.log(2.0), gap))))


def _max_and_gap(a: Atom, b: Atom) -> tuple[Atom, Atom]:
    """``max(a, b)`` and ``min(a, b) - max(a, b)``, picked by a comparison (no derivative): ``big + f(gap)`` is then
    differentiated as the smooth ``a + f(b - a)`` or ``b + f(a - b)``, ties included, where ``max`` and ``|a - b|``
    have kinks that lose the second derivative. Equal infinities give gap 0, not the NaN a gradient would carry."""
    a_bigger = bind(E.ge_p, a, b)
    big, small = E.select(a_bigger, a, b), E.select(a_bigger, b, a)
    same_infinity = _and(E.eq(a, b), _isinf(a))
    return big, E.select(same_infinity, E.scalar(0, a), E.sub(small, big))


def _tied(a: Atom, b: Atom, offset: float, general: Atom) -> Atom:
    """``general``, except exactly ``a + offset`` where ``a == b`` (finite), as NumPy; differentiated as
    ``general`` there too (its derivatives split evenly between the operands)."""
    tie = _and(E.eq(a, b), bind(E.is_finite_p, a))
    exact = E.add(stop_gradient(a), _c(offset, a))
    return E.select(tie, _with_derivatives(exact, general), general)


@op
def cbrt(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    """The real cube root (negative for negative ``x``)."""
    return wrap(E.cbrt(float_operand("cbrt", x).atom))


@overload
def float_power(
    x: Tensor[Any, Unpack[S]], y: Tensor[Any, Unpack[S]] | Tensor[Any] | Scalar
) -> Tensor[f64, Unpack[S]]: ...
@overload
def float_power(x: Tensor[Any] | Scalar, y: Tensor[Any, Unpack[S]]) -> Tensor[f64, Unpack[S]]: ...
@op
def float_power(x: Operand, y: Operand) -> Tensor[f64, Unpack[tuple[Any, ...]]]:
    """``x ** y`` computed in float64, as NumPy does (the result is float64 whatever the operands' dtype: the one
    function of this namespace whose purpose is to change the dtype)."""
    result_dtype("float_power", (x, y))  # operands of different dtypes are still an error
    wide = np.dtype(np.float64)
    a, b = elementwise_operands("float_power", _to_f64(x), _to_f64(y), dtype=wide)
    return wrap(E.pow(a, b))


def _to_f64(x: Any) -> Any:
    if type(x) in (int, float, bool):
        return float(x)
    return wrap(E.convert(as_tensor(x).atom, np.dtype(np.float64)))


# ---------------------------------------------------------------------------------- rounding, remainders


@op
def trunc(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """Round toward zero (integers are returned as they are, as in NumPy; complex tensors are refused)."""
    a = as_tensor(x).atom
    if _dt.is_complex(a.aval.dtype):
        raise dtype_error("trunc", f"trunc needs a real operand, got {a.aval}: round .real and .imag separately")
    if not _dt.is_float(a.aval.dtype):
        return wrap(a)
    return wrap(E.select(E.lt(a, _c(0, a)), bind(E.ceil_p, a), E.floor(a)))


fix = trunc


@as_binary
@op
def fmod(x: Operand, y: Operand) -> AnyTensor:
    """C's ``fmod``: the remainder of truncated division, with the sign of the dividend (``remainder`` takes the
    divisor's). Integer ``fmod(x, 0)`` is 0, as in NumPy; for floats it is NaN."""
    a, b = elementwise_operands("fmod", x, y)
    if a.aval.dtype == _dt.BOOL:
        raise dtype_error("fmod", f"fmod needs numeric operands, got {a.aval} and {b.aval}")
    r = E.rem(a, b)
    if _dt.is_float(a.aval.dtype):
        return wrap(r)
    return wrap(E.select(E.eq(b, _c(0, b)), E.scalar(0, r), r))


# ------------------------------------------------------------------------------------------ signs


@as_binary
@op
def copysign(x: Operand, y: Operand) -> AnyTensor:
    """``|x|`` with the sign of ``y`` (-0 counts as negative; a NaN ``y`` counts as positive, see ``signbit``)."""
    a, b = _floats("copysign", x, y)
    m = E.abs(a)
    return wrap(E.select(_signbit(b), E.neg(m), m))


@op
def signbit(x: Tensor[DT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    """True where the sign bit is set: negative numbers, -0 and NaNs with the sign bit set (as NumPy)."""
    a = as_tensor(x).atom
    if a.aval.dtype == _dt.BOOL:
        raise dtype_error("signbit", f"signbit needs a numeric operand, got {a.aval}")
    if _dt.is_float(a.aval.dtype):
        return wrap(_signbit(a))
    return wrap(E.lt(a, _c(0, a)))  # unsigned: never true


@as_binary
@op
def heaviside(x: Operand, y: Operand) -> AnyTensor:
    """The step function: 0 for ``x < 0``, ``y`` at ``x == 0``, 1 for ``x > 0``, NaN for NaN. Its gradient with
    respect to ``x`` is 0; ``y`` gets the gradient where it is chosen."""
    a, b = _floats("heaviside", x, y)
    zero = E.eq(a, _c(0, a))
    step = E.select(E.lt(a, _c(0, a)), E.scalar(0, a), E.scalar(1, a))
    step = E.select(_isnan(a), E.scalar(math.nan, a), step)
    return wrap(E.select(zero, b, step))


# -------------------------------------------------------------------------------------- NaN and extrema


@op
def nan_to_num(
    x: Tensor[DT, Unpack[Shape]],
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Tensor[DT, Unpack[Shape]]:
    """NaN to ``nan``, inf to ``posinf`` and -inf to ``neginf`` (by default the dtype's largest and smallest finite
    values). ``copy`` is accepted for NumPy's signature; arrays are immutable, so there is nothing to copy.
    Integer and bool tensors come back as they are; of a complex tensor, each part is replaced (as NumPy)."""
    a = as_tensor(x).atom
    dtype = a.aval.dtype
    if _dt.is_complex(dtype):
        parts = (as_tensor(nan_to_num(wrap(part), copy, nan, posinf, neginf)).atom for part in (C.real(a), C.imag(a)))
        return wrap(C.complex(*parts))
    if not _dt.is_float(dtype):
        return wrap(a)
    info = _finfo(dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = E.select(_isnan(a), atom(nan, dtype), a)
    out = E.select(E.eq(a, _c(math.inf, a)), atom(hi, dtype), out)
    return wrap(E.select(E.eq(a, _c(-math.inf, a)), atom(lo, dtype), out))


def _nan_ignoring(name: str, x: Any, y: Any, pick: Any) -> AnyTensor:
    a, b = elementwise_operands(name, x, y)
    out = pick(a, b)
    if not _dt.is_float(a.aval.dtype):
        return wrap(out)
    out = E.select(_isnan(b), a, out)  # only b is NaN: a (a NaN too if both are)
    return wrap(E.select(_isnan(a), b, out))


@as_binary
@op
def fmax(x: Operand, y: Operand) -> AnyTensor:
    """Elementwise maximum that ignores NaNs: NaN only where both operands are NaN (``maximum`` propagates them)."""
    return _nan_ignoring("fmax", x, y, E.maximum)


@as_binary
@op
def fmin(x: Operand, y: Operand) -> AnyTensor:
    """Elementwise minimum that ignores NaNs (see ``fmax``)."""
    return _nan_ignoring("fmin", x, y, E.minimum)


# ------------------------------------------------------------------------------------------ closeness


class IsClose(Protocol):
    """``isclose(a, b, ...)``: operands as for ``Comparison``, a bool result."""

    @overload
    def __call__(
        self,
        a: Tensor[DT, Unpack[S]],
        b: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor[bool_, Unpack[S]]: ...
    @overload
    def __call__(
        self,
        a: Tensor[DT] | Scalar,
        b: Tensor[DT, Unpack[S]],
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor[bool_, Unpack[S]]: ...
    @overload
    def __call__(
        self, a: Tensor[DT, Unpack[S], K], b: Tensor[DT, K], rtol: float = 1e-05, atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __call__(
        self, a: Tensor[DT, K], b: Tensor[DT, Unpack[S], K], rtol: float = 1e-05, atol: float = 1e-08,
        equal_nan: bool = False,
    ) -> Tensor[bool_, Unpack[S], K]: ...


def _is_finite(a: Atom) -> Atom:
    if _dt.is_complex(a.aval.dtype):
        return _and(bind(E.is_finite_p, C.real(a)), bind(E.is_finite_p, C.imag(a)))
    return bind(E.is_finite_p, a)  # type: ignore[no-any-return]


def _isclose(name: str, x: Any, y: Any, rtol: float, atol: float, equal_nan: bool) -> Atom:
    a, b = elementwise_operands(name, x, y)
    if not _dt.is_inexact(a.aval.dtype):  # NumPy compares integers in float64 too (exact for 32-bit ones)
        wide = np.dtype(np.float64)
        a, b = E.convert(a, wide), E.convert(b, wide)
    diff = E.abs(E.sub(a, b))  # complex operands: the modulus of the difference, as NumPy
    part = diff.aval.dtype
    bound = E.add(atom(float(atol), part), E.mul(atom(float(rtol), part), E.abs(b)))
    finite = _and(_is_finite(a), _is_finite(b))
    close = _or(_and(finite, bind(E.le_p, diff, bound)), E.eq(a, b))  # a == b: equal infinities
    if equal_nan:
        close = _or(close, _and(_isnan(a), _isnan(b)))
    return close


def _isclose_impl(
    a: Operand, b: Operand, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> AnyTensor:
    """Where ``|a - b| <= atol + rtol * |b|`` (not symmetric, as NumPy); infinities are close only to themselves,
    NaNs to nothing unless ``equal_nan``."""
    return wrap(_isclose("isclose", a, b, rtol, atol, equal_nan))


_isclose_impl.__name__ = _isclose_impl.__qualname__ = "isclose"
isclose: IsClose = op(_isclose_impl)


@op
def allclose(
    a: Operand, b: Operand, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor[bool_]:
    """Whether ``isclose`` holds everywhere, as a 0-d bool tensor (an array outside staging; NumPy returns a Python
    bool: ``bool(tnp.allclose(a, b))`` or ``if tnp.allclose(a, b):`` give one)."""
    close = _isclose("allclose", a, b, rtol, atol, equal_nan)
    return wrap(R.reduce_min(close, tuple(range(close.aval.ndim))))


__all__ = [
    "allclose", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "cbrt", "copysign",
    "cosh", "deg2rad", "degrees", "exp2", "fix", "float_power", "fmax", "fmin", "fmod", "heaviside", "hypot",
    "isclose", "logaddexp", "logaddexp2", "nan_to_num", "rad2deg", "radians", "signbit", "sinc", "sinh", "trunc",
]
