"""Discrete draws and resampling: poisson, geometric, rademacher, choice, shuffle, and random orthogonal matrices."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...control_flow import while_loop
from ...dtypes import DType, Floating, f32, i32, to_numpy
from ...staging import dtypes as _dt
from ..numpy import (
    abs as abs_, any as any_, argsort, diagonal, cumsum, exp, floor, log, log1p, logical_and, logical_not, logical_or,
    maximum, minimum, reshape, searchsorted, sign, take, where,
)
from ..numpy._core import ShapeLike, as_tensor, describe, dtype_error, normalize_axes, op, parse_shape, shape_error
from ..numpy.linalg_decompositions import qr
from ._continuous import gumbel
from ._distributions import _float_dtype, _uniform, bernoulli, normal, randint
from ._keys import AnyTensor, Key, check_key, split
from ._params import float_dtypes, log_gamma, open_uniform, param, sample_shape
from ._permutation import permutation


def _int_dtype(op_name: str, dtype: Any) -> np.dtype[Any]:
    target = to_numpy(dtype)
    if not _dt.is_integer(target):
        raise dtype_error(op_name, f"{op_name} draws integers; got dtype {_dt.short_name(target)}")
    return target


_POISSON_SWITCH = 10.0  # below: inversion by sequential search; at or above: transformed rejection (PTRS)
_INVERSION_STEPS = 64  # P(X > 64) for lambda < 10 is below 1e-30
_PTRS_ROUNDS = 32  # PTRS accepts with probability > 0.85 for lambda >= 10, so 32 rounds all fail with p < 1e-26


def _poisson_small(key: Key, lam: Any, sizes: tuple[int, ...]) -> Any:
    """Inversion: the smallest k with ``u <= P(X <= k)``, walking the pmf in a bounded vectorized loop."""
    u = as_tensor(_uniform("poisson", key, sizes, lam.aval.dtype, 0.0, 1.0))
    p0 = exp(-lam)

    def more(carry: Any) -> Any:
        step, _, cdf, _ = carry
        return logical_and(step < _INVERSION_STEPS, any_(u > cdf))

    def body(carry: Any) -> Any:
        step, pmf, cdf, count = carry
        below = u > cdf  # this element's count is the number of steps taken while u was above the CDF
        pmf = pmf * lam / (as_tensor(step).astype(lam.aval.dtype) + 1.0)
        return step + 1, pmf, where(below, cdf + pmf, cdf), where(below, count + 1.0, count)

    init = (as_tensor(np.int32(0)), p0, p0, as_tensor(param(0.0, lam.aval.dtype, sizes)))
    return while_loop(more, body, init)[3]


def _poisson_large(key: Key, lam: Any, sizes: tuple[int, ...]) -> Any:
    """Hörmann's transformed rejection with squeeze (PTRS, 1993), vectorized with a bounded loop."""
    dtype = lam.aval.dtype
    slam = lam ** 0.5
    loglam = log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)

    def more(carry: Any) -> Any:
        rounds, _, done, _ = carry
        return logical_and(rounds < _PTRS_ROUNDS, any_(logical_not(done)))

    def body(carry: Any) -> Any:
        rounds, out, done, round_key = carry
        next_key, ku, kv = split(round_key, 3)  # carried, not folded from ``rounds``: see log_gamma_sample
        u = open_uniform("poisson", ku, sizes, dtype) - 0.5
        v = open_uniform("poisson", kv, sizes, dtype)
        us = 0.5 - abs_(u)
        k = floor((2.0 * a / us + b) * u + lam + 0.43)
        quick = logical_and(us >= 0.07, v <= vr)
        reject = logical_or(k < 0.0, logical_and(us < 0.013, v > us))
        kk: Any = maximum(k, 0.0)
        lhs = log(v) + log(inv_alpha) - log(a / (us * us) + b)
        rhs = -lam + kk * loglam - log_gamma(kk + 1.0)
        accept = logical_or(quick, logical_and(logical_not(reject), lhs <= rhs))
        new = logical_and(accept, logical_not(done))
        return rounds + 1, where(new, k, out), logical_or(done, accept), next_key

    init = (as_tensor(np.int32(0)), as_tensor(param(-1.0, dtype, sizes)), as_tensor(param(False, np.dtype(bool), sizes)),
            key)
    _, out, _, _ = while_loop(more, body, init)
    return out


@op
def poisson(key: Key, lam: Any, shape: ShapeLike | None = None, dtype: type[DType] | Any = i32) -> AnyTensor:
    """Poisson(lam) integers. lam < 10: inversion (a bounded sequential search of the CDF, at most 64 steps);
    lam >= 10: Hörmann's PTRS transformed rejection (at most 32 vectorized rounds). Counts are computed in
    ``lam``'s float dtype (f32 for Python floats), so they are exact up to 2**24 in f32; -1 where lam < 0 or is
    not finite."""
    check_key("poisson", key)
    target = _int_dtype("poisson", dtype)
    _, work = float_dtypes("poisson", None, lam)
    sizes, _ = sample_shape("poisson", shape, lam)
    rate = param(lam, work, sizes)
    k_small, k_large = split(key)
    small = _poisson_small(k_small, minimum(rate, _POISSON_SWITCH), sizes)
    large = _poisson_large(k_large, maximum(rate, _POISSON_SWITCH), sizes)
    count = where(rate < _POISSON_SWITCH, small, large)
    valid = logical_and(rate >= 0.0, rate < float("inf"))  # an infinite rate has no finite count: -1, like NaN
    return as_tensor(where(valid, count, -1.0)).astype(target)


@op
def geometric(key: Key, p: Any, shape: ShapeLike | None = None, dtype: type[DType] | Any = i32) -> AnyTensor:
    """Geometric(p) integers >= 1 (trials up to the first success): ``floor(log(u) / log1p(-p)) + 1``; the
    dtype's largest value where ``p == 0`` (never a success; the float-to-int conversion saturates), -1 where
    ``p`` is outside ``[0, 1]`` or NaN."""
    check_key("geometric", key)
    target = _int_dtype("geometric", dtype)
    _, work = float_dtypes("geometric", None, p)
    sizes, _ = sample_shape("geometric", shape, p)
    prob = param(p, work, sizes)
    u: Any = _uniform("geometric", key, sizes, work, 0.0, 1.0)
    u = where(u == 0.0, 1.0, u)  # as JAX: keeps log finite without changing the other draws
    trials = floor(log(u) / log1p(-prob)) + 1.0
    valid = logical_and(prob >= 0.0, prob <= 1.0)  # False for NaN too
    return as_tensor(where(valid, trials, -1.0)).astype(target)


@op
def rademacher(key: Key, shape: ShapeLike = (), dtype: type[DType] | Any = i32) -> AnyTensor:
    """-1 or +1 with equal probability (``2 * bernoulli(key, 0.5, shape) - 1``)."""
    check_key("rademacher", key)
    target = to_numpy(dtype)
    if not (_dt.is_integer(target) and _dt.is_signed(target)) and not _dt.is_float(target):
        raise dtype_error("rademacher", f"rademacher draws signed integers or floats; got {_dt.short_name(target)}")
    heads = as_tensor(bernoulli(key, 0.5, shape)).astype(target)
    return as_tensor(2 * heads - 1)


@op
def choice(
    key: Key, a: int | AnyTensor, shape: ShapeLike = (), replace: bool = True, p: Any = None, axis: int = 0
) -> AnyTensor:
    """Samples of ``a`` (``range(a)`` for an int) along ``axis``: the result replaces that axis by ``shape``.

    With replacement: uniform indices (``randint``), or with probabilities ``p`` inverse-CDF lookups in
    ``cumsum(p)``. Without: a random permutation's first entries, or with ``p`` the Gumbel-top-k trick."""
    check_key("choice", key)
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        if a < 0:
            raise shape_error("choice", f"a must be non-negative, got {a}")
        n, values, axis_index = int(a), None, 0
    else:
        values = as_tensor(a)
        if values.aval.ndim == 0:
            raise shape_error("choice", f"a must be an int or an array of rank >= 1, got {describe(a)}")
        (axis_index,) = normalize_axes("choice", axis, values, allow_none=False)
        n = values.aval.shape[axis_index]
    sizes, _ = parse_shape("choice", shape)
    count = math.prod(sizes)
    if p is not None:
        probs = as_tensor(p)
        if not _dt.is_float(probs.aval.dtype):
            raise dtype_error("choice", f"p must be floating-point probabilities, got {describe(p)}")
        if probs.aval.shape != (n,):
            raise shape_error("choice", f"p must have shape ({n},) to match a's length {n}, got {describe(p)}")
    if not replace and count > n:
        raise shape_error("choice", f"cannot take {count} samples from {n} without replacement")
    if n == 0 and count > 0:
        raise shape_error("choice", "cannot take a non-empty sample from an empty population")
    index: Any
    if replace and p is None:
        index = randint(key, sizes, 0, max(n, 1))
    elif replace:
        cdf = cumsum(probs)
        u = as_tensor(_uniform("choice", key, sizes, probs.aval.dtype, 0.0, 1.0))
        index = minimum(searchsorted(cdf, u * cdf[-1], side="right"), n - 1)
    elif p is None:
        perm: Any = permutation(key, n)
        index = reshape(perm[:count], sizes)
    else:
        scores = log(probs) + gumbel(key, (n,), probs.aval.dtype)
        order: Any = argsort(-scores)
        index = reshape(order[:count], sizes)
    if values is None:
        return as_tensor(index)
    picked = as_tensor(take(values, reshape(index, (count,)), axis=axis_index))
    out_shape = (*values.aval.shape[:axis_index], *sizes, *values.aval.shape[axis_index + 1 :])
    return as_tensor(reshape(picked, out_shape))


@op
def shuffle(key: Key, x: AnyTensor, axis: int = 0) -> AnyTensor:
    """``x`` with its slices along ``axis`` randomly reordered (``permutation`` of an array)."""
    check_key("shuffle", key)
    t = as_tensor(x)
    if t.aval.ndim == 0:
        raise shape_error("shuffle", f"needs an array of rank >= 1, got {describe(x)}")
    return as_tensor(permutation(key, t, axis))


@op
def orthogonal(key: Key, n: int, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Haar-random ``n x n`` orthogonal matrices of shape ``(*shape, n, n)``: the QR of a Gaussian matrix, with
    the signs of R's diagonal moved into Q."""
    check_key("orthogonal", key)
    target = _float_dtype("orthogonal", dtype)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise shape_error("orthogonal", f"n must be a non-negative int, got {describe(n)}")
    sizes, _ = parse_shape("orthogonal", shape)
    z = as_tensor(normal(key, (*sizes, int(n), int(n)), target))
    q, r = qr(z)
    diag = diagonal(r, axis1=-2, axis2=-1)
    return as_tensor(q * sign(diag)[..., None, :])


__all__ = ["choice", "geometric", "orthogonal", "poisson", "rademacher", "shuffle"]
