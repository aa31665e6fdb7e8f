"""Index tricks: ``unravel_index``, ``ravel_multi_index``, ``diag_indices``, ``diag_indices_from``,
``fill_diagonal``, ``put_along_axis``, ``ix_``, ``mgrid``, ``ogrid``, ``s_``, ``index_exp``, ``r_``, ``c_``, and
``unstack``, ``matvec``, ``vecmat``. (``vectorize`` and the ``apply_*`` helpers are in ``vectorizing.py``,
``packbits``/``unpackbits`` in ``bit_packing.py``.)

Deliberate differences from NumPy (mostly JAX's):

- Arrays are immutable: ``fill_diagonal`` and ``put_along_axis`` return the updated array and need
  ``inplace=False``. As in JAX, ``inplace`` defaults to True, which is an error: NumPy's versions return None and
  write into their argument, so a ported ``np.fill_diagonal(a, 0)`` that ignores the result would silently change
  nothing.
- Index values are data. Static ones (NumPy arrays, lists, Python ints) are checked as NumPy checks them. Tensor
  values (staged, or device arrays in eager calls) cannot make the op raise: ``unravel_index`` clips them into
  range (negatives count from the end), as ``jax.numpy.unravel_index`` does; ``put_along_axis`` drops updates at
  out-of-range indices (``mode="clip"`` clips them instead), as ``x.at[i].set`` does. ``ravel_multi_index`` with
  ``mode="raise"`` checks concrete indices on the host (device arrays are read back) and, while staging, is an
  error asking for ``mode="wrap"`` or ``"clip"``, as in JAX.
- Index results are i32 where NumPy gives int64 (``diag_indices``; ``mgrid``/``ogrid`` of ints); ``unravel_index``
  keeps its input's integer dtype and ``ravel_multi_index`` the common dtype of its inputs (an error if the flat
  size does not fit it). Float ``mgrid``/``ogrid`` grids are f32 (NumPy: f64).
- Broadcasting (``ravel_multi_index``, ``matvec``, ``vecmat``) follows the library's policy: no
  leading axes added to one operand while another is stretched.
- ``fill_diagonal`` supports ``wrap=True`` (JAX does not).
- ``r_`` and ``c_`` join without promoting dtypes (tensors must agree; Python numbers adopt their dtype) and give
  a 2-D tensor for the ``"r"``/``"c"`` directives where NumPy gives an ``np.matrix``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...array import as_host_array
from ...dims import Dim
from ...dtypes import DType, i32
from ...staging import dtypes as _dt
from ...staging.builder import is_staging
from ...staging.ir import Atom, Aval, DimName
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import (
    _named, as_tensor, atom, broadcast_shapes, describe, dtype_error, elementwise_operands, normalize_axes, op,
    result_dtype, shape_error, wrap,
)
from .indexing import _python_values, check_host_indices, index_atom, update_atom
from .static_settings import static_int

__all__: list[str] = [
    "c_", "diag_indices", "diag_indices_from", "fill_diagonal", "index_exp", "ix_", "matvec", "mgrid", "ogrid",
    "put_along_axis", "r_", "ravel_multi_index", "s_", "unravel_index", "unstack", "vecmat",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
M = TypeVar("M")
N = TypeVar("N")

_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)


# ------------------------------------------------------------------------------------------------ helpers


def _error(kind: type[Exception], op_name: str, message: str) -> Exception:
    """A plain Python error that names the op and the user's line, as an op's errors do."""
    return _named(kind(message), op_name)


def _sizes(op_name: str, shape: Any) -> tuple[int, ...]:
    """A static shape (an int or a sequence of non-negative ints)."""
    items = tuple(shape) if isinstance(shape, (tuple, list, np.ndarray)) else (shape,)
    sizes = tuple(static_int(op_name, n, "shape", "shapes are static", located=True) for n in items)
    if any(n < 0 for n in sizes):
        raise _error(ValueError, op_name, f"dimensions must be non-negative, got {sizes}")
    return sizes


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, Tensor) else np.shape(x)


def _integer_operand(op_name: str, x: Any, what: str = "indices") -> Traced[Any]:
    t = as_tensor(x)
    if not _dt.is_integer(t.aval.dtype):
        raise dtype_error(op_name, f"{what} must be integers, got {describe(t)}")
    return t


def _is_host(x: Any) -> bool:
    """Static index data: values a program sees as constants (no tensors)."""
    if isinstance(x, (list, tuple)):
        return all(_is_host(v) for v in x)
    return isinstance(x, (np.ndarray, np.generic, int)) and not isinstance(x, bool)


def _order(op_name: str, order: Any) -> str:
    if order not in ("C", "F"):
        raise _error(ValueError, op_name, f"order must be 'C' or 'F', got {order!r}")
    return str(order)


def _c(value: int, like: Atom) -> Atom:
    return E.scalar(value, like)


# ------------------------------------------------------------------------------ flat and multi-indices


def unravel_index(indices: Any, shape: int | Sequence[int], order: str = "C") -> tuple[AnyTensor, ...]:
    """The coordinates of flat ``indices`` in an array of ``shape``: one tensor per axis, of the indices' dtype.
    Static indices out of range raise ``ValueError`` as in NumPy; tensor indices are clipped into range and
    negative ones count from the end, as in ``jax.numpy.unravel_index``."""
    sizes = _sizes("unravel_index", shape)
    _order("unravel_index", order)
    if _is_host(indices):
        host = np.asarray(indices)
        total = math.prod(sizes)
        if host.dtype.kind in "iu" and host.size and ((host < 0) | (host >= total)).any():
            bad = host[(host < 0) | (host >= total)].flat[0]
            raise _error(ValueError, "unravel_index", f"index {bad} is out of bounds for array with size {total}")
    return _unravel_index(indices, sizes, order)


@op
def _unravel_index(indices: Any, sizes: tuple[int, ...], order: str) -> tuple[AnyTensor, ...]:
    t = _integer_operand("unravel_index", indices)
    dtype = t.aval.dtype
    total = math.prod(sizes)
    if total == 0:
        if t.aval.size:
            raise shape_error("unravel_index", f"cannot index into an array of shape {sizes} (it is empty)")
        return tuple(wrap(S.full_like(t.atom, 0)) for _ in sizes)
    # Work in a type that holds every flat index of ``shape`` (results are at most the index, so they fit back).
    work = dtype if total <= np.iinfo(dtype).max else _I64
    x = t.atom if work == dtype else E.convert(t.atom, work)
    if _dt.is_signed(work):  # clip into [-total, total), then count negatives from the end
        x = E.clamp(_c(-total, x), x, _c(total - 1, x))
        x = E.select(E.lt(x, _c(0, x)), E.add(x, _c(total, x)), x)
    else:
        x = E.minimum(x, _c(total - 1, x))
    coords: list[Atom] = [x] * len(sizes)
    for k in reversed(range(len(sizes))) if order == "C" else range(len(sizes)):
        n = sizes[k]
        coords[k] = E.rem(x, _c(n, x))
        x = E.div(x, _c(n, x))
    return tuple(wrap(c if work == dtype else E.convert(c, dtype)) for c in coords)


_MODES = ("raise", "wrap", "clip")


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str | Sequence[str] = "raise",
                      order: str = "C") -> AnyTensor:
    """Flat indices of the coordinates ``multi_index`` (one integer array per axis of ``dims``, broadcast
    together) in an array of shape ``dims``. ``mode`` (one, or one per axis): ``"raise"`` checks the indices,
    which must then be concrete (NumPy or device arrays; while staging it is an error, as in JAX), ``"wrap"``
    takes them modulo the size, ``"clip"`` clips them into range. The result has the indices' common dtype."""
    name = "ravel_multi_index"
    if isinstance(multi_index, Tensor) or not isinstance(multi_index, (tuple, list)):
        raise _error(TypeError, name, f"multi_index must be a tuple of index arrays, got {describe(multi_index)}")
    sizes = _sizes(name, dims)
    if len(multi_index) != len(sizes) or not sizes:
        raise _error(ValueError, name, f"needs one index array per dim: {len(multi_index)} for dims {sizes}")
    modes = (mode,) * len(sizes) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(sizes) or any(m not in _MODES for m in modes):
        raise _error(ValueError, name, f"mode must be one of {_MODES} or a sequence of them per dim, got {mode!r}")
    _order(name, order)
    if "raise" in modes:
        _check_coordinates(name, multi_index, sizes, modes)
        modes = tuple("checked" if m == "raise" else m for m in modes)
    return _ravel_multi_index(tuple(multi_index), sizes, modes, order)


def _check_coordinates(name: str, multi_index: Sequence[Any], sizes: tuple[int, ...], modes: Sequence[str]) -> None:
    if is_staging() and not all(_is_host(i) for i in multi_index):
        raise _error(
            ValueError, name, "mode='raise' cannot check staged indices (their values are runtime data): use "
            "mode='wrap' or mode='clip'",
        )
    for i, n, m in zip(multi_index, sizes, modes):
        host = as_host_array(i)
        if m == "raise" and host.dtype.kind in "iu" and ((host < 0) | (host >= n)).any():
            raise _error(ValueError, name, f"invalid entry in coordinates array: an index is outside [0, {n})")


@op
def _ravel_multi_index(multi_index: tuple[Any, ...], sizes: tuple[int, ...], modes: tuple[str, ...],
                       order: str) -> AnyTensor:
    name = "ravel_multi_index"
    coords = elementwise_operands(name, *multi_index)
    dtype = coords[0].aval.dtype
    if not _dt.is_integer(dtype):
        raise dtype_error(name, f"indices must be integers, got {', '.join(str(c.aval) for c in coords)}")
    total = math.prod(sizes)
    if total - 1 > np.iinfo(dtype).max:
        raise dtype_error(name, f"flat indices into shape {sizes} do not fit {_dt.short_name(dtype)}: convert the "
                          "indices with .astype(i64)")
    stride = 1
    strides = [0] * len(sizes)
    for k in reversed(range(len(sizes))) if order == "C" else range(len(sizes)):
        strides[k], stride = stride, stride * sizes[k]
    terms = []
    for c, n, mode, step in zip(coords, sizes, modes, strides):
        c = _into_range(name, c, n, mode)
        terms.append(E.mul(c, _c(step, c)) if step != 1 else c)
    return wrap(functools.reduce(E.add, terms))


def _into_range(name: str, c: Atom, n: int, mode: str) -> Atom:
    if mode == "checked":
        return c
    if n == 0:
        raise _error(ValueError, name, f"cannot {mode} indices into an empty dimension")
    dtype = c.aval.dtype
    if n > np.iinfo(dtype).max:  # the size itself does not fit (an i8 axis of 128): work wider
        return E.convert(_into_range(name, E.convert(c, _I64), n, mode), dtype)
    if mode == "clip":
        return E.clamp(_c(0, c), c, _c(n - 1, c))
    r = E.rem(c, _c(n, c))  # truncated: negative for negative c
    return E.select(E.lt(r, _c(0, c)), E.add(r, _c(n, c)), r) if _dt.is_signed(dtype) else r


# ------------------------------------------------------------------------------------------- diagonals


def diag_indices(n: int, ndim: int = 2) -> tuple[Tensor[i32, Any], ...]:
    """``ndim`` copies of ``arange(n)`` (i32): the indices of the main diagonal of an ``n``-sized cube."""
    from .creation import array

    n = static_int("diag_indices", n, "n", located=True)
    ndim = static_int("diag_indices", ndim, "ndim", located=True)
    if n < 0 or ndim < 0:
        raise _error(ValueError, "diag_indices", f"n and ndim must be non-negative, got n={n}, ndim={ndim}")
    return tuple(array(np.arange(n, dtype=np.int32)) for _ in range(ndim))


def diag_indices_from(arr: AnyTensor) -> tuple[Tensor[i32, Any], ...]:
    """``diag_indices`` for ``arr``, which must have rank >= 2 and all axes of one size."""
    shape = _shape_of(arr)
    if len(shape) < 2:
        raise shape_error("diag_indices_from", f"needs an operand of rank >= 2, got {describe(arr)}")
    if len(set(shape)) != 1:
        raise shape_error("diag_indices_from", f"all axes of the operand must have one size, got {describe(arr)}")
    return diag_indices(shape[0], len(shape))


def _immutable(op_name: str, inplace: bool) -> None:
    if inplace:
        raise _error(
            ValueError, op_name, "tensorstage arrays are immutable: pass inplace=False and use the updated copy it "
            "returns (NumPy's writes into its argument and returns None)",
        )


def fill_diagonal(a: Tensor[DT, Unpack[Sh]], val: Any, wrap: bool = False, inplace: bool = True
                  ) -> Tensor[DT, Unpack[Sh]]:
    """A copy of ``a`` with its main diagonal set to ``val`` (a scalar, or an array whose flattened values are
    repeated along the diagonal, as in NumPy). ``a`` has rank 2, or higher with all axes of one size; ``wrap``
    continues the diagonal of a tall matrix after every ``cols + 1`` rows, as NumPy. ``inplace=False`` is
    required (see the module docstring)."""
    _immutable("fill_diagonal", inplace)
    return _fill_diagonal(a, val, bool(wrap))


def _diagonal_positions(shape: tuple[int, ...], wrap: bool) -> np.ndarray[Any, Any]:
    """Flat positions of the diagonal (NumPy's ``a.flat[:end:step]``)."""
    if len(shape) == 2:
        step, end = shape[1] + 1, None if wrap else shape[1] * shape[1]
    else:
        step, end = 1 + int(np.cumprod(shape[:-1]).sum()), None
    return np.arange(math.prod(shape))[:end:step]


@op
def _fill_diagonal(a: AnyTensor, val: Any, wrap: bool) -> AnyTensor:
    name = "fill_diagonal"
    t = as_tensor(a)
    shape = t.aval.shape
    if len(shape) < 2:
        raise shape_error(name, f"needs an operand of rank >= 2, got {describe(t)}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise shape_error(name, f"an operand of rank > 2 must have all axes of one size, got {describe(t)}")
    v = _values(name, t, val)
    positions = _diagonal_positions(shape, wrap)
    if not positions.size or not v.aval.size:
        return t  # nothing to fill (NumPy too ignores an empty ``val``)
    if v.aval.ndim:  # values cycle along the diagonal
        flat_v = S.reshape(v, (v.aval.size,))
        v = index_atom(name, flat_v, np.arange(positions.size) % v.aval.size)
    flat = S.reshape(t.atom, (t.aval.size,))
    return _shaped(update_atom(name, flat, positions, v, "set"), t)


def _shaped(flat: Atom, like: AnyTensor) -> AnyTensor:
    """A flat result in ``like``'s shape and dim names."""
    return wrap(S.reshape(flat, like.aval.shape, like.aval.dims))


def _values(op_name: str, t: AnyTensor, values: Any) -> Atom:
    """Update values as an atom of ``t``'s dtype (Python numbers adopt it; arrays must have it)."""
    if isinstance(values, (list, tuple)):
        values = _python_values(op_name, values, t)
    if result_dtype(op_name, [t, values]) != t.aval.dtype:
        raise dtype_error(op_name, f"values {describe(values)} do not have the dtype of {describe(t)}; use .astype")
    return atom(values, t.aval.dtype, op_name)


# ------------------------------------------------------------------------------------- put_along_axis


_PUT_MODES = (None, "drop", "clip")


def put_along_axis(arr: Tensor[DT, Unpack[Sh]], indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Tensor[DT, Unpack[Sh]]:
    """A copy of ``arr`` with ``values`` put at ``indices`` along ``axis`` (the flattened array when None): the
    inverse of ``take_along_axis``. ``indices`` has ``arr``'s rank and broadcasts against it on the other axes;
    ``values`` broadcasts to that indexed shape. Repeated indices: the last update wins, as in NumPy. Static
    out-of-range indices raise; tensor ones are dropped (``mode=None`` or ``"drop"``) or clipped (``"clip"``)."""
    _immutable("put_along_axis", inplace)
    if mode not in _PUT_MODES:
        raise _error(ValueError, "put_along_axis", f"mode must be one of {_PUT_MODES}, got {mode!r}")
    if isinstance(indices, list):
        indices = np.asarray(indices)
    if isinstance(indices, np.ndarray) and mode != "clip":
        check_host_indices("put_along_axis", arr,
                           lambda probe: np.take_along_axis(probe, indices, axis), indices)
    return _put_along_axis(arr, indices, values, axis, mode == "clip")


@op
def _put_along_axis(arr: AnyTensor, indices: Any, values: Any, axis: int | None, clip: bool) -> AnyTensor:
    name = "put_along_axis"
    t = as_tensor(arr)
    a = t.atom if axis is not None else S.reshape(t.atom, (t.aval.size,))
    rank = a.aval.ndim
    if rank == 0:
        raise shape_error(name, f"needs an operand of rank >= 1, got {describe(t)}")
    ax = normalize_axes(name, 0 if axis is None else axis, wrap(a), allow_none=False)[0]
    if isinstance(indices, np.ndarray) and indices.dtype.kind not in "iu":
        raise dtype_error(name, f"indices must be integers, got {describe(indices)}")
    idx: Any = indices if isinstance(indices, np.ndarray) else _integer_operand(name, indices)
    idx_rank = idx.ndim if isinstance(idx, np.ndarray) else idx.aval.ndim
    if idx_rank != rank:
        raise shape_error(name, f"indices of rank {idx_rank} must have the rank of {a.aval} ({rank})")
    if not a.aval.size:  # nothing to update (the values are still checked)
        _values(name, t, values)
        return t
    if clip:
        n = a.aval.shape[ax]
        idx = np.clip(idx, -n, max(n - 1, 0)) if isinstance(idx, np.ndarray) else _clip_tensor(idx, n)
    index = tuple(idx if k == ax else _arange_along(k, rank, a.aval.shape[k]) for k in range(rank))
    out = update_atom(name, a, index, _values(name, t, values), "set")
    return _shaped(out, t)


def _clip_tensor(idx: AnyTensor, n: int) -> AnyTensor:
    x = as_tensor(idx).atom
    low = -n if _dt.is_signed(x.aval.dtype) else 0
    return wrap(E.clamp(_c(low, x), x, _c(max(n - 1, 0), x)))


def _arange_along(k: int, rank: int, n: int) -> np.ndarray[Any, Any]:
    """``arange(n)`` shaped to broadcast along axis ``k`` only."""
    shape = [1] * rank
    shape[k] = n
    return np.arange(n, dtype=np.int32).reshape(shape)


# ----------------------------------------------------------------------------------- index objects


def ix_(*args: Any) -> tuple[AnyTensor, ...]:
    """Open-mesh index arrays from 1-D sequences: the ``k``-th is reshaped to lie along axis ``k`` (so
    ``x[ix_(rows, cols)]`` is a cross product). Boolean sequences must be static (NumPy values): they become
    the indices of their true entries."""
    prepared = []
    for k, arg in enumerate(args):
        if not isinstance(arg, Tensor):
            host = np.asarray(arg)
            if host.ndim != 1:
                raise shape_error("ix_", f"each sequence must be 1-D, argument {k} is {describe(host)}")
            if host.dtype == np.bool_:
                arg = np.nonzero(host)[0].astype(np.int32)
            elif host.size == 0:
                arg = host.astype(np.int32)  # NumPy's empty list is float64
            else:
                arg = as_host_array(arg)  # Python ints are i32, NumPy arrays keep their dtype
        elif arg.aval.dtype == _dt.BOOL and is_staging():
            raise shape_error("ix_", f"a staged boolean sequence {describe(arg)} would give a data-dependent shape")
        elif arg.aval.dtype == _dt.BOOL:
            arg = np.nonzero(np.asarray(arg))[0].astype(np.int32)
        prepared.append(arg)
    return _ix(*prepared)


@op
def _ix(*args: AnyTensor) -> tuple[AnyTensor, ...]:
    out = []
    for k, arg in enumerate(args):
        t = as_tensor(arg)
        if t.aval.ndim != 1:
            raise shape_error("ix_", f"each sequence must be 1-D, argument {k} is {describe(t)}")
        if not _dt.is_integer(t.aval.dtype):
            raise dtype_error("ix_", f"sequences must be integers or booleans, argument {k} is {describe(t)}")
        shape = [1] * len(args)
        shape[k] = t.aval.shape[0]
        names: list[DimName] = [None] * len(args)
        names[k] = t.aval.dims[0]
        out.append(wrap(S.reshape(t.atom, tuple(shape), tuple(names))))
    return tuple(out)


def _grid_tensor(op_name: str, values: np.ndarray[Any, Any]) -> AnyTensor:
    from .creation import array

    target = _dt.DEFAULT_FLOAT if values.dtype.kind == "f" else _dt.DEFAULT_INT
    info = np.iinfo(_dt.DEFAULT_INT)
    if values.dtype.kind in "iu" and values.size and not info.min <= values.min() <= values.max() <= info.max:
        raise _error(ValueError, op_name, f"values from {values.min()} to {values.max()} do not fit i32")
    return array(values.astype(target))


def _static_key(op_name: str, key: Any) -> Any:
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        if not isinstance(item, slice):
            raise _error(TypeError, op_name, f"index with slices (start:stop:step), got {item!r}")
        for bound in (item.start, item.stop, item.step):
            if isinstance(bound, Tensor):
                raise _error(TypeError, op_name, f"slice bounds must be static numbers, got {describe(bound)}")
    return key


class _MGrid:
    """``mgrid[0:5, 0:3]``: dense coordinate grids stacked on a new first axis (a complex step ``5j`` is a
    number of points, end included, as in NumPy); ints give i32, floats f32."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> AnyTensor:
        return _grid_tensor("mgrid", np.asarray(np.mgrid[_static_key("mgrid", key)]))

    def __repr__(self) -> str:
        return "tnp.mgrid"


class _OGrid:
    """``ogrid[0:5, 0:3]``: open (broadcastable) coordinate grids, one per slice; a single slice gives one
    1-D tensor."""

    @overload
    def __getitem__(self, key: slice) -> AnyTensor: ...
    @overload
    def __getitem__(self, key: tuple[slice, ...]) -> tuple[AnyTensor, ...]: ...
    def __getitem__(self, key: slice | tuple[slice, ...]) -> AnyTensor | tuple[AnyTensor, ...]:
        grids = np.ogrid[_static_key("ogrid", key)]
        if isinstance(grids, np.ndarray):
            return _grid_tensor("ogrid", grids)
        return tuple(_grid_tensor("ogrid", g) for g in grids)

    def __repr__(self) -> str:
        return "tnp.ogrid"


mgrid = _MGrid()
ogrid = _OGrid()
s_ = np.s_
index_exp = np.index_exp


class _AxisConcatenator:
    """``r_[...]`` / ``c_[...]``: slices (``start:stop:step``, a complex step being a number of points) become
    ranges, scalars and arrays are taken as they are, and all are joined along an axis after being given at least
    ``ndmin`` axes. A leading string sets ``"axis"``, ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"`` (where an
    item's own axes go among the added ones), or ``"r"``/``"c"`` for a 1-D result as a row (1, N) or a column
    (N, 1) (NumPy gives np.matrix objects there). Dtypes are not promoted: tensors must share one; Python
    numbers adopt it."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int) -> None:
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d
        self.join = _join_op(name)

    def __getitem__(self, key: Any) -> AnyTensor:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, ""
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d, matrix = self._directive(items[0])
            items = items[1:]
        if not items:
            raise _error(ValueError, self.name, "needs at least one item to join")
        parts: list[Any] = []
        for item in items:
            if isinstance(item, str):
                raise _error(ValueError, self.name, f"the directive {item!r} must be the first entry")
            if isinstance(item, slice):
                parts.append(_slice_range(self.name, item))
            elif isinstance(item, Tensor) or type(item) in (int, float, bool):
                parts.append(item)
            else:
                parts.append(as_host_array(item))
        return self.join(tuple(parts), axis, ndmin, trans1d, matrix)

    def _directive(self, text: str) -> tuple[int, int, int, str]:
        if text in ("r", "c"):
            return self.axis, self.ndmin, self.trans1d, text
        fields = text.split(",")
        try:
            numbers = [int(f) for f in fields]
        except ValueError:
            raise _error(ValueError, self.name, f"unknown special directive {text!r}") from None
        if len(numbers) > 3:
            raise _error(ValueError, self.name, f"unknown special directive {text!r}")
        axis, ndmin, trans1d = numbers + [self.ndmin, self.trans1d][len(numbers) - 1:]
        return axis, ndmin, trans1d, ""

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"tnp.{self.name}"


def _slice_range(op_name: str, item: slice) -> AnyTensor:
    """``start:stop:step`` as NumPy's ``r_`` reads it: an arange, or a linspace for a complex step."""
    start, stop, step = (0 if item.start is None else item.start), item.stop, (1 if item.step is None else item.step)
    if any(isinstance(b, Tensor) for b in (start, stop, step)):
        raise _error(TypeError, op_name, f"slice bounds must be static numbers, got {item!r}")
    values = np.linspace(start, stop, int(abs(step))) if isinstance(step, complex) else np.arange(start, stop, step)
    return _grid_tensor(op_name, values)


def _join_op(name: str) -> Callable[..., AnyTensor]:
    """The op behind ``r_`` or ``c_`` (named so, for its errors)."""

    def join(items: tuple[Any, ...], axis: int, ndmin: int, trans1d: int, matrix: str) -> AnyTensor:
        from .joining import _axis, _join

        dtype = result_dtype(name, items)
        parts = [_at_least(atom(item, dtype, name), ndmin, trans1d) for item in items]
        out = _join(name, parts, _axis(name, axis, parts[0].aval.ndim, parts))
        if matrix and out.aval.ndim == 1:
            out = S.reshape(out, (1, out.aval.size) if matrix == "r" else (out.aval.size, 1))
        return wrap(out)

    join.__name__ = join.__qualname__ = name
    return op(join)


def _at_least(a: Atom, ndmin: int, trans1d: int) -> Atom:
    """``a`` with leading size-1 axes up to ``ndmin``; then, when ``trans1d`` is not -1, its own axes moved to
    start at ``trans1d`` (NumPy's rule)."""
    rank = a.aval.ndim
    if rank >= ndmin:
        return a
    a = S.reshape(a, (1,) * (ndmin - rank) + a.aval.shape, (None,) * (ndmin - rank) + a.aval.dims)
    if trans1d == -1:
        return a
    added = ndmin - rank
    at = trans1d + added + 1 if trans1d < 0 else trans1d
    axes = list(range(ndmin))
    return S.transpose(a, axes[:at] + axes[added:] + axes[at:added])


r_ = _AxisConcatenator("r_", 0, 1, -1)
c_ = _AxisConcatenator("c_", -1, 2, 0)


# ------------------------------------------------------------------------------- unstack, matvec, vecmat


@op
def unstack(x: Tensor[DT, Unpack[Sh]], /, *, axis: int | type[Dim] = 0
            ) -> tuple[Tensor[DT, Unpack[tuple[Any, ...]]], ...]:
    """The slices of ``x`` along ``axis``, as a tuple (NumPy 2.1 / the array API)."""
    t = as_tensor(x)
    if t.aval.ndim == 0:
        raise shape_error("unstack", f"needs an operand of rank >= 1, got {describe(t)}")
    ax = normalize_axes("unstack", axis, t, allow_none=False)[0]
    keep = [k for k in range(t.aval.ndim) if k != ax]
    shape = tuple(t.aval.shape[k] for k in keep)
    names = tuple(t.aval.dims[k] for k in keep)
    return tuple(
        wrap(S.reshape(SL.slice_in_dim(t.atom, i, i + 1, ax), shape, names)) for i in range(t.aval.shape[ax])
    )


def _product_operands(op_name: str, x1: Any, x2: Any, ranks: tuple[int, int]) -> tuple[AnyTensor, AnyTensor]:
    a, b = as_tensor(x1), as_tensor(x2)
    result_dtype(op_name, [a, b])
    for t, rank, which in ((a, ranks[0], "x1"), (b, ranks[1], "x2")):
        if t.aval.ndim < rank:
            raise shape_error(op_name, f"{which} needs rank >= {rank}, got {describe(t)}")
    return a, b


def _check_core(op_name: str, a: AnyTensor, b: AnyTensor, n1: int, n2: int, batch1: int, batch2: int) -> None:
    """The contracted sizes agree and the batch axes broadcast (with the library's policy)."""
    if n1 != n2:
        raise shape_error(op_name, f"contracted axes differ: {describe(a)} and {describe(b)}")
    batches = [Aval(t.aval.shape[:k], t.aval.dtype, t.aval.dims[:k]) for t, k in ((a, batch1), (b, batch2))]
    broadcast_shapes(op_name, batches)


@overload
def matvec(x1: Tensor[DT, Unpack[Sh], M, N], x2: Tensor[DT, Unpack[Sh], N], /) -> Tensor[DT, Unpack[Sh], M]: ...
@overload
def matvec(x1: AnyTensor, x2: AnyTensor, /) -> AnyTensor: ...
@op
def matvec(x1: AnyTensor, x2: AnyTensor, /) -> AnyTensor:
    """Matrix-vector products ``x1 @ x2`` over the last axes (``(..., m, n)`` with ``(..., n)`` gives
    ``(..., m)``), broadcasting the leading batch axes (NumPy 2.2's gufunc)."""
    from .linalg import matmul
    from .shaping import expand_dims

    a, b = _product_operands("matvec", x1, x2, (2, 1))
    _check_core("matvec", a, b, a.aval.shape[-1], b.aval.shape[-1], a.aval.ndim - 2, b.aval.ndim - 1)
    out: AnyTensor = matmul(a, expand_dims(b, -1))
    return out[..., 0]


@overload
def vecmat(x1: Tensor[DT, Unpack[Sh], N], x2: Tensor[DT, Unpack[Sh], N, M], /) -> Tensor[DT, Unpack[Sh], M]: ...
@overload
def vecmat(x1: AnyTensor, x2: AnyTensor, /) -> AnyTensor: ...
@op
def vecmat(x1: AnyTensor, x2: AnyTensor, /) -> AnyTensor:
    """Vector-matrix products over the last axes (``(..., n)`` with ``(..., n, m)`` gives ``(..., m)``),
    broadcasting the leading batch axes (NumPy 2.2's gufunc; no conjugation: there are no complex dtypes)."""
    from .linalg import matmul
    from .shaping import expand_dims

    a, b = _product_operands("vecmat", x1, x2, (1, 2))
    _check_core("vecmat", a, b, a.aval.shape[-1], b.aval.shape[-2], a.aval.ndim - 1, b.aval.ndim - 2)
    out: AnyTensor = matmul(expand_dims(a, -2), b)
    return out[..., 0, :]
