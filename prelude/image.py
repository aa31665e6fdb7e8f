"""``tensorstage.image``: JAX's ``jax.image``: ``resize`` and ``scale_and_translate`` with the ``ResizeMethod``s
nearest, linear, cubic (Keys; and PyTorch's), Lanczos 3 and 5, and area.

As JAX: pixels are half-centred; each spatial axis gets a weight matrix ``(input size, output size)`` of the
kernel at the distances between the output samples (mapped back into the input) and the input pixels, widened by
``1 / scale`` when downsampling with ``antialias``, its columns normalized to sum 1 and zeroed where the sample
falls outside the input; the image is contracted with one matrix per resized axis. With a static scale and
translation (always in ``resize``) the matrices are NumPy float64 constants rounded once to the image's dtype (JAX
computes them in float32 unless x64 is on: float32 results differ from its by float32 rounding, ~1e-6); tensor
ones in ``scale_and_translate`` are computed on the device in the image's dtype, differentiably. Nearest resizing
gathers the input pixel under each output pixel centre (JAX's float32 arithmetic, so the same pixels).

Deliberate differences from JAX: the image must be floating-point for every method but nearest (JAX converts
integers to float); tensor ``scale``/``translation`` are converted to the image's dtype; ``precision`` is accepted
and ignored (XLA's CPU matrix products are full precision).
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ..dtypes import DType, Floating
from ..staging import dtypes as _dt
from ..tensor import Tensor
from . import numpy as tnp
from .numpy._core import as_tensor, describe, dtype_error, op, shape_error

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Kernel = Callable[[Any, Any], Any]  # (distances, NumPy or tensorstage.numpy) -> weights


class ResizeMethod(enum.Enum):
    """Image resize methods (JAX's): ``NEAREST``, ``LINEAR``, ``LANCZOS3``, ``LANCZOS5``, ``CUBIC`` (Keys),
    ``CUBIC_PYTORCH`` (OpenCV/PyTorch's a = -0.75, with edge padding when not antialiasing) and ``AREA``."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for: 'nearest', 'linear' ('bilinear', 'trilinear', 'triangle'), 'lanczos3',
        'lanczos5', 'cubic' ('bicubic', 'tricubic'), 'cubic-pytorch' ('bicubic-pytorch'), 'area'."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"; expected one of {", ".join(sorted(_NAMES))}')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC, "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA,
}

# ---------------------------------------------------------------------------------------------- kernels
# Each is written once for NumPy and tensorstage.numpy (``xp``): a static scale and translation give the weight
# matrices as NumPy constants in the image's dtype (no graph for XLA to fold), tensor ones are computed on the
# device, differentiably.


def _lanczos(radius: float) -> Kernel:
    def kernel(x: Any, xp: Any) -> Any:
        y = radius * xp.sin(math.pi * x) * xp.sin(math.pi * x / radius)
        # sin(pi x) sin(pi x / r) / x² loses all precision near 0, where the kernel is 1
        out = xp.where(x > 1e-3, y / xp.where(x != 0, math.pi**2 * x**2, 1.0), 1.0)
        return xp.where(x > radius, 0.0, out)

    return kernel


def _keys_cubic(x: Any, xp: Any) -> Any:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = xp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return xp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Any, xp: Any) -> Any:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = xp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return xp.where(x >= 2.0, 0.0, out)


def _triangle(x: Any, xp: Any) -> Any:
    return xp.maximum(0.0, 1.0 - xp.abs(x))


_KERNELS: dict[ResizeMethod, tuple[int, Kernel | None]] = {  # radius, kernel (None: area)
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, None),
}
_SMALL_SUM = 1000.0 * float(np.finfo(np.float32).eps)  # JAX's threshold under which a column is dropped


# ------------------------------------------------------------------------------------------ weight matrix


class _Axis:
    """One resized axis: sizes, and the scale and translation (Python numbers or 0-d tensors)."""

    def __init__(self, input_size: int, output_size: int, scale: Any, translation: Any) -> None:
        self.input_size, self.output_size = input_size, output_size
        self.scale, self.translation = scale, translation

    @property
    def static(self) -> bool:
        return not isinstance(self.scale, Tensor) and not isinstance(self.translation, Tensor)


def _weights(axis: _Axis, method: ResizeMethod, antialias: bool, dtype: np.dtype[Any]) -> AnyTensor:
    """JAX's ``compute_weight_mat``: ``(input_size, output_size)`` weights of the input pixels per output one."""
    if axis.static:  # float64 NumPy values rounded once to the image's dtype, a constant
        wide = np.dtype(np.float64)
        scale, shift = np.asarray(axis.scale, wide), np.asarray(axis.translation, wide)
        return tnp.asarray(_weight_matrix(axis, scale, shift, method, antialias, wide, np), dtype=dtype)
    return _weight_matrix(axis, axis.scale, axis.translation, method, antialias, dtype, tnp)  # type: ignore[no-any-return]


def _weight_matrix(axis: _Axis, scale: Any, shift: Any, method: ResizeMethod, antialias: bool, dtype: np.dtype[Any],
                   xp: Any) -> Any:
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    inv_scale = 1.0 / scale
    outputs = xp.arange(axis.output_size, dtype=dtype)
    sample = (outputs + 0.5) * inv_scale - shift * inv_scale - 0.5
    reach = radius if edge_padding else 0
    inputs = xp.arange(-reach, axis.input_size + reach, dtype=dtype)
    if kernel is None:  # area: the overlap of each output pixel's span with each input pixel
        left = outputs * inv_scale - shift * inv_scale
        weights = xp.maximum(0.0, xp.minimum((left + inv_scale)[None, :], (inputs + 1.0)[:, None])
                             - xp.maximum(left[None, :], inputs[:, None]))
    else:
        kernel_scale = xp.maximum(inv_scale, 1.0) if antialias else 1.0
        weights = kernel(xp.abs(sample[None, :] - inputs[:, None]) / kernel_scale, xp)
    if edge_padding:  # the pixels beyond the edges are the edge pixels: their weights go to them
        clamped = np.clip(np.arange(-reach, axis.input_size + reach), 0, axis.input_size - 1)
        weights = xp.asarray(np.eye(axis.input_size)[clamped].T, dtype=dtype) @ weights
    total = xp.sum(weights, axis=0, keepdims=True)
    weights = xp.where(xp.abs(total) > _SMALL_SUM, weights / xp.where(total != 0, total, 1.0), 0.0)
    if edge_padding:
        return weights
    inside = (sample >= -0.5) & (sample <= axis.input_size - 0.5)
    return xp.where(inside[None, :], weights, 0.0)


def _contract(x: AnyTensor, axes: dict[int, _Axis], method: ResizeMethod, antialias: bool) -> AnyTensor:
    """``x`` with each of ``axes`` contracted against its weight matrix (the new axis in the old one's place)."""
    for d, axis in axes.items():
        w = _weights(axis, method, antialias, x.dtype)
        x = tnp.moveaxis(tnp.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


# ---------------------------------------------------------------------------------------------- checks


def _method(name: str, method: Any) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        try:
            return ResizeMethod.from_string(method)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
    raise TypeError(f"{name}: method must be a ResizeMethod or its name, got {method!r}")


def _shape(name: str, shape: Any, x: AnyTensor) -> tuple[int, ...]:
    try:
        sizes = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a sequence of ints, got {shape!r}") from None
    if len(sizes) != x.ndim:
        raise shape_error(name, f"shape must have one size per axis of the image: {sizes} for {x.aval}")
    if any(n < 0 for n in sizes):
        raise shape_error(name, f"shape {sizes} has a negative size")
    for n_in, n_out in zip(x.shape, sizes):
        if n_in == 0 and n_out != 0:
            raise shape_error(name, f"cannot resize an empty axis of {x.aval} to {sizes}")
    return sizes


def _float_image(name: str, image: Any) -> AnyTensor:
    x = as_tensor(image)
    if not _dt.is_float(x.dtype):
        raise dtype_error(name, f"{name} needs a floating-point image for this method, got {x.aval}; convert it "
                                "with .astype(f32)")
    return x


# ---------------------------------------------------------------------------------------------- public


def _resize_nearest(x: AnyTensor, shape: tuple[int, ...]) -> AnyTensor:
    """The input pixel under each output pixel centre, per resized axis (JAX's float32 arithmetic)."""
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m != n:
            centres = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
            x = tnp.take(x, np.floor(centres).astype(np.int32), axis=d)
    return x


@op
def resize(
    image: Tensor[DT, Unpack[Shape]], shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
    precision: Any = None,
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``image`` resampled to ``shape`` (one size per axis; an axis whose size is kept is left alone) by
    ``method`` (a ``ResizeMethod`` or its name); ``antialias`` widens the kernel when downsampling."""
    name = "resize"
    chosen = _method(name, method)
    x: AnyTensor = as_tensor(image)
    sizes = _shape(name, shape, x)
    if chosen == ResizeMethod.NEAREST:
        return _resize_nearest(x, sizes)
    x = _float_image(name, x)
    axes = {d: _Axis(m, n, 1.0 if n == 0 else n / m, 0.0) for d, (m, n) in enumerate(zip(x.shape, sizes)) if m != n}
    if chosen == ResizeMethod.CUBIC_PYTORCH and antialias:
        chosen = ResizeMethod.CUBIC
    return _contract(x, axes, chosen, antialias)


@op
def scale_and_translate(
    image: Tensor[FT, Unpack[Shape]], shape: Sequence[int], spatial_dims: Sequence[int],
    scale: Sequence[float] | Tensor[Any, Any], translation: Sequence[float] | Tensor[Any, Any],
    method: str | ResizeMethod, antialias: bool = True, precision: Any = None,
) -> Tensor[FT, Unpack[tuple[Any, ...]]]:
    """``image`` resampled to ``shape``: along each of ``spatial_dims``, the output pixel at ``y`` samples the
    input at ``(y - translation) / scale`` (half-centred pixels); samples outside the input give 0. ``scale`` and
    ``translation`` hold one number per spatial axis (tensors are differentiable)."""
    name = "scale_and_translate"
    chosen = _method(name, method)
    if chosen == ResizeMethod.NEAREST:
        raise ValueError(f"{name}: nearest neighbour resampling is not supported (as in JAX); use resize")
    x = _float_image(name, image)
    sizes = _shape(name, shape, x)
    dims = [_spatial_dim(name, d, x) for d in spatial_dims]
    if len(set(dims)) != len(dims):
        raise shape_error(name, f"spatial_dims {tuple(spatial_dims)} repeats an axis")
    scales, shifts = (_per_axis(name, what, v, len(dims), x.dtype)
                      for what, v in (("scale", scale), ("translation", translation)))
    for d in range(x.ndim):
        if d not in dims and x.shape[d] != sizes[d]:
            raise shape_error(name, f"axis {d} is not a spatial dim, so it must keep its size: {x.aval} to {sizes}")
    axes = {d: _Axis(x.shape[d], sizes[d], s, t) for d, s, t in zip(dims, scales, shifts)}
    if chosen == ResizeMethod.CUBIC_PYTORCH and antialias:
        chosen = ResizeMethod.CUBIC
    return _contract(x, axes, chosen, antialias)


def _spatial_dim(name: str, d: Any, x: AnyTensor) -> int:
    i = operator.index(d)
    if not -x.ndim <= i < x.ndim:
        raise shape_error(name, f"spatial dim {i} is out of range for the image {x.aval}")
    return i % x.ndim


def _per_axis(name: str, what: str, value: Any, count: int, dtype: np.dtype[Any]) -> list[Any]:
    """``count`` numbers (Python floats) or 0-d tensors of ``dtype``."""
    if isinstance(value, Tensor) or isinstance(value, np.ndarray):
        t: AnyTensor = as_tensor(value)
        if t.shape != (count,) or not _dt.is_float(t.dtype):
            raise shape_error(name, f"{what} must be a float vector of {count} entries (one per spatial dim), got "
                                    f"{describe(value)}")
        t = t.astype(dtype) if t.dtype != dtype else t
        return [t[i] for i in range(count)]
    items = list(value)
    if len(items) != count:
        raise shape_error(name, f"{what} must have {count} entries (one per spatial dim), got {value!r}")
    return [float(v) if isinstance(v, (int, float)) else as_tensor(v).astype(dtype) for v in items]
