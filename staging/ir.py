"""The typed SSA graph IR: abstract values, variables, literals, equations and graphs.

Graphs are immutable values. Every equation remembers the user's source line that created it, so errors found
later (by a transform, typecheck or the XLA verifier) still point at user code.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np

from . import dtypes
from .bounded import remember

if TYPE_CHECKING:
    from .primitive import Primitive

DimName: TypeAlias = "str | None"


class SourceLoc(NamedTuple):
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Aval:
    """Abstract value: shape, dtype and the dim name of every axis (None for anonymous axes).

    Two avals are equal when shape, dtype and names agree; names make ``(In=4)`` and ``(Out=4)`` different types.
    """

    __slots__ = ("shape", "dtype", "dims", "ndim", "_key", "_hash")

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    dims: tuple[DimName, ...]
    ndim: int  # ``len(shape)``: an attribute, not a property (ops and rules read it per equation)

    def __init__(
        self, shape: tuple[int, ...], dtype: np.dtype[Any], dims: Sequence[DimName] | None = None
    ) -> None:
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.dims = tuple(dims) if dims is not None else (None,) * self.ndim
        self._key = (shape, dtype, self.dims)
        self._hash = hash(self._key)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, Aval)
            and self._hash == other._hash  # cheap: unequal avals almost always differ here
            # One C-level tuple comparison, which skips the dtype's own ``==`` when both hold the same dtype object.
            and self._key == other._key
        )

    def __hash__(self) -> int:
        return self._hash

    def same_layout(self, other: Aval) -> bool:
        """Equal shape and dtype, ignoring dim names."""
        return self.shape == other.shape and self.dtype == other.dtype

    def with_dtype(self, dtype: np.dtype[Any]) -> Aval:
        return Aval(self.shape, dtype, self.dims)

    def anonymous(self) -> Aval:
        if self.dims.count(None) == len(self.dims):  # already anonymous: avals are immutable, this one serves
            return self
        return Aval(self.shape, self.dtype)

    def __str__(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{format_dims(self.shape, self.dims)}]"

    __repr__ = __str__


_SCALAR_AVALS: dict[np.dtype[Any], Aval] = {}


def scalar_aval(dtype: np.dtype[Any]) -> Aval:
    """``Aval((), dtype)``, shared (avals are immutable): Python scalars in staged code make one per operation."""
    aval = _SCALAR_AVALS.get(dtype)
    if aval is None or aval.dtype is not dtype:  # ``is``: an equal dtype object (np.float32 itself) stays as given
        # Dtypes are few; the bound is for odd ones (byte orders, structured types).
        aval = remember(_SCALAR_AVALS, dtype, Aval((), dtype), 64)
    return aval


_SHARED_AVALS: dict[tuple[Any, ...], Aval] = {}


def shared_aval(aval: Aval) -> Aval:
    """The one shared Aval object of ``aval``'s type (avals are immutable; bounded): the inputs of every program
    staged for equal types are then one object, and so are the results memoized shape rules return for them,
    so the comparisons of the equations staged from them (memoized rules, same-type fast paths) succeed on
    identity, in later programs too."""
    found = _SHARED_AVALS.get(aval._key)
    if found is None:
        return remember(_SHARED_AVALS, aval._key, aval, 4096)
    return found if found.dtype is aval.dtype else aval  # ``is``: an equal dtype object stays as given


def format_dims(shape: Sequence[int], dims: Sequence[DimName]) -> str:
    return ", ".join(str(n) if name is None else f"{name}={n}" for n, name in zip(shape, dims))


class Var:
    """A graph variable. Identity is the variable: two Vars with equal avals are different values."""

    __slots__ = ("aval",)

    def __init__(self, aval: Aval) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval})"


class Literal:
    """A constant operand: a Python/numpy scalar or a host array, stored as a numpy array of the aval's dtype."""

    __slots__ = ("value", "aval")

    def __init__(self, value: np.ndarray[Any, Any], aval: Aval) -> None:
        self.value = value
        self.aval = aval

    def __repr__(self) -> str:
        if self.value.ndim == 0:
            return f"{self.value.item()!r}:{dtypes.short_name(self.aval.dtype)}"
        return f"const{self.aval}"


Atom: TypeAlias = "Var | Literal"


_PY_SCALARS = (int, float, bool)
# Literals of Python numbers, shared (literals are immutable, and every transform reads them by value): rules and
# operators make one per use of a constant such as ``1`` or a learning rate. Keyed with the number's type, as
# ``1 == 1.0 == True``; zeros and NaNs are left out (``0.0 == -0.0``, ``nan != nan``).
_SCALAR_LITERALS: dict[tuple[type, Any, np.dtype[Any]], Literal] = {}


def literal(value: Any, dtype: np.dtype[Any]) -> Literal:
    kind = type(value)
    if kind in _PY_SCALARS and value and value == value:
        key = (kind, value, dtype)
        found = _SCALAR_LITERALS.get(key)
        if found is not None and found.aval.dtype is dtype:  # ``is``: an equal dtype object stays as given
            return found
        array = np.asarray(value, dtype=dtype)
        return remember(_SCALAR_LITERALS, key, Literal(array, scalar_aval(dtype)), 256)
    array = np.asarray(value, dtype=dtype)
    return Literal(array, Aval(array.shape, dtype) if array.shape else scalar_aval(dtype))


class Equation:
    __slots__ = ("primitive", "inputs", "outputs", "params", "loc")

    def __init__(
        self,
        primitive: Primitive,
        inputs: tuple[Atom, ...],
        outputs: tuple[Var, ...],
        params: Mapping[str, Any],
        loc: SourceLoc | None,
    ) -> None:
        self.primitive = primitive
        self.inputs = inputs
        self.outputs = outputs
        self.params = params
        self.loc = loc

    def __repr__(self) -> str:
        return f"Equation({self.primitive.name})"


class Graph:
    """An immutable SSA program: typed inputs, equations in order, output atoms."""

    __slots__ = ("inputs", "eqns", "outputs", "holds")

    def __init__(self, inputs: Sequence[Var], eqns: Sequence[Equation], outputs: Sequence[Atom]) -> None:
        self.inputs = tuple(inputs)
        self.eqns = tuple(eqns)
        self.outputs = tuple(outputs)
        # ``graph_holds``'s answers per test, kept here because the graph never changes: lowering and DCE ask them
        # of every nested graph at every level of nesting, which would otherwise re-walk inner graphs per level.
        self.holds: dict[Callable[[Equation], bool], bool] | None = None

    @property
    def in_avals(self) -> tuple[Aval, ...]:
        return tuple(v.aval for v in self.inputs)

    @property
    def out_avals(self) -> tuple[Aval, ...]:
        return tuple(a.aval for a in self.outputs)

    def __str__(self) -> str:
        return GraphPrinter().graph(self)


def _var_names() -> Iterator[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


class GraphPrinter:
    """Readable listing of a graph, one equation per line with types and the user's source line."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.fresh = _var_names()

    def name(self, atom: Atom) -> str:
        if isinstance(atom, Literal):
            return repr(atom)
        key = id(atom)
        if key not in self.names:
            self.names[key] = next(self.fresh)
        return self.names[key]

    def typed(self, var: Var) -> str:
        return f"{self.name(var)}:{var.aval}"

    def graph(self, graph: Graph, indent: str = "") -> str:
        ins = " ".join(self.typed(v) for v in graph.inputs)
        lines = [f"{indent}{{ lambda {ins} . let"]
        for eqn in graph.eqns:
            lines.append(self.equation(eqn, indent + "    "))
        outs = ", ".join(self.name(a) for a in graph.outputs)
        lines.append(f"{indent}  in ({outs}) }}")
        return "\n".join(lines)

    def equation(self, eqn: Equation, indent: str) -> str:
        outs = " ".join(self.typed(v) for v in eqn.outputs)
        params = self.params(eqn.params, indent)
        ins = " ".join(self.name(a) for a in eqn.inputs)
        text = f"{indent}{outs} = {eqn.primitive.name}{params} {ins}".rstrip()
        if eqn.loc is not None:
            text += f"    # {eqn.loc}"
        return text

    def params(self, params: Mapping[str, Any], indent: str) -> str:
        if not params:
            return ""
        parts = []
        for key, value in params.items():
            if isinstance(value, Graph):
                body = self.graph(value, indent + "    ")
                parts.append(f"{key}=\n{body}\n{indent}")
            elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
                bodies = "\n".join(self.graph(v, indent + "    ") for v in value)
                parts.append(f"{key}=(\n{bodies}\n{indent})")
            else:
                parts.append(f"{key}={_param_text(value)}")
        return "[" + " ".join(parts) + "]"


def _param_text(value: Any) -> str:
    if isinstance(value, np.dtype):
        return dtypes.short_name(value)
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    return repr(value)
