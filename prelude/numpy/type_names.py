"""NumPy's other names for types: the C-style and legacy dtype aliases, ``bool``, NumPy's non-numeric abstract
types, ``dtype``, ``ndarray`` and ``ComplexWarning``.

(In a module of their own: ``bool`` here is the dtype, which would shadow Python's in any code beside it.)

- ``single``/``double``/``csingle``/``cdouble`` are f32/f64/c64/c128, as in NumPy and JAX; the legacy ``float_``
  and ``complex_`` (gone from NumPy 2, kept by JAX) are f64 and c128, ``int_`` is i64 and ``uint`` u64: each
  names the one dtype NumPy (and ``jax.numpy``) means by it. Python's ``float``, ``int`` and ``complex`` are what
  give tensorstage's defaults (f32, i32, c64) where a dtype is expected.
- ``character``, ``flexible`` and ``object_`` are NumPy's, for ``issubdtype`` (no tensorstage dtype is one of
  them; making an array of ``object_`` is refused with the list of supported dtypes).
- ``dtype`` is ``numpy.dtype`` (``tnp.dtype(tnp.float32)`` is NumPy's float32, an array's ``.dtype``).
- ``ndarray`` is ``Tensor``, the base class of both device arrays (``ts.Array``) and staged values, so
  ``isinstance(x, tnp.ndarray)`` holds for either, as ``isinstance(x, jnp.ndarray)`` does for JAX arrays and
  tracers (it is False for NumPy arrays).
- ``ComplexWarning`` is NumPy's; tensorstage itself never issues it: converting complex to real is an error.
"""

from __future__ import annotations

import numpy as np

from ...dtypes import bool_, c64, c128, f32, f64, i64, u64
from ...tensor import Tensor

__all__ = [
    "ComplexWarning", "bool", "cdouble", "character", "complex_", "csingle", "double", "dtype", "flexible",
    "float_", "int_", "ndarray", "object_", "single", "uint",
]

bool = bool_  # noqa: A001 - NumPy 2's name
single = f32
double = f64
csingle = c64
cdouble = c128
float_ = f64
complex_ = c128
int_ = i64
uint = u64
character = np.character
flexible = np.flexible
object_ = np.object_
dtype = np.dtype
ndarray = Tensor
ComplexWarning = np.exceptions.ComplexWarning
