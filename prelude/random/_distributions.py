"""Sampling from distributions: uniform, normal, bernoulli, categorical and randint.

Each draw turns the key's bits into values with exact integer-to-float conversions (no bit casts), so float32
uniforms are the same numbers JAX draws from the same key.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ...dtypes import DType, Floating, f32, i32, to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, Aval, DimName, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ..numpy import argmax, log, maximum, moveaxis
from ..numpy._core import (
    ShapeLike, as_tensor, atom, broadcast_shapes, describe, dtype_error, normalize_axes, op, parse_shape, shape_error,
    wrap,
)
from ._keys import U32, AnyTensor, Key, bits32, bits_pair, check_key, random_bits, split

_U64 = np.dtype(np.uint64)
_MANTISSA_BITS = {np.dtype(np.float16): 10, _dt.bfloat16: 7, np.dtype(np.float32): 23}


def _float_dtype(op_name: str, dtype: Any) -> np.dtype[Any]:
    target = to_numpy(dtype)
    if not _dt.is_float(target):
        raise dtype_error(op_name, f"{op_name} draws floating-point values; got dtype {_dt.short_name(target)}")
    return target


def unit_floats(key: Atom, sizes: tuple[int, ...], names: tuple[DimName, ...], dtype: np.dtype[Any]) -> Atom:
    """Uniform floats in [0, 1): the top mantissa-width bits, scaled by an exact power of two."""
    if dtype == np.float64:  # 52 mantissa bits from both Threefry words: high 20 bits of one, all 32 of the other
        high, low = bits_pair(key, sizes, names)
        top = E.convert(bind(E.shift_right_logical_p, high, literal(12, U32)), dtype)
        return E.add(E.mul(top, literal(2.0**-20, dtype)), E.mul(E.convert(low, dtype), literal(2.0**-52, dtype)))
    width = _MANTISSA_BITS[dtype]
    top = bind(E.shift_right_logical_p, bits32(key, sizes, names), literal(32 - width, U32))
    return E.mul(E.convert(top, dtype), literal(2.0**-width, dtype))


def _uniform(op_name: str, key: Key, shape: ShapeLike, dtype: Any, minval: Any, maxval: Any) -> AnyTensor:
    target = _float_dtype(op_name, dtype)
    sizes, names = parse_shape(op_name, shape)
    unit = wrap(unit_floats(check_key(op_name, key), sizes, names, target))
    lo, hi = wrap(atom(minval, target)), wrap(atom(maxval, target))
    for bound in (lo, hi):
        if bound.aval.dtype != target:
            raise dtype_error(op_name, f"bounds must be {_dt.short_name(target)}, got {describe(bound)}")
    # max() keeps the result >= minval where rounding of the affine map would undershoot it.
    return maximum(lo, unit * (hi - lo) + lo)


@op
def uniform(
    key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32, minval: Any = 0.0, maxval: Any = 1.0
) -> AnyTensor:
    """Uniform floats in ``[minval, maxval)``."""
    return _uniform("uniform", key, shape, dtype, minval, maxval)


@op
def normal(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard normal floats, by the inverse CDF: ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1)."""
    target = _float_dtype("normal", dtype)
    work = target if target.itemsize >= 4 else np.dtype(np.float32)  # half precision: compute in f32
    lowest = float(np.nextafter(np.array(-1.0, work), np.array(0.0, work)))
    u = _uniform("normal", key, shape, work, lowest, 1.0)
    z = wrap(E.erf_inv(as_tensor(u).atom)) * float(np.sqrt(2.0))
    return z if work == target else z.astype(target)


@op
def bernoulli(key: Key, p: Any = 0.5, shape: ShapeLike | None = None) -> AnyTensor:
    """Booleans that are True with probability ``p`` (a float, or a float tensor broadcast to ``shape``)."""
    prob = as_tensor(p)
    if not _dt.is_float(prob.aval.dtype):
        raise dtype_error("bernoulli", f"p must be a float probability, got {describe(p)}")
    u = _uniform("bernoulli", key, prob.aval.shape if shape is None else shape, prob.aval.dtype, 0.0, 1.0)
    if prob.aval.ndim:
        broadcast_shapes("bernoulli", [u.aval, prob.aval])  # a clear error before the comparison's
    return u < prob


@op
def categorical(key: Key, logits: AnyTensor, axis: int | type = -1, shape: ShapeLike | None = None) -> AnyTensor:
    """Class indices (i32) drawn with probabilities ``softmax(logits, axis)``, by the Gumbel-max trick.

    ``shape`` (default: the logits' shape without ``axis``) may add leading sample axes.
    """
    given = as_tensor(logits)
    if not _dt.is_float(given.aval.dtype):
        raise dtype_error("categorical", f"logits must be floating-point, got {describe(logits)}")
    (class_axis,) = normalize_axes("categorical", axis, given, allow_none=False)
    t = as_tensor(moveaxis(given, class_axis, -1))
    batch = t.aval.shape[:-1]
    sizes, names = (batch, t.aval.dims[:-1]) if shape is None else parse_shape("categorical", shape)
    if sizes[len(sizes) - len(batch):] != batch or len(sizes) < len(batch):
        raise shape_error(
            "categorical", f"shape {sizes} must end with the logits' batch shape {batch} (logits {describe(logits)})"
        )
    full = Aval((*sizes, t.aval.shape[-1]), t.aval.dtype, (*names, t.aval.dims[-1]))
    tiled = wrap(S.broadcast_to(t.atom, full))
    tiny = float(ml_dtypes.finfo(t.aval.dtype).tiny)  # type: ignore[no-untyped-call]  # np.finfo has no bf16
    u = _uniform("categorical", key, (*sizes, t.aval.shape[-1]), t.aval.dtype, tiny, 1.0)
    gumbel = -log(-log(u))
    return argmax(tiled + gumbel, axis=-1)


@op
def randint(key: Key, shape: ShapeLike, minval: Any, maxval: Any, dtype: type[DType] | Any = i32) -> AnyTensor:
    """Uniform integers in ``[minval, maxval)`` of an integer ``dtype``; ``minval`` when the range is empty. The
    draws are JAX's for the same key (its x64 mode for 64-bit dtypes)."""
    target = to_numpy(dtype)
    if not _dt.is_integer(target):
        raise dtype_error("randint", f"randint draws integers, got dtype {_dt.short_name(target)}")
    check_key("randint", key)
    sizes, names = parse_shape("randint", shape)
    word = _U64 if target.itemsize == 8 else U32  # the unsigned type the offset is drawn in, as JAX's
    k1, k2 = split(key)
    high = random_bits(as_tensor(k1).atom, sizes, names, word)
    low = random_bits(as_tensor(k2).atom, sizes, names, word)
    lo = _int_bound("minval", minval, target, 0)
    span = _span(minval, maxval, lo, target, word)
    offset: Atom
    if span is None:  # the whole range of the word: every bit pattern is a value
        offset = high
    else:
        # (high * 2**bits + low) mod span, so the modulo bias is that of a draw of twice the word's bits.
        multiplier = E.rem(literal(2 ** (4 * word.itemsize), word), span)
        multiplier = E.rem(E.mul(multiplier, multiplier), span)
        offset = E.rem(E.add(E.mul(E.rem(high, span), multiplier), E.rem(low, span)), span)
    # Adding in the word and converting back wraps exactly (two's complement), for signed and unsigned dtypes.
    return wrap(E.convert(E.add(E.convert(lo, word), offset), target))


def _span(minval: Any, maxval: Any, lo: Atom, dtype: np.dtype[Any], word: np.dtype[Any]) -> Atom | None:
    """``maxval - minval`` in the unsigned ``word`` (1 for an empty range); None for a span of the word's whole
    range."""
    whole = 2 ** (8 * word.itemsize)
    if isinstance(minval, int) and isinstance(maxval, int):
        _int_bound("maxval", maxval, dtype, 1)
        width = max(maxval - minval, 1)
        return None if width == whole else literal(width, word)
    hi = _int_bound("maxval", maxval, dtype, 0)
    span = E.sub(E.convert(hi, word), E.convert(lo, word))  # exact mod the word's range for any pair of bounds
    span = E.select(bind(E.le_p, hi, lo), S.full_like(span, 1), span)
    above = _above_top(maxval, dtype)
    if above is None:
        return span
    # A maxval past the dtype's top was clipped to it: the top is then a possible draw (as in JAX). A span that
    # wraps to 0 (the word's whole range) uses its largest value, a bias of one value in the word's range.
    wider = E.add(span, literal(1, word))
    wider = E.select(bind(E.eq_p, wider, literal(0, word)), literal(whole - 1, word), wider)
    return E.select(above, wider, span)


def _above_top(bound: Any, dtype: np.dtype[Any]) -> Atom | None:
    """Whether a tensor bound exceeds ``dtype``'s largest value (None when its dtype cannot)."""
    t = as_tensor(bound)
    top = int(np.iinfo(dtype).max)
    if int(np.iinfo(t.aval.dtype).max) <= top:
        return None
    return bind(E.gt_p, t.atom, literal(top, t.aval.dtype))  # type: ignore[no-any-return]


def _int_bound(name: str, bound: Any, dtype: np.dtype[Any], slack: int) -> Atom:
    """A bound as a scalar of ``dtype``; Python ints may exceed the dtype's top by ``slack`` (an exclusive max)."""
    if isinstance(bound, (int, np.integer)) and not isinstance(bound, bool):
        info = np.iinfo(dtype)
        if not info.min <= int(bound) <= int(info.max) + slack:
            raise dtype_error("randint", f"{name}={bound} is out of range for {_dt.short_name(dtype)}")
        return literal(min(int(bound), int(info.max)), dtype)
    t = as_tensor(bound)
    if t.aval.ndim or not _dt.is_integer(t.aval.dtype):
        raise dtype_error("randint", f"{name} must be an int or an integer scalar, got {describe(bound)}")
    return E.convert(_clip_to(t.atom, dtype), dtype)


def _clip_to(x: Atom, dtype: np.dtype[Any]) -> Atom:
    """An integer scalar clipped into ``dtype``'s range, so converting it cannot wrap (-1000 as i8 would be 24)."""
    have, want = np.iinfo(x.aval.dtype), np.iinfo(dtype)
    if int(have.min) < int(want.min):
        x = E.select(bind(E.lt_p, x, literal(int(want.min), x.aval.dtype)), literal(int(want.min), x.aval.dtype), x)
    if int(have.max) > int(want.max):
        x = E.select(bind(E.gt_p, x, literal(int(want.max), x.aval.dtype)), literal(int(want.max), x.aval.dtype), x)
    return x
