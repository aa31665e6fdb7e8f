"""mypy plugin: shape arithmetic that plain typing cannot express.

Enable it with ``plugins = tensorstage.mypy_plugin`` in the ``[tool.mypy]`` table (or ``mypy.ini``). Where every
operand's shape is spelled out (no ``*S`` variadic part), the plugin replaces the strict overloads of
broadcasting, matmul and reductions with the exact rule and computes result shapes for reshape, squeeze,
expand_dims, moveaxis, transpose/permutations, literal slicing, concatenate/stack and einsum. Mistakes are
reported with error code ``shape`` and a message naming the op and both shapes with dim names, e.g.

    error: add: (Batch, In) and (Batch, Out) do not broadcast: axis -1 is In in one and Out in the other  [shape]

In generic code (``Tensor[DT, *S, K]``) the strict overloads stay in charge. The rules are the ones staging
enforces (``prelude/numpy``), so a program the plugin accepts does not fail at ``stage()`` for those reasons.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from mypy.errorcodes import ErrorCode
from mypy.nodes import CallExpr, Context, IndexExpr, ListExpr, MemberExpr, NameExpr, SliceExpr, StrExpr, TypeInfo
from mypy.plugin import (
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import AnyType, CallableType, FunctionLike, Instance, LiteralType, NoneType, TupleType, Type
from mypy.types import TypeOfAny, TypeType, UnpackType, get_proper_type

from . import mypy_shapes
from .mypy_shapes import (
    TENSOR,
    Axis,
    Dims,
    Monomial,
    Shaped,
    ShapeFailure,
    as_shaped,
    axis_items,
    broadcast,
    compare,
    dim_class,
    dim_name,
    literal_int,
    fixed_size,
    is_one,
    is_unknown,
    literal_bool,
    matmul,
    reduce,
    reshape,
    resolve_axes,
    show,
    symbol,
)

_RULES_VERSION = hashlib.sha256(Path(mypy_shapes.__file__).read_bytes()).hexdigest()
SHAPE = ErrorCode("shape", "Tensor shapes do not fit the operation", "tensorstage")

SHAPE_TYPING = "tensorstage.shape_typing"
OP_SIGNATURES = "tensorstage.op_signatures"
PRELUDE = "tensorstage.prelude.numpy."

# ------------------------------------------------------------------------------------------------ the plugin

OP_NAMES = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "mod", "pow": "power", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
BINARY_METHODS = {f"__{n}__": n for n in OP_NAMES} | {f"__r{n}__": n for n in OP_NAMES}
COMPARISON_METHODS = {"__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal"}


class TensorstagePlugin(Plugin):
    def report_config_data(self, ctx: ReportConfigContext) -> str:
        """mypy re-checks a cached module when this changes; it only hashes this file itself, not the rules."""
        return _RULES_VERSION

    # ----------------------------------------------------------------------------------- hook selection
    def _is_tensor_method(self, fullname: str) -> str | None:
        """mypy names an inherited method after the receiver's class (``Array.__add__``): check the hierarchy."""
        cls, _, method = fullname.rpartition(".")
        sym = self.lookup_fully_qualified(cls)
        if sym is None or not isinstance(sym.node, TypeInfo) or not sym.node.has_base(TENSOR):
            return None
        return method

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        if fullname in _PROTOCOL_CALLS:
            return _guard(_elementwise_signature, lambda ctx: ctx.default_signature)
        if fullname.startswith(f"{SHAPE_TYPING}.") and fullname.endswith("Reduction.__call__"):
            return _guard(_reduction_signature, lambda ctx: ctx.default_signature)
        method = self._is_tensor_method(fullname)
        if method in BINARY_METHODS or method in COMPARISON_METHODS or method == "__matmul__":
            return _guard(_elementwise_signature, lambda ctx: ctx.default_signature)
        return None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        hook: Callable[[MethodContext], Type] | None = _PROTOCOL_CALLS.get(fullname)
        if hook is None and fullname.startswith(f"{SHAPE_TYPING}.") and fullname.endswith("Reduction.__call__"):
            hook = _bound_reduction if fullname.startswith(f"{SHAPE_TYPING}.Bound") else _reduction_function
        if hook is None:
            method = self._is_tensor_method(fullname) or ""
            if method in BINARY_METHODS or method in COMPARISON_METHODS:
                hook = _elementwise_method
            elif method == "__matmul__":
                hook = _matmul_method
            else:
                hook = _SHAPE_METHODS.get(method)
        return _guard(hook, lambda ctx: ctx.default_return_type) if hook is not None else None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        hook = _SHAPE_FUNCTIONS.get(fullname.rsplit(".", 1)[-1]) if fullname.startswith(PRELUDE) else None
        return _guard(hook, lambda ctx: ctx.default_return_type) if hook is not None else None


C = TypeVar("C")
R = TypeVar("R")


def _guard(hook: Callable[[C], R], fallback: Callable[[C], R]) -> Callable[[C], R]:
    """A rule that meets a call it does not understand (wrong arity, odd types) must not crash mypy: it falls
    back to what the typed signatures say (mypy reports the call's own errors)."""

    def guarded(ctx: C) -> R:
        try:
            return hook(ctx)
        except (AssertionError, IndexError, KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError):
            return fallback(ctx)

    return guarded


def plugin(version: str) -> type[Plugin]:
    return TensorstagePlugin


# ------------------------------------------------------------------------------------------- shared helpers


def _op_name(context: Context, fallback: str) -> str:
    """The name the user wrote (``tnp.mean``, ``x.sum``, ``x[...]``), for messages."""
    if isinstance(context, CallExpr):
        callee = context.callee
        if isinstance(callee, (NameExpr, MemberExpr)):
            return callee.name
    if isinstance(context, IndexExpr):
        return "index"
    return fallback


def _report(api: object, failure: ShapeFailure, context: Context, dtype: Type | None = None) -> Type:
    """Report at the call; the call then has an open shape (so one mistake gives one error, not a cascade)."""
    api.fail(str(failure), context, code=SHAPE)  # type: ignore[attr-defined]
    dtype = dtype if dtype is not None else AnyType(TypeOfAny.from_error)
    open_shape = _named(api, "builtins.tuple", [AnyType(TypeOfAny.from_error)])
    if open_shape is None:
        return AnyType(TypeOfAny.from_error)
    return _named(api, TENSOR, [dtype, UnpackType(open_shape)]) or AnyType(TypeOfAny.from_error)


def _named(api: object, fullname: str, args: list[Type] | None = None) -> Instance | None:
    """An instance of a class by full name (through the module table: the user file need not import it)."""
    module, _, name = fullname.rpartition(".")
    table = getattr(api, "modules", {}).get(module)
    sym = table.names.get(name) if table is not None else None
    if sym is None or not isinstance(sym.node, TypeInfo):
        return None
    return Instance(sym.node, args or [])


def _result(api: object, dtype: Type, dims: Dims, fallback: Type) -> Type:
    """``Tensor[dtype, *dims]``."""
    return _named(api, TENSOR, [dtype, *dims]) or fallback


def _arg_type(ctx: MethodSigContext | FunctionSigContext, index: int) -> Type | None:
    if index >= len(ctx.args) or len(ctx.args[index]) != 1:
        return None
    return ctx.api.get_expression_type(ctx.args[index][0])


def _known(typ: Type | None) -> Shaped | None:
    """A tensor operand whose every dim is spelled out (not a ``*S`` variadic)."""
    if typ is None:
        return None
    shaped = as_shaped(typ)
    return shaped if shaped is not None and shaped.dims is not None else None


def _scalar_or_known(typ: Type | None) -> bool:
    if typ is None:
        return False
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.type.fullname in ("builtins.int", "builtins.float", "builtins.bool"):
        return True
    return _known(typ) is not None


def _same_dtype(shapes: Sequence[Shaped]) -> bool:
    dtypes = [get_proper_type(s.dtype) for s in shapes]
    names = {d.type.fullname for d in dtypes if isinstance(d, Instance)}
    return len(names) <= 1 and all(isinstance(d, Instance) for d in dtypes)


def _permissive(sig: CallableType, api: object, keep: int = 0) -> CallableType:
    """The same signature accepting any argument after the first ``keep`` (the method hook then applies the exact
    rule). ``object``, not Any: an Any type context would make mypy infer nested generic calls as Any."""
    accept_all: Type = _named(api, "builtins.object") or AnyType(TypeOfAny.special_form)
    types = [t if i < keep else accept_all for i, t in enumerate(sig.arg_types)]
    return sig.copy_modified(
        arg_types=types, ret_type=AnyType(TypeOfAny.special_form), variables=sig.variables if keep else []
    )


# --------------------------------------------------------------------------------- elementwise and matmul


def _elementwise_signature(ctx: MethodSigContext) -> FunctionLike:
    """Swap strict overloads for the exact rule when every tensor operand has a fully known shape and all
    operands share one dtype (dtype mismatches stay with mypy's own overload errors)."""
    operands: list[Type | None] = []
    receiver = as_shaped(ctx.type)
    if receiver is not None:
        operands.append(ctx.type)
    operands += [_arg_type(ctx, i) for i in range(len(ctx.args))]
    if not operands or not all(_scalar_or_known(t) for t in operands):
        return ctx.default_signature
    typ = get_proper_type(ctx.type)
    if isinstance(typ, Instance) and typ.type.name == "Where":
        operands = operands[1:]  # the bool condition has its own dtype
    tensors = [s for t in operands if t is not None and (s := _known(t)) is not None]
    if not tensors or not _same_dtype(tensors):
        return ctx.default_signature
    return _permissive(ctx.default_signature, ctx.api)


def _bool_type(ctx: MethodContext) -> Type:
    return _named(ctx.api, "tensorstage.dtypes.bool_") or AnyType(TypeOfAny.special_form)


def _elementwise(ctx: MethodContext, operands: list[Type], op: str, comparison: bool) -> Type:
    tensors = [s for t in operands if (s := _known(t)) is not None]
    if len(tensors) != len([t for t in operands if as_shaped(t) is not None]) or not tensors:
        return ctx.default_return_type
    try:
        dims = broadcast(op, [s.dims for s in tensors if s.dims is not None])
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    dtype = _bool_type(ctx) if comparison else tensors[0].dtype
    return _result(ctx.api, dtype, dims, ctx.default_return_type)


def _method_name(ctx: MethodContext) -> str:
    ctx_callee = ctx.context
    if isinstance(ctx_callee, CallExpr) and isinstance(ctx_callee.callee, MemberExpr):
        return ctx_callee.callee.name
    return getattr(ctx.context, "op", "")


_OPERATOR_METHODS = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
    "&": "and", "|": "or", "^": "xor", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "@": "matmul",
}


def _operator(ctx: MethodContext) -> tuple[str, bool]:
    """The op name for messages, and whether the operands arrived swapped (a reflected method)."""
    symbol_ = getattr(ctx.context, "op", None)
    if isinstance(symbol_, str) and symbol_ in _OPERATOR_METHODS:
        short = _OPERATOR_METHODS[symbol_]
        name = OP_NAMES.get(short) or COMPARISON_METHODS.get(f"__{short}__", short)
        left = as_shaped(ctx.type)
        right_expr = getattr(ctx.context, "right", None)
        swapped = False
        if right_expr is not None and ctx.args and ctx.args[0] and ctx.args[0][0] is not right_expr:
            swapped = True
        return name, swapped and left is not None
    return _method_name(ctx), False


def _elementwise_method(ctx: MethodContext) -> Type:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return ctx.default_return_type
    name, swapped = _operator(ctx)
    operands = [ctx.type, ctx.arg_types[0][0]]
    if swapped:
        operands.reverse()
    comparison = name in COMPARISON_METHODS.values()
    return _elementwise(ctx, operands, name, comparison)


def _elementwise_function(ctx: MethodContext) -> Type:
    operands = [ts[0] for ts in ctx.arg_types if len(ts) == 1]
    typ = get_proper_type(ctx.type)
    comparison = isinstance(typ, Instance) and typ.type.name == "Comparison"
    return _elementwise(ctx, operands, _op_name(ctx.context, "elementwise"), comparison)


def _where_function(ctx: MethodContext) -> Type:
    operands = [ts[0] for ts in ctx.arg_types if len(ts) == 1]
    if len(operands) != 3:
        return ctx.default_return_type
    shaped = [_known(t) for t in operands]
    if any(s is None and as_shaped(t) is not None for s, t in zip(shaped, operands)):
        return ctx.default_return_type
    try:
        dims = broadcast("where", [s.dims for s in shaped if s is not None and s.dims is not None])
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    branch = next((s for s in shaped[1:] if s is not None), None)
    if branch is None:
        return ctx.default_return_type
    return _result(ctx.api, branch.dtype, dims, ctx.default_return_type)


def _matmul(ctx: MethodContext, x_t: Type, y_t: Type, op: str) -> Type:
    x, y = _known(x_t), _known(y_t)
    if x is None or y is None or x.dims is None or y.dims is None:
        return ctx.default_return_type
    try:
        dims = matmul(op, x.dims, y.dims)
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    return _result(ctx.api, x.dtype, dims, ctx.default_return_type)


def _matmul_method(ctx: MethodContext) -> Type:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return ctx.default_return_type
    return _matmul(ctx, ctx.type, ctx.arg_types[0][0], "matmul")


def _matmul_function(ctx: MethodContext) -> Type:
    operands = [ts[0] for ts in ctx.arg_types if len(ts) == 1]
    if len(operands) != 2:
        return ctx.default_return_type
    return _matmul(ctx, operands[0], operands[1], _op_name(ctx.context, "matmul"))


# ------------------------------------------------------------------------------------------------ reductions


def _reduction_signature(ctx: MethodSigContext) -> FunctionLike:
    """Accept any axis argument; ``_bound_reduction`` / ``_reduction_function`` check it exactly."""
    typ = get_proper_type(ctx.type)
    bound = isinstance(typ, Instance) and typ.type.name.startswith("Bound")
    operand = ctx.type if bound else _arg_type(ctx, 0)
    if operand is None:
        return ctx.default_signature
    shaped = as_shaped(operand, generic_base=typ.type.fullname if bound and isinstance(typ, Instance) else None)
    if shaped is None or shaped.dims is None:
        return ctx.default_signature
    axis_index = 0 if bound else 1
    axis_type = _arg_type(ctx, axis_index)
    if axis_type is not None and axis_items(axis_type, ctx.args[axis_index][0]) is None:
        if not isinstance(get_proper_type(axis_type), NoneType):
            return ctx.default_signature
    return _permissive(ctx.default_signature, ctx.api, keep=0 if bound else 1)


def _reduce_result(ctx: MethodContext, shaped: Shaped, axis_pos: int, keep_pos: int | None) -> Type:
    if shaped.dims is None:
        return ctx.default_return_type
    axes: list[Axis] | None = None
    if axis_pos < len(ctx.arg_types) and ctx.arg_types[axis_pos]:
        axis_type = ctx.arg_types[axis_pos][0]
        if not isinstance(get_proper_type(axis_type), NoneType):
            axes = axis_items(axis_type, ctx.args[axis_pos][0])
            if axes is None:
                return ctx.default_return_type
    keepdims = False
    if keep_pos is not None and keep_pos < len(ctx.arg_types) and ctx.arg_types[keep_pos]:
        flag = literal_bool(ctx.arg_types[keep_pos][0])
        if flag is None:
            return ctx.default_return_type
        keepdims = flag
    op = _op_name(ctx.context, "reduce")
    one = LiteralType(1, ctx.api.named_generic_type("builtins.int", []))
    try:
        dims = reduce(op, shaped.dims, axes, keepdims, one)
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    dtype = shaped.dtype
    ret = get_proper_type(ctx.default_return_type)
    callee = str(get_proper_type(ctx.type))
    if "dtype" in ctx.callee_arg_names and ctx.arg_types[ctx.callee_arg_names.index("dtype")]:
        given = _dtype_argument(ctx.arg_types[ctx.callee_arg_names.index("dtype")][0])
        if given is None:
            return ctx.default_return_type
        dtype = given
    elif "Arg" in callee:
        dtype = _named(ctx.api, "tensorstage.dtypes.i32") or dtype
    elif "Accumulating" in callee:
        dtype = _accumulator(ctx.api, dtype)
    elif isinstance(ret, Instance) and ret.args:
        dtype = ret.args[0] if not isinstance(get_proper_type(ret.args[0]), AnyType) else dtype
    return _result(ctx.api, dtype, dims, ctx.default_return_type)


def _dtype_argument(typ: Type) -> Type | None:
    """The dtype a ``dtype=`` argument names (``ts.f32`` is the class object), or None if not a dtype class."""
    proper = get_proper_type(typ)
    if isinstance(proper, TypeType):
        return proper.item
    if isinstance(proper, CallableType) and proper.is_type_obj():
        return proper.ret_type
    return None


_ACCUMULATORS = {f"tensorstage.dtypes.{narrow}": f"tensorstage.dtypes.{wide}"
                 for narrow, wide in (("bool_", "i32"), ("i8", "i32"), ("i16", "i32"), ("u8", "u32"))}


def _accumulator(api: object, dtype: Type) -> Type:
    """``tnp.sum``/``tnp.prod`` accumulate bool, i8 and i16 in i32 and u8 in u32 (shape_typing.NarrowSigned)."""
    proper = get_proper_type(dtype)
    wide = _ACCUMULATORS.get(proper.type.fullname) if isinstance(proper, Instance) else None
    return (_named(api, wide) if wide is not None else None) or dtype


def _bound_reduction(ctx: MethodContext) -> Type:
    typ = get_proper_type(ctx.type)
    if not isinstance(typ, Instance):
        return ctx.default_return_type
    shaped = as_shaped(typ, generic_base=typ.type.fullname)
    if shaped is None:
        return ctx.default_return_type
    keep = 1 if len(ctx.arg_types) > 1 else None
    return _reduce_result(ctx, shaped, 0, keep)


def _reduction_function(ctx: MethodContext) -> Type:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return ctx.default_return_type
    shaped = _known(ctx.arg_types[0][0])
    if shaped is None:
        return ctx.default_return_type
    keep = 2 if len(ctx.arg_types) > 2 else None
    return _reduce_result(ctx, shaped, 1, keep)


# ---------------------------------------------------------------------------------------- shape functions


class Call(NamedTuple):
    """The parts of a shape-op call the rules need, from a method or function hook alike."""

    op: str
    operand: Shaped
    args: list[tuple[Type, object]]  # (type, expression) of each argument after the tensor
    ctx: MethodContext | FunctionContext


def _method_call(ctx: MethodContext) -> Call | None:
    shaped = _known(ctx.type)
    if shaped is None:
        return None
    args: list[tuple[Type, object]] = []
    for types, exprs, kinds in zip(ctx.arg_types, ctx.args, ctx.arg_kinds):
        args.extend(zip(types, exprs))
    return Call(_op_name(ctx.context, "op"), shaped, args, ctx)


def _function_call(ctx: FunctionContext) -> Call | None:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return None
    shaped = _known(ctx.arg_types[0][0])
    if shaped is None:
        return None
    args: list[tuple[Type, object]] = []
    for types, exprs in zip(ctx.arg_types[1:], ctx.args[1:]):
        args.extend(zip(types, exprs))
    return Call(_op_name(ctx.context, "op"), shaped, args, ctx)


def _shape_hook(rule: Callable[[Call], Dims | None], method: bool) -> Callable[..., Type]:
    def hook(ctx: MethodContext | FunctionContext) -> Type:
        call = _method_call(ctx) if method else _function_call(ctx)  # type: ignore[arg-type]
        if call is None:
            return ctx.default_return_type
        try:
            dims = rule(call)
        except ShapeFailure as failure:
            return _report(ctx.api, failure, ctx.context)
        if dims is None:
            return ctx.default_return_type
        return _result(ctx.api, call.operand.dtype, dims, ctx.default_return_type)

    return hook


def _flatten_items(args: list[tuple[Type, object]]) -> list[tuple[Type, object]]:
    """``f(x, (A, B))`` and ``x.f(A, B)`` alike: a single tuple argument is spread into its items."""
    if len(args) == 1:
        t = get_proper_type(args[0][0])
        if isinstance(t, TupleType):
            exprs = getattr(args[0][1], "items", [None] * len(t.items))
            return list(zip(t.items, exprs))
    return args


def _dim_of_item(typ: Type, expr: object) -> Type | None | str:
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
    return LiteralType(n, _int_type(typ))


def _int_type(typ: Type) -> Instance:
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.type.fullname == "builtins.int":
        return t.copy_modified(last_known_value=None)
    if isinstance(t, LiteralType):
        return t.fallback
    raise ShapeFailure("internal: not an int")


def _reshape_rule(call: Call) -> Dims | None:
    assert call.operand.dims is not None
    items = _flatten_items(call.args)
    new: list[Type | None] = []
    for typ, expr in items:
        d = _dim_of_item(typ, expr)
        if isinstance(d, str):
            return None
        new.append(d)
    reshape(call.op, call.operand.dims, new)
    any_t = AnyType(TypeOfAny.special_form)
    return [d if d is not None else _rest(call.operand.dims, new) or any_t for d in new]


def _rest(old: Dims, new: list[Type | None]) -> Type | None:
    """The dim a ``-1`` stands for, when it is a single named dim or a constant."""
    a, b = Monomial.of(old), Monomial.of([d for d in new if d is not None])
    if a.unknown or b.unknown or b.symbols - a.symbols:
        return None
    left = a.symbols - b.symbols
    if a.constant % b.constant:
        return None
    factor = a.constant // b.constant
    if not left and factor:
        return None  # a plain number; leave the dim open (its Literal type would need an int instance)
    if sum(left.values()) == 1 and factor == 1:
        name = next(iter(left))
        return next(d for d in old if symbol(d) == name)
    return None


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
    one_t = LiteralType(1, _int_type(call.args[0][0])) if call.args else None
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
    if not items or isinstance(get_proper_type(items[0][0]), NoneType):
        return list(reversed(dims))
    perm = _permutation(call, items)
    return None if perm is None else [dims[p] for p in perm]


def _swapaxes_rule(call: Call) -> Dims | None:
    dims = call.operand.dims
    assert dims is not None
    axes = _axes_of(call.args)
    if axes is None:
        return None
    a, b = resolve_axes(call.op, axes, dims, show(dims)) if axes[0] != axes[1] else (0, 0)
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
    shaped = [_known(item) for item in items]
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
    op = _op_name(ctx.context, "concatenate")
    first = parts[0].dims
    assert first is not None
    shown = " and ".join(show(p.dims) for p in parts)
    try:
        if any(p.dims is None or len(p.dims) != len(first) for p in parts):
            raise ShapeFailure(f"{op}: operands {shown} have different ranks")
        (axis,) = resolve_axes(op, axes, first, show(first))
        for p in parts[1:]:
            assert p.dims is not None
            for i, (a, b) in enumerate(zip(first, p.dims)):
                if i != axis and compare(a, b) == "differ":
                    raise ShapeFailure(
                        f"{op}: {shown} differ off the joined axis {axis}: {dim_name(a)} vs {dim_name(b)}"
                    )
        sizes = [fixed_size(p.dims[axis]) for p in parts if p.dims is not None]
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    joined: Type = AnyType(TypeOfAny.special_form)
    if all(s is not None for s in sizes):
        joined = LiteralType(sum(s for s in sizes if s is not None), ctx.api.named_generic_type("builtins.int", []))
    dims = list(first)
    dims[axis] = joined
    return _result(ctx.api, parts[0].dtype, dims, ctx.default_return_type)


def _stack(ctx: FunctionContext) -> Type:
    parts = _tensor_items(ctx)
    axes = _axis_arg(ctx, 0)
    if not parts or axes is None or len(axes) != 1 or axes[0].position is None:
        return ctx.default_return_type
    op = _op_name(ctx.context, "stack")
    first = parts[0].dims
    assert first is not None
    try:
        for p in parts[1:]:
            assert p.dims is not None
            if len(p.dims) != len(first) or any(compare(a, b) == "differ" for a, b in zip(first, p.dims)):
                raise ShapeFailure(f"{op}: operands {' and '.join(show(q.dims) for q in parts)} differ")
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    rank = len(first) + 1
    position = axes[0].position % rank if -rank <= axes[0].position < rank else 0
    dims = list(first)
    dims.insert(position, LiteralType(len(parts), ctx.api.named_generic_type("builtins.int", [])))
    return _result(ctx.api, parts[0].dtype, dims, ctx.default_return_type)


def _einsum(ctx: FunctionContext) -> Type:
    """``einsum("bi,io->bo", x, w)``: letters bind dims; a letter bound to two different dims is an error."""
    if not ctx.args or not ctx.args[0] or not isinstance(ctx.args[0][0], StrExpr):
        return ctx.default_return_type
    spec = ctx.args[0][0].value.replace(" ", "")
    operands = [t for types in ctx.arg_types[1:] for t in types]
    shaped = [_known(t) for t in operands]
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
                if compare(seen, d) == "differ":
                    raise ShapeFailure(
                        f"einsum: {letter!r} in {spec!r} is {dim_name(seen)} in one operand and {dim_name(d)} in "
                        f"{show(s.dims)}"
                    )
        missing = [c for c in output if c not in bound]
        if missing:
            raise ShapeFailure(f"einsum: output letters {''.join(missing)!r} of {spec!r} appear in no input")
    except ShapeFailure as failure:
        return _report(ctx.api, failure, ctx.context)
    first = shaped[0]
    assert first is not None
    return _result(ctx.api, first.dtype, [bound[c] for c in output], ctx.default_return_type)


_SHAPE_METHODS: dict[str, Callable[[MethodContext], Type]] = {
    "reshape": _shape_hook(_reshape_rule, method=True),
    "squeeze": _shape_hook(_squeeze_rule, method=True),
    "swapaxes": _shape_hook(_swapaxes_rule, method=True),
    "transpose": _shape_hook(_transpose_rule, method=True),
    "__getitem__": _shape_hook(_getitem_rule, method=True),
}

_SHAPE_FUNCTIONS: dict[str, Callable[[FunctionContext], Type]] = {
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

_PROTOCOL_CALLS: dict[str, Callable[[MethodContext], Type]] = {
    f"{OP_SIGNATURES}.Binary.__call__": _elementwise_function,
    f"{OP_SIGNATURES}.Comparison.__call__": _elementwise_function,
    f"{OP_SIGNATURES}.Where.__call__": _where_function,
    f"{OP_SIGNATURES}.MatMul.__call__": _matmul_function,
}
