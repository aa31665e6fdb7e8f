"""NumPy indexing: ``x[index]`` and the functional updates ``x.at[index].set/add/subtract/mul/multiply/min/max/get``.

Supported index items: ints (negative count from the end; out of range is an error), slices with any step,
``None``, ``...``, integer arrays, lists and nested tuples (advanced indexing with NumPy's rule for where the
advanced axes land: in place when the advanced items are adjacent, first otherwise; ints count as advanced items
next to arrays), static boolean masks (NumPy arrays, lists of bools, concrete device arrays, scalar bools: each
becomes the integer arrays of its ``nonzero()``, as in NumPy), and staged integer scalars or arrays (dynamic
indices).

Out-of-range static indices raise ``IndexOutOfRangeError``, both a ``ts.ShapeError`` and an ``IndexError``.
Dynamic indices (staged scalars and arrays; also device-array indices in eager calls, which are runtime inputs
so that new index values do not recompile; NumPy index arrays are checked on the host first) cannot be checked.
As in XLA and JAX, a read clamps them into range and an update whose index is out of range is dropped (unlike
JAX, the gradient of a clamped read flows to the element that was read); negative dynamic indices count from
the end like static ones, and indices of any integer dtype saturate rather than wrap when narrowed to int32.
Staged boolean masks are rejected: their result shape would depend on the data (use ``tnp.where``).

Update values follow the dtype rules of the rest of the library, where JAX casts: Python numbers (also in
nested lists) adopt the operand's dtype if they fit its kind, typed arrays must have the operand's dtype.

Basic indexing (ints, slices, None, ...) lowers to slice / reverse / reshape, a staged scalar index to
dynamic_slice; integer arrays to one gather. Updates are one scatter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, cast

import numpy as np
from typing_extensions import Unpack

from ...staging import dtypes as _dt
from ...staging.builder import bind, is_staging
from ...staging.errors import ShapeError
from ...staging.ir import Atom, Aval, DimName, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import gather_scatter as G
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...staging.source import user_location
from ...tensor import DT, Shape, Tensor, Traced
from ._core import as_tensor, atom, describe, dtype_error, op, result_dtype, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
INDEX = np.dtype(np.int32)


class IndexOutOfRangeError(ShapeError, IndexError):
    """A static index outside its axis: a ``ts.ShapeError`` that is also an ``IndexError``, as NumPy raises."""


def _range_error(op_name: str, message: str) -> IndexOutOfRangeError:
    return IndexOutOfRangeError(message, op_name, user_location())

# ------------------------------------------------------------------------------------- parsing an index


class _Full:
    """The whole axis (``:``)."""


class _Range:
    """A static slice: ``size`` elements ``start, start + step, ...`` (step may be negative)."""

    def __init__(self, start: int, step: int, size: int) -> None:
        self.start, self.step, self.size = start, step, size


class _Point:
    """One element: a static int (already in range) or a staged int32 scalar (negatives already wrapped)."""

    def __init__(self, value: int | Atom) -> None:
        self.value = value


class _Array:
    """An integer index array (int32, negatives wrapped), static (a literal) or staged. ``error``: a static
    out-of-range index, raised only if the broadcast index arrays are not empty (as NumPy does)."""

    def __init__(self, atom: Atom, error: ShapeError | None = None) -> None:
        self.atom = atom
        self.error = error


Item = _Full | _Range | _Point | _Array


def _bool_error(op_name: str, what: str) -> Exception:
    return shape_error(
        op_name,
        f"boolean mask index {what}: the result's shape would depend on the data, which a staged program "
        "cannot have; use tnp.where(mask, x, other) to select elementwise, or integer indices",
    )


def _dynamic_index(i: Atom, n: int) -> Atom:
    """A staged index as int32 with negatives wrapped; indices too wide for int32 are first saturated just past
    the axis (to ``-1`` or ``n``), so truncation cannot turn an out-of-range index into an in-range one."""
    dtype = i.aval.dtype
    if dtype.itemsize < INDEX.itemsize:
        return _dynamic_index(E.convert(i, INDEX), n)  # the axis size may not fit an i8 or i16 index
    if _dt.is_signed(dtype):
        i = E.select(E.lt(i, E.scalar(0, i)), E.add(i, E.scalar(n, i)), i)
        if dtype.itemsize > INDEX.itemsize:
            i = E.maximum(i, E.scalar(-1, i))
    if dtype.itemsize > INDEX.itemsize or not _dt.is_signed(dtype):
        i = E.minimum(i, E.scalar(n, i))
    return E.convert(i, INDEX)


def _static_array(op_name: str, value: np.ndarray[Any, Any], n: int, axis: int, x: Aval) -> _Array:
    if value.dtype == np.bool_:
        raise _bool_error(op_name, f"of shape {value.shape}")
    if value.size == 0:
        value = value.astype(np.int64)
    if value.dtype.kind not in "iu":
        raise shape_error(op_name, f"index arrays must be integers, got dtype {value.dtype} for axis {axis} of {x}")
    bad = (value < -n) | (value >= n)
    error = None
    if bad.any():
        error = _range_error(op_name, f"index {value[bad].flat[0]} is out of range for axis {axis} of {x} (size {n})")
        value = np.where(bad, 0, value)
    return _Array(literal(np.where(value < 0, value + n, value), INDEX), error)


def _classify(op_name: str, entry: Any, n: int, axis: int, x: Aval) -> Item:
    if isinstance(entry, slice):
        for bound in (entry.start, entry.stop, entry.step):
            if bound is not None and not isinstance(bound, (int, np.integer)):
                raise shape_error(
                    op_name,
                    f"slice bounds must be static ints, got {entry!r} for axis {axis} of {x}; a window at a staged "
                    "offset has a static size: index with tnp.arange(size) + start",
                )
        if entry.step == 0:
            raise shape_error(op_name, f"slice step cannot be zero (axis {axis} of {x})")
        start, stop, step = entry.indices(n)
        size = len(range(start, stop, step))
        return _Full() if (start, step, size) == (0, 1, n) else _Range(start, step, size)
    if isinstance(entry, Traced):
        if entry.aval.dtype == _dt.BOOL:
            raise _bool_error(op_name, describe(entry))
        if not _dt.is_integer(entry.aval.dtype):
            raise shape_error(op_name, f"indices must be integers, got {describe(entry)} for axis {axis} of {x}")
        if n == 0 and entry.aval.size > 0:  # every index is out of range: say so now (JAX does too)
            raise _range_error(op_name, f"index {describe(entry)} into axis {axis} of {x}, which is empty")
        index = _dynamic_index(entry.atom, n)
        return _Point(index) if entry.aval.ndim == 0 else _Array(index)
    if isinstance(entry, Tensor):  # a concrete device array: static, so it can be checked
        entry = np.asarray(entry)
    if isinstance(entry, bool) or isinstance(entry, np.bool_):
        raise _bool_error(op_name, repr(entry))
    if isinstance(entry, (int, np.integer)):
        i = int(entry)
        if not -n <= i < n:
            raise _range_error(op_name, f"index {i} is out of range for axis {axis} of {x} (size {n})")
        return _Point(i % n)
    if isinstance(entry, list) and any(isinstance(e, Traced) for e in entry):
        # A list of staged scalars (``x[[i, j]]``): stack them into one staged index array.
        # Each part is classified on its own, so static ints are range-checked and staged ones saturated.
        parts = [_classify(op_name, e, n, axis, x) for e in entry]
        if not all(isinstance(p, _Point) for p in parts):
            raise shape_error(op_name, f"a list index may mix only scalars with staged scalars, got {entry!r}")
        points = cast(list[_Point], parts)  # all points: checked above
        atoms = [literal(p.value, INDEX) if isinstance(p.value, int) else p.value for p in points]
        return _Array(SL.concatenate([S.reshape(a, (1,)) for a in atoms], 0))
    if isinstance(entry, (list, np.ndarray)):
        value = np.asarray(entry)
        if value.ndim == 0 and value.dtype.kind in "iu":
            return _classify(op_name, int(value), n, axis, x)
        return _static_array(op_name, value, n, axis, x)
    raise shape_error(op_name, f"unsupported index {entry!r} ({type(entry).__name__}) for {x}")


class _NewAxis:
    """A size-1 axis inserted by a scalar boolean index and indexed by ``values`` (``[0]`` for True, ``[]``
    for False), which is how NumPy treats a 0-d mask."""

    def __init__(self, values: np.ndarray[Any, Any]) -> None:
        self.values = values


def _mask(entry: Any) -> np.ndarray[Any, Any] | None:
    """A static boolean mask (a NumPy array, a nested list of bools, a bool), else None."""
    if isinstance(entry, _StaticMask):
        return entry.mask
    if isinstance(entry, (bool, np.bool_)) or (isinstance(entry, np.ndarray) and entry.dtype == np.bool_):
        return np.asarray(entry)
    if isinstance(entry, list) and entry and not any(isinstance(e, Tensor) for e in entry):
        try:
            value = np.asarray(entry)
        except ValueError:
            return None  # ragged: reported by _classify
        return value if value.dtype == np.bool_ else None
    return None


def _expand_masks(op_name: str, entries: list[Any], aval: Aval) -> list[Any]:
    """Each static mask replaced by its nonzero index arrays (one per axis it covers), after checking its shape."""
    out: list[Any] = []
    axis = 0
    for e in entries:
        m = _mask(e)
        if m is None:
            out.append(e)
            axis += e is not None
        elif m.ndim == 0:
            out.append(_NewAxis(np.zeros(int(bool(m)), INDEX)))
        else:
            covered = aval.shape[axis : axis + m.ndim]
            if m.shape != covered:
                raise _range_error(
                    op_name, f"boolean mask of shape {m.shape} does not match axes {axis}..{axis + m.ndim - 1} "
                    f"of {aval} (sizes {covered})",
                )
            out += list(np.nonzero(m))
            axis += m.ndim
    return out


def _parse(op_name: str, x: Atom, index: Any) -> tuple[Atom, list[Item]]:
    """The operand with a size-1 axis inserted for every ``None``, and one item per axis of it."""
    entries = list(index) if isinstance(index, tuple) else [index]
    aval = x.aval
    if sum(e is Ellipsis for e in entries) > 1:
        raise shape_error(op_name, f"an index can have only one ellipsis (...), got {index!r}")
    masks = [_mask(e) for e in entries]
    consuming = sum(m.ndim if m is not None else int(e is not None and e is not Ellipsis)
                    for e, m in zip(entries, masks))
    if consuming > aval.ndim:
        raise shape_error(op_name, f"too many indices ({consuming}) for {aval} (rank {aval.ndim})")
    if any(e is Ellipsis for e in entries):
        at = next(i for i, e in enumerate(entries) if e is Ellipsis)
        entries[at : at + 1] = [slice(None)] * (aval.ndim - consuming)
    else:
        entries += [slice(None)] * (aval.ndim - consuming)
    entries = _expand_masks(op_name, entries, aval)
    shape: list[int] = []
    names: list[DimName] = []
    axis = 0
    for e in entries:
        if e is None or isinstance(e, _NewAxis):
            shape.append(1)
            names.append(None)
        else:
            shape.append(aval.shape[axis])
            names.append(aval.dims[axis])
            axis += 1
    y = S.reshape(x, shape, names) if len(shape) != aval.ndim else x
    items: list[Item] = []
    axis = 0
    for e, n in zip(entries, shape):
        if isinstance(e, _NewAxis):
            items.append(_static_array(op_name, e.values, 1, axis, aval))
            continue
        items.append(_Full() if e is None else _classify(op_name, e, n, axis, aval))
        axis += e is not None
    return y, items


# ----------------------------------------------------------------------------- where results axes land


def _layout(op_name: str, items: Sequence[Item]) -> tuple[list[int | str], Aval | None]:
    """Result axes in order: an operand axis (int) for every whole or sliced axis, and ``"B"`` for the block of
    broadcast advanced-index axes (NumPy's rule); also the broadcast type of the index arrays."""
    arrays = [it.atom for it in items if isinstance(it, _Array)]
    entries: list[int | str] = [a for a, it in enumerate(items) if isinstance(it, (_Full, _Range))]
    if not arrays:
        return entries, None
    block = _broadcast_index_shapes(op_name, [a.aval for a in arrays])
    errors = [it.error for it in items if isinstance(it, _Array) and it.error is not None]
    if errors and block.size > 0:
        raise errors[0]
    advanced = [a for a, it in enumerate(items) if isinstance(it, (_Array, _Point))]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    at = sum(1 for e in entries if isinstance(e, int) and e < advanced[0]) if adjacent else 0
    entries.insert(at, "B")
    return entries, block


def _broadcast_index_shapes(op_name: str, avals: Sequence[Aval]) -> Aval:
    """Full NumPy broadcasting (outer indexing with ``x[rows[:, None], cols]`` is the point of it)."""
    rank = max(a.ndim for a in avals)
    shape: list[int] = []
    names: list[DimName] = []
    for axis in range(rank):
        sizes = [(a.shape[k], a.dims[k]) for a in avals if (k := axis - rank + a.ndim) >= 0]
        wide = {n for n, _ in sizes if n != 1}
        if len(wide) > 1:
            raise shape_error(op_name, f"index arrays {', '.join(map(str, avals))} do not broadcast together")
        size = wide.pop() if wide else 1
        named = {d for n, d in sizes if n == size and d is not None}
        if len(named) > 1:
            raise shape_error(op_name, f"index arrays {', '.join(map(str, avals))} disagree on a dim: {named}")
        shape.append(size)
        names.append(named.pop() if named else None)
    return Aval(tuple(shape), INDEX, names)


def _broadcast_arrays(items: Sequence[Item], block: Aval) -> list[Atom]:
    out = []
    for it in items:
        if isinstance(it, _Array):
            a = it.atom
            offset = block.ndim - a.aval.ndim
            out.append(S.broadcast_in_dim(a, block.shape, tuple(range(offset, block.ndim)), block.dims))
    return out


def _stack_last(columns: Sequence[Atom], batch_shape: tuple[int, ...], batch_names: Sequence[DimName]) -> Atom:
    """Index vectors: columns of ``batch_shape`` stacked along a new last axis."""
    shape = (*batch_shape, 1)
    names = (*batch_names, None)
    return SL.concatenate([S.reshape(c, shape, names) for c in columns], len(batch_shape))


# ----------------------------------------------------------------------------------------------- reading


def _basic(y: Atom, items: Sequence[Item]) -> Atom:
    """Apply slices and points with slice / rev / dynamic_slice, dropping the point axes."""
    starts, limits, strides, flips = [], [], [], []
    for a, it in enumerate(items):
        n = y.aval.shape[a]
        if isinstance(it, _Range) and it.size == 0:
            lo, hi, step = 0, 0, 1
        elif isinstance(it, _Range) and it.step > 0:
            lo, hi, step = it.start, it.start + (it.size - 1) * it.step + 1, it.step
        elif isinstance(it, _Range):
            lo, hi, step = it.start + (it.size - 1) * it.step, it.start + 1, -it.step
            flips.append(a)
        elif isinstance(it, _Point) and isinstance(it.value, int):
            lo, hi, step = it.value, it.value + 1, 1
        else:
            lo, hi, step = 0, n, 1
        starts.append(lo)
        limits.append(hi)
        strides.append(step)
    y = SL.rev(SL.slice_(y, starts, limits, strides), flips)
    dynamic = [isinstance(it, _Point) and not isinstance(it.value, int) for it in items]
    if any(dynamic):
        points = [it.value if d else 0 for it, d in zip(items, dynamic)]  # type: ignore[union-attr]
        sizes = [1 if d else n for d, n in zip(dynamic, y.aval.shape)]
        y = SL.dynamic_slice(y, points, sizes)
    keep = [a for a, it in enumerate(items) if not isinstance(it, _Point)]
    return S.reshape(y, [y.aval.shape[a] for a in keep], [y.aval.dims[a] for a in keep])


def index_atom(op_name: str, x: Atom, index: Any) -> Atom:
    """``x[index]`` with NumPy semantics, on atoms (staging only)."""
    y, items = _parse(op_name, x, index)
    entries, block = _layout(op_name, items)
    y = _basic(y, items)
    if block is None:
        return y
    # The remaining axes of y are the whole/sliced ones and the array-indexed ones, in operand order.
    rest = [it for it in items if not isinstance(it, _Point)]
    indexed = tuple(a for a, it in enumerate(rest) if isinstance(it, _Array))
    indices = _stack_last(_broadcast_arrays(rest, block), block.shape, block.dims)
    at = entries.index("B")
    rank = len(entries) - 1 + block.ndim
    offset_dims = tuple(p for p in range(rank) if not at <= p < at + block.ndim)
    dn = G.GatherDims(offset_dims, indexed, indexed, block.ndim)
    if any(y.aval.shape[a] == 0 for a in indexed):  # an empty axis: nothing to read (static indices are empty)
        kept = iter([a for a in range(y.aval.ndim) if a not in indexed])
        out_shape: list[int] = []
        out_names: list[DimName] = []
        for p in range(rank):
            k = next(kept) if not at <= p < at + block.ndim else -1
            out_shape.append(block.shape[p - at] if k < 0 else y.aval.shape[k])
            out_names.append(block.dims[p - at] if k < 0 else y.aval.dims[k])
        return S.full_like(Aval(tuple(out_shape), y.aval.dtype, out_names), 0)
    sizes = [1 if a in indexed else n for a, n in enumerate(y.aval.shape)]
    return G.gather(y, indices, dn, sizes)


def getitem(x: AnyTensor, index: Any) -> AnyTensor:
    """``x[index]`` with NumPy semantics (see the module docstring for dynamic indices)."""
    index = _static_scalars(index)
    check_host_indices("getitem", x, lambda probe: probe[index], index)
    return _getitem(x, _freeze_masks(index))


def check_host_indices(op_name: str, x: Any, apply: Any, index: Any) -> None:
    """Outside staging, NumPy integer index arrays are concrete: check their range on the host (as NumPy
    does) instead of letting the compiled gather clamp them or the scatter drop them silently."""
    if is_staging():
        return
    items = index if isinstance(index, tuple) else (index,)
    arrays = [i for i in items if isinstance(i, np.ndarray)]
    if not arrays or any(a.dtype.kind not in "iu" for a in arrays):
        return
    shape = x.shape if isinstance(x, (Tensor, np.ndarray)) else np.shape(x)
    try:
        apply(np.broadcast_to(np.zeros((), np.int8), shape))  # a zero-stride probe of x's shape
    except IndexError as exc:
        raise _range_error(op_name, f"{exc} (operand shape {tuple(shape)})") from None
    except (TypeError, ValueError):
        return  # reported with the op's own message while staging


def _static_scalars(index: Any) -> Any:
    """The index with its static parts made static for ``@op``: NumPy integer scalars and concrete scalar
    bounds of slices as Python ints (so they are range-checked), nested tuples as lists (NumPy reads them as
    index arrays), concrete boolean arrays as NumPy masks, and NumPy u16/u64 index arrays as i32/i64 (signed,
    as NumPy's default index arrays are), saturated so an out-of-range index stays out of range."""
    if isinstance(index, tuple):
        return tuple(_static_entry(e) for e in index)
    return _static_entry(index)


def _static_entry(e: Any) -> Any:
    if isinstance(e, np.bool_):
        return bool(e)
    if isinstance(e, np.integer):
        return int(e)
    if isinstance(e, tuple):
        return [_static_entry(v) for v in e]
    if isinstance(e, slice):
        return slice(*(_static_bound(b) for b in (e.start, e.stop, e.step)))
    if isinstance(e, Tensor) and not isinstance(e, Traced) and e.aval.dtype == _dt.BOOL:
        return np.asarray(e)
    if isinstance(e, np.ndarray) and e.dtype == np.uint16:
        return e.astype(np.int32)
    if isinstance(e, np.ndarray) and e.dtype == np.uint64:
        return np.minimum(e, np.iinfo(np.int64).max).astype(np.int64)
    return e


def _static_bound(b: Any) -> Any:
    if isinstance(b, np.integer):
        return int(b)
    if isinstance(b, Tensor) and not isinstance(b, Traced) and b.aval.ndim == 0 and _dt.is_integer(b.aval.dtype):
        return int(np.asarray(b))
    return b


class _StaticMask:
    """A NumPy boolean mask passed through ``@op`` as a static (hashable) argument: its result shape depends on
    its values, so it cannot be a runtime input."""

    __slots__ = ("mask",)

    def __init__(self, mask: np.ndarray[Any, Any]) -> None:
        self.mask = mask

    def __hash__(self) -> int:
        return hash((self.mask.shape, self.mask.tobytes()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StaticMask) and np.array_equal(self.mask, other.mask) and (
            self.mask.shape == other.mask.shape
        )

    def __repr__(self) -> str:
        return f"mask{self.mask.shape}"


def _freeze_masks(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(_freeze_masks(e) for e in index)
    m = _mask(index)
    return _StaticMask(m) if m is not None and m.ndim > 0 else index


@op
def _getitem(x: AnyTensor, index: Any) -> AnyTensor:
    return wrap(index_atom("getitem", as_tensor(x).atom, index))


# ------------------------------------------------------------------------------------------------ updates


def _component(it: Item, position: tuple[int, ...], batch: tuple[int, ...], names: Sequence[DimName]) -> Atom:
    """The start index an item contributes, broadcast over the index batch shape (its own axes at ``position``)."""
    if isinstance(it, _Point):
        value = literal(it.value, INDEX) if isinstance(it.value, int) else it.value
    elif isinstance(it, _Range) and it.step == 1:
        value = literal(it.start, INDEX)
    elif isinstance(it, _Range):
        value = literal(it.start + it.step * np.arange(it.size), INDEX)
    else:
        assert isinstance(it, _Array)
        value = it.atom
    return S.broadcast_in_dim(value, batch, position[len(position) - value.aval.ndim:], names)


def update_atom(op_name: str, x: Atom, index: Any, values: Atom, combiner: str) -> Atom:
    """``x`` with ``x[index]`` combined with ``values`` (``set``/``add``/``mul``/``min``/``max``), on atoms."""
    y, items = _parse(op_name, x, index)
    entries, block = _layout(op_name, items)
    arrays = _broadcast_arrays(items, block) if block is not None else []
    # Layout of the indexed view: whole and step-1 axes are update windows, the others index batch axes.
    view_shape: list[int] = []
    view_names: list[DimName] = []
    window_dims: list[int] = []
    batch_pos: dict[int, tuple[int, ...]] = {}
    for e in entries:
        start = len(view_shape)
        if e == "B":
            assert block is not None
            view_shape += block.shape
            view_names += block.dims
            batch_pos[-1] = tuple(range(start, start + block.ndim))
            continue
        assert isinstance(e, int)
        it = items[e]
        view_shape.append(it.size if isinstance(it, _Range) else y.aval.shape[e])
        view_names.append(y.aval.dims[e] if isinstance(it, _Full) else None)
        if isinstance(it, _Full) or (isinstance(it, _Range) and it.step == 1):
            window_dims.append(start)
        else:
            batch_pos[e] = (start,)
    view = Aval(tuple(view_shape), y.aval.dtype, view_names)
    updates = _broadcast_values(op_name, values, view)
    if all(isinstance(it, _Full) for it in items):
        return S.reshape(_combine_whole(y, updates, combiner), x.aval.shape, x.aval.dims)
    # Index batch axes are the view's non-window axes, in view order.
    batch_axes = [p for p in range(len(view_shape)) if p not in window_dims]
    batch = tuple(view_shape[p] for p in batch_axes)
    batch_names = [view_names[p] for p in batch_axes]
    where = {p: i for i, p in enumerate(batch_axes)}
    columns, indexed = [], []
    array_iter = iter(arrays)
    for a, it in enumerate(items):
        if isinstance(it, _Full):
            continue
        indexed.append(a)
        if isinstance(it, _Array):
            positions = tuple(where[p] for p in batch_pos[-1])
            columns.append(_component(_Array(next(array_iter)), positions, batch, batch_names))
        else:
            positions = tuple(where[p] for p in batch_pos.get(a, ()))
            columns.append(_component(it, positions, batch, batch_names))
    indices = _stack_last(columns, batch, batch_names)
    inserted = tuple(a for a in indexed if not isinstance(items[a], _Range) or items[a].step != 1)  # type: ignore[union-attr]
    dn = G.ScatterDims(tuple(window_dims), inserted, tuple(indexed), len(batch))
    if combiner == "set" and arrays:  # array indices may repeat: make the last update win on every platform
        if y.aval.size == 0:  # nothing to set (scatter_last_wins' gather cannot read an empty operand)
            return x
        out = G.scatter_last_wins(y, indices, updates, dn)
    else:
        out = G.scatter(y, indices, updates, dn, combiner)
    return S.reshape(out, x.aval.shape, x.aval.dims)


def _broadcast_values(op_name: str, values: Atom, view: Aval) -> Atom:
    v = values.aval
    fits = v.ndim <= view.ndim and all(n in (1, m) for n, m in zip(v.shape[::-1], view.shape[::-1]))
    if not fits:
        raise shape_error(op_name, f"values {v} do not broadcast to the indexed shape {view}")
    if v.shape == view.shape:
        return values
    offset = view.ndim - v.ndim
    return S.broadcast_in_dim(values, view.shape, tuple(range(offset, view.ndim)), view.dims)


def _combine_whole(y: Atom, updates: Atom, combiner: str) -> Atom:
    if combiner == "set":
        return updates
    prim = {"add": E.add_p, "mul": E.mul_p, "min": E.min_p, "max": E.max_p}[combiner]
    return bind(prim, y, updates)  # type: ignore[no-any-return]


@op
def _update(x: AnyTensor, index: Any, values: Any, combiner: str) -> AnyTensor:
    t = as_tensor(x)
    name = f"at[].{combiner}"
    if isinstance(values, (list, tuple)):
        values = _python_values(name, values, t)
    dtype = result_dtype(name, [t, values])
    if dtype != t.aval.dtype:
        raise dtype_error(name, f"values {describe(values)} do not have the dtype of {describe(t)}; use .astype")
    v = atom(values, dtype)
    if combiner == "subtract":
        v, combiner = E.neg(v), "add"
    return wrap(update_atom(name, t.atom, index, v, combiner))


def _python_values(name: str, values: Any, t: AnyTensor) -> np.ndarray[Any, Any]:
    """Nested Python numbers take the operand's dtype under the rule for Python scalars: ints fit, floats need
    a float operand (a float list into an int array is an error, as a float scalar is)."""
    try:
        raw = np.asarray(values)
    except ValueError as exc:
        raise shape_error(name, f"values {values!r} are not a rectangular nested list ({exc})") from None
    target = t.aval.dtype
    kinds = {"b": "b", "i": "biu", "u": "biu", "f": "biuf"}.get(target.kind, "")
    if raw.size and raw.dtype.kind not in kinds:  # (an empty list is float64 to NumPy)
        raise dtype_error(
            name, f"values {values!r} ({raw.dtype.name} numbers) do not fit the dtype of {describe(t)}; convert "
            "one of them with .astype(...)",
        )
    if raw.size and raw.dtype.kind in "iu" and target.kind in "iu":
        lo, hi, info = int(raw.min()), int(raw.max()), np.iinfo(target)
        if lo < info.min or hi > info.max:
            raise dtype_error(name, f"value {lo if lo < info.min else hi} does not fit the dtype of {describe(t)}")
    return raw.astype(target)


class IndexUpdate(Generic[DT, Unpack[Shape]]):
    """``x.at[index]``: methods return a new tensor of ``x``'s type with the indexed elements updated (out-of-range
    static indices raise where JAX drops them; out-of-range dynamic indices are dropped, as in JAX)."""

    __slots__ = ("x", "index")

    def __init__(self, x: Tensor[DT, Unpack[Shape]], index: Any) -> None:
        self.x = x
        self.index = _static_scalars(index)

    def _apply(self, values: Any, combiner: str) -> Tensor[DT, Unpack[Shape]]:
        index = self.index
        check_host_indices(f"at[].{combiner}", self.x, lambda probe: probe[index], index)
        return _update(self.x, _freeze_masks(index), values, combiner)

    def set(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        """Replace; with repeated indices one of the updates wins (which one is unspecified, as in XLA)."""
        return self._apply(values, "set")

    def add(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        """Add; repeated indices accumulate."""
        return self._apply(values, "add")

    def subtract(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        """Subtract; repeated indices accumulate."""
        return self._apply(values, "subtract")

    def mul(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        """Multiply; repeated indices accumulate."""
        return self._apply(values, "mul")

    multiply = mul

    def min(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        return self._apply(values, "min")

    def max(self, values: Any) -> Tensor[DT, Unpack[Shape]]:
        return self._apply(values, "max")

    def get(self) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
        return getitem(self.x, self.index)


class AtIndexer(Generic[DT, Unpack[Shape]]):
    """``x.at``: index it to get an ``IndexUpdate``."""

    __slots__ = ("x",)

    def __init__(self, x: Tensor[DT, Unpack[Shape]]) -> None:
        self.x = x

    def __getitem__(self, index: Any) -> IndexUpdate[DT, Unpack[Shape]]:
        return IndexUpdate(self.x, index)
