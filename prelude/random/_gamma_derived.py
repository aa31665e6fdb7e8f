"""Samplers built on Gamma draws, kept in log space: loggamma, f, generalized_normal and ball.

Same distributions as ``jax.random``'s (and the same use of keys: ``split`` where JAX splits), different draws:
the Gamma sampler is the vectorized Marsaglia–Tsang loop of ``_continuous``, not JAX's per-element one. As for
``gamma``, derivatives with respect to a shape parameter (``a``, ``dfnum``/``dfden``, ``p``) raise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...dtypes import Floating
from ...tensor import Tensor
from ..numpy import abs as abs_, exp, sum as sum_
from ..numpy._core import ShapeLike, as_tensor, describe, op, parse_shape, shape_error
from ._continuous import _gamma_like, _result, exponential, log_gamma_sample
from ._discrete import rademacher
from ._keys import AnyTensor, Key, split
from ._params import param


@op
def loggamma(key: Key, a: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """``log`` of Gamma(a, 1) draws, computed in log space (the boost of ``a < 1`` adds ``log(u) / a``), so
    small ``a``, whose Gamma draws underflow to 0, keeps finite logs; NaN where ``a <= 0``."""
    target, work, sizes, (alpha,) = _gamma_like("loggamma", key, (a,), shape, dtype)
    return _result(log_gamma_sample("loggamma", key, alpha, sizes), work, target)


@op
def f(
    key: Key, dfnum: Any, dfden: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None
) -> AnyTensor:
    """F-distributed floats ``(X / dfnum) / (Y / dfden)`` for chi-square X, Y with those degrees of freedom
    (formed from the log-Gamma draws, so small degrees of freedom do not give 0/0)."""
    target, work, sizes, (num, den) = _gamma_like("f", key, (dfnum, dfden), shape, dtype)
    key_den, key_num = split(key)  # JAX's order
    log_x = log_gamma_sample("f", key_num, num * 0.5, sizes)  # X / 2 ~ Gamma(dfnum / 2)
    log_y = log_gamma_sample("f", key_den, den * 0.5, sizes)
    return _result(exp(log_x - log_y) * (den / num), work, target)


def _generalized_normal(op_name: str, key: Key, p: Any, shape: ShapeLike, dtype: Any) -> tuple[Any, Any, Any]:
    """``(draws, p, dtypes)``: ``s * G**(1/p)`` for a random sign ``s`` and ``G ~ Gamma(1/p)``."""
    target, work, sizes, (power,) = _gamma_like(op_name, key, (p,), shape, dtype)
    gamma_key, sign_key = split(key)
    log_g = log_gamma_sample(op_name, gamma_key, 1.0 / power, sizes)
    sign = as_tensor(rademacher(sign_key, sizes, work))
    return sign * exp(log_g / power), power, (work, target)


@op
def generalized_normal(key: Key, p: Any, shape: ShapeLike = (), dtype: type[Floating] | Any = None) -> AnyTensor:
    """Generalized normal floats (density ∝ ``exp(-|x|**p)``, ``p > 0``): a random sign times ``G**(1/p)``,
    ``G ~ Gamma(1/p)``; NaN where ``p <= 0``."""
    draws, _, (work, target) = _generalized_normal("generalized_normal", key, p, shape, dtype)
    return _result(draws, work, target)


@op
def ball(key: Key, d: int, p: Any = 2.0, shape: ShapeLike = (), dtype: type[Floating] | Any = None) -> AnyTensor:
    """Points uniform in the unit ``p``-norm ball of dimension ``d``, of shape ``(*shape, d)``: generalized normal
    ``g`` scaled by ``(sum |g|**p + e) ** (-1/p)`` with ``e`` standard exponential (Barthe et al., 2005)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise shape_error("ball", f"d must be a non-negative int, got {describe(d)}")
    if (p.aval.ndim if isinstance(p, Tensor) else np.ndim(p)) != 0:
        raise shape_error("ball", f"p must be a scalar, got {describe(p)}")
    if isinstance(p, int) and not isinstance(p, bool):
        p = float(p)  # the default 2 of JAX's signature, written as an int
    sizes, _ = parse_shape("ball", shape)
    k1, k2 = split(key)
    g, power, (work, target) = _generalized_normal("ball", k1, p, (*sizes, int(d)), dtype)
    e = as_tensor(exponential(k2, sizes, work))
    inverse = 1.0 / param(p, work, sizes)
    radius = (sum_(abs_(g) ** power, axis=-1) + e) ** inverse
    return _result(g / radius[..., None], work, target)


__all__ = ["ball", "f", "generalized_normal", "loggamma"]
