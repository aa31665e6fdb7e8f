"""StableHLO for collectives in a replica-style SPMD module (``mhlo.num_replicas = n``, one replica per device).

psum/pmax/pmin -> ``all_reduce`` with a scalar combiner region; all_gather -> ``all_gather``; psum_scatter ->
``reduce_scatter`` with an add region; all_to_all -> ``all_to_all``; ppermute -> ``collective_permute``;
axis_index -> ``replica_id``. The replica groups come from ``lowering.spmd.groups_of``: the whole mapped axis
for ``pmap``, the replicas along one mesh axis for ``shard_map`` (there ``ppermute`` sends within every group and
``axis_index`` reads the replica's position in its group from a constant table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitive import Primitive
from ...staging.primitives import collectives as C
from ..emit import Emitter, Value, lowers
from ..spmd import Groups, groups_of


def _pairs_attr(rows: Sequence[Sequence[int]], width: int) -> str:
    body = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in rows)
    return f"dense<[{body}]> : tensor<{len(rows)}x{width}xi64>"


def replica_groups(axis_name: str, size: int) -> str:
    return "replica_groups = " + _pairs_attr(groups_of(axis_name, size), size)


def _replica_pairs(perm: C.Perm, groups: Groups) -> list[tuple[int, int]]:
    """Member pairs of the axis as replica pairs, within every group."""
    return [(group[s], group[t]) for group in groups for s, t in perm]


def _positions(groups: Groups) -> list[int]:
    """Per replica id, its position in its group: its coordinate along the axis."""
    table = [0] * sum(len(g) for g in groups)
    for group in groups:
        for k, replica in enumerate(group):
            table[replica] = k
    return table


def _combiner(prim: Primitive, dtype: np.dtype[Any]) -> str:
    if dtype == dtypes.BOOL:
        return "stablehlo.or" if prim is C.pmax_p else "stablehlo.and"
    return {C.psum_p: "stablehlo.add", C.pmax_p: "stablehlo.maximum", C.pmin_p: "stablehlo.minimum"}[prim]


def _zeros(em: Emitter, out: Aval) -> list[Value]:
    """Zeros of type ``out`` without a collective: for results with no elements (XLA rejects an all_gather along a
    zero-size dimension, and there is nothing to exchange) and for a ppermute that sends nothing."""
    zero = em.scalar(0, out.dtype)
    return em.op("stablehlo.broadcast_in_dim", [zero], [out], "broadcast_dimensions = array<i64>")


def _all_reduce_rule(prim: Primitive) -> Any:
    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int) -> list[Value]:
        (x,) = args
        if 0 in x.aval.shape:
            return _zeros(em, outs[0])
        scalar = Aval((), x.aval.dtype)
        combine = _combiner(prim, x.aval.dtype)
        body = em.region([scalar, scalar], lambda r, a: r.op(combine, a, [scalar]))
        return em.op("stablehlo.all_reduce", [x], outs, replica_groups(axis_name, axis_size), [body])

    return rule


for _prim in (C.psum_p, C.pmax_p, C.pmin_p):
    lowers(_prim)(_all_reduce_rule(_prim))


@lowers(C.all_gather_p)
def _all_gather(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int, axis: int, tiled: bool
) -> list[Value]:
    (x,) = args
    if 0 in outs[0].shape:
        return _zeros(em, outs[0])
    if not tiled:  # gather along a new unit axis: stack instead of concatenate
        shape = (*x.aval.shape[:axis], 1, *x.aval.shape[axis:])
        x = em.op("stablehlo.reshape", [x], [Aval(shape, x.aval.dtype)])[0]
    props = f"all_gather_dim = {axis} : i64, {replica_groups(axis_name, axis_size)}"
    return em.op("stablehlo.all_gather", [x], outs, props)


@lowers(C.psum_scatter_p)
def _psum_scatter(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int,
    scatter_dimension: int, tiled: bool,
) -> list[Value]:
    (x,) = args
    if 0 in x.aval.shape:
        return _zeros(em, outs[0])
    d = scatter_dimension
    shape = x.aval.shape
    block = Aval((*shape[:d], shape[d] // axis_size, *shape[d + 1:]), x.aval.dtype)
    body = em.binary_region("stablehlo.add", Aval((), x.aval.dtype))
    props = f"scatter_dimension = {d} : i64, {replica_groups(axis_name, axis_size)}"
    mine = em.op("stablehlo.reduce_scatter", [x], [block], props, [body])
    # untiled: the one slice per member drops its unit axis
    return mine if tiled else em.op("stablehlo.reshape", mine, outs)


@lowers(C.all_to_all_p)
def _all_to_all(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int, split_axis: int,
    concat_axis: int,
) -> list[Value]:
    (x,) = args
    if 0 in x.aval.shape:
        return _zeros(em, outs[0])
    props = (f"split_dimension = {split_axis} : i64, concat_dimension = {concat_axis} : i64, "
             f"split_count = {axis_size} : i64, {replica_groups(axis_name, axis_size)}")
    return em.op("stablehlo.all_to_all", [x], outs, props)


@lowers(C.ppermute_p)
def _ppermute(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int, perm: C.Perm
) -> list[Value]:
    (x,) = args
    if not perm or 0 in x.aval.shape:  # nobody receives anything, or there is nothing to send
        return _zeros(em, outs[0])
    pairs = _replica_pairs(perm, groups_of(axis_name, axis_size))
    return em.op("stablehlo.collective_permute", [x], outs, "source_target_pairs = " + _pairs_attr(pairs, 2))


@lowers(C.axis_index_p)
def _axis_index(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int) -> list[Value]:
    replica = em.op("stablehlo.replica_id", [], [Aval((), np.dtype(np.uint32))])[0]
    table = _positions(groups_of(axis_name, axis_size))
    if table == list(range(len(table))):  # one group of every replica (pmap): the replica id is the index
        return em.op("stablehlo.convert", [replica], outs)
    index = em.op("stablehlo.convert", [replica], [Aval((), C.INDEX_DTYPE)])[0]
    values = Aval((len(table),), C.INDEX_DTYPE)
    picked = Aval((1,), C.INDEX_DTYPE)
    one = em.op("stablehlo.dynamic_slice", [em.constant(np.asarray(table, C.INDEX_DTYPE), values), index], [picked],
                "slice_sizes = array<i64: 1>")
    return em.op("stablehlo.reshape", one, outs)
