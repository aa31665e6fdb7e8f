"""``lax``'s reductions, cumulative reductions, sorting and products, on the reduction, sort and dot_general
primitives (or the ``tensorstage.numpy`` functions built on them).

As in JAX: reductions keep the operand's dtype (no widening of small integers, unlike ``tnp.sum``); ``sort`` is
stable, orders floats with NaNs last and compares by the first ``num_keys`` operands in turn; ``dot_general``'s
result axes are the batch axes, then ``lhs``'s free axes, then ``rhs``'s; ``preferred_element_type`` converts the
operands first (XLA then accumulates in that type).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, i32
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives import linalg as L
from ...staging.primitives import reductions as R
from ...staging.primitives import sorting as T
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, dtype_error, op, shape_error, wrap
from ._operands import checked_axes, dtype_argument, strict_atoms
from .elementwise import bitwise_xor
from .scans import associative_scan, reduce

__all__ = [
    "argmax", "argmin", "batch_matmul", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "dot",
    "dot_general", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum",
    "reduce_xor", "sort", "sort_key_val", "top_k",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
Sh = TypeVarTuple("Sh")
DimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


# ---------------------------------------------------------------------------------------------- reductions


def _reduction(name: str, reduce: Callable[[Atom, Sequence[int]], Atom], bool_only: bool = False) -> Any:
    def fn(operand: AnyTensor, axes: Sequence[int]) -> AnyTensor:
        x = as_tensor(operand).atom
        if bool_only and x.aval.dtype != _dt.BOOL:
            raise dtype_error(name, f"lax.{name} reduces bool operands here, got {x.aval}")
        return wrap(reduce(x, checked_axes(name, axes, x.aval.ndim)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of ``operand`` over ``axes``, in the operand's dtype."
    return op(fn)


class Reduction(Protocol):
    """The type of ``reduce_sum``, ``reduce_max``, ...: ``(operand, axes) -> tensor of operand's dtype``."""

    def __call__(self, operand: Tensor[DT, Unpack[tuple[Any, ...]]], axes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]: ...


reduce_sum: Reduction = _reduction("reduce_sum", R.reduce_sum)
reduce_max: Reduction = _reduction("reduce_max", R.reduce_max)
reduce_min: Reduction = _reduction("reduce_min", R.reduce_min)
reduce_prod: Reduction = _reduction("reduce_prod", R.reduce_prod)
reduce_and: Reduction = _reduction("reduce_and", R.reduce_min, bool_only=True)  # False < True
reduce_or: Reduction = _reduction("reduce_or", R.reduce_max, bool_only=True)


@op
def reduce_xor(operand: Tensor[DT, Unpack[tuple[Any, ...]]], axes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """Bitwise xor of ``operand`` (integers or bools) over ``axes``."""
    x = as_tensor(operand)
    if not (_dt.is_integer(x.aval.dtype) or x.aval.dtype == _dt.BOOL):
        raise dtype_error("reduce_xor", f"lax.reduce_xor needs integer or bool operands, got {x.aval}")
    zero = False if x.aval.dtype == _dt.BOOL else 0
    return reduce(x, zero, bitwise_xor, checked_axes("reduce_xor", axes, x.aval.ndim))  # type: ignore[no-any-return]


def _arg_reduce(name: str, prim: Any) -> Any:
    def fn(operand: AnyTensor, axis: int, index_dtype: Any) -> AnyTensor:
        x = as_tensor(operand).atom
        (ax,) = checked_axes(name, (axis,), x.aval.ndim)
        return wrap(bind(prim, x, axis=ax, index_dtype=dtype_argument(name, index_dtype)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The index of the {name[3:]}imum along ``axis`` (the first on ties), as ``index_dtype``."
    return op(fn)


class ArgReduction(Protocol):
    """The type of ``argmax``/``argmin``: ``(operand, axis, index_dtype) -> index tensor``."""

    @overload
    def __call__(self, operand: AnyTensor, axis: int, index_dtype: type[DT2]) -> Tensor[DT2, Unpack[tuple[Any, ...]]]: ...
    @overload
    def __call__(self, operand: AnyTensor, axis: int, index_dtype: Any) -> AnyTensor: ...


argmax: ArgReduction = _arg_reduce("argmax", R.argmax_p)
argmin: ArgReduction = _arg_reduce("argmin", R.argmin_p)


# -------------------------------------------------------------------------------------------- cumulative


def _cumulative(name: str, numpy_fn: Callable[..., Any]) -> Any:
    def fn(operand: AnyTensor, axis: int = 0, reverse: bool = False) -> AnyTensor:
        x = as_tensor(operand)
        (ax,) = checked_axes(name, (axis,), x.aval.ndim)
        if reverse:
            x = as_tensor(tnp.flip(x, ax))
        out = as_tensor(numpy_fn(x, ax))
        if out.aval.dtype != x.aval.dtype:  # tnp widens small integers; lax keeps the operand's dtype
            out = wrap(E.convert(out.atom, x.aval.dtype))
        return tnp.flip(out, ax) if reverse else out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Inclusive ``{name}`` along ``axis`` (from the end when ``reverse``), in the operand's dtype."
    return op(fn)


class Cumulative(Protocol):
    """The type of ``cumsum``, ``cummax``, ...: the operand's dtype and shape."""

    def __call__(self, operand: Tensor[DT, Unpack[Sh]], axis: int = 0, reverse: bool = False) -> Tensor[DT, Unpack[Sh]]: ...


def _along(numpy_fn: Callable[..., Any]) -> Callable[[Any, int], Any]:
    return lambda x, axis: numpy_fn(x, axis=axis, dtype=x.aval.dtype)


cumsum: Cumulative = _cumulative("cumsum", _along(tnp.cumsum))
cumprod: Cumulative = _cumulative("cumprod", _along(tnp.cumprod))
cummax: Cumulative = _cumulative("cummax", lambda x, axis: tnp.cummax(x, axis=axis))
cummin: Cumulative = _cumulative("cummin", lambda x, axis: tnp.cummin(x, axis=axis))
cumlogsumexp: Cumulative = _cumulative(
    "cumlogsumexp", lambda x, axis: associative_scan(tnp.logaddexp, x, axis=axis)
)


# ------------------------------------------------------------------------------------------------- sorting


def _sorted(operands: Sequence[Atom], dimension: int, num_keys: int) -> tuple[Atom, ...]:
    """Sort ``operands`` by their first ``num_keys``, lexicographically: stable sorts by each key, last first."""
    out = tuple(operands)
    for k in reversed(range(num_keys)):
        moved = T.sort([out[k], *out[:k], *out[k + 1 :]], dimension)
        out = (*moved[1 : k + 1], moved[0], *moved[k + 1 :])
    return out


@overload
def sort(operand: Tensor[DT, Unpack[Sh]], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Tensor[DT, Unpack[Sh]]: ...
@overload
def sort(operand: Sequence[AnyTensor], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> tuple[AnyTensor, ...]: ...
@op
def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """``operand`` sorted along ``dimension``; a sequence of operands is sorted together by its first
    ``num_keys`` (the others ride along). Always stable; floats with NaNs last."""
    single = isinstance(operand, Tensor) or not isinstance(operand, (list, tuple))
    tensors = [as_tensor(operand)] if single else [as_tensor(o) for o in operand]
    if not tensors:
        raise ValueError("lax.sort needs at least one operand")
    if not 1 <= num_keys <= len(tensors):
        raise ValueError(f"lax.sort: num_keys must be between 1 and the number of operands ({len(tensors)}), got {num_keys}")
    shapes = {t.aval.shape for t in tensors}
    if len(shapes) > 1:
        raise shape_error("sort", f"lax.sort's operands must have one shape, got {', '.join(str(t.aval) for t in tensors)}")
    (dim,) = checked_axes("sort", (dimension,), tensors[0].aval.ndim)
    out = tuple(wrap(a) for a in _sorted([t.atom for t in tensors], dim, num_keys))
    return out[0] if single else out


@op
def sort_key_val(keys: Tensor[DT, Unpack[Sh]], values: Tensor[DT2, Unpack[Sh]],
                 dimension: int = -1, is_stable: bool = True) -> tuple[Tensor[DT, Unpack[Sh]], Tensor[DT2, Unpack[Sh]]]:
    """``keys`` sorted along ``dimension``, and ``values`` in the same order."""
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def top_k(operand: Tensor[DT, Unpack[tuple[Any, ...]]], k: int) -> tuple[Tensor[DT, Unpack[tuple[Any, ...]]], Tensor[i32, Unpack[tuple[Any, ...]]]]:
    """The ``k`` largest elements along the last axis, descending, and their indices (as ``tnp.top_k``)."""
    return tnp.top_k(operand, k)


# ------------------------------------------------------------------------------------------------ products


@op
def dot_general(lhs: AnyTensor, rhs: AnyTensor, dimension_numbers: DimensionNumbers, precision: Any = None,
                preferred_element_type: Any = None) -> AnyTensor:
    """Contract ``lhs`` and ``rhs`` over ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    ``precision`` is accepted for compatibility (f32 products always run at full precision here)."""
    a, b = _product_operands("dot_general", lhs, rhs, preferred_element_type)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        contracting = (checked_axes("dot_general", lc, a.aval.ndim), checked_axes("dot_general", rc, b.aval.ndim))
        batch = (checked_axes("dot_general", lb, a.aval.ndim), checked_axes("dot_general", rb, b.aval.ndim))
    except (TypeError, ValueError):
        raise TypeError(
            f"lax.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), (lhs_batch, "
            f"rhs_batch)), got {dimension_numbers!r}"
        ) from None
    return wrap(L.dot_general(a, b, contracting, batch))


def _product_operands(name: str, lhs: Any, rhs: Any, preferred: Any) -> tuple[Atom, Atom]:
    a, b = strict_atoms(name, lhs, rhs)
    if preferred is not None:
        dtype = dtype_argument(name, preferred)
        a, b = E.convert(a, dtype), E.convert(b, dtype)
    return a, b


@op
def dot(lhs: AnyTensor, rhs: AnyTensor, precision: Any = None, preferred_element_type: Any = None) -> AnyTensor:
    """Vector·vector, matrix·vector or matrix·matrix product (rank 1 or 2 operands)."""
    a, b = _product_operands("dot", lhs, rhs, preferred_element_type)
    if not (1 <= a.aval.ndim <= 2 and 1 <= b.aval.ndim <= 2):
        raise shape_error("dot", f"lax.dot takes rank-1 or rank-2 operands, got {a.aval} and {b.aval}; use dot_general")
    return wrap(L.dot_general(a, b, ((a.aval.ndim - 1,), (0,))))


@op
def batch_matmul(lhs: AnyTensor, rhs: AnyTensor, precision: Any = None, preferred_element_type: Any = None) -> AnyTensor:
    """Matrix products over the last two axes, the leading axes (equal in both) batch axes."""
    a, b = _product_operands("batch_matmul", lhs, rhs, preferred_element_type)
    n = a.aval.ndim
    if n < 2 or b.aval.ndim != n:
        raise shape_error("batch_matmul", f"lax.batch_matmul needs operands of one rank >= 2, got {a.aval} and {b.aval}")
    batch = tuple(range(n - 2))
    return wrap(L.dot_general(a, b, ((n - 1,), (n - 2,)), (batch, batch)))
