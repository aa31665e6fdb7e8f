"""StableHLO for the elementwise family. Rank-0 operands of shaped ops are broadcast here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    SPLAT_SCALAR_OPERANDS.add(_prim)
    if _prim is not E.log1p_p:  # its rule (below) looks at the dtype
        lowers(_prim)(_simple_rule(_name))
        PLAIN_OPS[_prim] = f"stablehlo.{_name}"

# CHLO ops: XLA's compile path (jaxlib 0.10.2) parses and legalizes them; no StableHLO op exists for these.
_CHLO = {E.erf_p: "chlo.erf", E.erf_inv_p: "chlo.erf_inv"}

for _prim, _name in _CHLO.items():
    lowers(_prim)(_simple_rule(_name))
    SPLAT_SCALAR_OPERANDS.add(_prim)
    PLAIN_OPS[_prim] = _name


_plain_log1p: Callable[[Emitter, Sequence[Value], Sequence[Aval]], list[Value]] = _simple_rule("log_plus_one")
_F64 = np.dtype(np.float64)
# XLA's f64 log_plus_one is up to 128 ulps off on [-0.4143, -0.3645] (its approximation's seam); log(1 + x) there
# is within 2 ulps (1 + x rounds by at most half an ulp of a number near 0.6).
_LOG1P_BAND = (-0.42, -0.25)


@lowers(E.log1p_p)
def _log1p(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    if outs[0].dtype != _F64:
        return _plain_log1p(em, args, outs)
    (x,) = args
    one = widen(em, em.scalar(1.0, _F64), x.aval.shape)
    direct = em.op("stablehlo.log", [em.op("stablehlo.add", [x, one], [x.aval])[0]], [x.aval])[0]
    fast = _plain_log1p(em, args, outs)[0]
    low, high = (widen(em, em.scalar(bound, _F64), x.aval.shape) for bound in _LOG1P_BAND)
    inside = em.op("stablehlo.and", [compare(em, x, low, "GE"), compare(em, x, high, "LE")],
                   [Aval(x.aval.shape, dtypes.BOOL)])[0]
    return em.op("stablehlo.select", [inside, direct, fast], outs)


_signed_abs = _simple_rule("abs")


@lowers(E.abs_p)
def _abs(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    """StableHLO's abs takes signless integers only: on unsigned ones abs is x."""
    dtype = args[0].aval.dtype
    if dtype in dtypes.UNSIGNED:
        return [args[0]]
    if dtype in dtypes.COMPLEX:
        return [_complex_abs(em, args[0], outs[0])]
    return _signed_abs(em, args, outs)  # type: ignore[no-any-return]


def _complex_abs(em: Emitter, z: Value, out: Aval) -> Value:
    """|z| is inf where a part is infinite, even beside a NaN, as C's hypot and NumPy give it (XLA: NaN)."""
    modulus = em.op("stablehlo.abs", [z], [out])[0]
    _, _, (re_inf, im_inf) = _parts(em, z, out)
    either = em.op("stablehlo.or", [re_inf, im_inf], [re_inf.aval])[0]
    return em.op("stablehlo.select", [either, em.splat(np.asarray(np.inf, out.dtype), out), modulus], [out])[0]


def _parts(em: Emitter, z: Value, part: Aval) -> tuple[list[Value], list[Value], list[Value]]:
    """The real and imaginary parts of ``z`` (``part``: their type), their magnitudes, and where each is infinite."""
    parts = [em.op(f"stablehlo.{name}", [z], [part])[0] for name in ("real", "imag")]
    sizes = [em.op("stablehlo.abs", [p], [part])[0] for p in parts]
    inf = em.splat(np.asarray(np.inf, part.dtype), part)
    return parts, sizes, [compare(em, size, inf, "EQ") for size in sizes]


_real_sign = _simple_rule("sign")


@lowers(E.sign_p)
def _sign(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    dtype = args[0].aval.dtype
    if dtype in dtypes.COMPLEX:
        return [_complex_sign(em, args[0], outs[0])]
    if dtype in dtypes.UNSIGNED:  # StableHLO's sign takes signless integers only: x != 0 there
        x = args[0]
        nonzero = compare(em, x, em.splat(np.asarray(0, dtype), x.aval), "NE")
        return em.op("stablehlo.convert", [nonzero], outs)
    return _real_sign(em, args, outs)  # type: ignore[no-any-return]


def _complex_sign(em: Emitter, z: Value, out: Aval) -> Value:
    """NumPy 2's ``z / |z|`` (0 at 0) from XLA's sign, made right in two places where XLA's is not: a part
    beyond ~0.7 of the largest float overflows |z| (XLA: z / inf = 0), so a z with a part above 1 is halved
    first, exactly (a part then lost below the smallest normal was below the result's resolution anyway); and
    where exactly one part is infinite, NumPy's sign is that part's sign on its axis (XLA: inf / inf = NaN)."""
    part = out.with_dtype(dtypes.real_dtype(out.dtype))
    (re, im), (abs_re, abs_im), (re_inf, im_inf) = _parts(em, z, part)
    largest = em.op("stablehlo.maximum", [abs_re, abs_im], [part])[0]
    big = compare(em, largest, em.splat(np.asarray(1, part.dtype), part), "GT")
    halved = em.op("stablehlo.multiply", [z, em.splat(np.asarray(0.5, out.dtype), out)], [out])[0]
    xla = em.op("stablehlo.sign", [em.op("stablehlo.select", [big, halved, z], [out])[0]], [out])[0]
    zero = em.splat(np.asarray(0, part.dtype), part)

    def on_axis(is_inf: Value, x: Value) -> Value:
        return em.op("stablehlo.select", [is_inf, em.op("stablehlo.sign", [x], [part])[0], zero], [part])[0]

    axis = em.op("stablehlo.complex", [on_axis(re_inf, re), on_axis(im_inf, im)], [out])[0]
    return em.op("stablehlo.select", [compare(em, re_inf, im_inf, "NE"), axis, xla], [out])[0]


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


# ------------------------------------------------------------------------------------------- bitcast_convert
# A change of width is written with same-width bitcasts, shifts and integer converts (little-endian: element i of
# the trailing axis holds bits [i*w, (i+1)*w) of the wide element, NumPy's order on little-endian hosts and
# XLA's). Not with a width-changing ``stablehlo.bitcast_convert``: XLA's simplifier folds two adjacent bitcasts
# into one without fixing the shape (f32 -> u16 -> u8 becomes f32[n] -> u8[n, 2, 2]), which its verifier rejects
# (jax fails so too, jaxlib 0.10.2). Folding same-width bitcasts is always right.


def _bits(em: Emitter, x: Value, dtype: np.dtype[Any]) -> Value:
    """``x`` as ``dtype`` of its width (no op where it is that dtype already)."""
    if x.aval.dtype == dtype:
        return x
    return em.op("stablehlo.bitcast_convert", [x], [x.aval.with_dtype(dtype)])[0]


def _unsigned(itemsize: int) -> np.dtype[Any]:
    return np.dtype(f"u{itemsize}")


def _lane_shifts(em: Emitter, aval: Aval, lane_bits: int) -> Value:
    """``i * lane_bits`` along the last axis of ``aval`` (an unsigned type), broadcast to its shape."""
    lanes = aval.shape[-1]
    row = em.constant(np.arange(lanes, dtype=aval.dtype) * lane_bits, Aval((lanes,), aval.dtype))
    props = f"broadcast_dimensions = {i64_array((aval.ndim - 1,))}"
    return em.op("stablehlo.broadcast_in_dim", [row], [aval], props)[0]


def _split_lanes(em: Emitter, x: Value, out: Aval) -> Value:
    """Each wide element of ``x`` as its narrow lanes along a new last axis (``out``: the result type)."""
    wide, narrow = _unsigned(x.aval.dtype.itemsize), _unsigned(out.dtype.itemsize)
    lanes = Aval(out.shape, wide)
    spread = em.op("stablehlo.broadcast_in_dim", [_bits(em, x, wide)], [lanes],
                   f"broadcast_dimensions = {i64_array(tuple(range(x.aval.ndim)))}")[0]
    shifted = em.op("stablehlo.shift_right_logical", [spread, _lane_shifts(em, lanes, 8 * narrow.itemsize)], [lanes])[0]
    low = em.op("stablehlo.convert", [shifted], [lanes.with_dtype(narrow)])[0]  # keeps the low bits
    return _bits(em, low, out.dtype)


def _join_lanes(em: Emitter, x: Value, out: Aval) -> Value:
    """The narrow lanes along ``x``'s last axis joined into one wide element each (``out``: the result type)."""
    wide, narrow = _unsigned(out.dtype.itemsize), _unsigned(x.aval.dtype.itemsize)
    lanes = x.aval.with_dtype(wide)
    widened = em.op("stablehlo.convert", [_bits(em, x, narrow)], [lanes])[0]  # zero-extends
    shifted = em.op("stablehlo.shift_left", [widened, _lane_shifts(em, lanes, 8 * narrow.itemsize)], [lanes])[0]
    scalar = Aval((), wide)
    joined = em.op("stablehlo.reduce", [shifted, em.scalar(0, wide)], [out.with_dtype(wide)],
                   f"dimensions = {i64_array((x.aval.ndim - 1,))}", [em.binary_region("stablehlo.or", scalar)])[0]
    return _bits(em, joined, out.dtype)


@lowers(E.bitcast_convert_p)
def _bitcast_convert(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, new_dtype: Any) -> list[Value]:
    (x,), (out,) = args, outs
    if x.aval.dtype.itemsize > out.dtype.itemsize:
        return [_split_lanes(em, x, out)]
    if x.aval.dtype.itemsize < out.dtype.itemsize:
        return [_join_lanes(em, x, out)]
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
