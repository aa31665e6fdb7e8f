"""Joining and splitting: concatenate, stack, vstack, hstack, dstack, split, array_split, pad, take,
take_along_axis.

Operands must share a dtype (no promotion) and agree on every axis but the joined one, dim names included.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...staging.ir import Atom, DimName
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import atom, as_tensor, describe, op, result_dtype, shape_error, wrap
from .indexing import check_host_indices, index_atom

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def _operands(op_name: str, arrays: Sequence[Any]) -> list[Atom]:
    if isinstance(arrays, Tensor) or not len(arrays):
        raise shape_error(op_name, "needs a non-empty sequence of arrays")
    dtype = result_dtype(op_name, arrays)
    return [atom(a, dtype) for a in arrays]


def _axis(op_name: str, axis: int, rank: int, operands: Sequence[Atom]) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise shape_error(op_name, f"axis {axis!r} must be an int") from None
    if not -rank <= axis < rank:
        raise shape_error(
            op_name, f"axis {axis} is out of range for operands {', '.join(str(a.aval) for a in operands)}"
        )
    return axis % rank


def _join(op_name: str, atoms: Sequence[Atom], axis: int) -> Atom:
    first = atoms[0].aval
    for a in atoms[1:]:
        other = a.aval
        if other.ndim != first.ndim or any(
            n != m or (d is not None and e is not None and d != e)
            for k, (n, m, d, e) in enumerate(zip(first.shape, other.shape, first.dims, other.dims))
            if k != axis
        ):
            raise shape_error(
                op_name,
                f"operands {', '.join(str(b.aval) for b in atoms)} must agree on every axis except axis {axis}",
            )
    return SL.concatenate(list(atoms), axis)


@op
def concatenate(arrays: Sequence[AnyTensor], axis: int | None = 0) -> AnyTensor:
    atoms = _operands("concatenate", arrays)
    if axis is None:
        atoms = [S.reshape(a, (a.aval.size,)) for a in atoms]
        axis = 0
    if any(a.aval.ndim == 0 for a in atoms):
        raise shape_error("concatenate", f"zero-rank operands cannot be concatenated: {describe_all(atoms)}")
    return wrap(_join("concatenate", atoms, _axis("concatenate", axis, atoms[0].aval.ndim, atoms)))


def describe_all(atoms: Sequence[Atom]) -> str:
    return ", ".join(str(a.aval) for a in atoms)


def _expanded(a: Atom, axis: int) -> Atom:
    shape = list(a.aval.shape)
    names: list[DimName] = list(a.aval.dims)
    shape.insert(axis, 1)
    names.insert(axis, None)
    return S.reshape(a, shape, names)


@op
def stack(arrays: Sequence[AnyTensor], axis: int = 0) -> AnyTensor:
    atoms = _operands("stack", arrays)
    first = atoms[0].aval
    if any(a.aval.shape != first.shape for a in atoms):
        raise shape_error("stack", f"all operands must have one shape, got {describe_all(atoms)}")
    axis = _axis("stack", axis, first.ndim + 1, atoms)
    return wrap(_join("stack", [_expanded(a, axis) for a in atoms], axis))


def _at_least(a: Atom, rank: int) -> Atom:
    """NumPy's atleast_2d/3d placement: (N,) -> (1, N) -> (1, N, 1)."""
    if a.aval.ndim >= rank:
        return a
    if a.aval.ndim == 0:
        a = S.reshape(a, (1,))
    if rank >= 2 and a.aval.ndim == 1:
        a = _expanded(a, 0)
    if rank == 3 and a.aval.ndim == 2:
        a = _expanded(a, 2)
    return a


@op
def vstack(arrays: Sequence[AnyTensor]) -> AnyTensor:
    atoms = [_at_least(a, 2) for a in _operands("vstack", arrays)]
    return wrap(_join("vstack", atoms, 0))


@op
def hstack(arrays: Sequence[AnyTensor]) -> AnyTensor:
    atoms = [_at_least(a, 1) for a in _operands("hstack", arrays)]
    return wrap(_join("hstack", atoms, 0 if atoms[0].aval.ndim == 1 else 1))


@op
def dstack(arrays: Sequence[AnyTensor]) -> AnyTensor:
    atoms = [_at_least(a, 3) for a in _operands("dstack", arrays)]
    return wrap(_join("dstack", atoms, 2))


def _split_points(op_name: str, n: int, sections: int | Sequence[int], exact: bool) -> list[int]:
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise shape_error(op_name, f"number of sections must be positive, got {k}")
        if exact and n % k:
            raise shape_error(op_name, f"axis of size {n} does not split into {k} equal sections; use array_split")
        base, extra = divmod(n, k)
        sizes = [base + (i < extra) for i in range(k)]
        return list(np.cumsum([0, *sizes]))
    points = [operator.index(i) for i in sections]
    return [0, *[min(max(i if i >= 0 else n + i, 0), n) for i in points], n]


def _split(op_name: str, x: Any, sections: int | Sequence[int], axis: int, exact: bool) -> list[AnyTensor]:
    t = as_tensor(x)
    rank = t.aval.ndim
    if rank == 0:
        raise shape_error(op_name, f"cannot split a rank-0 operand {describe(t)}")
    ax = _axis(op_name, axis, rank, [t.atom])
    points = _split_points(op_name, t.aval.shape[ax], sections, exact)
    return [wrap(SL.slice_in_dim(t.atom, lo, max(lo, hi), ax)) for lo, hi in zip(points[:-1], points[1:])]


@op
def split(x: AnyTensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[AnyTensor]:
    return _split("split", x, indices_or_sections, axis, exact=True)


@op
def array_split(x: AnyTensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[AnyTensor]:
    return _split("array_split", x, indices_or_sections, axis, exact=False)


@op
def pad(x: AnyTensor, pad_width: Any, mode: str = "constant", constant_values: float | int | bool = 0) -> AnyTensor:
    """NumPy's pad in ``constant`` mode; ``pad_width`` is an int, ``(before, after)`` or one pair per axis."""
    t = as_tensor(x)
    if mode != "constant":
        raise shape_error("pad", f"mode {mode!r} is not supported; only mode='constant' is")
    rank = t.aval.ndim
    widths = np.asarray(pad_width)
    if widths.size and widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width {pad_width!r} must be integers")
    widths = widths.astype(np.int64)
    if (widths < 0).any():
        raise shape_error("pad", f"pad_width {pad_width!r} must be non-negative")
    if widths.ndim == 0:
        widths = np.full((rank, 2), int(widths))
    elif widths.shape == (2,) or widths.shape == (1, 2):
        widths = np.tile(widths.reshape(1, 2), (rank, 1))
    elif widths.shape == (1,):
        widths = np.full((rank, 2), int(widths[0]))
    if widths.shape != (rank, 2) or (widths < 0).any():
        raise shape_error("pad", f"pad_width {pad_width!r} must give non-negative (before, after) for {describe(t)}")
    value = atom(constant_values, t.aval.dtype)
    if value.aval.dtype != t.aval.dtype or value.aval.ndim != 0:
        raise shape_error("pad", f"constant_values must be a scalar of {describe(t)}'s dtype")
    return wrap(SL.pad(t.atom, value, [(int(lo), int(hi), 0) for lo, hi in widths]))


def take(x: AnyTensor, indices: Any, axis: int | None = None) -> AnyTensor:
    """Elements at ``indices`` along ``axis`` (the flattened array when None); staged indices clamp into range."""
    check_host_indices("take", x, lambda probe: np.take(probe, indices, axis), indices)
    return _take(x, indices, axis)


@op
def _take(x: AnyTensor, indices: Any, axis: int | None = None) -> AnyTensor:
    t = as_tensor(x)
    a = t.atom
    if axis is None:
        a = S.reshape(a, (a.aval.size,))
        axis = 0
    ax = _axis("take", axis, a.aval.ndim, [a])
    return wrap(index_atom("take", a, (slice(None),) * ax + (indices,)))


def take_along_axis(x: AnyTensor, indices: Any, axis: int | None) -> AnyTensor:
    """NumPy's take_along_axis: ``indices`` has ``x``'s rank and broadcasts against it on the other axes."""
    check_host_indices("take_along_axis", x, lambda probe: np.take_along_axis(probe, indices, axis), indices)
    return _take_along_axis(x, indices, axis)


@op
def _take_along_axis(x: AnyTensor, indices: Any, axis: int | None) -> AnyTensor:
    t = as_tensor(x)
    a = t.atom
    idx = as_tensor(indices) if not isinstance(indices, (list, np.ndarray)) else None
    host = np.asarray(indices) if idx is None else None
    if axis is None:
        a = S.reshape(a, (a.aval.size,))
        axis = 0
    rank = a.aval.ndim
    idx_rank = host.ndim if host is not None else idx.aval.ndim  # type: ignore[union-attr]
    if idx_rank != rank:
        raise shape_error(
            "take_along_axis", f"indices of rank {idx_rank} must have the rank of {a.aval} ({rank})"
        )
    ax = _axis("take_along_axis", axis, rank, [a])
    # Every other axis is indexed by an arange shaped to broadcast along its own axis only.
    index: list[Any] = []
    for k in range(rank):
        if k == ax:
            index.append(host if host is not None else idx)
        else:
            shape = [1] * rank
            shape[k] = a.aval.shape[k]
            index.append(np.arange(a.aval.shape[k]).reshape(shape))
    return wrap(index_atom("take_along_axis", a, tuple(index)))
