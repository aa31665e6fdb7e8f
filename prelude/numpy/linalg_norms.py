"""``tnp.linalg.norm``: NumPy's vector and matrix norms (and NumPy 2's ``vector_norm``/``matrix_norm`` on them).

Vector norms (one axis): ``ord`` None/2, 1, inf, -inf, 0 (count of nonzeros) or any other p. Matrix norms (two
axes): 'fro' (or None), 1, -1, inf, -inf (max/min absolute column/row sums), and 2, -2, 'nuc' from the
singular values, found with ``eigh`` (as accurate as an SVD; see :func:`_singular_values`). As NumPy, the largest
of no values (an empty matrix) is 0 and the smallest is an error. Complex operands (c64, c128) have real norms
(f32, f64), from the moduli of their elements, as NumPy's.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, c64, c128, f32, f64
from ...staging import dtypes
from ...staging.builder import bind
from ...staging.ir import Atom, Aval
from ...staging.primitives import complex_parts as C
from ...staging.primitives import decompositions as D
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import inexact_operand, normalize_axes, op, shape_error, wrap

DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")


def _sqrt(x: Atom) -> Atom:
    return bind(E.sqrt_p, x)  # type: ignore[no-any-return]


def squared_magnitude(x: Atom) -> Atom:
    """``|x|²`` elementwise, in the real dtype: ``Re² + Im²`` for complex ``x`` (no square root, so its
    derivative at 0 is finite)."""
    if not dtypes.is_complex(x.aval.dtype):
        return E.mul(x, x)
    re, im = C.real(x), C.imag(x)
    return E.add(E.mul(re, re), E.mul(im, im))


def _vector_norm(op_name: str, x: Atom, ord: Any, axes: tuple[int, ...]) -> Atom:  # noqa: A002 - NumPy's name
    if ord in (math.inf, -math.inf) and math.prod(x.aval.shape[k] for k in axes) == 0:
        if ord < 0:
            raise shape_error(op_name, f"ord=-inf over an empty axis of {x.aval} has no value (a minimum over "
                              "no elements)")
        return S.full_like(R.reduce_sum(E.abs(x), axes), 0)  # the largest of no magnitudes, as NumPy: 0
    magnitude = E.abs(x)
    if ord is None or ord == 2:
        return _sqrt(R.reduce_sum(squared_magnitude(x), axes))
    if ord == math.inf:
        return R.reduce_max(magnitude, axes)
    if ord == -math.inf:
        return R.reduce_min(magnitude, axes)
    if ord == 0:
        return R.reduce_sum(E.convert(bind(E.ne_p, x, S.full_like(x, 0)), magnitude.aval.dtype), axes)
    if ord == 1:
        return R.reduce_sum(magnitude, axes)
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise ValueError(f"invalid norm order {ord!r} for vectors")
    p = E.scalar(float(ord), magnitude)
    return E.pow(R.reduce_sum(E.pow(magnitude, p), axes), E.scalar(1.0 / float(ord), magnitude))


def _extreme(op_name: str, values: Atom, axis: int, largest: bool) -> Atom:
    """The largest (or smallest) of ``values`` along ``axis``: as NumPy, the largest of none is 0 (the values are
    magnitudes) and the smallest of none is an error."""
    if not largest:
        if values.aval.shape[axis] == 0:
            raise shape_error(op_name, f"a minimum over the empty axis {axis} of {values.aval} has no value")
        return R.reduce_min(values, (axis,))
    biggest = R.reduce_max(values, (axis,))
    return biggest if values.aval.shape[axis] else S.full_like(biggest, 0)


def _singular_values(x: Atom, rows: int, cols: int) -> Atom:
    """Singular values (ascending, ``(..., K)``, K = min(M, N)) of the matrices in axes ``rows`` and ``cols``,
    from ``eigh`` directly (the eigenvalues alone: cheaper than the ``svd`` primitive, and its derivative rules).

    The eigenvalues of the Hermitian ``[[0, R], [Rᴴ, 0]]`` are ``±s``, each to within ``eps · max(s)`` as an SVD
    gives them (the Gram matrix ``Rᴴ R`` would lose the small ones: its condition number is squared). ``R`` is
    the K x K triangle of a QR of the tall orientation of a non-square matrix: same singular values, no
    spurious zero eigenvalues (and distinct ones keep derivatives finite)."""
    rest = [a for a in range(x.aval.ndim) if a not in (rows, cols)]
    m = S.transpose(x, (*rest, rows, cols))
    if m.aval.shape[-2] < m.aval.shape[-1]:
        m = D.mH(m)
    if m.aval.shape[-2] != m.aval.shape[-1]:
        m = D.qr(m, full_matrices=False)[1]
    *batch, k, _ = m.aval.shape
    names = (*m.aval.dims[:-2], None, None)
    augmented = S.zeros(Aval((*batch, 2 * k, 2 * k), m.aval.dtype, names))
    below = S.reshape(D.mH(m), (*batch, k, k), names)
    augmented = SL.dynamic_update_slice(augmented, below, [0] * len(batch) + [k, 0])  # eigh reads the lower half
    w = D.eigh(augmented)[0]
    return E.abs(SL.slice_in_dim(w, k, 2 * k, w.aval.ndim - 1))  # the K largest: +s (abs: rounding of a 0)


def _matrix_norm(op_name: str, x: Atom, ord: Any, rows: int, cols: int) -> Atom:  # noqa: A002 - NumPy's name
    if ord is None or ord == "fro":
        return _sqrt(R.reduce_sum(squared_magnitude(x), (rows, cols)))
    if ord in (1, -1, math.inf, -math.inf):
        summed, then = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = R.reduce_sum(E.abs(x), (summed,))
        return _extreme(op_name, sums, then - (then > summed), ord > 0)
    if ord in (2, -2, "nuc"):
        singular = _singular_values(x, rows, cols)
        last = singular.aval.ndim - 1
        return R.reduce_sum(singular, (last,)) if ord == "nuc" else _extreme(op_name, singular, last, ord == 2)
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def _kept(reduced: Atom, a: Atom, axes: tuple[int, ...]) -> Atom:
    """``reduced`` with the reduced ``axes`` of ``a`` back as unnamed size-1 axes (``keepdims=True``)."""
    shape = tuple(1 if i in axes else n for i, n in enumerate(a.aval.shape))
    names = tuple(None if i in axes else d for i, d in enumerate(a.aval.dims))
    return S.reshape(reduced, shape, names)


Norm = Tensor[DT, Unpack[tuple[Any, ...]]]
_Ord = float | str | None
_Axis = int | tuple[int, int] | None


@overload
def norm(x: Tensor[c64, Unpack[Sh]], ord: _Ord = None, axis: _Axis = None, keepdims: bool = False) -> Norm[f32]: ...  # noqa: A002
@overload
def norm(x: Tensor[c128, Unpack[Sh]], ord: _Ord = None, axis: _Axis = None, keepdims: bool = False) -> Norm[f64]: ...  # noqa: A002
@overload
def norm(x: Tensor[DT, Unpack[Sh]], ord: _Ord = None, axis: _Axis = None, keepdims: bool = False) -> Norm[DT]: ...  # noqa: A002
@op
def norm(x: Any, ord: _Ord = None, axis: _Axis = None, keepdims: bool = False) -> Any:  # noqa: A002 - NumPy's name
    """NumPy's ``linalg.norm``: with ``axis=None`` a vector norm of 1-D ``x``, a matrix norm of 2-D ``x``, or
    (``ord=None`` only) the 2-norm of all elements."""
    t = inexact_operand("norm", x)
    a = t.atom
    if axis is None:
        if ord is not None and a.aval.ndim not in (1, 2):
            raise shape_error("norm", f"ord={ord!r} needs a 1-D or 2-D operand or an axis, got {t.aval}")
        axes = tuple(range(a.aval.ndim)) if ord is None else normalize_axes("norm", None, t)
    else:
        axes = normalize_axes("norm", axis, t, allow_none=False)
    if len(axes) == 1 or (ord is None and axis is None):
        out = _vector_norm("norm", a, ord, axes)
    elif len(axes) == 2:
        out = _matrix_norm("norm", a, ord, *axes)
    else:
        raise shape_error("norm", f"axis must name one or two axes, got {axis!r}")
    return wrap(_kept(out, a, axes) if keepdims else out)


_Axes = int | tuple[int, ...] | None


@overload
def vector_norm(x: Tensor[c64, Unpack[Sh]], axis: _Axes = None, keepdims: bool = False, ord: float = 2) -> Norm[f32]: ...  # noqa: A002
@overload
def vector_norm(x: Tensor[c128, Unpack[Sh]], axis: _Axes = None, keepdims: bool = False, ord: float = 2) -> Norm[f64]: ...  # noqa: A002
@overload
def vector_norm(x: Tensor[DT, Unpack[Sh]], axis: _Axes = None, keepdims: bool = False, ord: float = 2) -> Norm[DT]: ...  # noqa: A002
@op
def vector_norm(x: Any, axis: _Axes = None, keepdims: bool = False, ord: float = 2) -> Any:  # noqa: A002 - NumPy's name
    """NumPy 2's ``linalg.vector_norm``: the ``ord`` vector norm over ``axis`` (None: every element, any rank; a
    tuple: those axes taken as one vector). ``ord``: any number, ``inf``, ``-inf`` or 0 (count of nonzeros)."""
    t = inexact_operand("vector_norm", x)
    if isinstance(ord, str):
        raise ValueError(f"invalid norm order {ord!r} for vectors")
    axes = normalize_axes("vector_norm", axis, t)
    a = t.atom
    out = _vector_norm("vector_norm", a, ord, axes)
    return wrap(_kept(out, a, axes) if keepdims else out)


@overload
def matrix_norm(x: Tensor[c64, Unpack[Sh]], keepdims: bool = False, ord: float | str = "fro") -> Norm[f32]: ...  # noqa: A002
@overload
def matrix_norm(x: Tensor[c128, Unpack[Sh]], keepdims: bool = False, ord: float | str = "fro") -> Norm[f64]: ...  # noqa: A002
@overload
def matrix_norm(x: Tensor[DT, Unpack[Sh]], keepdims: bool = False, ord: float | str = "fro") -> Norm[DT]: ...  # noqa: A002
@op
def matrix_norm(x: Any, keepdims: bool = False, ord: float | str = "fro") -> Any:  # noqa: A002 - NumPy's name
    """NumPy 2's ``linalg.matrix_norm``: :func:`norm` of every matrix in the last two axes (``ord``: 'fro',
    'nuc', 1, -1, 2, -2, inf, -inf)."""
    t = inexact_operand("matrix_norm", x)
    if t.aval.ndim < 2:
        raise shape_error("matrix_norm", f"needs a (batch of) matrices, got {t.aval}")
    a = t.atom
    axes = (a.aval.ndim - 2, a.aval.ndim - 1)
    out = _matrix_norm("matrix_norm", a, ord, *axes)
    return wrap(_kept(out, a, axes) if keepdims else out)
