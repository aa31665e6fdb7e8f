"""Static signatures that plain typing can only say with helper types: reductions that drop a named axis, ``.T``.

Reductions are written once here and shared by the Tensor methods (``x.sum(axis=Batch)``, through a descriptor
that binds the tensor) and the ``tensorstage.numpy`` functions (``tnp.sum(x, axis=Batch)``, through a Protocol).
Each overload matches the reduced axis at one end (positions 0, 1, 2 and -1, -2, -3), which covers every axis of
tensors up to rank 6. A named axis the operand does not have matches no overload, so mypy and pyright report it;
keepdims and tuples of axes fall back to an unknown shape (the mypy plugin computes those exactly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, overload

from typing_extensions import Self, TypeVarTuple, Unpack

from .dims import Dim
from .dtypes import DType, Floating, bool_, i8, i16, i32, u8, u16, u32

if TYPE_CHECKING:
    from .tensor import Tensor

DT = TypeVar("DT", bound=DType)
RT = TypeVar("RT", bound=DType)  # a result dtype given as ``dtype=``
FT = TypeVar("FT", bound=Floating)
Shape = TypeVarTuple("Shape")
S = TypeVarTuple("S")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")

# Summed and multiplied in a 32-bit accumulator, as JAX does (a u8 sum of 300 ones is 300): the result type says so.
NarrowSigned = TypeVar("NarrowSigned", bool_, i8, i16)

AnyShape = tuple[Any, ...]
# Axis arguments the precise overloads do not cover: the result shape is left open (the plugin computes it).
OpenAxes = int | tuple[int | type[Dim], ...] | list[int | type[Dim]]


class BoundReduction(Generic[DT, Unpack[Shape]]):
    """``x.sum`` (and mean, max, ...): calling it reduces ``x``; the overloads say which axis disappears."""

    __slots__ = ("_x", "_name")

    def __init__(self, x: Tensor[DT, Unpack[Shape]], name: str) -> None:
        self._x = x
        self._name = name

    @overload
    def __call__(self, axis: None = None, keepdims: Literal[False] = False) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]  # Tensor[DT, X, X] matches two positions alike
        self: BoundReduction[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundReduction[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundReduction[DT, A, B, Unpack[S]], axis: type[B] | Literal[1], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundReduction[DT, Unpack[S], A, B], axis: type[A] | Literal[-2], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self: BoundReduction[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self: BoundReduction[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(self, axis: type[Dim] | OpenAxes | None, keepdims: Literal[True]) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, axis: OpenAxes | None = None, keepdims: bool = False) -> Tensor[DT, Unpack[AnyShape]]: ...
    def __call__(self, axis: Any = None, keepdims: bool = False, *, out: None = None) -> Any:
        refuse_out(out, self._name)  # np.max(x) calls x.max(axis=None, out=None): accepted, as JAX does
        return getattr(_tnp(), self._name)(self._x, axis=axis, keepdims=keepdims)


class BoundDtypeReduction(BoundReduction[DT, Unpack[Shape]]):
    """``x.sum`` / ``x.prod`` / ``x.mean``: ``BoundReduction``'s overloads, and ``dtype=`` giving the result dtype."""

    __slots__ = ()

    @overload  # the same calls as BoundReduction, plus dtype=
    def __call__(self, axis: None = None, keepdims: Literal[False] = False, *, dtype: type[RT]) -> Tensor[RT]: ...
    @overload
    def __call__(
        self, axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False, *, dtype: type[RT]
    ) -> Tensor[RT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, axis: None = None, keepdims: Literal[False] = False) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]  # Tensor[DT, X, X] matches two positions alike
        self: BoundDtypeReduction[DT, A, Unpack[S]], axis: type[A] | Literal[0],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundDtypeReduction[DT, Unpack[S], A], axis: type[A] | Literal[-1],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundDtypeReduction[DT, A, B, Unpack[S]], axis: type[B] | Literal[1],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundDtypeReduction[DT, Unpack[S], A, B], axis: type[A] | Literal[-2],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self: BoundDtypeReduction[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self: BoundDtypeReduction[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3],
        keepdims: Literal[False] = False,
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(self, axis: type[Dim] | OpenAxes | None, keepdims: Literal[True]) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, axis: OpenAxes | None = None, keepdims: bool = False) -> Tensor[DT, Unpack[AnyShape]]: ...
    def __call__(self, axis: Any = None, keepdims: bool = False, *, dtype: Any = None, out: None = None) -> Any:
        refuse_out(out, self._name)  # np.sum(x) / np.mean(x) call x.sum(axis=None, dtype=None, out=None)
        return getattr(_tnp(), self._name)(self._x, axis=axis, keepdims=keepdims, dtype=dtype)


class BoundSpreadReduction(BoundReduction[DT, Unpack[Shape]]):
    """``x.var`` / ``x.std``: ``BoundReduction``'s overloads, with NumPy's ``ddof=`` and ``dtype=`` (a float dtype
    giving the computation and result type)."""

    __slots__ = ()

    @overload  # the same calls as BoundReduction, plus ddof= and dtype=
    def __call__(
        self, axis: None = None, keepdims: Literal[False] = False, ddof: int = 0, *, dtype: type[RT]
    ) -> Tensor[RT]: ...
    @overload
    def __call__(
        self, axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False, ddof: int = 0, *, dtype: type[RT]
    ) -> Tensor[RT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, axis: None = None, keepdims: Literal[False] = False, ddof: int = 0) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]  # Tensor[DT, X, X] matches two positions alike
        self: BoundSpreadReduction[DT, A, Unpack[S]], axis: type[A] | Literal[0],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundSpreadReduction[DT, Unpack[S], A], axis: type[A] | Literal[-1],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundSpreadReduction[DT, A, B, Unpack[S]], axis: type[B] | Literal[1],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundSpreadReduction[DT, Unpack[S], A, B], axis: type[A] | Literal[-2],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self: BoundSpreadReduction[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self: BoundSpreadReduction[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3],
        keepdims: Literal[False] = False, ddof: int = 0,
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(
        self, axis: type[Dim] | OpenAxes | None, keepdims: Literal[True], ddof: int = 0
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, axis: OpenAxes | None = None, keepdims: bool = False, ddof: int = 0
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    def __call__(
        self, axis: Any = None, keepdims: bool = False, ddof: float = 0, *, dtype: Any = None, out: None = None
    ) -> Any:
        refuse_out(out, self._name)  # np.std(x) calls x.std(axis=None, dtype=None, out=None, ddof=0)
        return getattr(_tnp(), self._name)(self._x, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype)


class BoundArgReduction(Generic[DT, Unpack[Shape]]):
    """``x.argmax`` / ``x.argmin``: int32 indices; the reduced axis disappears as for ``sum``."""

    __slots__ = ("_x", "_name")

    def __init__(self, x: Tensor[DT, Unpack[Shape]], name: str) -> None:
        self._x = x
        self._name = name

    @overload
    def __call__(self, axis: None = None) -> Tensor[i32]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundArgReduction[DT, A, Unpack[S]], axis: type[A] | Literal[0]
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundArgReduction[DT, Unpack[S], A], axis: type[A] | Literal[-1]
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundArgReduction[DT, A, B, Unpack[S]], axis: type[B] | Literal[1]
    ) -> Tensor[i32, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self: BoundArgReduction[DT, Unpack[S], A, B], axis: type[A] | Literal[-2]
    ) -> Tensor[i32, Unpack[S], B]: ...
    @overload
    def __call__(
        self: BoundArgReduction[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2]
    ) -> Tensor[i32, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self: BoundArgReduction[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3]
    ) -> Tensor[i32, Unpack[S], B, C]: ...
    @overload
    def __call__(self, axis: int) -> Tensor[i32, Unpack[AnyShape]]: ...
    def __call__(self, axis: Any = None, *, out: None = None) -> Any:
        refuse_out(out, self._name)  # np.argmax(x) calls x.argmax(axis=None, out=None)
        return getattr(_tnp(), self._name)(self._x, axis=axis)


class reduction_method:  # noqa: N801 - used like a decorator-free method definition
    """Descriptor: ``Tensor.sum = reduction_method("sum")`` binds the tensor into a ``BoundReduction``."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> BoundReduction[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else BoundReduction(obj, self.name)


class accumulating_method(reduction_method):  # noqa: N801
    """``x.sum`` / ``x.prod``: as ``reduction_method``, but bool, i8 and i16 results are i32 and u8 and u16 results
    u32."""

    @overload  # type: ignore[override]  # narrower dtypes map to wider results: the overloads differ on purpose
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(
        self, obj: Tensor[NarrowSigned, Unpack[S]], owner: Any
    ) -> BoundDtypeReduction[i32, Unpack[S]]: ...
    @overload
    def __get__(self, obj: Tensor[u8, Unpack[S]], owner: Any) -> BoundDtypeReduction[u32, Unpack[S]]: ...
    @overload
    def __get__(self, obj: Tensor[u16, Unpack[S]], owner: Any) -> BoundDtypeReduction[u32, Unpack[S]]: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> BoundDtypeReduction[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else BoundDtypeReduction(obj, self.name)


class dtype_reduction_method(reduction_method):  # noqa: N801
    """``x.mean``: as ``reduction_method``, and the bound reduction takes ``dtype=``."""

    @overload  # the same binding, to a subclass of BoundReduction
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> BoundDtypeReduction[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else BoundDtypeReduction(obj, self.name)


class spread_reduction_method(reduction_method):  # noqa: N801
    """``x.var`` / ``x.std``: as ``reduction_method``, and the bound reduction takes ``ddof=`` and ``dtype=``."""

    @overload  # the same binding, to a subclass of BoundReduction
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> BoundSpreadReduction[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else BoundSpreadReduction(obj, self.name)


class arg_reduction_method:  # noqa: N801
    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S]], owner: Any) -> BoundArgReduction[DT, Unpack[S]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else BoundArgReduction(obj, self.name)


class transpose_attr:  # noqa: N801
    """``.T``: a property cannot be overloaded, so this descriptor is, per rank (rank >= 3 reverses: open shape)."""

    @overload
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, A, B], owner: Any) -> Tensor[DT, B, A]: ...
    @overload
    def __get__(self, obj: Tensor[DT, A], owner: Any) -> Tensor[DT, A]: ...
    @overload
    def __get__(self, obj: Tensor[DT], owner: Any) -> Tensor[DT]: ...
    @overload
    def __get__(self, obj: Tensor[DT, A, B, C], owner: Any) -> Tensor[DT, C, B, A]: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[AnyShape]], owner: Any) -> Tensor[DT, Unpack[AnyShape]]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else _tnp().transpose(obj)


class matrix_transpose_attr:  # noqa: N801
    """``.mT``: swaps the last two axes."""

    @overload
    def __get__(self, obj: None, owner: Any) -> Self: ...
    @overload
    def __get__(self, obj: Tensor[DT, Unpack[S], A, B], owner: Any) -> Tensor[DT, Unpack[S], B, A]: ...
    def __get__(self, obj: Any, owner: Any) -> Any:
        return self if obj is None else _tnp().swapaxes(obj, -1, -2)


# ------------------------------------------------------------------------------- function signatures (Protocols)


class Reduction(Protocol):
    """``tnp.sum(x, axis=...)`` and friends (same overloads as ``BoundReduction``)."""

    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]], axis: None = None, keepdims: Literal[False] = False) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, B, Unpack[S]], axis: type[B] | Literal[1], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A, B], axis: type[A] | Literal[-2], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: type[Dim] | OpenAxes | None, keepdims: Literal[True]
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[DT, Unpack[AnyShape]]: ...


class MeanReduction(Protocol):
    """``tnp.mean``: ``Reduction``'s overloads, and ``dtype=`` giving the result (and computation) dtype."""

    @overload
    def __call__(
        self, x: Tensor[Any, Unpack[S]], axis: None = None, keepdims: Literal[False] = False, *, dtype: type[RT]
    ) -> Tensor[RT]: ...
    @overload
    def __call__(
        self, x: Tensor[Any, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False, *,
        dtype: type[RT],
    ) -> Tensor[RT, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]], axis: None = None, keepdims: Literal[False] = False) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, B, Unpack[S]], axis: type[B] | Literal[1], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A, B], axis: type[A] | Literal[-2], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: type[Dim] | OpenAxes | None, keepdims: Literal[True]
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[DT, Unpack[AnyShape]]: ...


class AccumulatingReduction(Protocol):
    """``tnp.sum`` and ``tnp.prod``: ``Reduction``, except that bool, i8 and i16 operands give i32 results and u8
    and u16 operands u32 (their axis overloads leave the shape open; the mypy plugin computes it); ``dtype=`` gives the
    result (and accumulation) dtype."""

    @overload
    def __call__(
        self, x: Tensor[Any, Unpack[S]], axis: None = None, keepdims: Literal[False] = False, *, dtype: type[RT]
    ) -> Tensor[RT]: ...
    @overload
    def __call__(
        self, x: Tensor[Any, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False, *,
        dtype: type[RT],
    ) -> Tensor[RT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[NarrowSigned, Unpack[S]], axis: None = None, keepdims: Literal[False] = False
    ) -> Tensor[i32]: ...
    @overload
    def __call__(
        self, x: Tensor[NarrowSigned, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[i32, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[u8, Unpack[S]], axis: None = None, keepdims: Literal[False] = False
    ) -> Tensor[u32]: ...
    @overload
    def __call__(
        self, x: Tensor[u8, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[u32, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[u16, Unpack[S]], axis: None = None, keepdims: Literal[False] = False
    ) -> Tensor[u32]: ...
    @overload
    def __call__(
        self, x: Tensor[u16, Unpack[S]], axis: type[Dim] | OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[u32, Unpack[AnyShape]]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]], axis: None = None, keepdims: Literal[False] = False) -> Tensor[DT]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, B, Unpack[S]], axis: type[B] | Literal[1], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A, B], axis: type[A] | Literal[-2], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2], keepdims: Literal[False] = False
    ) -> Tensor[DT, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3], keepdims: Literal[False] = False
    ) -> Tensor[DT, Unpack[S], B, C]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: type[Dim] | OpenAxes | None, keepdims: Literal[True]
    ) -> Tensor[DT, Unpack[AnyShape]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S]], axis: OpenAxes | None = None, keepdims: bool = False
    ) -> Tensor[DT, Unpack[AnyShape]]: ...


class ArgReduction(Protocol):
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]], axis: None = None) -> Tensor[i32]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, Unpack[S]], axis: type[A] | Literal[0]
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A], axis: type[A] | Literal[-1]
    ) -> Tensor[i32, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, A, B, Unpack[S]], axis: type[B] | Literal[1]
    ) -> Tensor[i32, A, Unpack[S]]: ...
    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, x: Tensor[DT, Unpack[S], A, B], axis: type[A] | Literal[-2]
    ) -> Tensor[i32, Unpack[S], B]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, A, B, C, Unpack[S]], axis: type[C] | Literal[2]
    ) -> Tensor[i32, A, B, Unpack[S]]: ...
    @overload
    def __call__(
        self, x: Tensor[DT, Unpack[S], A, B, C], axis: type[A] | Literal[-3]
    ) -> Tensor[i32, Unpack[S], B, C]: ...
    @overload
    def __call__(self, x: Tensor[DT, Unpack[S]], axis: int) -> Tensor[i32, Unpack[AnyShape]]: ...


class FloatUnary(Protocol):
    """``exp``, ``tanh``, ...: floating-point in, same type out (an integer tensor is a type error)."""

    def __call__(self, x: Tensor[FT, Unpack[S]]) -> Tensor[FT, Unpack[S]]: ...


def as_reduction(fn: Callable[..., Any]) -> Reduction:
    """Give a reduction implementation its public overloads (identity at run time)."""
    return fn


def as_accumulating_reduction(fn: Callable[..., Any]) -> AccumulatingReduction:
    return fn


def as_mean_reduction(fn: Callable[..., Any]) -> MeanReduction:
    return fn


def as_arg_reduction(fn: Callable[..., Any]) -> ArgReduction:
    return fn


def _tnp() -> Any:
    from .prelude import numpy

    return numpy


def refuse_out(out: object, name: str) -> None:
    """NumPy's functions call the methods of array-likes with ``out=None``: accepted (as JAX does), any other
    ``out`` refused."""
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (tensorstage arrays are immutable); use the result")
