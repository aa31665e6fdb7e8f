"""A primitive is one object that carries every rule about it.

Rules (all optional at construction so families can be written top to bottom, but a registry test demands the
ones each transform needs):

- ``shape(*avals, **params) -> Aval | tuple[Aval, ...]``: abstract evaluation with checks and good messages.
- ``jvp(primals, tangents, outs, **params) -> tangent_outs``: forward-mode rule. ``tangents`` hold atoms or
  ``Zero``; ``outs`` are the already-emitted primal outputs. Returns one tangent (or Zero) per output.
- ``vjp(cts, primals, outs, wants, **params) -> input_cts``: reverse-mode rule. ``cts`` hold atoms or Zero, one
  per output; ``wants[i]`` says whether input i needs a cotangent. Returns one atom / Zero / None per input.
- ``vjp_forward(primals, active, **params) -> (outs, backward)`` (optional): reverse mode emits the primal
  outputs through this rule and later calls ``backward(cts, wants)``, so residuals are computed once (custom_vjp,
  cond, scan) instead of once for the value and again for the cotangents.
- ``batch(args, dims, **params) -> (outs, out_dims)``: vmap rule; ``dims[i]`` is the batched axis of arg i or
  None. The walker only calls it when at least one arg is batched and the equation does not use the walked axis.
- ``uses_axis(params, axis_name) -> bool``: whether an equation with these params uses the named mapped axis:
  a collective over it, or (through ``graph_uses_axis``) a nested graph holding one. Such an equation depends on
  the axis being vmapped even when none of its operands is batched. None: never.
- ``axis_batch(args, dims, size, **params) -> (outs, out_dims)``: vmap rule for an equation that uses the walked
  axis (``uses_axis``), of ``size`` members; called instead of ``batch``, even when no arg is batched. A
  collective over the vmapped axis becomes a reduction over the batch axis. Required with ``uses_axis``.
- ``effectful`` (a flag, not a rule): the equation runs for an effect outside the program (a host callback that
  prints or writes), so dead-code elimination keeps it though nothing reads its results, and loop-invariant
  hoisting leaves it in its loop; so does an equation whose nested graphs (``graph_params``) hold one.
- ``lower``: registered from ``tensorstage.lowering`` keyed by the primitive; staging never imports lowering.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from .ir import Aval, Equation, Graph

ShapeRule = Callable[..., "Aval | tuple[Aval, ...]"]
Rule = Callable[..., Any]
AxisUse = Callable[[Mapping[str, Any], str], bool]


class Primitive:
    __slots__ = (
        "name", "multiple_results", "shape", "jvp", "vjp", "vjp_forward", "batch", "uses_axis", "axis_batch",
        "differentiable", "effectful", "graph_params",
    )

    def __init__(
        self, name: str, *, multiple_results: bool = False, differentiable: bool = True, effectful: bool = False
    ) -> None:
        self.name = name
        self.multiple_results = multiple_results
        self.effectful = effectful
        # The params holding nested graphs (a Graph or a tuple of them): branches, loop bodies, called functions.
        self.graph_params: tuple[str, ...] = ()
        # False for primitives whose outputs are never differentiable (integer or boolean outputs only).
        self.differentiable = differentiable
        self.shape: ShapeRule | None = None
        self.jvp: Rule | None = None
        self.vjp: Rule | None = None
        self.vjp_forward: Rule | None = None
        self.batch: Rule | None = None
        self.uses_axis: AxisUse | None = None
        self.axis_batch: Rule | None = None
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} is defined twice")
        REGISTRY[name] = self

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    # Decorators so that a primitive's rules read as one block right after its definition.
    def def_shape(self, rule: ShapeRule) -> ShapeRule:
        self.shape = rule
        return rule

    def def_jvp(self, rule: Rule) -> Rule:
        self.jvp = rule
        return rule

    def def_vjp(self, rule: Rule) -> Rule:
        self.vjp = rule
        return rule

    def def_vjp_forward(self, rule: Rule) -> Rule:
        self.vjp_forward = rule
        return rule

    def def_batch(self, rule: Rule) -> Rule:
        self.batch = rule
        return rule

    def def_uses_axis(self, rule: AxisUse) -> AxisUse:
        self.uses_axis = rule
        return rule

    def def_axis_batch(self, rule: Rule) -> Rule:
        self.axis_batch = rule
        return rule


def equation_uses_axis(prim: Primitive, params: Mapping[str, Any], axis_name: str | None) -> bool:
    """Whether an equation of ``prim`` with ``params`` uses the mapped axis ``axis_name`` (None: an unnamed axis,
    which nothing can use)."""
    return axis_name is not None and prim.uses_axis is not None and prim.uses_axis(params, axis_name)


def graph_uses_axis(graph: Graph, axis_name: str) -> bool:
    """Whether any equation of ``graph`` uses the mapped axis ``axis_name``, as its primitive says (for the
    ``uses_axis`` rule of primitives that carry nested graphs)."""
    return any(equation_uses_axis(eqn.primitive, eqn.params, axis_name) for eqn in graph.eqns)


def nested_graphs(prim: Primitive, params: Mapping[str, Any]) -> Iterator[Graph]:
    """The graphs an equation of ``prim`` with ``params`` carries (its ``graph_params``: a Graph or a tuple)."""
    for key in prim.graph_params:
        value = params[key]
        yield from value if isinstance(value, tuple) else (value,)


def graph_holds(graph: Graph, test: Callable[[Equation], bool]) -> bool:
    """Whether ``test`` holds for an equation of ``graph`` or of a graph nested in one (a loop body, a branch, a
    checkpointed function), at any depth. Each graph answers each test once (``Graph.holds``)."""
    known = graph.holds
    if known is None:
        known = graph.holds = {}
    answer = known.get(test)
    if answer is None:
        answer = known[test] = any(
            test(eqn) or any(graph_holds(g, test) for g in nested_graphs(eqn.primitive, eqn.params))
            for eqn in graph.eqns
        )
    return answer


def equation_has_effects(eqn: Equation) -> bool:
    """Whether running ``eqn`` has an effect: its primitive is effectful, or a nested graph holds an equation
    that has one (a print in a loop body), so dead-code elimination must keep it."""
    prim = eqn.primitive
    return prim.effectful or any(graph_holds(g, _effectful) for g in nested_graphs(prim, eqn.params))


def _effectful(eqn: Equation) -> bool:
    return eqn.primitive.effectful


REGISTRY: Final[dict[str, Primitive]] = {}
