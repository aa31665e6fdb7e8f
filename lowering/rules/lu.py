"""Lowering of the ``lu`` primitive (``staging/primitives/lu.py``).

On CPU with jaxlib's LAPACK kernels (``lowering/lapack.py``): ``getrf`` on column-major matrices (so LAPACK factors
``a`` itself, square or not), its 1-based ``ipiv`` made 0-based, and the permutation from the swaps by the same
short while loop that solve uses (``_swap_indices``, the swaps padded to ``M`` with no-op ones).

Elsewhere (GPU, no SciPy, ``TENSORSTAGE_LAPACK=0``): an unblocked right-looking elimination, one ``stablehlo.while``
step per column ``j < min(M, N)``: the pivot is the first row ``i >= j`` of largest ``|a[i, j]|`` (LAPACK's
``idamax``; for complex ``a`` the largest ``|Re| + |Im|``, as ``izamax``), rows ``j`` and ``p`` swap, column ``j``
below the diagonal is divided by the pivot (kept as it is when the pivot is zero: then it is all zeros, as in
LAPACK) and the trailing block gets the rank-one update. Every step works on whole matrices with masks (batched
matrices pivot on different rows), O(M N) per step.

Complex matrices (c64, c128) take both paths unchanged: ``c``/``zgetrf`` has ``?getrf``'s signature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import lu as LU
from ..emit import Emitter, Value, i64_array, lowers
from .decompositions import _lapack_target, _swap_indices, in_f32, lapack_call, real_aval
from .elementwise import compare, widen

_I32 = np.dtype(np.int32)


class _Masked:
    """Elementwise helpers on one emitter: constants, selects, broadcasts and sums along one axis."""

    def __init__(self, em: Emitter) -> None:
        self.em = em

    def full(self, value: float, aval: Aval) -> Value:
        return widen(self.em, self.em.scalar(value, aval.dtype), aval.shape)

    def where(self, mask: Value, x: Value, y: Value) -> Value:
        return self.em.op("stablehlo.select", [mask, x, y], [x.aval])[0]

    def both(self, x: Value, y: Value) -> Value:
        return self.em.op("stablehlo.and", [x, y], [x.aval])[0]

    def spread(self, x: Value, shape: tuple[int, ...], axes: Sequence[int]) -> Value:
        """``x`` broadcast to ``shape``, its axes landing on ``axes``."""
        return self.em.op(
            "stablehlo.broadcast_in_dim", [x], [Aval(shape, x.aval.dtype)], f"broadcast_dimensions = {i64_array(list(axes))}"
        )[0]

    def reduce(self, x: Value, axis: int, op_name: str, init: float) -> Value:
        aval = x.aval
        scalar = Aval((), aval.dtype)
        shape = aval.shape[:axis] + aval.shape[axis + 1:]
        return self.em.op(
            "stablehlo.reduce", [x, self.em.scalar(init, aval.dtype)], [Aval(shape, aval.dtype)],
            f"dimensions = {i64_array([axis])}", [self.em.binary_region(op_name, scalar)],
        )[0]

    def pick(self, mask: Value, x: Value, axis: int) -> Value:
        """The element of ``x`` where ``mask`` holds along ``axis`` (exactly one per line): a masked sum."""
        return self.reduce(self.where(mask, x, self.full(0, x.aval)), axis, "stablehlo.add", 0)

    def iota(self, shape: tuple[int, ...], axis: int) -> Value:
        return self.em.op("stablehlo.iota", [], [Aval(shape, _I32)], f"iota_dimension = {axis} : i64")[0]


def _lapack_lu(em: Emitter, target: str, a: Value, outs: Sequence[Aval]) -> list[Value]:
    _, pivots_aval, perm_aval = outs
    *batch, m, _ = a.aval.shape
    k = pivots_aval.shape[-1]
    ops = _Masked(em)
    packed, swaps, _ = lapack_call(
        em, target, [a], [Aval(a.aval.shape, a.aval.dtype), pivots_aval, Aval(tuple(batch), _I32)], column_major=True
    )
    pivots = em.op("stablehlo.subtract", [swaps, ops.full(1, pivots_aval)], [pivots_aval])[0]
    if m > k:  # the rows past min(M, N) are not swapped: swap each with itself (1-based: k + 1, ..., m)
        tail = Aval((*batch, m - k), _I32)
        itself = em.op("stablehlo.add", [ops.iota(tail.shape, len(batch)), ops.full(k + 1, tail)], [tail])[0]
        swaps = em.op("stablehlo.concatenate", [swaps, itself], [perm_aval], f"dimension = {len(batch)} : i64")[0]
    return [packed, pivots, _swap_indices(em, swaps, reverse=False)]


def _portable_lu(em: Emitter, a: Value, outs: Sequence[Aval]) -> list[Value]:
    _, pivots_aval, perm_aval = outs
    shape = a.aval.shape
    nb = len(shape) - 2
    k = pivots_aval.shape[-1]
    ops = _Masked(em)
    perm = ops.iota(perm_aval.shape, nb)
    if k == 0:
        return [a, ops.full(0, pivots_aval), perm]
    scalar = Aval((), _I32)
    state = [scalar, Aval(shape, a.aval.dtype), pivots_aval, perm_aval]

    def cond(r: Emitter, vals: list[Value]) -> list[Value]:
        return [compare(r, vals[0], r.scalar(k, _I32), "LT")]

    def body(r: Emitter, vals: list[Value]) -> list[Value]:
        j, x, piv, order = vals
        step = _Step(_Masked(r), j, shape)
        p = step.pivot_row(x)
        x = step.swap(x, p, nb)
        order = step.swap(order, p, nb)
        piv = step.ops.where(compare(r, step.ops.iota(pivots_aval.shape, nb), j, "EQ"),
                             step.ops.spread(p, pivots_aval.shape, range(nb)), piv)
        x = step.eliminate(x)
        return [r.op("stablehlo.add", [j, r.scalar(1, _I32)], [scalar])[0], x, piv, order]

    init = [em.scalar(0, _I32), a, ops.full(0, pivots_aval), perm]
    regions = [em.region(state, cond), em.region(state, body)]
    _, packed, pivots, perm = em.op("stablehlo.while", init, state, regions=regions)
    return [packed, pivots, perm]


def _pivot_magnitude(em: Emitter, x: Value) -> Value:
    """``|x|``, or ``|Re x| + |Im x|`` for complex ``x``: the measure LAPACK's ``i?amax`` picks pivots by (so both
    paths pivot alike)."""
    if not dtypes.is_complex(x.aval.dtype):
        return em.op("stablehlo.abs", [x], [x.aval])[0]
    part = real_aval(x)
    re, im = (em.op("stablehlo.abs", [em.op(f"stablehlo.{p}", [x], [part])[0]], [part])[0] for p in ("real", "imag"))
    return em.op("stablehlo.add", [re, im], [part])[0]


class _Step:
    """One column ``j`` of the elimination, on ``(..., M, N)`` matrices."""

    def __init__(self, ops: _Masked, j: Value, shape: tuple[int, ...]) -> None:
        self.ops, self.j, self.shape = ops, j, shape
        nb = len(shape) - 2
        self.nb = nb
        self.rows = ops.iota(shape, nb)
        self.cols = ops.iota(shape, nb + 1)
        self.column_shape = shape[:-1]  # (..., M): one value per row
        self.row_index = ops.iota(self.column_shape, nb)

    def is_j(self, index: Value) -> Value:
        return compare(self.ops.em, index, self.j, "EQ")

    def column(self, x: Value) -> Value:
        """Column ``j`` of every matrix: ``(..., M)``."""
        return self.ops.pick(self.is_j(self.cols), x, self.nb + 1)

    def pivot_row(self, x: Value) -> Value:
        """Per matrix, the first row ``i >= j`` of largest ``|x[i, j]|`` (``j`` itself if that is NaN)."""
        ops, em = self.ops, self.ops.em
        col = self.column(x)
        eligible = compare(em, self.row_index, self.j, "GE")
        magnitude = _pivot_magnitude(em, col)
        magnitude = ops.where(eligible, magnitude, ops.full(-1, magnitude.aval))
        largest = ops.reduce(magnitude, self.nb, "stablehlo.maximum", -np.inf)
        hit = ops.both(eligible, compare(em, magnitude, ops.spread(largest, self.column_shape, range(self.nb)), "EQ"))
        m = self.column_shape[-1]
        first = ops.reduce(ops.where(hit, self.row_index, ops.full(m, self.row_index.aval)), self.nb, "stablehlo.minimum", m)
        none = compare(em, first, ops.full(m, first.aval), "EQ")
        return ops.where(none, widen(em, self.j, first.aval.shape), first)

    def swap(self, x: Value, p: Value, axis: int) -> Value:
        """``x`` (matrices, or vectors along the rows) with entries ``j`` and ``p`` swapped along ``axis``."""
        ops, em = self.ops, self.ops.em
        shape = x.aval.shape
        index = ops.iota(shape, axis)
        at_j = compare(em, index, self.j, "EQ")
        at_p = compare(em, index, ops.spread(p, shape, range(self.nb)), "EQ")
        kept = [d for d in range(len(shape)) if d != axis]
        row_j = ops.spread(ops.pick(at_j, x, axis), shape, kept)
        row_p = ops.spread(ops.pick(at_p, x, axis), shape, kept)
        return ops.where(at_j, row_p, ops.where(at_p, row_j, x))

    def eliminate(self, x: Value) -> Value:
        """Divide column ``j`` below the diagonal by the pivot (unless it is zero) and update the trailing block."""
        ops, em = self.ops, self.ops.em
        nb, shape = self.nb, self.shape
        row_j = ops.pick(self.is_j(self.rows), x, nb)  # (..., N)
        pivot = ops.pick(self.is_j(ops.iota(row_j.aval.shape, nb)), row_j, nb)  # (...)
        zero = compare(em, pivot, ops.full(0, pivot.aval), "EQ")
        pivot = ops.where(zero, ops.full(1, pivot.aval), pivot)
        col = self.column(x)
        multipliers = em.op("stablehlo.divide", [col, ops.spread(pivot, col.aval.shape, range(nb))], [col.aval])[0]
        along_rows = ops.spread(multipliers, shape, [*range(nb), nb])
        update = em.op("stablehlo.multiply", [along_rows, ops.spread(row_j, shape, [*range(nb), nb + 1])], [x.aval])[0]
        below = compare(em, self.rows, self.j, "GT")
        right = compare(em, self.cols, self.j, "GT")
        trailing = em.op("stablehlo.subtract", [x, update], [x.aval])[0]
        x = ops.where(ops.both(below, right), trailing, x)
        return ops.where(ops.both(below, self.is_j(self.cols)), along_rows, x)


@lowers(LU.lu_p)
@in_f32
def _lu(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], **params: Any) -> list[Value]:
    (a,) = args
    target = _lapack_target(em, "getrf", a.aval)
    if target is not None:
        return _lapack_lu(em, target, a, outs)
    return _portable_lu(em, a, outs)

