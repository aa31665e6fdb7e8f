"""``lax.rng_bit_generator``: XLA's stateless random bit generator.

It takes JAX's ``u32[4]`` key and gives ``u8``, ``u16``, ``u32`` or ``u64`` bits, JAX's for equal keys. Deliberate
difference from jax.lax: under ``vmap`` each key of the batch draws its own bits (JAX draws the whole batch from
the first key).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...dtypes import u32
from ...staging.primitives import rng_bits as RB
from ...tensor import Tensor
from ..numpy._core import as_tensor, op, wrap
from ._operands import dtype_argument
from .settings import RandomAlgorithm

__all__ = ["rng_bit_generator"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


@op
def rng_bit_generator(key: Tensor[u32, Any], shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT) -> tuple[Tensor[u32, Any], AnyTensor]:
    """XLA's stateless bit generator: ``(new_key, bits)``, ``bits`` of ``shape`` uniformly random in ``dtype``
    (``u8``, ``u16``, ``u32`` or ``u64``) from ``key`` (``u32[4]``, as JAX's) by ``algorithm`` (XLA's THREE_FRY
    or PHILOX; ``RNG_DEFAULT`` lets the platform choose). Integer results: no derivative."""
    k = as_tensor(key)
    bits_dtype = dtype_argument("rng_bit_generator", dtype)
    sizes = tuple(operator.index(n) for n in ((shape,) if isinstance(shape, int) else shape))
    try:
        method = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"lax.rng_bit_generator: algorithm must be a lax.RandomAlgorithm, got {algorithm!r}") from None
    new_key, bits = RB.rng_bit_generator(k.atom, sizes, bits_dtype, method.name)
    return wrap(new_key), wrap(bits)
