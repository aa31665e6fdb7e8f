"""NumPy's other names: the NumPy 2.0 aliases (``acos``, ``concat``, ``pow``...), constants, dtype names and
categories, dtype utilities, and functions that read an array's attributes.

Dtype names (``tnp.float32``...) are tensorstage's own dtype classes (``ts.f32``...), accepted wherever a dtype is
(``tnp.zeros(3, dtype=tnp.float32)``, ``x.astype(tnp.int8)``), NumPy too (``np.dtype(tnp.float32)`` is float32);
an array's ``.dtype`` is a NumPy dtype, equal to its name (``x.dtype == tnp.float32``). NumPy's and JAX's other
names for these dtypes (``single``, ``double``, ``int_``, ``uint``, ``bool``...) are in ``type_names``.
Deliberately absent, because tensorstage does not support those dtypes: JAX's sub-byte integers
``int1``/``int2``/``int4`` and ``uint1``/``uint2``/``uint4``, and its 4-, 6- and 8-bit floats (``float4_e2m1fn``,
``float6_*``, ``float8_*``). The complex dtypes are ``complex64`` and
``complex128`` (``ts.c64``, ``ts.c128``); ``real``, ``imag``, ``conj`` and ``angle`` take them apart, and of a real
array ``real`` is the array itself and ``imag`` zeros of its shape and dtype, as in NumPy.

Dtype utilities answer with tensorstage's conventions where they differ from NumPy's: the Python types ``float``
and ``int`` mean float32 and int32 (what ``dtype=float`` gives here), Python scalars are weak (they adopt the
array's dtype, as NumPy 2 does), and bfloat16 is a floating type (``issubdtype(bf16, floating)``, ``finfo``).
``result_type`` and ``promote_types`` give NumPy's promotion between different array dtypes (bfloat16 promotes as
float16 does, and with float16 to float32): tensorstage ops still refuse to mix array dtypes, so these say what
to convert to, not what an op will do. Between integer (and bool) dtypes NumPy's answers are JAX's too (uint64 with
any signed integer gives float64 in both); an integer with a float differs deliberately from ``jax.numpy``, which
keeps the float (int32 with float32 is float64 here and in NumPy, float32 in JAX).
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dims import Dim
from ...dtypes import DType, Bool, Complex, Floating, Inexact, Integer, Number, Signed, Unsigned, bool_, to_numpy
from ...dtypes import bf16, c64, c128, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.ir import Aval
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ...trace import WeakTraced
from ._core import as_tensor, elementwise_operands, is_weak, normalize_axes, op, wrap
from .joining import concatenate
from .mathfuncs import _finfo, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh
from .ufuncs import invert, power

DT = TypeVar("DT", bound=DType)
Shape = TypeVarTuple("Shape")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

# ------------------------------------------------------------------------------------ NumPy 2.0 aliases

acos = arccos
acosh = arccosh
asin = arcsin
asinh = arcsinh
atan = arctan
atan2 = arctan2
atanh = arctanh
concat = concatenate
pow = power  # noqa: A001 - NumPy's name
bitwise_invert = invert

# ------------------------------------------------------------------------------------------ constants

pi: float = math.pi
e: float = math.e
inf: float = math.inf
nan: float = math.nan
euler_gamma: float = 0.5772156649015329
newaxis: None = None

# ------------------------------------------------------------------------------- dtypes and categories

int8 = i8
int16 = i16
int32 = i32
int64 = i64
uint8 = u8
uint16 = u16
uint32 = u32
uint64 = u64
float16 = f16
bfloat16 = bf16
float32 = f32
float64 = f64
complex64 = c64
complex128 = c128
generic = DType
number = Number
integer = Integer
signedinteger = Signed
unsignedinteger = Unsigned
floating = Floating
complexfloating = Complex
inexact = Inexact

# tensorstage's categories as NumPy's abstract scalar types
_CATEGORIES: dict[type[DType], type[Any]] = {
    DType: np.generic, Number: np.number, Integer: np.integer, Signed: np.signedinteger,
    Unsigned: np.unsignedinteger, Floating: np.floating, Bool: np.bool_, Inexact: np.inexact,
    Complex: np.complexfloating,
}
_BFLOAT16_PARENTS: frozenset[type[Any]] = frozenset({np.floating, np.inexact, np.number, np.generic})
_NUMPY_ABSTRACT: frozenset[type[Any]] = _BFLOAT16_PARENTS | {
    np.integer, np.signedinteger, np.unsignedinteger, np.complexfloating, np.flexible, np.character,
}


def _dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype ``x`` names or has: a dtype class, a NumPy dtype or scalar type, a name, an array or tensor.
    Python's ``float`` and ``int`` are tensorstage's defaults (float32, int32), as for ``dtype=`` arguments."""
    if isinstance(x, Tensor):
        return x.aval.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    if isinstance(x, type) and issubclass(x, DType):
        return to_numpy(x)  # a category raises: "Floating is a dtype category, not a concrete dtype"
    if x in (float, int, bool, complex):
        return to_numpy(x)
    try:
        dtype: np.dtype[Any] = np.dtype(x)
    except TypeError:
        raise TypeError(f"{x!r} is not a dtype or an array") from None
    return dtype


def _abstract(x: Any) -> Any:
    """A dtype argument of ``issubdtype``: NumPy's abstract type for a category, else the dtype it names."""
    if isinstance(x, type) and x in _CATEGORIES:
        return _CATEGORIES[x]
    if isinstance(x, type) and x in _NUMPY_ABSTRACT:
        return x
    return _dtype_of(x)


def finfo(dtype: Any) -> np.finfo[Any]:
    """Machine limits of a float dtype (bfloat16 included); ``finfo(float)`` is float32's."""
    d = _dtype_of(dtype)
    if not _dt.is_inexact(d):
        raise ValueError(f"finfo: data type {d} not inexact")
    info: np.finfo[Any] = _finfo(_dt.real_dtype(d))  # a complex dtype's: its parts' (NumPy's answer)
    return info


def iinfo(dtype: Any) -> np.iinfo[Any]:
    """Machine limits of an integer dtype; ``iinfo(int)`` is int32's."""
    d = _dtype_of(dtype)
    if not _dt.is_integer(d):
        raise ValueError(f"iinfo: invalid integer data type {d}")
    return np.iinfo(d)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` is ``arg2`` or one of its kind: ``issubdtype(x.dtype, tnp.floating)`` (tensorstage's
    categories and NumPy's abstract types are both understood; bfloat16 is a float)."""
    a, b = _abstract(arg1), _abstract(arg2)
    if isinstance(a, np.dtype) and a == _dt.bfloat16:
        return (isinstance(b, np.dtype) and b == a) or b in _BFLOAT16_PARENTS
    return bool(np.issubdtype(a, b))


_KINDS: dict[str, frozenset[np.dtype[Any]]] = {
    "bool": frozenset({_dt.BOOL}),
    "signed integer": _dt.SIGNED,
    "unsigned integer": _dt.UNSIGNED,
    "integral": _dt.INTEGERS,
    "real floating": _dt.FLOATS,
    "complex floating": _dt.COMPLEX,
    "numeric": _dt.INTEGERS | _dt.FLOATS | _dt.COMPLEX,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """NumPy 2's (and the array API's) ``isdtype``: whether ``dtype`` is of ``kind``, a name (``'bool'``, ``'signed
    integer'``, ``'unsigned integer'``, ``'integral'``, ``'real floating'``, ``'complex floating'``,
    ``'numeric'``), a dtype, a tensorstage category (``tnp.floating``), or a tuple of those. bfloat16 is a real
    floating type."""
    d = _dtype_of(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: kind {k!r} is not one of {', '.join(map(repr, _KINDS))}")
            if d in _KINDS[k]:
                return True
        elif isinstance(k, type) and k in _CATEGORIES:  # tensorstage's categories too: isdtype(d, tnp.floating)
            if issubdtype(d, k):
                return True
        elif d == _dtype_of(k):
            return True
    return False


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether ``from_`` (a dtype or an array) can be converted to ``to`` under NumPy's ``casting`` rule."""
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        choices = "'no', 'equiv', 'safe', 'same_kind' or 'unsafe'"
        raise ValueError(f"can_cast: casting must be {choices}, got {casting!r}")
    if type(from_) in (int, float, bool):
        raise TypeError("can_cast: Python scalars are weak (they take the other operand's dtype): pass a dtype")
    return bool(np.can_cast(_dtype_of(from_), _dtype_of(to), casting))  # type: ignore[arg-type]


def promote_types(type1: Any, type2: Any) -> np.dtype[Any]:
    """The smallest dtype both convert to safely, by NumPy's rules (bfloat16 as float16; with float16, float32).
    tensorstage ops never do this themselves: convert the operands to it with ``.astype``."""
    return _promote([_dtype_of(type1), _dtype_of(type2)])


def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]:
    """The dtype NumPy 2 gives an operation on these operands: equal dtypes stay, Python scalars adopt the arrays'
    dtype, different array dtypes promote as ``promote_types`` does, and a float scalar beside integer arrays (or
    an int scalar beside bools) gives tensorstage's default float32 (int32), as alone and as in jax.numpy (NumPy
    2 gives float64, int64). tensorstage ops refuse operands of different dtypes (and a float scalar beside
    integers): convert them to this with ``.astype`` first."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    strong = [_dtype_of(x) for x in arrays_and_dtypes if not is_weak(x)]
    weak = [_weak_dtype(x) for x in arrays_and_dtypes if is_weak(x)]
    common = _promote(strong) if strong else _dt.BOOL
    # A weak scalar of a higher kind than the arrays gives that kind's default dtype (as alone).
    if any(_dt.is_complex(d) for d in weak) and not _dt.is_complex(common):
        return _dt.complex_dtype(common) or _dt.DEFAULT_COMPLEX  # a float array's width, as the ops give it
    if any(_dt.is_float(d) for d in weak) and not _dt.is_inexact(common):
        return _dt.DEFAULT_FLOAT
    if any(_dt.is_integer(d) for d in weak) and common == _dt.BOOL:
        return _dt.DEFAULT_INT
    return common


def _weak_dtype(x: Any) -> np.dtype[Any]:
    if isinstance(x, WeakTraced):
        return x.aval.dtype
    return to_numpy(type(x))


def _promote(dtypes: list[np.dtype[Any]]) -> np.dtype[Any]:
    if all(d == dtypes[0] for d in dtypes):
        return dtypes[0]
    f16 = np.dtype(np.float16)
    as_numpy = [f16 if d == _dt.bfloat16 else d for d in dtypes]  # NumPy cannot promote bfloat16 with most types
    out: np.dtype[Any] = np.result_type(*as_numpy)
    if out == f16 and _dt.bfloat16 in dtypes:
        out = np.dtype(np.float32) if f16 in dtypes else _dt.bfloat16
    try:
        return _dt.canonical(out)
    except TypeError as exc:
        raise TypeError(f"result_type: {', '.join(map(str, dtypes))} promote to {out}, which {exc}") from None


# --------------------------------------------------------------------------------- array attributes


def ndim(a: Any) -> int:
    """The number of axes of ``a`` (an array, a staged tensor, or anything NumPy takes)."""
    return a.aval.ndim if isinstance(a, Tensor) else int(np.ndim(a))


def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (an array, a staged tensor, or anything NumPy takes)."""
    return a.aval.shape if isinstance(a, Tensor) else tuple(np.shape(a))


def size(a: Any, axis: int | type[Dim] | tuple[int | type[Dim], ...] | None = None) -> int:
    """The number of elements of ``a``, or along ``axis`` (an int, a Dim class or a tuple of them)."""
    t = a if isinstance(a, Tensor) else np.asarray(a)
    if not isinstance(t, Tensor):
        return int(np.size(t, axis))  # type: ignore[arg-type]
    axes = normalize_axes("size", axis, t)
    return math.prod(t.aval.shape[i] for i in axes)


def isscalar(element: object) -> bool:
    """True for Python and NumPy scalars and, as in jax.numpy, for 0-d tensorstage arrays and staged tensors
    (NumPy says False for 0-d ``np.ndarray``s, and so does this)."""
    if isinstance(element, Tensor):
        return element.aval.ndim == 0
    return bool(np.isscalar(element))


def iterable(y: object) -> bool:
    """Whether ``iter(y)`` works: NumPy's answer, and for tensors (device arrays and staged values) whether they
    have an axis to iterate over (0-d ones have none, as for NumPy's and JAX's arrays)."""
    if isinstance(y, Tensor):
        return y.aval.ndim > 0
    return bool(np.iterable(y))


@op
def copy(a: Tensor[DT, Unpack[Shape]], order: str | None = "K") -> Tensor[DT, Unpack[Shape]]:
    """A copy of ``a``: a new array outside staging, the value itself inside (arrays are immutable). ``order``
    is accepted for NumPy's signature; only C order (``'K'``, ``'A'``, ``'C'``) exists here."""
    if order not in ("K", "A", "C", None):
        raise ValueError(f"copy: order must be 'K', 'A' or 'C' (tensorstage arrays are row-major), got {order!r}")
    return as_tensor(a)


def _false() -> AnyTensor:
    return wrap(S.full_like(Aval((), _dt.BOOL), False))


def _equal_everywhere(name: str, a: Any, b: Any, equal_nan: bool) -> AnyTensor:
    x, y = elementwise_operands(name, a, b)
    same = E.eq(x, y)
    if equal_nan and _dt.is_inexact(x.aval.dtype):
        both_nan = bind(E.and_p, bind(E.ne_p, x, x), bind(E.ne_p, y, y))
        same = bind(E.or_p, same, both_nan)
    return wrap(R.reduce_min(same, tuple(range(same.aval.ndim))))


@op
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Tensor[bool_]:
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs equal with ``equal_nan``), as a 0-d bool
    tensor (an array outside staging: ``bool(...)`` gives NumPy's Python bool). Different shapes give False;
    different dtypes are an error, as everywhere in tensorstage."""
    _check_dtypes("array_equal", a1, a2)
    if shape(a1) != shape(a2):
        return _false()
    return _equal_everywhere("array_equal", a1, a2, equal_nan)


@op
def array_equiv(a1: Any, a2: Any) -> Tensor[bool_]:
    """Whether ``a1`` and ``a2`` are equal after broadcasting them together (NumPy's rules, any ranks); False
    where their shapes do not broadcast. A 0-d bool tensor, as ``array_equal``."""
    _check_dtypes("array_equiv", a1, a2)
    try:
        target = np.broadcast_shapes(shape(a1), shape(a2))
    except ValueError:
        return _false()
    return _equal_everywhere("array_equiv", _broadcast(a1, target), _broadcast(a2, target), False)


def _check_dtypes(name: str, a1: Any, a2: Any) -> None:
    """Operands of different dtypes are an error whatever their shapes (checked on 0-d stand-ins, which
    broadcast with anything)."""
    elementwise_operands(name, _rank0(a1), _rank0(a2))


def _rank0(x: Any) -> Any:
    """A 0-d operand of ``x``'s dtype (for dtype checks that must not broadcast)."""
    if is_weak(x):
        return x
    t = as_tensor(x)
    return wrap(S.full_like(Aval((), t.aval.dtype), 0))


def _broadcast(x: Any, target: tuple[int, ...]) -> Any:
    if is_weak(x):
        return x
    a = as_tensor(x).atom
    return wrap(S.broadcast_to(a, Aval(target, a.aval.dtype)))


def iscomplexobj(x: object) -> bool:
    """Whether ``x`` has a complex dtype (for anything that is not a tensor: NumPy's answer)."""
    if isinstance(x, Tensor):
        return _dt.is_complex(x.aval.dtype)
    candidate: Any = x  # NumPy's stubs type its argument differently across versions
    return bool(np.iscomplexobj(candidate))


def isrealobj(x: object) -> bool:
    """``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


@op
def iscomplex(x: Tensor[Any, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    """Where the imaginary part is nonzero (nowhere for a real tensor)."""
    t = as_tensor(x)
    if not _dt.is_complex(t.aval.dtype):
        return wrap(S.full_like(t.aval.with_dtype(_dt.BOOL), False))
    im = C.imag(t.atom)
    return wrap(bind(E.ne_p, im, E.scalar(0, im)))


@op
def isreal(x: Tensor[Any, Unpack[Shape]]) -> Tensor[bool_, Unpack[Shape]]:
    """Where the imaginary part is zero (everywhere for a real tensor)."""
    t = as_tensor(x)
    if not _dt.is_complex(t.aval.dtype):
        return wrap(S.full_like(t.aval.with_dtype(_dt.BOOL), True))
    im = C.imag(t.atom)
    return wrap(E.eq(im, E.scalar(0, im)))


@overload
def real(val: Tensor[c64, Unpack[Shape]]) -> Tensor[f32, Unpack[Shape]]: ...
@overload
def real(val: Tensor[c128, Unpack[Shape]]) -> Tensor[f64, Unpack[Shape]]: ...
@overload
def real(val: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]: ...
@op
def real(val: Tensor[Any, Unpack[Shape]]) -> Tensor[Any, Unpack[Shape]]:
    """The real part, in the dtype of a complex tensor's parts (f32 for c64); a real tensor is its own."""
    t = as_tensor(val)
    return wrap(C.real(t.atom)) if _dt.is_complex(t.aval.dtype) else t


@overload
def imag(val: Tensor[c64, Unpack[Shape]]) -> Tensor[f32, Unpack[Shape]]: ...
@overload
def imag(val: Tensor[c128, Unpack[Shape]]) -> Tensor[f64, Unpack[Shape]]: ...
@overload
def imag(val: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]: ...
@op
def imag(val: Tensor[Any, Unpack[Shape]]) -> Tensor[Any, Unpack[Shape]]:
    """The imaginary part, in the dtype of a complex tensor's parts; of a real tensor, zeros of its type."""
    t = as_tensor(val)
    return wrap(C.imag(t.atom)) if _dt.is_complex(t.aval.dtype) else wrap(S.full_like(t.aval, 0))


@op
def conj(x: Tensor[DT, Unpack[Shape]]) -> Tensor[DT, Unpack[Shape]]:
    """The complex conjugate; a real tensor is its own."""
    t = as_tensor(x)
    return wrap(C.conj(t.atom)) if _dt.is_complex(t.aval.dtype) else t


conjugate = conj


@overload
def angle(z: Tensor[c64, Unpack[Shape]], deg: bool = False) -> Tensor[f32, Unpack[Shape]]: ...
@overload
def angle(z: Tensor[c128, Unpack[Shape]], deg: bool = False) -> Tensor[f64, Unpack[Shape]]: ...
@overload
def angle(z: Tensor[DT, Unpack[Shape]], deg: bool = False) -> Tensor[DT, Unpack[Shape]]: ...
@op
def angle(z: Tensor[Any, Unpack[Shape]], deg: bool = False) -> Tensor[Any, Unpack[Shape]]:
    """The argument of each element, ``atan2(imag, real)``, in radians (degrees with ``deg``); of a real float
    tensor, 0 or pi by its sign (NumPy's answer). Integer tensors are refused, as by every float function here."""
    t = as_tensor(z)
    if not _dt.is_inexact(t.aval.dtype):
        raise TypeError(f"angle needs a floating-point or complex operand, got {t.aval}; convert it with .astype(f32)")
    if _dt.is_complex(t.aval.dtype):
        re, im = C.real(t.atom), C.imag(t.atom)
    else:
        re, im = t.atom, S.full_like(t.atom, 0)
    out = E.atan2(im, re)
    return wrap(E.mul(out, E.scalar(180 / math.pi, out)) if deg else out)


__all__ = [
    # NumPy 2.0 aliases
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_invert", "concat", "pow",
    # constants
    "e", "euler_gamma", "inf", "nan", "newaxis", "pi",
    # dtypes and categories
    "bfloat16", "bool_", "complex64", "complex128", "float16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64", "complexfloating", "floating", "generic", "inexact", "integer",
    "number",
    "signedinteger", "unsignedinteger",
    # dtype utilities
    "can_cast", "finfo", "iinfo", "isdtype", "issubdtype", "promote_types", "result_type",
    # array attributes
    "angle", "array_equal", "array_equiv", "conj", "conjugate", "copy", "imag", "iscomplex", "iscomplexobj",
    "isreal", "isrealobj", "isscalar", "iterable", "ndim", "real", "shape", "size",
]
