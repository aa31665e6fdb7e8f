"""Convolutions in the JAX/Flax layout: channels-last inputs ``(N, *spatial, C)`` and kernels
``(*window, C // groups, O)``, and a ``Conv`` layer whose weights are a pytree (its configuration is static).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, overload

import attrs
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, f32
from ...pytree import register_pytree_node
from ...staging.primitives import convolution as C
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ..numpy import zeros
from ..numpy._core import as_tensor, describe, op, shape_error, wrap
from ..random import Key
from ._init import glorot_uniform

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)
N = TypeVar("N")
In = TypeVar("In")
Out = TypeVar("Out")
Sh = TypeVarTuple("Sh")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
# "VALID", "SAME", one int for every side, or one (low, high) pair (or int) per spatial axis.
Padding = str | int | Sequence[int | tuple[int, int]]
Initializer = Callable[[Key, tuple[int, ...], Any], AnyTensor]


def per_axis(op_name: str, what: str, value: int | Sequence[int], n: int, minimum: int = 1) -> tuple[int, ...]:
    """A static per-spatial-axis setting (``strides``, ``dilation``, ``window``): one int for all, or ``n`` ints."""
    items: tuple[Any, ...] = (value,) * n if not isinstance(value, (tuple, list)) else tuple(value)
    try:
        out = tuple(operator.index(v) for v in items if not isinstance(v, bool))
    except TypeError:
        out = ()
    if len(out) != n or len(items) != n or any(v < minimum for v in out):
        raise shape_error(op_name, f"{what} must be an int >= {minimum} or {n} of them (one per spatial axis), got {value!r}")
    return out


def resolve_padding(
    op_name: str, padding: Padding, sizes: Sequence[int], spans: Sequence[int], strides: Sequence[int],
    allow_negative: bool = False,
) -> tuple[tuple[int, int], ...]:
    """(low, high) per spatial axis. 'SAME' pads so ``ceil(size / stride)`` windows fit, the odd element at the
    high end (TensorFlow's and Flax's rule); 'VALID' pads nothing. ``allow_negative``: explicit negative amounts
    crop (as ``lax.conv_general_dilated`` allows)."""
    n = len(sizes)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return ((0, 0),) * n
        if mode == "SAME":
            pads = []
            for size, span, stride in zip(sizes, spans, strides):
                total = max((-(-size // stride) - 1) * stride + span - size, 0)
                pads.append((total // 2, total - total // 2))
            return tuple(pads)
        raise shape_error(op_name, f"padding must be 'VALID', 'SAME', an int or (low, high) pairs, got {padding!r}")
    items: Sequence[Any] = (padding,) * n if not isinstance(padding, (tuple, list)) else padding
    pairs: list[tuple[int, int]] = []
    for item in items:
        pair = (item, item) if not isinstance(item, (tuple, list)) else tuple(item)
        try:
            lo, hi = (operator.index(v) for v in pair if not isinstance(v, bool))
        except (TypeError, ValueError):
            break
        if not allow_negative and (lo < 0 or hi < 0):
            break
        pairs.append((lo, hi))
    if len(pairs) != n or len(items) != n:
        kind = "" if allow_negative else " non-negative"
        raise shape_error(
            op_name, f"padding {padding!r} must be 'VALID', 'SAME', an int or {n}{kind} (low, high) pairs"
        )
    return tuple(pairs)


@overload
def conv(
    x: Tensor[FT, N, Any, Any], w: Tensor[FT, Any, Any, Out], strides: int | Sequence[int] = 1,
    padding: Padding = "VALID", dilation: int | Sequence[int] = 1, groups: int = 1,
) -> Tensor[FT, N, Any, Out]: ...
@overload
def conv(
    x: Tensor[FT, N, Any, Any, Any], w: Tensor[FT, Any, Any, Any, Out], strides: int | Sequence[int] = 1,
    padding: Padding = "VALID", dilation: int | Sequence[int] = 1, groups: int = 1,
) -> Tensor[FT, N, Any, Any, Out]: ...
@overload
def conv(
    x: Tensor[FT, N, Any, Any, Any, Any], w: Tensor[FT, Any, Any, Any, Any, Out], strides: int | Sequence[int] = 1,
    padding: Padding = "VALID", dilation: int | Sequence[int] = 1, groups: int = 1,
) -> Tensor[FT, N, Any, Any, Any, Out]: ...
@overload
def conv(
    x: AnyTensor, w: AnyTensor, strides: int | Sequence[int] = 1, padding: Padding = "VALID",
    dilation: int | Sequence[int] = 1, groups: int = 1,
) -> AnyTensor: ...
@op
def conv(
    x: AnyTensor, w: AnyTensor, strides: int | Sequence[int] = 1, padding: Padding = "VALID",
    dilation: int | Sequence[int] = 1, groups: int = 1,
) -> AnyTensor:
    """Cross-correlation (what deep learning calls convolution) of ``x`` ``(N, *spatial, C)`` (or unbatched
    ``(*spatial, C)``) with ``w`` ``(*window, C // groups, O)``: result ``(N, *out_spatial, O)``. ``dilation`` spaces
    the kernel's taps; ``groups`` splits the channels into independent groups (``groups == C``: depthwise).
    Explicit negative padding crops the input, as in ``lax.conv_general_dilated``."""
    name = "conv"
    xt, wt = as_tensor(x), as_tensor(w)
    n = wt.aval.ndim - 2
    if n < 1:
        raise shape_error(name, f"kernel {describe(w)} must be (*window, in_features // groups, out_features)")
    if xt.aval.ndim not in (n + 1, n + 2):
        raise shape_error(
            name, f"input {describe(x)} must be (batch, *spatial, features) or (*spatial, features) with {n} spatial "
            f"axes, to match the kernel {describe(w)}",
        )
    if type(groups) is not int or groups < 1:
        raise shape_error(name, f"groups must be an int >= 1, got {groups!r}")
    unbatched = xt.aval.ndim == n + 1
    lhs = xt.atom
    if unbatched:
        lhs = S.reshape(lhs, (1, *lhs.aval.shape), (None, *lhs.aval.dims))
    strides_ = per_axis(name, "strides", strides, n)
    dilation_ = per_axis(name, "dilation", dilation, n)
    spatial = lhs.aval.shape[1:-1]
    spans = [C.dilated_size(k, d) for k, d in zip(wt.aval.shape[:n], dilation_)]
    pads = resolve_padding(name, padding, spatial, spans, strides_, allow_negative=True)
    out = C.conv_general_dilated(
        lhs, wt.atom, strides_, pads, None, dilation_, C.ConvDims.channels_last(n), feature_group_count=groups
    )
    if unbatched:
        out = S.reshape(out, out.aval.shape[1:], out.aval.dims[1:])
    return wrap(out)


@attrs.frozen
class Conv(Generic[DT, In, Out]):
    """A convolution layer: ``conv(x, w, ...) + b``. ``w`` is ``(*window, In // groups, Out)``. Only ``w`` and ``b``
    are pytree leaves; the configuration is static (part of the tree's structure)."""

    w: AnyTensor
    b: Tensor[DT, Out]
    strides: tuple[int, ...] = (1,)
    padding: str | tuple[tuple[int, int], ...] = "VALID"
    dilation: tuple[int, ...] = (1,)
    groups: int = 1

    def __call__(self, x: Tensor[DT, Unpack[Sh], In]) -> Tensor[DT, Unpack[tuple[Any, ...]], Out]:
        y = conv(x, self.w, self.strides, self.padding, self.dilation, self.groups)
        return y + self.b


register_pytree_node(
    Conv,
    lambda layer: ((layer.w, layer.b), (layer.strides, layer.padding, layer.dilation, layer.groups)),
    lambda aux, children: Conv(*children, *aux),  # type: ignore[misc]
)


def conv_layer(
    key: Key, in_features: int, out_features: int, window: int | Sequence[int], strides: int | Sequence[int] = 1,
    padding: Padding = "VALID", dilation: int | Sequence[int] = 1, groups: int = 1, spatial: int | None = None,
    init: Initializer = glorot_uniform, dtype: type[Floating] | Any = f32,
) -> Conv[Any, Any, Any]:
    """A ``Conv`` layer with ``init(key, (*window, in_features // groups, out_features), dtype)`` weights and zero
    biases. ``window`` is one int per spatial axis (or one int for ``spatial`` axes, default 2)."""
    name = "conv_layer"
    n = len(window) if isinstance(window, (tuple, list)) else (2 if spatial is None else spatial)
    window_ = per_axis(name, "window", window, n)
    if type(groups) is not int or groups < 1 or in_features % groups or out_features % groups:
        raise shape_error(name, f"groups ({groups!r}) must be an int >= 1 dividing in_features ({in_features}) and "
                          f"out_features ({out_features})")
    pads: str | tuple[tuple[int, int], ...]
    if isinstance(padding, str):
        resolve_padding(name, padding, [1] * n, [1] * n, [1] * n)  # validates the name
        pads = padding.upper()
    else:
        pads = resolve_padding(name, padding, [0] * n, [0] * n, [1] * n, allow_negative=True)
    w = init(key, (*window_, in_features // groups, out_features), dtype)
    return Conv(w, zeros((out_features,), dtype=dtype), per_axis(name, "strides", strides, n), pads,
                per_axis(name, "dilation", dilation, n), groups)
