"""Reductions over a set of axes: sum, max, min, prod, and argmax/argmin along one axis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype, memoized_shape_rule
from ..zeros import MaybeZero, Zero
from . import elementwise as E
from . import structural as S


def _reduced_aval(op: str, x: Aval, axes: tuple[int, ...]) -> Aval:
    if tuple(sorted(set(axes))) != axes or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"axes {axes} must be sorted, unique and within rank {x.ndim} of {x}", op)
    keep = [a for a in range(x.ndim) if a not in axes]
    return Aval(tuple(x.shape[a] for a in keep), x.dtype, tuple(x.dims[a] for a in keep))


def _batch_axes(axes: tuple[int, ...], d: int) -> tuple[tuple[int, ...], int]:
    """Axes of the batched operand, and where the batch axis lands in the result."""
    shifted = tuple(a + (a >= d) for a in axes)
    return shifted, d - sum(a < d for a in shifted)


def _expand_back(ct: Atom, x: Aval, axes: tuple[int, ...]) -> Atom:
    """Broadcast a reduced value back over the reduced axes of ``x``."""
    kept = tuple(a for a in range(x.ndim) if a not in axes)
    return S.broadcast_in_dim(ct, x.shape, kept, x.dims)


def _make_reduce(name: str, allowed: frozenset[Any], what: str) -> Primitive:
    prim = Primitive(name)

    @prim.def_shape
    @memoized_shape_rule  # runs for every reduction staged (each bias gradient is one)
    def shape(x: Aval, *, axes: tuple[int, ...]) -> Aval:
        check_dtype(name, x, allowed, what)
        return _reduced_aval(name, x, axes)

    @prim.def_batch
    def batch(args: Sequence[Atom], dims: Sequence[int | None], *, axes: tuple[int, ...]) -> Any:
        d = dims[0]
        assert d is not None
        shifted, out_dim = _batch_axes(axes, d)
        return bind(prim, args[0], axes=shifted), out_dim

    return prim


reduce_sum_p = _make_reduce("reduce_sum", E.ARITHMETIC, "numeric")
reduce_max_p = _make_reduce("reduce_max", E.ANY, E.ORDERED)
reduce_min_p = _make_reduce("reduce_min", E.ANY, E.ORDERED)
reduce_prod_p = _make_reduce("reduce_prod", E.ARITHMETIC, "numeric")


def reduce_sum(x: Atom, axes: Sequence[int]) -> Atom:
    axes_t = tuple(sorted(axes))
    return x if not axes_t else bind(reduce_sum_p, x, axes=axes_t)


def reduce_max(x: Atom, axes: Sequence[int]) -> Atom:
    return bind(reduce_max_p, x, axes=tuple(sorted(axes)))  # type: ignore[no-any-return]


def reduce_min(x: Atom, axes: Sequence[int]) -> Atom:
    return bind(reduce_min_p, x, axes=tuple(sorted(axes)))  # type: ignore[no-any-return]


def reduce_prod(x: Atom, axes: Sequence[int]) -> Atom:
    return bind(reduce_prod_p, x, axes=tuple(sorted(axes)))  # type: ignore[no-any-return]


@reduce_sum_p.def_jvp
def _sum_jvp(primals: Any, tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, axes: Any) -> Any:
    (t,) = tangents
    return (Zero(outs[0].aval),) if isinstance(t, Zero) else (reduce_sum(t, axes),)


@reduce_sum_p.def_vjp
def _sum_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, axes: Any) -> Any:
    (ct,) = cts
    x = primals[0]
    return (Zero(x.aval),) if isinstance(ct, Zero) else (_expand_back(ct, x.aval, axes),)


def _extremum_weights(x: Atom, out: Atom, axes: tuple[int, ...]) -> Atom:
    """1/k at the k positions that attain the extremum, 0 elsewhere (ties share the derivative)."""
    hit = E.eq(x, _expand_back(out, x.aval, axes))
    ones = E.select(hit, S.full_like(x, 1), S.full_like(x, 0))
    count = reduce_sum(ones, axes)
    return E.div(ones, _expand_back(count, x.aval, axes))


def _extremum_rules(prim: Primitive) -> None:
    @prim.def_jvp
    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, axes: Any) -> Any:
        (t,) = tangents
        if isinstance(t, Zero) or not dtypes.is_float(outs[0].aval.dtype):
            return (Zero(outs[0].aval),)
        return (reduce_sum(E.mul(t, _extremum_weights(primals[0], outs[0], axes)), axes),)

    @prim.def_vjp
    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any, *, axes: Any) -> Any:
        (ct,) = cts
        x = primals[0]
        if isinstance(ct, Zero) or not dtypes.is_float(x.aval.dtype):
            return (Zero(x.aval),)
        return (E.mul(_expand_back(ct, x.aval, axes), _extremum_weights(x, outs[0], axes)),)


_extremum_rules(reduce_max_p)
_extremum_rules(reduce_min_p)


def _prod_partials(x: Atom, out: Atom, axes: tuple[int, ...]) -> Atom:
    """d prod / d x_i = the product of the other elements of x_i's slice, exact even when the slice has zeros.

    Without zeros that is prod / x_i. With one zero, only the zero's position has a nonzero partial (the
    product of the rest); with two or more, every partial is zero. Dividing ``out`` by ``x`` would give NaN.
    Known limit: second derivatives at inputs with exact zeros treat the zero-case branches as constants.
    """
    one, zero = S.full_like(x, 1), S.full_like(x, 0)
    is_zero = E.eq(x, zero)
    nonzero = E.select(is_zero, one, x)
    rest = _expand_back(reduce_prod(nonzero, axes), x.aval, axes)  # product of the slice's nonzero elements
    zeros = _expand_back(reduce_sum(E.select(is_zero, one, zero), axes), x.aval, axes)
    one_zero = E.select(is_zero, rest, zero)
    return E.select(E.eq(zeros, zero), E.div(rest, nonzero), E.select(E.eq(zeros, one), one_zero, zero))


@reduce_prod_p.def_jvp
def _prod_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, axes: Any) -> Any:
    (t,) = tangents
    if isinstance(t, Zero) or not dtypes.is_inexact(outs[0].aval.dtype):
        return (Zero(outs[0].aval),)
    return (reduce_sum(E.mul(t, _prod_partials(primals[0], outs[0], axes)), axes),)


@reduce_prod_p.def_vjp
def _prod_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Any, *, axes: Any) -> Any:
    (ct,) = cts
    x = primals[0]
    if isinstance(ct, Zero) or not dtypes.is_inexact(x.aval.dtype):
        return (Zero(x.aval),)
    return (E.mul(_expand_back(ct, x.aval, axes), _prod_partials(x, outs[0], axes)),)


# ---------------------------------------------------------------------------------------- argmax / argmin


def _make_arg_reduce(name: str) -> Primitive:
    prim = Primitive(name, differentiable=False)

    @prim.def_shape
    def shape(x: Aval, *, axis: int, index_dtype: np.dtype[Any]) -> Aval:
        check_dtype(name, x, E.NUMERIC | {dtypes.BOOL}, E.ORDERED)
        if not dtypes.is_integer(index_dtype):
            raise DTypeError(f"index dtype must be an integer type, got {index_dtype}", name)
        if x.ndim == 0 or x.shape[axis] == 0:
            raise ShapeError(f"needs a non-empty axis {axis}, got {x}", name)
        return _reduced_aval(name, x, (axis,)).with_dtype(index_dtype)

    @prim.def_batch
    def batch(args: Sequence[Atom], dims: Sequence[int | None], *, axis: int, index_dtype: Any) -> Any:
        d = dims[0]
        assert d is not None
        (shifted,), out_dim = _batch_axes((axis,), d)
        return bind(prim, args[0], axis=shifted, index_dtype=index_dtype), out_dim

    prim.def_jvp(E._no_tangent_jvp)
    prim.def_vjp(E._no_cotangent_vjp)
    return prim


argmax_p = _make_arg_reduce("argmax")
argmin_p = _make_arg_reduce("argmin")
