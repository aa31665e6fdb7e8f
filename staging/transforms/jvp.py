"""Forward mode: walk a graph in order, re-emit each equation and apply its primitive's JVP rule.

Tangents are atoms or symbolic ``Zero``s: an equation whose inputs all have zero tangents gets zero tangents
without any rule running, so paths that do not depend on the differentiated inputs cost nothing. Only
floating-point values carry tangents; integer and boolean paths are always ``Zero``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..builder import building, located, rebind
from ..dce import dce
from ..ir import Atom, Equation, Graph, Literal, Var
from ..primitives import structural as S
from ..zeros import MaybeZero, Zero, has_tangent
from .checks import conform


def jvp_emit(
    graph: Graph, primals: Sequence[Atom], tangents: Sequence[MaybeZero]
) -> tuple[list[Atom], list[MaybeZero]]:
    """Emit the primal and tangent computation of ``graph`` into the active builder."""
    env: dict[int, Atom] = {}
    tenv: dict[int, MaybeZero] = {}
    for var, primal, tangent in zip(graph.inputs, primals, tangents, strict=True):
        env[id(var)] = primal
        if not isinstance(tangent, Zero) and has_tangent(var.aval):
            tenv[id(var)] = tangent

    def read(atom: Atom) -> Atom:
        return atom if isinstance(atom, Literal) else env.get(id(atom), atom)

    def read_tangent(atom: Atom) -> MaybeZero:
        found = tenv.get(id(atom)) if isinstance(atom, Var) else None
        return found if found is not None else Zero(atom.aval)

    for eqn in graph.eqns:
        ins = [read(a) for a in eqn.inputs]
        with located(eqn.loc):
            outs = _rebind(eqn, ins)
            ts_in = [read_tangent(a) for a in eqn.inputs]
            if eqn.primitive.differentiable and not all(isinstance(t, Zero) for t in ts_in):
                ts_out = _apply_rule(eqn, ins, ts_in, outs)
            else:
                ts_out = [Zero(v.aval) for v in eqn.outputs]
        for var, out, t in zip(eqn.outputs, outs, ts_out, strict=True):
            env[id(var)] = out
            if not isinstance(t, Zero) and has_tangent(var.aval):
                tenv[id(var)] = t
    return [read(a) for a in graph.outputs], [read_tangent(a) for a in graph.outputs]


def _rebind(eqn: Equation, ins: Sequence[Atom]) -> list[Atom]:
    out = rebind(eqn, ins)  # bind, reusing eqn's output types when its operand types are unchanged
    return list(out) if eqn.primitive.multiple_results else [out]


def _apply_rule(eqn: Equation, ins: Sequence[Atom], ts_in: Sequence[MaybeZero], outs: Sequence[Atom]) -> list[MaybeZero]:
    rule = eqn.primitive.jvp
    if rule is None:
        raise NotImplementedError(f"primitive {eqn.primitive.name} has no JVP rule (at {eqn.loc})")
    result = rule(ins, ts_in, outs, **eqn.params)
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    return [conform(f"{eqn.primitive.name} JVP rule", t, out.aval) for t, out in zip(result, outs, strict=True)]


def jvp_graph(graph: Graph, wants: Sequence[bool], instantiate: bool = True) -> tuple[Graph, list[bool]]:
    """``(primals..., tangents of the wanted inputs...) -> (outputs..., output tangents...)``.

    Returns the graph and, per output, whether its tangent is nonzero. With ``instantiate`` every output
    tangent is a graph output (zeros materialized); without, only the nonzero ones are.
    """
    with building() as builder:
        primals = [Var(v.aval) for v in graph.inputs]
        tangent_ins = [Var(v.aval) for v, w in zip(graph.inputs, wants) if w]
        it = iter(tangent_ins)
        tangents: list[MaybeZero] = [next(it) if w else Zero(v.aval) for v, w in zip(graph.inputs, wants)]
        outs, touts = jvp_emit(graph, primals, tangents)
        nonzero = [not isinstance(t, Zero) for t in touts]
        if instantiate:
            tangent_outs = [S.zeros(t.aval) if isinstance(t, Zero) else t for t in touts]
        else:
            tangent_outs = [t for t in touts if not isinstance(t, Zero)]
    return dce(builder.graph([*primals, *tangent_ins], [*outs, *tangent_outs])), nonzero
