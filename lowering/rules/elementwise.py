"""StableHLO for the elementwise family. Rank-0 operands of shaped ops are broadcast here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import elementwise as E
from ..emit import PLAIN_OPS, SPLAT_SCALAR_OPERANDS, Emitter, Value, i64_array, lowers

_SIMPLE = {
    E.add_p: "add", E.sub_p: "subtract", E.mul_p: "multiply", E.div_p: "divide", E.rem_p: "remainder",
    E.pow_p: "power", E.max_p: "maximum", E.min_p: "minimum", E.neg_p: "negate", E.exp_p: "exponential",
    E.log_p: "log", E.log1p_p: "log_plus_one", E.expm1_p: "exponential_minus_one", E.tanh_p: "tanh",
    E.logistic_p: "logistic", E.sin_p: "sine", E.cos_p: "cosine", E.sqrt_p: "sqrt", E.rsqrt_p: "rsqrt",
    E.floor_p: "floor", E.ceil_p: "ceil", E.round_p: "round_nearest_even",
    E.and_p: "and", E.or_p: "or", E.xor_p: "xor", E.not_p: "not", E.is_finite_p: "is_finite",
    E.shift_left_p: "shift_left", E.shift_right_logical_p: "shift_right_logical", E.select_p: "select",
}

_COMPARISONS = {E.eq_p: "EQ", E.ne_p: "NE", E.lt_p: "LT", E.le_p: "LE", E.gt_p: "GT", E.ge_p: "GE"}


_SCALAR_BROADCAST = f"broadcast_dimensions = {i64_array(())}"


def widen(em: Emitter, value: Value, shape: tuple[int, ...], like: Aval | None = None) -> Value:
    """Broadcast a rank-0 operand to ``shape`` (elementwise primitives accept scalars); ``like``: a type of that
    shape and the operand's dtype that the caller already has (dim names do not matter here)."""
    if value.aval.shape == shape:
        return value
    aval = like if like is not None else Aval(shape, value.aval.dtype)
    return em.op("stablehlo.broadcast_in_dim", (value,), (aval,), _SCALAR_BROADCAST)[0]


def _simple_rule(op_name: str) -> Any:
    full_name = op_name if "." in op_name else f"stablehlo.{op_name}"

    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
        out = outs[0]
        shape = out.shape
        for a in args:  # operands mostly have the result's shape already: no list to rebuild then
            if a.aval.shape != shape:
                args = [
                    a if a.aval.shape == shape else widen(em, a, shape, out if a.aval.dtype is out.dtype else None)
                    for a in args
                ]
                break
        return em.op(full_name, args, outs)

    return rule


for _prim, _name in _SIMPLE.items():
    lowers(_prim)(_simple_rule(_name))
    SPLAT_SCALAR_OPERANDS.add(_prim)
    PLAIN_OPS[_prim] = f"stablehlo.{_name}"

# CHLO ops: XLA's compile path (jaxlib 0.10.2) parses and legalizes them; no StableHLO op exists for these.
_CHLO = {E.erf_p: "chlo.erf", E.erf_inv_p: "chlo.erf_inv"}

for _prim, _name in _CHLO.items():
    lowers(_prim)(_simple_rule(_name))
    SPLAT_SCALAR_OPERANDS.add(_prim)
    PLAIN_OPS[_prim] = _name


def _unsigned_aware(prim: Any, op_name: str) -> None:
    """StableHLO's abs and sign take signless integers only: on unsigned ones abs is x and sign is x != 0."""
    signed_rule = _simple_rule(op_name)

    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
        (x,) = args
        if x.aval.dtype not in dtypes.UNSIGNED:
            return signed_rule(em, args, outs)  # type: ignore[no-any-return]
        if prim is E.abs_p:
            return [x]
        nonzero = compare(em, x, em.splat(np.asarray(0, x.aval.dtype), Aval(x.aval.shape, x.aval.dtype)), "NE")
        return em.op("stablehlo.convert", [nonzero], outs)

    lowers(prim)(rule)


_unsigned_aware(E.abs_p, "abs")
_unsigned_aware(E.sign_p, "sign")


def compare_type(dtype: np.dtype[Any]) -> str:
    if dtypes.is_inexact(dtype):  # complex numbers compare (EQ and NE only) as floats do
        return "FLOAT"
    if dtype in dtypes.SIGNED:
        return "SIGNED"
    return "UNSIGNED"


def compare(em: Emitter, x: Value, y: Value, direction: str) -> Value:
    shape = x.aval.shape if x.aval.ndim else y.aval.shape
    out = Aval(shape, dtypes.BOOL)
    props = (
        f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
        f"compare_type = #stablehlo<comparison_type {compare_type(x.aval.dtype)}>"
    )
    return em.op("stablehlo.compare", [widen(em, x, shape), widen(em, y, shape)], [out], props)[0]


def _compare_rule(direction: str) -> Any:
    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
        return [compare(em, args[0], args[1], direction)]

    return rule


for _prim, _direction in _COMPARISONS.items():
    lowers(_prim)(_compare_rule(_direction))
    SPLAT_SCALAR_OPERANDS.add(_prim)


def _smallest_normal(dtype: np.dtype[Any]) -> float:
    try:
        return float(np.finfo(dtype).tiny)
    except ValueError:  # bfloat16: NumPy has no finfo for ml_dtypes' types
        import ml_dtypes

        return float(ml_dtypes.finfo(dtype).tiny)  # type: ignore[no-untyped-call]


@lowers(E.cbrt_p)
def _cbrt(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    """XLA's cbrt returns garbage for a subnormal operand (-5.6e-16 for every f32 subnormal, on CPU)."""
    aval = outs[0]
    return em.op("stablehlo.cbrt", [_flush_subnormal(em, widen(em, args[0], aval.shape, aval), aval)], outs)


def _flush_subnormal(em: Emitter, x: Value, aval: Aval) -> Value:
    """``x`` with subnormals replaced by a zero of their sign: what XLA's CPU arithmetic reads them as (it flushes
    subnormals), but not what some of its expansions, which test the operand's bits, see."""
    tiny = em.splat(np.asarray(_smallest_normal(aval.dtype), aval.dtype), aval)
    small = compare(em, em.op("stablehlo.abs", [x], [aval])[0], tiny, "LT")
    signed_zero = em.op("stablehlo.multiply", [x, em.splat(np.asarray(0, aval.dtype), aval)], [aval])[0]
    return em.op("stablehlo.select", [small, signed_zero, x], [aval])[0]


@lowers(E.atan2_p)
def _atan2(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    """XLA's atan2 gives NaN or a wrong quadrant for two subnormal operands (CPU, jaxlib 0.10.2)."""
    aval = outs[0]
    x, y = (_flush_subnormal(em, widen(em, a, aval.shape, aval), aval) for a in args)
    return em.op("stablehlo.atan2", [x, y], outs)


@lowers(E.clamp_p)
def _clamp(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    lo, x, hi = args
    shape = outs[0].shape
    # StableHLO clamp takes scalar bounds directly, but the operand itself must have the result's shape.
    return em.op("stablehlo.clamp", [lo, widen(em, x, shape), hi], outs)


@lowers(E.convert_p)
def _convert(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, new_dtype: Any) -> list[Value]:
    (x,) = args
    if new_dtype == dtypes.BOOL and x.aval.dtype != dtypes.BOOL:
        zero = em.splat(np.asarray(0, x.aval.dtype), Aval(x.aval.shape, x.aval.dtype))
        return [compare(em, x, zero, "NE")]
    return em.op("stablehlo.convert", [x], outs)


@lowers(E.bitcast_convert_p)
def _bitcast_convert(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, new_dtype: Any) -> list[Value]:
    return em.op("stablehlo.bitcast_convert", args, outs)


@lowers(E.integer_pow_p)
def _integer_pow(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, y: int) -> list[Value]:
    (x,) = args
    aval = outs[0]
    if y == 0:
        return [em.splat(np.asarray(1, aval.dtype), aval)]
    result: Value | None = None
    base = x
    n = abs(y)
    while n:  # square-and-multiply
        if n & 1:
            result = base if result is None else em.op("stablehlo.multiply", [result, base], [aval])[0]
        n >>= 1
        if n:
            base = em.op("stablehlo.multiply", [base, base], [aval])[0]
    assert result is not None
    if y < 0:
        one = em.splat(np.asarray(1, aval.dtype), aval)
        result = em.op("stablehlo.divide", [one, result], [aval])[0]
    return [result]
