"""StableHLO for cond (``stablehlo.if`` / ``stablehlo.case``), while and scan (both ``stablehlo.while``).

Branch regions of ``if``/``case`` read the operands from the enclosing scope. ``while`` regions only see their
block arguments, so loop-invariant values travel through the loop state unchanged. Where a body or branch holds
ordered effects, the ordering token travels with them (a loop state, a branch result): the effects inside come
after the ones before the op and before the ones after it, step by step.
"""

from __future__ import annotations

from collections.abc import Sequence
from ...staging import dtypes
from ...staging.ir import Aval, Graph
from ...staging.primitives import callback as C
from ...staging.primitives import control_flow as CF
from ..emit import TOKEN, Emitter, Value, i64_array, lowers
from .elementwise import compare

I32 = dtypes.DEFAULT_INT
_SCALAR_I32 = Aval((), I32)


def _branch(em: Emitter, graph: Graph, operands: Sequence[Value], token: Value | None) -> str:
    """A branch region reading ``operands`` (and ``token``, when a branch holds ordered effects: the region then
    returns the token its last ordered effect produced after its results)."""

    def body(r: Emitter, _: list[Value]) -> list[Value]:
        r.token = token
        results = r.graph_body(graph, operands)
        return results if token is None else [*results, r.ordering_token()]

    return em.region([], body)


def _threaded_token(em: Emitter, *graphs: Graph) -> Value | None:
    """The ordering token to thread through a control-flow op whose nested ``graphs`` hold ordered effects."""
    return em.ordering_token() if any(C.has_ordered_effects(g) for g in graphs) else None


@lowers(CF.cond_p)
def _cond(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, branches: tuple[Graph, ...]) -> list[Value]:
    index, *operands = args
    token = _threaded_token(em, *branches)
    if index.aval.dtype == dtypes.BOOL:  # branches are (false, true); stablehlo.if takes (true, false)
        name, ordered_branches = "stablehlo.if", [branches[1], branches[0]]
    else:
        name, ordered_branches = "stablehlo.case", list(branches)
    regions = [_branch(em, b, operands, token) for b in ordered_branches]
    if token is None:
        return em.op(name, [index], outs, regions=regions)
    *results, em.token = em.op(name, [index], [*outs, TOKEN], regions=regions)
    return results


@lowers(CF.while_p)
def _while(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, cond_graph: Graph, body_graph: Graph,
    cond_nconsts: int, body_nconsts: int,
) -> list[Value]:
    """The loop state is (cond consts, body consts, carry) and, when the body holds ordered effects, the token."""
    if C.has_ordered_effects(cond_graph):
        raise NotImplementedError(
            "while_loop: an ordered callback in cond_fun is not supported (move it into body_fun)"
            + (f"\n  at {em.source}" if em.source is not None else "")
        )
    n_consts = cond_nconsts + body_nconsts
    n_state = len(args)
    token = _threaded_token(em, body_graph)
    init = list(args) if token is None else [*args, token]
    state = [a.aval for a in init]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return r.graph_body(cond_graph, [*vals[:cond_nconsts], *vals[n_consts:n_state]])

    def body(r: Emitter, vals: list[Value]) -> list[Value]:
        r.token = None if token is None else vals[n_state]
        new = r.graph_body(body_graph, vals[cond_nconsts:n_state])
        return [*vals[:n_consts], *new, *([] if token is None else [r.ordering_token()])]

    results = em.op("stablehlo.while", init, state, regions=[em.region(state, cond), em.region(state, body)])
    if token is not None:
        em.token = results[n_state]
    return results[n_consts:n_state]


@lowers(CF.scan_p)
def _scan(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, body: Graph, num_consts: int, num_carry: int,
    length: int, reverse: bool, xs_axes: tuple[int, ...], ys_axes: tuple[int, ...],
) -> list[Value]:
    """A while over (step, consts, carry, xs, ys buffers): slice x_t, run the body, write y_t in place."""
    n_xs = len(args) - num_consts - num_carry
    ys_avals = list(outs[num_carry:])
    no_dims = f"broadcast_dimensions = {i64_array([])}"
    buffers = [em.op("stablehlo.broadcast_in_dim", [em.scalar(0, y.dtype)], [y], no_dims)[0] for y in ys_avals]
    if length == 0:  # no step runs (and a zero-length operand cannot even be sliced)
        return [*args[num_consts : num_consts + num_carry], *buffers]
    token = _threaded_token(em, body)
    init = [em.scalar(0, I32), *args, *buffers, *([] if token is None else [token])]
    n_state = 1 + len(args) + len(buffers)  # the state before the token
    state = [v.aval for v in init]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return [compare(r, vals[0], r.scalar(length, I32), "LT")]

    def step(r: Emitter, vals: list[Value]) -> list[Value]:
        r.token = None if token is None else vals[n_state]
        i, rest = vals[0], vals[1:n_state]
        consts, carry = rest[:num_consts], rest[num_consts : num_consts + num_carry]
        xs = rest[num_consts + num_carry : num_consts + num_carry + n_xs]
        ys = rest[num_consts + num_carry + n_xs :]
        t = i
        if reverse:
            t = r.op("stablehlo.subtract", [r.scalar(length - 1, I32), i], [_SCALAR_I32])[0]
        x_t = [_index(r, x, t, a) for x, a in zip(xs, xs_axes)]
        new = r.graph_body(body, [*consts, *carry, *x_t])
        ys_new = [_update(r, buf, y, t, a) for buf, y, a in zip(ys, new[num_carry:], ys_axes)]
        i_next = r.op("stablehlo.add", [i, r.scalar(1, I32)], [_SCALAR_I32])[0]
        return [i_next, *consts, *new[:num_carry], *xs, *ys_new, *([] if token is None else [r.ordering_token()])]

    results = em.op("stablehlo.while", init, state, regions=[em.region(state, cond), em.region(state, step)])
    if token is not None:
        em.token = results[n_state]
    final = results[1:n_state]
    return [*final[num_consts : num_consts + num_carry], *final[num_consts + num_carry + n_xs :]]


def _index(em: Emitter, x: Value, t: Value, axis: int) -> Value:
    """``x[t]`` along ``axis``."""
    shape = x.aval.shape
    starts = [t if a == axis else em.scalar(0, I32) for a in range(len(shape))]
    piece = Aval(tuple(1 if a == axis else n for a, n in enumerate(shape)), x.aval.dtype)
    sliced = em.op("stablehlo.dynamic_slice", [x, *starts], [piece], f"slice_sizes = {i64_array(piece.shape)}")[0]
    rest = Aval(tuple(n for a, n in enumerate(shape) if a != axis), x.aval.dtype)
    return em.op("stablehlo.reshape", [sliced], [rest])[0]


def _update(em: Emitter, buf: Value, y: Value, t: Value, axis: int) -> Value:
    """``buf`` with ``y`` written at index ``t`` of ``axis``."""
    shape = y.aval.shape
    piece = em.op("stablehlo.reshape", [y], [Aval((*shape[:axis], 1, *shape[axis:]), y.aval.dtype)])[0]
    starts = [t if a == axis else em.scalar(0, I32) for a in range(buf.aval.ndim)]
    return em.op("stablehlo.dynamic_update_slice", [buf, piece, *starts], [buf.aval])[0]

