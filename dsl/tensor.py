"""``Tensor[DT, *Shape]``: the typed value users write programs with.

Static face: dims and dtypes are type arguments, and operator signatures are written so that mypy and pyright
unify dims (matching only the axes an op touches, at one end). Runtime face: a Tensor is either a ``Traced``
value (a variable of the graph being staged) or an ``Array`` (a device buffer). Every operator forwards to
``tensorstage.numpy``, which stages primitives, or for concrete arrays runs a cached compiled op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from .dtypes import DType, bool_
from .staging.errors import ConcretizationError
from .staging.ir import Atom, Aval, format_dims
from .staging.source import user_location

if TYPE_CHECKING:
    from .prelude.numpy.indexing import AtIndexer

DT = TypeVar("DT", bound=DType)
Shape = TypeVarTuple("Shape")
S = TypeVarTuple("S")
K = TypeVar("K")
N = TypeVar("N")
M = TypeVar("M")

Scalar = int | float
AnyShape = Unpack[tuple[Any, ...]]


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
    @overload
    def __add__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __add__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __add__(self, other: Tensor[DT]) -> Tensor[DT, Unpack[Shape]]: ...
    def __add__(self, other: Any) -> Any:
        return _tnp.add(self, other)

    @overload
    def __radd__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __radd__(self: Tensor[DT, K], other: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...
    def __radd__(self, other: Any) -> Any:
        return _tnp.add(other, self)

    @overload
    def __sub__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __sub__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __sub__(self, other: Tensor[DT]) -> Tensor[DT, Unpack[Shape]]: ...
    def __sub__(self, other: Any) -> Any:
        return _tnp.subtract(self, other)

    @overload
    def __rsub__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rsub__(self: Tensor[DT, K], other: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...
    def __rsub__(self, other: Any) -> Any:
        return _tnp.subtract(other, self)

    @overload
    def __mul__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __mul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __mul__(self, other: Tensor[DT]) -> Tensor[DT, Unpack[Shape]]: ...
    def __mul__(self, other: Any) -> Any:
        return _tnp.multiply(self, other)

    @overload
    def __rmul__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rmul__(self: Tensor[DT, K], other: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...
    def __rmul__(self, other: Any) -> Any:
        return _tnp.multiply(other, self)

    @overload
    def __truediv__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __truediv__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S], K]: ...
    @overload
    def __truediv__(self, other: Tensor[DT]) -> Tensor[DT, Unpack[Shape]]: ...
    def __truediv__(self, other: Any) -> Any:
        return _tnp.true_divide(self, other)

    @overload
    def __rtruediv__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]: ...
    @overload
    def __rtruediv__(self: Tensor[DT, K], other: Tensor[DT, Unpack[S], K]) -> Tensor[DT, Unpack[S], K]: ...
    def __rtruediv__(self, other: Any) -> Any:
        return _tnp.true_divide(other, self)

    def __floordiv__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.floor_divide(self, other)

    def __rfloordiv__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.floor_divide(other, self)

    def __mod__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.mod(self, other)

    def __rmod__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.mod(other, self)

    def __pow__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.power(self, other)

    def __rpow__(self, other: Scalar) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.power(other, self)

    def __neg__(self) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.negative(self)

    def __pos__(self) -> Tensor[DT, Unpack[Shape]]:
        return self

    def __abs__(self) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.abs(self)

    def __invert__(self) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.invert(self)

    def __and__(self, other: Tensor[DT, Unpack[Shape]] | bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_and(self, other)

    def __rand__(self, other: bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_and(other, self)

    def __or__(self, other: Tensor[DT, Unpack[Shape]] | bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_or(self, other)

    def __ror__(self, other: bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_or(other, self)

    def __xor__(self, other: Tensor[DT, Unpack[Shape]] | bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_xor(self, other)

    def __rxor__(self, other: bool | int) -> Tensor[DT, Unpack[Shape]]:
        return _tnp.bitwise_xor(other, self)

    # ----------------------------------------------------------------------------------------- comparisons
    def __lt__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[bool_, Unpack[Shape]]:
        return _tnp.less(self, other)

    def __le__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[bool_, Unpack[Shape]]:
        return _tnp.less_equal(self, other)

    def __gt__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[bool_, Unpack[Shape]]:
        return _tnp.greater(self, other)

    def __ge__(self, other: Tensor[DT, Unpack[Shape]] | Scalar) -> Tensor[bool_, Unpack[Shape]]:
        return _tnp.greater_equal(self, other)

    def __eq__(self, other: object) -> Tensor[bool_, Unpack[Shape]]:  # type: ignore[override]
        return _tnp.equal(self, other)

    def __ne__(self, other: object) -> Tensor[bool_, Unpack[Shape]]:  # type: ignore[override]
        return _tnp.not_equal(self, other)

    __hash__ = None  # type: ignore[assignment]  # arrays compare elementwise, so they cannot be dict keys

    # -------------------------------------------------------------------------------------------- matmul
    @overload
    def __matmul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K, N]) -> Tensor[DT, Unpack[S], N]: ...
    @overload
    def __matmul__(self: Tensor[DT, Unpack[S], K], other: Tensor[DT, K]) -> Tensor[DT, Unpack[S]]: ...
    def __matmul__(self, other: Any) -> Any:
        return _tnp.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _tnp.matmul(other, self)

    # ----------------------------------------------------------------------------------- shape methods
    @property
    def T(self) -> Tensor[DT, AnyShape]:  # noqa: N802 - NumPy's name
        return _tnp.transpose(self)

    @property
    def mT(self) -> Tensor[DT, AnyShape]:  # noqa: N802 - NumPy's name
        return _tnp.swapaxes(self, -1, -2)

    def reshape(self, *shape: Any) -> Tensor[DT, AnyShape]:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _tnp.reshape(self, shape)

    def transpose(self, *axes: int) -> Tensor[DT, AnyShape]:
        return _tnp.transpose(self, axes if axes else None)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor[DT, AnyShape]:
        return _tnp.swapaxes(self, axis1, axis2)

    def squeeze(self, axis: Any = None) -> Tensor[DT, AnyShape]:
        return _tnp.squeeze(self, axis)

    def flatten(self) -> Tensor[DT, Any]:
        return _tnp.reshape(self, (-1,))

    def ravel(self) -> Tensor[DT, Any]:
        return _tnp.reshape(self, (-1,))

    def astype(self, dtype: type[DType] | Any) -> Tensor[Any, Unpack[Shape]]:
        return _tnp.astype(self, dtype)

    # ------------------------------------------------------------------------------------------- reductions
    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.min(self, axis=axis, keepdims=keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.prod(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.var(self, axis=axis, keepdims=keepdims)

    def std(self, axis: Any = None, keepdims: bool = False) -> Tensor[DT, AnyShape]:
        return _tnp.std(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: Any = None) -> Tensor[Any, AnyShape]:
        return _tnp.argmax(self, axis=axis)

    def argmin(self, axis: Any = None) -> Tensor[Any, AnyShape]:
        return _tnp.argmin(self, axis=axis)

    # ------------------------------------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Tensor[DT, AnyShape]:
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


def describe_shape(aval: Aval) -> str:
    return f"({format_dims(aval.shape, aval.dims)})"


if TYPE_CHECKING:
    from .prelude import numpy as _tnp
else:
    _tnp = None  # bound by the package __init__ once the op library (which needs Tensor) is imported
