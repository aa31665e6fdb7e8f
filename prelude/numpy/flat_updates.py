"""``put`` and ``place``: NumPy's updates of an array's flattened elements, as functions returning the updated
copy.

As ``fill_diagonal`` and ``put_along_axis`` (and as in JAX), arrays are immutable: both need ``inplace=False``
(the default, True, is an error, so that a ported ``np.put(a, i, v)`` that ignores the result cannot silently
change nothing). Values are flattened and repeated cyclically to the number of targets, as in NumPy, and must
have the array's dtype (Python numbers adopt it).

``put`` indices: static ones (Python ints, lists, NumPy arrays) are checked as NumPy checks them under the default
``mode=None`` (or ``"raise"``), negatives counting from the end; tensor indices cannot make the op raise under
``mode=None``, so out-of-range ones are dropped, as ``x.at[i].set`` drops them. ``mode="raise"`` checks concrete
tensor indices on the host and, while staging, is an error asking for another mode; ``"clip"`` clips into
``[0, size)`` and ``"wrap"`` takes indices modulo the size, as NumPy's modes do. Repeated indices: the last update
wins.

``place`` masks: static (NumPy) masks are read as NumPy reads them (nonzero is True); a tensor mask must be bool.
The ``k``-th True position takes ``vals[k % len(vals)]``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...array import Array
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...staging.ir import Atom
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import as_tensor, describe, dtype_error, op, shape_error, wrap
from .cumulative import cumsum
from .index_tools import _error, _immutable, _shaped, _values
from .indexing import index_atom, update_atom

__all__ = ["place", "put"]

DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

_PUT_MODES = (None, "raise", "clip", "wrap")


def put(a: Tensor[DT, Unpack[Sh]], ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True
        ) -> Tensor[DT, Unpack[Sh]]:
    """A copy of ``a`` with its flattened elements at ``ind`` set to ``v`` (flattened, repeated cyclically to the
    number of indices). ``inplace=False`` is required; ``mode`` says what out-of-range indices do (see the module
    docstring)."""
    _immutable("put", inplace)
    if mode not in _PUT_MODES:
        raise _error(ValueError, "put", f"mode must be one of {_PUT_MODES}, got {mode!r}")
    if isinstance(ind, Tensor) and mode == "raise":
        if not isinstance(ind, Array):
            raise _error(ValueError, "put", "mode='raise' cannot check staged indices (their values are runtime "
                         "data): use mode=None (drop), 'clip' or 'wrap'")
        ind = ind.numpy()  # a device array's values are known: checked on the host
    if not isinstance(ind, Tensor):
        ind = _static_flat_indices(ind, _size_of(a), mode)
        mode = None  # in range now
    return _put(a, ind, v, mode)


def _size_of(a: Any) -> int:
    return a.aval.size if isinstance(a, Tensor) else int(np.size(a))


def _static_flat_indices(ind: Any, size: int, mode: str | None) -> np.ndarray[Any, Any]:
    """Static indices as in-range flat positions (i64 when the size needs it), as NumPy's ``put`` takes them."""
    host = np.asarray(ind).ravel()
    if host.size and host.dtype.kind not in "iu":
        raise _error(TypeError, "put", f"indices must be integers, got {describe(np.asarray(ind))}")
    host = host.astype(np.int64)
    if not host.size:
        return host.astype(np.int32)
    if size == 0:
        raise _error(IndexError, "put", "cannot replace elements of an empty array")
    if mode == "clip":
        host = np.clip(host, 0, size - 1)
    elif mode == "wrap":
        host = np.mod(host, size)
    else:
        bad = (host < -size) | (host >= size)
        if bad.any():
            raise _error(IndexError, "put", f"index {host[bad][0]} is out of bounds for a flattened array of size "
                         f"{size}")
        host = np.where(host < 0, host + size, host)
    return host.astype(np.int32 if size <= np.iinfo(np.int32).max else np.int64)


@op
def _put(a: AnyTensor, ind: Any, v: Any, mode: str | None) -> AnyTensor:
    t = as_tensor(a)
    flat = S.reshape(t.atom, (t.aval.size,))
    if isinstance(ind, np.ndarray):
        positions: Any = ind
        count = ind.size
    else:
        index = as_tensor(ind)
        if not _dt.is_integer(index.aval.dtype):
            raise dtype_error("put", f"indices must be integers, got {describe(index)}")
        positions = wrap(_into_range(S.reshape(index.atom, (index.aval.size,)), t.aval.size, mode))
        count = index.aval.size
    values = _cycled("put", t, v, count)
    if count == 0 or values is None or t.aval.size == 0:
        return t
    return _shaped(update_atom("put", flat, positions, values, "set"), t)


def _into_range(i: Atom, size: int, mode: str | None) -> Atom:
    if mode is None or size == 0:
        return i  # out-of-range updates are dropped
    dtype = i.aval.dtype
    if size - 1 > np.iinfo(dtype).max:  # the bound itself does not fit (an i8 index into 200 elements): work wider
        return _into_range(E.convert(i, np.dtype(np.int64)), size, mode)
    if mode == "clip":
        low = E.scalar(0, i)
        return E.clamp(low, i, E.scalar(size - 1, i))
    r = E.rem(i, E.scalar(size, i))  # truncated: negative for a negative i
    if _dt.is_signed(dtype):
        r = E.select(E.lt(r, E.scalar(0, r)), E.add(r, E.scalar(size, r)), r)
    return r


def _cycled(op_name: str, t: AnyTensor, v: Any, count: int) -> Atom | None:
    """``v`` in ``t``'s dtype, flattened and repeated cyclically to ``count`` elements; None when ``v`` is empty."""
    values = _values(op_name, t, v)
    if values.aval.ndim == 0:
        return values
    if values.aval.size == 0:
        return None
    flat = S.reshape(values, (values.aval.size,))
    if values.aval.size == count:
        return flat
    return index_atom(op_name, flat, np.arange(count) % values.aval.size)


def place(arr: Tensor[DT, Unpack[Sh]], mask: Any, vals: Any, *, inplace: bool = True) -> Tensor[DT, Unpack[Sh]]:
    """A copy of ``arr`` whose elements where ``mask`` is True take ``vals`` in order (flattened, repeated
    cyclically). ``mask`` has ``arr``'s size; ``inplace=False`` is required (see the module docstring)."""
    _immutable("place", inplace)
    if not isinstance(mask, Tensor):
        mask = np.asarray(mask).astype(bool)
    # A static mask with no True takes no values: empty ones are fine then, as in NumPy.
    return _place(arr, mask, vals, isinstance(mask, Tensor) or bool(mask.any()))


def _check_size(arr: Any, mask: Any) -> None:
    if _size_of(arr) != _size_of(mask):
        raise shape_error("place", f"mask {describe(mask)} must have the size of the array {describe(arr)}")


@op
def _place(arr: AnyTensor, mask: Any, vals: Any, takes_values: bool) -> AnyTensor:
    t = as_tensor(arr)
    _check_size(t, mask)
    m = as_tensor(mask)
    if m.aval.dtype != _dt.BOOL:
        raise dtype_error("place", f"a tensor mask must be bool, got {describe(m)}")
    if t.aval.size == 0 or not takes_values:
        _values("place", t, vals)  # still checked
        return t
    flat_mask = S.reshape(m.atom, (t.aval.size,))
    values = _values("place", t, vals)
    if values.aval.ndim:
        if values.aval.size == 0:
            raise _error(ValueError, "place", "cannot place values from an empty array")
        # The k-th True position takes vals[k % len(vals)]: k is the running count of Trues before it.
        rank = as_tensor(cumsum(wrap(E.convert(flat_mask, _dt.DEFAULT_INT)))).atom
        picks = E.rem(E.sub(rank, E.scalar(1, rank)), E.scalar(values.aval.size, rank))
        picks = E.maximum(picks, E.scalar(0, picks))  # before the first True (never selected below)
        values = index_atom("place", S.reshape(values, (values.aval.size,)), wrap(picks))
    flat = S.reshape(t.atom, (t.aval.size,))
    return _shaped(E.select(flat_mask, values if values.aval.ndim else S.broadcast_to(values, flat.aval), flat), t)
