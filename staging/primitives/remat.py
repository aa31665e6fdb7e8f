"""Rematerialization: ``checkpoint_call`` recomputes its function's forward values in the backward pass instead of
keeping them alive, but for those its policy saves; ``checkpoint_name`` tags a value for policies to read; and
``optimization_barrier`` keeps XLA from merging the recomputation with the original.

- ``checkpoint_call(*ins; fun, name, prevent_cse, policy)`` runs ``fun`` on ``ins`` (its arguments, then the outer
  values it closed over; all of them are differentiated). Forward mode and batching transform ``fun`` and stay a
  ``checkpoint_call`` with the same policy, so a later reverse pass still rematerializes.
- Reverse mode (``vjp_forward``): the policy is asked about every equation of ``fun`` (see ``CheckpointPolicy``);
  the outputs of the equations it accepts are *saved*: the forward call returns them as extra outputs (residuals).
  The backward rule re-emits ``fun``'s forward sweep from the call's inputs, with every read of a saved value
  redirected to its residual, followed by ``fun``'s backward sweep; dead-code elimination then leaves only the
  recomputation the cotangents still need (with ``dots_saveable``, the elementwise work between the saved
  products, and no product). With no policy (or nothing saved) the residuals are just the inputs.
- Policies see ``fun``'s own equations: a loop, ``cond`` or nested checkpoint inside it is one equation, whose
  outputs a policy may save, but whose own per-step values are not (they are recomputed with it, by its rules).
- ``optimization_barrier(*xs)`` is the identity on a tuple of values, which XLA may not see through. The backward
  rule passes the recomputation's inputs and residuals through one together with the incoming cotangents: XLA
  cannot common-subexpression it with the forward pass, and cannot schedule it before the cotangents exist, i.e.
  before the backward pass reaches it (inside a ``scan`` body, the loop's forward/backward split sees the same
  data dependence, so the recomputation lands in the backward loop and only the inputs and residuals become
  per-step values).
- ``checkpoint_name(x; name)`` is the identity, lowered to nothing. Its tangent and cotangent pass through untagged
  (as JAX's ``name_p``: a tangent is not the named value); batching keeps the tag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..builder import bind, building, current
from ..dce import dce
from ..ir import Atom, Aval, Equation, Graph, Var
from ..primitive import Primitive, equation_has_effects
from ..zeros import MaybeZero, Zero, has_tangent
from . import check as K
from .subgraph_edits import Replacing, batch_size_and_name, bind_control, check_inputs, def_nested_axis_rules, nonzero


class CheckpointPolicy(Protocol):
    """Whether reverse mode may save an equation's outputs instead of recomputing them: called as
    ``policy(primitive, *avals, **params)`` with the equation's primitive (``primitive.name`` is what its printed
    graph shows, e.g. ``"dot_general"`` or ``"checkpoint_name"``), the abstract values of its operands (``.shape``,
    ``.dtype``, ``.dims``) and its params, as printed; returns a ``bool`` (JAX's contract, on tensorstage's IR)."""

    def __call__(self, prim: Primitive, /, *avals: Aval, **params: Any) -> bool: ...


Backward = Callable[[Sequence[MaybeZero], Sequence[bool]], list[MaybeZero]]

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


# ----------------------------------------------------------------------------------------------- checkpoint_name

checkpoint_name_p = Primitive("checkpoint_name")


@checkpoint_name_p.def_shape
def _name_shape(x: Aval, *, name: str) -> Aval:
    return x


def checkpoint_name(x: Atom, name: str) -> Atom:
    """``x``, tagged ``name`` for checkpoint policies (``save_only_these_names``, ...)."""
    return bind(checkpoint_name_p, x, name=name)  # type: ignore[no-any-return]


@checkpoint_name_p.def_jvp
def _name_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, name: str
) -> list[MaybeZero]:
    return [tangents[0]]


@checkpoint_name_p.def_vjp
def _name_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, name: str
) -> list[MaybeZero]:
    return [cts[0]]


@checkpoint_name_p.def_batch
def _name_batch(args: Sequence[Atom], dims: Sequence[int | None], *, name: str) -> tuple[Atom, int | None]:
    return checkpoint_name(args[0], name), dims[0]


# ----------------------------------------------------------------------------------------------- checkpoint_call

checkpoint_call_p = Primitive("checkpoint_call", multiple_results=True)


@checkpoint_call_p.def_shape
def _checkpoint_shape(
    *avals: Aval, fun: Graph, name: str, prevent_cse: bool, policy: CheckpointPolicy | None
) -> tuple[Aval, ...]:
    check_inputs(f"checkpoint {name}", "the function", fun, avals)
    return tuple(fun.out_avals)


def checkpoint_call(
    ins: Sequence[Atom], *, fun: Graph, name: str, prevent_cse: bool = True, policy: CheckpointPolicy | None = None,
    replacing: Replacing | None = None,
) -> list[Atom]:
    params = {"fun": fun, "name": name, "prevent_cse": prevent_cse, "policy": policy}
    return bind_control(checkpoint_call_p, ins, params, replacing)


@checkpoint_call_p.def_jvp
def _checkpoint_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, fun: Graph, name: str,
    prevent_cse: bool, policy: CheckpointPolicy | None,
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_graph

    wants = nonzero(tangents, primals)
    graph, live = jvp_graph(fun, wants, instantiate=False)
    dense = [t for t, w in zip(tangents, wants) if w and not isinstance(t, Zero)]
    n_out = len(outs)
    # One call computing values and tangents, replacing the primal call the walker just emitted.
    fused = checkpoint_call(
        [*primals, *dense], fun=graph, name=name, prevent_cse=prevent_cse, policy=policy,
        replacing=Replacing(outs, range(n_out)),
    )
    results = iter(fused[n_out:])
    return [next(results) if nz else Zero(o.aval) for nz, o in zip(live, outs)]


@checkpoint_call_p.def_vjp_forward
def _checkpoint_forward(
    primals: Sequence[Atom], active: Sequence[bool], *, fun: Graph, name: str, prevent_cse: bool,
    policy: CheckpointPolicy | None,
) -> tuple[list[Atom], Backward]:
    saved = _saved_values(fun, name, policy)
    position = {v: i for i, v in enumerate(fun.outputs) if isinstance(v, Var)}
    extra = [v for v in saved if v not in position]
    forward = Graph(fun.inputs, fun.eqns, [*fun.outputs, *extra]) if extra else fun
    results = checkpoint_call(primals, fun=forward, name=name, prevent_cse=prevent_cse, policy=policy)
    n_out = len(fun.outputs)
    position.update((v, n_out + i) for i, v in enumerate(extra))
    residual_of = {v: results[position[v]] for v in saved}
    residual_of.update((v, residual_of[tagged]) for v, tagged in _untagged(fun, residual_of))

    def backward(cts: Sequence[MaybeZero], wants: Sequence[bool]) -> list[MaybeZero]:
        return _recompute_vjp(fun, primals, residual_of, cts, wants, prevent_cse)

    return results[:n_out], backward


@checkpoint_call_p.def_vjp
def _checkpoint_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, fun: Graph,
    name: str, prevent_cse: bool, policy: CheckpointPolicy | None,
) -> list[MaybeZero]:
    # Reverse mode goes through ``vjp_forward``; this rule (nothing saved) serves callers that bind the call apart.
    return _recompute_vjp(fun, primals, {}, cts, wants, prevent_cse)


def _saved_values(fun: Graph, name: str, policy: CheckpointPolicy | None) -> list[Var]:
    """The values of ``fun`` that ``policy`` saves and something reads: outputs of the equations it accepts (never
    of one run for its effect: the recomputation drops those)."""
    if policy is None:
        return []
    read = set(fun.outputs).union(*(e.inputs for e in fun.eqns))
    saved: list[Var] = []
    for eqn in fun.eqns:
        if eqn.outputs and not equation_has_effects(eqn) and _saves(policy, eqn, name):
            saved.extend(v for v in eqn.outputs if v in read)
    return saved


def _untagged(fun: Graph, saved: Mapping[Var, Atom]) -> list[tuple[Var, Var]]:
    """``(x, tagged)`` for each saved ``tagged = checkpoint_name(x)`` (through chains of tags) where ``x`` is an
    intermediate value: ``x`` is that residual too, so the rules that read ``x`` (tanh's VJP reads tanh's output)
    do not recompute it."""
    inputs = set(fun.inputs)
    found: list[tuple[Var, Var]] = []
    aliases: dict[Var, Var] = {}
    for eqn in reversed(fun.eqns):
        if eqn.primitive is not checkpoint_name_p:
            continue
        (out,), (x,) = eqn.outputs, eqn.inputs
        if not isinstance(x, Var) or x in inputs or x in saved:
            continue
        tagged = aliases.get(out, out)
        if tagged in saved:
            aliases[x] = tagged
            found.append((x, tagged))
    return found


def _saves(policy: CheckpointPolicy, eqn: Equation, name: str) -> bool:
    verdict = policy(eqn.primitive, *(a.aval for a in eqn.inputs), **eqn.params)
    if not isinstance(verdict, bool):
        raise TypeError(
            f"checkpoint {name}: the policy {policy!r} returned {verdict!r} for {eqn.primitive.name} (at {eqn.loc}); "
            "a policy returns a bool (True: save the equation's outputs; host offload is not available)"
        )
    return verdict


def _recompute_vjp(
    fun: Graph, primals: Sequence[Atom], residual_of: Mapping[Var, Atom], cts: Sequence[MaybeZero],
    wants: Sequence[bool], prevent_cse: bool,
) -> list[MaybeZero]:
    """The cotangents of ``fun``'s inputs, from its forward sweep recomputed from ``primals`` and the residuals
    (``residual_of``: saved value of ``fun`` -> the forward call's output holding it) and its backward sweep."""
    from ..transforms.vjp import vjp_emit

    saved = list(dict.fromkeys(residual_of.values()))  # a residual may hold several values (a tag's input)
    ins, residuals, cts = list(primals), list(saved), list(cts)
    if prevent_cse:
        _fence(ins, residuals, cts)
    in_wants = [w and has_tangent(a.aval) for w, a in zip(wants, primals)]
    body = _without_effects(fun)
    if not residual_of:
        return vjp_emit(body, ins, cts, in_wants)[1]
    fenced = dict(zip(saved, residuals))
    return _vjp_reading_residuals(body, ins, {v: fenced[r] for v, r in residual_of.items()}, cts, in_wants)


def _fence(ins: list[Atom], residuals: list[Atom], cts: list[MaybeZero]) -> None:
    """Pass the recomputation's inputs and residuals, with the cotangents, through one optimization barrier, in
    place. Literals need no barrier; the cotangents go through it only to order the recomputation after them."""
    slots: list[tuple[list[Any], int]] = [
        (group, i) for group in (ins, residuals) for i, a in enumerate(group) if isinstance(a, Var)
    ]
    slots += [(cts, i) for i, c in enumerate(cts) if not isinstance(c, Zero)]
    fenced = optimization_barrier([group[i] for group, i in slots])
    for (group, i), value in zip(slots, fenced):
        group[i] = value


def _vjp_reading_residuals(
    body: Graph, ins: Sequence[Atom], residual_of: dict[Var, Atom], cts: Sequence[MaybeZero], wants: Sequence[bool]
) -> list[MaybeZero]:
    """``vjp_emit(body, ins, cts, wants)``'s cotangents, with the saved values read from their residuals: the sweeps
    are emitted aside, every read of a saved value's recomputation is redirected to its residual (its VJP rule
    still runs, on the residual), and only the equations the cotangents then need join the graph."""
    from ..transforms.vjp import vjp_emit

    keys = list(residual_of)
    widened = Graph(body.inputs, body.eqns, [*body.outputs, *keys])  # to learn each saved value's recomputation
    outer = current()
    with building() as aside:
        aside.loc = outer.loc
        outs, in_cts = vjp_emit(widened, ins, [*cts, *(Zero(v.aval) for v in keys)], wants)
    recomputed = outs[len(body.outputs) :]
    swap: dict[Atom, Atom] = {r: residual_of[k] for r, k in zip(recomputed, keys) if isinstance(r, Var)}
    in_cts = [c if isinstance(c, Zero) else swap.get(c, c) for c in in_cts]
    eqns = [_reading(e, swap) for e in aside.eqns]
    needed = dce(Graph((), eqns, [c for c in in_cts if not isinstance(c, Zero)]))
    outer.eqns.extend(needed.eqns)
    return in_cts


def _reading(eqn: Equation, swap: dict[Atom, Atom]) -> Equation:
    """``eqn`` with its operands found in ``swap`` replaced (nested graphs are closed: they read only inputs)."""
    if swap.keys().isdisjoint(eqn.inputs):
        return eqn
    return Equation(eqn.primitive, tuple(swap.get(a, a) for a in eqn.inputs), eqn.outputs, eqn.params, eqn.loc)


def _without_effects(graph: Graph) -> Graph:
    """``graph`` less the equations run only for their effect (a debug print): the recomputation must not repeat
    them, the checkpointed call already ran them."""
    kept = [e for e in graph.eqns if e.outputs or not equation_has_effects(e)]
    return graph if len(kept) == len(graph.eqns) else Graph(graph.inputs, kept, graph.outputs)


@checkpoint_call_p.def_batch
def _checkpoint_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, fun: Graph, name: str,
    prevent_cse: bool, policy: CheckpointPolicy | None,
) -> tuple[list[Atom], list[int | None]]:
    from ..transforms.batching import batch_graph

    size, axis_name = batch_size_and_name(args, dims, walked_size)
    # Unbatched inputs (weights, typically) stay unbatched inside: nothing is broadcast up front.
    graph, out_dims = batch_graph(fun, dims, size, axis_name)
    return checkpoint_call(args, fun=graph, name=name, prevent_cse=prevent_cse, policy=policy), out_dims


def_nested_axis_rules(checkpoint_call_p, "fun")


def _checkpoint_guard(eqn: Equation, active: Atom) -> Equation:
    """``active`` becomes the checkpointed function's first operand."""
    params = dict(eqn.params, fun=K.guarded(eqn.params["fun"]))
    return Equation(checkpoint_call_p, (active, *eqn.inputs), eqn.outputs, params, eqn.loc)


K.GUARD_RULES[checkpoint_call_p] = _checkpoint_guard
