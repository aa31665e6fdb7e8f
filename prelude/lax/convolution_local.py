"""``lax.conv_general_dilated_local``: a locally connected (unshared) convolution, from patches and one product."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, op, shape_error
from .convolution_more import conv_dimension_numbers, conv_general_dilated_patches
from .reductions import dot_general
from .settings import ConvGeneralDilatedDimensionNumbers, PrecisionLike

__all__ = ["conv_general_dilated_local"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def conv_general_dilated_local(
    lhs: AnyTensor, rhs: AnyTensor, window_strides: Sequence[int], padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int], lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None, dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    precision: PrecisionLike = None,
) -> AnyTensor:
    """A locally connected (unshared) convolution: a kernel per output position. ``rhs`` has, in the layout of
    ``dimension_numbers``' kernel spec, the output features ``O``, ``I = in_features * prod(filter_shape)`` and
    the output's spatial sizes (JAX's ``lax.conv_general_dilated_local``)."""
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers)
    x, k = as_tensor(lhs), as_tensor(rhs)
    dims = conv_dimension_numbers(x.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_batch = list(dims.out_spec[2:])
    rhs_batch = [dims.rhs_spec[2:][i] for i in sorted(range(len(lhs_batch)), key=lambda j: lhs_batch[j])]
    p = as_tensor(patches)
    if k.ndim != p.ndim:
        raise shape_error("conv_general_dilated_local", f"lax.conv_general_dilated_local: the kernel {k.aval} must "
                                                        f"have the patches' rank, {p.aval}")
    dn = (((dims.out_spec[1],), (dims.rhs_spec[1],)), (tuple(sorted(lhs_batch)), tuple(rhs_batch)))
    out = dot_general(patches, k, dn, precision=precision)
    return tnp.moveaxis(out, (-2, -1), (dims.out_spec[0], dims.out_spec[1]))
