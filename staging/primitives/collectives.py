"""Collectives over a named mapped axis: psum, pmax, pmin, all_gather, ppermute, axis_index (pmean is psum / n).

Every equation carries ``axis_name`` and ``axis_size``, so shape rules, typecheck and lowering need no context.
The public helpers below look the axis up among the frames ``pmap``/``vmap`` pushed (``staging.axes``) and fail
with the axis name when it is not bound.

Semantics are per device (SPMD): each device's value is its own variable. Hence the transpose of ``psum`` is
``psum``: y_d = sum_k x_k for every d gives ct_x_k = sum_d ct_y_d. ``pmax``/``pmin`` route the derivative to the
devices that attain the extremum (ties share it, as ``reduce_max`` does). ``all_gather`` transposes to a psum
followed by each device taking its own slice; ``ppermute`` to the inverse permutation.

Batching: every collective says it uses the axis it names (``uses_axis``). Under ``vmap(f, axis_name="i")`` the
walker hands a collective over ``"i"`` to its ``axis_batch`` rule, even when its operand is unbatched, and that
rule emits the matching reduction over the batch axis; a collective over another axis goes to its ``batch`` rule,
which re-binds it on the batched operand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..axes import lookup
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval, literal
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


@psum_p.def_jvp
def _psum_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(psum_p, t, **params),)


@psum_p.def_vjp
def _psum_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, **params: Any) -> Any:
    (ct,) = cts
    return (Zero(primals[0].aval),) if isinstance(ct, Zero) else (bind(psum_p, ct, **params),)


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


@all_gather_p.def_jvp
def _all_gather_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(all_gather_p, t, **params),)


@all_gather_p.def_vjp
def _all_gather_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any,
    *, axis_name: str, axis_size: int, axis: int, tiled: bool,
) -> Any:
    (ct,) = cts
    x = primals[0].aval
    if isinstance(ct, Zero):
        return (Zero(x),)
    total = _bind_psum(ct, axis_name, axis_size)  # every member's contribution to each slice
    index = bind(axis_index_p, axis_name=axis_name, axis_size=axis_size)
    width = x.shape[axis] if tiled else 1
    start = E.mul(index, literal(width, INDEX_DTYPE)) if width != 1 else index
    starts: list[Atom | int] = [0] * total.aval.ndim
    starts[axis] = start
    sizes = list(total.aval.shape)
    sizes[axis] = width
    mine = L.dynamic_slice(total, starts, sizes)
    return (S.reshape(mine, x.shape, x.dims),)


all_gather_p.def_uses_axis(_uses_axis)


@all_gather_p.def_axis_batch
def _all_gather_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int, axis: int,
    tiled: bool,
) -> Any:
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    if d is None:  # every member holds the same value: gathering stacks copies of it
        x, d = S.broadcast_in_dim(x, (axis_size, *x.aval.shape), tuple(range(1, x.aval.ndim + 1))), 0
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


@ppermute_p.def_jvp
def _ppermute_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(ppermute_p, t, **params),)


@ppermute_p.def_vjp
def _ppermute_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, perm: Perm, **params: Any
) -> Any:
    (ct,) = cts
    if isinstance(ct, Zero):
        return (Zero(primals[0].aval),)
    inverse = tuple((t, s) for s, t in perm)
    return (bind(ppermute_p, ct, perm=inverse, **params),)


ppermute_p.def_uses_axis(_uses_axis)


@ppermute_p.def_axis_batch
def _ppermute_axis_batch(
    args: Sequence[Atom], dims: Sequence[int | None], size: int, *, axis_name: str, axis_size: int, perm: Perm
) -> Any:
    (x,), (d,) = args, dims
    _batched_size_check(x, d, size, axis_size)
    if d is None:
        x, d = S.broadcast_in_dim(x, (axis_size, *x.aval.shape), tuple(range(1, x.aval.ndim + 1))), 0
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


def _static_int(value: Any, what: str, op: str) -> int:
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
        source = _static_int(pair[0], "a perm source", "ppermute")
        pairs.append((source, _static_int(pair[1], "a perm destination", "ppermute")))
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
    axis = _static_int(axis, "axis", "all_gather")
    rank = x.aval.ndim if tiled else x.aval.ndim + 1
    if not -rank <= axis < rank:
        what = "a scalar has no axis to concatenate along" if tiled and rank == 0 else f"tiled={bool(tiled)}"
        raise ShapeError(f"axis {axis} is out of range for {x.aval} ({what})", "all_gather", user_location())
    return bind(  # type: ignore[no-any-return]
        all_gather_p, x, axis_name=axis_name, axis_size=size, axis=axis % rank, tiled=bool(tiled)
    )


def ppermute(x: Atom, axis_name: str, perm: Sequence[tuple[int, int]]) -> Atom:
    size = lookup(axis_name, "ppermute").size
    pairs = _perm_pairs(perm)
    return bind(ppermute_p, x, axis_name=axis_name, axis_size=size, perm=pairs)  # type: ignore[no-any-return]


def axis_index(axis_name: str) -> Atom:
    return bind(axis_index_p, axis_name=axis_name, axis_size=lookup(axis_name, "axis_index").size)  # type: ignore[no-any-return]
