"""Batching (vmap) as a graph → graph transform.

The walker replays a graph's equations in order. Each value carries the axis along which it is batched, or None
when it does not depend on any batched input. An equation whose inputs are all unbatched is copied as is; any
other equation is handed to its primitive's ``batch`` rule, which emits ordinary primitives and says where the
batch axis of each output ended up. An equation whose primitive says it uses the walked axis (``uses_axis``: a
collective over it, or a nested graph holding one) goes to its ``axis_batch`` rule instead, batched operands or
not. The walker knows nothing about particular primitives.

The walked axis has a name when ``vmap(f, axis_name=...)`` gave one; walks that rules start on nested graphs
(cond branches, loop bodies, ...) inherit the name of the walk that called the rule.

Entry points:
- ``batch_emit(graph, args, in_dims, axis_size, axis_name)`` emits the batched equations into the active builder
  (what ``vmap`` uses while staging, so no intermediate graph is built and inlined);
- ``batch_graph(graph, in_dims, axis_size, ...)`` returns a new closed graph (what other transforms use).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ..builder import Builder, building, current, located
from ..errors import TransformError
from ..ir import Atom, Aval, DimName, Equation, Graph, Var
from ..primitive import equation_uses_axis
from ..primitives import structural as S

BatchDim = int | None


class _Inherit(enum.Enum):
    INHERIT = enum.auto()


INHERIT = _Inherit.INHERIT  # batch_emit's default axis name: that of the enclosing walk (None outside any)
_WALKED: list[str | None] = []  # the axis names of the walks in progress, innermost last


def batched_aval(aval: Aval, dim: BatchDim, size: int, name: DimName = None) -> Aval:
    """``aval`` with a batch axis of ``size`` inserted at ``dim`` (unchanged when ``dim`` is None)."""
    if dim is None:
        return aval
    shape = (*aval.shape[:dim], size, *aval.shape[dim:])
    dims = (*aval.dims[:dim], name, *aval.dims[dim:])
    return Aval(shape, aval.dtype, dims)


def move_batch_axis(x: Atom, dim: BatchDim, target: BatchDim, size: int, name: DimName = None) -> Atom:
    """Put the batch axis of ``x`` at ``target``: move it, broadcast an unbatched value, or (target None) check
    that ``x`` is unbatched."""
    if target is None:
        if dim is not None:
            raise TransformError("[vmap] an output that depends on the mapped inputs cannot have out_axes=None")
        return x
    if dim is None:
        aval = batched_aval(x.aval, target, size, name)
        mapped = tuple(a if a < target else a + 1 for a in range(x.aval.ndim))
        return S.broadcast_in_dim(x, aval.shape, mapped, aval.dims)
    return S.moveaxis(x, dim, target)


def batch_emit(
    graph: Graph, args: Sequence[Atom], in_dims: Sequence[BatchDim], axis_size: int,
    axis_name: str | None | _Inherit = INHERIT,
) -> tuple[list[Atom], list[BatchDim]]:
    """Emit the batched form of ``graph`` applied to ``args`` (batched along ``in_dims``) into the active builder.
    ``axis_name`` names the walked axis for the equations that use it (collectives); by default, the name of the
    enclosing walk.

    Returns the output atoms and the batch axis of each (None for outputs that do not depend on batched inputs).
    """
    if len(args) != len(graph.inputs) or len(in_dims) != len(args):
        raise ValueError(f"batch_emit: {len(graph.inputs)} graph inputs, {len(args)} args, {len(in_dims)} dims")
    if axis_name is INHERIT:
        axis_name = _WALKED[-1] if _WALKED else None
    env: dict[int, tuple[Atom, BatchDim]] = {}
    for var, arg, dim in zip(graph.inputs, args, in_dims):
        expected = batched_aval(var.aval, dim, axis_size).shape
        if arg.aval.shape != expected:
            raise ValueError(f"batch_emit: argument {arg.aval} does not batch {var.aval} at axis {dim}")
        env[id(var)] = (arg, dim)
    builder = current()
    _WALKED.append(axis_name)
    try:
        for eqn in graph.eqns:
            ins = [env.get(id(a), (a, None)) for a in eqn.inputs]
            atoms, dims = [a for a, _ in ins], [d for _, d in ins]
            if equation_uses_axis(eqn.primitive, eqn.params, axis_name):
                outs, out_dims = _apply_rule(eqn, atoms, dims, axis_size)
            elif all(d is None for d in dims):
                outs = _copy(builder, eqn, atoms)
                out_dims = [None] * len(outs)
            else:
                outs, out_dims = _apply_rule(eqn, atoms, dims)
            for old, new, dim in zip(eqn.outputs, outs, out_dims):
                env[id(old)] = (new, dim)
    finally:
        _WALKED.pop()
    results = [env.get(id(a), (a, None)) for a in graph.outputs]
    return [a for a, _ in results], [d for _, d in results]


def _copy(builder: Builder, eqn: Equation, ins: list[Atom]) -> tuple[Var, ...]:
    """Re-emit an equation untouched by batching (fresh output variables, same types)."""
    outs = tuple(Var(v.aval) for v in eqn.outputs)
    builder.eqns.append(Equation(eqn.primitive, tuple(ins), outs, eqn.params, eqn.loc))
    return outs


def _apply_rule(
    eqn: Equation, ins: list[Atom], dims: list[BatchDim], walked_size: int | None = None
) -> tuple[Sequence[Atom], Sequence[BatchDim]]:
    """Apply the primitive's ``batch`` rule, or with ``walked_size`` (the equation uses the walked axis, of that
    size) its ``axis_batch`` rule."""
    prim = eqn.primitive
    rule = prim.batch if walked_size is None else prim.axis_batch
    if rule is None:
        kind = "batching" if walked_size is None else "axis_batch"
        raise TransformError(f"[vmap] primitive {prim.name} has no {kind} rule", None, eqn.loc)
    with located(eqn.loc):
        if walked_size is None:
            outs, out_dims = rule(ins, dims, **eqn.params)
        else:
            outs, out_dims = rule(ins, dims, walked_size, **eqn.params)
    if not prim.multiple_results:
        outs, out_dims = (outs,), (out_dims,)
    if len(outs) != len(eqn.outputs) or len(out_dims) != len(outs):
        raise AssertionError(f"batch rule of {prim.name} returned {len(outs)} outputs for {len(eqn.outputs)}")
    return outs, out_dims


def batch_graph(
    graph: Graph,
    in_dims: Sequence[BatchDim],
    axis_size: int,
    axis_name: DimName = None,
    out_dims: Sequence[BatchDim] | None = None,
) -> tuple[Graph, list[BatchDim]]:
    """The batched form of ``graph``: input i gains a batch axis of ``axis_size`` at ``in_dims[i]`` (None keeps it
    unbatched), named ``axis_name``.

    With ``out_dims`` given, every output is brought to that batch axis (unbatched outputs are broadcast; None
    requires the output to be unbatched); otherwise outputs keep the axis the rules chose. Returns the new graph
    and the batch axis of each output.
    """
    inputs = [Var(batched_aval(v.aval, d, axis_size, axis_name)) for v, d in zip(graph.inputs, in_dims, strict=True)]
    with building() as builder:
        outs, dims = batch_emit(graph, inputs, in_dims, axis_size)
        if out_dims is not None:
            outs = [move_batch_axis(a, d, t, axis_size, axis_name) for a, d, t in zip(outs, dims, out_dims, strict=True)]
            dims = list(out_dims)
    return Graph(inputs, builder.eqns, outs), dims
