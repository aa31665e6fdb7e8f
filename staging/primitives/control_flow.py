"""Structured control flow: ``cond``, ``while`` and ``scan``, primitives that carry their subgraphs as params.

- ``cond(index, *operands; branches)`` runs ``branches[index]`` on the operands. A bool index picks between
  exactly two branches ``(false_branch, true_branch)``; an i32 index between any number (out-of-range indices
  run the last branch, as StableHLO's ``case``).
- ``while(*cond_consts, *body_consts, *carry; cond_graph, body_graph, ...)`` repeats ``body_graph`` while
  ``cond_graph`` says so. Its trip count is only known at run time, so it has a JVP but no VJP.
- ``scan(*consts, *carry, *xs; body, length, reverse, xs_axes, ys_axes, ...)`` runs ``body(consts, carry,
  x_t) -> (carry, y_t)`` over axis ``xs_axes[i]`` of each x (the leading one as users write it; batching
  scans an inner axis so that the batch axis stays in front without a transpose) and stacks each ``y_t``
  along ``ys_axes[j]``. Static trip count, so it is reverse-differentiable: a forward scan saves per-step
  residuals as stacked outputs and a reverse scan applies the body's VJP.

Subgraphs are closed (values from outside are explicit consts). Transforms of subgraphs reuse the graph-level
walkers of ``staging.transforms``, imported inside the rules because those modules import the primitives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..builder import bind, building, current_loc, inline
from ..dce import dce
from ..errors import DTypeError, ShapeError, TransformError
from ..ir import Atom, Aval, DimName, Equation, Graph, Var, literal
from ..primitive import Primitive, equation_has_effects
from ..shapes import describe
from ..zeros import MaybeZero, Zero, has_tangent
from . import check as K
from . import elementwise as E
from . import reductions as R
from . import structural as S
from .subgraph_edits import (
    Replacing, active_outputs, batch_size_and_name, bind_control, broadcast_pred, carry_fixpoint, check_inputs,
    def_nested_axis_rules,
    join_types, nonzero, permute_inputs, select_outputs, split, split_joint, to_front,
    with_unused_inputs,
)

I32 = dtypes.DEFAULT_INT

# ------------------------------------------------------------------------------------------------- cond

cond_p = Primitive("cond", multiple_results=True)


@cond_p.def_shape
def _cond_shape(index: Aval, *operands: Aval, branches: tuple[Graph, ...]) -> tuple[Aval, ...]:
    if index.ndim != 0 or (index.dtype != dtypes.BOOL and index.dtype != I32):
        raise DTypeError(f"the branch index must be a bool or i32 scalar, got {index}", "cond")
    if not branches or (index.dtype == dtypes.BOOL and len(branches) != 2):
        raise ShapeError(f"a bool predicate selects between 2 branches, got {len(branches)}", "cond")
    out = branches[0].out_avals
    for i, branch in enumerate(branches):
        check_inputs("cond", f"branch {i}", branch, operands)
        out = join_types("cond", "branches return different types", out, branch.out_avals)
    return out


def cond(
    index: Atom, operands: Sequence[Atom], branches: Sequence[Graph], replacing: Replacing | None = None
) -> list[Atom]:
    return bind_control(cond_p, [index, *operands], {"branches": tuple(branches)}, replacing)


@cond_p.def_jvp
def _cond_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, branches: tuple[Graph, ...]
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_graph

    index, *operands = primals
    wants = nonzero(tangents[1:], operands)
    jvps = [jvp_graph(b, wants, instantiate=True) for b in branches]
    n_out = len(outs)
    # A tangent is an output of the new cond when any branch makes it nonzero; the others materialize zeros.
    live = [any(nz[i] for _, nz in jvps) for i in range(n_out)]
    if not any(live):
        return [Zero(o.aval) for o in outs]
    keep = [*range(n_out), *(n_out + i for i in range(n_out) if live[i])]
    graphs = [select_outputs(g, keep) for g, _ in jvps]
    dense = [t for t, w in zip(tangents[1:], wants) if w]
    fused = cond(index, [*operands, *dense], graphs, Replacing(outs, range(n_out)))  # type: ignore[list-item]
    results = iter(fused[n_out:])
    return [next(results) if live[i] else Zero(o.aval) for i, o in enumerate(outs)]


@cond_p.def_vjp
def _cond_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *,
    branches: tuple[Graph, ...],
) -> list[MaybeZero | None]:
    """Cond of the branches' VJPs: the chosen branch recomputes its forward pass, then runs backward."""
    from ..transforms.vjp import vjp_graph

    index, *operands = primals
    op_wants = [w and has_tangent(p.aval) for w, p in zip(wants[1:], operands)]
    ct_mask = [not isinstance(c, Zero) for c in cts]
    if not any(op_wants) or not any(ct_mask):
        return [None, *(Zero(p.aval) for p in operands)]
    n_out = len(outs)
    n_wanted = sum(op_wants)
    graphs = [select_outputs(vjp_graph(b, op_wants, ct_mask), range(n_out, n_out + n_wanted)) for b in branches]
    dense_cts = [c for c in cts if not isinstance(c, Zero)]
    results = iter(cond(index, [*operands, *dense_cts], graphs))
    return [None, *(next(results) if w else Zero(p.aval) for w, p in zip(op_wants, operands))]


def _cond_forward(
    ins: Sequence[Atom], active: Sequence[bool], *, branches: tuple[Graph, ...]
) -> tuple[list[Atom], Any]:
    """Forward rule for reverse mode: the forward cond also returns what the chosen branch's backward pass
    reads (each branch fills the other branches' residual slots with zeros), so no branch runs twice."""
    from ..transforms.vjp import vjp_graph

    index, *operands = ins
    n_in, n_out = len(operands), len(branches[0].outputs)
    op_wants = [a and has_tangent(p.aval) for a, p in zip(active[1:], operands)]
    ct_mask = [has_tangent(a) for a in branches[0].out_avals]
    splits = []
    for branch in branches:
        joint = vjp_graph(branch, op_wants, ct_mask)
        fwd, bwd, residuals = split_joint(joint, n_in, n_out)
        inputs = {id(v): i for i, v in enumerate(joint.inputs[:n_in])}
        saved = [r for r in residuals if id(r) not in inputs]  # operands reach the backward cond directly
        splits.append((joint, fwd, bwd, saved))
    slots = [r.aval for *_, saved in splits for r in saved]
    fwd_graphs, bwd_graphs, start = [], [], 0
    for joint, fwd, bwd, saved in splits:
        mine = range(start, start + len(saved))
        start += len(saved)
        with building() as b:
            outs = [*joint.outputs[:n_out], *saved]
            fill = iter(outs[n_out:])
            filled = [next(fill) if i in mine else S.zeros(a) for i, a in enumerate(slots)]
        fwd_graphs.append(dce(Graph(joint.inputs[:n_in], [*fwd, *b.eqns], [*outs[:n_out], *filled])))
        own = dict(zip(mine, saved))
        slot_vars = [own[i] if i in own else Var(a) for i, a in enumerate(slots)]
        bwd_graphs.append(Graph([*joint.inputs[:n_in], *slot_vars, *joint.inputs[n_in:]], bwd, joint.outputs[n_out:]))
    results = cond(index, operands, fwd_graphs)
    outs, saved_values = results[:n_out], results[n_out:]

    def backward(cts: Sequence[MaybeZero], wants: Sequence[bool]) -> list[MaybeZero | None]:
        dense = [S.instantiate(c) for c, m in zip(cts, ct_mask) if m]
        grads = iter(cond(index, [*operands, *saved_values, *dense], bwd_graphs))
        return [None, *(next(grads) if w else Zero(p.aval) for w, p in zip(op_wants, operands))]

    return outs, backward


@cond_p.def_batch
def _cond_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, branches: tuple[Graph, ...]
) -> tuple[list[Atom], list[int | None]]:
    from ..transforms.batching import batch_emit, batch_graph

    index, *operands = args
    index_dim, *op_dims = dims
    size, name = batch_size_and_name(args, dims, walked_size)
    if index_dim is None:
        # One branch for the whole batch: cond of the batched branches, outputs batched at 0 where any is.
        firsts = [batch_graph(b, op_dims, size, name)[1] for b in branches]
        out_dims: list[int | None] = [0 if any(d is not None for d in ds) else None for ds in zip(*firsts)]
        graphs = [batch_graph(b, op_dims, size, name, out_dims)[0] for b in branches]
        return cond(index, operands, graphs), out_dims
    # Each example picks its own branch: run every branch on the whole batch and select per example.
    index = S.moveaxis(index, index_dim, 0)
    per_branch: list[list[Atom]] = []
    for i, branch in enumerate(branches):
        if K.holds_check(branch):  # a member's checks hold in the branches it does not take
            taken = _takes_branch(index, i, len(branches))
            outs, out_d = batch_emit(K.guarded(branch), [taken, *operands], [0, *op_dims], size)
        else:
            outs, out_d = batch_emit(branch, operands, op_dims, size)
        per_branch.append([to_front(o, d, True, size, name) for o, d in zip(outs, out_d)])
    results = []
    for j in range(len(per_branch[0])):
        if index.aval.dtype == dtypes.BOOL:
            chosen = E.select(broadcast_pred(index, per_branch[1][j]), per_branch[1][j], per_branch[0][j])
        else:
            chosen = per_branch[-1][j]
            for i in reversed(range(len(branches) - 1)):
                hit = E.eq(index, literal(i, index.aval.dtype))
                chosen = E.select(broadcast_pred(hit, chosen), per_branch[i][j], chosen)
        results.append(chosen)
    return results, [0] * len(results)


def _takes_branch(index: Atom, i: int, count: int) -> Atom:
    """Per member, whether batched ``index`` picks branch ``i`` of ``count`` (out-of-range: the last one)."""
    dtype = index.aval.dtype
    if dtype == dtypes.BOOL:
        return index if i == 1 else bind(E.not_p, index)
    if i < count - 1:
        return E.eq(index, literal(i, dtype))
    beyond = bind(E.ge_p, index, literal(count - 1, dtype))
    return bind(E.or_p, E.lt(index, literal(0, dtype)), beyond)  # type: ignore[no-any-return]


def_nested_axis_rules(cond_p, "branches")


def _cond_guard(eqn: Equation, active: Atom) -> Equation:
    """``active`` becomes every branch's first operand."""
    index, *operands = eqn.inputs
    branches = tuple(K.guarded(b) for b in eqn.params["branches"])
    return Equation(cond_p, (index, active, *operands), eqn.outputs, dict(eqn.params, branches=branches), eqn.loc)


K.GUARD_RULES[cond_p] = _cond_guard


# ------------------------------------------------------------------------------------------------ while

while_p = Primitive("while", multiple_results=True)


@while_p.def_shape
def _while_shape(
    *args: Aval, cond_graph: Graph, body_graph: Graph, cond_nconsts: int, body_nconsts: int
) -> tuple[Aval, ...]:
    cond_consts, body_consts, carry = split(args, cond_nconsts, body_nconsts)
    check_inputs("while", "the condition", cond_graph, [*cond_consts, *carry])
    check_inputs("while", "the body", body_graph, [*body_consts, *carry])
    pred = cond_graph.out_avals
    if len(pred) != 1 or pred[0].ndim != 0 or pred[0].dtype != dtypes.BOOL:
        raise DTypeError(f"the condition must return one bool scalar, got ({describe(pred)})", "while")
    join_types("while", "the body changes the carry type", carry, body_graph.out_avals)
    return tuple(carry)


def while_loop(
    cond_consts: Sequence[Atom], body_consts: Sequence[Atom], carry: Sequence[Atom], cond_graph: Graph,
    body_graph: Graph, replacing: Replacing | None = None,
) -> list[Atom]:
    params = {
        "cond_graph": cond_graph, "body_graph": body_graph, "cond_nconsts": len(cond_consts),
        "body_nconsts": len(body_consts),
    }
    return bind_control(while_p, [*cond_consts, *body_consts, *carry], params, replacing)


@while_p.def_jvp
def _while_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, cond_graph: Graph,
    body_graph: Graph, cond_nconsts: int, body_nconsts: int,
) -> list[MaybeZero]:
    """Carry the tangents through the loop: a new while over (carry, nonzero carry tangents)."""
    from ..transforms.jvp import jvp_graph

    cond_consts, body_consts, carry = split(primals, cond_nconsts, body_nconsts)
    _, t_body_consts, t_carry = split(tangents, cond_nconsts, body_nconsts)
    const_nz = nonzero(t_body_consts, body_consts)
    carry_nz = carry_fixpoint(
        nonzero(t_carry, carry), lambda nz: jvp_graph(body_graph, const_nz + nz, instantiate=False)[1]
    )
    if not any(carry_nz):
        return [Zero(o.aval) for o in outs]
    n_bc, n_c = len(body_consts), len(carry)
    n_tc = sum(const_nz)
    body_jvp, _ = jvp_graph(body_graph, const_nz + carry_nz, instantiate=True)
    # Inputs (consts, carry, const tangents, carry tangents) -> (consts, const tangents, carry, carry tangents).
    order = [*range(n_bc), *range(n_bc + n_c, n_bc + n_c + n_tc), *range(n_bc, n_bc + n_c),
             *range(n_bc + n_c + n_tc, len(body_jvp.inputs))]
    keep = [*range(n_c), *(n_c + i for i in range(n_c) if carry_nz[i])]
    new_body = select_outputs(permute_inputs(body_jvp, order), keep)
    tangent_avals = [c.aval for c, nz in zip(carry, carry_nz) if nz]
    new_cond = with_unused_inputs(cond_graph, tangent_avals, len(cond_graph.inputs))
    init_t = [S.instantiate(t) for t, nz in zip(t_carry, carry_nz) if nz]
    dense_consts = [t for t, nz in zip(t_body_consts, const_nz) if nz]
    results = while_loop(
        cond_consts, [*body_consts, *dense_consts], [*carry, *init_t], new_cond, new_body, Replacing(outs, range(n_c))
    )
    out_t = iter(results[n_c:])
    return [next(out_t) if nz else Zero(o.aval) for o, nz in zip(outs, carry_nz)]


@while_p.def_vjp
def _while_vjp(cts: Any, primals: Any, outs: Any, wants: Any, **params: Any) -> Any:
    raise TransformError(
        "reverse-mode differentiation of a while_loop is not supported: its trip count is only known at run "
        "time, so the values the backward pass needs cannot be saved. Use ts.fori_loop with static (Python or "
        "NumPy int) bounds or ts.scan, which are reverse-differentiable; forward mode (ts.jvp, ts.jacfwd) works on "
        "while_loop",
        "while_loop",
        current_loc(),
    )


@while_p.def_batch
def _while_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, cond_graph: Graph,
    body_graph: Graph, cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Atom], list[int | None]]:
    from ..transforms.batching import batch_emit, batch_graph

    size, name = batch_size_and_name(args, dims, walked_size)
    cond_consts, body_consts, carry = split(args, cond_nconsts, body_nconsts)
    cc_dims, bc_dims, carry_dims = split(dims, cond_nconsts, body_nconsts)

    def at_front(flags: Sequence[bool]) -> list[int | None]:
        return [0 if f else None for f in flags]

    def body_batched(flags: list[bool]) -> list[bool]:
        return [d is not None for d in batch_graph(body_graph, bc_dims + at_front(flags), size, name)[1]]

    batched = carry_fixpoint([d is not None for d in carry_dims], body_batched)
    pred_dim = batch_graph(cond_graph, cc_dims + at_front(batched), size, name)[1][0]
    if pred_dim is not None:
        batched = [True] * len(carry)  # examples finish at different steps: every carry is held by a select
    carry = [to_front(c, d, b, size, name) for c, d, b in zip(carry, carry_dims, batched)]
    carry_in = at_front(batched)
    if pred_dim is None:
        new_cond = batch_graph(cond_graph, cc_dims + carry_in, size, name, [None])[0]
        new_body = batch_graph(body_graph, bc_dims + carry_in, size, name, carry_in)[0]
        return while_loop(cond_consts, body_consts, carry, new_cond, new_body), carry_in
    # Batched predicate: loop while any example is still running; finished examples keep their carry.
    cond_avals = [a.aval for a in cond_consts]
    body_avals = [a.aval for a in body_consts]
    carry_avals = [a.aval for a in carry]
    with building() as b:
        cc_vars, carry_vars = [Var(a) for a in cond_avals], [Var(a) for a in carry_avals]
        (pred,), (d,) = batch_emit(cond_graph, [*cc_vars, *carry_vars], cc_dims + carry_in, size)
        any_running = R.reduce_max(S.moveaxis(pred, d, 0) if d is not None else pred, (0,))
    any_cond = Graph([*cc_vars, *carry_vars], b.eqns, [any_running])
    with building() as b:
        cc_vars, bc_vars = [Var(a) for a in cond_avals], [Var(a) for a in body_avals]
        carry_vars = [Var(a) for a in carry_avals]
        (pred,), (d,) = batch_emit(cond_graph, [*cc_vars, *carry_vars], cc_dims + carry_in, size)
        pred = to_front(pred, d, True, size, name)
        if K.holds_check(body_graph):  # finished examples run the body too: their checks must hold
            body_in, body_dims = [pred, *bc_vars, *carry_vars], [0, *bc_dims, *carry_in]
            new, new_dims = batch_emit(K.guarded(body_graph), body_in, body_dims, size)
        else:
            new, new_dims = batch_emit(body_graph, [*bc_vars, *carry_vars], bc_dims + carry_in, size)
        held = [
            E.select(broadcast_pred(pred, old), to_front(n, nd, True, size, name), old)
            for n, nd, old in zip(new, new_dims, carry_vars)
        ]
    masked_body = Graph([*cc_vars, *bc_vars, *carry_vars], b.eqns, held)
    results = while_loop(cond_consts, [*cond_consts, *body_consts], carry, any_cond, masked_body)
    return results, carry_in


def_nested_axis_rules(while_p, "cond_graph", "body_graph")


def _while_guard(eqn: Equation, active: Atom) -> Equation:
    """``active`` becomes the first constant of the condition and of the body."""
    p = eqn.params
    cond_consts, body_consts, carry = split(eqn.inputs, p["cond_nconsts"], p["body_nconsts"])
    params = dict(
        p, cond_graph=K.guarded(p["cond_graph"]), body_graph=K.guarded(p["body_graph"]),
        cond_nconsts=p["cond_nconsts"] + 1, body_nconsts=p["body_nconsts"] + 1,
    )
    inputs = (active, *cond_consts, active, *body_consts, *carry)
    return Equation(while_p, inputs, eqn.outputs, params, eqn.loc)


K.GUARD_RULES[while_p] = _while_guard


# ------------------------------------------------------------------------------------------------- scan

scan_p = Primitive("scan", multiple_results=True)


def stacked(aval: Aval, length: int, name: DimName, axis: int = 0) -> Aval:
    """The type of per-step values of ``aval`` stacked along ``axis``."""
    return Aval(
        (*aval.shape[:axis], length, *aval.shape[axis:]), aval.dtype, (*aval.dims[:axis], name, *aval.dims[axis:])
    )


def unstacked(aval: Aval, axis: int = 0) -> Aval:
    """The type of one step of ``aval`` scanned along ``axis``."""
    keep = [a for a in range(aval.ndim) if a != axis]
    return Aval(tuple(aval.shape[a] for a in keep), aval.dtype, tuple(aval.dims[a] for a in keep))


@scan_p.def_shape
def _scan_shape(
    *args: Aval, body: Graph, num_consts: int, num_carry: int, length: int, reverse: bool,
    xs_axes: tuple[int, ...], ys_axes: tuple[int, ...],
) -> tuple[Aval, ...]:
    consts, carry, xs = split(args, num_consts, num_carry)
    outs = body.out_avals
    if len(xs_axes) != len(xs) or len(outs) < num_carry or len(ys_axes) != len(outs) - num_carry:
        raise ShapeError(
            f"{len(xs)} scanned operands with axes {xs_axes} and {len(outs)} body results ({num_carry} carried) "
            f"with stacking axes {ys_axes} do not match", "scan",
        )
    for x, a in zip(xs, xs_axes):
        if not 0 <= a < x.ndim or x.shape[a] != length:
            raise ShapeError(f"every operand in xs needs an axis {a} of length {length}, got {x}", "scan")
    names = {x.dims[a] for x, a in zip(xs, xs_axes) if x.dims[a] is not None}
    if len(names) > 1:
        raise ShapeError(f"the operands in xs disagree on the scanned dim: {describe(xs)}", "scan")
    check_inputs("scan", "the body", body, [*consts, *carry, *(unstacked(x, a) for x, a in zip(xs, xs_axes))])
    join_types("scan", "the body changes the carry type", carry, outs[:num_carry])
    for y, a in zip(outs[num_carry:], ys_axes):
        if not 0 <= a <= y.ndim:
            raise ShapeError(f"cannot stack {y} along axis {a}", "scan")
    name = names.pop() if names else None
    return (*carry, *(stacked(y, length, name, a) for y, a in zip(outs[num_carry:], ys_axes)))


def scan(
    consts: Sequence[Atom], carry: Sequence[Atom], xs: Sequence[Atom], body: Graph, length: int, reverse: bool,
    replacing: Replacing | None = None, xs_axes: Sequence[int] | None = None, ys_axes: Sequence[int] | None = None,
) -> list[Atom]:
    """Bind a scan; scanned and stacked axes default to the leading ones."""
    n_ys = len(body.outputs) - len(carry)
    params = {
        "body": body, "num_consts": len(consts), "num_carry": len(carry), "length": length, "reverse": reverse,
        "xs_axes": tuple(xs_axes) if xs_axes is not None else (0,) * len(xs),
        "ys_axes": tuple(ys_axes) if ys_axes is not None else (0,) * n_ys,
    }
    return bind_control(scan_p, [*consts, *carry, *xs], params, replacing)


@scan_p.def_jvp
def _scan_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, body: Graph, num_consts: int,
    num_carry: int, length: int, reverse: bool, xs_axes: tuple[int, ...], ys_axes: tuple[int, ...],
) -> list[MaybeZero]:
    """A scan over (primal, nonzero tangent) pairs of consts, carry and xs."""
    from ..transforms.jvp import jvp_graph

    consts, carry, xs = split(primals, num_consts, num_carry)
    t_consts, t_carry, t_xs = split(tangents, num_consts, num_carry)
    const_nz, xs_nz = nonzero(t_consts, consts), nonzero(t_xs, xs)
    carry_nz = carry_fixpoint(
        nonzero(t_carry, carry),
        lambda nz: jvp_graph(body, const_nz + nz + xs_nz, instantiate=False)[1][:num_carry],
    )
    wants = const_nz + carry_nz + xs_nz
    body_jvp, out_nz = jvp_graph(body, wants, instantiate=True)
    n_in, n_out, n_c, n_y = len(body.inputs), len(outs), num_carry, len(outs) - num_carry
    tangent_pos = iter(range(n_in, n_in + sum(wants)))
    t_index = [next(tangent_pos) if w else None for w in wants]
    groups = [(0, num_consts), (num_consts, num_consts + n_c), (num_consts + n_c, n_in)]
    order = [j for lo, hi in groups for j in [*range(lo, hi), *(t_index[i] for i in range(lo, hi) if wants[i])]]
    ys_nz = out_nz[n_c:]
    keep = [*range(n_c), *(n_out + i for i in range(n_c) if carry_nz[i]),
            *range(n_c, n_out), *(n_out + n_c + i for i in range(n_y) if ys_nz[i])]
    new_body = select_outputs(permute_inputs(body_jvp, order), keep)

    def dense(ts: Sequence[MaybeZero], mask: Sequence[bool]) -> list[Atom]:
        return [S.instantiate(t) for t, m in zip(ts, mask) if m]

    n_tc = sum(carry_nz)
    primal_at = [*range(n_c), *range(n_c + n_tc, n_c + n_tc + n_y)]
    results = scan(
        [*consts, *dense(t_consts, const_nz)], [*carry, *dense(t_carry, carry_nz)], [*xs, *dense(t_xs, xs_nz)],
        new_body, length, reverse, Replacing(outs, primal_at),
        xs_axes=[*xs_axes, *(a for a, nz in zip(xs_axes, xs_nz) if nz)],
        ys_axes=[*ys_axes, *(a for a, nz in zip(ys_axes, ys_nz) if nz)],
    )
    t_carry_out = iter(results[n_c : n_c + n_tc])
    t_ys_out = iter(results[n_c + n_tc + n_y :])
    return [
        *(next(t_carry_out) if nz else Zero(o.aval) for o, nz in zip(outs[:n_c], carry_nz)),
        *(next(t_ys_out) if nz else Zero(o.aval) for o, nz in zip(outs[n_c:], ys_nz)),
    ]


# Reverse mode. The body's joint VJP graph (primals, output cotangents) -> input cotangents is split into the
# part that needs no cotangent (the forward step, run by a forward scan that also stacks what the backward step
# reads) and the rest (the backward step, run by a reverse scan over those stacked residuals).


class _ScanVJP:
    """The forward and backward step graphs of a scan body, and where each residual comes from."""

    def __init__(
        self, body: Graph, num_consts: int, num_carry: int, active: Sequence[bool], xs_axes: tuple[int, ...],
        ys_axes: tuple[int, ...],
    ) -> None:
        from ..transforms.vjp import vjp_graph

        n_in, n_out = len(body.inputs), len(body.outputs)
        self.num_consts, self.num_carry = num_consts, num_carry
        self.xs_axes, self.ys_axes = xs_axes, ys_axes
        consts_a, carry_a, xs_a = split(list(active), num_consts, num_carry)
        carry_a = carry_fixpoint(
            carry_a, lambda flags: active_outputs(body, consts_a + flags + xs_a)[:num_carry]
        )
        self.wants = [w and has_tangent(v.aval) for w, v in zip(consts_a + carry_a + xs_a, body.inputs)]
        self.carry_active = self.wants[num_consts : num_consts + num_carry]
        # Cotangents flow into every active carry and every float y; the others are never differentiated.
        self.ct_mask = [*self.carry_active, *(has_tangent(a) for a in body.out_avals[num_carry:])]
        joint = vjp_graph(body, self.wants, self.ct_mask)
        primal_ins, ct_ins, bwd_outs = joint.inputs[:n_in], joint.inputs[n_in:], joint.outputs[n_out:]
        fwd_eqns, bwd_eqns, residuals = split_joint(joint, n_in, n_out)
        input_pos = {id(v): i for i, v in enumerate(primal_ins)}
        # Values computed from the consts alone are the same at every step: computed once outside the backward
        # scan rather than stacked per step (a transposed weight, say).
        invariant = {id(v) for v in primal_ins[:num_consts]}
        hoistable = []
        for eqn in fwd_eqns:
            if not equation_has_effects(eqn) and all(not isinstance(a, Var) or id(a) in invariant for a in eqn.inputs):
                invariant.update(id(v) for v in eqn.outputs)
                hoistable.append(eqn)
        # Consts and xs the backward step reads are passed to it directly; everything else is stacked per step.
        self.const_res = [input_pos[id(r)] for r in residuals if input_pos.get(id(r), n_in) < num_consts]
        self.xs_res = [input_pos[id(r)] for r in residuals if input_pos.get(id(r), -1) >= num_consts + num_carry]
        hoisted = [r for r in residuals if id(r) in invariant and id(r) not in input_pos]
        self.hoist = dce(Graph(primal_ins[:num_consts], hoistable, hoisted))
        direct = {id(primal_ins[i]) for i in self.const_res + self.xs_res} | {id(r) for r in hoisted}
        self.stacked_res = [r for r in residuals if id(r) not in direct]
        self.forward = dce(Graph(primal_ins, fwd_eqns, [*joint.outputs[:n_out], *self.stacked_res]))
        loop_consts = [primal_ins[i] for i in self.const_res] + hoisted
        res_vars = loop_consts + self.stacked_res + [primal_ins[i] for i in self.xs_res]
        self.n_loop_consts = len(loop_consts)
        self.backward = Graph([*res_vars, *ct_ins], bwd_eqns, bwd_outs)

    def masked_ys_axes(self) -> list[int]:
        """Stacking axes of the ys that receive a cotangent."""
        return [a for a, m in zip(self.ys_axes, self.ct_mask[self.num_carry :]) if m]

    def backward_scan(
        self, ins: Sequence[Atom], stacked_res: Sequence[Atom], cts: Sequence[MaybeZero], length: int, reverse: bool
    ) -> list[MaybeZero]:
        """Emit the reverse scan; returns one cotangent (or Zero) per scan input."""
        nc, ncar = self.num_consts, self.num_carry
        consts, carry, xs = split(ins, nc, ncar)
        c_wants, carry_wants, x_wants = split(self.wants, nc, ncar)
        ct_carry = [S.instantiate(c) for c, m in zip(cts[:ncar], self.ct_mask[:ncar]) if m]
        ct_ys = [S.instantiate(c) for c, m in zip(cts[ncar:], self.ct_mask[ncar:]) if m]
        zeros = [S.zeros(c.aval) for c, w in zip(consts, c_wants) if w]
        bwd, n_cres = self.backward, self.n_loop_consts
        # Step: (const residuals, const-ct sums, carry cts, stacked and xs residuals, y cts)
        #   -> (sums + this step's const cts, carry cts of the step's input, x cts).
        with building() as b:
            res_c = [Var(v.aval) for v in bwd.inputs[:n_cres]]
            sums = [Var(z.aval) for z in zeros]
            ct_c = [Var(c.aval) for c in ct_carry]
            res_t = [Var(v.aval) for v in bwd.inputs[n_cres : n_cres + len(self.stacked_res) + len(self.xs_res)]]
            ct_y = [Var(unstacked(c.aval, a)) for c, a in zip(ct_ys, self.masked_ys_axes())]
            outs = inline(bwd, [*res_c, *res_t, *ct_c, *ct_y])
            const_cts, carry_cts, x_cts = split(outs, len(zeros), sum(carry_wants))
            summed = [E.add(s, c) for s, c in zip(sums, const_cts)]
        step = Graph([*res_c, *sums, *ct_c, *res_t, *ct_y], b.eqns, [*summed, *carry_cts, *x_cts])
        res_xs = [*stacked_res, *(xs[i - nc - ncar] for i in self.xs_res)]
        loop_consts = [*(consts[i] for i in self.const_res), *inline(self.hoist, consts)]
        res_axes = [*(0 for _ in stacked_res), *(self.xs_axes[i - nc - ncar] for i in self.xs_res)]
        x_ct_axes = [a for a, w in zip(self.xs_axes, x_wants) if w]
        results = scan(
            loop_consts, [*zeros, *ct_carry], [*res_xs, *ct_ys], step, length, not reverse,
            xs_axes=[*res_axes, *self.masked_ys_axes()], ys_axes=x_ct_axes,
        )
        const_out, carry_out, xs_out = split(results, len(zeros), len(ct_carry))
        it_c, it_carry, it_x = iter(const_out), iter(carry_out), iter(xs_out)
        return [
            *(next(it_c) if w else Zero(c.aval) for c, w in zip(consts, c_wants)),
            *(next(it_carry) if w else Zero(c.aval) for c, w in zip(carry, carry_wants)),
            *(next(it_x) if w else Zero(x.aval) for x, w in zip(xs, x_wants)),
        ]


def _scan_forward(
    ins: Sequence[Atom], active: Sequence[bool], *, body: Graph, num_consts: int, num_carry: int, length: int,
    reverse: bool, xs_axes: tuple[int, ...], ys_axes: tuple[int, ...],
) -> tuple[list[Atom], Any]:
    """Forward rule for reverse mode: one scan computes the outputs and stacks the residuals (along axis 0)."""
    plan = _ScanVJP(body, num_consts, num_carry, active, xs_axes, ys_axes)
    consts, carry, xs = split(ins, num_consts, num_carry)
    res_axes = [0] * len(plan.stacked_res)
    results = scan(consts, carry, xs, plan.forward, length, reverse, xs_axes=xs_axes, ys_axes=[*ys_axes, *res_axes])
    n_out = len(body.outputs)
    outs, stacked_res = results[:n_out], results[n_out:]

    def backward(cts: Sequence[MaybeZero], wants: Sequence[bool]) -> list[MaybeZero]:
        return plan.backward_scan(ins, stacked_res, cts, length, reverse)

    return outs, backward


@scan_p.def_vjp
def _scan_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], **params: Any
) -> list[MaybeZero]:
    """Without the forward rule (outputs already emitted): recompute the forward scan for its residuals."""
    _, backward = _scan_forward(primals, wants, **params)
    return backward(cts, wants)  # type: ignore[no-any-return]


scan_p.def_vjp_forward(_scan_forward)
cond_p.def_vjp_forward(_cond_forward)


@scan_p.def_batch
def _scan_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, body: Graph,
    num_consts: int, num_carry: int, length: int,
    reverse: bool, xs_axes: tuple[int, ...], ys_axes: tuple[int, ...],
) -> tuple[list[Atom], list[int | None]]:
    """Batch the body. Carries and per-step ys sit batched at axis 0; a scanned operand keeps its batch axis
    where it is (its scanned axis shifts instead), and ys are stacked behind the batch axis: nothing is
    transposed, and results come out batch-major."""
    from ..transforms.batching import batch_graph

    size, name = batch_size_and_name(args, dims, walked_size)
    consts, carry, xs = split(args, num_consts, num_carry)
    c_dims, carry_dims, x_dims = split(dims, num_consts, num_carry)
    new_xs_axes = [a if d is None or a < d else a + 1 for a, d in zip(xs_axes, x_dims)]
    step_x_dims: list[int | None] = [
        None if d is None else d if d < a else d - 1 for a, d in zip(new_xs_axes, x_dims)
    ]

    def at_front(flags: Sequence[bool]) -> list[int | None]:
        return [0 if f else None for f in flags]

    def body_batched(flags: list[bool]) -> list[bool]:
        out = batch_graph(body, c_dims + at_front(flags) + step_x_dims, size, name)[1]
        return [d is not None for d in out[:num_carry]]

    batched = carry_fixpoint([d is not None for d in carry_dims], body_batched)
    in_dims = c_dims + at_front(batched) + step_x_dims
    ys_batched = [d is not None for d in batch_graph(body, in_dims, size, name)[1][num_carry:]]
    new_body = batch_graph(body, in_dims, size, name, at_front(batched) + at_front(ys_batched))[0]
    carry = [to_front(c, d, b, size, name) for c, d, b in zip(carry, carry_dims, batched)]
    new_ys_axes = [a + 1 if b else a for a, b in zip(ys_axes, ys_batched)]
    results = scan(
        consts, carry, xs, new_body, length, reverse, xs_axes=new_xs_axes, ys_axes=new_ys_axes
    )
    return results, [*at_front(batched), *at_front(ys_batched)]


def_nested_axis_rules(scan_p, "body")


def _scan_guard(eqn: Equation, active: Atom) -> Equation:
    """``active`` becomes the body's first constant."""
    params = dict(eqn.params, body=K.guarded(eqn.params["body"]), num_consts=eqn.params["num_consts"] + 1)
    return Equation(scan_p, (active, *eqn.inputs), eqn.outputs, params, eqn.loc)


K.GUARD_RULES[scan_p] = _scan_guard
