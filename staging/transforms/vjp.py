"""Reverse mode: a forward sweep re-emits the graph, a backward sweep applies VJP rules in reverse order.

Both sweeps go into one new graph; cotangents accumulate per variable as atoms or symbolic ``Zero``s, and
only *active* equations (those reading a value that depends on a differentiated input) are visited on the
way back. Dead-code elimination afterwards drops forward work the gradient does not need.

A primitive may carry a ``vjp_forward`` rule: it emits the primal outputs itself and returns a closure that
emits the backward pass from what it saved (``custom_vjp`` uses this so its ``fwd`` runs once instead of once
for the value and once for the residuals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_

from .. import dtypes
from ..builder import Builder, building, current, rebind, same_types
from ..dce import dce
from ..ir import Atom, Equation, Graph, Var
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..zeros import MaybeZero, Zero
from .checks import conform

Backward = Callable[[Sequence[MaybeZero], Sequence[bool]], "Sequence[MaybeZero | None]"]


# One active equation on the tape: the equation, its operands and outputs in the new graph, which operands are
# active (they take cotangents), and the backward closure of a ``vjp_forward`` rule (else None). A plain tuple,
# unpacked by the backward sweep.
_Active = tuple[Equation, list[Atom], Sequence[Atom], list[bool], "Backward | None"]


def vjp_emit(
    graph: Graph,
    primals: Sequence[Atom],
    cts_out: Sequence[MaybeZero],
    wants: Sequence[bool],
    consume: bool = False,
) -> tuple[list[Atom], list[MaybeZero]]:
    """Emit the forward and backward sweeps of ``graph`` into the active builder.

    Returns the primal outputs and one cotangent (or Zero) per graph input; ``wants[i]`` marks the inputs to
    differentiate with respect to. ``consume``: the caller discards ``graph`` afterwards, so the forward sweep
    may move its equations into the new graph, output variables and all, instead of copying them: an equation
    reading its own operands goes in as it is, one reading operands of its own types (a graph input's primal) as
    a copy with its own outputs, so the equations reading those need no copy either.
    """
    # Keyed by the graph's atoms themselves (they hash by identity); a literal is never in ``env`` or ``active``.
    env: dict[Atom, Atom] = dict(zip(graph.inputs, primals, strict=True))
    floats = dtypes.INEXACT  # ``has_tangent``, inlined below
    active: set[Atom] = {
        var for var, want in zip(graph.inputs, wants, strict=True) if want and var.aval.dtype in floats
    }

    builder = current() if graph.eqns else Builder()  # with no equations nothing is emitted here
    tape: list[_Active] = []
    emitted = builder.eqns
    env_get = env.get
    is_active_atom = active.__contains__
    saved = builder.loc  # as ``located(eqn.loc)`` per equation, without a context manager or a try each
    try:
        for eqn in graph.eqns:
            # Operands and activity: a literal reads as itself and is inactive. One or two operands (most equations)
            # are read one by one, others with C-level maps.
            inputs = eqn.inputs
            if len(inputs) == 2:
                x, y = inputs
                a, b = env_get(x, x), env_get(y, y)
                ins = [a, b]
                own = a is x and b is y  # the equation's own operands
                in_active = [x in active, y in active]
            elif len(inputs) == 1:
                x = inputs[0]
                a = env_get(x, x)
                ins = [a]
                own = a is x
                in_active = [x in active]
            else:
                ins = list(map(env_get, inputs, inputs))
                own = all(map(is_, ins, inputs))
                in_active = list(map(is_active_atom, inputs))
            prim = eqn.primitive
            is_active = prim.differentiable and True in in_active
            backward: Backward | None = None
            forward = prim.vjp_forward if is_active else None
            outs: Sequence[Atom]
            if forward is not None:
                builder.loc = eqn.loc if eqn.loc is not None else saved
                out_seq, backward = forward(ins, in_active, **eqn.params)
                outs = list(out_seq)
            elif consume and eqn.loc is not None and (own or same_types(ins, inputs)):
                # What ``rebind`` would emit (same operand types: same output types; the equation's location),
                # with the equation's own output variables.
                emitted.append(eqn if own else Equation(prim, tuple(ins), eqn.outputs, eqn.params, eqn.loc))
                outs = eqn.outputs
            else:
                builder.loc = eqn.loc if eqn.loc is not None else saved
                out = rebind(eqn, ins)
                outs = list(out) if prim.multiple_results else [out]
            outputs = eqn.outputs
            if len(outputs) == 1 and len(outs) == 1:
                var = outputs[0]
                env[var] = outs[0]
                if is_active:
                    if var.aval.dtype in floats:  # has_tangent, inlined
                        active.add(var)
                    tape.append((eqn, ins, outs, in_active, backward))
                continue
            for var, value in zip(outputs, outs, strict=True):
                env[var] = value
                if is_active and var.aval.dtype in floats:
                    active.add(var)
            if is_active:
                tape.append((eqn, ins, outs, in_active, backward))
    finally:
        builder.loc = saved

    cts: dict[Atom, MaybeZero] = {}

    def accumulate(var: Atom, ct: MaybeZero) -> None:
        """Add a dense cotangent of ``var`` (already of ``var``'s type) to what it has."""
        if var in active:
            previous = cts.get(var)
            cts[var] = ct if previous is None else E.add_tangents(previous, ct)

    for atom, ct in zip(graph.outputs, cts_out, strict=True):
        if not isinstance(ct, Zero) and isinstance(atom, Var):
            accumulate(atom, ct if ct.aval is atom.aval else conform("cotangent", ct, atom.aval))
    for eqn, ins, outs, wants_ct, backward in reversed(tape):
        # ``cts`` holds dense cotangents only: a missing entry is a Zero.
        if len(eqn.outputs) == 1:
            dense = cts.pop(eqn.outputs[0], None)
            if dense is None:
                continue
            out_cts = [dense]
        else:
            out_cts = [_pop(cts, v) for v in eqn.outputs]
            if all(isinstance(c, Zero) for c in out_cts):
                continue
        builder.loc = eqn.loc if eqn.loc is not None else saved
        try:
            if backward is not None:
                result = backward(out_cts, wants_ct)
            else:
                rule = eqn.primitive.vjp
                if rule is None:
                    raise NotImplementedError(f"primitive {eqn.primitive.name} has no VJP rule (at {eqn.loc})")
                result = rule(out_cts, ins, outs, wants_ct, **eqn.params)
            for atom, in_ct, is_in_active in zip(eqn.inputs, result, wants_ct, strict=True):
                # Inactive inputs (literals, constants) take no cotangent; a rule's result is still checked.
                if in_ct is not None and not isinstance(in_ct, Zero):
                    aval = atom.aval  # conform's own check first, without its call and message when types agree
                    if in_ct.aval is not aval and in_ct.aval._key != aval._key:  # ``!=`` without its Python call
                        in_ct = conform(f"{eqn.primitive.name} VJP rule", in_ct, aval)
                    if is_in_active:  # ``accumulate``, inlined: an input active when read is in ``active``
                        previous = cts.get(atom)
                        cts[atom] = in_ct if previous is None else E.add_tangents(previous, in_ct)
        finally:
            builder.loc = saved
    pop = cts.pop
    in_cts = [Zero(v.aval) if (found := pop(v, None)) is None else found for v in graph.inputs]  # ``_pop``, inlined
    return [env.get(a, a) for a in graph.outputs], in_cts


def _pop(cts: dict[Atom, MaybeZero], var: Var) -> MaybeZero:
    found = cts.pop(var, None)
    return Zero(var.aval) if found is None else found


def vjp_graph(graph: Graph, wants: Sequence[bool], ct_mask: Sequence[bool] | None = None) -> Graph:
    """``(primals..., cotangents of the masked outputs...) -> (outputs..., cotangents of the wanted inputs...)``.

    Outputs outside ``ct_mask`` (e.g. auxiliary values) receive no cotangent. Cotangents of wanted inputs that
    turn out to be zero are materialized, since they are results.
    """
    mask = list(ct_mask) if ct_mask is not None else [True] * len(graph.outputs)
    with building() as builder:
        primals = [Var(v.aval) for v in graph.inputs]
        ct_ins = [Var(a.aval) for a, m in zip(graph.outputs, mask) if m]
        it = iter(ct_ins)
        cts_out: list[MaybeZero] = [next(it) if m else Zero(a.aval) for a, m in zip(graph.outputs, mask)]
        outs, in_cts = vjp_emit(graph, primals, cts_out, wants)
        results = [S.instantiate(ct) for ct, w in zip(in_cts, wants) if w]
    return dce(builder.graph([*primals, *ct_ins], [*outs, *results]))


def vjp_inline(
    graph: Graph, primals: Sequence[Atom], cts_out: Sequence[MaybeZero], wants: Sequence[bool], consume: bool = False
) -> tuple[list[Atom], list[Atom]]:
    """What ``inline(vjp_graph(graph, wants, mask), [*primals, *cotangents])`` emits into the active builder,
    without building and copying the intermediate graph: the outputs, and the cotangents of the wanted inputs
    (zeros materialized). Forward work the results do not need is left to the enclosing graph's DCE, which
    every staged function gets (``trace_flat``). ``consume``: as ``vjp_emit``'s."""
    outs, in_cts = vjp_emit(graph, primals, cts_out, wants, consume)
    return outs, [S.instantiate(ct) if isinstance(ct, Zero) else ct for ct, w in zip(in_cts, wants) if w]
