"""StableHLO for cond (``stablehlo.if`` / ``stablehlo.case``), while and scan (both ``stablehlo.while``).

Branch regions of ``if``/``case`` read the operands from the enclosing scope. ``while`` regions only see their
block arguments, so loop-invariant values travel through the loop state unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from ...staging import dtypes
from ...staging.ir import Aval, Graph
from ...staging.primitives import control_flow as CF
from ..emit import Emitter, Value, i64_array, lowers
from .elementwise import compare

I32 = dtypes.DEFAULT_INT
_SCALAR_I32 = Aval((), I32)


def _branch(em: Emitter, graph: Graph, operands: Sequence[Value]) -> str:
    return em.region([], lambda r, _: r.graph_body(graph, operands))


@lowers(CF.cond_p)
def _cond(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, branches: tuple[Graph, ...]) -> list[Value]:
    index, *operands = args
    if index.aval.dtype == dtypes.BOOL:  # branches are (false, true); stablehlo.if takes (true, false)
        regions = [_branch(em, branches[1], operands), _branch(em, branches[0], operands)]
        return em.op("stablehlo.if", [index], outs, regions=regions)
    regions = [_branch(em, b, operands) for b in branches]
    return em.op("stablehlo.case", [index], outs, regions=regions)


@lowers(CF.while_p)
def _while(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, cond_graph: Graph, body_graph: Graph,
    cond_nconsts: int, body_nconsts: int,
) -> list[Value]:
    n_consts = cond_nconsts + body_nconsts
    state = [a.aval for a in args]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return r.graph_body(cond_graph, [*vals[:cond_nconsts], *vals[n_consts:]])

    def body(r: Emitter, vals: list[Value]) -> list[Value]:
        new = r.graph_body(body_graph, vals[cond_nconsts:])
        return [*vals[:n_consts], *new]

    results = em.op("stablehlo.while", args, state, regions=[em.region(state, cond), em.region(state, body)])
    return results[n_consts:]


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
    init = [em.scalar(0, I32), *args, *buffers]
    state = [v.aval for v in init]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return [compare(r, vals[0], r.scalar(length, I32), "LT")]

    def step(r: Emitter, vals: list[Value]) -> list[Value]:
        i, rest = vals[0], vals[1:]
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
        return [i_next, *consts, *new[:num_carry], *xs, *ys_new]

    results = em.op("stablehlo.while", init, state, regions=[em.region(state, cond), em.region(state, step)])
    final = results[1:]
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

