"""``Tensor[DT, *Shape]``: the typed value users write programs with.

Static face: dims and dtypes are type arguments, and operator signatures are written so that mypy and pyright
unify dims (matching only the axes an op touches, at one end). Runtime face: a Tensor is either a ``Traced``
value (a variable of the graph being staged) or an ``Array`` (a device buffer). Every operator forwards to
``tensorstage.numpy``, which stages primitives, or for concrete arrays runs a cached compiled op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, TypeVar, overload

import numpy as np
from typing_extensions import Self, TypeVarTuple, Unpack

from .dims import Dim
from .dtypes import (
    Complex, DType, Floating, bf16, bool_, c64, c128, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64,
)
from .shape_typing import (
    accumulating_method, arg_reduction_method, dtype_reduction_method, matrix_transpose_attr, reduction_method,
    refuse_out, spread_reduction_method, transpose_attr,
)
from .staging.errors import ConcretizationError
from .staging.ir import Atom, Aval
from .staging.source import user_location

if TYPE_CHECKING:
    from .prelude.numpy.indexing import AtIndexer

DT = TypeVar("DT", bound=DType)
DT2 = TypeVar("DT2", bound=DType)
FT = TypeVar("FT", bound=Floating)
CT = TypeVar("CT", bound=Complex)
Shape = TypeVarTuple("Shape")
S = TypeVarTuple("S")
K = TypeVar("K")
N = TypeVar("N")
M = TypeVar("M")
# dtypes of one width, for ``view`` (a view between two of them keeps the shape). The operand's are constrained:
# with a bound, pyright accepts an operand of another width; with a union of self types, mypy loses the shape.
W8s = TypeVar("W8s", u8, i8, bool_)
W8 = TypeVar("W8", bound=u8 | i8 | bool_)
W16s = TypeVar("W16s", u16, i16, f16, bf16)
W16 = TypeVar("W16", bound=u16 | i16 | f16 | bf16)
W32s = TypeVar("W32s", u32, i32, f32)
W32 = TypeVar("W32", bound=u32 | i32 | f32)
W64s = TypeVar("W64s", u64, i64, f64, c64)
W64 = TypeVar("W64", bound=u64 | i64 | f64 | c64)

Scalar = int | float
AnyShape = tuple[Any, ...]  # ``Unpack[AnyShape]``: an open shape (any rank, any dims)


class complex_part_attr:  # noqa: N801
    """``.real`` / ``.imag``: a property cannot be overloaded, so this descriptor is, per dtype (a complex tensor's
    parts have the float dtype of half its width; a real tensor's are its own dtype)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[c64, Unpack[S]], owner: Any) -> Tensor[f32, Unpack[S]]: ...
    @overload
    def __get__(self, obj: Tensor[c128, Unpack[S]], owner: Any) -> Tensor[f64, Unpack[S]]: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> Tensor[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else getattr(_tnp, self.name)(obj)


class Tensor(Generic[DT, Unpack[Shape]]):
    """A typed tensor value. ``Tensor[f32, Batch, In]`` is a float32 tensor with axes named Batch and In."""

    __slots__ = ()
    __array_priority__ = 100  # so numpy defers ``ndarray + Tensor`` to our reflected operators

    # ---------------------------------------------------------------- description (subclasses give ``aval``)
    @property
    def aval(self) -> Aval:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def dims(self) -> tuple[str | None, ...]:
        """The dim name of each axis (None for anonymous axes)."""
        return self.aval.dims

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of a rank-0 tensor")
        return self.aval.shape[0]

    # ------------------------------------------------------------------------------------------ arithmetic
    # Operands must have the same dtype (Python scalars adopt it). Shapes: equal, a rank-0 tensor, or a trailing
    # (K,) / (M, K) that broadcasts against the other operand's last axes. Other broadcasts (size-1 axes) need the
    # mypy plugin, which replaces these overloads with NumPy's rule minus the (N,) vs (N, 1) trap.
    @overload
    def __add__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __add__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __add__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __add__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __add__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __add__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __add__(self, other: Any) -> Any:
        return _tnp.add(self, other)

    @overload
    def __radd__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __radd__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __radd__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __radd__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __radd__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __radd__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __radd__(self, other: Any) -> Any:
        return _tnp.add(other, self)

    @overload
    def __sub__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __sub__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __sub__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __sub__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __sub__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __sub__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __sub__(self, other: Any) -> Any:
        return _tnp.subtract(self, other)

    @overload
    def __rsub__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rsub__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rsub__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __rsub__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __rsub__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __rsub__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __rsub__(self, other: Any) -> Any:
        return _tnp.subtract(other, self)

    @overload
    def __mul__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __mul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __mul__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __mul__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __mul__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __mul__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __mul__(self, other: Any) -> Any:
        return _tnp.multiply(self, other)

    @overload
    def __rmul__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rmul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rmul__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __rmul__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __rmul__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __rmul__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __rmul__(self, other: Any) -> Any:
        return _tnp.multiply(other, self)

    @overload
    def __truediv__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __truediv__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __truediv__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __truediv__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __truediv__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __truediv__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __truediv__(self, other: Any) -> Any:
        return _tnp.true_divide(self, other)

    @overload
    def __rtruediv__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rtruediv__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rtruediv__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __rtruediv__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __rtruediv__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __rtruediv__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __rtruediv__(self, other: Any) -> Any:
        return _tnp.true_divide(other, self)

    @overload
    def __floordiv__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __floordiv__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __floordiv__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __floordiv__(self, other: Any) -> Any:
        return _tnp.floor_divide(self, other)

    @overload
    def __rfloordiv__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rfloordiv__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rfloordiv__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rfloordiv__(self, other: Any) -> Any:
        return _tnp.floor_divide(other, self)

    @overload
    def __mod__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __mod__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __mod__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __mod__(self, other: Any) -> Any:
        return _tnp.mod(self, other)

    @overload
    def __rmod__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rmod__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rmod__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rmod__(self, other: Any) -> Any:
        return _tnp.mod(other, self)

    def __divmod__(
        self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar
    ) -> tuple[Tensor[DT, Unpack[Shape]], Tensor[DT, Unpack[Shape]]]:
        quotient, remainder = _tnp.divmod(self, other)
        return quotient, remainder

    def __rdivmod__(self, other: Tensor[DT] | Scalar) -> tuple[Tensor[DT, Unpack[Shape]], Tensor[DT, Unpack[Shape]]]:
        quotient, remainder = _tnp.divmod(other, self)
        return quotient, remainder

    @overload
    def __pow__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __pow__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __pow__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __pow__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __pow__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __pow__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __pow__(self, other: Any) -> Any:
        return _tnp.power(self, other)

    @overload
    def __rpow__(self, other: Tensor[DT] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rpow__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rpow__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    @overload
    def __rpow__(self: Tensor[f32, Unpack[S]], other: complex) -> Tensor[c64, Unpack[S]]: ...
    @overload
    def __rpow__(self: Tensor[f64, Unpack[S]], other: complex) -> Tensor[c128, Unpack[S]]: ...
    @overload
    def __rpow__(self: Tensor[CT, Unpack[S]], other: complex) -> Tensor[CT, Unpack[S]]: ...
    def __rpow__(self, other: Any) -> Any:
        return _tnp.power(other, self)

    def __neg__(self) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.negative(self)

    def __pos__(self) -> Tensor[DT, Unpack[Shape]]:
        return self

    @overload
    def __abs__(self: Tensor[c64, Unpack[S]]) -> Tensor[f32, Unpack[S]]: ...
    @overload
    def __abs__(self: Tensor[c128, Unpack[S]]) -> Tensor[f64, Unpack[S]]: ...
    @overload
    def __abs__(self) -> Tensor[DT, Unpack[Shape]]: ...
    def __abs__(self) -> Any:
        return _tnp.abs(self)

    def __invert__(self) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.invert(self)

    def __round__(self, ndigits: int | None = None) -> Tensor[DT, Unpack[Shape]]:
        """``round(x, n)``: ``tnp.round`` (half to even), a tensor as with JAX arrays, also without ``n``."""
        return _tnp.round(self, 0 if ndigits is None else ndigits)

    @overload
    def __and__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __and__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __and__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __and__(self, other: Any) -> Any:
        return _tnp.bitwise_and(self, other)

    @overload
    def __rand__(self, other: Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rand__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rand__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rand__(self, other: Any) -> Any:
        return _tnp.bitwise_and(other, self)

    @overload
    def __or__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __or__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __or__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __or__(self, other: Any) -> Any:
        return _tnp.bitwise_or(self, other)

    @overload
    def __ror__(self, other: Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __ror__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __ror__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __ror__(self, other: Any) -> Any:
        return _tnp.bitwise_or(other, self)

    @overload
    def __xor__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __xor__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __xor__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __xor__(self, other: Any) -> Any:
        return _tnp.bitwise_xor(self, other)

    @overload
    def __rxor__(self, other: Tensor[DT] | bool | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rxor__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rxor__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rxor__(self, other: Any) -> Any:
        return _tnp.bitwise_xor(other, self)

    @overload
    def __lshift__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __lshift__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __lshift__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __lshift__(self, other: Any) -> Any:
        return _tnp.left_shift(self, other)

    @overload
    def __rlshift__(self, other: Tensor[DT] | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rlshift__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rlshift__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rlshift__(self, other: Any) -> Any:
        return _tnp.left_shift(other, self)

    @overload
    def __rshift__(self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rshift__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rshift__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rshift__(self, other: Any) -> Any:
        return _tnp.right_shift(self, other)

    @overload
    def __rrshift__(self, other: Tensor[DT] | int) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rrshift__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __rrshift__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[DT, Unpack[S], M, K]: ...
    def __rrshift__(self, other: Any) -> Any:
        return _tnp.right_shift(other, self)

    # ----------------------------------------------------------------------------------------- comparisons
    @overload
    def __lt__(  # type: ignore[misc]  # x < y and y > x agree
        self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[Shape]]: ...
    @overload
    def __lt__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __lt__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[bool_, Unpack[S], M, K]: ...
    def __lt__(self, other: Any) -> Any:
        return _tnp.less(self, other)

    @overload
    def __le__(  # type: ignore[misc]  # x < y and y > x agree
        self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[Shape]]: ...
    @overload
    def __le__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __le__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[bool_, Unpack[S], M, K]: ...
    def __le__(self, other: Any) -> Any:
        return _tnp.less_equal(self, other)

    @overload
    def __gt__(  # type: ignore[misc]  # x < y and y > x agree
        self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[Shape]]: ...
    @overload
    def __gt__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __gt__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[bool_, Unpack[S], M, K]: ...
    def __gt__(self, other: Any) -> Any:
        return _tnp.greater(self, other)

    @overload
    def __ge__(  # type: ignore[misc]  # x < y and y > x agree
        self, other: Tensor[DT, Unpack[Shape]] | Tensor[DT] | Scalar
    ) -> Tensor[bool_, Unpack[Shape]]: ...
    @overload
    def __ge__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[bool_, Unpack[S], K]: ...
    @overload
    def __ge__(self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, M, K]) -> Tensor[bool_, Unpack[S], M, K]: ...
    def __ge__(self, other: Any) -> Any:
        return _tnp.greater_equal(self, other)

    def __eq__(self, other: object) -> Tensor[bool_, Unpack[Shape]]:  # type: ignore[override]
        if other is None or isinstance(other, (str, bytes)):  # not array-like: Python's identity test (JAX: False)
            return NotImplemented
        return _tnp.equal(self, other)  # type: ignore[call-overload, no-any-return]  # any object compares

    def __ne__(self, other: object) -> Tensor[bool_, Unpack[Shape]]:  # type: ignore[override]
        if other is None or isinstance(other, (str, bytes)):
            return NotImplemented
        return _tnp.not_equal(self, other)  # type: ignore[call-overload, no-any-return]

    __hash__ = None  # type: ignore[assignment]  # arrays compare elementwise, so they cannot be dict keys

    # -------------------------------------------------------------------------------------------- matmul
    # Only the contracted axes are matched, so a weight used the wrong way round ((Out, In) where (In, Out) is
    # expected) is a type error even when In and Out have the same size.
    @overload
    def __matmul__(  # type: ignore[overload-overlap]
        self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K, N]
    ) -> Tensor[DT, Unpack[S], N]: ...
    @overload
    def __matmul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __matmul__(self: Tensor[DT, K], other: Tensor[DT, Unpack[S], K, N]) -> Tensor[DT, Unpack[S], N]: ...
    @overload
    def __matmul__(
        self: Tensor[DT, Unpack[S], M, K], other: Tensor[DT, Unpack[S], K, N]
    ) -> Tensor[DT, Unpack[S], M, N]: ...
    def __matmul__(self, other: Any) -> Any:
        return _tnp.matmul(self, other)  # type: ignore[arg-type]  # the overloads above already checked it

    def __rmatmul__(self, other: np.ndarray[Any, Any]) -> Tensor[DT, Unpack[AnyShape]]:
        # Only NumPy arrays: accepting any left operand would make mypy accept every failed ``x @ w``.
        return _tnp.matmul(other, self)  # type: ignore[call-overload, no-any-return]

    # ----------------------------------------------------------------------------------- shape methods
    T = transpose_attr()
    real = complex_part_attr("real")
    imag = complex_part_attr("imag")

    def conj(self) -> Tensor[DT, Unpack[Shape]]:
        """The complex conjugate (a real tensor is its own)."""
        return _tnp.conj(self)

    conjugate = conj
    mT = matrix_transpose_attr()  # noqa: N815 - NumPy's name

    def reshape(self, *shape: int | type[Dim] | tuple[int | type[Dim], ...]) -> Tensor[DT, Unpack[AnyShape]]:
        """NumPy reshape; Dim classes name the result axes (the mypy plugin then types the result)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _tnp.reshape(self, shape)  # type: ignore[arg-type]

    def transpose(self, *axes: int | type[Dim]) -> Tensor[DT, Unpack[AnyShape]]:
        return _tnp.transpose(self, axes if axes else None)

    @overload
    def swapaxes(
        self: Tensor[DT, M, K], axis1: Literal[0, -2] | type[M], axis2: Literal[1, -1] | type[K]
    ) -> Tensor[DT, K, M]: ...
    @overload
    def swapaxes(
        self: Tensor[DT, M, K], axis1: Literal[1, -1] | type[K], axis2: Literal[0, -2] | type[M]
    ) -> Tensor[DT, K, M]: ...
    @overload
    def swapaxes(
        self: Tensor[DT, Unpack[S], M, K], axis1: Literal[-2] | type[M], axis2: Literal[-1] | type[K]
    ) -> Tensor[DT, Unpack[S], K, M]: ...
    @overload
    def swapaxes(
        self: Tensor[DT, Unpack[S], M, K], axis1: Literal[-1] | type[K], axis2: Literal[-2] | type[M]
    ) -> Tensor[DT, Unpack[S], K, M]: ...
    @overload
    def swapaxes(self, axis1: int | type[Dim], axis2: int | type[Dim]) -> Tensor[DT, Unpack[AnyShape]]: ...
    def swapaxes(self, axis1: Any, axis2: Any) -> Any:
        return _tnp.swapaxes(self, axis1, axis2)

    def squeeze(
        self, axis: int | type[Dim] | tuple[int | type[Dim], ...] | None = None
    ) -> Tensor[DT, Unpack[AnyShape]]:
        return _tnp.squeeze(self, axis)

    def flatten(self) -> Tensor[DT, Any]:
        return _tnp.reshape(self, (-1,))

    def ravel(self) -> Tensor[DT, Any]:
        return _tnp.reshape(self, (-1,))

    @overload
    def astype(self, dtype: type[DT2]) -> Tensor[DT2, Unpack[Shape]]: ...
    @overload
    def astype(self, dtype: Any) -> Tensor[Any, Unpack[Shape]]: ...
    def astype(self, dtype: Any) -> Any:
        return _tnp.astype(self, dtype)

    # ``view``: the bytes as another dtype. One of the same width keeps the shape (an overload per width); another
    # width rescales the last axis, by a ratio the checkers cannot see (so it becomes ``Any``).
    @overload
    def view(self, dtype: None = None) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def view(self: Tensor[W8s, Unpack[S]], dtype: type[W8]) -> Tensor[W8, Unpack[S]]: ...
    @overload
    def view(self: Tensor[W16s, Unpack[S]], dtype: type[W16]) -> Tensor[W16, Unpack[S]]: ...
    @overload
    def view(self: Tensor[W32s, Unpack[S]], dtype: type[W32]) -> Tensor[W32, Unpack[S]]: ...
    @overload
    def view(self: Tensor[W64s, Unpack[S]], dtype: type[W64]) -> Tensor[W64, Unpack[S]]: ...
    @overload
    def view(self: Tensor[Any, Unpack[S], K], dtype: type[DT2]) -> Tensor[DT2, Unpack[S], Any]: ...
    @overload
    def view(self, dtype: Any) -> Tensor[Any, Unpack[AnyShape]]: ...
    def view(self, dtype: Any = None) -> Any:
        """NumPy's ``ndarray.view(dtype)``: these bytes read as ``dtype`` (see ``prelude/numpy/bit_views.py``)."""
        from .prelude.numpy.bit_views import view

        return view(self, dtype)

    # ----------------------------------------------------------------------------- NumPy's other methods
    # Arrays are immutable, so ``sort`` returns a sorted copy (as JAX's), where NumPy's sorts in place.
    def sort(self, axis: int | type[Dim] = -1, *, descending: bool = False) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.sort(self, axis, descending=descending)

    def argsort(self, axis: int | type[Dim] = -1, *, descending: bool = False) -> Tensor[i32, Unpack[Shape]]:
        return _tnp.argsort(self, axis, descending=descending)

    @overload
    def cumsum(self: Tensor[FT, Unpack[S]], axis: int | type[Dim]) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def cumsum(self, axis: int | type[Dim] | None = None, dtype: Any = None) -> Tensor[Any, Unpack[AnyShape]]: ...
    def cumsum(self, axis: Any = None, dtype: Any = None) -> Any:
        return _tnp.cumsum(self, axis, dtype)

    @overload
    def cumprod(self: Tensor[FT, Unpack[S]], axis: int | type[Dim]) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def cumprod(self, axis: int | type[Dim] | None = None, dtype: Any = None) -> Tensor[Any, Unpack[AnyShape]]: ...
    def cumprod(self, axis: Any = None, dtype: Any = None) -> Any:
        return _tnp.cumprod(self, axis, dtype)

    def clip(
        self, min: Tensor[DT, Unpack[AnyShape]] | Scalar | None = None,  # noqa: A002 - NumPy's names
        max: Tensor[DT, Unpack[AnyShape]] | Scalar | None = None,  # noqa: A002
    ) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.clip(self, min, max)

    def round(self: Tensor[FT, Unpack[S]], decimals: int = 0) -> Tensor[FT, Unpack[S]]:
        return _tnp.round(self, decimals)

    @overload
    def any(self, axis: None = None, keepdims: Literal[False] = False) -> Tensor[bool_]: ...
    @overload
    def any(
        self, axis: int | type[Dim] | tuple[int | type[Dim], ...], keepdims: bool = False
    ) -> Tensor[bool_, Unpack[AnyShape]]: ...
    def any(self, axis: Any = None, keepdims: bool = False, *, out: None = None) -> Any:
        refuse_out(out, "any")
        return _tnp.any(self, axis, keepdims)

    @overload
    def all(self, axis: None = None, keepdims: Literal[False] = False) -> Tensor[bool_]: ...
    @overload
    def all(
        self, axis: int | type[Dim] | tuple[int | type[Dim], ...], keepdims: bool = False
    ) -> Tensor[bool_, Unpack[AnyShape]]: ...
    def all(self, axis: Any = None, keepdims: bool = False, *, out: None = None) -> Any:
        refuse_out(out, "all")
        return _tnp.all(self, axis, keepdims)

    def diagonal(
        self, offset: int = 0, axis1: int | type[Dim] = 0, axis2: int | type[Dim] = 1
    ) -> Tensor[DT, Unpack[AnyShape]]:
        return _tnp.diagonal(self, offset, axis1, axis2)

    def trace(
        self, offset: int = 0, axis1: int | type[Dim] = 0, axis2: int | type[Dim] = 1
    ) -> Tensor[Any, Unpack[AnyShape]]:
        return _tnp.trace(self, offset, axis1, axis2)

    def repeat(self, repeats: Any, axis: int | type[Dim] | None = None) -> Tensor[DT, Unpack[AnyShape]]:
        return _tnp.repeat(self, repeats, axis)

    # ------------------------------------------------------------------------------------------- reductions
    # ``x.sum(axis=Batch)`` drops Batch from the type; an axis the tensor does not have is a type error.
    sum = accumulating_method("sum")
    mean = dtype_reduction_method("mean")
    max = reduction_method("max")
    min = reduction_method("min")
    prod = accumulating_method("prod")
    var = spread_reduction_method("var")
    std = spread_reduction_method("std")
    argmax = arg_reduction_method("argmax")
    argmin = arg_reduction_method("argmin")

    # ------------------------------------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Tensor[DT, Unpack[AnyShape]]:
        return _tnp.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        raise TypeError(
            "tensorstage arrays are immutable: use x = x.at[index].set(value) (or .add/.mul/.min/.max) "
            "instead of item assignment"
        )

    @property
    def at(self) -> AtIndexer[DT, Unpack[Shape]]:
        """Functional updates: ``x.at[idx].set(v)`` returns a new tensor (``add``, ``mul``, ``min``, ``max``, ``get``)."""
        from .prelude.numpy.indexing import AtIndexer

        return AtIndexer(self)

    def describe(self) -> str:
        return str(self.aval)


class Traced(Tensor[DT, Unpack[Shape]]):
    """A value of the graph being staged: holds its variable (or literal) and, through it, its type."""

    __slots__ = ("atom",)

    def __init__(self, atom: Atom) -> None:
        self.atom = atom

    @property
    def aval(self) -> Aval:
        return self.atom.aval

    def __repr__(self) -> str:
        return f"Traced<{self.aval}>"

    def __bool__(self) -> bool:
        raise ConcretizationError(
            f"the truth value of a staged {self.aval} is not known while staging; branch with "
            "ts.cond(pred, true_fn, false_fn) or tnp.where(pred, a, b), loop with ts.while_loop / ts.fori_loop",
            "bool",
            user_location(),
        )

    def __index__(self) -> int:
        raise ConcretizationError(
            f"a staged {self.aval} cannot be used as a Python int while staging; "
            "use dynamic indexing (x[i] with a staged i) or pass the value as a static argument",
            "index",
            user_location(),
        )

    __int__ = __index__

    def __float__(self) -> float:
        raise ConcretizationError(
            f"a staged {self.aval} cannot be converted to a Python float while staging", "float", user_location()
        )

    def __iter__(self) -> Any:
        if not self.aval.shape:
            raise TypeError("iteration over a rank-0 tensor")
        return (self[i] for i in range(self.aval.shape[0]))

    def __array__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise ConcretizationError(
            f"a staged {self.aval} has no value yet: np.asarray works on results of compiled programs, "
            "not inside a staged function",
            "asarray",
            user_location(),
        )


if TYPE_CHECKING:
    from .prelude import numpy as _tnp
else:
    _tnp = None  # bound by the package __init__ once the op library (which needs Tensor) is imported
