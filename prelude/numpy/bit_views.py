"""``x.view(dtype)``: an array's bytes read as another dtype (NumPy's ``ndarray.view`` and ``jax.Array.view``;
NumPy and ``jax.numpy`` have no function form).

A dtype of the same width keeps the shape; another width rescales the last axis (f32 ``(..., n)`` as u8:
``(..., 4n)``; u8 ``(..., 4n)`` as f32: ``(..., n)``), which needs a rank >= 1 and a last axis whose byte size the
new dtype divides (NumPy's ValueErrors otherwise). Bytes are NumPy's on a little-endian host. Built on
``bitcast_convert`` and reshapes; as jnp's ``view``: bool reads as its bytes (0 or 1), complex as its (real,
imag) pairs.

Deliberate difference (shared with jnp): viewing bytes as bool gives ``byte != 0`` (NumPy keeps the raw byte in
a bool, which is not a valid bool unless it is 0 or 1). The result is a new array, never an alias (arrays are
immutable), and the last axis of a view that changes its size loses its dim name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...dtypes import to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import bitcast as B
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import as_tensor, op, wrap

__all__ = ["view"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
_U8 = np.dtype(np.uint8)


def view(x: AnyTensor, dtype: Any = None) -> AnyTensor:
    """``x``'s bytes as ``dtype`` (``x`` itself for None or ``x``'s own dtype, as jnp's ``view``)."""
    if dtype is None:
        return x
    try:
        same = to_numpy(dtype) == x.dtype
    except (TypeError, ValueError):
        same = False  # _view names the bad dtype with the user's line
    return x if same else _view(x, dtype)


@op
def _view(x: AnyTensor, dtype: Any) -> AnyTensor:
    a = as_tensor(x).atom
    target, source = to_numpy(dtype), a.aval
    if source.ndim == 0:
        if target.itemsize != source.dtype.itemsize:
            raise ValueError(f"view of a rank-0 {source} as {_dt.short_name(target)} (a dtype of another size) "
                             "changes the last axis, which it has none of (NumPy's rule)")
        return wrap(S.reshape(_from_bytes(_to_real(S.reshape(a, (1,))), target), ()))
    nbytes = source.shape[-1] * source.dtype.itemsize
    if nbytes % target.itemsize:
        raise ValueError(f"view of {source} as {_dt.short_name(target)}: the last axis holds {nbytes} bytes, not a "
                         f"multiple of {_dt.short_name(target)}'s {target.itemsize} (NumPy's rule)")
    out = _from_bytes(_to_real(a), target)
    if out.aval.shape == source.shape and out.aval.dims != source.dims:  # complex of an equal width: same axis
        out = S.reshape(out, source.shape, source.dims)
    return wrap(out)


def _tail_reshaped(x: Atom, axes: int, *sizes: int) -> Atom:
    """``x`` with its last ``axes`` axes replaced by axes of ``sizes`` (row-major); the new axes have no names."""
    keep = x.aval.ndim - axes
    return S.reshape(x, (*x.aval.shape[:keep], *sizes), (*x.aval.dims[:keep], *(None,) * len(sizes)))


def _to_real(x: Atom) -> Atom:
    """A bool or complex ``x`` as a real dtype of the same bytes (u8; interleaved real and imaginary parts)."""
    if x.aval.dtype == _dt.BOOL:
        return E.convert(x, _U8)
    if x.aval.dtype not in _dt.COMPLEX:
        return x
    n = x.aval.shape[-1]
    pairs = [_tail_reshaped(part, 1, n, 1) for part in (C.real(x), C.imag(x))]
    return _tail_reshaped(SL.concatenate(pairs, x.aval.ndim), 2, 2 * n)


def _from_bytes(x: Atom, target: np.dtype[Any]) -> Atom:
    """Real ``x`` (not bool) viewed as ``target``, any dtype."""
    if target == _dt.BOOL:
        bytes_ = _reinterpret(x, _U8)
        return bind(E.ne_p, bytes_, E.scalar(0, bytes_))  # type: ignore[no-any-return]
    if target not in _dt.COMPLEX:
        return _reinterpret(x, target)
    parts = _reinterpret(x, _dt.real_dtype(target))
    pairs = _tail_reshaped(parts, 1, parts.aval.shape[-1] // 2, 2)
    last = pairs.aval.ndim - 1
    re, im = (_tail_reshaped(SL.slice_in_dim(pairs, i, i + 1, last), 2, pairs.aval.shape[-2]) for i in (0, 1))
    return C.complex(re, im)


def _reinterpret(x: Atom, target: np.dtype[Any]) -> Atom:
    """Real ``x`` as the real ``target``: the last axis rescaled by the ratio of their widths."""
    old, new = x.aval.dtype.itemsize, target.itemsize
    if old < new:
        return B.bitcast_convert(_tail_reshaped(x, 1, x.aval.shape[-1] * old // new, new // old), target)
    if old > new:
        return _tail_reshaped(B.bitcast_convert(x, target), 2, x.aval.shape[-1] * old // new)
    return B.bitcast_convert(x, target)
