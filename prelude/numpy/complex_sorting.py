"""``sort_complex``: NumPy's lexicographic order of complex numbers (real part first, then imaginary part).

``sort`` and the ordering ops refuse complex operands on purpose (an order on complex numbers is a convention, not
arithmetic); this is the one function that asks for NumPy's convention by name. NaNs go last as in NumPy:
``R + Rj < R + nanj < nan + Rj < nan + nanj`` (each group in lexicographic order).

The result is complex, as in NumPy. A real operand becomes the smallest complex dtype that holds each value
exactly: c64 for bool, 8/16-bit integers, f16, bf16 and f32 (as JAX; NumPy gives c128 for bool, f16 and f32), c128
for 32/64-bit integers and f64 (as NumPy).
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import c64, c128, f64, i32, i64, u32, u64
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Atom
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import sorting as T
from ...tensor import Tensor
from ._core import as_tensor, dtype_error, op, shape_error, wrap

__all__ = ["sort_complex"]

Sh = TypeVarTuple("Sh")

_WIDE = frozenset(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64, np.float64, np.complex128))


@overload
def sort_complex(a: Tensor[c128, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[f64, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[i64, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[i32, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[u32, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[u64, Unpack[Sh]]) -> Tensor[c128, Unpack[Sh]]: ...
@overload
def sort_complex(a: Tensor[Any, Unpack[Sh]]) -> Tensor[c64, Unpack[Sh]]: ...
@op
def sort_complex(a: Tensor[Any, Unpack[Sh]]) -> Tensor[Any, Unpack[Sh]]:
    """``a`` sorted along its last axis by real part, then imaginary part, as a complex tensor (see the module
    docstring for the dtype of a real operand)."""
    t = as_tensor(a)
    dtype = t.aval.dtype
    if t.aval.ndim == 0:
        raise shape_error("sort_complex", f"needs an operand of rank >= 1 (it sorts the last axis), got {t.aval}")
    if not (_dt.is_complex(dtype) or _dt.is_float(dtype) or _dt.is_integer(dtype) or dtype == _dt.BOOL):
        raise dtype_error("sort_complex", f"cannot sort {t.aval}")
    target = np.dtype(np.complex128) if dtype in _WIDE else np.dtype(np.complex64)
    axis = t.aval.ndim - 1
    if not _dt.is_complex(dtype):
        x = t.atom if t.aval.shape[axis] <= 1 else T.sort([t.atom], axis)[0]
        return wrap(C.as_complex(E.convert(x, _dt.real_dtype(target)), target))
    if t.aval.shape[axis] <= 1:
        return t
    re, im = C.real(t.atom), C.imag(t.atom)
    # Stable sorts from the least significant key to the most: each keeps the order the earlier ones made.
    im, re = T.sort([im, re], axis)
    re, im = T.sort([re, im], axis)
    _, re, im = T.sort([_nan_group(re, im), re, im], axis)
    return wrap(C.complex(re, im))


def _nan_group(re: Atom, im: Atom) -> Atom:
    """NumPy's groups: 0 without NaNs, 1 for a NaN imaginary part only, 2 for a NaN real part only, 3 for both."""
    def isnan(x: Atom) -> Atom:
        return E.convert(bind(E.ne_p, x, x), _dt.DEFAULT_INT)
    nan_im = isnan(im)
    return E.add(nan_im, E.mul(isnan(re), E.scalar(2, nan_im)))
