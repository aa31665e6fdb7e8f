"""``ts.nn.initializers``: JAX's initializer factories (``jax.nn.initializers``). Each factory returns an
initializer ``init(key, shape, dtype=...)``; ``zeros`` and ``ones`` are initializers themselves.

``variance_scaling`` is the family's root, as in JAX: a variance of ``scale / fan`` (fan_in, fan_out, their mean
or their geometric mean, from ``in_axis``/``out_axis``, other axes but ``batch_axis`` multiplying both), drawn from
a normal truncated to two standard deviations (rescaled to keep the variance), a normal, or a uniform. With the
same keys the draws equal JAX's (the samplers underneath are JAX's constructions). Real float dtypes only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np
from typing_extensions import Unpack

from ...dtypes import f32, to_numpy
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy.linalg_namespace import qr
from ..numpy._core import ShapeLike, parse_shape, shape_error
from ..random import Key, normal as _normal, truncated_normal as _truncated_normal, uniform as _uniform

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "kaiming_normal",
    "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal",
    "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]
Axes = int | Sequence[int]
_TRUNCATED_STD = 0.87962566103423978  # std of a standard normal truncated to (-2, 2)


class Initializer(Protocol):
    """``init(key, shape, dtype)``: a weight of ``shape``."""

    def __call__(self, key: Key, shape: ShapeLike, dtype: Any = ...) -> AnyTensor: ...


def zeros(key: Key, shape: ShapeLike, dtype: Any = f32) -> AnyTensor:
    return tnp.zeros(parse_shape("zeros", shape)[0], dtype=to_numpy(dtype))


def ones(key: Key, shape: ShapeLike, dtype: Any = f32) -> AnyTensor:
    return tnp.ones(parse_shape("ones", shape)[0], dtype=to_numpy(dtype))


def constant(value: Any, dtype: Any = f32) -> Initializer:
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        return tnp.full(parse_shape("constant", shape)[0], value, dtype=to_numpy(dtype))

    return init


def uniform(scale: float = 1e-2, dtype: Any = f32) -> Initializer:
    """Uniform in ``[0, scale)``."""
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        return _uniform(key, shape, dtype, 0.0, scale)

    return init


def normal(stddev: float = 1e-2, dtype: Any = f32) -> Initializer:
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        return stddev * _normal(key, shape, dtype)

    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = f32, lower: float = -2.0, upper: float = 2.0) -> Initializer:
    """``stddev`` times a standard normal truncated to ``(lower, upper)`` (not rescaled, as JAX's)."""
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        return stddev * _truncated_normal(key, lower, upper, shape, dtype)

    return init


def _fans(shape: tuple[int, ...], in_axis: Axes, out_axis: Axes, batch_axis: Axes) -> tuple[float, float]:
    def size(axes: Axes) -> int:
        picked = [axes] if isinstance(axes, int) else list(axes)
        return math.prod(shape[a] for a in picked)

    try:
        fan_in, fan_out, batch = size(in_axis), size(out_axis), size(batch_axis)
    except IndexError:
        raise shape_error("variance_scaling", f"axes in={in_axis}, out={out_axis} do not fit the shape {shape}") from None
    field = math.prod(shape) / max(fan_in * fan_out * batch, 1)
    return fan_in * field, fan_out * field


def variance_scaling(scale: float, mode: Mode, distribution: Distribution, in_axis: Axes = -2, out_axis: Axes = -1,
                     batch_axis: Axes = (), dtype: Any = f32) -> Initializer:
    """Draws of variance ``scale / fan`` (see the module docstring)."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"variance_scaling: mode must be fan_in, fan_out, fan_avg or fan_geo_avg, got {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: distribution must be truncated_normal, normal or uniform, got {distribution!r}")

    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        sizes = parse_shape("variance_scaling", shape)[0]
        fan_in, fan_out = _fans(sizes, in_axis, out_axis, batch_axis)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
               "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
        variance = scale / max(fan, 1e-30)
        if distribution == "truncated_normal":
            return math.sqrt(variance) / _TRUNCATED_STD * _truncated_normal(key, -2.0, 2.0, sizes, dtype)
        if distribution == "normal":
            return math.sqrt(variance) * _normal(key, sizes, dtype)
        return math.sqrt(3 * variance) * _uniform(key, sizes, dtype, -1.0, 1.0)

    return init


def _family(scale: float, mode: Mode, distribution: Distribution) -> Any:
    def factory(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = f32) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    return factory


class Factory(Protocol):
    def __call__(self, in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = f32) -> Initializer: ...


glorot_uniform: Factory = _family(1.0, "fan_avg", "uniform")
glorot_normal: Factory = _family(1.0, "fan_avg", "truncated_normal")
lecun_uniform: Factory = _family(1.0, "fan_in", "uniform")
lecun_normal: Factory = _family(1.0, "fan_in", "truncated_normal")
he_uniform: Factory = _family(2.0, "fan_in", "uniform")
he_normal: Factory = _family(2.0, "fan_in", "truncated_normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = f32) -> Initializer:
    """A matrix with orthonormal columns (or rows, when wider than tall), over the other axes flattened, times
    ``scale``: the Q of a Gaussian matrix's QR with R's diagonal made positive (so Q is Haar-distributed)."""
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        sizes = parse_shape("orthogonal", shape)[0]
        if len(sizes) < 2:
            raise shape_error("orthogonal", f"needs a shape of rank >= 2, got {sizes}")
        axis = column_axis % len(sizes)
        n_cols = sizes[axis]
        n_rows = math.prod(sizes) // max(n_cols, 1)
        wide = n_rows < n_cols
        a = _normal(key, (n_cols, n_rows) if wide else (n_rows, n_cols), dtype)
        q, r = qr(a)
        q = q * tnp.sign(tnp.diagonal(r, axis1=-2, axis2=-1))
        if wide:
            q = q.T
        rest = tuple(np.delete(np.array(sizes), axis).tolist())
        return scale * tnp.moveaxis(tnp.reshape(q, (*rest, n_cols)), -1, axis)

    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = f32) -> Initializer:
    """For convolution kernels ``(*spatial, in, out)`` (1 to 3 spatial axes, ``in <= out``): an orthogonal
    ``(in, out)`` matrix at the window's center, zeros elsewhere (Xiao et al., 2018)."""
    def init(key: Key, shape: ShapeLike, dtype: Any = dtype) -> AnyTensor:
        sizes = parse_shape("delta_orthogonal", shape)[0]
        if len(sizes) not in (3, 4, 5) or sizes[-2] > sizes[-1]:
            raise shape_error("delta_orthogonal", f"needs a kernel shape (*spatial, in, out) with 1 to 3 spatial axes and "
                              f"in <= out, got {sizes}")
        center = tuple((k - 1) // 2 for k in sizes[:-2])
        matrix = orthogonal(scale, column_axis, dtype)(key, sizes[-2:], dtype)
        return tnp.zeros(sizes, dtype=to_numpy(dtype)).at[center].set(matrix)

    return init
