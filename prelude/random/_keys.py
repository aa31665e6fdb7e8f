"""PRNG keys: making them, splitting them, folding data into them, and drawing raw bits from them.

A key is a ``u32[2]`` tensor (the two words of a Threefry key). Keys are values, not state: the same key gives
the same numbers everywhere, so a key must be split (or have data folded in) before being used twice. The bits
of element ``i`` (row-major) of a draw are ``threefry(key, (0, i))``, the layout JAX uses with
``jax_threefry_partitionable``, so draws also match JAX's bit for bit.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypeVar, overload

import numpy as np
from typing_extensions import Unpack

from ...dtypes import Unsigned, to_numpy, u32
from ...staging import dtypes as _dt
from ...staging.builder import bind, is_staging
from ...staging.ir import Atom, DimName, literal
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...staging.primitives.remat import optimization_barrier
from ...staging.primitives.slicing import concatenate, iota, slice_in_dim
from ...tensor import Tensor
from ..numpy._core import ShapeLike, as_tensor, describe, dtype_error, op, parse_shape, shape_error, wrap
from ._threefry import U32 as U32
from ._threefry import threefry2x32

Key: TypeAlias = Tensor[u32, Literal[2]]
AnyTensor: TypeAlias = Tensor[Any, Unpack[tuple[Any, ...]]]


# ------------------------------------------------------------------------------------------- key words


def check_key(op_name: str, key: Any) -> Atom:
    """The key's atom, after checking it is a ``u32[2]`` key."""
    if not isinstance(key, Tensor):
        hint = ""
        if isinstance(key, (tuple, list)):  # what split returns: under vmap each key's words were mapped apart
            hint = " (a tuple of keys, as split gives: pass one, or tnp.stack(keys) to map over them with vmap)"
        raise dtype_error(op_name, f"expected a key from ts.random.key(seed), got {describe(key)}{hint}")
    if key.aval.dtype != U32 or key.aval.shape != (2,):
        raise dtype_error(op_name, f"expected a key (u32[2]) from ts.random.key(seed), got {key.aval}")
    return as_tensor(key).atom


def key_words(key: Atom) -> tuple[Atom, Atom]:
    """The two u32 words of a key, as scalars."""
    return _element(key, 0), _element(key, 1)


def _element(vector: Atom, i: int) -> Atom:
    return S.reshape(slice_in_dim(vector, i, i + 1, 0), ())


def make_key(first: Atom, second: Atom) -> Atom:
    """A ``u32[2]`` key from two u32 scalars, materialized: without the barrier XLA CPU fuses the Threefry that
    derived the key into every draw made from it, and each such draw took ~1.5 s to compile instead of ~0.1 s
    (measured: 8 draws from ``split(key, 8)``, 15 s without, 1.5 s with)."""
    (key,) = optimization_barrier([concatenate([S.reshape(first, (1,)), S.reshape(second, (1,))], 0)])
    return key


# ----------------------------------------------------------------------------------------------- shapes


def _counters(sizes: tuple[int, ...], names: tuple[DimName, ...]) -> Atom:
    """The row-major index of every element, as u32."""
    count = int(np.prod(sizes, dtype=np.int64))
    if count >= 2**32:
        raise shape_error("random", f"draws of {count} elements (>= 2**32) are not supported")
    return S.reshape(iota(U32, (count,)), sizes, names)


def bits_pair(key: Atom, sizes: tuple[int, ...], names: tuple[DimName, ...]) -> tuple[Atom, Atom]:
    """Both Threefry output words for every element of the shape: 64 random bits each."""
    k0, k1 = key_words(key)
    # Counters below 2**32 have a zero high word; a rank-0 zero broadcasts against the low words.
    counters = _counters(sizes, names) if sizes else literal(0, U32)
    high, low = threefry2x32(k0, k1, literal(0, U32), counters)
    # The bits are materialized before any transform of them: XLA CPU (jaxlib 0.11) fuses Threefry's rounds with
    # consumers such as erf_inv or lgamma inside bounded while loops into kernels whose LLVM optimization never
    # finishes. Generating the bits costs far more than storing them, so the split costs no measurable time.
    high, low = optimization_barrier([high, low])
    return high, low


def bits32(key: Atom, sizes: tuple[int, ...], names: tuple[DimName, ...]) -> Atom:
    """32 random bits per element: the xor of the two Threefry words."""
    high, low = bits_pair(key, sizes, names)
    return bind(E.xor_p, high, low)  # type: ignore[no-any-return]


def random_bits(key: Atom, sizes: tuple[int, ...], names: tuple[DimName, ...], dtype: np.dtype[Any]) -> Atom:
    """Random bits per element in the unsigned ``dtype``, JAX's for the same key: 64 bits are the two Threefry
    words side by side (the first one high), narrower dtypes the low bits of ``bits32``."""
    if dtype.itemsize == 8:
        high, low = (E.convert(word, dtype) for word in bits_pair(key, sizes, names))
        return bind(E.or_p, bind(E.shift_left_p, high, literal(32, dtype)), low)  # type: ignore[no-any-return]
    word = bits32(key, sizes, names)
    return word if dtype == U32 else E.convert(word, dtype)


# ------------------------------------------------------------------------------------------- public API


def key(seed: int | Tensor[Any]) -> Key:
    """A key from an integer seed (a Python int up to 64 bits, or an integer scalar tensor)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        value = int(seed)
        if not -(2**63) <= value < 2**64:
            raise dtype_error("key", f"seed {value} does not fit in 64 bits")
        words = np.array([(value >> 32) & 0xFFFFFFFF, value & 0xFFFFFFFF], dtype=np.uint32)
        if is_staging():
            return wrap(literal(words, U32))
        from ...array import asarray

        return asarray(words)
    if isinstance(seed, bool) or not isinstance(seed, Tensor):
        raise dtype_error("key", f"a seed must be an int or an integer scalar tensor, got {describe(seed)}")
    return _key_from_tensor(seed)


@op
def _key_from_tensor(seed: Tensor[Any]) -> Key:
    t = as_tensor(seed)
    if t.aval.ndim != 0 or not _dt.is_integer(t.aval.dtype):
        raise dtype_error("key", f"a seed must be an integer scalar, got {describe(seed)}")
    # The high word is the one ts.random.key(int) takes from a Python int of the same value, so a seed gives one
    # key whether it is staged or not: 64-bit seeds contribute theirs, narrower negative ones are sign-extended.
    if t.aval.dtype.itemsize == 8:
        high = E.convert(_shift_right(t.atom, 32), U32)
    elif _dt.is_signed(t.aval.dtype):
        high = E.select(E.lt(t.atom, literal(0, t.aval.dtype)), literal(0xFFFFFFFF, U32), literal(0, U32))
    else:
        high = literal(0, U32)
    return wrap(make_key(high, E.convert(t.atom, U32)))


def _shift_right(x: Atom, bits: int) -> Atom:
    return bind(E.shift_right_logical_p, x, literal(bits, x.aval.dtype))  # type: ignore[no-any-return]


def split(key: Key, num: int = 2) -> tuple[Key, ...]:
    """``num`` new independent keys (a tuple, so ``k1, k2 = split(key)`` type-checks)."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 1:
        raise shape_error("split", f"num must be a positive int, got {describe(num)}")
    return _split(key, int(num))  # a Python int, so NumPy integers stay static too


@op
def _split(key: Key, num: int) -> tuple[Key, ...]:
    atom = check_key("split", key)
    high, low = bits_pair(atom, (num,), (None,))
    return tuple(wrap(make_key(_element(high, i), _element(low, i))) for i in range(num))


def fold_in(key: Key, data: int | Tensor[Any]) -> Key:
    """A new key that depends on ``key`` and the integer ``data`` (e.g. a step or a layer index)."""
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        if not -(2**31) <= int(data) < 2**32:
            raise dtype_error("fold_in", f"data {int(data)} does not fit in 32 bits")
        # An array, not a Python int: every value then shares one compiled program.
        word: Any = np.asarray(int(data) & 0xFFFFFFFF, dtype=np.uint32)
        return _fold_in(key, word)
    if isinstance(data, bool) or not isinstance(data, Tensor):
        raise dtype_error("fold_in", f"data must be an int or an integer scalar tensor, got {describe(data)}")
    return _fold_in(key, data)


@op
def _fold_in(key: Key, data: Tensor[Any]) -> Key:
    atom = check_key("fold_in", key)
    t = as_tensor(data)
    if t.aval.ndim != 0 or not _dt.is_integer(t.aval.dtype):
        raise dtype_error("fold_in", f"data must be an integer scalar, got {describe(data)}")
    k0, k1 = key_words(atom)
    high: Atom = literal(0, U32)
    if t.aval.dtype.itemsize == 8:
        # Values past 32 bits fold their high word in too (truncated, 2**32 would give 0's key, as in jax);
        # values in [-2**31, 2**32) fold like the same Python int, and like jax.
        fits = E.lt(t.atom, literal(2**32, t.aval.dtype))
        if _dt.is_signed(t.aval.dtype):
            fits = bind(E.and_p, fits, bind(E.ge_p, t.atom, literal(-(2**31), t.aval.dtype)))
        high = E.select(fits, high, E.convert(_shift_right(t.atom, 32), U32))
    first, second = threefry2x32(k0, k1, high, E.convert(t.atom, U32))
    return wrap(make_key(first, second))


UT = TypeVar("UT", bound=Unsigned)


@overload
def bits(key: Key, shape: ShapeLike = (), dtype: None = None) -> Tensor[u32, Unpack[tuple[Any, ...]]]: ...
@overload
def bits(key: Key, shape: ShapeLike, dtype: type[UT]) -> Tensor[UT, Unpack[tuple[Any, ...]]]: ...
@overload
def bits(key: Key, shape: ShapeLike = (), *, dtype: type[UT]) -> Tensor[UT, Unpack[tuple[Any, ...]]]: ...
@overload
def bits(key: Key, shape: ShapeLike = (), dtype: Any = None) -> AnyTensor: ...
@op
def bits(key: Key, shape: ShapeLike = (), dtype: Any = None) -> AnyTensor:
    """Uniformly random bits of the given shape in ``dtype``, an unsigned integer dtype (u8, u16, u32, u64; None:
    u32), the bits JAX draws from the same key."""
    target = U32 if dtype is None else to_numpy(dtype)
    if target not in _dt.UNSIGNED:
        raise dtype_error("bits", f"bits come in an unsigned dtype (u8, u16, u32 or u64), got {_dt.short_name(target)}")
    sizes, names = parse_shape("bits", shape)
    return wrap(random_bits(check_key("bits", key), sizes, names, target))


# ------------------------------------------------------------------------------- JAX's key-data names
# A ts.random key is its own key data (``u32[2]``, or ``u32[..., 2]`` for a stack of keys), the same bits as a
# legacy ``jax.random.PRNGKey``: there is no typed key to wrap or unwrap, so these names check and pass through.

KeyLike = TypeVar("KeyLike", bound=AnyTensor)


def PRNGKey(seed: int | Tensor[Any]) -> Key:  # noqa: N802  # JAX's name
    """``key(seed)``: the raw ``u32[2]`` key data, as ``jax.random.PRNGKey`` returns. Seeds past 32 bits keep
    their high word (jax does so only with ``jax_enable_x64``)."""
    return key(seed)


def _key_bits(op_name: str, keys: Any) -> AnyTensor:
    """``keys`` as a ``u32[..., 2]`` tensor (NumPy key data becomes an array), after checking its type."""
    if isinstance(keys, np.ndarray):
        if keys.dtype != U32 or keys.shape[-1:] != (2,):
            raise dtype_error(op_name, f"key data must be u32[..., 2], got {describe(keys)}")
        from ...array import asarray

        return wrap(literal(keys, U32)) if is_staging() else asarray(keys)
    if not isinstance(keys, Tensor):
        raise dtype_error(op_name, f"expected keys (u32[..., 2]) from ts.random.key(seed), got {describe(keys)}")
    if keys.aval.dtype != U32 or keys.aval.shape[-1:] != (2,):
        raise dtype_error(op_name, f"expected keys (u32[..., 2]) from ts.random.key(seed), got {keys.aval}")
    return keys


def key_data(keys: AnyTensor) -> AnyTensor:
    """The ``u32[..., 2]`` bits of a key or a stack of keys: the keys themselves."""
    return _key_bits("key_data", keys)


def wrap_key_data(key_bits_array: Any, *, impl: str | None = None) -> AnyTensor:
    """Keys from ``u32[..., 2]`` key data (e.g. a ``jax.random.key_data`` result): the data itself. ``impl`` may
    only be ``'threefry2x32'`` (or None), the one implementation there is."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"wrap_key_data: the only PRNG implementation is 'threefry2x32', got impl={impl!r}")
    return _key_bits("wrap_key_data", key_bits_array)


def clone(key: KeyLike) -> KeyLike:
    """The same key (JAX's ``clone`` exists for its key-reuse checker, which tensorstage does not have)."""
    _key_bits("clone", key)
    return key
