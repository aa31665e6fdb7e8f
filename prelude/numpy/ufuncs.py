"""Elementwise functions with NumPy's names: arithmetic, transcendental, comparison and logic.

Operands broadcast under tensorstage's policy (see ``_core.broadcast_shapes``); array dtypes never promote,
Python scalars adopt the array's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, bool_, to_numpy
from ...op_signatures import Binary, Comparison, as_binary, as_comparison, as_where
from ...shape_typing import FloatUnary
from ...staging import dtypes as _dt
from ...staging.builder import _STACK, bind
from ...staging.errors import StagingError
from ...staging.ir import Atom, literal
from ...staging.primitive import Primitive
from ...staging.source import user_location
from ...staging.primitives import elementwise as E
from ...tensor import Tensor, Traced
from ._core import (
    _named, as_tensor, atom, broadcast_atoms, dtype_error, elementwise_operands, float_operand, op, result_dtype, wrap,
)

DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
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
    elif type(x) is Traced and type(y) in _PY_NUMBERS and _dt.is_float(x.aval.dtype):
        # Fast path: a float tensor and a Python number (``lr * g``), which adopts the tensor's dtype and stays a
        # rank-0 operand: what elementwise_operands gives, without its general checks.
        return wrap(bind(prim, x.atom, _number(y, x.aval.dtype)))
    elif type(y) is Traced and type(x) in _PY_NUMBERS and _dt.is_float(y.aval.dtype):
        return wrap(bind(prim, _number(x, y.aval.dtype), y.atom))
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


@as_binary
@op
def add(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("add", E.add_p, x, y)


@as_binary
@op
def subtract(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("subtract", E.sub_p, x, y)


@as_binary
@op
def multiply(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("multiply", E.mul_p, x, y)


@as_binary
@op
def true_divide(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    a, b = elementwise_operands("divide", x, y)
    if not _dt.is_float(a.aval.dtype):
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
    a, b = elementwise_operands("floor_divide", x, y)
    if _dt.is_float(a.aval.dtype):
        return wrap(_float_floor_divide(a, b))
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
    """Python/NumPy modulo: the result has the sign of the divisor."""
    a, b = elementwise_operands("remainder", x, y)
    r = E.rem(a, b)
    if _dt.is_integer(a.aval.dtype) and not _dt.is_signed(a.aval.dtype):
        return wrap(_zero_where_divisor_zero(b, r))
    zero = E.scalar(0, r)
    nonzero = bind(E.ne_p, r, zero)
    signs_differ = bind(E.ne_p, E.lt(r, zero), E.lt(b, zero))
    out = E.select(bind(E.and_p, nonzero, signs_differ), E.add(r, b), r)
    return wrap(out if _dt.is_float(a.aval.dtype) else _zero_where_divisor_zero(b, out))


mod = remainder


@as_binary
@op
def power(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    if type(y) is int and not isinstance(x, (int, float)):
        return wrap(E.integer_pow(as_tensor(x).atom, y))
    return _binary("power", E.pow_p, x, y)


@as_binary
@op
def maximum(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("maximum", E.max_p, x, y)


@as_binary
@op
def minimum(x: Operand, y: Operand) -> Tensor[Any, Unpack[tuple[Any, ...]]]:
    return _binary("minimum", E.min_p, x, y)


@op
def negative(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return _unary(E.neg_p, x)


def positive(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return x


@op
def abs(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:  # noqa: A001 - NumPy's name
    return _unary(E.abs_p, x)


absolute = abs


@op
def sign(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return _unary(E.sign_p, x)


@op
def square(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    return wrap(E.integer_pow(as_tensor(x).atom, 2))


@op
def reciprocal(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    a = float_operand("reciprocal", x).atom
    return wrap(E.div(E.scalar(1, a), a))


# ------------------------------------------------------------------------------------- transcendental


def _float_unary(name: str, prim: Primitive) -> FloatUnary:
    floats = _dt.FLOATS

    def fn(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
        if type(x) is Traced and x.atom.aval.dtype in floats:  # what ``float_operand`` accepts, without its calls
            return wrap(bind(prim, x.atom))
        return wrap(bind(prim, float_operand(name, x).atom))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of a floating-point tensor."
    return op(fn)


exp = _float_unary("exp", E.exp_p)
log = _float_unary("log", E.log_p)
log1p = _float_unary("log1p", E.log1p_p)
expm1 = _float_unary("expm1", E.expm1_p)
tanh = _float_unary("tanh", E.tanh_p)
sin = _float_unary("sin", E.sin_p)
cos = _float_unary("cos", E.cos_p)
sqrt = _float_unary("sqrt", E.sqrt_p)
rsqrt = _float_unary("rsqrt", E.rsqrt_p)
floor = _float_unary("floor", E.floor_p)
ceil = _float_unary("ceil", E.ceil_p)
rint = _float_unary("rint", E.round_p)  # half to even, as NumPy


@op
def round(x: Tensor[FT, Unpack[Shape]], decimals: int = 0) -> Tensor[FT, Unpack[Shape]]:  # noqa: A001 - NumPy's
    """Round half to even at ``decimals`` digits, as NumPy does: ``rint(x * 10**decimals) / 10**decimals``
    (XLA may compute the division as a multiplication, so results can differ from NumPy's by an ulp)."""
    a = float_operand("round", x).atom
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    if decimals == 0:
        return wrap(bind(E.round_p, a))
    scale = E.scalar(10.0**decimals, a)
    return wrap(E.div(bind(E.round_p, E.mul(a, scale)), scale))
sigmoid = _float_unary("sigmoid", E.logistic_p)


@op
def tan(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    a = float_operand("tan", x).atom
    return wrap(E.div(E.sin(a), E.cos(a)))


@op
def log2(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    a = float_operand("log2", x).atom
    return wrap(E.div(E.log(a), E.scalar(float(np.log(2.0)), a)))


@op
def log10(x: Tensor[FT, Unpack[Shape]]) -> Tensor[FT, Unpack[Shape]]:
    a = float_operand("log10", x).atom
    return wrap(E.div(E.log(a), E.scalar(float(np.log(10.0)), a)))


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


@op
def isfinite(x: Tensor[FT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    return wrap(bind(E.is_finite_p, float_operand("isfinite", x).atom))


@op
def isnan(x: Tensor[FT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = float_operand("isnan", x).atom
    return wrap(bind(E.ne_p, a, a))


@op
def isinf(x: Tensor[FT, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    a = float_operand("isinf", x).atom
    finite = bind(E.is_finite_p, a)
    not_nan = bind(E.eq_p, a, a)
    return wrap(bind(E.and_p, bind(E.not_p, finite), not_nan))


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
    """Convert to ``dtype`` (a tensorstage dtype such as ``f32`` or a NumPy dtype). Float -> int truncates."""
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
    "abs", "absolute", "add", "astype", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "ceil", "clip",
    "cos", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "invert",
    "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10", "log1p", "log2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply", "negative", "not_equal",
    "positive", "power", "reciprocal", "remainder", "rint", "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt",
    "square", "subtract", "tan", "tanh", "true_divide", "where",
]
