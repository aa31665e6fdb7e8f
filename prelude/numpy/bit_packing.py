"""``packbits`` and ``unpackbits``: bool or uint8 data packed into (or unpacked from) the bits of uint8 bytes along
an axis, NumPy's ``bitorder`` included. ``unpackbits`` of an empty array with ``count > 0`` pads with zeros (NumPy
returns uninitialised memory there)."""

from __future__ import annotations

from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...dtypes import u8
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import as_tensor, describe, dtype_error, normalize_axes, op, shape_error, wrap
from .index_tools import Sh, _c, _error
from .static_settings import static_int

__all__: list[str] = ["packbits", "unpackbits"]

_U8 = np.dtype(np.uint8)


# ------------------------------------------------------------------------------------------------ bits


def _bit_order(op_name: str, bitorder: str) -> np.ndarray[Any, Any]:
    """Bit weights of one byte, most significant first for ``"big"``."""
    if bitorder not in ("big", "little"):
        raise _error(ValueError, op_name, f"bitorder must be 'big' or 'little', got {bitorder!r}")
    weights = (1 << np.arange(8)).astype(np.uint8)
    return weights[::-1] if bitorder == "big" else weights


def _last_axis(op_name: str, t: Traced[Any], axis: int | None) -> tuple[Atom, int]:
    """The operand with ``axis`` moved last (the flattened operand when None), and where to move it back."""
    if axis is None:
        return S.reshape(t.atom, (t.aval.size,)), 0
    if t.aval.ndim == 0:
        raise shape_error(op_name, f"an axis needs an operand of rank >= 1, got {describe(t)}")
    ax = normalize_axes(op_name, axis, t, allow_none=False)[0]
    order = [k for k in range(t.aval.ndim) if k != ax] + [ax]
    return S.transpose(t.atom, order), ax


def _axis_back(x: Atom, ax: int) -> Atom:
    order = list(range(x.aval.ndim - 1))
    order.insert(ax, x.aval.ndim - 1)
    return S.transpose(x, order)


@op
def packbits(a: Tensor[Any, Unpack[Sh]], axis: int | None = None, bitorder: str = "big"
             ) -> Tensor[u8, Unpack[tuple[Any, ...]]]:
    """Elements of an integer or bool array as bits (non-zero is 1) packed 8 to a u8 along ``axis`` (the
    flattened array when None), the last byte padded with zero bits."""
    weights = _bit_order("packbits", bitorder)
    t = as_tensor(a)
    if not (_dt.is_integer(t.aval.dtype) or t.aval.dtype == _dt.BOOL):
        raise dtype_error("packbits", f"needs an integer or bool operand, got {describe(t)}")
    x, ax = _last_axis("packbits", t, axis)
    bits = E.convert(x if x.aval.dtype == _dt.BOOL else _nonzero(x), _U8)
    *lead, n = bits.aval.shape
    nbytes = -(-n // 8)
    bits = SL.pad(bits, E.scalar(0, bits), [(0, 0, 0)] * len(lead) + [(0, nbytes * 8 - n, 0)])
    grouped = S.reshape(bits, (*lead, nbytes, 8))
    w = S.broadcast_in_dim(literal(weights, _U8), grouped.aval.shape, (len(lead) + 1,))
    packed = R.reduce_sum(E.mul(grouped, w), (len(lead) + 1,))  # the bits are disjoint: the sum is their OR
    return wrap(_axis_back(packed, ax) if axis is not None else packed)


def _nonzero(x: Atom) -> Atom:
    out: Atom = bind(E.ne_p, x, _c(0, x))
    return out


@op
def unpackbits(a: Tensor[u8, Unpack[Sh]], axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Tensor[u8, Unpack[tuple[Any, ...]]]:
    """The bits of a u8 array (each byte becomes 8 u8 zeros and ones) along ``axis`` (the flattened array when
    None). ``count`` keeps that many bits (padding with zeros past the end), a negative one drops bits from the
    end."""
    weights = _bit_order("unpackbits", bitorder)
    t = as_tensor(a)
    if t.aval.dtype != _U8:
        raise dtype_error("unpackbits", f"needs a u8 operand, got {describe(t)}")
    x, ax = _last_axis("unpackbits", t, axis)
    *lead, n = x.aval.shape
    spread = S.broadcast_in_dim(x, (*lead, n, 8), tuple(range(len(lead) + 1)))
    w = S.broadcast_in_dim(literal(weights, _U8), spread.aval.shape, (len(lead) + 1,))
    bits = E.convert(_nonzero(bind(E.and_p, spread, w)), _U8)
    bits = S.reshape(bits, (*lead, n * 8))
    if count is not None:
        bits = _count_bits(bits, static_int("unpackbits", count, "count"), n * 8)
    return wrap(_axis_back(bits, ax) if axis is not None else bits)


def _count_bits(bits: Atom, count: int, total: int) -> Atom:
    if count < -total:
        raise _error(ValueError, "unpackbits", f"count={count} drops more than the {total} bits there are")
    keep = total + count if count < 0 else count
    if keep <= total:
        return SL.slice_in_dim(bits, 0, keep, bits.aval.ndim - 1)
    pads = [(0, 0, 0)] * (bits.aval.ndim - 1) + [(0, keep - total, 0)]
    return SL.pad(bits, E.scalar(0, bits), pads)
