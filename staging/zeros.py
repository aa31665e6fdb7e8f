"""Symbolic zeros for tangents and cotangents: paths that do not depend on the inputs carry no dense zeros."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from . import dtypes
from .ir import Atom, Aval

if TYPE_CHECKING:
    from .errors import TransformError
    from .primitive import Primitive


class Zero:
    """A known-zero tangent or cotangent of the given type; never materialized unless a rule must."""

    __slots__ = ("aval",)

    def __init__(self, aval: Aval) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"

    def __getattr__(self, name: str) -> Any:
        """The type's attributes (``shape``, ``dtype``, ``ndim``, ``dims``), which a custom rule with
        ``symbolic_zeros`` reads off the zeros it is given, as off JAX's ``SymbolicZero``."""
        if name == "aval":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(value: Any) -> Zero:
        """The zero tangent of a staged value (anything with an ``aval``)."""
        return Zero(value.aval)


MaybeZero: TypeAlias = "Atom | Zero"


def is_zero(x: object) -> bool:
    return isinstance(x, Zero)


def has_tangent(aval: Aval) -> bool:
    """Only floating-point and complex values carry tangents and cotangents; integer and boolean paths are
    always Zero."""
    return dtypes.is_inexact(aval.dtype)


def def_no_derivative(prim: Primitive, refusal: Callable[[Mapping[str, Any]], TransformError]) -> None:
    """JVP and VJP rules for a primitive that has no derivative (a host callback, an exported program): zero
    tangents and no cotangents where nothing is differentiated through it (or it has no results), else the
    ``TransformError`` that ``refusal(params)`` makes."""

    @prim.def_jvp
    def _jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> list[
        MaybeZero
    ]:
        if outs and any(not isinstance(t, Zero) for t in tangents):
            raise refusal(params)
        return [Zero(o.aval) for o in outs]

    @prim.def_vjp
    def _vjp(
        cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], **params: Any
    ) -> list[None]:
        if any(wants) and any(not isinstance(c, Zero) for c in cts):
            raise refusal(params)
        return [None] * len(primals)
