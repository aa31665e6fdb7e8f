"""Structural primitives that move data without arithmetic: broadcast_in_dim, reshape, transpose.

Also the small atom-level helpers that rules of other families build on (zeros, full_like, moving a batch
axis), since they are made of these primitives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..bounded import remember
from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval, DimName, literal
from ..primitive import Primitive
from ..shapes import check_sizes, memoized_shape_rule, unify_axis
from ..zeros import MaybeZero, Zero
from .. import primitives as _family  # reductions, read at call time: it builds on this module

# ------------------------------------------------------------------------------------------ broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_shape
@memoized_shape_rule  # runs for every broadcast staged, including every scalar constant
def _broadcast_shape(
    x: Aval, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...], names: tuple[DimName, ...]
) -> Aval:
    op = "broadcast_in_dim"
    check_sizes(op, shape)
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(f"operand {x} needs {x.ndim} broadcast dimensions, got {broadcast_dimensions}", op)
    if len(names) != len(shape):
        raise ShapeError(f"{len(names)} dim names for a rank-{len(shape)} result", op)
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions) or any(
        not 0 <= d < len(shape) for d in broadcast_dimensions
    ):
        raise ShapeError(f"invalid broadcast dimensions {broadcast_dimensions} for result rank {len(shape)}", op)
    dims = list(names)
    for axis, out_axis in enumerate(broadcast_dimensions):
        n = x.shape[axis]
        if n == shape[out_axis]:
            target = Aval((n,), x.dtype, (names[out_axis],))
            dims[out_axis] = unify_axis(op, (x, target), (axis, 0))
        elif n != 1:
            raise ShapeError(f"cannot broadcast axis {axis} of {x} to size {shape[out_axis]}", op)
    return Aval(tuple(shape), x.dtype, dims)


def broadcast_in_dim(
    x: Atom, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...], names: Sequence[DimName] | None = None
) -> Atom:
    names_t = tuple(names) if names is not None else (None,) * len(shape)
    if x.aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    check_sizes("broadcast_in_dim", shape)  # here too: a memoized rule would take True or 2.0 for a cached 1 or 2
    return bind(  # type: ignore[no-any-return]
        broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions), names=names_t
    )


def broadcast_to(x: Atom, aval: Aval) -> Atom:
    """Broadcast ``x`` (rank 0, or trailing-aligned with equal or unit sizes) to ``aval``'s shape and dim names."""
    shape = aval.shape
    if x.aval.shape == shape and x.aval.dims == aval.dims:  # the type asked for already: nothing to do
        return x
    rank = len(shape)
    check_sizes("broadcast_in_dim", shape)
    # ``broadcast_in_dim``'s bind, with the params already tuples (an operator broadcasting a bias runs this)
    return bind(  # type: ignore[no-any-return]
        broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=tuple(range(rank - len(x.aval.shape), rank)),
        names=aval.dims,
    )


@broadcast_in_dim_p.def_jvp
def _broadcast_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    if isinstance(t, Zero):
        return (Zero(outs[0].aval),)
    return (bind(broadcast_in_dim_p, t, **params),)


@broadcast_in_dim_p.def_vjp
def _broadcast_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, shape: Any, broadcast_dimensions: Any,
    names: Any,
) -> Any:
    (ct,) = cts
    x = primals[0]
    if isinstance(ct, Zero):
        return (Zero(x.aval),)
    key: Any = (x.aval.shape, shape, broadcast_dimensions)
    try:
        summed_axes = _BROADCAST_VJP_AXES.get(key)
    except TypeError:  # params given as lists
        key, summed_axes = None, None
    if summed_axes is None:
        new_axes = tuple(a for a in range(len(shape)) if a not in broadcast_dimensions)
        stretched = tuple(
            broadcast_dimensions[i] for i in range(x.aval.ndim) if x.aval.shape[i] != shape[broadcast_dimensions[i]]
        )
        summed_axes = tuple(sorted(new_axes + stretched))
        if key is not None:
            remember(_BROADCAST_VJP_AXES, key, summed_axes, 1024)
    if summed_axes:  # sorted already: ``reduce_sum``'s bind, without sorting them again
        ct = bind(_family.reductions.reduce_sum_p, ct, axes=summed_axes)
    return (reshape_like(ct, x.aval),)


# The axes ``_broadcast_vjp`` sums, by operand shape, result shape and broadcast dimensions (a function of those
# alone; bounded).
_BROADCAST_VJP_AXES: dict[Any, tuple[int, ...]] = {}


@broadcast_in_dim_p.def_batch
def _broadcast_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, shape: Any, broadcast_dimensions: Any, names: Any
) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    # The batch axis lands right after the result axis of the operand axis before it: operand axes keep their
    # order in the result, so no transpose is needed, and a leading batch axis stays leading.
    out_d = broadcast_dimensions[d - 1] + 1 if d > 0 else 0
    shifted = tuple(b + (b >= out_d) for b in broadcast_dimensions)
    out_shape = (*shape[:out_d], x.aval.shape[d], *shape[out_d:])
    out_names = (*names[:out_d], x.aval.dims[d], *names[out_d:])
    return broadcast_in_dim(x, out_shape, (*shifted[:d], out_d, *shifted[d:]), out_names), out_d


# ------------------------------------------------------------------------------------------------ reshape

reshape_p = Primitive("reshape")


@reshape_p.def_shape
@memoized_shape_rule  # runs for every reshape staged (VJP rules restore dim names with one)
def _reshape_shape(x: Aval, *, new_sizes: tuple[int, ...], names: tuple[DimName, ...]) -> Aval:
    size = 1
    for n in new_sizes:
        size *= n
    if size != x.size or any(n < 0 for n in new_sizes):
        raise ShapeError(f"cannot reshape {x} ({x.size} elements) to {new_sizes} ({size} elements)", "reshape")
    if len(names) != len(new_sizes):
        raise ShapeError(f"{len(names)} dim names for a rank-{len(new_sizes)} result", "reshape")
    return Aval(tuple(new_sizes), x.dtype, names)


def reshape(x: Atom, new_sizes: Sequence[int], names: Sequence[DimName] | None = None) -> Atom:
    sizes = tuple(int(n) for n in new_sizes)
    names_t = tuple(names) if names is not None else (None,) * len(sizes)
    if x.aval.shape == sizes and x.aval.dims == names_t:
        return x
    return bind(reshape_p, x, new_sizes=sizes, names=names_t)  # type: ignore[no-any-return]


def reshape_like(x: Atom, aval: Aval) -> Atom:
    """``reshape(x, aval.shape, aval.dims)``: VJP rules give cotangents their operand's shape and dim names
    with it, mostly to a type ``x`` already has (then ``x`` itself, found without building the arguments)."""
    if x.aval is aval or x.aval._key == aval._key:  # ``==`` without its Python call
        return x
    return reshape(x, aval.shape, aval.dims)


@reshape_p.def_jvp
def _reshape_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (bind(reshape_p, t, **params),)


@reshape_p.def_vjp
def _reshape_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, **params: Any) -> Any:
    (ct,) = cts
    x = primals[0]
    return (Zero(x.aval),) if isinstance(ct, Zero) else (reshape_like(ct, x.aval),)


@reshape_p.def_batch
def _reshape_batch(args: Sequence[Atom], dims: Sequence[int | None], *, new_sizes: Any, names: Any) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    # Row-major reshapes keep an axis in place when the axes before it hold as many elements as a prefix of
    # the new sizes: then the batch axis needs no transpose to the front.
    before = 1
    for n in x.aval.shape[:d]:
        before *= n
    prefix, k = 1, 0
    while prefix < before and k < len(new_sizes):
        prefix *= new_sizes[k]
        k += 1
    if prefix != before:
        x, d, k = moveaxis(x, d, 0), 0, 0
    sizes = (*new_sizes[:k], x.aval.shape[d], *new_sizes[k:])
    return reshape(x, sizes, (*names[:k], x.aval.dims[d], *names[k:])), k


# ---------------------------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


@transpose_p.def_shape
def _transpose_shape(x: Aval, *, permutation: tuple[int, ...]) -> Aval:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"{permutation} is not a permutation of the axes of {x}", "transpose")
    return Aval(tuple(x.shape[p] for p in permutation), x.dtype, tuple(x.dims[p] for p in permutation))


def transpose(x: Atom, permutation: Sequence[int]) -> Atom:
    perm = tuple(permutation)
    if perm == tuple(range(len(perm))):
        return x
    return bind(transpose_p, x, permutation=perm)  # type: ignore[no-any-return]


def inverse_permutation(permutation: Sequence[int]) -> tuple[int, ...]:
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return tuple(inverse)


@transpose_p.def_jvp
def _transpose_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, permutation: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (transpose(t, permutation),)


@transpose_p.def_vjp
def _transpose_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, permutation: Any) -> Any:
    (ct,) = cts
    x = primals[0]
    return (Zero(x.aval),) if isinstance(ct, Zero) else (transpose(ct, inverse_permutation(permutation)),)


@transpose_p.def_batch
def _transpose_batch(args: Sequence[Atom], dims: Sequence[int | None], *, permutation: Any) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    per_example = [p if p < d else p + 1 for p in permutation]  # operand axes with the batch axis removed
    return transpose(x, (d, *per_example)), 0


# ----------------------------------------------------------------------------- helpers built on the above


def moveaxis(x: Atom, source: int, destination: int) -> Atom:
    if source == destination:
        return x
    order = [a for a in range(x.aval.ndim) if a != source]
    order.insert(destination, source)
    return transpose(x, order)


def full_like(x: Atom | Aval, value: complex) -> Atom:  # (int, float and bool are complex to the checker)
    """A tensor of ``value`` with the shape, dtype and dim names of ``x``."""
    aval = x if isinstance(x, Aval) else x.aval
    return broadcast_in_dim(literal(value, aval.dtype), aval.shape, (), aval.dims)


def zeros(aval: Aval) -> Atom:
    return full_like(aval, 0)


def instantiate(x: MaybeZero) -> Atom:
    """A symbolic Zero made dense (for rules and results that need an actual value)."""
    return zeros(x.aval) if isinstance(x, Zero) else x


def align_batch(
    x: Atom, d: int | None, target: int, size: int, example: Aval, batch_name: DimName = None
) -> Atom:
    """Bring ``x`` to the batched form of ``example`` with the batch axis at ``target``.

    Unbatched rank-0 operands stay scalars (elementwise primitives broadcast them); batched per-example scalars
    and unbatched full operands are broadcast; batched full operands have their batch axis moved.
    """
    example_rank = x.aval.ndim - (d is not None)
    if d is None:
        if x.aval.ndim == 0:
            return x
        shape = (*x.aval.shape[:target], size, *x.aval.shape[target:])
        dims = (*x.aval.dims[:target], batch_name, *x.aval.dims[target:])
        mapped = tuple(a if a < target else a + 1 for a in range(x.aval.ndim))
        return broadcast_in_dim(x, shape, mapped, dims)
    if example_rank == 0 and example.ndim > 0:
        shape = (*example.shape[:target], size, *example.shape[target:])
        dims = (*example.dims[:target], x.aval.dims[d], *example.dims[target:])
        return broadcast_in_dim(x, shape, (target,), dims)
    return moveaxis(x, d, target)


def unbatched_aval(x: Atom, d: int | None) -> Aval:
    """The per-example type of a (possibly) batched operand."""
    if d is None:
        return x.aval
    keep = [a for a in range(x.aval.ndim) if a != d]
    return Aval(tuple(x.aval.shape[a] for a in keep), x.aval.dtype, tuple(x.aval.dims[a] for a in keep))
