"""Public types of the ``lax`` elementwise functions, one Protocol per family (as ``dsl/op_signatures.py`` does
for ``tensorstage.numpy``): operands of one shape and dtype, or a rank-0 tensor or Python scalar beside a shaped
tensor; no other broadcasting."""

from __future__ import annotations

from typing import Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, bool_, c64, c128, f32, f64
from ...tensor import Tensor

DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")
Scalar = int | float


class Unary(Protocol):
    """``exp(x)``, ``neg(x)``, ...: the operand's dtype and shape."""

    def __call__(self, x: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]: ...


class Predicate(Protocol):
    """``is_finite(x)``: a bool of the operand's shape."""

    def __call__(self, x: Tensor[DT, Unpack[S]]) -> Tensor[bool_, Unpack[S]]: ...


class Magnitude(Protocol):
    """``abs(x)``: the operand's dtype, or its real counterpart for a complex operand."""

    @overload
    def __call__(self, x: Tensor[c64, Unpack[S]]) -> Tensor[f32, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[c128, Unpack[S]]) -> Tensor[f64, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]: ...


class Binary(Protocol):
    """``add(x, y)``, ``max(x, y)``, ...: one dtype in and out."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]: ...


class Comparison(Protocol):
    """``eq(x, y)``, ``lt(x, y)``, ...: as ``Binary``, with a bool result."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]) -> Tensor[bool_, Unpack[S]]: ...
