"""Random permutations: sort by random keys.

Equal keys would leave their elements in input order (the sort is stable), a small bias; enough sorting rounds
with fresh keys make a collision between any pair unlikely (the same rule of thumb JAX uses).
"""

from __future__ import annotations

import math

import numpy as np

from ...staging import dtypes as _dt
from ...staging.ir import Aval
from ...staging.primitives import structural as S
from ...staging.primitives.slicing import iota
from ...staging.primitives.sorting import sort
from ..numpy._core import as_tensor, describe, normalize_axes, op, shape_error, wrap
from ._keys import AnyTensor, Key, bits32, check_key, split


def _rounds(n: int) -> int:
    # A collision among n keys of 32 bits is likely once n**2 ~ 2**32; r rounds act like 32*r-bit keys.
    return max(1, math.ceil(3 * math.log(max(n, 2)) / math.log(2**32)))


@op
def permutation(key: Key, x: int | AnyTensor, axis: int | type = 0, independent: bool = False) -> AnyTensor:
    """A random permutation of ``range(x)`` (i32) for an int ``x``, or ``x`` shuffled along ``axis`` (whole slices
    move together; ``independent=True`` shuffles every 1-D slice along ``axis`` with its own permutation)."""
    check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise shape_error("permutation", f"needs a non-negative length, got {x}")
        values = wrap(iota(_dt.DEFAULT_INT, (int(x),)))
        axis_index = 0
    else:
        values = as_tensor(x)
        if values.aval.ndim == 0:
            raise shape_error("permutation", f"needs an int or an array of rank >= 1, got {describe(x)}")
        (axis_index,) = normalize_axes("permutation", axis, values, allow_none=False)
    n = values.aval.shape[axis_index]
    shuffled = values.atom
    rounds = _rounds(n)
    for round_key in split(key, rounds) if rounds > 1 else (key,):
        aval: Aval = shuffled.aval
        if independent:
            spread = bits32(as_tensor(round_key).atom, aval.shape, aval.dims)
        else:
            keys = bits32(as_tensor(round_key).atom, (n,), (values.aval.dims[axis_index],))
            spread = S.broadcast_in_dim(keys, aval.shape, (axis_index,), aval.dims)
        shuffled = sort([spread, shuffled], axis_index)[1]
    return wrap(shuffled)
