"""StableHLO for collectives in a replica-style SPMD module (``mhlo.num_replicas = n``, one replica per device).

psum/pmax/pmin -> ``all_reduce`` with a scalar combiner region; all_gather -> ``all_gather``; psum_scatter ->
``reduce_scatter`` with an add region; all_to_all -> ``all_to_all``; ppermute -> ``collective_permute``;
axis_index -> ``replica_id``. The replica group is the whole mapped axis.
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


def _pairs_attr(rows: Sequence[Sequence[int]], width: int) -> str:
    body = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in rows)
    return f"dense<[{body}]> : tensor<{len(rows)}x{width}xi64>"


def replica_groups(size: int) -> str:
    return "replica_groups = " + _pairs_attr([range(size)], size)


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
        return em.op("stablehlo.all_reduce", [x], outs, replica_groups(axis_size), [body])

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
    props = f"all_gather_dim = {axis} : i64, {replica_groups(axis_size)}"
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
    props = f"scatter_dimension = {d} : i64, {replica_groups(axis_size)}"
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
             f"split_count = {axis_size} : i64, {replica_groups(axis_size)}")
    return em.op("stablehlo.all_to_all", [x], outs, props)


@lowers(C.ppermute_p)
def _ppermute(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int, perm: C.Perm
) -> list[Value]:
    (x,) = args
    if not perm or 0 in x.aval.shape:  # nobody receives anything, or there is nothing to send
        return _zeros(em, outs[0])
    return em.op("stablehlo.collective_permute", [x], outs, "source_target_pairs = " + _pairs_attr(perm, 2))


@lowers(C.axis_index_p)
def _axis_index(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis_name: str, axis_size: int) -> list[Value]:
    replica = em.op("stablehlo.replica_id", [], [Aval((), np.dtype(np.uint32))])[0]
    return em.op("stablehlo.convert", [replica], outs)
