"""``custom_vmap_call``: a function with a user-defined batching rule (JAX's ``jax.custom_batching.custom_vmap``).

``custom_vmap_call(*args, *closure; fun, rule, num_args)`` computes ``fun`` (a graph on the arguments and the
values it closes over). Under ``vmap`` the batching rule runs ``rule`` instead: a ``VmapRule`` (made by the dsl,
which wraps the user's Python function) that maps ``(axis_size, which arguments are batched, the arguments with
their batch axis first)`` to the results and which of them are batched. Forward mode differentiates ``fun`` into
another ``custom_vmap_call`` whose rule is the JVP of the user's rule (``VmapRule.jvp``), so ``vmap`` of ``jvp``
still batches by the user's rule, as in JAX. Reverse mode is refused, as in JAX (combine with ``custom_vjp``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..builder import bind
from ..errors import ShapeError, TransformError
from ..ir import Atom, Aval, Graph, SourceLoc
from ..primitive import Primitive
from ..zeros import MaybeZero, Zero, has_tangent
from .subgraph_edits import batch_size_and_name, check_inputs, to_front


class VmapRule(Protocol):
    """A custom batching rule on atoms (the dsl wraps the user's function on staged values in one)."""

    name: str
    loc: SourceLoc | None

    def __call__(self, axis_size: int, in_batched: Sequence[bool], args: Sequence[Atom]) -> tuple[
        list[Atom], list[bool]
    ]: ...

    def jvp(self, wants: Sequence[bool], nonzero: Sequence[bool]) -> VmapRule:
        """The rule of ``jvp_graph(fun, wants)`` without its zero tangents: ``(args, wanted tangents) -> (results,
        nonzero result tangents)``."""
        ...


custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)


@custom_vmap_call_p.def_shape
def _custom_vmap_shape(*args: Aval, fun: Graph, rule: VmapRule, num_args: int) -> tuple[Aval, ...]:
    check_inputs("custom_vmap_call", "the function", fun, args)
    return fun.out_avals


@custom_vmap_call_p.def_jvp
def _custom_vmap_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, fun: Graph, rule: VmapRule,
    num_args: int,
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_graph

    wants = [not isinstance(t, Zero) and has_tangent(p.aval) for p, t in zip(primals, tangents)]
    if any(wants[num_args:]):
        raise TransformError(
            f"{rule.name}: a value the function closes over is differentiated; pass it as an argument",
            "custom_vmap", rule.loc,
        )
    joint, nonzero = jvp_graph(fun, wants, instantiate=False)
    # The joint graph takes (arguments, closure, wanted tangents); its rule sees the arguments and the tangents.
    inputs = [*primals, *(t for t, w in zip(tangents, wants) if w)]
    wanted_args = wants[:num_args]
    joint_rule = rule.jvp(wanted_args, nonzero)
    results = bind(custom_vmap_call_p, *_closure_last(inputs, num_args, len(primals)), fun=_closure_last_graph(
        joint, num_args, len(primals)), rule=joint_rule, num_args=num_args + sum(wanted_args))
    tangent_outs = iter(list(results)[len(outs):])
    return [next(tangent_outs) if nz else Zero(o.aval) for o, nz in zip(outs, nonzero)]


def _closure_last(atoms: Sequence[Any], num_args: int, num_primals: int) -> list[Any]:
    """``(args, closure, tangents)`` reordered as ``(args, tangents, closure)``: a call's closure comes last."""
    return [*atoms[:num_args], *atoms[num_primals:], *atoms[num_args:num_primals]]


def _closure_last_graph(graph: Graph, num_args: int, num_primals: int) -> Graph:
    return Graph(_closure_last(graph.inputs, num_args, num_primals), graph.eqns, graph.outputs)


@custom_vmap_call_p.def_vjp
def _custom_vmap_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, fun: Graph,
    rule: VmapRule, num_args: int,
) -> list[None]:
    if any(wants) and any(not isinstance(c, Zero) for c in cts):
        raise TransformError(
            f"{rule.name}: reverse mode cannot differentiate a function with a custom vmap rule (as in JAX): "
            "decorate the custom_vmap function with ts.custom_vjp as well",
            "custom_vmap", rule.loc,
        )
    return [None] * len(primals)


@custom_vmap_call_p.def_batch
def _custom_vmap_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, fun: Graph, rule: VmapRule, num_args: int
) -> tuple[list[Atom], list[int | None]]:
    if any(d is not None for d in dims[num_args:]):
        raise TransformError(
            f"{rule.name} closes over a value that vmap batches; pass it as an argument so its rule sees it batched",
            "custom_vmap", rule.loc,
        )
    size, name = batch_size_and_name(args, dims)
    batched = [d is not None for d in dims[:num_args]]
    operands = [to_front(a, d, b, size, name) for a, d, b in zip(args, dims, batched)]
    results, out_batched = rule(size, batched, operands)
    for i, (result, is_batched, aval) in enumerate(zip(results, out_batched, fun.out_avals)):
        want = Aval((size, *aval.shape), aval.dtype) if is_batched else aval
        if not result.aval.same_layout(want):
            what = "batched (the batch axis first)" if is_batched else "unbatched"
            raise ShapeError(
                f"{rule.name} returned {result.aval} for result {i}, which it says is {what}: expected {want}",
                "custom_vmap", rule.loc,
            )
    return results, [0 if b else None for b in out_batched]


def custom_vmap_call(args: Sequence[Atom], closure: Sequence[Atom], fun: Graph, rule: VmapRule) -> list[Atom]:
    return list(bind(custom_vmap_call_p, *args, *closure, fun=fun, rule=rule, num_args=len(args)))
