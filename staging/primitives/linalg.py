"""dot_general: contraction over paired axes with optional batch axes (StableHLO's dot_general).

Result axes are ordered (batch axes, lhs free axes, rhs free axes). Transpose and batching rules choose operand
order so that results come out in row-major layout whenever a single dot can produce it, instead of building
a transposed result that XLA must copy back.

A dot staged inside ``ts.default_matmul_precision(...)`` carries the chosen operand precision as its
``precision`` param (``'DEFAULT'``, ``'HIGH'`` or ``'HIGHEST'``: StableHLO's ``precision_config``); its derivative
and batched dots carry it too. Dots staged outside carry none (the lowering's platform default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..bounded import remember
from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype, memoized_shape_rule, same_dtype, unify_axis
from ..zeros import MaybeZero, Zero
from . import elementwise as E
from . import structural as S

Dims = tuple[tuple[int, ...], tuple[int, ...]]

dot_general_p = Primitive("dot_general")

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
# The precision of dots staged now (``ts.default_matmul_precision`` sets it; None: no param); read per dot staged.
DEFAULT_PRECISION: list[str | None] = [None]


def _free_axes(ndim: int, contracting: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [a for a in range(ndim) if a not in contracting and a not in batch]


@dot_general_p.def_shape
@memoized_shape_rule  # runs for every dot staged
def _dot_general_shape(lhs: Aval, rhs: Aval, *, contracting: Dims, batch: Dims, precision: str | None = None) -> Aval:
    op = "dot_general"
    if precision is not None and precision not in PRECISIONS:
        raise ValueError(f"dot_general: precision must be one of {', '.join(PRECISIONS)} or None, got {precision!r}")
    check_dtype(op, lhs, E.ARITHMETIC, "numeric")
    same_dtype(op, (lhs, rhs))
    (lc, rc), (lb, rb) = contracting, batch
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"contracting {contracting} / batch {batch} axes must pair up for {lhs} and {rhs}", op)
    for axes, aval in ((lc + lb, lhs), (rc + rb, rhs)):
        if len(set(axes)) != len(axes) or any(not 0 <= a < aval.ndim for a in axes):
            raise ShapeError(f"invalid axes {axes} for operand {aval}", op)
    for la, ra in zip(lc, rc):
        if lhs.shape[la] != rhs.shape[ra]:
            raise ShapeError(
                f"contracting axis {la} of {lhs} (size {lhs.shape[la]}) does not match axis {ra} of {rhs} "
                f"(size {rhs.shape[ra]})",
                op,
            )
        unify_axis(op, (lhs, rhs), (la, ra))
    shape: list[int] = []
    names: list[str | None] = []
    for la, ra in zip(lb, rb):
        if lhs.shape[la] != rhs.shape[ra]:
            raise ShapeError(f"batch axis {la} of {lhs} does not match axis {ra} of {rhs}", op)
        shape.append(lhs.shape[la])
        names.append(unify_axis(op, (lhs, rhs), (la, ra)))
    for aval, c, b in ((lhs, lc, lb), (rhs, rc, rb)):
        for a in _free_axes(aval.ndim, c, b):
            shape.append(aval.shape[a])
            names.append(aval.dims[a])
    return Aval(tuple(shape), lhs.dtype, names)


def dot_general(
    lhs: Atom, rhs: Atom, contracting: Dims, batch: Dims = ((), ()), precision: str | None = None
) -> Atom:
    """A dot; ``precision`` None: the staging default (``DEFAULT_PRECISION``)."""
    c, b = contracting, batch
    if type(c) is not tuple or len(c) != 2 or type(c[0]) is not tuple or type(c[1]) is not tuple:
        c = (tuple(c[0]), tuple(c[1]))
    if type(b) is not tuple or len(b) != 2 or type(b[0]) is not tuple or type(b[1]) is not tuple:
        b = (tuple(b[0]), tuple(b[1]))
    if precision is None:
        precision = DEFAULT_PRECISION[0]
    if precision is None:  # the common case: no param, so the equation is what it always was
        return bind(dot_general_p, lhs, rhs, contracting=c, batch=b)  # type: ignore[no-any-return]
    return bind(dot_general_p, lhs, rhs, contracting=c, batch=b, precision=precision)  # type: ignore[no-any-return]


dot_general_p.def_jvp(E.bilinear_jvp(dot_general_p))


def _cotangent_for(
    ct: Atom, x: Aval, y: Atom, x_is_lhs: bool, contracting: Dims, batch: Dims, precision: str | None
) -> Atom:
    """Cotangent of operand ``x`` of a dot_general whose other operand is ``y``.

    It is a dot of ``ct`` with ``y`` contracting ``y``'s free axes; of the two operand orders, the one whose
    result needs no transpose into ``x``'s layout is used.
    """
    key: tuple[Any, ...] | None = (len(x.shape), len(y.aval.shape), x_is_lhs, contracting, batch)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # axes given as lists
        key, plan = None, None
    if plan is None:
        plan = _cotangent_plan(x.ndim, y.aval.ndim, x_is_lhs, contracting, batch)
        if key is not None:
            remember(_PLANS, key, plan, 1024)
    ct_first, c, b, perm = plan  # the plan's axes are tuples already: bound as they are (dot_general converts)
    out: Atom
    out = dot_general(ct, y, c, b, precision) if ct_first else dot_general(y, ct, c, b, precision)
    if perm is not None:
        out = S.transpose(out, perm)
    return S.reshape_like(out, x)


_Plan = tuple[bool, Dims, Dims, "tuple[int, ...] | None"]
_PLANS: dict[Any, _Plan] = {}  # _cotangent_plan by its arguments (ranks and axes only); bounded


def _cotangent_plan(x_ndim: int, y_ndim: int, x_is_lhs: bool, contracting: Dims, batch: Dims) -> _Plan:
    """How ``_cotangent_for`` builds the cotangent: whether ``ct`` is the dot's lhs, the dot's (contracting,
    batch) axes, and the transpose into ``x``'s layout (None when the dot's result already has it)."""
    xc, yc = (contracting[0], contracting[1]) if x_is_lhs else (contracting[1], contracting[0])
    xb, yb = (batch[0], batch[1]) if x_is_lhs else (batch[1], batch[0])
    nb = len(xb)
    x_free = _free_axes(x_ndim, xc, xb)
    y_free = _free_axes(y_ndim, yc, yb)
    # Axes of ct: batch, lhs free, rhs free.
    ct_y_free = [nb + len(x_free) + i for i in range(len(y_free))] if x_is_lhs else [nb + i for i in range(len(y_free))]
    ct_batch = list(range(nb))
    y_contract_sorted = sorted(yc)  # the dot's y-side result axes come in y's axis order

    def layout(order: str) -> list[int]:
        """Permutation taking the dot's result axes to x's axes, for result axis order ``order``."""
        positions: dict[int, int] = {}
        for k, a in enumerate(xb):
            positions[a] = k
        free_base = nb if order == "ct_first" else nb + len(yc)
        contract_base = nb + len(x_free) if order == "ct_first" else nb
        for k, a in enumerate(x_free):
            positions[a] = free_base + k
        for a, paired in zip(xc, yc):
            positions[a] = contract_base + y_contract_sorted.index(paired)
        return [positions[a] for a in range(x_ndim)]

    ct_dims: Dims = (tuple(ct_y_free), tuple(y_free))
    ct_batch_dims: Dims = (tuple(ct_batch), tuple(yb))
    ct_first = layout("ct_first")
    if ct_first == sorted(ct_first):
        return True, ct_dims, ct_batch_dims, None
    y_first = layout("y_first")
    if y_first == sorted(y_first):
        return False, (tuple(y_free), tuple(ct_y_free)), (tuple(yb), tuple(ct_batch)), None
    return True, ct_dims, ct_batch_dims, tuple(ct_first)


@dot_general_p.def_vjp
def _dot_general_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], *, contracting: Dims,
    batch: Dims, precision: str | None = None,
) -> Any:
    (ct,) = cts
    lhs, rhs = primals
    # Bilinear: the transposes need no conjugation (JAX's convention, see complex_parts)
    if isinstance(ct, Zero) or not dtypes.is_inexact(lhs.aval.dtype):
        return (Zero(lhs.aval), Zero(rhs.aval))
    ct_lhs = _cotangent_for(ct, lhs.aval, rhs, True, contracting, batch, precision) if wants[0] else Zero(lhs.aval)
    ct_rhs = _cotangent_for(ct, rhs.aval, lhs, False, contracting, batch, precision) if wants[1] else Zero(rhs.aval)
    return (ct_lhs, ct_rhs)


@dot_general_p.def_batch
def _dot_general_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, contracting: Dims, batch: Dims, precision: str | None = None
) -> Any:
    lhs, rhs = args
    dl, dr = dims
    (lc, rc), (lb, rb) = contracting, batch

    def shift(axes: Sequence[int], d: int | None) -> tuple[int, ...]:
        return tuple(a + (d is not None and a >= d) for a in axes)

    lc2, lb2, rc2, rb2 = shift(lc, dl), shift(lb, dl), shift(rc, dr), shift(rb, dr)
    if dl is not None and dr is not None:
        out = dot_general(lhs, rhs, (lc2, rc2), ((dl, *lb2), (dr, *rb2)), precision)
        return out, 0
    nb = len(lb)
    if dl is not None:
        free = _free_axes(lhs.aval.ndim, lc2, lb2)
        return dot_general(lhs, rhs, (lc2, rc2), (lb2, rb2), precision), nb + free.index(dl)
    assert dr is not None
    free_r = _free_axes(rhs.aval.ndim, rc2, rb2)
    if free_r == [dr] and nb == 0:
        # Matrix times a batch of vectors: swap operands so the batch axis leads (row-major result).
        return dot_general(rhs, lhs, (rc2, lc2), (rb2, lb2), precision), 0
    n_lhs_free = len(_free_axes(lhs.aval.ndim, lc, lb))
    return dot_general(lhs, rhs, (lc2, rc2), (lb2, rb2), precision), nb + n_lhs_free + free_r.index(dr)
