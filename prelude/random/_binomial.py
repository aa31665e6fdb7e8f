"""Binomial and multinomial counts, by ``jax.random``'s algorithms: inversion (summing geometric waiting times)
where ``n * min(p, 1 - p) <= 10``, else Kachitvichyanukul and Schmeiser's BTRS transformed rejection (Hörmann,
1993); a multinomial is a scan of conditional binomials over the categories.

Both loops are bounded vectorized ``while_loop``s with the key carried and split each round as JAX splits it,
so the inversion regime gives JAX's float32 draws bit for bit. Deliberate differences from JAX:
- BTRS's Stirling-series correction uses the series at ``k`` for ``k > 9``; JAX's clamps ``k`` to 9 first (so its
  acceptance test is slightly off in the tails): same algorithm, not the same draws in that regime.
- Counts are constants to differentiation (a discrete draw has no pathwise derivative); JAX passes ``n``'s
  tangent through its ``n - k`` flip for ``p > 1/2``.
- The loops stop after 80 (inversion) and 64 (BTRS) rounds (JAX's never stop), and sooner once every element is
  done: with at most 10 expected successes, 80 waiting times are all needed with probability below 1e-30 (a
  Poisson(10) tail bound); BTRS accepts most proposals, so 64 straight rejections are far rarer still.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...control_flow import scan, while_loop
from ...custom_derivatives import stop_gradient
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...tensor import Tensor
from ..numpy import (
    abs as abs_, any as any_, ceil, clip, cumsum, flip, floor, isinf, isnan, log, log1p, logical_and,
    logical_not, logical_or, maximum, moveaxis, sqrt, stack, take, where, zeros,
)
from ..numpy._core import ShapeLike, as_tensor, describe, dtype_error, op, shape_error
from ._distributions import _uniform
from ._keys import AnyTensor, Key, check_key, split
from ._params import float_dtypes, param, sample_shape, until_done

_INVERSION_ROUNDS = 80
_BTRS_ROUNDS = 64
# log(k!) - (Stirling's formula at k), for k = 0..9; larger k use the series.
_STIRLING_TAIL = np.array([
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
    0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287,
])


def _stirling_tail(k: Any) -> Any:
    table = as_tensor(_STIRLING_TAIL.astype(k.aval.dtype))
    index = as_tensor(clip(k, 0.0, 9.0)).astype(np.int32)
    kp1 = maximum(k, 0.0) + 1.0
    kp1sq = kp1 * kp1
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / kp1
    return where(k <= 9.0, take(table, index), series)


def _inversion(key: Key, count: Any, q: Any, sizes: tuple[int, ...]) -> Any:
    """Successes = the number of geometric waiting times that fit in ``count`` trials."""
    dtype = q.aval.dtype
    log_fail = log1p(-q)

    def more(carry: Any) -> Any:
        rounds, _, total, _ = carry
        return logical_and(rounds < _INVERSION_ROUNDS, any_(total <= count))

    def body(carry: Any) -> Any:
        rounds, waits, total, round_key = carry
        draw_key, next_key = split(round_key)  # JAX's order: the first key draws
        waits = where(total <= count, waits + 1.0, waits)
        u = as_tensor(_uniform("binomial", draw_key, sizes, dtype, 0.0, 1.0))
        return rounds + 1, waits, total + ceil(log(u) / log_fail), next_key

    start = as_tensor(param(0.0, dtype, sizes))
    waits = while_loop(more, body, (as_tensor(np.int32(0)), start, start, key))[1]
    return waits - 1.0


def _btrs(key: Key, count: Any, q: Any, sizes: tuple[int, ...]) -> Any:
    """Transformed rejection for ``count * q > 10``, ``q <= 1/2``; like JAX, the last accepted draw is kept."""
    dtype = q.aval.dtype
    stddev = sqrt(count * q * (1.0 - q))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = count * q + 0.5
    v_r = 0.92 - 4.2 / b
    r = q / (1.0 - q)
    alpha = (2.83 + 5.1 / b) * stddev
    m = floor((count + 1.0) * q)
    fixed = (m + 0.5) * log((m + 1.0) / (r * (count - m + 1.0))) + _stirling_tail(m) + _stirling_tail(count - m)

    def body(carry: Any) -> Any:
        rounds, out, accepted, round_key = carry
        next_key, key_u, key_v = split(round_key, 3)
        u = as_tensor(_uniform("binomial", key_u, sizes, dtype, 0.0, 1.0)) - 0.5
        v = as_tensor(_uniform("binomial", key_v, sizes, dtype, 0.0, 1.0))
        us = 0.5 - abs_(u)
        quick = logical_and(us >= 0.07, v <= v_r)
        k = floor((2.0 * a / us + b) * u + c)
        reject = logical_or(k < 0.0, k > count)
        log_v = log(v * alpha / (a / (us * us) + b))
        bound = (fixed + (count + 1.0) * log((count - m + 1.0) / (count - k + 1.0))
                 + (k + 0.5) * log(r * (count - k + 1.0) / (k + 1.0)) - _stirling_tail(k) - _stirling_tail(count - k))
        accept = logical_or(quick, logical_and(logical_not(reject), log_v <= bound))
        return rounds + 1, where(accept, k, out), logical_or(accepted, accept), next_key

    init = (as_tensor(np.int32(0)), as_tensor(param(-1.0, dtype, sizes)),
            as_tensor(param(False, np.dtype(bool), sizes)), key)
    return while_loop(until_done(_BTRS_ROUNDS), body, init)[1]


def _count_param(op_name: str, n: Any) -> list[Any]:
    """``n`` among the float parameters that fix the dtype (an integer tensor of counts is converted instead)."""
    if not isinstance(n, (Tensor, np.ndarray, np.generic)):
        return [n]
    if _dt.is_integer(np.dtype(n.dtype)):
        return []
    if not _dt.is_float(np.dtype(n.dtype)):
        raise dtype_error(op_name, f"n must be integer or floating-point counts, got {describe(n)}")
    return [n]


def _binomial(key: Key, count: Any, prob: Any, sizes: tuple[int, ...]) -> Any:
    """Binomial draws (as floats of ``prob``'s dtype) for parameters already broadcast to ``sizes``."""
    p_low = prob < 0.5
    q = where(p_low, prob, 1.0 - prob)
    bad_count = logical_or(isnan(count), count < 0.0)
    infinite = isinf(count)
    q_nan = isnan(q)
    bad_q = logical_or(q_nan, q < 0.0)
    q = where(bad_q, 0.01, q)
    use_inversion = logical_or(bad_count, count * q <= 10.0)
    count = floor(count)
    small = _inversion(key, where(use_inversion, count, 0.0), q, sizes)
    large = _btrs(key, where(use_inversion, 1e4, count), where(use_inversion, 0.5, q), sizes)
    draws = where(use_inversion, small, large)
    invalid = logical_or(bad_q, bad_count)
    draws = where(invalid, float("nan"), where(infinite, float("inf"), draws))
    keep = logical_or(logical_or(p_low, bad_count), logical_or(q_nan, infinite))
    return where(keep, draws, count - draws)  # draws for q = 1 - p count the failures


@op
def binomial(key: Key, n: Any, p: Any, shape: ShapeLike | None = None, dtype: type[DType] | Any = None) -> AnyTensor:
    """Binomial(n, p) counts as floats (as JAX); ``shape`` defaults to the broadcast of ``n`` and ``p``. ``n`` is
    floored; NaN where ``n`` is negative or NaN or ``p`` is outside [0, 1] or NaN; inf where ``n`` is inf."""
    check_key("binomial", key)
    target, work = float_dtypes("binomial", dtype, p, *_count_param("binomial", n))
    sizes, _ = sample_shape("binomial", shape, n, p)
    count, prob = (stop_gradient(param(x, work, sizes)) for x in (n, p))
    # The loops' outputs are constants too, so reverse mode never reaches the (non-reversible) while_loops.
    return as_tensor(stop_gradient(_binomial(key, count, prob, sizes))).astype(target)


@op
def multinomial(
    key: Key, n: Any, p: Any, *, shape: ShapeLike | None = None, dtype: type[DType] | Any = None,
    unroll: int | bool = 1,
) -> AnyTensor:
    """Multinomial counts (floats) of ``n`` trials over the categories along ``p``'s last axis: a binomial per
    category for the trials the earlier ones left (as JAX). ``shape`` is the full result shape (JAX's code, not
    its docstring), default ``p.shape``; ``n`` broadcasts to ``shape[:-1]``. ``unroll`` is accepted for JAX
    compatibility (XLA decides)."""
    check_key("multinomial", key)
    probs_in = as_tensor(p)
    if probs_in.aval.ndim < 1:
        raise shape_error("multinomial", f"p needs a last axis of categories, got {describe(p)}")
    target, work = float_dtypes("multinomial", dtype, p, *_count_param("multinomial", n))
    full, _ = sample_shape("multinomial", probs_in.aval.shape if shape is None else shape, p)
    if not full:
        raise shape_error("multinomial", f"shape must have a last axis of categories, got {full}")
    batch, k = full[:-1], full[-1]
    sample_shape("multinomial", batch, n)  # n must broadcast to the batch shape
    if k == 0:
        return as_tensor(zeros(full, target))
    total = stop_gradient(param(n, work, batch))
    probs = moveaxis(stop_gradient(param(p, work, full)), -1, 0)
    remaining = flip(cumsum(flip(probs, 0), axis=0), 0)
    ratios = probs / where(remaining == 0.0, 1.0, remaining)

    def step(left: Any, ratio_key: Any) -> Any:
        ratio, category_key = ratio_key
        count = _binomial(category_key, left, clip(ratio, 0.0, 1.0), batch)
        return left - count, count

    _, counts = scan(step, as_tensor(total), (ratios, stack(split(key, k)) if k > 1 else stack([key])))
    return as_tensor(stop_gradient(moveaxis(counts, 0, -1))).astype(target)


__all__ = ["binomial", "multinomial"]
