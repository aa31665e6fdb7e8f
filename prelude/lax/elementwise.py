"""``lax``'s elementwise functions: each binds its primitive on strict operands (one dtype; one shape, or rank 0
beside a shaped operand), or, for functions that are compositions in tensorstage, calls the ``tensorstage.numpy``
function after the same checks. Semantics are XLA's, as in JAX: ``div`` of integers rounds toward zero and
``rem`` takes the dividend's sign; ``round`` rounds halves away from zero unless told otherwise; ``max``/``min``
propagate NaN."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...custom_derivatives import custom_jvp
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import special as SP
from ...staging.primitive import Primitive
from ...tensor import Tensor
from .. import numpy as tnp
from ..scipy import special as scipy_special
from ..numpy._core import as_tensor, dtype_error, op, wrap
from ._operands import same_shapes, strict_atoms
from .signatures import Binary, Comparison, Magnitude, Predicate, Unary

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bessel_i0e", "bessel_i1e", "betainc",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil", "complex", "conj", "cos", "cosh",
    "digamma", "div", "eq", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor", "ge", "gt", "igamma",
    "igamma_grad_a", "igammac", "imag", "integer_pow", "is_finite", "le", "lgamma", "log", "log1p", "log2",
    "logistic", "lt", "max", "min", "mul", "ne", "neg", "nextafter", "one_minus_square", "polygamma",
    "population_count", "pow", "real", "reciprocal", "rem", "round", "RoundingMethod", "rsqrt", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
    "zeta",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")
F = TypeVar("F", bound=Callable[..., Any])


def _public(name: str, fn: F, doc: str) -> F:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return op(fn)


def _unary(name: str, prim: Primitive) -> Any:
    def fn(x: Any) -> AnyTensor:
        return wrap(bind(prim, *strict_atoms(name, x)))

    return _public(name, fn, f"``{name}(x)`` elementwise (the ``{prim.name}`` primitive).")


def _binary(name: str, prim: Primitive) -> Any:
    def fn(x: Any, y: Any) -> AnyTensor:
        return wrap(bind(prim, *strict_atoms(name, x, y)))

    return _public(name, fn, f"``{name}(x, y)`` elementwise on operands of one dtype (the ``{prim.name}`` primitive).")


def _unary_via(name: str, numpy_fn: Callable[[Any], Any]) -> Any:
    def fn(x: Any) -> AnyTensor:
        return numpy_fn(wrap(strict_atoms(name, x)[0]))  # type: ignore[no-any-return]

    return _public(name, fn, f"``{name}(x)`` elementwise (as ``tnp.{numpy_fn.__name__}``).")


def _binary_via(name: str, numpy_fn: Callable[[Any, Any], Any]) -> Any:
    def fn(x: Any, y: Any) -> AnyTensor:
        a, b = same_shapes(name, strict_atoms(name, x, y))
        return numpy_fn(wrap(a), wrap(b))  # type: ignore[no-any-return]

    return _public(name, fn, f"``{name}(x, y)`` elementwise on operands of one dtype and shape (as ``tnp.{numpy_fn.__name__}``).")


neg: Unary = _unary("neg", E.neg_p)
exp: Unary = _unary("exp", E.exp_p)
log: Unary = _unary("log", E.log_p)
log1p: Unary = _unary("log1p", E.log1p_p)
expm1: Unary = _unary("expm1", E.expm1_p)
tanh: Unary = _unary("tanh", E.tanh_p)
logistic: Unary = _unary("logistic", E.logistic_p)
sin: Unary = _unary("sin", E.sin_p)
cos: Unary = _unary("cos", E.cos_p)
sqrt: Unary = _unary("sqrt", E.sqrt_p)
rsqrt: Unary = _unary("rsqrt", E.rsqrt_p)
cbrt: Unary = _unary("cbrt", E.cbrt_p)
sign: Unary = _unary("sign", E.sign_p)
floor: Unary = _unary("floor", E.floor_p)
ceil: Unary = _unary("ceil", E.ceil_p)
erf: Unary = _unary("erf", E.erf_p)
erf_inv: Unary = _unary("erf_inv", E.erf_inv_p)
bitwise_not: Unary = _unary("bitwise_not", E.not_p)
conj: Unary = _unary("conj", C.conj_p)
abs: Magnitude = _unary("abs", E.abs_p)  # noqa: A001 - lax's name
is_finite: Predicate = _unary("is_finite", E.is_finite_p)

tan: Unary = _unary_via("tan", tnp.tan)
asin: Unary = _unary_via("asin", tnp.arcsin)
acos: Unary = _unary_via("acos", tnp.arccos)
atan: Unary = _unary_via("atan", tnp.arctan)
sinh: Unary = _unary_via("sinh", tnp.sinh)
cosh: Unary = _unary_via("cosh", tnp.cosh)
asinh: Unary = _unary_via("asinh", tnp.arcsinh)
acosh: Unary = _unary_via("acosh", tnp.arccosh)
atanh: Unary = _unary_via("atanh", tnp.arctanh)
exp2: Unary = _unary_via("exp2", tnp.exp2)
square: Unary = _unary_via("square", tnp.square)
log2: Unary = _unary_via("log2", tnp.log2)


@custom_jvp
def _one_minus_square(x: Any) -> Any:
    return (1 + x) * (1 - x)  # not 1 - x², which cancels as |x| -> 1


@_one_minus_square.defjvp
def _one_minus_square_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _one_minus_square(x), -2 * x * t  # not (1 - x) - (1 + x), which cancels as x -> 0


def _one_minus_square_op(x: Any) -> AnyTensor:
    (a,) = strict_atoms("one_minus_square", x)
    return _one_minus_square(wrap(a))  # type: ignore[no-any-return]


one_minus_square: Unary = _public("one_minus_square", _one_minus_square_op,
                                  "``1 - x²`` as ``(1 + x)(1 - x)``, with the derivative ``-2x`` (JAX's).")


def _population_count(x: Any) -> AnyTensor:
    # tnp.bitwise_count counts |x|'s bits (NumPy's rule) in uint8; XLA counts the two's-complement bits, in x's dtype.
    (a,) = strict_atoms("population_count", x)
    if not _dt.is_integer(a.aval.dtype):
        raise dtype_error("population_count", f"lax.population_count needs an integer operand, got {a.aval}")
    # A negative x's bits are the complement of ~x's (which is >= 0).
    x_ = wrap(a)
    counts = tnp.where(x_ < 0, a.aval.dtype.itemsize * 8 - tnp.bitwise_count(~x_).astype(a.aval.dtype),
                       tnp.bitwise_count(x_).astype(a.aval.dtype))
    return counts.astype(a.aval.dtype)


population_count: Unary = _public("population_count", _population_count,
                                  "``population_count(x)``: the set bits of each integer's two's complement, in its dtype.")
lgamma: Unary = _unary("lgamma", SP.lgamma_p)
digamma: Unary = _unary("digamma", SP.digamma_p)
erfc: Unary = _unary("erfc", SP.erfc_p)
bessel_i0e: Unary = _unary("bessel_i0e", SP.bessel_i0e_p)
bessel_i1e: Unary = _unary("bessel_i1e", SP.bessel_i1e_p)

add: Binary = _binary("add", E.add_p)
sub: Binary = _binary("sub", E.sub_p)
mul: Binary = _binary("mul", E.mul_p)
div: Binary = _binary("div", E.div_p)
rem: Binary = _binary("rem", E.rem_p)
pow: Binary = _binary("pow", E.pow_p)  # noqa: A001 - lax's name
max: Binary = _binary("max", E.max_p)  # noqa: A001 - lax's name
min: Binary = _binary("min", E.min_p)  # noqa: A001 - lax's name
atan2: Binary = _binary("atan2", E.atan2_p)
bitwise_and: Binary = _binary("bitwise_and", E.and_p)
bitwise_or: Binary = _binary("bitwise_or", E.or_p)
bitwise_xor: Binary = _binary("bitwise_xor", E.xor_p)
shift_left: Binary = _binary("shift_left", E.shift_left_p)
shift_right_logical: Binary = _binary("shift_right_logical", E.shift_right_logical_p)
nextafter: Binary = _binary_via("nextafter", tnp.nextafter)
zeta: Binary = _binary("zeta", SP.zeta_p)
igamma: Binary = _binary("igamma", SP.igamma_p)
igammac: Binary = _binary("igammac", SP.igammac_p)
igamma_grad_a: Binary = _binary("igamma_grad_a", SP.igamma_grad_a_p)

eq: Comparison = _binary("eq", E.eq_p)
ne: Comparison = _binary("ne", E.ne_p)
lt: Comparison = _binary("lt", E.lt_p)
le: Comparison = _binary("le", E.le_p)
gt: Comparison = _binary("gt", E.gt_p)
ge: Comparison = _binary("ge", E.ge_p)


@op
def real(x: AnyTensor) -> AnyTensor:
    """The real part of a complex tensor (f32 for c64, f64 for c128)."""
    return tnp.real(x)


@op
def imag(x: AnyTensor) -> AnyTensor:
    """The imaginary part of a complex tensor (f32 for c64, f64 for c128)."""
    return tnp.imag(x)


@op
def complex(x: AnyTensor | float, y: AnyTensor | float) -> AnyTensor:  # noqa: A001 - lax's name
    """``x + i y`` from two real operands of one dtype (f32 gives c64, f64 gives c128)."""
    a, b = strict_atoms("complex", x, y)
    return wrap(bind(C.complex_p, a, b))


@op
def betainc(a: AnyTensor | float, b: AnyTensor | float, x: AnyTensor | float) -> AnyTensor:
    """The regularized incomplete beta function ``I_x(a, b)`` on operands of one dtype."""
    return wrap(SP.betainc(*strict_atoms("betainc", a, b, x)))


@op
def polygamma(m: AnyTensor | float, x: AnyTensor | float) -> AnyTensor:
    """The ``m``-th derivative of digamma at ``x`` (``m`` a non-negative integer value of ``x``'s dtype)."""
    a, b = strict_atoms("polygamma", m, x)
    return scipy_special.polygamma(wrap(a), wrap(b))


@op
def reciprocal(x: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]:
    """``1 / x`` in ``x``'s dtype (integers divide as ``div``: toward zero)."""
    (a,) = strict_atoms("reciprocal", x)
    return wrap(bind(E.div_p, E.scalar(1, a), a))


@op
def integer_pow(x: Tensor[DT, Unpack[S]], y: int) -> Tensor[DT, Unpack[S]]:
    """``x ** y`` for a static Python int ``y`` (repeated multiplication; a negative ``y`` divides)."""
    if not isinstance(y, int) or isinstance(y, bool):
        raise TypeError(f"lax.integer_pow: the exponent must be a Python int, got {y!r}")
    (a,) = strict_atoms("integer_pow", x)
    return wrap(E.integer_pow(a, y))


class RoundingMethod(enum.IntEnum):
    """How ``round`` treats halves: away from zero (``lax``'s default) or to the nearest even number (NumPy's)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


@op
def round(x: Tensor[DT, Unpack[S]], rounding_method: int = RoundingMethod.AWAY_FROM_ZERO) -> Tensor[DT, Unpack[S]]:  # noqa: A001
    """Round to an integral value; halves go away from zero unless ``rounding_method`` says TO_NEAREST_EVEN."""
    (a,) = strict_atoms("round", x)
    if not _dt.is_float(a.aval.dtype):
        raise dtype_error("round", f"lax.round needs a real floating-point operand, got {a.aval}")
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return wrap(bind(E.round_p, a))
    if rounding_method != RoundingMethod.AWAY_FROM_ZERO:
        raise ValueError(f"lax.round: rounding_method must be a RoundingMethod, got {rounding_method!r}")
    magnitude = bind(E.abs_p, a)
    whole = bind(E.floor_p, magnitude)
    half_up = bind(E.ge_p, bind(E.sub_p, magnitude, whole), E.scalar(0.5, a))
    rounded = bind(E.select_p, half_up, bind(E.add_p, whole, E.scalar(1, a)), whole)
    return wrap(bind(E.select_p, bind(E.lt_p, a, E.scalar(0, a)), bind(E.neg_p, rounded), rounded))


@op
def shift_right_arithmetic(x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | int) -> Tensor[DT, Unpack[S]]:
    """``x >> y`` filling with the sign bit; unsigned operands are shifted as their signed bit pattern (as XLA)."""
    a, b = same_shapes("shift_right_arithmetic", strict_atoms("shift_right_arithmetic", x, y))
    dtype = a.aval.dtype
    if not _dt.is_integer(dtype):
        raise dtype_error("shift_right_arithmetic", f"lax.shift_right_arithmetic needs integer operands, got {a.aval}")
    if _dt.is_signed(dtype):
        return tnp.right_shift(wrap(a), wrap(b))
    signed = np.dtype(f"int{8 * dtype.itemsize}")
    shifted = tnp.right_shift(wrap(E.bitcast_convert(a, signed)), wrap(E.bitcast_convert(b, signed)))
    return wrap(E.bitcast_convert(as_tensor(shifted).atom, dtype))

