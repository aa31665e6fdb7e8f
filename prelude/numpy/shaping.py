"""Shape manipulation: reshape, transpose, axes moves, squeeze/expand, broadcast."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...staging.ir import Aval, DimName
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import as_tensor, describe, normalize_axes, op, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def reshape(x: AnyTensor, shape: int | Sequence[int]) -> AnyTensor:
    """NumPy reshape (one ``-1`` allowed). Axes that survive unchanged at the ends keep their dim names."""
    t = as_tensor(x)
    items = (shape,) if isinstance(shape, int) else tuple(shape)
    sizes = [int(n) for n in items]
    if sizes.count(-1) > 1:
        raise shape_error("reshape", f"only one -1 is allowed in {tuple(sizes)}")
    known = math.prod(n for n in sizes if n != -1)
    if -1 in sizes:
        if known == 0 or t.aval.size % known:
            raise shape_error("reshape", f"cannot reshape {describe(t)} to {tuple(sizes)}")
        sizes[sizes.index(-1)] = t.aval.size // known
    if math.prod(sizes) != t.aval.size or any(n < 0 for n in sizes):
        raise shape_error(
            "reshape", f"cannot reshape {describe(t)} ({t.aval.size} elements) to {tuple(sizes)}"
        )
    return wrap(S.reshape(t.atom, tuple(sizes), _carried_names(t.aval.shape, t.aval.dims, sizes)))


def _carried_names(old: tuple[int, ...], names: tuple[DimName, ...], new: Sequence[int]) -> tuple[DimName, ...]:
    out: list[DimName] = [None] * len(new)
    lead = 0
    while lead < min(len(old), len(new)) and old[lead] == new[lead]:
        out[lead] = names[lead]
        lead += 1
    trail = 1
    while trail <= min(len(old), len(new)) - lead and old[-trail] == new[-trail]:
        out[len(new) - trail] = names[len(old) - trail]
        trail += 1
    return tuple(out)


@op
def transpose(x: AnyTensor, axes: Sequence[int | type] | None = None) -> AnyTensor:
    t = as_tensor(x)
    if axes is None:
        perm = tuple(reversed(range(t.aval.ndim)))
    else:
        perm = normalize_axes("transpose", tuple(axes), t)
        if len(perm) != t.aval.ndim:
            raise shape_error("transpose", f"axes {tuple(axes)} are not a permutation of the axes of {describe(t)}")
    return wrap(S.transpose(t.atom, perm))


@op
def swapaxes(x: AnyTensor, axis1: int | type, axis2: int | type) -> AnyTensor:
    t = as_tensor(x)
    a, b = normalize_axes("swapaxes", (axis1, axis2), t) if axis1 != axis2 else (0, 0)
    perm = list(range(t.aval.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return wrap(S.transpose(t.atom, perm))


@op
def moveaxis(x: AnyTensor, source: int | type, destination: int) -> AnyTensor:
    t = as_tensor(x)
    (src,) = normalize_axes("moveaxis", source, t)
    (dst,) = normalize_axes("moveaxis", destination, t)
    return wrap(S.moveaxis(t.atom, src, dst))


@op
def squeeze(x: AnyTensor, axis: int | type | Sequence[int | type] | None = None) -> AnyTensor:
    t = as_tensor(x)
    if axis is None:
        axes = tuple(a for a, n in enumerate(t.aval.shape) if n == 1)
    else:
        axes = normalize_axes("squeeze", axis, t)
        wide = [a for a in axes if t.aval.shape[a] != 1]
        if wide:
            raise shape_error("squeeze", f"cannot squeeze axis {wide[0]} of {describe(t)}: its size is not 1")
    keep = [a for a in range(t.aval.ndim) if a not in axes]
    return wrap(
        S.reshape(t.atom, tuple(t.aval.shape[a] for a in keep), tuple(t.aval.dims[a] for a in keep))
    )


@op
def expand_dims(x: AnyTensor, axis: int | Sequence[int]) -> AnyTensor:
    t = as_tensor(x)
    items = (axis,) if isinstance(axis, int) else tuple(axis)
    rank = t.aval.ndim + len(items)
    new_axes = sorted(a % rank if -rank <= a < rank else _bad_axis(a, rank) for a in items)
    shape = list(t.aval.shape)
    dims = list(t.aval.dims)
    for a in new_axes:
        shape.insert(a, 1)
        dims.insert(a, None)
    return wrap(S.reshape(t.atom, tuple(shape), tuple(dims)))


def _bad_axis(axis: int, rank: int) -> int:
    raise shape_error("expand_dims", f"axis {axis} is out of range for a result of rank {rank}")


@op
def broadcast_to(x: AnyTensor, shape: Sequence[int]) -> AnyTensor:
    """Broadcast to ``shape`` with NumPy's rules (leading axes may be added)."""
    t = as_tensor(x)
    target = tuple(int(n) for n in shape)
    if len(target) < t.aval.ndim:
        raise shape_error("broadcast_to", f"cannot broadcast {describe(t)} to the lower-rank shape {target}")
    offset = len(target) - t.aval.ndim
    for a, n in enumerate(t.aval.shape):
        if n not in (1, target[offset + a]):
            raise shape_error("broadcast_to", f"cannot broadcast {describe(t)} to {target}: axis {a} has size {n}")
    dims: list[DimName] = [None] * offset
    dims += [d if n == target[offset + a] else None for a, (n, d) in enumerate(zip(t.aval.shape, t.aval.dims))]
    return wrap(S.broadcast_to(t.atom, Aval(target, t.aval.dtype, dims)))


@op
def ravel(x: AnyTensor) -> AnyTensor:
    t = as_tensor(x)
    return wrap(S.reshape(t.atom, (t.aval.size,), (None,)))
