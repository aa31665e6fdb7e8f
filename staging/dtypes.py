"""Element types as the IR sees them: numpy dtypes plus short names and categories.

The user-facing nominal classes (``f32``...) live in the dsl; the IR only ever holds ``np.dtype`` values so
that graphs, caches and the runtime share one canonical, hashable representation.
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

bfloat16: Final = np.dtype(ml_dtypes.bfloat16)

_SHORT: Final[dict[np.dtype[np.generic], str]] = {
    np.dtype(np.float16): "f16",
    bfloat16: "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}

# StableHLO element type spelling.
_MLIR: Final[dict[np.dtype[np.generic], str]] = {
    np.dtype(np.float16): "f16",
    bfloat16: "bf16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.bool_): "i1",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}

SUPPORTED: Final = tuple(_SHORT)
FLOATS: Final = frozenset((np.dtype(np.float16), bfloat16, np.dtype(np.float32), np.dtype(np.float64)))
SIGNED: Final = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
UNSIGNED: Final = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
INTEGERS: Final = SIGNED | UNSIGNED
BOOL: Final = np.dtype(np.bool_)
COMPLEX: Final[frozenset[np.dtype[Any]]] = frozenset((np.dtype(np.complex64), np.dtype(np.complex128)))
# Values that carry tangents: real floats and complex numbers.
INEXACT: Final[frozenset[np.dtype[Any]]] = FLOATS | COMPLEX

# A complex dtype and the real dtype of its parts, both ways (bf16 and f16 have no complex of their width).
_REAL_OF_COMPLEX: Final[dict[np.dtype[np.generic], np.dtype[np.generic]]] = {
    np.dtype(np.complex64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.float64),
}
_COMPLEX_OF_REAL: Final = {real: cplx for cplx, real in _REAL_OF_COMPLEX.items()}

DEFAULT_FLOAT: Final = np.dtype(np.float32)
DEFAULT_INT: Final = np.dtype(np.int32)
DEFAULT_COMPLEX: Final = np.dtype(np.complex64)  # the complex of DEFAULT_FLOAT, as JAX's Python complex


def short_name(dtype: np.dtype[np.generic]) -> str:
    return _SHORT.get(dtype, str(dtype))


def mlir_name(dtype: np.dtype[np.generic]) -> str:
    return _MLIR[dtype]


def is_float(dtype: np.dtype[np.generic]) -> bool:
    return dtype in FLOATS


def is_integer(dtype: np.dtype[np.generic]) -> bool:
    return dtype in INTEGERS


def is_complex(dtype: np.dtype[np.generic]) -> bool:
    return dtype in COMPLEX


def is_inexact(dtype: np.dtype[np.generic]) -> bool:
    """Float or complex: the dtypes that carry derivatives."""
    return dtype in INEXACT


def real_dtype(dtype: np.dtype[np.generic]) -> np.dtype[np.generic]:
    """The dtype of a complex dtype's parts (f32 for c64); any other dtype is its own."""
    return _REAL_OF_COMPLEX.get(dtype, dtype)


def complex_dtype(dtype: np.dtype[np.generic]) -> np.dtype[np.generic] | None:
    """The complex dtype whose parts are ``dtype`` (c64 for f32), or None where there is none (f16, bf16, ints);
    a complex dtype is its own."""
    if dtype in COMPLEX:
        return dtype
    return _COMPLEX_OF_REAL.get(dtype)


def is_signed(dtype: np.dtype[np.generic]) -> bool:
    return dtype in SIGNED or dtype in FLOATS


def canonical(dtype: object) -> np.dtype[np.generic]:
    """The supported ``np.dtype`` for anything numpy understands; raises TypeError for the rest."""
    try:
        d: np.dtype[np.generic] = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError as exc:
        raise TypeError(f"not a dtype: {dtype!r}") from exc
    if not d.isnative:
        d = d.newbyteorder("=")  # values enter in native byte order (runtime.contiguous converts host data)
    if d not in _SHORT:
        supported = ", ".join(_SHORT.values())
        raise TypeError(f"dtype {d} is not supported (supported: {supported})")
    return d
