"""Graph -> graph transforms. Each walks a graph and applies its primitives' rules; none has per-primitive code."""

from .jvp import jvp_emit, jvp_graph
from .vjp import vjp_emit, vjp_graph

__all__ = ["jvp_emit", "jvp_graph", "vjp_emit", "vjp_graph"]
