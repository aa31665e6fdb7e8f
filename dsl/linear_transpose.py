"""``linear_transpose``: the transpose of a linear function, as ``jax.linear_transpose``.

Built on reverse mode: the pullback of a linear function is the same at every point, so it is staged at zeros of
the example types. A function whose pullback reads its inputs is not linear, and is refused. A constant offset
(``2 * x + 1``) is not detected: its linear part is transposed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import pytree
from .array import asarray
from .autodiff import _vjp_staged
from .program import Program
from .signature import Spec
from .staging.builder import is_staging
from .staging.errors import TransformError
from .staging.ir import Graph
from .staging.primitives import structural as S
from .staging.source import user_location
from .subgraph import function_name
from .trace import wrap


def _spec(x: Any) -> Spec:
    if isinstance(x, Spec):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Spec(x.shape, x.dtype)
    return Spec((), asarray(x).dtype)


def _reads_first_inputs(graph: Graph, n: int) -> bool:
    """Whether an output of ``graph`` depends on one of its first ``n`` inputs."""
    reached = set(graph.inputs[:n])
    for eqn in graph.eqns:
        if not reached.isdisjoint(eqn.inputs):
            reached.update(eqn.outputs)
    return any(o in reached for o in graph.outputs)


def linear_transpose(fun: Callable[..., Any], *primals: Any) -> Callable[[Any], tuple[Any, ...]]:
    """The transpose of the linear ``fun``: a function from a cotangent of ``fun``'s output to one cotangent per
    argument. ``primals`` give the argument types (arrays, numbers or ``ts.Spec``s; only shapes and dtypes
    are read)."""
    name = function_name(fun)
    specs = pytree.tree_map(_spec, primals)
    num_primals = len(pytree.leaves(specs))
    pullback = Program(lambda p, c: _vjp_staged(fun, tuple(p), c), name=f"transpose_{name}", check_annotations=False)
    checked: list[bool] = []

    def transposed(ct: Any) -> tuple[Any, ...]:
        if not checked:
            graph = pullback.stage(specs, pytree.tree_map(_spec, ct)).graph
            if _reads_first_inputs(graph, num_primals):
                raise TransformError(f"{name} is not linear in its arguments: its transpose would depend on them",
                                     "linear_transpose", user_location())
            checked.append(True)
        if is_staging():
            return _vjp_staged(fun, tuple(pytree.tree_map(lambda s: wrap(S.zeros(s.aval)), specs)), ct)
        return pullback(pytree.tree_map(lambda s: np.zeros(s.shape, s.dtype), specs), ct)

    return transposed

