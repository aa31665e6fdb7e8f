"""StableHLO for conv_general_dilated (``stablehlo.convolution``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging import dtypes
from ...staging.errors import DTypeError
from ...staging.ir import Aval
from ...staging.primitives import convolution as C
from ..emit import Emitter, Value, i64_array, lowers, remember
from .linalg import precision_props

_PROPS_TEXT: dict[Any, str] = {}  # attribute text by params; bounded


def _layout(spec: tuple[int, ...], first: str, second: str) -> str:
    """``[b, 0, 1, f]``: the role letter (or spatial index) of each axis, in axis order."""
    letters = [""] * len(spec)
    letters[spec[0]], letters[spec[1]] = first, second
    for i, axis in enumerate(spec[2:]):
        letters[axis] = str(i)
    return "[" + ", ".join(letters) + "]"


def _props(params: dict[str, Any]) -> str:
    dn: C.ConvDims = params["dimension_numbers"]
    numbers = f"{_layout(dn.lhs, 'b', 'f')}x{_layout(dn.rhs, 'o', 'i')}->{_layout(dn.out, 'b', 'f')}"
    padding = params["padding"]
    pads = "[" + ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in padding) + "]"
    return (
        f"batch_group_count = {int(params['batch_group_count'])} : i64, "
        f"dimension_numbers = #stablehlo.conv<{numbers}>, "
        f"feature_group_count = {int(params['feature_group_count'])} : i64, "
        f"lhs_dilation = {i64_array(params['lhs_dilation'])}, "
        f"padding = dense<{pads}> : tensor<{len(padding)}x2xi64>, "
        f"rhs_dilation = {i64_array(params['rhs_dilation'])}, "
        f"window_strides = {i64_array(params['window_strides'])}"
    )


@lowers(C.conv_general_dilated_p)
def _conv(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], **params: Any) -> list[Value]:
    dtype = args[0].aval.dtype
    if em.platform != "cpu" and not dtypes.is_float(dtype):
        # XLA:GPU has no integer convolutions (its cuDNN rewriter fails with UNIMPLEMENTED, as jax's do)
        raise DTypeError(
            f"convolutions of {dtypes.short_name(dtype)} operands ({args[0].aval} with {args[1].aval}) do not run on "
            f"{em.platform}: XLA has no integer convolutions there; convert the operands to a float dtype",
            "convolution", em.source,
        )
    key = tuple(params.items())
    props = _PROPS_TEXT.get(key)
    if props is None:
        props = remember(_PROPS_TEXT, key, _props(params), limit=1024)
    return em.op("stablehlo.convolution", args, outs, props + precision_props(em, dtype, params.get("precision")))
