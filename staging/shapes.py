"""Shared checks for shape rules: dim-name unification, axis normalization, operand descriptions."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from . import dtypes
from .bounded import remember
from .errors import DTypeError, ShapeError
from .ir import Aval, DimName

F = TypeVar("F", bound=Callable[..., Any])


def describe(avals: Sequence[Aval]) -> str:
    return ", ".join(str(a) for a in avals)


def unify_axis(op: str, avals: Sequence[Aval], axes: Sequence[int]) -> DimName:
    """The dim name shared by ``avals[i].shape[axes[i]]``: sizes must agree, and named dims must share a name."""
    size = None
    name: DimName = None
    for aval, axis in zip(avals, axes):
        n, d = aval.shape[axis], aval.dims[axis]
        if size is not None and n != size:
            raise ShapeError(f"axis sizes differ ({size} vs {n}) for operands {describe(avals)}", op)
        size = n
        if d is not None:
            if name is not None and d != name:
                raise ShapeError(
                    f"dims {name} and {d} are different dims (sizes {n}) in operands {describe(avals)}", op
                )
            name = d
    return name


def same_dtype(op: str, avals: Sequence[Aval]) -> None:
    first = avals[0].dtype
    for aval in avals[1:]:
        if aval.dtype != first:
            raise DTypeError(
                f"dtypes differ: {describe(avals)}; tensorstage never promotes between array dtypes, "
                "use .astype(...) to convert explicitly",
                op,
            )


def elementwise_result(op: str, avals: Sequence[Aval]) -> Aval:
    """Operands of one shape (rank-0 operands broadcast); dim names unify axis by axis."""
    shaped = [a for a in avals if a.ndim > 0]
    if not shaped:
        return Aval((), avals[0].dtype)
    ref = shaped[0]
    for aval in shaped[1:]:
        if aval.shape != ref.shape:
            raise ShapeError(f"operand shapes differ: {describe(avals)}", op)
    dims = tuple(unify_axis(op, shaped, [i] * len(shaped)) for i in range(ref.ndim))
    return Aval(ref.shape, avals[0].dtype, dims)


def check_dtype(op: str, aval: Aval, allowed: frozenset[object] | set[object], what: str) -> None:
    if aval.dtype not in allowed:
        raise DTypeError(f"expects {what} operands, got {aval}", op)


def normalize_axis(op: str, axis: int, ndim: int, aval: Aval | None = None) -> int:
    if not -ndim <= axis < ndim:
        target = f" of {aval}" if aval is not None else ""
        raise ShapeError(f"axis {axis} is out of range for rank {ndim}{target}", op)
    return axis % ndim if ndim else 0


def short(dtype: object) -> str:
    return dtypes.short_name(dtype)  # type: ignore[arg-type]


def check_sizes(op: str, shape: Sequence[object]) -> None:
    """Result sizes given as params must be non-negative Python ints: XLA rejects anything else unhelpfully."""
    for n in shape:
        if type(n) is int and n >= 0:  # nearly every size: no isinstance tests
            continue
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ShapeError(f"result sizes must be non-negative ints, got {tuple(shape)}", op)


_MEMO_LIMIT = 4096


def memoized_shape_rule(rule: F) -> F:
    """Cache a pure shape rule by its operand types and params, for rules run on nearly every staged equation.
    Bounded, and only successful results are kept, so errors are raised afresh (with their location) each time."""
    # Per key: the result, and the position of the operand whose type it is (-1 if none). A hit returns that
    # operand's own Aval object, so equal types met later in the same graph compare by identity.
    cache: dict[Hashable, tuple[Any, int]] = {}

    @functools.wraps(rule)
    def cached(*avals: Any, **params: Any) -> Any:
        # Keyed by the operands' type tuples, not the Aval objects: hashing and comparing those runs in C (an
        # Aval's ``__hash__`` and ``__eq__`` are Python calls, and equal types of other graphs are other objects).
        n = len(avals)
        if n == 1:
            types: Hashable = avals[0]._key
        elif n == 2:
            types = (avals[0]._key, avals[1]._key)
        else:
            types = tuple([a._key for a in avals])
        key = (n, types, tuple(params.items()))
        try:
            out, same = cache[key]
        except KeyError:
            pass
        except TypeError:  # unhashable params (lists): not worth caching
            return rule(*avals, **params)
        else:
            return out if same < 0 else avals[same]
        out = rule(*avals, **params)
        same = -1
        if isinstance(out, Aval):
            for i, aval in enumerate(avals):
                if aval is out or aval == out:
                    same = i
                    break
        remember(cache, key, (out, same), _MEMO_LIMIT)
        return out if same < 0 else avals[same]

    return cast(F, cached)
