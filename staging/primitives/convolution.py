"""conv_general_dilated: StableHLO's ``convolution`` (windowed, strided, dilated, padded, feature-grouped).

Per spatial axis the lhs is dilated (``lhs_dilation - 1`` zeros between elements), padded by ``(low, high)`` (a
negative amount crops), and a window of the rhs (its taps ``rhs_dilation`` apart) slides over it with
``window_strides``; each output element is the sum over the window and the input features of its group.
``ConvDims`` says which axis of each operand is the batch / feature / spatial one, so any layout (channels-first,
channels-last...) is one primitive and transforms never transpose the operands' data to a canonical layout.

Rules:
- JVP: the op is bilinear.
- VJP: the lhs cotangent is a convolution of the cotangent with the spatially reversed kernel (input and output
  features swapped; forward strides become lhs dilation, forward lhs dilation becomes the stride), the rhs
  cotangent a convolution of the lhs with the cotangent as kernel (forward strides become rhs dilation, forward
  rhs dilation the stride; batch and feature roles swapped). Feature groups are regrouped by reshapes.
- Batching folds the mapped axis into the batch axis (batched lhs), into the output features (batched rhs), or
  into feature groups (both batched), so every batched convolution is still one convolution.

``precision`` is the operand precision asked of XLA (``'DEFAULT'``, ``'HIGH'``, ``'HIGHEST'``: StableHLO's
``precision_config``), as ``dot_general``'s: a convolution staged without one takes the staging default
(``ts.default_matmul_precision``, as in JAX), and its derivative and batched convolutions carry it on. None (no
param): the lowering's platform default.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import dtypes
from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval, DimName
from ..primitive import Primitive
from ..shapes import check_dtype, memoized_shape_rule, same_dtype, unify_axis
from ..zeros import MaybeZero, Zero
from . import elementwise as E
from . import structural as S
from .linalg import DEFAULT_PRECISION, PRECISIONS
from .slicing import rev

OP = "conv_general_dilated"


class ConvDims(NamedTuple):
    """Which axis of each operand plays which role (StableHLO's convolution dimension numbers).

    ``lhs``: (batch, feature, *spatial) axes of the input; ``rhs``: (output feature, input feature, *spatial) axes
    of the kernel; ``out``: (batch, feature, *spatial) axes of the result. Spatial axes pair up in order.
    """

    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    out: tuple[int, ...]

    @staticmethod
    def channels_first(spatial: int) -> ConvDims:
        """``(N, C, *S) x (O, I, *S) -> (N, O, *S)`` (StableHLO's and ``lax``'s default)."""
        axes = tuple(range(spatial + 2))
        return ConvDims(axes, axes, axes)

    @staticmethod
    def channels_last(spatial: int) -> ConvDims:
        """``(N, *S, C) x (*S, I, O) -> (N, *S, O)`` (TensorFlow's and Flax's convention)."""
        sp = tuple(range(1, spatial + 1))
        return ConvDims((0, spatial + 1, *sp), (spatial + 1, spatial, *range(spatial)), (0, spatial + 1, *sp))


Pairs = tuple[tuple[int, int], ...]

conv_general_dilated_p = Primitive("conv_general_dilated")


def dilated_size(n: int, dilation: int) -> int:
    """Extent of ``n`` elements placed ``dilation`` apart."""
    return 0 if n == 0 else (n - 1) * dilation + 1


def _axis(aval: Aval, axis: int, role: str) -> str:
    name = aval.dims[axis]
    return f"{role} axis {axis} ({name}={aval.shape[axis]})" if name else f"{role} axis {axis} (size {aval.shape[axis]})"


def _check_ints(name: str, values: object, n: int, lhs: Aval, rhs: Aval) -> None:
    """``values`` must be ``n`` Python ints >= 1 (strides and dilations)."""
    if not (isinstance(values, tuple) and len(values) == n and all(type(v) is int and v >= 1 for v in values)):
        raise ShapeError(
            f"{name} must be {n} ints >= 1 (one per spatial axis) for lhs {lhs} and rhs {rhs}, got {values!r}", OP
        )


@conv_general_dilated_p.def_shape
@memoized_shape_rule
def _conv_shape(
    lhs: Aval, rhs: Aval, *, window_strides: tuple[int, ...], padding: Pairs, lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...], dimension_numbers: ConvDims, feature_group_count: int, batch_group_count: int,
    precision: str | None = None,
) -> Aval:
    if precision is not None and precision not in PRECISIONS:
        raise ValueError(f"{OP}: precision must be one of {', '.join(PRECISIONS)} or None, got {precision!r}")
    check_dtype(OP, lhs, E.NUMERIC, "real numeric")
    same_dtype(OP, (lhs, rhs))
    dn = dimension_numbers
    if not isinstance(dn, ConvDims):
        raise ShapeError(f"dimension_numbers must be a ConvDims, got {dn!r}", OP)
    if lhs.ndim < 3 or rhs.ndim != lhs.ndim:
        raise ShapeError(
            f"lhs {lhs} and rhs {rhs} must have one rank, at least 3 (batch, feature and spatial axes)", OP
        )
    rank = lhs.ndim
    for spec, what in ((dn.lhs, "lhs"), (dn.rhs, "rhs"), (dn.out, "out")):
        if not isinstance(spec, tuple) or sorted(spec) != list(range(rank)) or any(type(a) is not int for a in spec):
            raise ShapeError(
                f"dimension_numbers.{what} {spec!r} must be a permutation of the {rank} axes of lhs {lhs} and rhs {rhs}",
                OP,
            )
    n = rank - 2
    _check_ints("window_strides", window_strides, n, lhs, rhs)
    _check_ints("lhs_dilation", lhs_dilation, n, lhs, rhs)
    _check_ints("rhs_dilation", rhs_dilation, n, lhs, rhs)
    if not (
        isinstance(padding, tuple) and len(padding) == n
        and all(isinstance(p, tuple) and len(p) == 2 and all(type(v) is int for v in p) for p in padding)
    ):
        raise ShapeError(f"padding must be {n} (low, high) pairs of ints for lhs {lhs} and rhs {rhs}, got {padding!r}", OP)
    if batch_group_count != 1:
        raise ShapeError(f"only batch_group_count=1 is supported, got {batch_group_count!r}", OP)
    groups = feature_group_count
    if type(groups) is not int or groups < 1:
        raise ShapeError(f"feature_group_count must be an int >= 1, got {groups!r}", OP)
    features, kernel_in, kernel_out = lhs.shape[dn.lhs[1]], rhs.shape[dn.rhs[1]], rhs.shape[dn.rhs[0]]
    if features != groups * kernel_in:
        raise ShapeError(
            f"the {_axis(lhs, dn.lhs[1], 'lhs feature')} must be feature_group_count ({groups}) x the "
            f"{_axis(rhs, dn.rhs[1], 'rhs input-feature')} = {groups * kernel_in}, for lhs {lhs} and rhs {rhs}",
            OP,
        )
    if kernel_out % groups:
        raise ShapeError(
            f"the {_axis(rhs, dn.rhs[0], 'rhs output-feature')} must be a multiple of feature_group_count "
            f"({groups}), for lhs {lhs} and rhs {rhs}",
            OP,
        )
    if groups == 1:
        unify_axis(OP, (lhs, rhs), (dn.lhs[1], dn.rhs[1]))
    shape = [0] * rank
    names: list[DimName] = [None] * rank
    shape[dn.out[0]], names[dn.out[0]] = lhs.shape[dn.lhs[0]], lhs.dims[dn.lhs[0]]
    shape[dn.out[1]], names[dn.out[1]] = kernel_out, rhs.dims[dn.rhs[0]]
    for i in range(n):
        la, ra = dn.lhs[2 + i], dn.rhs[2 + i]
        size, window = lhs.shape[la], rhs.shape[ra]
        (low, high), stride = padding[i], window_strides[i]
        if window == 0:
            raise ShapeError(f"the window of spatial axis {i} is empty: {_axis(rhs, ra, 'rhs')} of rhs {rhs}", OP)
        span = dilated_size(window, rhs_dilation[i])
        padded = dilated_size(size, lhs_dilation[i]) + low + high
        if padded < span and size == 0:  # an empty axis (a 'SAME' pad of it, say): no window fits, as in lax
            shape[dn.out[2 + i]] = 0
            continue
        if padded < span:
            raise ShapeError(
                f"spatial axis {i}: the window ({_axis(rhs, ra, 'rhs')}, rhs_dilation {rhs_dilation[i]}: spans "
                f"{span}) is larger than the input ({_axis(lhs, la, 'lhs')}, lhs_dilation {lhs_dilation[i]}, "
                f"padding {padding[i]}: {padded}), for lhs {lhs} and rhs {rhs}",
                OP,
            )
        out = (padded - span) // stride + 1
        shape[dn.out[2 + i]] = out
        if out == size and stride == 1 and lhs_dilation[i] == 1:  # a 'SAME' axis keeps its dim
            names[dn.out[2 + i]] = lhs.dims[la]
    return Aval(tuple(shape), lhs.dtype, names)


def _ints(values: int | Sequence[int] | None, n: int) -> Any:
    """Per-spatial-axis ints as a tuple; anything else is passed on for the shape rule to name."""
    if values is None:
        return (1,) * n
    if isinstance(values, int):
        return (values,) * n  # a bool too: the shape rule rejects it
    try:
        return tuple(v if type(v) is bool else operator.index(v) for v in values)
    except TypeError:
        return values


def conv_general_dilated(
    lhs: Atom,
    rhs: Atom,
    window_strides: int | Sequence[int] | None = None,
    padding: Sequence[tuple[int, int]] | None = None,
    lhs_dilation: int | Sequence[int] | None = None,
    rhs_dilation: int | Sequence[int] | None = None,
    dimension_numbers: ConvDims | None = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: str | None = None,
) -> Atom:
    """Bind the primitive with every param normalized to tuples (defaults: channels-first, stride 1, no
    padding, no dilation; ``precision`` None: the staging default, ``DEFAULT_PRECISION``)."""
    n = max(lhs.aval.ndim - 2, 0)
    dn = dimension_numbers if dimension_numbers is not None else ConvDims.channels_first(n)
    pads: Any = ((0, 0),) * n if padding is None else padding
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in pads)
    except (TypeError, ValueError):
        pass  # the shape rule names the bad value
    if precision is None:
        precision = DEFAULT_PRECISION[0]
    # No param when there is no precision: the equation is what it always was.
    chosen = {} if precision is None else {"precision": precision}
    return bind(  # type: ignore[no-any-return]
        conv_general_dilated_p, lhs, rhs, window_strides=_ints(window_strides, n), padding=pads,
        lhs_dilation=_ints(lhs_dilation, n), rhs_dilation=_ints(rhs_dilation, n), dimension_numbers=dn,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count, **chosen,
    )


conv_general_dilated_p.def_jvp(E.bilinear_jvp(conv_general_dilated_p))


def _split_groups(x: Atom, spec: tuple[int, ...], groups: int, axis: int) -> tuple[Atom, int]:
    """``x`` in its canonical layout (axes ``spec``), with canonical axis ``axis`` (0 or 1) split into
    ``(groups, size // groups)``; returns the reshaped atom and the number of spatial axes."""
    xc = S.transpose(x, spec)
    shape = xc.aval.shape
    split = (*shape[:axis], groups, shape[axis] // groups, *shape[axis + 1:])
    return S.reshape(xc, split), len(shape) - 2


def _kernel_for_lhs_cotangent(kernel: Atom, spec: tuple[int, ...], groups: int) -> Atom:
    """Kernel ``(G*Og, I, *S)`` (canonical) as ``(Og, G*I, *S)``: element ``[q, g*I + c]`` is ``[g*Og + q, c]``,
    so the transposed convolution reads Og inputs and writes I outputs per group."""
    k, n = _split_groups(kernel, spec, groups, 0)  # (G, Og, I, *S)
    k = S.transpose(k, (1, 0, 2, *range(3, 3 + n)))  # (Og, G, I, *S)
    og, g, i, *spatial = k.aval.shape
    return S.reshape(k, (og, g * i, *spatial))


def _lhs_for_rhs_cotangent(lhs: Atom, spec: tuple[int, ...], groups: int) -> Atom:
    """Input ``(B, G*Cg, *S)`` (canonical) as ``(Cg, G*B, *S)``: element ``[c, g*B + b]`` is ``[b, g*Cg + c]``,
    so the kernel-gradient convolution contracts the batch of each group separately."""
    x, n = _split_groups(lhs, spec, groups, 1)  # (B, G, Cg, *S)
    x = S.transpose(x, (2, 1, 0, *range(3, 3 + n)))  # (Cg, G, B, *S)
    cg, g, b, *spatial = x.aval.shape
    return S.reshape(x, (cg, g * b, *spatial))


def _lhs_cotangent(
    ct: Atom, lhs: Aval, rhs: Atom, *, window_strides: tuple[int, ...], padding: Pairs, lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...], dimension_numbers: ConvDims, feature_group_count: int, batch_group_count: int,
    precision: str | None = None,
) -> Atom:
    dn, groups = dimension_numbers, feature_group_count
    n = len(window_strides)
    kernel = rev(rhs, dn.rhs[2:])
    if groups == 1:  # the kernel's input and output features swap roles: no data moves
        kernel_spec = (dn.rhs[1], dn.rhs[0], *dn.rhs[2:])
    else:
        kernel = _kernel_for_lhs_cotangent(kernel, dn.rhs, groups)
        kernel_spec = (1, 0, *range(2, n + 2))
    pads = []
    for i in range(n):
        size, window = lhs.shape[dn.lhs[2 + i]], rhs.aval.shape[dn.rhs[2 + i]]
        outs = ct.aval.shape[dn.out[2 + i]]
        low = padding[i][0]
        # Input position m (dilated) met output o at tap k when o*stride + k*dilation = m + low: a correlation of
        # the stride-dilated cotangent with the reversed kernel, evaluated every lhs_dilation positions.
        pads.append((dilated_size(window, rhs_dilation[i]) - 1 - low,
                     (size - 1) * lhs_dilation[i] + low - (outs - 1) * window_strides[i]))
    out = conv_general_dilated(
        ct, kernel, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDims(dn.out, kernel_spec, dn.lhs), feature_group_count=groups, precision=precision,
    )
    return S.reshape_like(out, lhs)


def _rhs_cotangent(
    ct: Atom, lhs: Atom, rhs: Aval, *, window_strides: tuple[int, ...], padding: Pairs, lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...], dimension_numbers: ConvDims, feature_group_count: int, batch_group_count: int,
    precision: str | None = None,
) -> Atom:
    dn, groups = dimension_numbers, feature_group_count
    n = len(window_strides)
    x = lhs
    if groups == 1:  # the input's batch axis is contracted (a feature axis) and its features are the batch
        x_spec = (dn.lhs[1], dn.lhs[0], *dn.lhs[2:])
    else:
        x = _lhs_for_rhs_cotangent(lhs, dn.lhs, groups)
        x_spec = tuple(range(n + 2))
    pads = []
    for i in range(n):
        size, window = lhs.aval.shape[dn.lhs[2 + i]], rhs.shape[dn.rhs[2 + i]]
        outs = ct.aval.shape[dn.out[2 + i]]
        low = padding[i][0]
        # Tap k met output o at padded input position o*stride + k*dilation: a correlation of the input with the
        # cotangent spread stride apart, evaluated every dilation positions; the high padding makes it end on k.
        span = (window - 1) * rhs_dilation[i] + (outs - 1) * window_strides[i] + 1
        pads.append((low, span - dilated_size(size, lhs_dilation[i]) - low))
    out = conv_general_dilated(
        x, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
        dimension_numbers=ConvDims(x_spec, (dn.out[1], dn.out[0], *dn.out[2:]), (dn.rhs[1], dn.rhs[0], *dn.rhs[2:])),
        feature_group_count=groups, precision=precision,
    )
    return S.reshape_like(out, rhs)


@conv_general_dilated_p.def_vjp
def _conv_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], **params: Any) -> Any:
    (ct,) = cts
    lhs, rhs = primals
    if isinstance(ct, Zero) or not dtypes.is_float(lhs.aval.dtype):
        return (Zero(lhs.aval), Zero(rhs.aval))
    if not (lhs.aval.size and rhs.aval.size and ct.aval.size):  # nothing flows: empty cotangents are zeros
        return (S.zeros(lhs.aval) if wants[0] else Zero(lhs.aval), S.zeros(rhs.aval) if wants[1] else Zero(rhs.aval))
    ct_lhs = _lhs_cotangent(ct, lhs.aval, rhs, **params) if wants[0] else Zero(lhs.aval)
    ct_rhs = _rhs_cotangent(ct, lhs, rhs.aval, **params) if wants[1] else Zero(rhs.aval)
    return (ct_lhs, ct_rhs)


def _merge(x: Atom, axis: int) -> Atom:
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one (row-major)."""
    shape, dims = x.aval.shape, x.aval.dims
    return S.reshape(x, (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2:]),
                     (*dims[:axis], None, *dims[axis + 2:]))


def _split(x: Atom, axis: int, sizes: tuple[int, ...], names: tuple[DimName, ...]) -> Atom:
    """``x`` with axis ``axis`` split into ``sizes`` (row-major), named ``names``."""
    shape, dims = x.aval.shape, x.aval.dims
    return S.reshape(x, (*shape[:axis], *sizes, *shape[axis + 1:]), (*dims[:axis], *names, *dims[axis + 1:]))


def _swap_adjacent(x: Atom, axis: int) -> Atom:
    perm = list(range(x.aval.ndim))
    perm[axis], perm[axis + 1] = perm[axis + 1], perm[axis]
    return S.transpose(x, perm)


@conv_general_dilated_p.def_batch
def _conv_batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
    lhs, rhs = args
    dl, dr = dims
    dn: ConvDims = params["dimension_numbers"]
    groups: int = params["feature_group_count"]
    if dl is not None and dr is not None:
        # Each example is a feature group of its own: (V, G*Cg) inputs and (V, G*Og) outputs, V*G groups.
        size, mapped = lhs.aval.shape[dl], lhs.aval.dims[dl]
        x = _merge(S.moveaxis(lhs, dl, dn.lhs[1]), dn.lhs[1])
        k = S.moveaxis(rhs, dr, dn.rhs[0])
        features, feature_name = k.aval.shape[dn.rhs[0] + 1], k.aval.dims[dn.rhs[0] + 1]
        out = conv_general_dilated(x, _merge(k, dn.rhs[0]), **{**params, "feature_group_count": size * groups})
        q = dn.out[1]
        return _split(out, q, (size, features), (mapped, feature_name)), q
    if dl is not None:
        # The mapped axis joins the batch axis: (V, B) -> V*B, one convolution, split back.
        size, mapped = lhs.aval.shape[dl], lhs.aval.dims[dl]
        p = dn.lhs[0]
        x = S.moveaxis(lhs, dl, p)
        batch, batch_name = x.aval.shape[p + 1], x.aval.dims[p + 1]
        out = conv_general_dilated(_merge(x, p), rhs, **params)
        q = dn.out[0]
        return _split(out, q, (size, batch), (mapped, batch_name)), q
    assert dr is not None
    # The mapped axis joins the output features: (G, V, Og) so that groups stay contiguous.
    size, mapped = rhs.aval.shape[dr], rhs.aval.dims[dr]
    p = dn.rhs[0]
    k = S.moveaxis(rhs, dr, p)  # (V, O) at p
    features, feature_name = k.aval.shape[p + 1], k.aval.dims[p + 1]
    per_group = features // groups
    if groups > 1:
        k = _split(k, p + 1, (groups, per_group), (None, None))  # (V, G, Og)
        k = _merge(_swap_adjacent(k, p), p + 1)  # (G, V*Og)
    out = conv_general_dilated(lhs, _merge(k, p), **params)
    q = dn.out[1]
    if groups == 1:
        return _split(out, q, (size, features), (mapped, feature_name)), q
    out = _split(out, q, (groups, size, per_group), (None, mapped, None))
    out = _merge(_swap_adjacent(out, q), q + 1)  # (V, G*Og)
    return S.reshape(out, out.aval.shape, (*out.aval.dims[:q + 1], feature_name, *out.aval.dims[q + 2:])), q
