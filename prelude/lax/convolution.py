"""``lax.conv_general_dilated`` and ``lax.conv`` on the ``conv_general_dilated`` primitive, with JAX's arguments:
``padding`` as (low, high) pairs (negative crops) or ``"SAME"``/``"SAME_LOWER"``/``"VALID"`` (computed on the
dilated input and kernel, as JAX does), and ``dimension_numbers`` as None (channels first), three layout strings
(``("NHWC", "HWIO", "NHWC")``: spatial axes pair up by their letters, in the kernel's order) or three tuples of
axis indices (batch/feature first, as StableHLO's).

``precision`` reaches XLA as the convolution's ``precision_config``, as in JAX: a ``lax.Precision`` (or its
name: ``'highest'``, ``'float32'``, ``'HIGH'``...) asks for that operand precision; None takes
``ts.default_matmul_precision``'s (else full f32). Deliberate differences: a pair of precisions asks for the
higher of the two for both operands (the primitive carries one), and a ``DotAlgorithm`` or
``DotAlgorithmPreset`` is advisory (treated as None). ``preferred_element_type`` converts the operands first,
so the convolution accumulates in that dtype too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...staging.primitives import convolution as CV
from ...staging.primitives import elementwise as E
from ...staging.primitives.convolution import ConvDims, dilated_size
from ...staging.primitives.linalg import PRECISIONS
from ...tensor import Tensor
from ..nn._conv import per_axis
from ..numpy._core import op, shape_error, wrap
from ._operands import dtype_argument, strict_atoms
from .padding import window_pads

__all__ = ["conv", "conv_general_dilated"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Padding = str | Sequence[tuple[int, int]]


def _permutations(specs: Sequence[str]) -> ConvDims:
    """Axis roles from layout strings (``"NCHW"``, ``"OIHW"``, ``"NCHW"``)."""
    lhs, rhs, out = specs
    if sorted(lhs.replace("N", "").replace("C", "")) != sorted(rhs.replace("O", "").replace("I", "")) or {
        len(lhs), len(rhs), len(out)
    } != {len(lhs)}:
        raise ValueError(f"lax.conv_general_dilated: layouts {tuple(specs)!r} do not name the same spatial axes")

    def ordered(spec: str, first: str, second: str) -> tuple[int, ...]:
        spatial = sorted((i for i, c in enumerate(spec) if c not in (first, second)), key=lambda i: rhs.index(spec[i]))
        return (spec.index(first), spec.index(second), *spatial)

    try:
        return ConvDims(ordered(lhs, "N", "C"), ordered(rhs, "O", "I"), ordered(out, "N", "C"))
    except ValueError:
        raise ValueError(
            f"lax.conv_general_dilated: layouts must name N and C (input, output) and O and I (kernel), got {tuple(specs)!r}"
        ) from None


def _dimension_numbers(value: Any, n: int) -> ConvDims:
    if value is None:
        return ConvDims.channels_first(n)
    if isinstance(value, ConvDims):
        return value
    parts = tuple(value)
    if len(parts) == 3 and all(isinstance(p, str) for p in parts):
        return _permutations(parts)
    if len(parts) == 3:
        return ConvDims(*(tuple(int(i) for i in p) for p in parts))
    raise TypeError(f"lax.conv_general_dilated: dimension_numbers must be None, 3 layout strings or 3 axis tuples, got {value!r}")


def _pads(padding: Padding, lhs: Any, rhs: Any, dims: ConvDims, strides: Sequence[int], lhs_dilation: Sequence[int],
          rhs_dilation: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Padding on the dilated input and kernel's spatial axes, as JAX computes a padding type."""
    sizes = [dilated_size(lhs.shape[a], d) for a, d in zip(dims.lhs[2:], lhs_dilation)]
    spans = [dilated_size(rhs.shape[a], d) for a, d in zip(dims.rhs[2:], rhs_dilation)]
    return tuple(window_pads("conv_general_dilated", padding, sizes, spans, strides))


def precision_param(value: Any) -> str | None:
    """An explicit ``precision=`` as StableHLO's operand precision (None: the staging default)."""
    from .settings import DotAlgorithm, DotAlgorithmPreset  # (not at the top: settings imports this module)

    if value is None or isinstance(value, (DotAlgorithm, DotAlgorithmPreset)):
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return max((_one_precision(v) for v in value), key=PRECISIONS.index)
    return _one_precision(value)


def _one_precision(value: Any) -> str:
    from .settings import Precision

    if isinstance(value, str) and value.upper() in PRECISIONS:
        return value.upper()
    try:
        return Precision(value).name
    except (ValueError, TypeError):
        raise ValueError(
            f"lax.conv_general_dilated: unknown precision {value!r}; expected None, a lax.Precision, a precision name "
            "('default', 'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32') or a pair of them"
        ) from None


@op
def conv_general_dilated(
    lhs: AnyTensor, rhs: AnyTensor, window_strides: Sequence[int], padding: Padding,
    lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None, feature_group_count: int = 1, batch_group_count: int = 1,
    precision: Any = None, preferred_element_type: Any = None,
) -> AnyTensor:
    """A general convolution (JAX's ``lax.conv_general_dilated``): strided, padded, with input (transposed
    convolution) and kernel (atrous) dilation, feature and batch groups, any layout."""
    x, k = strict_atoms("conv_general_dilated", lhs, rhs)
    if preferred_element_type is not None:
        dtype = dtype_argument("conv_general_dilated", preferred_element_type)
        x, k = E.convert(x, dtype), E.convert(k, dtype)
    n = x.aval.ndim - 2
    dims = _dimension_numbers(dimension_numbers, n)
    strides = per_axis("conv_general_dilated", "window_strides", window_strides, n)
    lhs_d = per_axis("conv_general_dilated", "lhs_dilation", 1 if lhs_dilation is None else lhs_dilation, n)
    rhs_d = per_axis("conv_general_dilated", "rhs_dilation", 1 if rhs_dilation is None else rhs_dilation, n)
    if len(dims.lhs) != x.aval.ndim:
        raise shape_error("conv_general_dilated", f"dimension numbers {tuple(dims)} do not fit {x.aval}")
    pads = _pads(padding, x.aval, k.aval, dims, strides, lhs_d, rhs_d)
    return wrap(CV.conv_general_dilated(x, k, strides, pads, lhs_d, rhs_d, dims, feature_group_count, batch_group_count,
                                        precision_param(precision)))


@op
def conv(lhs: AnyTensor, rhs: AnyTensor, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> AnyTensor:
    """``conv_general_dilated`` in the channels-first layout with no dilation (JAX's ``lax.conv``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)
