"""Shape rules over mypy types, for ``tensorstage.mypy_plugin``: reading ``Tensor[DT, *dims]`` types and the
broadcasting, matmul, reduction and reshape rules that staging enforces (prelude/numpy), stated on static dims.

A dim is a named ``Dim`` class (size unknown unless ``size=`` is given), a ``Literal[n]``, a type variable, or
``Any``. Two named dims never unify; a named dim against a literal, or anything against ``Any``, is left to
staging ("unknown"), so the plugin reports only what is certainly wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from mypy.maptype import map_instance_to_supertype
from mypy.nodes import IntExpr, UnaryExpr
from mypy.types import (
    AnyType,
    FunctionLike,
    Instance,
    LiteralType,
    TupleType,
    Type,
    TypeOfAny,
    TypeType,
    TypeVarType,
    UnpackType,
    get_proper_type,
)

TENSOR = "tensorstage.tensor.Tensor"
DIM = "tensorstage.dims.Dim"

Dims = list[Type]


class Shaped(NamedTuple):
    """A tensor type split into its dtype and its dims (``dims`` is None when the rank is not known)."""

    dtype: Type
    dims: Dims | None


class ShapeFailure(Exception):
    """A shape rule was broken; the message is reported at the call with code ``shape``."""


# ------------------------------------------------------------------------------------------- reading types


def as_shaped(typ: Type, generic_base: str | None = None) -> Shaped | None:
    """``Tensor[f32, Batch, In]`` (or a subclass, or ``BoundReduction[...]``) as dtype + dims."""
    t = get_proper_type(typ)
    if not isinstance(t, Instance):
        return None
    base = next((b for b in t.type.mro if b.fullname in (TENSOR, generic_base)), None)
    if base is None:
        return None
    mapped = map_instance_to_supertype(t, base) if base is not t.type else t
    if not mapped.args:
        return Shaped(AnyType(TypeOfAny.special_form), None)
    dims: Dims = []
    for arg in mapped.args[1:]:
        p = get_proper_type(arg)
        if isinstance(p, UnpackType):
            inner = get_proper_type(p.type)
            if isinstance(inner, TupleType):
                dims.extend(inner.items)
                continue
            return Shaped(mapped.args[0], None)
        dims.append(arg)
    return Shaped(mapped.args[0], dims)


def fixed_size(dim: Type) -> int | None:
    """The size a dim has whatever the program binds: ``Literal[n]`` or ``class One(Dim, size=1)``."""
    d = get_proper_type(dim)
    if isinstance(d, LiteralType) and isinstance(d.value, int) and not isinstance(d.value, bool):
        return d.value
    if isinstance(d, Instance):
        if d.last_known_value is not None:
            return fixed_size(d.last_known_value)
        for info in d.type.mro:
            size = info.defn.keywords.get("size")
            if isinstance(size, IntExpr):
                return size.value
    return None


def dim_name(dim: Type) -> str:
    """How a dim reads in messages: its class name, its literal size, its type variable, or ``?``."""
    d = get_proper_type(dim)
    if isinstance(d, Instance) and d.last_known_value is None:
        return d.type.name
    size = fixed_size(d)
    if size is not None:
        return str(size)
    if isinstance(d, TypeVarType):
        return d.name
    return "?"


def show(dims: Sequence[Type] | None) -> str:
    if dims is None:
        return "(...)"
    inner = ", ".join(dim_name(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def is_unknown(dim: Type) -> bool:
    return isinstance(get_proper_type(dim), AnyType)


def symbol(dim: Type) -> str | None:
    """An identity for dims of unknown size: a named Dim class or a type variable."""
    d = get_proper_type(dim)
    if fixed_size(d) is not None:
        return None
    if isinstance(d, Instance):
        return d.type.fullname
    if isinstance(d, TypeVarType):
        return f"{d.name}@{d.id}"
    return None


def compare(a: Type, b: Type) -> str:
    """'same', 'differ' or 'unknown' (one side has no static identity, e.g. Any or a named dim vs a literal)."""
    if is_unknown(a) or is_unknown(b):
        return "unknown"
    sa, sb = fixed_size(a), fixed_size(b)
    if sa is not None and sb is not None:
        na, nb = dim_class_name(a), dim_class_name(b)
        if na is not None and nb is not None and na != nb:
            return "differ"  # two named dims never unify, even of one fixed size (as at staging)
        return "same" if sa == sb else "differ"
    ya, yb = symbol(a), symbol(b)
    if ya is not None and yb is not None:
        return "same" if ya == yb else "differ"
    return "unknown"


def dim_class_name(dim: Type) -> str | None:
    d = get_proper_type(dim)
    if isinstance(d, Instance) and d.last_known_value is None and d.type.has_base(DIM):
        return d.type.fullname
    return None


def is_one(dim: Type) -> bool:
    return fixed_size(dim) == 1


def literal_int(typ: Type) -> int | None:
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.last_known_value is not None:
        t = t.last_known_value
    if isinstance(t, LiteralType) and isinstance(t.value, int) and not isinstance(t.value, bool):
        return t.value
    return None


def literal_bool(typ: Type) -> bool | None:
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.last_known_value is not None:
        t = t.last_known_value
    if isinstance(t, LiteralType) and isinstance(t.value, bool):
        return t.value
    return None


def dim_class(typ: Type) -> Instance | None:
    """``Batch`` passed as a value (its type is ``type[Batch]``) as the dim type ``Batch``."""
    t = get_proper_type(typ)
    if isinstance(t, TypeType) and isinstance(t.item, Instance) and t.item.type.has_base(DIM):
        return t.item
    if isinstance(t, FunctionLike) and t.is_type_obj() and t.type_object().has_base(DIM):
        return Instance(t.type_object(), [])
    return None


class Axis(NamedTuple):
    """An ``axis`` argument item: a position or a named dim."""

    position: int | None
    dim: Instance | None


def axis_items(typ: Type, expr: object = None) -> list[Axis] | None:
    """``0`` / ``Batch`` / ``(0, Batch)``; None when the plugin cannot read it statically."""
    t = get_proper_type(typ)
    if isinstance(t, TupleType):
        out: list[Axis] = []
        for item in t.items:
            one = axis_items(item)
            if one is None or len(one) != 1:
                return None
            out.extend(one)
        return out
    cls = dim_class(t)
    if cls is not None:
        return [Axis(None, cls)]
    n = literal_int(t)
    if n is None and isinstance(expr, IntExpr):
        n = expr.value
    if n is None and isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        n = -expr.expr.value
    if n is not None:
        return [Axis(n, None)]
    return None


def resolve_axes(op: str, axes: list[Axis], dims: Dims, shown: str) -> list[int]:
    out: list[int] = []
    for axis in axes:
        if axis.dim is not None:
            matches = [i for i, d in enumerate(dims) if compare(d, axis.dim) == "same"]
            if not matches:
                raise ShapeFailure(f"{op}: axis {axis.dim.type.name} is not a dim of {shown}")
            out.append(matches[0])
        else:
            assert axis.position is not None
            if not -len(dims) <= axis.position < len(dims):
                raise ShapeFailure(f"{op}: axis {axis.position} is out of range for {shown} (rank {len(dims)})")
            out.append(axis.position % len(dims))
    if len(set(out)) != len(out):
        raise ShapeFailure(f"{op}: repeated axis in {shown}")
    return out


# ------------------------------------------------------------------------------------------------- rules


def broadcast(op: str, shapes: Sequence[Dims]) -> Dims:
    """NumPy broadcasting with named dims, minus the (N,) vs (N, 1) -> (N, N) outer product."""
    ranked = [s for s in shapes if s]
    if not ranked:
        return []
    rank = max(len(s) for s in ranked)
    shown = " and ".join(show(s) for s in ranked)
    out: Dims = []
    for k in range(rank, 0, -1):
        present = [s[-k] for s in ranked if len(s) >= k]
        result = present[0]
        for d in present[1:]:
            if is_one(d) and not is_one(result):
                continue
            if is_one(result) and not is_one(d):
                result = d
                continue
            verdict = compare(result, d)
            if verdict == "differ":
                raise ShapeFailure(
                    f"{op}: {shown} do not broadcast: axis -{k} is {dim_name(result)} in one and {dim_name(d)} "
                    "in the other"
                )
            if verdict == "unknown" and is_unknown(result):
                result = d
            elif verdict == "unknown" and symbol(d) is not None:
                result = d
        out.append(result)
    lower = [s for s in ranked if len(s) < rank]
    if lower:
        for s in ranked:
            stretched = [i for i, d in enumerate(s) if len(s) == rank and is_one(d) and not is_one(out[i])]
            if stretched:
                raise ShapeFailure(
                    f"{op}: {shown} would broadcast to {show(out)} by adding leading axes to one operand while "
                    "stretching a size-1 axis of the other (the (N,) vs (N, 1) -> (N, N) trap); add the axis "
                    "explicitly (x[:, None] or x[None, :]) to mean an outer product"
                )
    return out


def matmul(op: str, x: Dims, y: Dims) -> Dims:
    if not x or not y:
        raise ShapeFailure(f"{op}: needs operands of rank >= 1, got {show(x)} and {show(y)}")
    contracted = y[-2] if len(y) >= 2 else y[0]
    if compare(x[-1], contracted) == "differ":
        which = "second-to-last" if len(y) >= 2 else "only"
        raise ShapeFailure(
            f"{op}: contracted dims differ: {dim_name(x[-1])} (last axis of {show(x)}) vs {dim_name(contracted)} "
            f"({which} axis of {show(y)})"
        )
    if len(y) == 1:
        return x[:-1]
    if len(x) == 1:
        return [*y[:-2], y[-1]]
    batch = broadcast(op, [x[:-2], y[:-2]]) if len(x) > 2 and len(y) > 2 else (x[:-2] or y[:-2])
    return [*batch, x[-2], y[-1]]


def reduce(op: str, dims: Dims, axes: list[Axis] | None, keepdims: bool, one: Type) -> Dims:
    if axes is None:
        return [one] * len(dims) if keepdims else []
    gone = resolve_axes(op, axes, dims, show(dims))
    return [one if i in gone else d for i, d in enumerate(dims) if keepdims or i not in gone]


class Monomial(NamedTuple):
    """A product of dims: a constant times named dims of unknown size."""

    constant: int
    symbols: Counter[str]
    unknown: bool  # contains Any or a -1

    @staticmethod
    def of(dims: Sequence[Type | None]) -> Monomial:
        constant, symbols, unknown = 1, Counter[str](), False
        for d in dims:
            if d is None or is_unknown(d):
                unknown = True
                continue
            size = fixed_size(d)
            if size is not None:
                constant *= size
            elif (name := symbol(d)) is not None:
                symbols[name] += 1
            else:
                unknown = True
        return Monomial(constant, symbols, unknown)

    def differs_from(self, other: Monomial) -> bool:
        """Certainly a different number of elements (as far as static types can tell)."""
        if self.unknown or other.unknown:
            return False
        if self.symbols == other.symbols:
            return self.constant != other.constant
        # A side with no symbols of unknown size against one with symbols: a named dim would have to be sized to
        # fit, which is not what a reshape that merges or splits axes looks like.
        return not self.symbols or not other.symbols


def reshape(op: str, old: Dims, new: list[Type | None]) -> None:
    """Sizes must match, and a reshape may only merge adjacent axes or split one (checked by dim identity)."""
    shown = f"{show(old)} -> {show([d if d is not None else AnyType(TypeOfAny.special_form) for d in new])}"
    if Monomial.of(old).differs_from(Monomial.of(new)):
        raise ShapeFailure(f"{op}: {shown} changes the number of elements")
    old_syms = [symbol(d) for d in old]
    new_syms = [symbol(d) if d is not None else None for d in new]
    anchors = [s for s in old_syms if s is not None and old_syms.count(s) == 1 and new_syms.count(s) == 1]
    in_new = sorted(anchors, key=new_syms.index)
    if anchors != in_new:
        first = next(a for a, b in zip(anchors, in_new) if a != b)
        name = first.rsplit(".", 1)[-1]
        raise ShapeFailure(
            f"{op}: {shown} moves {name}: a reshape does not move data between axes; use transpose/moveaxis"
        )
    cuts_old = [0, *[old_syms.index(a) for a in anchors], len(old)]
    cuts_new = [0, *[new_syms.index(a) for a in anchors], len(new)]
    for i in range(len(cuts_old) - 1):
        lo_o, hi_o = cuts_old[i] + (1 if i else 0), cuts_old[i + 1]
        lo_n, hi_n = cuts_new[i] + (1 if i else 0), cuts_new[i + 1]
        seg_old, seg_new = old[lo_o:hi_o], new[lo_n:hi_n]
        if Monomial.of(seg_old).differs_from(Monomial.of(seg_new)):
            where = _between(anchors, i)
            names_new = ", ".join(dim_name(d) for d in seg_new if d is not None)
            names_old = ", ".join(dim_name(d) for d in seg_old)
            if not seg_old:
                change = f"inserts {names_new} {where}, which are adjacent in the operand"
            elif not seg_new:
                change = f"leaves no axis for {names_old} {where}"
            else:
                change = f"turns {names_old} into {names_new} {where}, which do not hold the same elements"
            raise ShapeFailure(
                f"{op}: {shown} {change}: a reshape only merges adjacent axes or splits one axis (move axes with "
                "transpose/moveaxis first)"
            )


def _between(anchors: list[str], i: int) -> str:
    names = [a.rsplit(".", 1)[-1] for a in anchors]
    if not names:
        return ""
    if i == 0:
        return f"before {names[0]}"
    if i == len(names):
        return f"after {names[-1]}"
    return f"between {names[i - 1]} and {names[i]}"
