"""Shared pieces of the distributions: operand checks and the public signatures.

Every function takes floating-point tensors or Python numbers, broadcast together as ``tensorstage.numpy`` does
(dtypes never change: an f32 ``x`` with an f64 ``loc`` is a DTypeError), and returns a tensor of their dtype.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ....dtypes import Floating
from ....staging import dtypes as _dt
from ....tensor import Tensor
from ...numpy import _core

FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Operand = AnyTensor | int | float
Param = Tensor[FT, Unpack[S]] | Tensor[FT] | int | float


def floats(name: str, *operands: Any) -> list[AnyTensor]:
    """The operands broadcast to one floating-point dtype and shape, as tensors."""
    atoms = _core.elementwise_operands(name, *operands)
    if not _dt.is_float(atoms[0].aval.dtype):
        described = ", ".join(str(a.aval) for a in atoms)
        raise _core.dtype_error(name, f"{name} needs floating-point operands, got {described}; convert with .astype(f32)")
    return [_core.wrap(a) for a in atoms]


def standardized(name: str, x: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor]:
    """``((x - loc) / scale, scale)``, the operands checked and broadcast together."""
    x, loc, scale = floats(name, x, loc, scale)
    return (x - loc) / scale, scale


class LocScale(Protocol):
    """``f(x, loc=0, scale=1)``: ``x``'s type out when the parameters are scalars or of ``x``'s type."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0, scale: Param[FT, Unpack[S]] = 1
                 ) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Shape1LocScale(Protocol):
    """``f(x, a, loc=0, scale=1)`` with one shape parameter (``t``'s ``df``, ``gamma``'s ``a``, ``chi2``'s ``df``)."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], a: Param[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0,
                 scale: Param[FT, Unpack[S]] = 1) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Shape2LocScale(Protocol):
    """``f(x, a, b, loc=0, scale=1)`` (``beta``)."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], a: Param[FT, Unpack[S]], b: Param[FT, Unpack[S]],
                 loc: Param[FT, Unpack[S]] = 0, scale: Param[FT, Unpack[S]] = 1) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Discrete(Protocol):
    """``f(k, p, loc=0)`` (``poisson``'s ``mu``, ``bernoulli``'s ``p``)."""

    @overload
    def __call__(self, k: Tensor[Any, Unpack[S]], p: Tensor[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0
                 ) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, k: Operand, p: Operand, loc: Operand = 0) -> AnyTensor: ...


def as_loc_scale(fn: Any) -> LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_shape1(fn: Any) -> Shape1LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_shape2(fn: Any) -> Shape2LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_discrete(fn: Any) -> Discrete:
    return _core.op(fn)  # type: ignore[no-any-return]


def counts(name: str, k: Any, like: Any) -> Any:
    """A discrete distribution's ``k``: integer tensors (counts) are converted to the parameter's float dtype."""
    from ... import numpy as tnp

    if isinstance(k, Tensor) and not _dt.is_float(k.aval.dtype) and isinstance(like, Tensor) and _dt.is_float(like.aval.dtype):
        return tnp.asarray(k).astype(like.aval.dtype)
    return k
