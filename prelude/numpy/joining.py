"""Joining and splitting: concatenate, stack, vstack, hstack, dstack, block, split, array_split, hsplit, vsplit,
dsplit, take, take_along_axis, trim_zeros.

Operands must share a dtype (no promotion) and agree on every axis but the joined one, dim names included.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...staging.ir import Atom, DimName
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import _named, atom, as_tensor, describe, dtype_error, op, result_dtype, shape_error, wrap
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



def take(
    x: AnyTensor, indices: Any, axis: int | None = None, mode: Literal["raise", "wrap", "clip"] = "raise"
) -> AnyTensor:
    """Elements at ``indices`` along ``axis`` (the flattened array when None). ``mode`` as NumPy's: ``"raise"``
    checks static indices (staged ones clamp into range, negative ones counting from the end, as in indexing),
    ``"wrap"`` takes them modulo the axis size, ``"clip"`` clips them into ``[0, size - 1]`` (negative ones to 0)."""
    if mode not in ("raise", "wrap", "clip"):
        raise _named(ValueError(f"mode must be 'raise', 'wrap' or 'clip', got {mode!r}"), "take")
    if isinstance(indices, tuple):  # NumPy reads a tuple of indices as an array of them, not as an index tuple
        indices = np.asarray(indices)
    if mode == "raise":
        check_host_indices("take", x, lambda probe: np.take(probe, indices, axis), indices)
    return _take(x, indices, axis, mode)


@op
def _take(x: AnyTensor, indices: Any, axis: int | None, mode: str) -> AnyTensor:
    t = as_tensor(x)
    a = t.atom
    if axis is None:
        a = S.reshape(a, (a.aval.size,))
        axis = 0
    ax = _axis("take", axis, a.aval.ndim, [a])
    if mode != "raise":
        indices = _in_range(indices, a.aval.shape[ax], mode)
    return wrap(index_atom("take", a, (slice(None),) * ax + (indices,)))


def _in_range(indices: Any, size: int, mode: str) -> Any:
    """Integer ``indices`` wrapped modulo ``size`` or clipped into ``[0, size - 1]``."""
    if size == 0:
        raise IndexError(f"take: cannot take from an empty axis (mode={mode!r})")
    if not isinstance(indices, Tensor):
        host = np.asarray(indices)
        if host.dtype.kind not in "iu":
            raise TypeError(f"take: indices must be integers, got {describe(host)}")
        return np.mod(host, size) if mode == "wrap" else np.clip(host, 0, size - 1)
    i = as_tensor(indices).atom
    if not _dt.is_integer(i.aval.dtype):
        raise dtype_error("take", f"indices must be integers, got {describe(indices)}")
    if i.aval.dtype.itemsize < 4 or i.aval.dtype.kind == "u":  # room for the size and for negative remainders
        i = E.convert(i, np.dtype(np.int32) if i.aval.dtype.itemsize < 4 else np.dtype(np.int64))
    if mode == "clip":
        return wrap(E.clamp(E.scalar(0, i), i, E.scalar(size - 1, i)))
    remainder = E.rem(i, E.scalar(size, i))  # truncated: negative for negative indices
    negative = E.lt(remainder, E.scalar(0, i))
    return wrap(E.select(negative, E.add(remainder, E.scalar(size, i)), remainder))


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


def hsplit(x: AnyTensor, indices_or_sections: int | Sequence[int]) -> list[AnyTensor]:
    """``split`` along axis 1 (axis 0 of a 1-D operand)."""
    return _split_rank("hsplit", x, indices_or_sections, 1, 1)


def vsplit(x: AnyTensor, indices_or_sections: int | Sequence[int]) -> list[AnyTensor]:
    """``split`` along axis 0 of an operand of rank >= 2."""
    return _split_rank("vsplit", x, indices_or_sections, 2, 0)


def dsplit(x: AnyTensor, indices_or_sections: int | Sequence[int]) -> list[AnyTensor]:
    """``split`` along axis 2 of an operand of rank >= 3."""
    return _split_rank("dsplit", x, indices_or_sections, 3, 2)


@op
def _split_rank(op_name: str, x: AnyTensor, sections: int | Sequence[int], rank: int, axis: int) -> list[AnyTensor]:
    t = as_tensor(x)
    if t.aval.ndim < rank:
        raise shape_error(op_name, f"needs an operand of rank >= {rank}, got {describe(t)}")
    return _split(op_name, t, sections, min(axis, t.aval.ndim - 1), exact=True)


@op
def block(arrays: Any) -> AnyTensor:
    """NumPy's block: nested lists of arrays joined innermost-last (the deepest lists along the last axis)."""
    depth = _block_depth(arrays)
    leaves = _block_leaves(arrays)
    rank = max([depth] + [as_tensor(a).aval.ndim for a in leaves])
    return wrap(_block_join(arrays, depth, rank, result_dtype("block", leaves)))


def _block_depth(arrays: Any, where: str = "arrays") -> int:
    if isinstance(arrays, tuple):
        raise TypeError(f"block: {where} is a tuple; only lists nest (as in NumPy)")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError(f"block: {where} is an empty list")
    depths = {_block_depth(a, f"{where}[{k}]") for k, a in enumerate(arrays)}
    if len(depths) > 1:
        raise ValueError(f"block: the lists in {where} are nested to different depths {sorted(depths)}")
    return depths.pop() + 1


def _block_leaves(arrays: Any) -> list[Any]:
    return [leaf for a in arrays for leaf in _block_leaves(a)] if isinstance(arrays, list) else [arrays]


def _block_join(arrays: Any, depth: int, rank: int, dtype: Any) -> Atom:
    if not isinstance(arrays, list):
        a = atom(arrays, dtype)
        return S.reshape(a, (1,) * (rank - a.aval.ndim) + a.aval.shape, (None,) * (rank - a.aval.ndim) + a.aval.dims)
    parts = [_block_join(a, depth - 1, rank, dtype) for a in arrays]
    return _join("block", parts, rank - depth)


def trim_zeros(filt: AnyTensor, trim: str = "fb") -> AnyTensor:
    """NumPy's trim_zeros of a 1-D array: its result's length depends on the data, so it reads the data and works
    on concrete arrays only (slice with static bounds inside a program)."""
    from ...array import as_host_array
    from ...staging.builder import is_staging

    if is_staging():
        raise shape_error("trim_zeros", "the result's length depends on the data, which a staged program cannot "
                          "read: slice with static bounds instead")
    if not isinstance(trim, str) or set(trim.lower()) - set("fb"):
        raise ValueError(f"trim_zeros: trim must be a combination of 'f' and 'b', got {trim!r}")
    host = as_host_array(filt)
    if host.ndim != 1:
        raise shape_error("trim_zeros", f"needs a 1-D operand, got {describe(host)}")
    nonzero = np.flatnonzero(host)
    # all zeros: every element is both leading and trailing, so trimming either end empties the array
    first = int(nonzero[0]) if nonzero.size else host.size
    last = int(nonzero[-1]) + 1 if nonzero.size else 0
    lo = first if "f" in trim.lower() else 0
    hi = last if "b" in trim.lower() else host.size
    return _slice_host(filt, lo, max(lo, hi))


@op
def _slice_host(x: AnyTensor, lo: int, hi: int) -> AnyTensor:
    return wrap(SL.slice_in_dim(as_tensor(x).atom, lo, hi, 0))
