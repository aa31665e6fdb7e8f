"""The mypy plugin's hooks for shape functions: reshape, squeeze, expand_dims, transposes, literal indexing,
concatenate, stack and einsum."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from mypy.nodes import ListExpr, SliceExpr, StrExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import AnyType, Instance, LiteralType, NoneType, TupleType, Type, TypeOfAny, get_proper_type

from .mypy_hook_support import call_name, fully_known, report_shape_error, tensor_type
from .mypy_shapes import (
    Axis,
    Dims,
    Monomial,
    Shaped,
    ShapeFailure,
    axis_items,
    carried_names,
    check_groups,
    compare,
    dim_class,
    dim_class_name,
    dim_name,
    fixed_size,
    is_one,
    is_unknown,
    literal_int,
    reshape,
    resolve_axes,
    show,
    symbol,
    unify,
)


# ---------------------------------------------------------------------------------------- shape functions


class Call(NamedTuple):
    """The parts of a shape-op call the rules need, from a method or function hook alike."""

    op: str
    operand: Shaped
    args: list[tuple[Type, object]]  # (type, expression) of each argument after the tensor
    ctx: MethodContext | FunctionContext


def _method_call(ctx: MethodContext) -> Call | None:
    shaped = fully_known(ctx.type)
    if shaped is None:
        return None
    args: list[tuple[Type, object]] = []
    for types, exprs, kinds in zip(ctx.arg_types, ctx.args, ctx.arg_kinds):
        args.extend(zip(types, exprs))
    return Call(call_name(ctx.context, "op"), shaped, args, ctx)


def _function_call(ctx: FunctionContext) -> Call | None:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return None
    shaped = fully_known(ctx.arg_types[0][0])
    if shaped is None:
        return None
    args: list[tuple[Type, object]] = []
    for types, exprs in zip(ctx.arg_types[1:], ctx.args[1:]):
        args.extend(zip(types, exprs))
    return Call(call_name(ctx.context, "op"), shaped, args, ctx)


def _shape_hook(rule: Callable[[Call], Dims | None], method: bool) -> Callable[..., Type]:
    def hook(ctx: MethodContext | FunctionContext) -> Type:
        call = _method_call(ctx) if method else _function_call(ctx)  # type: ignore[arg-type]
        if call is None:
            return ctx.default_return_type
        try:
            dims = rule(call)
        except ShapeFailure as failure:
            return report_shape_error(ctx.api, failure, ctx.context)
        if dims is None:
            return ctx.default_return_type
        return tensor_type(ctx.api, call.operand.dtype, dims, ctx.default_return_type)

    return hook


def _flatten_items(args: list[tuple[Type, object]]) -> list[tuple[Type, object]]:
    """``f(x, (A, B))`` and ``x.f(A, B)`` alike: a single tuple argument is spread into its items."""
    if len(args) == 1:
        t = get_proper_type(args[0][0])
        if isinstance(t, TupleType):
            exprs = getattr(args[0][1], "items", [None] * len(t.items))
            return list(zip(t.items, exprs))
    return args


def _dim_of_item(typ: Type, expr: object, int_type: Instance) -> Type | None | str:
    """A reshape target item: a Dim class, a literal int (-1 gives None), or 'unknown'."""
    cls = dim_class(typ)
    if cls is not None:
        return cls
    items = axis_items(typ, expr)
    if items is None or items[0].position is None:
        return "unknown"
    n = items[0].position
    if n == -1:
        return None
    return LiteralType(n, int_type)


def _reshape_rule(call: Call) -> Dims | None:
    assert call.operand.dims is not None
    items = _flatten_items(call.args)
    new: list[Type | None] = []
    int_type = call.ctx.api.named_generic_type("builtins.int", [])
    for typ, expr in items:
        d = _dim_of_item(typ, expr, int_type)
        if isinstance(d, str):
            return None
        new.append(d)
    segments = reshape(call.op, call.operand.dims, new)
    any_t = AnyType(TypeOfAny.special_form)
    dims = [d if d is not None else _rest(call.operand.dims, new, int_type) or any_t for d in new]
    given = [dim_class(typ) is not None for typ, _ in items]
    check_groups(call.op, call.operand.dims, dims, segments)
    return carried_names(call.operand.dims, dims, given, segments)


def _rest(old: Dims, new: list[Type | None], int_type: Instance) -> Type | None:
    """The size a ``-1`` stands for, when every size is known."""
    a, b = Monomial.of(old), Monomial.of([d for d in new if d is not None])
    if a.unknown or b.unknown or b.symbols - a.symbols:
        return None
    left = a.symbols - b.symbols
    if a.constant % b.constant:
        return None
    factor = a.constant // b.constant
    if not left and factor:
        return LiteralType(factor, int_type)
    return None  # a named remainder: whether the axis keeps a dim's name is carried_names' call


def _axes_of(items: Sequence[tuple[Type, object]]) -> list[Axis] | None:
    """The axes named by an op's axis arguments, or None when any of them is not known statically."""
    axes: list[Axis] = []
    for typ, expr in items:
        one = axis_items(typ, expr)
        if one is None:
            return None
        axes.extend(one)
    return axes


def _squeeze_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    items = _flatten_items(call.args)
    if not items or isinstance(get_proper_type(items[0][0]), NoneType):
        if any(fixed_size(d) is None for d in dims):
            return None
        return [d for d in dims if not is_one(d)]
    axes = _axes_of(items)
    if axes is None:
        return None
    gone = resolve_axes(call.op, axes, dims, show(dims))
    for i in gone:
        if not is_one(dims[i]) and not is_unknown(dims[i]):
            raise ShapeFailure(f"{call.op}: axis {i} ({dim_name(dims[i])}) of {show(dims)} does not have size 1")
    return [d for i, d in enumerate(dims) if i not in gone]


def _expand_dims_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    positions: list[int] = []
    for typ, expr in _flatten_items(call.args):
        one = axis_items(typ, expr)
        if one is None or one[0].position is None:
            return None
        positions.append(one[0].position)
    rank = len(dims) + len(positions)
    if any(not -rank <= p < rank for p in positions):
        raise ShapeFailure(f"{call.op}: axis out of range for a result of rank {rank} from {show(dims)}")
    if len({p % rank for p in positions}) != len(positions):
        raise ShapeFailure(f"{call.op}: repeated axis for {show(dims)}")
    out: list[Type | None] = list(dims)
    one_t = LiteralType(1, call.ctx.api.named_generic_type("builtins.int", []))
    for p in sorted(p % rank for p in positions):
        out.insert(p, one_t)
    return [d if d is not None else AnyType(TypeOfAny.special_form) for d in out]


def _permutation(call: Call, items: list[tuple[Type, object]]) -> list[int] | None:
    dims = call.operand.dims
    assert dims is not None
    axes = _axes_of(items)
    if axes is None:
        return None
    perm = resolve_axes(call.op, axes, dims, show(dims))
    if len(perm) != len(dims):
        raise ShapeFailure(f"{call.op}: {len(perm)} axes given for {show(dims)}, which has rank {len(dims)}")
    return perm


def _transpose_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    items = _flatten_items(call.args)
    if not call.args or (items and isinstance(get_proper_type(items[0][0]), NoneType)):
        return list(reversed(dims))  # no axes (an explicit empty tuple is a permutation of rank 0 only)
    perm = _permutation(call, items)
    return None if perm is None else [dims[p] for p in perm]


def _swapaxes_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    axes = _axes_of(call.args)
    if axes is None:
        return None
    if len(axes) != 2:
        return None
    # each axis on its own: swapaxes(0, -1) of a rank-1 tensor swaps an axis with itself, as in NumPy
    (a,) = resolve_axes(call.op, axes[:1], dims, show(dims))
    (b,) = resolve_axes(call.op, axes[1:], dims, show(dims))
    out = list(dims)
    out[a], out[b] = out[b], out[a]
    return out


def _moveaxis_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    if len(call.args) != 2:
        return None
    src = axis_items(*call.args[0])
    dst = axis_items(*call.args[1])
    if src is None or dst is None:
        return None
    (s,) = resolve_axes(call.op, src, dims, show(dims))
    (d,) = resolve_axes(call.op, dst, dims, show(dims))
    out = list(dims)
    moved = out.pop(s)
    out.insert(d, moved)
    return out


def _getitem_rule(call: Call) -> Dims | None:
    """Literal indexing: ints drop an axis, ``None`` adds a size-1 axis, ``:`` keeps one, ``...`` fills."""
    dims = call.operand.dims
    assert dims is not None
    if not call.args:
        return None
    typ, expr = call.args[0]
    t = get_proper_type(typ)
    if isinstance(t, TupleType):
        parts = list(zip(t.items, getattr(expr, "items", [None] * len(t.items))))
    else:
        parts = [(typ, expr)]
    kinds: list[str] = []
    for pt, pe in parts:
        p = get_proper_type(pt)
        if isinstance(p, NoneType):
            kinds.append("new")
        elif isinstance(p, Instance) and p.type.fullname == "builtins.slice":
            kinds.append("slice")
        elif isinstance(p, Instance) and p.type.fullname in ("builtins.ellipsis", "types.EllipsisType"):
            kinds.append("ellipsis")
        elif (isinstance(p, Instance) and p.type.fullname == "builtins.int") or literal_int(p) is not None:
            kinds.append("int")
        else:
            return None
    used = sum(k in ("slice", "int") for k in kinds)
    if used > len(dims):
        raise ShapeFailure(f"{call.op}: too many indices ({used}) for {show(dims)}")
    if kinds.count("ellipsis") > 1:
        raise ShapeFailure(f"{call.op}: more than one ... in an index")
    if "ellipsis" not in kinds:
        kinds.append("ellipsis")
    out: Dims = []
    axis = 0
    one = LiteralType(1, call.ctx.api.named_generic_type("builtins.int", []))
    for (pt, pe), kind in zip(parts + [(NoneType(), None)], kinds):
        if kind == "new":
            out.append(one)
        elif kind == "int":
            axis += 1
        elif kind == "slice":
            out.append(dims[axis] if _full_slice(pe) else AnyType(TypeOfAny.special_form))
            axis += 1
        else:
            rest = len(dims) - used
            out.extend(dims[axis:axis + rest])
            axis += rest
    return out


def _full_slice(expr: object) -> bool:
    return isinstance(expr, SliceExpr) and expr.begin_index is None and expr.end_index is None and expr.stride is None


# --------------------------------------------------------------------------------- concatenate, stack, einsum


def _tensor_items(ctx: FunctionContext) -> list[Shaped] | None:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return None
    t = get_proper_type(ctx.arg_types[0][0])
    expr = ctx.args[0][0]
    if isinstance(t, TupleType):
        items = t.items
    elif isinstance(expr, ListExpr):  # a list literal's type is joined; its items still have their own
        items = [ctx.api.get_expression_type(e) for e in expr.items]
    else:
        return None
    shaped = [fully_known(item) for item in items]
    if any(s is None for s in shaped):
        return None
    return [s for s in shaped if s is not None]


def _axis_arg(ctx: FunctionContext, default: int) -> list[Axis] | None:
    if len(ctx.arg_types) < 2 or not ctx.arg_types[1]:
        return [Axis(default, None)]
    return axis_items(ctx.arg_types[1][0], ctx.args[1][0])


def _concatenate(ctx: FunctionContext) -> Type:
    parts = _tensor_items(ctx)
    axes = _axis_arg(ctx, 0)
    if not parts or axes is None or len(axes) != 1:
        return ctx.default_return_type
    op = call_name(ctx.context, "concatenate")
    first = parts[0].dims
    assert first is not None
    shown = " and ".join(show(p.dims) for p in parts)
    try:
        if any(p.dims is None or len(p.dims) != len(first) for p in parts):
            raise ShapeFailure(f"{op}: operands {shown} have different ranks")
        (axis,) = resolve_axes(op, axes, first, show(first))
        dims = list(first)
        for p in parts[1:]:
            assert p.dims is not None
            for i, (a, b) in enumerate(zip(first, p.dims)):
                if i != axis and compare(a, b) == "differ":
                    raise ShapeFailure(
                        f"{op}: {shown} differ off the joined axis {axis}: {dim_name(a)} vs {dim_name(b)}"
                    )
            dims = [unify(a, b) for a, b in zip(dims, p.dims)]
        sizes = [fixed_size(p.dims[axis]) for p in parts if p.dims is not None]
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    joined: Type = AnyType(TypeOfAny.special_form)
    if all(s is not None for s in sizes):
        joined = LiteralType(sum(s for s in sizes if s is not None), ctx.api.named_generic_type("builtins.int", []))
    dims[axis] = joined
    return tensor_type(ctx.api, parts[0].dtype, dims, ctx.default_return_type)


def _stack(ctx: FunctionContext) -> Type:
    parts = _tensor_items(ctx)
    axes = _axis_arg(ctx, 0)
    if not parts or axes is None or len(axes) != 1 or axes[0].position is None:
        return ctx.default_return_type
    op = call_name(ctx.context, "stack")
    first = parts[0].dims
    assert first is not None
    rank = len(first) + 1
    dims = list(first)
    try:
        for p in parts[1:]:
            assert p.dims is not None
            if len(p.dims) != len(first) or any(compare(a, b) == "differ" for a, b in zip(first, p.dims)):
                raise ShapeFailure(f"{op}: operands {' and '.join(show(q.dims) for q in parts)} differ")
            dims = [unify(a, b) for a, b in zip(dims, p.dims)]
        if not -rank <= axes[0].position < rank:
            raise ShapeFailure(f"{op}: axis {axes[0].position} is out of range for a result of rank {rank}")
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    position = axes[0].position % rank
    dims.insert(position, LiteralType(len(parts), ctx.api.named_generic_type("builtins.int", [])))
    return tensor_type(ctx.api, parts[0].dtype, dims, ctx.default_return_type)


def _einsum(ctx: FunctionContext) -> Type:
    """``einsum("bi,io->bo", x, w)``: letters bind dims; a letter bound to two different dims is an error."""
    if not ctx.args or not ctx.args[0] or not isinstance(ctx.args[0][0], StrExpr):
        return ctx.default_return_type
    spec = ctx.args[0][0].value.replace(" ", "")
    operands = [t for types in ctx.arg_types[1:] for t in types]
    shaped = [fully_known(t) for t in operands]
    if "..." in spec or "->" not in spec or any(s is None for s in shaped) or not operands:
        return ctx.default_return_type
    inputs, output = spec.split("->")
    terms = inputs.split(",")
    try:
        if len(terms) != len(shaped):
            raise ShapeFailure(f"einsum: {spec!r} has {len(terms)} inputs but {len(shaped)} operands are given")
        bound: dict[str, Type] = {}
        for term, s in zip(terms, shaped):
            assert s is not None and s.dims is not None
            if len(term) != len(s.dims):
                raise ShapeFailure(f"einsum: term {term!r} of {spec!r} has {len(term)} letters for {show(s.dims)}")
            for letter, d in zip(term, s.dims):
                seen = bound.setdefault(letter, d)
                if _einsum_stretches(seen, d):
                    bound[letter] = seen if is_one(d) else d  # NumPy's einsum stretches a size-1 axis
                elif compare(seen, d) == "differ":
                    raise ShapeFailure(
                        f"einsum: {letter!r} in {spec!r} is {dim_name(seen)} in one operand and {dim_name(d)} in "
                        f"{show(s.dims)}"
                    )
                else:
                    bound[letter] = unify(seen, d)  # staging names the letter's axis by whichever use has a name
        missing = [c for c in output if c not in bound]
        if missing:
            raise ShapeFailure(f"einsum: output letters {''.join(missing)!r} of {spec!r} appear in no input")
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    first = shaped[0]
    assert first is not None
    return tensor_type(ctx.api, first.dtype, [bound[c] for c in output], ctx.default_return_type)


def _einsum_stretches(a: Type, b: Type) -> bool:
    """A size-1 axis meets another size under one letter: fine unless both are named dims (names never unify)."""
    named = dim_class_name(a) is not None and dim_class_name(b) is not None
    return not named and is_one(a) != is_one(b)


SHAPE_METHODS: dict[str, Callable[[MethodContext], Type]] = {
    "reshape": _shape_hook(_reshape_rule, method=True),
    "squeeze": _shape_hook(_squeeze_rule, method=True),
    "swapaxes": _shape_hook(_swapaxes_rule, method=True),
    "transpose": _shape_hook(_transpose_rule, method=True),
    "__getitem__": _shape_hook(_getitem_rule, method=True),
}

SHAPE_FUNCTIONS: dict[str, Callable[[FunctionContext], Type]] = {
    "reshape": _shape_hook(_reshape_rule, method=False),
    "squeeze": _shape_hook(_squeeze_rule, method=False),
    "expand_dims": _shape_hook(_expand_dims_rule, method=False),
    "swapaxes": _shape_hook(_swapaxes_rule, method=False),
    "transpose": _shape_hook(_transpose_rule, method=False),
    "moveaxis": _shape_hook(_moveaxis_rule, method=False),
    "concatenate": _concatenate,
    "stack": _stack,
    "einsum": _einsum,
}
