"""Staging a Python function: call it on ``Traced`` values under a builder and collect the graph."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from . import pytree
from .array import Array, as_host_array
from .staging import dtypes as _dt
from .staging.builder import building, gc_paused
from .staging.dce import dce_close_over
from .staging.errors import DTypeError, TransformError
from .staging.ir import Atom, Aval, Graph, Literal, Var
from .staging.source import user_location
from .tensor import Tensor, Traced


_PRECISE_FLOAT = np.dtype(np.float64)
WEAK_FLOAT_AVAL = Aval((), _PRECISE_FLOAT)  # a Python float staged weakly typed: float64, keeping its digits


class WeakTraced(Traced[Any]):
    """A staged Python scalar: takes the dtype of the array it meets (weak typing, as in JAX).

    ``precise`` is the float64 value of a Python float passed to a program: its ``atom`` (in the default dtype)
    serves where it stands alone, ``precise`` where it meets a float64 array, so ``a + 0.1`` keeps every digit.
    """

    __slots__ = ("precise", "int_range")

    def __init__(self, atom: Atom, precise: Atom | None = None) -> None:
        super().__init__(atom)
        self.precise = precise
        # A Python int met by narrower integer arrays: the values that convert without wrapping (checked when
        # its value is known: at once for a constant, at call time for a program argument).
        self.int_range: IntRange | None = None

    def narrow(self, allowed: IntRange) -> None:
        self.int_range = allowed if self.int_range is None else self.int_range.intersect(allowed)

    @property
    def most_precise(self) -> Atom:
        """The value to stage a nested function's weak input from: ``precise`` where there is one."""
        return self.precise if self.precise is not None else self.atom

    def as_dtype(self, dtype: np.dtype[Any], op_name: str | None = None) -> Atom:
        """The scalar converted to ``dtype``, from its most precise value (``op_name``: the op it is an operand
        of, for messages)."""
        source = self.most_precise
        if source.aval.dtype == dtype:
            return source
        if _dt.is_integer(dtype) and _dt.is_integer(source.aval.dtype):
            self._check_fits(source, dtype, op_name)
        from .staging.primitives import elementwise as E

        return E.convert(source, dtype)

    def _check_fits(self, source: Atom, dtype: np.dtype[Any], op_name: str | None) -> None:
        allowed = IntRange.of(dtype, op_name)
        if isinstance(source, Literal):  # a constant operand: its value is known now
            allowed.check(int(source.value), "value")
        else:
            self.narrow(allowed)


@attrs.frozen
class IntRange:
    """The values a weakly typed Python int may take: those that fit every integer dtype it meets."""

    low: int
    high: int
    where: str  # the narrowest dtype met, in which op and where (``u8 in add at model.py:12``), for the message

    @staticmethod
    def of(dtype: np.dtype[Any], op_name: str | None) -> IntRange:
        """The range of integer ``dtype``, met in ``op_name`` at the user's current line."""
        info = np.iinfo(dtype)
        in_op = f" in {op_name}" if op_name else ""
        return IntRange(int(info.min), int(info.max), f"{_dt.short_name(dtype)}{in_op} at {user_location()}")

    def intersect(self, other: IntRange) -> IntRange:
        narrower = other if other.high - other.low < self.high - self.low else self
        return IntRange(max(self.low, other.low), min(self.high, other.high), narrower.where)

    def check(self, value: int, what: str) -> None:
        if not self.low <= value <= self.high:
            raise DTypeError(
                f"{what} {value} does not fit {self.where}, where it meets an array of that dtype (it would wrap): "
                "pass a NumPy scalar of that dtype or convert the array",
                "Python int",
                user_location(),
            )


def to_atom(x: Any) -> Atom:
    """A staged operand for any tensor-like value (concrete values become graph constants)."""
    if isinstance(x, Traced):
        return x.atom
    if isinstance(x, Array):
        host = x.numpy()
        return Literal(np.asarray(host), x.aval.anonymous())
    host = as_host_array(x)
    return Literal(host, Aval(host.shape, host.dtype))


def atom_of_type(x: Any, aval: Aval) -> Atom:
    """``to_atom(x)`` for an operand that must have ``aval``'s dtype: Python numbers and weakly typed staged
    scalars take it (as they would in a staged function given them), other values keep theirs."""
    if isinstance(x, (bool, int, float, complex)):
        return to_atom(np.asarray(x, aval.dtype))
    atom = to_atom(x)
    if type(x) is WeakTraced and atom.aval.dtype != aval.dtype:
        from .staging.primitives import elementwise as E

        return E.convert(atom, aval.dtype)
    return atom


def weak_float_atom(x: float) -> Literal:
    """A Python float staged as a weakly typed input: float64, so no digit is lost before it meets an array."""
    return Literal(np.asarray(x, _PRECISE_FLOAT), WEAK_FLOAT_AVAL)


def wrap(atom: Atom, weak: bool = False) -> Traced[Any]:
    return WeakTraced(atom) if weak else Traced(atom)


@attrs.frozen
class TracedFunction:
    """A function staged for given input types: its closed graph and how to rebuild its outputs."""

    graph: Graph
    out_tree: pytree.TreeDef
    closure: tuple[Var, ...]  # outer staged values the function read (extra trailing graph inputs)
    weak_outputs: tuple[bool, ...] = ()  # per output: a weakly typed scalar returned as it is (a loop carry stays weak)
    int_ranges: tuple[IntRange | None, ...] = ()  # per dynamic leaf (graph input): where a weak int must fit

    def pass_ranges_to(self, operands: Sequence[Any]) -> None:
        """Hand the ranges its weak int inputs must fit to the staged values they were staged from (``operands``,
        one per graph input), so a program argument used inside a nested function is checked too."""
        for operand, allowed in zip(operands, self.int_ranges):
            if allowed is None:
                continue
            if isinstance(operand, WeakTraced):
                operand.narrow(allowed)
            elif type(operand) is int:  # a constant: its value is known now
                allowed.check(operand, "value")


def trace_flat(
    fn: Callable[..., Any],
    treedef: pytree.TreeDef,
    leaves: Sequence[Any],
    dynamic: Sequence[bool],
    avals: Sequence[Aval | None],
    weak: Sequence[bool] = (),
    precise_outputs: bool | Sequence[bool] = False,
) -> TracedFunction:
    """Stage ``fn(*args, **kwargs)`` where ``(args, kwargs)`` = unflatten(treedef, leaves).

    Dynamic leaves become graph inputs of the given avals; static leaves are passed through unchanged.
    ``precise_outputs``: a float64 Python float returned as it is comes out as float64 (its precise value), not
    its default-float view: for functions whose outputs feed other staged functions (custom derivative rules,
    loop bodies). True for every output, or a flag per leading output (the weak carry of a loop body).
    """
    weak = tuple(weak) or (False,) * len(leaves)
    with gc_paused():
        return _trace_flat(fn, treedef, leaves, dynamic, avals, weak, precise_outputs)


def _trace_flat(
    fn: Callable[..., Any],
    treedef: pytree.TreeDef,
    leaves: Sequence[Any],
    dynamic: Sequence[bool],
    avals: Sequence[Aval | None],
    weak: Sequence[bool],
    precise_outputs: bool | Sequence[bool],
) -> TracedFunction:
    with building() as builder:
        inputs: list[Var] = []
        call_leaves: list[Any] = []
        for leaf, is_dyn, aval, is_weak in zip(leaves, dynamic, avals, weak):
            if is_dyn:
                assert aval is not None
                var = Var(aval)
                inputs.append(var)
                call_leaves.append(weak_input(var) if is_weak else Traced(var))
            else:
                call_leaves.append(leaf)
        args, kwargs = pytree.unflatten(treedef, call_leaves)
        result = fn(*args, **kwargs)
        out_leaves, out_tree = pytree.flatten(result)
        precise = (precise_outputs,) * len(out_leaves) if isinstance(precise_outputs, bool) else precise_outputs
        outputs = [
            x.atom if type(x) is Traced else x.most_precise if i < len(precise) and precise[i] and type(x) is WeakTraced
            else _output_atom(x)
            for i, x in enumerate(out_leaves)
        ]  # staged values mostly
    graph, closure = dce_close_over(builder.graph(inputs, outputs))
    weak_outputs = tuple(type(x) is WeakTraced for x in out_leaves)
    int_ranges = tuple(
        x.int_range if type(x) is WeakTraced else None for x, d in zip(call_leaves, dynamic) if d
    )
    return TracedFunction(graph, out_tree, tuple(closure), weak_outputs, int_ranges)


def weak_input(atom: Atom) -> WeakTraced:
    """A weakly typed scalar staged from ``atom``: a float64 one is a Python float at full precision."""
    if atom.aval.dtype == _PRECISE_FLOAT:
        from .staging.primitives import elementwise as E

        return WeakTraced(E.convert(atom, _dt.DEFAULT_FLOAT), precise=atom)
    return WeakTraced(atom)


def _output_atom(x: Any) -> Atom:
    if isinstance(x, (Tensor, np.ndarray, np.generic, bool, int, float)):
        return to_atom(x)
    raise TransformError(
        f"a staged function returned {type(x).__name__}, which is not a tensor or a pytree of tensors",
        "stage",
        user_location(),
    )
