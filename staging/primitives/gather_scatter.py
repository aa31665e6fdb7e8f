"""gather and scatter with StableHLO's dimension numbers (including batching dims), and their rules.

Semantics follow XLA: a gather clamps each start index so its window fits inside the operand; a scatter drops
updates whose window does not fit. The gradient rules respect both (the gather's VJP clamps the indices before
scattering back, a scatter's VJP gives dropped updates a zero cotangent).

Scatter combiners: ``set`` (with duplicate indices one update wins, as in XLA), ``add``, ``mul``, ``min``,
``max`` (duplicates accumulate). Derivatives of ``set`` are exact even with duplicates: the winners are found by
scattering update ids. Those of ``min``/``max`` split ties evenly; those of ``mul`` are exact with zero updates
too, as for reduce_prod.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval, DimName, literal
from ..primitive import Primitive
from ..shapes import check_dtype, unify_axis
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from . import reductions as R
from . import structural as S
from .slicing import concatenate, iota, renamed, with_batch


class GatherDims(NamedTuple):
    """StableHLO gather dimension numbers. Result axes not in ``offset_dims`` follow the index axes in order."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDims(NamedTuple):
    """StableHLO scatter dimension numbers (the mirror image of ``GatherDims``)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


COMBINERS = ("set", "add", "mul", "min", "max")


def _unique_within(op: str, what: str, axes: Sequence[int], rank: int, sort: bool = False) -> None:
    if len(set(axes)) != len(axes) or any(not 0 <= a < rank for a in axes) or (sort and list(axes) != sorted(axes)):
        raise ShapeError(f"{what} {tuple(axes)} must be {'sorted, ' if sort else ''}unique axes below {rank}", op)


def _index_batch_axes(indices: Aval, index_vector_dim: int, op: str) -> tuple[list[int], int]:
    """The axes of ``indices`` other than the index vector one, and the index vector's length."""
    if not 0 <= index_vector_dim <= indices.ndim:
        raise ShapeError(f"index_vector_dim {index_vector_dim} is out of range for indices {indices}", op)
    if not dtypes.is_integer(indices.dtype):
        raise DTypeError(f"indices must have an integer dtype, got {indices}", op)
    length = indices.shape[index_vector_dim] if index_vector_dim < indices.ndim else 1
    return [a for a in range(indices.ndim) if a != index_vector_dim], length


def _check_batching(op: str, operand: Aval, indices: Aval, op_axes: Sequence[int], idx_axes: Sequence[int],
                    index_vector_dim: int) -> None:
    if len(op_axes) != len(idx_axes):
        raise ShapeError(f"batching dims {tuple(op_axes)} and {tuple(idx_axes)} must pair up", op)
    _unique_within(op, "index batching dims", idx_axes, indices.ndim)
    if index_vector_dim in idx_axes:
        raise ShapeError("index_vector_dim cannot be a batching dim", op)
    for a, b in zip(op_axes, idx_axes):
        if operand.shape[a] != indices.shape[b]:
            raise ShapeError(f"batching axis {a} of {operand} does not match axis {b} of indices {indices}", op)
        unify_axis(op, (operand, indices), (a, b))


# ------------------------------------------------------------------------------------------------ gather

gather_p = Primitive("gather")


@gather_p.def_shape
def _gather_shape(operand: Aval, indices: Aval, *, dimension_numbers: GatherDims, slice_sizes: tuple[int, ...]) -> Aval:
    op = "gather"
    dn = dimension_numbers
    batch_axes, length = _index_batch_axes(indices, dn.index_vector_dim, op)
    if len(dn.start_index_map) != length:
        raise ShapeError(
            f"indices {indices} hold {length} coordinates per index but start_index_map is {dn.start_index_map}", op
        )
    if len(slice_sizes) != operand.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, operand.shape)):
        raise ShapeError(f"slice sizes {slice_sizes} do not fit in operand {operand}", op)
    _unique_within(op, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim, sort=True)
    _unique_within(op, "operand_batching_dims", dn.operand_batching_dims, operand.ndim, sort=True)
    _unique_within(op, "start_index_map", dn.start_index_map, operand.ndim)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if len(dropped) != len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims):
        raise ShapeError("an axis cannot be both collapsed and a batching dim", op)
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise ShapeError("a batching dim cannot be indexed", op)
    if any(slice_sizes[a] > 1 for a in dn.collapsed_slice_dims) or any(
        slice_sizes[a] != 1 for a in dn.operand_batching_dims
    ):
        raise ShapeError(f"collapsed and batching dims need slice size 1, got {slice_sizes}", op)
    _check_batching(op, operand, indices, dn.operand_batching_dims, dn.start_indices_batching_dims,
                    dn.index_vector_dim)
    offset_axes = [a for a in range(operand.ndim) if a not in dropped]
    rank = len(batch_axes) + len(offset_axes)
    if len(dn.offset_dims) != len(offset_axes):
        raise ShapeError(f"offset_dims {dn.offset_dims} must name {len(offset_axes)} result axes", op)
    _unique_within(op, "offset_dims", dn.offset_dims, rank, sort=True)
    shape: list[int] = []
    names: list[DimName] = []
    offsets, batches = iter(offset_axes), iter(batch_axes)
    for axis in range(rank):
        if axis in dn.offset_dims:
            a = next(offsets)
            shape.append(slice_sizes[a])
            names.append(operand.dims[a] if slice_sizes[a] == operand.shape[a] else None)
        else:
            b = next(batches)
            shape.append(indices.shape[b])
            names.append(indices.dims[b])
    return Aval(tuple(shape), operand.dtype, names)


def gather(operand: Atom, indices: Atom, dimension_numbers: GatherDims, slice_sizes: Sequence[int]) -> Atom:
    return bind(  # type: ignore[no-any-return]
        gather_p, operand, indices, dimension_numbers=dimension_numbers, slice_sizes=tuple(slice_sizes)
    )


def scatter_dims_of(dn: GatherDims) -> ScatterDims:
    return ScatterDims(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map, dn.index_vector_dim,
                       dn.operand_batching_dims, dn.start_indices_batching_dims)


def gather_dims_of(dn: ScatterDims) -> GatherDims:
    return GatherDims(dn.update_window_dims, dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
                      dn.index_vector_dim, dn.input_batching_dims, dn.scatter_indices_batching_dims)


def _start_bounds(indices: Atom, index_vector_dim: int, index_map: Sequence[int], operand: Aval,
                  window: Sequence[int]) -> Atom:
    """The largest start index along each indexed axis, broadcast to the shape of ``indices``."""
    top = np.array([operand.shape[a] - window[a] for a in index_map], dtype=indices.aval.dtype)
    if index_vector_dim == indices.aval.ndim:
        return S.full_like(indices, int(top[0]))
    return S.broadcast_in_dim(literal(top, indices.aval.dtype), indices.aval.shape, (index_vector_dim,),
                              indices.aval.dims)


def clamp_starts(indices: Atom, dn: GatherDims, operand: Aval, slice_sizes: Sequence[int]) -> Atom:
    """Indices clamped exactly as XLA's gather clamps them, so a scatter puts cotangents where values came from."""
    top = _start_bounds(indices, dn.index_vector_dim, dn.start_index_map, operand, slice_sizes)
    return E.clamp(S.full_like(indices, 0), indices, top)


@gather_p.def_jvp
def _gather_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    t = tangents[0]
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(gather_p, t, primals[1], **params),)


@gather_p.def_vjp
def _gather_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *,
    dimension_numbers: GatherDims, slice_sizes: Any,
) -> Any:
    (ct,) = cts
    operand, indices = primals
    if isinstance(ct, Zero):
        return (Zero(operand.aval), None)
    clamped = clamp_starts(indices, dimension_numbers, operand.aval, slice_sizes)
    back = scatter(S.zeros(operand.aval), clamped, ct, scatter_dims_of(dimension_numbers), "add")
    return (back, None)


@gather_p.def_batch
def _gather_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, dimension_numbers: GatherDims, slice_sizes: Any
) -> Any:
    operand, indices = args
    d, e = dims
    dn = dimension_numbers

    def shift(axes: Sequence[int], at: int) -> tuple[int, ...]:
        return tuple(a + (a >= at) for a in axes)

    if e is None:
        # Only the operand is batched: its batch axis becomes one more (full-size) window axis of the result.
        assert d is not None
        dropped = set(shift(dn.collapsed_slice_dims, d)) | set(shift(dn.operand_batching_dims, d))
        rank_among_offsets = sum(1 for a in range(d) if a not in dropped)
        pos = 0 if rank_among_offsets == 0 else dn.offset_dims[rank_among_offsets - 1] + 1
        new_dn = GatherDims(
            tuple(sorted((*shift(dn.offset_dims, pos), pos))), shift(dn.collapsed_slice_dims, d),
            shift(dn.start_index_map, d), dn.index_vector_dim, shift(dn.operand_batching_dims, d),
            dn.start_indices_batching_dims,
        )
        sizes = (*slice_sizes[:d], operand.aval.shape[d], *slice_sizes[d:])
        return gather(operand, indices, new_dn, sizes), pos
    # Batched indices: their batch axis leads, and so leads the result.
    indices = S.moveaxis(indices, e, 0)
    offset_dims = tuple(o + 1 for o in dn.offset_dims)
    index_batching = tuple(b + 1 for b in dn.start_indices_batching_dims)
    if d is None:
        new_dn = GatherDims(offset_dims, dn.collapsed_slice_dims, dn.start_index_map, dn.index_vector_dim + 1,
                            dn.operand_batching_dims, index_batching)
        return gather(operand, indices, new_dn, slice_sizes), 0
    # Both batched: pair the two batch axes as batching dims (kept sorted on the operand side).
    pairs = sorted([*zip(shift(dn.operand_batching_dims, d), index_batching), (d, 0)])
    new_dn = GatherDims(offset_dims, shift(dn.collapsed_slice_dims, d), shift(dn.start_index_map, d),
                        dn.index_vector_dim + 1, tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
    sizes = (*slice_sizes[:d], 1, *slice_sizes[d:])
    return gather(operand, indices, new_dn, sizes), 0


# ----------------------------------------------------------------------------------------------- scatter

scatter_p = Primitive("scatter")


@scatter_p.def_shape
def _scatter_shape(
    operand: Aval, indices: Aval, updates: Aval, *, dimension_numbers: ScatterDims, combiner: str
) -> Aval:
    op = f"scatter-{combiner}"
    dn = dimension_numbers
    if combiner not in COMBINERS:
        raise ShapeError(f"unknown combiner {combiner!r}; expected one of {COMBINERS}", "scatter")
    if combiner in ("add", "mul"):
        check_dtype(op, operand, E.ARITHMETIC, "numeric")
    elif combiner in ("min", "max"):
        check_dtype(op, operand, E.ANY, E.ORDERED)
    else:
        check_dtype(op, operand, E.EQUATABLE, "numeric or bool")
    if updates.dtype != operand.dtype:
        raise DTypeError(f"updates {updates} must have the dtype of the operand {operand}", op)
    batch_axes, length = _index_batch_axes(indices, dn.index_vector_dim, op)
    if len(dn.scatter_dims_to_operand_dims) != length:
        raise ShapeError(f"indices {indices} hold {length} coordinates per index but scatter_dims_to_operand_dims "
                         f"is {dn.scatter_dims_to_operand_dims}", op)
    _unique_within(op, "update_window_dims", dn.update_window_dims, updates.ndim, sort=True)
    _unique_within(op, "inserted_window_dims", dn.inserted_window_dims, operand.ndim, sort=True)
    _unique_within(op, "input_batching_dims", dn.input_batching_dims, operand.ndim, sort=True)
    _unique_within(op, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.ndim)
    dropped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    if len(dropped) != len(dn.inserted_window_dims) + len(dn.input_batching_dims):
        raise ShapeError("an axis cannot be both inserted and a batching dim", op)
    _check_batching(op, operand, indices, dn.input_batching_dims, dn.scatter_indices_batching_dims,
                    dn.index_vector_dim)
    window_axes = [a for a in range(operand.ndim) if a not in dropped]
    scatter_axes = [u for u in range(updates.ndim) if u not in dn.update_window_dims]
    if len(window_axes) != len(dn.update_window_dims) or len(scatter_axes) != len(batch_axes):
        raise ShapeError(f"updates {updates} do not fit operand {operand} with indices {indices}", op)
    for u, b in zip(scatter_axes, batch_axes):
        if updates.shape[u] != indices.shape[b]:
            raise ShapeError(f"updates {updates} do not match the index shape of {indices}", op)
    for u, a in zip(dn.update_window_dims, window_axes):
        if updates.shape[u] > operand.shape[a]:
            raise ShapeError(f"update window axis {u} of {updates} is larger than axis {a} of {operand}", op)
    return operand


def scatter(operand: Atom, indices: Atom, updates: Atom, dimension_numbers: ScatterDims, combiner: str) -> Atom:
    return bind(  # type: ignore[no-any-return]
        scatter_p, operand, indices, updates, dimension_numbers=dimension_numbers, combiner=combiner
    )


def _window_sizes(operand: Aval, updates: Aval, dn: ScatterDims) -> tuple[int, ...]:
    """The gather slice sizes that read back exactly the windows a scatter writes."""
    dropped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    window = iter(updates.shape[u] for u in dn.update_window_dims)
    return tuple(1 if a in dropped else next(window) for a in range(operand.ndim))


def _read_back(x: Atom, indices: Atom, updates: Aval, dn: ScatterDims) -> Atom:
    """For every update element, the element of operand-shaped ``x`` it was scattered to."""
    return renamed(gather(x, indices, gather_dims_of(dn), _window_sizes(x.aval, updates, dn)),
                   updates.with_dtype(x.aval.dtype))


def _in_bounds(indices: Atom, operand: Aval, updates: Aval, dn: ScatterDims) -> Atom:
    """A bool per update element: whether its window fits, i.e. whether the scatter applied it."""
    window = _window_sizes(operand, updates, dn)
    top = _start_bounds(indices, dn.index_vector_dim, dn.scatter_dims_to_operand_dims, operand, window)
    ok = E.convert(bind(E.and_p, bind(E.ge_p, indices, S.full_like(indices, 0)), bind(E.le_p, indices, top)),
                   np.dtype(np.int32))
    if dn.index_vector_dim < indices.aval.ndim:
        ok = R.reduce_min(ok, (dn.index_vector_dim,))
    scatter_axes = tuple(u for u in range(updates.ndim) if u not in dn.update_window_dims)
    ok = S.broadcast_in_dim(ok, updates.shape, scatter_axes, updates.dims)
    return E.convert(ok, dtypes.BOOL)


def _where(mask: Atom, x: Atom) -> Atom:
    return E.select(mask, x, S.full_like(x, 0))


def _set_masks(operand: Atom, indices: Atom, updates: Atom, dn: ScatterDims) -> tuple[Atom, Atom]:
    """(operand elements no update overwrote, updates that won their element) for a ``set`` scatter: of several
    updates to one element the last wins, as a CPU applies them (see ``scatter_last_wins``)."""
    scatter_axes = tuple(u for u in range(updates.aval.ndim) if u not in dn.update_window_dims)
    counts = [updates.aval.shape[u] for u in scatter_axes]
    total = int(np.prod(counts, dtype=np.int64))
    flat_ids = E.add(iota(np.dtype(np.int32), (total,)), literal(1, np.dtype(np.int32)))
    ids = S.broadcast_in_dim(S.reshape(flat_ids, counts), updates.aval.shape, scatter_axes)
    written = scatter(S.zeros(operand.aval.with_dtype(np.dtype(np.int32)).anonymous()), indices, ids, dn, "max")
    kept = E.eq(written, S.full_like(written, 0))
    won = E.eq(_read_back(written, indices, ids.aval, dn), ids)
    return renamed(kept, operand.aval.with_dtype(dtypes.BOOL)), renamed(won, updates.aval.with_dtype(dtypes.BOOL))


def scatter_last_wins(operand: Atom, indices: Atom, updates: Atom, dn: ScatterDims) -> Atom:
    """A ``set`` scatter in which, of several updates to one element, the last wins (NumPy's rule) on every
    platform: XLA leaves the order of repeated indices unspecified, and a GPU applies them in any order (so the
    result, and its derivative, could change between runs). The losing index rows are moved out of bounds, which
    the scatter drops, so no index repeats. Each index row's window must be written whole or not at all (true of
    array indexing: its windows are the same slices at every row)."""
    _, won = _set_masks(operand, indices, updates, dn)
    rows = E.convert(won, np.dtype(np.int32))  # then one per index row: the update's scatter axes are its rows
    if dn.update_window_dims:
        rows = R.reduce_min(rows, tuple(dn.update_window_dims))
    keep = S.broadcast_in_dim(E.convert(rows, dtypes.BOOL), indices.aval.shape,
                              tuple(d for d in range(indices.aval.ndim) if d != dn.index_vector_dim))
    beyond = S.full_like(indices, int(np.iinfo(indices.aval.dtype).max))
    return scatter(operand, E.select(keep, indices, beyond), updates, dn, "set")


def _extremum_weights(operand: Atom, indices: Atom, updates: Atom, out: Atom, dn: ScatterDims) -> tuple[Atom, Atom]:
    """Weights of the operand and of each update in a min/max result: 1/k for each of the k tied winners."""
    op_wins = E.eq(operand, out)
    upd_wins = bind(E.and_p, E.eq(updates, _read_back(out, indices, updates.aval, dn)),
                    _in_bounds(indices, operand.aval, updates.aval, dn))
    ones = S.full_like(updates, 1)
    count = scatter(_where(op_wins, S.full_like(operand, 1)), indices, _where(upd_wins, ones), dn, "add")
    share = E.div(S.full_like(count, 1), count)
    return _where(op_wins, share), _where(upd_wins, _read_back(share, indices, updates.aval, dn))


def _mul_update_partials(operand: Atom, indices: Atom, updates: Atom, out: Atom, dn: ScatterDims) -> Atom:
    """d out / d update for a ``mul`` scatter: the operand element times the other updates to the same element.
    That is ``out / update`` for a nonzero update; for a zero one it is the product of the rest when it is its
    element's only zero update, else 0 (``out / update`` would be ``0 / 0``)."""
    is_zero_update = E.eq(updates, S.full_like(updates, 0))
    nonzero = E.select(is_zero_update, S.full_like(updates, 1), updates)
    zeros = scatter(S.zeros(operand.aval), indices, _where(is_zero_update, S.full_like(updates, 1)), dn, "add")
    rest = scatter(operand, indices, nonzero, dn, "mul")  # the operand times the nonzero updates
    only_zero = E.select(E.eq(zeros, S.full_like(zeros, 1)), rest, S.full_like(rest, 0))
    return E.select(is_zero_update, _read_back(only_zero, indices, updates.aval, dn),
                    E.div(_read_back(out, indices, updates.aval, dn), nonzero))


@scatter_p.def_jvp
def _scatter_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *,
    dimension_numbers: ScatterDims, combiner: str,
) -> Any:
    operand, indices, updates = primals
    t_op, t_upd = tangents[0], tangents[2]
    out = outs[0]
    dn = dimension_numbers
    if (is_zero(t_op) and is_zero(t_upd)) or not dtypes.is_inexact(out.aval.dtype):
        return (Zero(out.aval),)
    if combiner == "add":
        return (scatter(S.instantiate(t_op), indices, S.instantiate(t_upd), dn, "add"),)
    if combiner == "set":
        kept, won = _set_masks(operand, indices, updates, dn)
        base = _where(kept, S.instantiate(t_op))
        return (scatter(base, indices, _where(won, S.instantiate(t_upd)), dn, "add"),)
    if combiner == "mul":
        total: MaybeZero = Zero(out.aval)
        if not is_zero(t_op):
            total = scatter(t_op, indices, updates, dn, "mul")  # type: ignore[arg-type]
        if not is_zero(t_upd):
            partials = _mul_update_partials(operand, indices, updates, out, dn)
            moved = scatter(S.zeros(operand.aval), indices, E.mul(t_upd, partials), dn, "add")  # type: ignore[arg-type]
            total = E.add_tangents(total, moved)
        return (total,)
    w_op, w_upd = _extremum_weights(operand, indices, updates, out, dn)
    result = E.mul(S.instantiate(t_op), w_op)
    return (scatter(result, indices, E.mul(S.instantiate(t_upd), w_upd), dn, "add"),)


@scatter_p.def_vjp
def _scatter_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *,
    dimension_numbers: ScatterDims, combiner: str,
) -> Any:
    (ct,) = cts
    operand, indices, updates = primals
    out = outs[0]
    dn = dimension_numbers
    if isinstance(ct, Zero) or not dtypes.is_inexact(out.aval.dtype):
        return (Zero(operand.aval), None, Zero(updates.aval))
    inside = _in_bounds(indices, operand.aval, updates.aval, dn)
    if combiner == "add":
        ct_op: Atom = ct
        ct_upd = _where(inside, _read_back(ct, indices, updates.aval, dn))
    elif combiner == "set":
        kept, won = _set_masks(operand, indices, updates, dn)
        ct_op = _where(kept, ct)
        ct_upd = _where(won, _read_back(ct, indices, updates.aval, dn))
    elif combiner == "mul":
        ct_op = scatter(ct, indices, updates, dn, "mul")
        partials = _mul_update_partials(operand, indices, updates, out, dn)
        ct_upd = _where(inside, E.mul(_read_back(ct, indices, updates.aval, dn), partials))
    else:
        w_op, w_upd = _extremum_weights(operand, indices, updates, out, dn)
        ct_op = E.mul(ct, w_op)
        ct_upd = E.mul(_read_back(ct, indices, updates.aval, dn), w_upd)
    return (ct_op if wants[0] else Zero(operand.aval), None, ct_upd if wants[2] else Zero(updates.aval))


@scatter_p.def_batch
def _scatter_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, dimension_numbers: ScatterDims, combiner: str
) -> Any:
    # Give all three operands a leading batch axis and pair operand and indices as batching dims.
    size = next(a.aval.shape[d] for a, d in zip(args, dims) if d is not None)
    operand, indices, updates = (with_batch(a, d, 0, size) for a, d in zip(args, dims))
    dn = dimension_numbers
    new_dn = ScatterDims(
        (*(u + 1 for u in dn.update_window_dims),), tuple(a + 1 for a in dn.inserted_window_dims),
        tuple(a + 1 for a in dn.scatter_dims_to_operand_dims), dn.index_vector_dim + 1,
        (0, *(a + 1 for a in dn.input_batching_dims)), (0, *(b + 1 for b in dn.scatter_indices_batching_dims)),
    )
    return scatter(operand, indices, updates, new_dn, combiner), 0


# ----------------------------------------------- dynamic slices whose starts differ per example (from vmap)


def _stacked_starts(starts: Sequence[Atom], dims: Sequence[int | None], size: int) -> Atom:
    """Per-example start vectors: an int32 (size, n) array."""
    columns = []
    for s, d in zip(starts, dims):
        s32 = E.convert(s, np.dtype(np.int32))
        column = s32 if d is not None else S.broadcast_in_dim(s32, (size,), ())
        columns.append(S.reshape(column, (size, 1)))
    return concatenate(columns, 1)


def batch_dynamic_slice(x: Atom, d: int | None, starts: Sequence[Atom], start_dims: Sequence[int | None],
                        slice_sizes: tuple[int, ...]) -> tuple[Atom, int]:
    size = next(s.aval.shape[sd] for s, sd in zip(starts, start_dims) if sd is not None)
    rank = len(slice_sizes)
    dn = GatherDims(tuple(range(rank)), (), tuple(range(rank)), 0)
    indices = _stacked_starts(starts, start_dims, size)
    out: tuple[Atom, int] = _gather_batch([x, indices], [d, 0], dimension_numbers=dn, slice_sizes=slice_sizes)
    return out


def batch_dynamic_update_slice(x: Atom, dx: int | None, update: Atom, du: int | None, starts: Sequence[Atom],
                               start_dims: Sequence[int | None]) -> tuple[Atom, int]:
    size = next(s.aval.shape[sd] for s, sd in zip(starts, start_dims) if sd is not None)
    indices = _stacked_starts(starts, start_dims, size)
    # dynamic_update_slice clamps its window into range where a scatter would drop it: clamp first.
    upd_shape = S.unbatched_aval(update, du).shape
    top = literal(np.array([n - u for n, u in zip(S.unbatched_aval(x, dx).shape, upd_shape)], np.int32),
                  np.dtype(np.int32))
    indices = E.clamp(S.full_like(indices, 0), indices, S.broadcast_in_dim(top, indices.aval.shape, (1,)))
    rank = len(upd_shape)
    dn = ScatterDims(tuple(range(rank)), (), tuple(range(rank)), 0)
    out: tuple[Atom, int] = _scatter_batch([x, indices, update], [dx, 0, du], dimension_numbers=dn, combiner="set")
    return out
