"""Rematerialization: ``checkpoint_call`` recomputes its function's forward values in the backward pass instead of
keeping them alive, and ``optimization_barrier`` keeps XLA from merging that recomputation with the original.

- ``checkpoint_call(*ins; fun, name, prevent_cse)`` runs ``fun`` on ``ins`` (its arguments, then the outer values it
  closed over; all of them are differentiated). Forward mode and batching transform ``fun`` and stay a
  ``checkpoint_call``, so a later reverse pass still rematerializes. The VJP rule has no forward part: the reverse
  walker emits the call itself (only its outputs survive the forward sweep), and the backward rule re-emits
  ``fun``'s forward sweep from the call's inputs followed by its backward sweep. The residuals kept across the
  forward pass are therefore just the inputs.
- ``optimization_barrier(*xs)`` is the identity on a tuple of values, which XLA may not see through. The backward
  rule passes the recomputation's inputs through one together with the incoming cotangents: XLA cannot
  common-subexpression it with the forward pass, and cannot schedule it before the cotangents exist, i.e. before
  the backward pass reaches it (inside a ``scan`` body, the loop's forward/backward split sees the same data
  dependence, so the recomputation lands in the backward loop and only the inputs become per-step residuals).
"""

from __future__ import annotations

from collections.abc import Sequence
from ..builder import bind
from ..ir import Atom, Aval, Graph, Var
from ..primitive import Primitive, equation_has_effects
from ..zeros import MaybeZero, Zero, has_tangent
from .subgraph_edits import Replacing, batch_size_and_name, bind_control, check_inputs, def_nested_axis_rules, nonzero

# ----------------------------------------------------------------------------------------- optimization_barrier

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


@optimization_barrier_p.def_shape
def _barrier_shape(*avals: Aval) -> tuple[Aval, ...]:
    return avals


def optimization_barrier(xs: Sequence[Atom]) -> list[Atom]:
    """``xs`` unchanged, as values XLA computes exactly once and does not look through."""
    if not xs:
        return []
    return list(bind(optimization_barrier_p, *xs))


@optimization_barrier_p.def_jvp
def _barrier_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> list[MaybeZero]:
    return list(tangents)


@optimization_barrier_p.def_vjp
def _barrier_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]
) -> list[MaybeZero]:
    return list(cts)


@optimization_barrier_p.def_batch
def _barrier_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> tuple[list[Atom], list[int | None]]:
    return optimization_barrier(args), list(dims)


# ----------------------------------------------------------------------------------------------- checkpoint_call

checkpoint_call_p = Primitive("checkpoint_call", multiple_results=True)


@checkpoint_call_p.def_shape
def _checkpoint_shape(*avals: Aval, fun: Graph, name: str, prevent_cse: bool) -> tuple[Aval, ...]:
    check_inputs(f"checkpoint {name}", "the function", fun, avals)
    return tuple(fun.out_avals)


def checkpoint_call(
    ins: Sequence[Atom], *, fun: Graph, name: str, prevent_cse: bool = True, replacing: Replacing | None = None
) -> list[Atom]:
    params = {"fun": fun, "name": name, "prevent_cse": prevent_cse}
    return bind_control(checkpoint_call_p, ins, params, replacing)


@checkpoint_call_p.def_jvp
def _checkpoint_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, fun: Graph, name: str,
    prevent_cse: bool,
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_graph

    wants = nonzero(tangents, primals)
    graph, live = jvp_graph(fun, wants, instantiate=False)
    dense = [t for t, w in zip(tangents, wants) if w and not isinstance(t, Zero)]
    n_out = len(outs)
    # One call computing values and tangents, replacing the primal call the walker just emitted.
    fused = checkpoint_call(
        [*primals, *dense], fun=graph, name=name, prevent_cse=prevent_cse, replacing=Replacing(outs, range(n_out))
    )
    results = iter(fused[n_out:])
    return [next(results) if nz else Zero(o.aval) for nz, o in zip(live, outs)]


@checkpoint_call_p.def_vjp
def _checkpoint_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, fun: Graph,
    name: str, prevent_cse: bool,
) -> list[MaybeZero]:
    from ..transforms.vjp import vjp_emit

    ins = list(primals)
    cts = list(cts)
    if prevent_cse:
        # Literals need no barrier; the cotangents go through it only to order the recomputation after them.
        in_at = [i for i, a in enumerate(ins) if isinstance(a, Var)]
        dense = [(i, c) for i, c in enumerate(cts) if not isinstance(c, Zero)]
        ct_at = [i for i, _ in dense]
        fenced = iter(optimization_barrier([*(ins[i] for i in in_at), *(c for _, c in dense)]))
        for i in in_at:
            ins[i] = next(fenced)
        for i in ct_at:
            cts[i] = next(fenced)
    in_wants = [w and has_tangent(a.aval) for w, a in zip(wants, primals)]
    _, in_cts = vjp_emit(_without_effects(fun), ins, cts, in_wants)
    return in_cts


def _without_effects(graph: Graph) -> Graph:
    """``graph`` less the equations run only for their effect (a debug print): the recomputation must not repeat
    them, the checkpointed call already ran them."""
    kept = [e for e in graph.eqns if e.outputs or not equation_has_effects(e)]
    return graph if len(kept) == len(graph.eqns) else Graph(graph.inputs, kept, graph.outputs)


@checkpoint_call_p.def_batch
def _checkpoint_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, fun: Graph, name: str,
    prevent_cse: bool,
) -> tuple[list[Atom], list[int | None]]:
    from ..transforms.batching import batch_graph

    size, axis_name = batch_size_and_name(args, dims, walked_size)
    # Unbatched inputs (weights, typically) stay unbatched inside: nothing is broadcast up front.
    graph, out_dims = batch_graph(fun, dims, size, axis_name)
    return checkpoint_call(args, fun=graph, name=name, prevent_cse=prevent_cse), out_dims


def_nested_axis_rules(checkpoint_call_p, "fun")

