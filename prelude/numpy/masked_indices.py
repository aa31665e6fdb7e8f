"""``mask_indices``: the indices of an ``n`` x ``n`` array that a masking function keeps (``triu``, ``tril``...).

As in NumPy, ``mask_func(a, k)`` is called on an ``n`` x ``n`` array of ones (here i32, a device array) and the
indices of its nonzero result are returned, row-major, as i32 tensors (NumPy: int64). ``n`` and ``k`` are static.
A function that gives a staged result (inside a program) needs ``size=``, as ``nonzero`` does: exactly ``size``
indices, padded with zeros, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...array import asarray
from ...dtypes import i32
from ...tensor import Tensor
from .index_tools import _error
from .selection import nonzero
from .static_settings import static_int

__all__ = ["mask_indices"]


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *, size: int | None = None
                 ) -> tuple[Tensor[i32, Any], Tensor[i32, Any]]:
    """Row and column indices where ``mask_func(ones((n, n)), k)`` is nonzero: ``mask_indices(3, tnp.triu)`` are
    the indices of the upper triangle."""
    n = static_int("mask_indices", n, "n", located=True)
    if n < 0:
        raise _error(ValueError, "mask_indices", f"n must be non-negative, got {n}")
    if not callable(mask_func):
        raise _error(TypeError, "mask_indices", f"mask_func must be a function of (array, k), got {mask_func!r}")
    mask = mask_func(asarray(np.ones((n, n), np.int32)), k)
    mask_shape = tuple(mask.shape) if isinstance(mask, Tensor) else np.shape(mask)
    if mask_shape != (n, n):
        raise _error(ValueError, "mask_indices", f"mask_func must return an array of shape {(n, n)}, got "
                     f"shape {mask_shape}")
    rows, cols = nonzero(mask, size=size)
    return rows, cols
