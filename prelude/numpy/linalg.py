"""Products: matmul (``@``), dot, vdot, outer, tensordot, multi_dot. Contracted axes must agree on dim names."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType
from ...op_signatures import as_matmul
from ...staging import dtypes
from ...staging.builder import bind
from ...staging.ir import Atom, Aval
from ...staging.primitives import complex_parts as C
from ...staging.primitives import elementwise as E
from ...staging.primitives import linalg as L
from ...staging.primitives import structural as S
from ...tensor import Tensor, Traced
from ._core import as_tensor, broadcast_shapes, describe, op, result_dtype, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
Sh = TypeVarTuple("Sh")
S2 = TypeVarTuple("S2")
A = TypeVar("A")
B = TypeVar("B")


def _operands(name: str, x: Any, y: Any, *, scalars: bool = False) -> tuple[Atom, Atom]:
    """Both operands as atoms of one dtype, rank >= 1 unless ``scalars``. Booleans become i32 (dot_general has
    no boolean form): :func:`as_logical` turns the product back into NumPy's boolean one."""
    result_dtype(name, (x, y))
    a, b = as_tensor(x), as_tensor(y)
    if not scalars and (a.aval.ndim == 0 or b.aval.ndim == 0):
        raise shape_error(name, f"{name} needs operands of rank >= 1, got {describe(a)} and {describe(b)}")
    return as_counts(a.atom), as_counts(b.atom)


def as_counts(a: Atom) -> Atom:
    """A boolean operand of a product as i32 (1 for true), so that the product counts the true terms."""
    return E.convert(a, dtypes.DEFAULT_INT) if a.aval.dtype == np.bool_ else a


def as_logical(product: Atom, x: Any) -> Atom:
    """A product of boolean operands (computed in i32, as counts of true terms) as NumPy's: whether any is true."""
    if as_tensor(x).aval.dtype != np.bool_:
        return product
    logical: Atom = bind(E.ne_p, product, S.full_like(product, 0))
    return logical


@as_matmul
@op
def matmul(x: AnyTensor, y: AnyTensor) -> AnyTensor:
    """NumPy matmul: contracts the last axis of ``x`` with the second-to-last of ``y`` (the only one if 1-D);
    leading axes of two operands of rank >= 3 broadcast as batch axes."""
    if type(x) is Traced and type(y) is Traced:  # two staged matrices of one dtype (a layer): no checks beyond these
        a, b = x.atom, y.atom
        sa, sb = a.aval.shape, b.aval.shape
        if len(sa) == 2 == len(sb) and sa[1] == sb[0] and a.aval.dtype == b.aval.dtype != np.bool_:
            return Traced(L.dot_general(a, b, ((1,), (0,))))
    a, b = _operands("matmul", x, y)
    ra, rb = a.aval.ndim, b.aval.ndim
    if a.aval.shape[-1] != b.aval.shape[max(rb - 2, 0)]:
        raise shape_error(
            "matmul",
            f"contracted axes differ: last axis of {describe(wrap(a))} vs "
            f"{'first' if rb == 1 else 'second-to-last'} axis of {describe(wrap(b))}",
        )
    if rb <= 2 or ra == 1:
        return wrap(as_logical(L.dot_general(a, b, ((ra - 1,), (max(rb - 2, 0),))), x))
    # Both operands carry batch axes: align them, then contract with dot_general batch dimensions.
    batch_a = Aval(a.aval.shape[:-2], a.aval.dtype, a.aval.dims[:-2]) if ra >= 3 else None
    batch_b = Aval(b.aval.shape[:-2], b.aval.dtype, b.aval.dims[:-2])
    if batch_a is None:  # ra == 2: the matrix is shared by every batch element
        return wrap(as_logical(S.moveaxis(L.dot_general(a, b, ((1,), (rb - 2,))), 0, rb - 2), x))
    batch = broadcast_shapes("matmul", [batch_a, batch_b])
    a = S.broadcast_to(a, Aval((*batch.shape, *a.aval.shape[-2:]), a.aval.dtype, (*batch.dims, *a.aval.dims[-2:])))
    b = S.broadcast_to(b, Aval((*batch.shape, *b.aval.shape[-2:]), b.aval.dtype, (*batch.dims, *b.aval.dims[-2:])))
    nb = len(batch.shape)
    axes = tuple(range(nb))
    return wrap(as_logical(L.dot_general(a, b, ((nb + 1,), (nb,)), (axes, axes)), x))


@as_matmul
@op
def dot(x: AnyTensor, y: AnyTensor) -> AnyTensor:
    """NumPy dot: for 1-D/2-D operands it is matmul; for N-D it contracts x's last axis with y's second-to-last.
    A 0-d operand is an error (NumPy multiplies): write ``x * y``."""
    a, b = _operands("dot", x, y)
    rb = b.aval.ndim
    return wrap(as_logical(L.dot_general(a, b, ((a.aval.ndim - 1,), (max(rb - 2, 0),))), x))


@op
def vdot(x: Tensor[DT, Unpack[Sh]], y: Tensor[DT, Unpack[S2]]) -> Tensor[DT]:
    a, b = _operands("vdot", x, y)
    if dtypes.is_complex(a.aval.dtype):  # NumPy's vdot conjugates its first operand
        a = C.conj(a)
    fa = S.reshape(a, (a.aval.size,), (None,))
    fb = S.reshape(b, (b.aval.size,), (None,))
    return wrap(as_logical(L.dot_general(fa, fb, ((0,), (0,))), x))


@overload
def outer(x: Tensor[DT, A], y: Tensor[DT, B]) -> Tensor[DT, A, B]: ...
@overload
def outer(x: Tensor[DT, Unpack[Sh]], y: Tensor[DT, Unpack[S2]]) -> Tensor[DT, Any, Any]: ...
@op
def outer(x: AnyTensor, y: AnyTensor) -> AnyTensor:
    a, b = _operands("outer", x, y)
    fa = S.reshape(a, (a.aval.size,), (a.aval.dims[0] if a.aval.ndim == 1 else None,))
    fb = S.reshape(b, (b.aval.size,), (b.aval.dims[0] if b.aval.ndim == 1 else None,))
    return wrap(as_logical(L.dot_general(fa, fb, ((), ())), x))


@op
def tensordot(
    x: Tensor[DT, Unpack[Sh]], y: Tensor[DT, Unpack[S2]], axes: int | tuple[Sequence[int], Sequence[int]] = 2
) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    a, b = _operands("tensordot", x, y, scalars=True)
    if isinstance(axes, int):
        if not 0 <= axes <= min(a.aval.ndim, b.aval.ndim):
            raise shape_error("tensordot", f"axes={axes} does not fit operands {a.aval} and {b.aval}")
        lhs = tuple(range(a.aval.ndim - axes, a.aval.ndim))
        rhs = tuple(range(axes))
    else:
        lhs = _tensordot_axes(axes[0], a)
        rhs = _tensordot_axes(axes[1], b)
        if len(lhs) != len(rhs):
            raise shape_error("tensordot", f"axes {axes!r} name {len(lhs)} and {len(rhs)} axes")
    return wrap(as_logical(L.dot_general(a, b, (lhs, rhs)), x))


def _tensordot_axes(items: Any, a: Atom) -> tuple[int, ...]:
    """One operand's contracted axes (an int or a sequence), each checked to be in range."""
    n = a.aval.ndim
    out = []
    for i in items if isinstance(items, (tuple, list)) else (items,):
        k = operator.index(i)
        if not -n <= k < n:
            raise shape_error("tensordot", f"axis {k} is out of range for {a.aval} (rank {n})")
        out.append(k % n)
    return tuple(out)


@op
def multi_dot(arrays: Sequence[Tensor[DT, Unpack[tuple[Any, ...]]]]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """NumPy's ``linalg.multi_dot``: the product of two or more matrices in the cheapest order (fewest scalar
    multiplications). The first may be 1-D (a row vector) and the last 1-D (a column); the rest must be 2-D.
    No ``out=``."""
    items = [as_tensor(x) for x in arrays]
    if len(items) < 2:
        raise shape_error("multi_dot", f"needs at least two arrays, got {len(items)}")
    result_dtype("multi_dot", tuple(items))
    first_vector, last_vector = items[0].aval.ndim == 1, items[-1].aval.ndim == 1
    mats: list[Atom] = []
    for i, t in enumerate(items):
        a = as_counts(t.atom)
        if a.aval.ndim == 1 and i in (0, len(items) - 1):
            shape, names = ((1, a.aval.shape[0]), (None, a.aval.dims[0])) if i == 0 else (
                (a.aval.shape[0], 1), (a.aval.dims[0], None))
            a = S.reshape(a, shape, names)
        elif a.aval.ndim != 2:
            where = "first or last " if i in (0, len(items) - 1) else ""
            raise shape_error("multi_dot", f"array {i} must be {'1-D or ' if where else ''}2-D, got {describe(t)}")
        mats.append(a)
    for i in range(len(mats) - 1):
        if mats[i].aval.shape[1] != mats[i + 1].aval.shape[0]:
            raise shape_error(
                "multi_dot", f"arrays {i} and {i + 1} do not chain: {describe(items[i])} and {describe(items[i + 1])}"
            )
    split = _chain_order([m.aval.shape[0] for m in mats] + [mats[-1].aval.shape[1]])

    def product(i: int, j: int) -> Atom:
        if i == j:
            return mats[i]
        k = split[i][j]
        return L.dot_general(product(i, k), product(k + 1, j), ((1,), (0,)))

    out = product(0, len(mats) - 1)
    keep = [axis for axis, vector in ((0, first_vector), (1, last_vector)) if not vector]
    out = S.reshape(out, tuple(out.aval.shape[a] for a in keep), tuple(out.aval.dims[a] for a in keep))
    return wrap(as_logical(out, items[0]))


def _chain_order(sizes: list[int]) -> list[list[int]]:
    """Matrix-chain dynamic programme: for matrices ``i`` of shape ``(sizes[i], sizes[i + 1])``, ``split[i][j]`` is
    the ``k`` at which the cheapest product of matrices ``i..j`` splits into ``(i..k)(k+1..j)``."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best if best is not None else 0
    return split
