"""bitcast_convert: the bits of every element read as another dtype (StableHLO's ``bitcast_convert``).

The shape follows JAX's ``lax.bitcast_convert_type``:
- same width (f32 -> i32): the same shape;
- to a narrower dtype (f32 -> u8): each element becomes ``ratio`` narrower ones along a new trailing axis
  (``(..., 4)``), in memory order: NumPy's ``x.view(u8).reshape(*x.shape, 4)`` on a little-endian host;
- to a wider dtype (u8 -> f32): the last axis must hold exactly ``ratio`` elements, which join into one (and the
  axis goes).
bool and complex only bitcast to themselves, as in JAX (bool has no defined bit width in StableHLO and complex no
single bit layout to reinterpret): ``Tensor.view`` reads bool as u8 and complex as (real, imag) pairs instead.

The lowering (lowering/rules/elementwise.py) writes a change of width with same-width bitcasts and integer shifts:
XLA folds adjacent width-changing bitcasts into one of the wrong shape.

Rules: the result carries no derivative (its tangent and cotangent are zero, as JAX's ``defjvp_zero``); the
batching rule keeps the batch axis where it is, except when a batch axis that is last would be the axis a
widening joins: it moves one place left first (so the result's batch axis is last again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from . import elementwise as E
from . import structural as S

OP = "bitcast_convert"

bitcast_convert_p = Primitive(OP, differentiable=False)


def _refuse_special(x: Aval, new_dtype: np.dtype[Any]) -> None:
    if dtypes.BOOL in (x.dtype, new_dtype) or dtypes.COMPLEX & {x.dtype, new_dtype}:
        raise DTypeError(
            f"cannot bitcast {x} to {dtypes.short_name(new_dtype)}: bool and complex bitcast only to themselves "
            "(bool has no bit width, complex no single bit layout); x.view(dtype) reads bool as u8 and complex as "
            "(real, imag) pairs", OP,
        )


@bitcast_convert_p.def_shape
def _bitcast_shape(x: Aval, *, new_dtype: np.dtype[Any]) -> Aval:
    if x.dtype == new_dtype:
        return x
    _refuse_special(x, new_dtype)
    old_size, new_size = x.dtype.itemsize, new_dtype.itemsize
    if old_size == new_size:
        return x.with_dtype(new_dtype)
    if old_size > new_size:
        return Aval((*x.shape, old_size // new_size), new_dtype, (*x.dims, None))
    ratio = new_size // old_size
    if not x.shape or x.shape[-1] != ratio:
        raise ShapeError(
            f"bitcasting {x} to the wider {dtypes.short_name(new_dtype)} joins {ratio} elements of the last axis into "
            f"one, so that axis must have size {ratio} (x.view({dtypes.short_name(new_dtype)}) takes any multiple of "
            f"{ratio})", OP,
        )
    return Aval(x.shape[:-1], new_dtype, x.dims[:-1])


def bitcast_convert(x: Atom, new_dtype: np.dtype[Any]) -> Atom:
    if x.aval.dtype == new_dtype:
        return x
    return bind(bitcast_convert_p, x, new_dtype=new_dtype)  # type: ignore[no-any-return]


bitcast_convert_p.def_jvp(E._no_tangent_jvp)
bitcast_convert_p.def_vjp(E._no_cotangent_vjp)


@bitcast_convert_p.def_batch
def _bitcast_batch(args: Sequence[Atom], dims: Sequence[int | None], *, new_dtype: np.dtype[Any]) -> Any:
    (x,), (d,) = args, dims
    assert d is not None
    widens = new_dtype.itemsize > x.aval.dtype.itemsize
    if widens and d == x.aval.ndim - 1 and d > 0:  # the batch axis stands where the joined axis must be
        x = S.moveaxis(x, d, d - 1)
        d -= 1
    return bind(bitcast_convert_p, x, new_dtype=new_dtype), d
