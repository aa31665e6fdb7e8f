"""Weight initializers that take a key: Glorot (Xavier) and He (Kaiming), uniform and normal.

Fans follow the usual convention for a weight of shape ``(..., fan_in, fan_out)``: leading axes (a convolution's
receptive field) multiply both fans.
"""

from __future__ import annotations

import math
from typing import Any

from typing_extensions import Unpack

from ...dtypes import Floating, f32
from ...tensor import Tensor
from ..numpy._core import ShapeLike, op, parse_shape, shape_error
from ..random import Key, normal, uniform

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _fans(name: str, shape: ShapeLike) -> tuple[float, float]:
    sizes, _ = parse_shape(name, shape)
    if len(sizes) < 2:
        raise shape_error(name, f"needs a weight shape of rank >= 2 (..., fan_in, fan_out), got {sizes}")
    field = math.prod(sizes[:-2])
    # A zero fan only occurs for an empty weight, whose scale is irrelevant; 1 keeps the scale finite.
    return float(max(sizes[-2] * field, 1)), float(max(sizes[-1] * field, 1))


def _scaled_uniform(key: Key, shape: ShapeLike, dtype: Any, variance: float) -> AnyTensor:
    limit = math.sqrt(3.0 * variance)  # a uniform on [-a, a) has variance a**2 / 3
    return uniform(key, shape, dtype, -limit, limit)


@op
def glorot_uniform(key: Key, shape: ShapeLike, dtype: type[Floating] | Any = f32) -> AnyTensor:
    fan_in, fan_out = _fans("glorot_uniform", shape)
    return _scaled_uniform(key, shape, dtype, 2.0 / (fan_in + fan_out))


@op
def glorot_normal(key: Key, shape: ShapeLike, dtype: type[Floating] | Any = f32) -> AnyTensor:
    fan_in, fan_out = _fans("glorot_normal", shape)
    return normal(key, shape, dtype) * math.sqrt(2.0 / (fan_in + fan_out))


@op
def he_uniform(key: Key, shape: ShapeLike, dtype: type[Floating] | Any = f32) -> AnyTensor:
    fan_in, _ = _fans("he_uniform", shape)
    return _scaled_uniform(key, shape, dtype, 2.0 / fan_in)


@op
def he_normal(key: Key, shape: ShapeLike, dtype: type[Floating] | Any = f32) -> AnyTensor:
    fan_in, _ = _fans("he_normal", shape)
    return normal(key, shape, dtype) * math.sqrt(2.0 / fan_in)


glorot = glorot_uniform
he = he_normal
