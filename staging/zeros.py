"""Symbolic zeros for tangents and cotangents: paths that do not depend on the inputs carry no dense zeros."""

from __future__ import annotations

from typing import Any, TypeAlias

from . import dtypes
from .ir import Atom, Aval


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
