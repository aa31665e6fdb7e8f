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
    na, nb = dim_class_name(a), dim_class_name(b)
    if na is not None and nb is not None:
        return "same" if na == nb else "differ"  # two named dims never unify, whatever their sizes (as at staging)
    sa, sb = fixed_size(a), fixed_size(b)
    if sa is not None and sb is not None:
        return "same" if sa == sb else "differ"
    ya, yb = symbol(a), symbol(b)
    if ya is not None and yb is not None:
        return "same" if ya == yb else "differ"
    return "unknown"


def identity(dim: Type) -> str | None:
    """What names an axis in a reshape: a Dim class (of fixed size or not) or a type variable."""
    return dim_class_name(dim) or symbol(dim)


def dim_class_name(dim: Type) -> str | None:
    d = get_proper_type(dim)
    if isinstance(d, Instance) and d.last_known_value is None and d.type.has_base(DIM):
        return d.type.fullname
    return None


def unify(a: Type, b: Type) -> Type:
    """Of two dims that may be one (not 'differ'), the one that says more: a name over a literal or Any."""
    if is_unknown(a) or (identity(a) is None and identity(b) is not None):
        return b
    return a


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
        if axis.dim is not None:  # a Dim class names an axis by identity, never by a coincident size
            matches = [i for i, d in enumerate(dims) if dim_class_name(d) == axis.dim.type.fullname]
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
            if verdict == "same" and dim_class_name(result) is None:
                result = d  # Literal[1] against a named size-1 dim: staging keeps the name
                continue
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
        # Different named dims of unknown size (Feat, Seq -> 15 merges two axes when Feat * Seq == 15): staging
        # decides, with the sizes it binds.
        return False


Segment = tuple[range, range]  # operand axes and result axes between two anchors (dims kept by a reshape)


def reshape(op: str, old: Dims, new: list[Type | None]) -> list[Segment]:
    """Sizes must match, and a reshape may only merge adjacent axes or split one (checked by dim identity).
    Returns the segments between the named dims the reshape keeps."""
    shown = f"{show(old)} -> {show([d if d is not None else AnyType(TypeOfAny.special_form) for d in new])}"
    if Monomial.of(old).differs_from(Monomial.of(new)):
        raise ShapeFailure(f"{op}: {shown} changes the number of elements")
    # A size-1 axis holds no data order: it may move anywhere, so it anchors nothing (as at staging).
    old_syms = [identity(d) if not is_one(d) else None for d in old]
    new_syms = [identity(d) if d is not None and not is_one(d) else None for d in new]
    open_sizes = [d for d in new if d is None or (fixed_size(d) is None and identity(d) not in old_syms)]
    if len(open_sizes) > 1:
        raise ShapeFailure(
            f"{op}: {shown} has more than one axis of unknown size (-1, or a Dim class without a fixed size that "
            "is not a dim of the operand)"
        )
    for s in old_syms:
        if s is not None and old_syms.count(s) == 1 and new_syms.count(s) > 1:
            raise ShapeFailure(f"{op}: {shown} names {s.rsplit('.', 1)[-1]} twice: its data lands on one axis only")
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
    segments: list[Segment] = []
    for i in range(len(cuts_old) - 1):
        lo_o, hi_o = cuts_old[i] + (1 if i else 0), cuts_old[i + 1]
        lo_n, hi_n = cuts_new[i] + (1 if i else 0), cuts_new[i + 1]
        segments.append((range(lo_o, hi_o), range(lo_n, hi_n)))
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
    return segments


def carried_names(old: Dims, new: Dims, given: list[bool], segments: list[Segment]) -> Dims:
    """Staging's naming of reshape results: leading and trailing axes of equal sizes keep their dims, and so does
    an axis that is the whole of one operand axis (a one-to-one group of axes of size > 1), unless the call names
    it with a Dim class. Where unknown sizes hide the groups, a literal target's name is not known: it is Any."""
    out = list(new)
    pairs = _equal_ends(old, new)
    for old_axes, new_axes in segments:
        src = [i for i in old_axes if not is_one(old[i])]
        dst = [j for j in new_axes if not is_one(new[j])]
        known = _one_to_one(old, new, src, dst)
        pairs += known
        if any(fixed_size(old[i]) is None for i in src) and len(known) != len(dst):
            for j in dst:
                if not given[j] and identity(new[j]) is None and all(j != k for _, k in pairs):
                    out[j] = AnyType(TypeOfAny.special_form)
    for i, j in pairs:
        if not given[j] and identity(old[i]) is not None:
            out[j] = old[i]
    return out


def _equal_ends(old: Dims, new: Dims) -> list[tuple[int, int]]:
    """Leading and trailing axes of one size in operand and result (sizes known, or one dim on both sides)."""
    def equal(i: int, j: int) -> bool:
        a, b = fixed_size(old[i]), fixed_size(new[j])
        return (a is not None and a == b) or (identity(old[i]) is not None and identity(old[i]) == identity(new[j]))

    pairs: list[tuple[int, int]] = []
    lead = 0
    while lead < min(len(old), len(new)) and equal(lead, lead):
        pairs.append((lead, lead))
        lead += 1
    trail = 1
    while trail <= min(len(old), len(new)) - lead and equal(len(old) - trail, len(new) - trail):
        pairs.append((len(old) - trail, len(new) - trail))
        trail += 1
    return pairs


def _one_to_one(old: Dims, new: Dims, src: list[int], dst: list[int]) -> list[tuple[int, int]]:
    """The groups of staging's reshape that pair one axis of size > 1 with one."""
    groups = _groups(old, new, src, dst)
    if groups is None:
        return list(zip(src, dst)) if len(src) == len(dst) == 1 else []
    return [(o[0], n[0]) for o, n in groups if len(o) == len(n) == 1]


def _groups(old: Dims, new: Dims, src: list[int], dst: list[int]) -> list[tuple[list[int], list[int]]] | None:
    """Staging's reshape groups (smallest runs of axes of size > 1 with equal element counts) where every size is
    known; None where one is not (or the counts do not add up: staging reports that reshape)."""
    old_sizes = [n for i in src if (n := fixed_size(old[i])) is not None]
    new_sizes = [n for j in dst if (n := fixed_size(new[j])) is not None]
    if len(old_sizes) != len(src) or len(new_sizes) != len(dst):
        return None
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) and j < len(dst):
        olds, news = [src[i]], [dst[j]]
        left, right = old_sizes[i], new_sizes[j]
        i, j = i + 1, j + 1
        while left != right:
            if left < right and i < len(src):
                olds.append(src[i])
                left, i = left * old_sizes[i], i + 1
            elif left > right and j < len(dst):
                news.append(dst[j])
                right, j = right * new_sizes[j], j + 1
            else:
                return None
        groups.append((olds, news))
    return groups


def check_groups(op: str, old: Dims, new: Dims, segments: list[Segment]) -> None:
    """Where sizes are known, staging's rule exactly: a group that both merges and splits must not hold a named
    dim (its data would be mixed with its neighbours')."""
    for old_axes, new_axes in segments:
        src = [i for i in old_axes if not is_one(old[i])]
        dst = [j for j in new_axes if not is_one(new[j])]
        for olds, news in _groups(old, new, src, dst) or []:
            named = [dim_name(old[i]) for i in olds if identity(old[i]) is not None]
            if len(olds) > 1 and len(news) > 1 and named:
                raise ShapeFailure(
                    f"{op}: {show(old)} -> {show(new)} mixes {', '.join(named)} with its neighbours: a reshape only "
                    "merges adjacent axes or splits one axis (move axes with transpose/moveaxis first)"
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
