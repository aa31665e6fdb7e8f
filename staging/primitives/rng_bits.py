"""rng_bit_generator: XLA's stateless random bit generator (StableHLO's ``rng_bit_generator``), as JAX's
``lax.rng_bit_generator``: a ``u32[4]`` key (XLA's ``u64[2]`` state, bit for bit) in, ``(new_key, bits)`` out,
``bits`` of ``shape`` in ``u8``, ``u16``, ``u32`` or ``u64``, by ``algorithm``: ``RNG_THREE_FRY``, ``RNG_PHILOX``
(the same bits on every platform) or ``RNG_DEFAULT`` (the platform's choice).

No derivative (integer outputs). Batching draws each key's bits on its own: one generator per member, exactly what
a loop over the keys gives (JAX's rule draws the whole batch from the first key instead).
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
from ..shapes import check_sizes
from . import elementwise as E
from . import slicing as SL
from . import structural as S

ALGORITHMS = ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX")
KEY_SHAPE = (4,)
_U32 = np.dtype(np.uint32)
_BIT_DTYPES = dtypes.UNSIGNED

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True, differentiable=False)


@rng_bit_generator_p.def_shape
def _rng_bits_shape(key: Aval, *, shape: tuple[int, ...], dtype: np.dtype[Any], algorithm: str) -> tuple[Aval, Aval]:
    op = "rng_bit_generator"
    if key.shape != KEY_SHAPE or key.dtype != _U32:
        raise DTypeError(f"the key must be u32[4] (JAX's representation of XLA's u64[2] state), got {key}", op)
    if dtype not in _BIT_DTYPES:
        raise DTypeError(f"bits come as u8, u16, u32 or u64, not {dtypes.short_name(dtype)}", op)
    if algorithm not in ALGORITHMS:
        raise ShapeError(f"unknown algorithm {algorithm!r}; expected one of {ALGORITHMS}", op)
    check_sizes(op, shape)
    return key, Aval(tuple(shape), dtype, (None,) * len(shape))


def rng_bit_generator(key: Atom, shape: Sequence[int], dtype: np.dtype[Any], algorithm: str) -> tuple[Atom, Atom]:
    new_key, bits = bind(rng_bit_generator_p, key, shape=tuple(shape), dtype=np.dtype(dtype), algorithm=algorithm)
    return new_key, bits


rng_bit_generator_p.def_jvp(E._no_tangent_jvp)
rng_bit_generator_p.def_vjp(E._no_cotangent_vjp)


@rng_bit_generator_p.def_batch
def _rng_bits_batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
    """One generator per key of the batch (static size), results stacked on a leading axis."""
    (keys,) = args
    keys = S.moveaxis(keys, dims[0], 0)  # type: ignore[arg-type]  # the walker batches this only operand
    new_keys, bits = [], []
    for i in range(keys.aval.shape[0]):
        key = S.reshape(SL.slice_in_dim(keys, i, i + 1, 0), KEY_SHAPE)
        k, b = rng_bit_generator(key, **params)
        new_keys.append(S.reshape(k, (1, *KEY_SHAPE)))
        bits.append(S.reshape(b, (1, *b.aval.shape)))
    return (SL.concatenate(new_keys, 0), SL.concatenate(bits, 0)), (0, 0)
