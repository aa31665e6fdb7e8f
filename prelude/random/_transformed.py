"""Samplers that transform uniform or normal draws in closed form: lognormal, pareto, rayleigh, maxwell,
double_sided_maxwell, weibull_min, wald and triangular.

Each applies ``jax.random``'s formula, in its order of operations, to the same uniforms and normals, so float32
draws equal JAX's bit for bit (on the platform JAX runs on). They are reparameterized: ``ts.grad`` and ``ts.jvp``
flow through every float parameter. Half-precision results are computed in f32 and rounded once.

Deliberate differences from JAX:
- ``weibull_min`` and ``double_sided_maxwell`` draw one value per element of the broadcast of ``shape`` and the
  parameters. JAX draws ``shape`` values and broadcasts them, so ``weibull_min(key, scale=jnp.ones(3), ...)`` with
  the default ``shape=()`` repeats one draw three times, and ``double_sided_maxwell`` with ``shape=()`` returns
  ``params.shape * 2`` axes; here the former gives three independent draws and the latter ``params.shape``.
  Where ``shape`` already is the full shape (the usual call), the draws are JAX's.
- Parameters given as tensors must already have the result dtype (no implicit casts, as everywhere here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...dtypes import Floating
from ...tensor import Tensor
from ..numpy import exp, log, log1p, sqrt, sum as sum_, where
from ..numpy._core import ShapeLike, as_tensor, describe, op, parse_shape, shape_error
from ._continuous import _result, exponential
from ._discrete import rademacher
from ._distributions import _uniform, normal
from ._keys import AnyTensor, Key, check_key, split
from ._params import float_dtypes, param, sample_shape


def _setup(
    op_name: str, key: Key, params: tuple[Any, ...], sizes: tuple[int, ...], dtype: Any
) -> tuple[np.dtype[Any], np.dtype[Any], list[Any]]:
    """``(result dtype, working dtype, parameters broadcast to sizes in the working dtype)``."""
    check_key(op_name, key)
    target, work = float_dtypes(op_name, dtype, *params)
    return target, work, [param(p, work, sizes) for p in params]


def _sizes(op_name: str, shape: ShapeLike | None, *params: Any) -> tuple[int, ...]:
    """``shape`` (one the parameters broadcast to), or their broadcast shape for None."""
    return sample_shape(op_name, shape, *params)[0]


def _broadcast_sizes(op_name: str, shape: ShapeLike, *params: Any) -> tuple[int, ...]:
    """The broadcast of ``shape`` and the parameters' shapes (JAX's ``weibull_min`` broadcasts its draws so)."""
    sizes, _ = parse_shape(op_name, shape)
    try:
        return tuple(np.broadcast_shapes(sizes, *(p.aval.shape if isinstance(p, Tensor) else np.shape(p) for p in params)))
    except ValueError:
        raise shape_error(
            op_name, f"shape {sizes} and the parameters " + ", ".join(describe(p) for p in params)
            + " do not broadcast together"
        ) from None


@op
def lognormal(
    key: Key, sigma: Any = 1.0, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None
) -> AnyTensor:
    """Log-normal floats: ``exp(sigma * z)`` for standard normal ``z``; ``shape`` defaults to ``sigma``'s."""
    sizes = _sizes("lognormal", shape, sigma)
    target, work, (s,) = _setup("lognormal", key, (sigma,), sizes, dtype)
    return _result(exp(as_tensor(normal(key, sizes, work)) * s), work, target)


@op
def pareto(key: Key, b: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Pareto floats on ``[1, inf)`` with density ``b / x**(b + 1)``: ``exp(e / b)`` for standard exponential
    ``e``; ``shape`` defaults to ``b``'s."""
    sizes = _sizes("pareto", shape, b)
    target, work, (index,) = _setup("pareto", key, (b,), sizes, dtype)
    return _result(exp(as_tensor(exponential(key, sizes, work)) / index), work, target)


@op
def rayleigh(key: Key, scale: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Rayleigh floats: ``scale * sqrt(-2 log u)`` for ``u`` uniform in [0, 1) (as JAX: ``u == 0``, one draw in
    2**23 in f32, gives inf); ``shape`` defaults to ``scale``'s."""
    sizes = _sizes("rayleigh", shape, scale)
    target, work, (s,) = _setup("rayleigh", key, (scale,), sizes, dtype)
    u = as_tensor(_uniform("rayleigh", key, sizes, work, 0.0, 1.0))
    return _result(s * sqrt(log(u) * -2.0), work, target)


def _norm3(key: Key, sizes: tuple[int, ...], work: np.dtype[Any]) -> Any:
    """The length of a standard normal 3-vector per element."""
    z: Any = as_tensor(normal(key, (*sizes, 3), work))
    return sqrt(sum_(z * z, axis=-1))


@op
def maxwell(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = None) -> AnyTensor:
    """One-sided Maxwell floats (density ∝ ``x² exp(-x²/2)``): the length of a standard normal 3-vector."""
    sizes, _ = parse_shape("maxwell", shape)
    target, work, _ = _setup("maxwell", key, (), sizes, dtype)
    return _result(_norm3(key, sizes, work), work, target)


@op
def double_sided_maxwell(
    key: Key, loc: Any, scale: Any, shape: ShapeLike = (), dtype: type[Floating] | Any = None
) -> AnyTensor:
    """Double-sided Maxwell floats ``loc + scale * s * m`` (``m`` Maxwell, ``s`` a random sign), of shape
    ``(*shape, *broadcast(loc, scale).shape)``."""
    params_shape = _sizes("double_sided_maxwell", None, loc, scale)
    sizes = (*parse_shape("double_sided_maxwell", shape)[0], *params_shape)
    target, work, (mu, sigma) = _setup("double_sided_maxwell", key, (loc, scale), sizes, dtype)
    maxwell_key, sign_key = split(key)
    sign = as_tensor(rademacher(sign_key, sizes, work))
    return _result(sign * _norm3(maxwell_key, sizes, work) * sigma + mu, work, target)


@op
def weibull_min(
    key: Key, scale: Any, concentration: Any, shape: ShapeLike = (), dtype: type[Floating] | Any = None
) -> AnyTensor:
    """Weibull floats (density ∝ ``x**(c-1) exp(-(x/scale)**c)``): ``(-log1p(-u)) ** (1/c) * scale``, of the
    broadcast shape of ``shape``, ``scale`` and ``concentration``."""
    sizes = _broadcast_sizes("weibull_min", shape, scale, concentration)
    target, work, (s, c) = _setup("weibull_min", key, (scale, concentration), sizes, dtype)
    u = as_tensor(_uniform("weibull_min", key, sizes, work, 0.0, 1.0))
    return _result((-log1p(-u)) ** (1.0 / c) * s, work, target)


@op
def wald(key: Key, mean: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Wald (inverse Gaussian, unit shape) floats by Michael, Schucany and Haas' transformation of a normal and
    a uniform draw; ``shape`` defaults to ``mean``'s."""
    sizes = _sizes("wald", shape, mean)
    target, work, (mu,) = _setup("wald", key, (mean,), sizes, dtype)
    k1, k2 = split(key)
    v = as_tensor(normal(k1, sizes, work))
    z = as_tensor(_uniform("wald", k2, sizes, work, 0.0, 1.0))
    y = v * v
    mu_sq = mu * mu
    root = sqrt(4.0 * mu * y + mu_sq * (y * y))
    x = mu + mu_sq * y / 2.0 - mu / 2.0 * root
    return _result(where(z <= mu / (mu + x), x, mu_sq / x), work, target)


@op
def triangular(
    key: Key, left: Any, mode: Any, right: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None
) -> AnyTensor:
    """Triangular floats on ``[left, right]`` peaking at ``mode``, by the inverse CDF; ``shape`` defaults to the
    parameters' broadcast shape."""
    sizes = _sizes("triangular", shape, left, mode, right)
    target, work, (lo, peak, hi) = _setup("triangular", key, (left, mode, right), sizes, dtype)
    u = as_tensor(_uniform("triangular", key, sizes, work, 0.0, 1.0))
    below = lo + sqrt(u * (hi - lo) * (peak - lo))
    above = hi - sqrt((1.0 - u) * (hi - lo) * (hi - peak))
    return _result(where(u < (peak - lo) / (hi - lo), below, above), work, target)
