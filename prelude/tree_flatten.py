"""``tensorstage.flatten_util``: JAX's ``jax.flatten_util.ravel_pytree`` — a pytree of arrays as one flat vector,
and the function that rebuilds the pytree from such a vector.

The vector is the leaves raveled in pytree order and concatenated. Leaves of one dtype keep it, and the unravel
function then takes a vector of any dtype (JAX's dtype-polymorphic case); leaves of several dtypes are promoted
along JAX's type lattice (an integer beside a float takes the float, ``bfloat16`` beside ``float16`` gives
``float32``, a float beside a complex the complex of the wider width; unlike ``tnp.result_type``, which follows
NumPy), and unravel then requires a vector of that dtype and converts each piece back to its leaf's dtype (a
complex piece of a real leaf loses its imaginary part). A tree with no leaves gives an empty float32 vector.
Python and NumPy scalars are leaves of tensorstage's default dtypes. The unravel function holds only static facts
(structure, shapes, dtypes), is hashable and compares equal for equal trees, so it works inside and across
programs, under ``grad`` and ``vmap``.

Deliberate difference from JAX: a vector of the wrong length (or not 1-D) is a ``ShapeError`` (a ``TypeError``)
naming the expected length, where JAX raises a ``ValueError`` from ``lax.split``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from .. import pytree
from ..staging import dtypes as _dt
from ..staging.errors import ShapeError
from ..staging.source import user_location
from ..tensor import Tensor
from . import numpy as tnp

__all__ = ["ravel_pytree"]

Flat = Tensor[Any, Any]


def _float_of_width(itemsize: int) -> np.dtype[Any]:
    return np.dtype({2: np.float16, 4: np.float32}.get(itemsize, np.float64))


def promote_jax(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any]:
    """JAX's lattice join of two dtypes (``jnp.promote_types``): integers lose to floats without widening them,
    bfloat16 and float16 meet at float32, unsigned and signed integers as NumPy (``uint64`` with a signed one:
    float64)."""
    if a == b or b == _dt.BOOL:
        return a
    if a == _dt.BOOL:
        return b
    if _dt.is_integer(a) and _dt.is_integer(b):
        promoted = np.promote_types(a, b)
        return promoted if _dt.is_integer(promoted) else np.dtype(np.float64)
    if _dt.is_integer(a) or _dt.is_integer(b):
        return b if _dt.is_integer(a) else a
    width = max(_dt.real_dtype(a).itemsize, _dt.real_dtype(b).itemsize)
    if _dt.real_dtype(a).itemsize == _dt.real_dtype(b).itemsize and _dt.real_dtype(a) != _dt.real_dtype(b):
        width *= 2  # two formats of one width (bfloat16, float16) meet at the next
    real = _float_of_width(width)
    return np.dtype(np.complex128 if width > 4 else np.complex64) if _dt.is_complex(a) or _dt.is_complex(b) else real


@dataclass(frozen=True)
class _Unravel:
    """The vector's pieces (by ``sizes``) reshaped to ``shapes`` and put back into ``treedef``; with several leaf
    dtypes, the vector must be of ``to_dtype`` and each piece is converted back to ``from_dtypes``."""

    treedef: Any
    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    from_dtypes: tuple[np.dtype[Any], ...] | None
    to_dtype: np.dtype[Any] | None

    def __call__(self, flat: Any) -> Any:
        if not self.sizes:
            return pytree.unflatten(self.treedef, [])
        vector = tnp.asarray(flat)
        total = sum(self.sizes)
        if vector.aval.shape != (total,):
            raise ShapeError(f"unravel expects a 1-D vector of the {total} values the pytree was raveled to, got "
                             f"{vector.aval}", "ravel_pytree.unravel", user_location())
        if self.to_dtype is not None and vector.aval.dtype != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {vector.aval.dtype}, but expected dtype "
                            f"{self.to_dtype}\n  at {user_location()}")
        ends = np.cumsum(self.sizes)
        pieces = [tnp.reshape(vector[end - size:end], shape) for end, size, shape in zip(ends, self.sizes, self.shapes)]
        if self.from_dtypes is not None:
            pieces = [_converted(piece, dtype) for piece, dtype in zip(pieces, self.from_dtypes)]
        return pytree.unflatten(self.treedef, pieces)


def _converted(piece: Any, dtype: np.dtype[Any]) -> Any:
    if _dt.is_complex(piece.aval.dtype) and not _dt.is_complex(dtype):
        piece = tnp.real(piece)  # as JAX: the imaginary part dropped without a warning
    return piece.astype(dtype)


def ravel_pytree(tree: Any) -> tuple[Flat, Callable[[Flat], Any]]:
    """``tree``'s leaves raveled and concatenated into one 1-D vector (their dtypes promoted as in JAX), and the
    function taking such a vector back to a pytree like ``tree`` (``jax.flatten_util.ravel_pytree``)."""
    raw, treedef = pytree.flatten(tree)
    leaves = [tnp.asarray(leaf) for leaf in raw]
    if not leaves:
        return tnp.zeros(0, dtype=np.float32), _Unravel(treedef, (), (), None, None)
    sizes = tuple(int(np.prod(leaf.aval.shape)) for leaf in leaves)
    shapes = tuple(tuple(leaf.aval.shape) for leaf in leaves)
    from_dtypes = tuple(leaf.aval.dtype for leaf in leaves)
    to_dtype = reduce(promote_jax, from_dtypes)
    flat = tnp.concatenate([tnp.ravel(leaf).astype(to_dtype) for leaf in leaves])
    if all(dtype == to_dtype for dtype in from_dtypes):  # one dtype: unravel takes any (JAX's polymorphic case)
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)
