"""Staging: the graph IR, primitives with all their rules, tracing, and graph-to-graph transforms.

Staging never imports lowering: lowering reads graphs and registers its rules by primitive.
"""

from . import primitives
from .builder import bind, building, inline
from .errors import ConcretizationError, DTypeError, ShapeError, StagingError, TransformError
from .ir import Atom, Aval, Equation, Graph, Literal, SourceLoc, Var
from .primitive import REGISTRY, Primitive

__all__ = [
    "REGISTRY",
    "Atom",
    "Aval",
    "ConcretizationError",
    "DTypeError",
    "Equation",
    "Graph",
    "Literal",
    "Primitive",
    "ShapeError",
    "SourceLoc",
    "StagingError",
    "TransformError",
    "Var",
    "bind",
    "building",
    "inline",
    "primitives",
]
