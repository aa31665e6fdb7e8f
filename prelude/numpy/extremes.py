"""jax.numpy's ``top_k`` (the k largest or smallest elements along an axis, with their indices) and ``minmax``
(the minimum and maximum in one call), written with the library's sorts and reductions."""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import i32
from ...tensor import Tensor
from ._core import as_tensor, normalize_axes, op, shape_error
from .joining import take_along_axis
from .reductions import max as _max
from .reductions import min as _min
from .sorting import argsort
from .static_settings import static_int
from .ufuncs import maximum, minimum, where

__all__ = ["minmax", "top_k"]

Sh = TypeVarTuple("Sh")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Axis = int | type | tuple[int | type, ...] | None


@op
def top_k(
    a: Tensor[Any, Unpack[Sh]], k: int, /, *, axis: int = -1, mode: Literal["largest", "smallest"] = "largest",
    sorted: bool = True,  # noqa: A002 - JAX's name
) -> tuple[AnyTensor, Tensor[i32, Unpack[tuple[Any, ...]]]]:
    """The ``k`` largest (or, with ``mode="smallest"``, smallest) elements along ``axis`` and their i32 indices,
    in order, as JAX's: equal elements keep their order (lower index first), a NaN counts as the largest
    element. ``sorted=False`` is accepted; the result is sorted either way."""
    t = as_tensor(a)
    n = static_int("top_k", k, "k", "it fixes the result's shape")
    if mode not in ("largest", "smallest"):
        raise ValueError(f"mode must be 'largest' or 'smallest', got {mode!r}")
    (ax,) = normalize_axes("top_k", axis, t, allow_none=False)
    if not 0 <= n <= t.aval.shape[ax]:
        raise shape_error("top_k", f"k={n} must lie in [0, {t.aval.shape[ax]}] (the length of axis {ax} of {t.aval})")
    order = argsort(t, axis=ax, stable=True, descending=mode == "largest")
    first = order[(slice(None),) * ax + (slice(0, n),)]
    return take_along_axis(t, first, ax), first


def _extreme(reduce: Any, combine: Any, a: Any, axis: Axis, keepdims: bool, initial: Any, where_: Any) -> AnyTensor:
    x = as_tensor(a)
    if where_ is not None:
        if initial is None:
            raise ValueError("a where= mask needs initial= (min and max have no identity element)")
        x = as_tensor(where(where_, x, initial))  # a masked element is the initial value, counted anyway
    result = reduce(x, axis, keepdims)
    return result if initial is None else as_tensor(combine(result, initial))


@op
def minmax(
    a: Tensor[Any, Unpack[Sh]], axis: Axis = None, out: None = None, keepdims: bool = False,
    initial: Any = None, where: Any = None,
) -> tuple[AnyTensor, AnyTensor]:
    """``(min(a), max(a))`` along ``axis``, as JAX's ``minmax`` (NaNs propagate into both). ``initial`` (one value,
    or a ``(for the minimum, for the maximum)`` pair) joins each reduction; ``where`` masks elements out and then
    needs ``initial``. ``out`` must be None (arrays are immutable)."""
    if out is not None:
        raise TypeError("out= is not supported: arrays are immutable, use the returned pair")
    low, high = initial if isinstance(initial, tuple) else (initial, initial)
    return (_extreme(_min, minimum, a, axis, keepdims, low, where),
            _extreme(_max, maximum, a, axis, keepdims, high, where))
