"""``ts.live_arrays(platform=None)`` (``jax.live_arrays``): every array alive on a platform's devices, read from
jaxlib's client (which tracks its buffers itself: creating an Array does no extra work for this).

Deliberate differences from JAX: the result holds new ``ts.Array`` objects around the live buffers, not the
objects the program made (``is`` tells them apart; values, ``delete()`` and ``is_deleted()`` are shared), with
anonymous dims; buffers the library holds (cached constants) are listed too, as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .array import Array, default_platform
from .lowering import backend
from .staging.ir import Aval

__all__ = ["live_arrays"]


def live_arrays(platform: str | None = None) -> list[Array[Any]]:
    """The arrays alive on ``platform``'s devices (``'cpu'`` or ``'gpu'``; the default platform when None)."""
    client = backend.client_for(platform or default_platform())
    arrays: list[Array[Any]] = []
    for buffer in client.live_arrays():
        aval = getattr(buffer, "aval", None)
        if aval is None:  # a per-device piece jaxlib made without a type (no user array is one)
            continue
        arrays.append(Array(buffer, Aval(tuple(aval.shape), np.dtype(aval.dtype))))
    return arrays
