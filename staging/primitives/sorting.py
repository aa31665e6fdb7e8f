"""``sort``: stable sort of several same-shaped operands along one axis, ordered by the first.

The other operands ride along (a key-value sort), which is how permutations, argsort and the derivative rules
are all expressed: the JVP sorts the tangents along with the keys, and the VJP sorts cotangents back by the
sorted positions (sorting by a permutation applies its inverse), so no gather is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype, describe
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from . import structural as S
from .slicing import iota

sort_p = Primitive("sort", multiple_results=True)


@sort_p.def_shape
def _sort_shape(*operands: Aval, dimension: int) -> tuple[Aval, ...]:
    if not operands:
        raise ShapeError("sort needs at least one operand", "sort")
    first = operands[0]
    check_dtype("sort", first, E.ANY, E.ORDERED)
    if any(op.shape != first.shape for op in operands):
        raise ShapeError(f"operands must have one shape, got {describe(operands)}", "sort")
    if not 0 <= dimension < first.ndim:
        raise ShapeError(f"dimension {dimension} is out of range for {first}", "sort")
    return tuple(operands)


def sort(operands: Sequence[Atom], dimension: int) -> tuple[Atom, ...]:
    """Sort every operand along ``dimension`` by the values of ``operands[0]`` (stable)."""
    return tuple(bind(sort_p, *operands, dimension=dimension))


def positions(aval: Aval, dimension: int) -> Atom:
    """Each element's index along ``dimension`` (i32), broadcast to ``aval``'s shape."""
    return iota(dtypes.DEFAULT_INT, aval.shape, dimension, aval.dims)


@sort_p.def_jvp
def _sort_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, dimension: int) -> Any:
    moving = [i for i, t in enumerate(tangents) if not is_zero(t) and dtypes.is_inexact(primals[i].aval.dtype)]
    result: list[MaybeZero] = [Zero(o.aval) for o in outs]
    if not moving:
        return tuple(result)
    sorted_tangents = sort([primals[0], *(S.instantiate(tangents[i]) for i in moving)], dimension)[1:]
    for i, t in zip(moving, sorted_tangents):
        result[i] = t
    return tuple(result)


@sort_p.def_vjp
def _sort_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, dimension: int
) -> Any:
    needed = [i for i, ct in enumerate(cts) if wants[i] and not is_zero(ct) and dtypes.is_inexact(primals[i].aval.dtype)]
    result: list[MaybeZero] = [Zero(p.aval) for p in primals]
    if not needed:
        return tuple(result)
    # Where each sorted element came from; sorting the cotangents by it puts them back in place.
    origin = sort([primals[0], positions(primals[0].aval, dimension)], dimension)[1]
    restored = sort([origin, *(S.instantiate(cts[i]) for i in needed)], dimension)[1:]
    for i, ct in zip(needed, restored):
        result[i] = ct
    return tuple(result)


@sort_p.def_batch
def _sort_batch(args: Sequence[Atom], dims: Sequence[int | None], *, dimension: int) -> Any:
    batched = next(a for a, d in zip(args, dims) if d is not None)
    size = batched.aval.shape[dims[args.index(batched)]]  # type: ignore[index]
    example = S.unbatched_aval(batched, dims[args.index(batched)])
    aligned = [S.align_batch(a, d, 0, size, example) for a, d in zip(args, dims)]
    outs = sort(aligned, dimension + 1)
    return outs, (0,) * len(outs)
