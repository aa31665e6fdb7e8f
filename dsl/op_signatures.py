"""Public signatures of the elementwise and product functions of ``tensorstage.numpy``, as Protocols.

One Protocol is shared by every function of a family (``add``, ``subtract``, ... are all ``Binary``); the
implementations stay plainly typed and get their public type from the identity decorators at the bottom. The
overloads match what plain typing can: equal shapes, a rank-0 operand or a Python scalar, and a lower-rank operand
that matches the other's trailing axes. Everything else is an error for plain mypy/pyright; the mypy plugin
widens these to NumPy broadcasting minus the (N,) vs (N, 1) trap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from .dtypes import Complex, DType, bool_, c64, c128, f32, f64, i32

if TYPE_CHECKING:
    from .tensor import Tensor

DT = TypeVar("DT", bound=DType)
CT = TypeVar("CT", bound=Complex)
S = TypeVarTuple("S")
K = TypeVar("K")
M = TypeVar("M")
N = TypeVar("N")
Scalar = int | float


class Binary(Protocol):
    """``add(x, y)``, ``maximum(x, y)``, ...: same dtype in and out."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S], K], y: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __call__(self, x: Tensor[DT, K], y: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...


class Arithmetic(Protocol):
    """``add``, ``subtract``, ``multiply``, ``divide``, ``power``: as ``Binary``, and a Python complex scalar beside
    a float tensor gives the complex dtype of its width (as the operators do)."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S], K], y: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __call__(self, x: Tensor[DT, K], y: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __call__(self, x: Tensor[f32, Unpack[S]], y: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __call__(self, x: complex, y: Tensor[f32, Unpack[S]]) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[f64, Unpack[S]], y: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __call__(self, x: complex, y: Tensor[f64, Unpack[S]]) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[CT, Unpack[S]], y: complex) -> Tensor[CT, Unpack[S]]: ...
    @overload
    def __call__(self, x: complex, y: Tensor[CT, Unpack[S]]) -> Tensor[CT, Unpack[S]]: ...


class Comparison(Protocol):
    """``less(x, y)``, ``equal(x, y)``, ...: operands as for ``Binary``, a bool result."""

    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]) -> Tensor[bool_, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S], K], y: Tensor[DT, K]) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __call__(self, x: Tensor[DT, K], y: Tensor[DT, Unpack[S], K]) -> Tensor[bool_, Unpack[S], K]: ...


class Where(Protocol):
    """``where(cond, x, y)``: a bool condition of the result's shape, two branches of one dtype; ``where(cond,
    size=n)``: the indices of its nonzero elements, as ``nonzero``."""

    @overload
    def __call__(
        self,
        condition: Tensor[bool_, Unpack[S]],
        x: Tensor[DT, Unpack[S]],
        y: Tensor[DT, Unpack[S]] | Tensor[DT] | Scalar,
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(
        self, condition: Tensor[bool_, Unpack[S]], x: Tensor[DT] | Scalar, y: Tensor[DT, Unpack[S]]
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # one argument: ``nonzero(condition, size=...)``
        self, condition: Tensor[Any, Unpack[S]], *, size: int | None = None, fill_value: Any = None
    ) -> tuple[Tensor[i32, Any], ...]: ...


class MatMul(Protocol):
    """``matmul(x, y)`` / ``dot``: the last axis of ``x`` contracts with the second-to-last (or only) axis of ``y``."""

    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], K], y: Tensor[DT, K, N]
    ) -> Tensor[DT, Unpack[S], N]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S], K], y: Tensor[DT, K]) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Tensor[DT, K], y: Tensor[DT, Unpack[S], K, N]) -> Tensor[DT, Unpack[S], N]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], M, K], y: Tensor[DT, Unpack[S], K, N]
    ) -> Tensor[DT, Unpack[S], M, N]: ...


def as_binary(fn: Callable[..., Any]) -> Binary:
    """Identity at run time: gives an elementwise implementation its public overloads."""
    return fn


def as_arithmetic(fn: Callable[..., Any]) -> Arithmetic:
    return fn


def as_comparison(fn: Callable[..., Any]) -> Comparison:
    return fn


def as_where(fn: Callable[..., Any]) -> Where:
    return fn


def as_matmul(fn: Callable[..., Any]) -> MatMul:
    return fn
