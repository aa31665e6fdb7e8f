"""JAX's convolution helpers around ``lax.conv_general_dilated``: ``conv_transpose`` (a convolution of the input
dilated by the strides, with JAX's padding rule and, on request, the kernel flipped and its channels swapped),
``conv_with_general_padding``, ``conv_general_dilated_patches`` (a grouped convolution with a one-hot kernel, as
JAX builds it: the patch axis is ``channel * prod(filter_shape) + window position``), dimension numbers
(``ConvDimensionNumbers``, ``conv_dimension_numbers``, ``conv_general_permutations``) and the static shape
helpers (``conv_shape_tuple``, ``conv_general_shape_tuple``, ``conv_transpose_shape_tuple``,
``reduce_window_shape_tuple``). ``conv_transpose`` follows JAX's default ``use_consistent_padding=False``:
string padding names the forward convolution's, explicit pairs pad the dilated input directly."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from typing_extensions import Unpack

from ...staging.primitives.convolution import dilated_size
from ...tensor import Tensor
from ..numpy._core import as_tensor, op
from .convolution import _permutations, conv_general_dilated
from .padding import window_pads
from .structural import broadcast_in_dim, convert_element_type, reshape, rev, transpose

__all__ = [
    "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated_patches", "conv_general_permutations",
    "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose", "conv_transpose_shape_tuple",
    "conv_with_general_padding", "reduce_window_shape_tuple",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Padding = str | Sequence[tuple[int, int]]
Shape = Sequence[int]


class ConvDimensionNumbers(NamedTuple):
    """Axis roles, batch/feature first then the spatial axes: input (N, C, ...), kernel (O, I, ...), output."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """Axis roles of three layout strings (``("NHWC", "HWIO", "NHWC")``) as three axis tuples."""
    return tuple(_permutations(tuple(dimension_numbers)))


def conv_dimension_numbers(lhs_shape: Shape, rhs_shape: Shape, dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None: channels first, three layout strings, or axis tuples) in canonical form."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"lax.conv_dimension_numbers: input and kernel ranks differ: {tuple(lhs_shape)} and "
                        f"{tuple(rhs_shape)}")
    if dimension_numbers is None:
        axes = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(axes, axes, axes)
    parts = tuple(dimension_numbers)
    if len(parts) != 3:
        raise TypeError(f"lax.conv_dimension_numbers: expects None or 3 layouts, got {dimension_numbers!r}")
    if not all(isinstance(p, str) for p in parts):
        return ConvDimensionNumbers(*(tuple(int(i) for i in p) for p in parts))
    if any(len(p) != len(lhs_shape) for p in parts):
        raise TypeError(f"lax.conv_dimension_numbers: layouts {parts!r} do not have rank {len(lhs_shape)}")
    return ConvDimensionNumbers(*conv_general_permutations(parts))


def _default_transpose_layout(ndim: int) -> tuple[str, str, str]:
    """JAX's channels-last default for ``conv_transpose`` (TensorFlow's convention)."""
    if not 2 <= ndim <= 5:
        raise ValueError(f"lax.conv_transpose: no default dimension_numbers for rank {ndim}; pass them")
    spatial = "HWD"[: ndim - 2]
    return f"N{spatial}C", f"{spatial}IO", f"N{spatial}C"


def _transpose_pad(kernel: int, stride: int, padding: str) -> tuple[int, int]:
    """The padding of the stride-dilated input that makes the transpose of a ``padding`` forward convolution."""
    if padding == "SAME":
        total = kernel + stride - 2
        low = kernel - 1 if stride > kernel - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + max(kernel - stride, 0)
        low = kernel - 1
    else:
        raise ValueError(f"lax.conv_transpose: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")
    return low, total - low


@op
def conv_transpose(
    lhs: AnyTensor, rhs: AnyTensor, strides: Sequence[int], padding: Padding,
    rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None, transpose_kernel: bool = False,
    precision: Any = None, preferred_element_type: Any = None,
) -> AnyTensor:
    """The transposed convolution (JAX's ``lax.conv_transpose``; Keras's ``Conv2DTranspose`` with
    ``transpose_kernel=True``): a stride-1 convolution of ``lhs`` dilated by ``strides``."""
    x: Any = as_tensor(lhs)
    k: Any = as_tensor(rhs)
    layout = _default_transpose_layout(x.ndim) if dimension_numbers is None else dimension_numbers
    dims = conv_dimension_numbers(x.shape, k.shape, layout)
    n = x.ndim - 2
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * n
    spans = [dilated_size(k.shape[a], d) for a, d in zip(dims.rhs_spec[2:], dilation)]
    pads = ([_transpose_pad(s, t, padding) for s, t in zip(spans, strides)] if isinstance(padding, str)
            else [(int(lo), int(hi)) for lo, hi in padding])
    if transpose_kernel:
        k = rev(k, dims.rhs_spec[2:])
        order = list(range(k.ndim))
        order[dims.rhs_spec[0]], order[dims.rhs_spec[1]] = order[dims.rhs_spec[1]], order[dims.rhs_spec[0]]
        k = transpose(k, order)
    return conv_general_dilated(x, k, (1,) * n, pads, tuple(strides), dilation, dims, precision=precision,
                                preferred_element_type=preferred_element_type)


@op
def conv_with_general_padding(
    lhs: AnyTensor, rhs: AnyTensor, window_strides: Sequence[int], padding: Padding,
    lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
    precision: Any = None, preferred_element_type: Any = None,
) -> AnyTensor:
    """``conv_general_dilated`` in the channels-first layout (JAX's ``lax.conv_with_general_padding``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def _one_hot_kernel(x: AnyTensor, filter_shape: tuple[int, ...], dims: ConvDimensionNumbers) -> AnyTensor:
    """Kernel ``(C * P, 1, *filter_shape)`` (in ``dims``' layout) that copies each window position of each
    channel to its own output feature, P the window's size."""
    size, channels = math.prod(filter_shape), x.shape[dims.lhs_spec[1]]
    eye = convert_element_type(as_tensor(np.eye(size)), x.dtype)
    k = reshape(broadcast_in_dim(eye, (channels, size, size), (1, 2)), (channels * size, 1, *filter_shape))
    # k's axes are (O, I, *spatial); rhs_spec says where each must go.
    return transpose(k, tuple(int(i) for i in np.argsort(dims.rhs_spec)))


@op
def conv_general_dilated_patches(
    lhs: AnyTensor, filter_shape: Sequence[int], window_strides: Sequence[int], padding: Padding,
    lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None, precision: Any = None, preferred_element_type: Any = None,
) -> AnyTensor:
    """The patches a convolution with a ``filter_shape`` window would see, flattened into the feature axis
    (JAX's ``lax.conv_general_dilated_patches``: ``channel * prod(filter_shape) + position`` in the window)."""
    x, window = as_tensor(lhs), tuple(int(s) for s in filter_shape)
    dims = conv_dimension_numbers(x.shape, (1, 1, *window), dimension_numbers)
    kernel = _one_hot_kernel(x, window, dims)
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dims,
                                feature_group_count=x.shape[dims.lhs_spec[1]],
                                preferred_element_type=preferred_element_type)


def _strided(size: int, window: int, stride: int) -> int:
    return 0 if size < window else (size - window) // stride + 1


def conv_shape_tuple(lhs_shape: Shape, rhs_shape: Shape, strides: Sequence[int], pads: Padding,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """A channels-first convolution's output shape."""
    pairs = window_pads("conv_shape_tuple", pads, lhs_shape[2:], rhs_shape[2:], strides)
    padded = [s + lo + hi for s, (lo, hi) in zip(lhs_shape[2:], pairs)]
    if any(p < 0 for p in padded):
        raise ValueError(f"lax.conv_shape_tuple: padding {pairs} crops more than {tuple(lhs_shape[2:])}")
    space = tuple(_strided(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *space)


def _canonical(lhs_shape: Shape, rhs_shape: Shape, dimension_numbers: Any) -> tuple[ConvDimensionNumbers, Shape, Shape]:
    dims = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return dims, [lhs_shape[i] for i in dims.lhs_spec], [rhs_shape[i] for i in dims.rhs_spec]


def _in_layout(shape: Sequence[int], out_spec: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[i]) for i in np.argsort(out_spec))


def conv_general_shape_tuple(lhs_shape: Shape, rhs_shape: Shape, window_strides: Sequence[int], padding: Padding,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """``conv_general_dilated``'s output shape (no dilation)."""
    dims, lhs, rhs = _canonical(lhs_shape, rhs_shape, dimension_numbers)
    return _in_layout(conv_shape_tuple(lhs, rhs, window_strides, padding), dims.out_spec)


def conv_transpose_shape_tuple(lhs_shape: Shape, rhs_shape: Shape, window_strides: Sequence[int], padding: Padding,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """``conv_transpose``'s output shape (no kernel dilation)."""
    dims, lhs, rhs = _canonical(lhs_shape, rhs_shape, dimension_numbers)
    pairs = ([_transpose_pad(k, s, padding) for k, s in zip(rhs[2:], window_strides)] if isinstance(padding, str)
             else padding)
    space = [(i - 1) * s - k + 2 + lo + hi for i, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, pairs)]
    return _in_layout((lhs[0], rhs[0], *space), dims.out_spec)


def reduce_window_shape_tuple(operand_shape: Shape, window_dimensions: Shape, window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]], base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """``reduce_window``'s output shape for explicit ``(low, high)`` padding."""
    ones = (1,) * len(operand_shape)
    sizes = [dilated_size(s, d) + lo + hi
             for s, d, (lo, hi) in zip(operand_shape, base_dilation or ones, padding)]
    windows = [dilated_size(w, d) for w, d in zip(window_dimensions, window_dilation or ones)]
    return tuple(_strided(s, w, t) for s, w, t in zip(sizes, windows, window_strides))

