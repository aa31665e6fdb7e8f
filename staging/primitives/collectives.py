"""Collectives over a named mapped axis: psum, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute,
axis_index (pmean is psum / n; jax's pswapaxes and pshuffle are an all_to_all and a ppermute).

Every equation carries ``axis_name`` and ``axis_size``, so shape rules, typecheck and lowering need no context.
The public helpers below look the axis up among the frames ``pmap``/``vmap`` pushed (``staging.axes``) and fail
with the axis name when it is not bound.

Semantics are per device (SPMD): each device's value is its own variable. Hence the transpose of ``psum`` is
``psum``: y_d = sum_k x_k for every d gives ct_x_k = sum_d ct_y_d. ``pmax``/``pmin`` route the derivative to the
devices that attain the extremum (ties share it, as ``reduce_max`` does). ``all_gather`` and ``psum_scatter``
transpose to each other; ``all_to_all`` to the one with split and concat axes swapped; ``ppermute`` to the inverse
permutation.

Batching: every collective says it uses the axis it names (``uses_axis``). Under ``vmap(f, axis_name="i")`` the
walker hands a collective over ``"i"`` to its ``axis_batch`` rule, even when its operand is unbatched, and that
rule emits the matching reduction over the batch axis; a collective over another axis goes to its ``batch`` rule,
which re-binds it on the batched operand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..axes import lookup
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype
from ..source import user_location
from ..zeros import MaybeZero, Zero
from . import elementwise as E
from . import reductions as R
from . import slicing as L
from . import structural as S

Perm = tuple[tuple[int, int], ...]
INDEX_DTYPE = np.dtype(np.int32)


def _batched_size_check(x: Atom, d: int | None, size: int, axis_size: int) -> None:
    if size != axis_size or (d is not None and x.aval.shape[d] != size):
        raise AssertionError(f"batch axis of {x.aval} at {d} is not the walked axis of size {axis_size}")


def _uses_axis(params: Mapping[str, Any], axis_name: str) -> bool:
    """Every collective uses the axis its ``axis_name`` names."""
    return bool(params["axis_name"] == axis_name)


def _def_linear(prim: Primitive, transpose: Callable[[dict[str, Any]], tuple[Primitive, dict[str, Any]]]) -> None:
    """The rules of a collective linear in its operand: its JVP is the same collective of the tangent, its VJP
    the transpose collective (``transpose(params)``: the primitive and its parameters) of the cotangent, and it
    uses the axis it names."""

    @prim.def_jvp
    def jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
        (t,) = tangents
        return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(prim, t, **params),)

    @prim.def_vjp
    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, **params: Any) -> Any:
        (ct,) = cts
        x = primals[0].aval
        if isinstance(ct, Zero):
            return (Zero(x),)
        other, other_params = transpose(params)
        return (S.reshape_like(bind(other, ct, **other_params), x),)

    prim.def_uses_axis(_uses_axis)


def _renamed(params: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``params`` with the entry ``old`` under the name ``new`` (all_gather's ``axis`` is psum_scatter's
    ``scatter_dimension``)."""
    out = {k: v for k, v in params.items() if k != old}
    out[new] = params[old]
    return out


def _stacked_copies(x: Atom, axis_size: int) -> tuple[Atom, int]:
    """An unbatched operand of a collective over the walked axis: every member holds ``x``, so batch it as
    ``axis_size`` copies along a new leading axis."""
    return S.broadcast_in_dim(x, (axis_size, *x.aval.shape), tuple(range(1, x.aval.ndim + 1))), 0


# --------------------------------------------------------------------------------------- psum, pmax, pmin


def _make_all_reduce(name: str, allowed: frozenset[Any], what: str, reduce: Any) -> Primitive:
    prim = Primitive(name)

    @prim.def_shape
    def shape(x: Aval, *, axis_name: str, axis_size: int) -> Aval:
        check_dtype(name, x, allowed, what)
        return x

    prim.def_uses_axis(_uses_axis)

    @prim.def_axis_batch
    def axis_batch(
        args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int
    ) -> Any:
        (x,), (d,) = args, dims
        _batched_size_check(x, d, size, axis_size)
        if d is None:  # the same value on every member
            return (E.mul(x, E.scalar(axis_size, x)) if prim is psum_p else x), None
        return reduce(x, (d,)), None

    @prim.def_batch
    def batch(args: Sequence[Atom], dims: Sequence[int | None], *, axis_name: str, axis_size: int) -> Any:
        (x,), (d,) = args, dims
        return bind(prim, x, axis_name=axis_name, axis_size=axis_size), d

    return prim


psum_p = _make_all_reduce("psum", E.ARITHMETIC, "numeric", R.reduce_sum)
pmax_p = _make_all_reduce("pmax", E.ANY, E.ORDERED, R.reduce_max)
pmin_p = _make_all_reduce("pmin", E.ANY, E.ORDERED, R.reduce_min)


def _bind_psum(x: Atom, axis_name: str, axis_size: int) -> Atom:
    return bind(psum_p, x, axis_name=axis_name, axis_size=axis_size)  # type: ignore[no-any-return]


_def_linear(psum_p, lambda params: (psum_p, params))  # y_d = sum_k x_k on every d: ct_x_k = sum_d ct_y_d


def _extremum_rules(prim: Primitive) -> None:
    def weights(x: Atom, out: Atom, axis_name: str, axis_size: int) -> Atom:
        """1/k on the k members that attain the extremum, 0 on the others."""
        hit = E.select(E.eq(x, out), S.full_like(x, 1), S.full_like(x, 0))
        return E.div(hit, _bind_psum(hit, axis_name, axis_size))

    @prim.def_jvp
    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
        (t,) = tangents
        if isinstance(t, Zero) or not dtypes.is_float(outs[0].aval.dtype):
            return (Zero(outs[0].aval),)
        return (_bind_psum(E.mul(t, weights(primals[0], outs[0], **params)), **params),)

    @prim.def_vjp
    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any, **params: Any) -> Any:
        (ct,) = cts
        x = primals[0]
        if isinstance(ct, Zero) or not dtypes.is_float(x.aval.dtype):
            return (Zero(x.aval),)
        return (E.mul(_bind_psum(ct, **params), weights(x, outs[0], **params)),)


_extremum_rules(pmax_p)
_extremum_rules(pmin_p)


# --------------------------------------------------------------------------------------------- all_gather

all_gather_p = Primitive("all_gather")


@all_gather_p.def_shape
def _all_gather_shape(x: Aval, *, axis_name: str, axis_size: int, axis: int, tiled: bool) -> Aval:
    if tiled:
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"tiled axis {axis} is out of range for {x}", "all_gather")
        shape = (*x.shape[:axis], x.shape[axis] * axis_size, *x.shape[axis + 1:])
        return Aval(shape, x.dtype, (*x.dims[:axis], None, *x.dims[axis + 1:]))
    if not 0 <= axis <= x.ndim:
        raise ShapeError(f"axis {axis} is out of range for inserting a new axis into {x}", "all_gather")
    return Aval((*x.shape[:axis], axis_size, *x.shape[axis:]), x.dtype, (*x.dims[:axis], None, *x.dims[axis:]))


@all_gather_p.def_axis_batch
def _all_gather_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int, axis: int,
    tiled: bool,
) -> Any:
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    if d is None:  # every member holds the same value: gathering stacks copies of it
        x, d = _stacked_copies(x, axis_size)
    stacked = S.moveaxis(x, d, axis)
    if not tiled:
        return stacked, None
    shape = stacked.aval.shape
    merged = (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2:])
    return S.reshape(stacked, merged), None


@all_gather_p.def_batch
def _all_gather_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, axis_name: str, axis_size: int, axis: int, tiled: bool
) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    front = S.moveaxis(x, d, 0)
    return bind(all_gather_p, front, axis_name=axis_name, axis_size=axis_size, axis=axis + 1, tiled=tiled), 0


# ------------------------------------------------------------------------------------------- psum_scatter

psum_scatter_p = Primitive("psum_scatter")


def _split_axis_check(
    x: Aval, dim: int, axis_size: int, axis_name: str | tuple[str, ...], tiled: bool, what: str, op: str
) -> None:
    """``x``'s ``dim`` can be cut into one block per member: divisible by the axis size (``tiled``), or equal to
    it (one slice per member)."""
    if not 0 <= dim < x.ndim:
        raise ShapeError(f"{what} {dim} is out of range for {x}", op)
    size = x.shape[dim]
    if tiled and size % axis_size:
        raise ShapeError(f"{what} {dim} of {x} has size {size}, which the size {axis_size} of axis {axis_name!r} "
                         "does not divide (tiled=True cuts it into one block per member)", op)
    if not tiled and size != axis_size:
        raise ShapeError(f"{what} {dim} of {x} has size {size}, but axis {axis_name!r} has size {axis_size} "
                         "(tiled=False gives each member one slice; tiled=True takes a multiple)", op)


@psum_scatter_p.def_shape
def _psum_scatter_shape(x: Aval, *, axis_name: str, axis_size: int, scatter_dimension: int, tiled: bool) -> Aval:
    check_dtype("psum_scatter", x, E.ARITHMETIC, "numeric")
    d = scatter_dimension
    _split_axis_check(x, d, axis_size, axis_name, tiled, "scatter_dimension", "psum_scatter")
    if not tiled:
        return Aval((*x.shape[:d], *x.shape[d + 1:]), x.dtype, (*x.dims[:d], *x.dims[d + 1:]))
    return Aval((*x.shape[:d], x.shape[d] // axis_size, *x.shape[d + 1:]), x.dtype, (*x.dims[:d], None, *x.dims[d + 1:]))


# all_gather and psum_scatter transpose to each other: every member's block k fed member k's result, so block k
# of the cotangent is member k's (an all_gather); each member's slice of every member's cotangent, summed, is a
# psum_scatter along the gathered axis
_def_linear(psum_scatter_p, lambda params: (all_gather_p, _renamed(params, "scatter_dimension", "axis")))
_def_linear(all_gather_p, lambda params: (psum_scatter_p, _renamed(params, "axis", "scatter_dimension")))


@psum_scatter_p.def_axis_batch
def _psum_scatter_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int,
    scatter_dimension: int, tiled: bool,
) -> Any:
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    total = E.mul(x, E.scalar(axis_size, x)) if d is None else R.reduce_sum(x, (d,))
    if not tiled:  # member k's result is slice k: the scattered axis is the batch axis
        return total, scatter_dimension
    shape = total.aval.shape
    blocks = (*shape[:scatter_dimension], axis_size, shape[scatter_dimension] // axis_size, *shape[scatter_dimension + 1:])
    return S.reshape(total, blocks), scatter_dimension


@psum_scatter_p.def_batch
def _psum_scatter_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, axis_name: str, axis_size: int, scatter_dimension: int,
    tiled: bool,
) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    front = S.moveaxis(x, d, 0)
    params = dict(axis_name=axis_name, axis_size=axis_size, scatter_dimension=scatter_dimension + 1, tiled=tiled)
    return bind(psum_scatter_p, front, **params), 0


# ----------------------------------------------------------------------------------------------- ppermute

ppermute_p = Primitive("ppermute")


def check_perm(perm: Perm, size: int, op: str = "ppermute") -> None:
    sources = [s for s, _ in perm]
    targets = [t for _, t in perm]
    if any(not (0 <= i < size) for i in sources + targets):
        raise ShapeError(f"permutation {list(perm)} names members outside 0..{size - 1} of the axis", op)
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        raise ShapeError(f"permutation {list(perm)} repeats a source or a destination", op)


@ppermute_p.def_shape
def _ppermute_shape(x: Aval, *, axis_name: str, axis_size: int, perm: Perm) -> Aval:
    check_perm(perm, axis_size)
    return x


_def_linear(ppermute_p, lambda params: (ppermute_p, {**params, "perm": tuple((t, s) for s, t in params["perm"])}))


@ppermute_p.def_axis_batch
def _ppermute_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int, perm: Perm
) -> Any:
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    if d is None:
        x, d = _stacked_copies(x, axis_size)
    source_of = {t: s for s, t in perm}
    per_example = S.unbatched_aval(x, d)
    zero = S.zeros(Aval((*per_example.shape[:d], 1, *per_example.shape[d:]), x.aval.dtype))
    pieces = [
        L.slice_in_dim(x, source_of[j], source_of[j] + 1, d) if j in source_of else zero for j in range(axis_size)
    ]
    return L.concatenate(pieces, d), d


@ppermute_p.def_batch
def _ppermute_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, axis_name: str, axis_size: int, perm: Perm
) -> Any:
    (x,), (d,) = args, dims
    return bind(ppermute_p, x, axis_name=axis_name, axis_size=axis_size, perm=perm), d


# --------------------------------------------------------------------------------------------- all_to_all
# The primitive is the tiled form (as jax's): ``split_axis`` is cut into one block per member, member k gets
# block k of every member's operand, concatenated along ``concat_axis`` in member order. The untiled form is a
# reshape on either side (``all_to_all`` below).

all_to_all_p = Primitive("all_to_all")


@all_to_all_p.def_shape
def _all_to_all_shape(x: Aval, *, axis_name: str, axis_size: int, split_axis: int, concat_axis: int) -> Aval:
    _split_axis_check(x, split_axis, axis_size, axis_name, True, "split_axis", "all_to_all")
    if not 0 <= concat_axis < x.ndim:
        raise ShapeError(f"concat_axis {concat_axis} is out of range for {x}", "all_to_all")
    if split_axis == concat_axis:  # the same size: blocks change places within the axis
        return x
    shape, names = list(x.shape), list(x.dims)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    names[split_axis] = names[concat_axis] = None
    return Aval(tuple(shape), x.dtype, names)


# block m of member k's cotangent (along concat_axis) goes back to block k of member m's operand
_def_linear(all_to_all_p, lambda params: (
    all_to_all_p, {**params, "split_axis": params["concat_axis"], "concat_axis": params["split_axis"]}
))


def _split_in_blocks(x: Atom, axis: int, count: int) -> Atom:
    """``x`` with ``axis`` reshaped to ``(count, size // count)``."""
    shape = x.aval.shape
    return S.reshape(x, (*shape[:axis], count, shape[axis] // count, *shape[axis + 1:]))


def _merge_with_next(x: Atom, axis: int) -> Atom:
    shape = x.aval.shape
    return S.reshape(x, (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2:]))


@all_to_all_p.def_axis_batch
def _all_to_all_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int,
    split_axis: int, concat_axis: int,
) -> Any:
    """Member k's result is block k (along split_axis) of every member m, concatenated over m along
    concat_axis: the member axis becomes the major part of concat_axis, the block index the new member axis."""
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    if d is None:
        x, d = _stacked_copies(x, axis_size)
    if split_axis == concat_axis:  # swap the member axis with the block index, then fold members into the axis
        at = split_axis + (d <= split_axis)  # the split axis's position in the batched operand
        blocks = _split_in_blocks(x, at, axis_size)
        d_after = d + (at < d)
        order = list(range(blocks.aval.ndim))
        order[at], order[d_after] = d_after, at
        return _merge_with_next(S.transpose(blocks, order), at), d
    merged = _merge_with_next(S.moveaxis(x, d, concat_axis), concat_axis)
    return _split_in_blocks(merged, split_axis, axis_size), split_axis


@all_to_all_p.def_batch
def _all_to_all_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, split_axis: int, concat_axis: int, **params: Any
) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    front = S.moveaxis(x, d, 0)
    return bind(all_to_all_p, front, split_axis=split_axis + 1, concat_axis=concat_axis + 1, **params), 0


# --------------------------------------------------------------------------------------------- axis_index

axis_index_p = Primitive("axis_index", differentiable=False)


@axis_index_p.def_shape
def _axis_index_shape(*, axis_name: str, axis_size: int) -> Aval:
    return Aval((), INDEX_DTYPE)


axis_index_p.def_jvp(E._no_tangent_jvp)
axis_index_p.def_vjp(E._no_cotangent_vjp)


axis_index_p.def_uses_axis(_uses_axis)


@axis_index_p.def_axis_batch
def _axis_index_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int
) -> Any:
    if size != axis_size:
        raise AssertionError(f"axis_index over {axis_name!r} of size {axis_size} batched over size {size}")
    return L.iota(INDEX_DTYPE, (axis_size,)), 0


@axis_index_p.def_batch
def _axis_index_batch(args: Sequence[Atom], dims: Sequence[int | None], *, axis_name: str, axis_size: int) -> Any:
    raise AssertionError("axis_index has no operands: it is batched only over its own axis")


# ------------------------------------------------------------------------------- staging-level entry points
# Errors raised here come before any ``bind``, so they carry the user's line themselves.


def static_int(value: Any, what: str, op: str) -> int:
    """``value`` as a Python int: NumPy ints pass; floats and bools are refused (never truncated)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be an int, got {value!r}\n  at {user_location()}")
    return int(value)


def _perm_pairs(perm: Any) -> Perm:
    """``perm`` as a tuple of ``(source, destination)`` int pairs, or a TypeError naming what is wrong."""
    try:
        items = list(perm)
    except TypeError:
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs, got {perm!r}\n"
                        f"  at {user_location()}") from None
    pairs: list[tuple[int, int]] = []
    for item in items:
        pair = tuple(item) if isinstance(item, (tuple, list, np.ndarray)) else (item,)
        if len(pair) != 2:
            raise TypeError(f"ppermute: every entry of perm must be a (source, destination) pair, got {item!r}\n"
                            f"  at {user_location()}")
        source = static_int(pair[0], "a perm source", "ppermute")
        pairs.append((source, static_int(pair[1], "a perm destination", "ppermute")))
    return tuple(pairs)


def psum(x: Atom, axis_name: str) -> Atom:
    return _bind_psum(x, axis_name, lookup(axis_name, "psum").size)


def pmean(x: Atom, axis_name: str) -> Atom:
    size = lookup(axis_name, "pmean").size
    if not dtypes.is_inexact(x.aval.dtype):
        raise DTypeError(
            f"needs a floating-point operand (the mean of integers is not an integer), got {x.aval}",
            "pmean",
            user_location(),
        )
    total = _bind_psum(x, axis_name, size)
    return E.div(total, E.scalar(size, total))


def pmax(x: Atom, axis_name: str) -> Atom:
    return bind(pmax_p, x, axis_name=axis_name, axis_size=lookup(axis_name, "pmax").size)  # type: ignore[no-any-return]


def pmin(x: Atom, axis_name: str) -> Atom:
    return bind(pmin_p, x, axis_name=axis_name, axis_size=lookup(axis_name, "pmin").size)  # type: ignore[no-any-return]


def all_gather(x: Atom, axis_name: str, axis: int = 0, tiled: bool = False) -> Atom:
    size = lookup(axis_name, "all_gather").size
    axis = static_int(axis, "axis", "all_gather")
    rank = x.aval.ndim if tiled else x.aval.ndim + 1
    if not -rank <= axis < rank:
        what = "a scalar has no axis to concatenate along" if tiled and rank == 0 else f"tiled={bool(tiled)}"
        raise ShapeError(f"axis {axis} is out of range for {x.aval} ({what})", "all_gather", user_location())
    return bind(  # type: ignore[no-any-return]
        all_gather_p, x, axis_name=axis_name, axis_size=size, axis=axis % rank, tiled=bool(tiled)
    )


def axis_in_range(axis: Any, x: Aval, what: str, op: str) -> int:
    """``axis`` (maybe negative) of ``x`` as a non-negative int, or a ShapeError at the user's line."""
    index = static_int(axis, what, op)
    if not -x.ndim <= index < x.ndim:
        raise ShapeError(f"{what} {index} is out of range for {x}", op, user_location())
    return index % x.ndim


def blocks_check(
    x: Aval, dim: int, axis_name: str | tuple[str, ...], size: int, tiled: bool, what: str, op: str
) -> None:
    """The shape rule's check, raised here so that the error carries the user's line."""
    try:
        _split_axis_check(x, dim, size, axis_name, tiled, what, op)
    except ShapeError as err:
        raise err.located(op, user_location()) from None


def psum_scatter(x: Atom, axis_name: str, scatter_dimension: int = 0, tiled: bool = False) -> Atom:
    size = lookup(axis_name, "psum_scatter").size
    dim = axis_in_range(scatter_dimension, x.aval, "scatter_dimension", "psum_scatter")
    blocks_check(x.aval, dim, axis_name, size, bool(tiled), "scatter_dimension", "psum_scatter")
    return bind(  # type: ignore[no-any-return]
        psum_scatter_p, x, axis_name=axis_name, axis_size=size, scatter_dimension=dim, tiled=bool(tiled)
    )


def all_to_all(x: Atom, axis_name: str, split_axis: int, concat_axis: int, tiled: bool = False) -> Atom:
    """Untiled (jax's default), ``split_axis`` has one slice per member and goes away, and the members' slices
    stack along a new axis at ``concat_axis`` of the result: a unit axis inserted before the tiled primitive and
    dropped after it."""
    size = lookup(axis_name, "all_to_all").size
    split = axis_in_range(split_axis, x.aval, "split_axis", "all_to_all")
    concat = axis_in_range(concat_axis, x.aval, "concat_axis", "all_to_all")
    blocks_check(x.aval, split, axis_name, size, bool(tiled), "split_axis", "all_to_all")
    if tiled or split == concat:
        return bind(  # type: ignore[no-any-return]
            all_to_all_p, x, axis_name=axis_name, axis_size=size, split_axis=split, concat_axis=concat
        )
    if split < concat:
        concat += 1  # concat_axis counts the result's axes, which lack split_axis
    else:
        split += 1  # the unit axis goes in before split_axis
    shape, names = list(x.aval.shape), list(x.aval.dims)
    shape.insert(concat, 1)
    names.insert(concat, None)
    unit = S.reshape(x, shape, names)
    out = bind(all_to_all_p, unit, axis_name=axis_name, axis_size=size, split_axis=split, concat_axis=concat)
    del shape[split], names[split]
    shape[concat - (split < concat)] = size
    return S.reshape(out, shape, names)


def ppermute(x: Atom, axis_name: str, perm: Sequence[tuple[int, int]]) -> Atom:
    size = lookup(axis_name, "ppermute").size
    pairs = _perm_pairs(perm)
    return bind(ppermute_p, x, axis_name=axis_name, axis_size=size, perm=pairs)  # type: ignore[no-any-return]


def axis_index(axis_name: str) -> Atom:
    return bind(axis_index_p, axis_name=axis_name, axis_size=lookup(axis_name, "axis_index").size)  # type: ignore[no-any-return]
