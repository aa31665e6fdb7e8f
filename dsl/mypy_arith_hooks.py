"""The mypy plugin's hooks for broadcasting operators and functions, ``where``, matmul and reductions."""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import CallExpr, ComparisonExpr, Context, MemberExpr
from mypy.plugin import MethodContext, MethodSigContext
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    LiteralType,
    NoneType,
    Type,
    TypeOfAny,
    TypeType,
    get_proper_type,
)

from .mypy_hook_support import (
    argument_type,
    call_name,
    fully_known,
    named_instance,
    permissive,
    report_shape_error,
    same_dtype,
    scalar_or_fully_known,
    tensor_type,
)
from .mypy_shapes import Axis, Shaped, ShapeFailure, as_shaped, axis_items, broadcast, literal_bool, matmul, reduce

OP_SIGNATURES = "tensorstage.op_signatures"

OP_NAMES = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "mod", "pow": "power", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
BINARY_METHODS = {f"__{n}__": n for n in OP_NAMES} | {f"__r{n}__": n for n in OP_NAMES}
COMPARISON_METHODS = {"__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal"}


# --------------------------------------------------------------------------------- elementwise and matmul


def elementwise_signature(ctx: MethodSigContext) -> FunctionLike:
    """Swap strict overloads for the exact rule when every tensor operand has a fully known shape and all
    operands share one dtype (dtype mismatches stay with mypy's own overload errors)."""
    operands: list[Type | None] = []
    receiver = as_shaped(ctx.type)
    if receiver is not None:
        operands.append(ctx.type)
    operands += [argument_type(ctx, i) for i in range(len(ctx.args))]
    if not operands or not all(scalar_or_fully_known(t) for t in operands):
        return ctx.default_signature
    typ = get_proper_type(ctx.type)
    if isinstance(typ, Instance) and typ.type.name == "Where":
        operands = operands[1:]  # the bool condition has its own dtype
    tensors = [s for t in operands if t is not None and (s := fully_known(t)) is not None]
    if not tensors or not same_dtype(tensors):
        return ctx.default_signature
    return permissive(ctx.default_signature, ctx.api)


def _bool_type(ctx: MethodContext) -> Type:
    return named_instance(ctx.api, "tensorstage.dtypes.bool_") or AnyType(TypeOfAny.special_form)


def _elementwise(ctx: MethodContext, operands: list[Type], op: str, comparison: bool) -> Type:
    tensors = [s for t in operands if (s := fully_known(t)) is not None]
    if len(tensors) != len([t for t in operands if as_shaped(t) is not None]) or not tensors:
        return ctx.default_return_type
    try:
        dims = broadcast(op, [s.dims for s in tensors if s.dims is not None])
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    dtype = _bool_type(ctx) if comparison else tensors[0].dtype
    if not comparison and any(_is_python_complex(t) for t in operands):
        dtype = _complex_of(ctx, dtype)
    return tensor_type(ctx.api, dtype, dims, ctx.default_return_type)


_COMPLEX_OF = {"tensorstage.dtypes.f32": "tensorstage.dtypes.c64", "tensorstage.dtypes.f64": "tensorstage.dtypes.c128"}


def _is_python_complex(typ: Type) -> bool:
    t = get_proper_type(typ)
    return isinstance(t, Instance) and t.type.fullname == "builtins.complex"


def _complex_of(ctx: MethodContext, dtype: Type) -> Type:
    """A Python complex beside a float tensor makes the complex dtype of its width (as at run time)."""
    t = get_proper_type(dtype)
    wide = _COMPLEX_OF.get(t.type.fullname) if isinstance(t, Instance) else None
    return (named_instance(ctx.api, wide) or dtype) if wide is not None else dtype


def _method_name(ctx: MethodContext) -> str:
    ctx_callee = ctx.context
    if isinstance(ctx_callee, CallExpr) and isinstance(ctx_callee.callee, MemberExpr):
        return ctx_callee.callee.name
    return getattr(ctx.context, "op", "")


_OPERATOR_METHODS = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
    "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
    "@": "matmul",
}


def _symbol_and_right(context: Context) -> tuple[object, object]:
    """The operator and the right operand of ``a + b`` (an OpExpr) or of a single comparison ``a < b`` (mypy's
    ComparisonExpr, which lists its operators: without it ``a < 5`` was typed as ``a``'s dtype, not bool)."""
    if isinstance(context, ComparisonExpr):  # of a chain (``a < b < c``) the first link names the op
        return context.operators[0], context.operands[1] if len(context.operators) == 1 else None
    return getattr(context, "op", None), getattr(context, "right", None)


def _operator(ctx: MethodContext) -> tuple[str, bool]:
    """The op name for messages, and whether the operands arrived swapped (a reflected method)."""
    symbol_, right_expr = _symbol_and_right(ctx.context)
    if isinstance(symbol_, str) and symbol_ in _OPERATOR_METHODS:
        short = _OPERATOR_METHODS[symbol_]
        name = OP_NAMES.get(short) or COMPARISON_METHODS.get(f"__{short}__", short)
        left = as_shaped(ctx.type)
        swapped = False
        if right_expr is not None and ctx.args and ctx.args[0] and ctx.args[0][0] is not right_expr:
            swapped = True
        return name, swapped and left is not None
    return _method_name(ctx), False


def elementwise_method(ctx: MethodContext) -> Type:
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
    return _elementwise(ctx, operands, call_name(ctx.context, "elementwise"), comparison)


def _where_function(ctx: MethodContext) -> Type:
    operands = [ts[0] for ts in ctx.arg_types if len(ts) == 1]
    if len(operands) != 3:
        return ctx.default_return_type
    shaped = [fully_known(t) for t in operands]
    if any(s is None and as_shaped(t) is not None for s, t in zip(shaped, operands)):
        return ctx.default_return_type
    try:
        dims = broadcast("where", [s.dims for s in shaped if s is not None and s.dims is not None])
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    branch = next((s for s in shaped[1:] if s is not None), None)
    if branch is None:
        return ctx.default_return_type
    return tensor_type(ctx.api, branch.dtype, dims, ctx.default_return_type)


def _matmul(ctx: MethodContext, x_t: Type, y_t: Type, op: str) -> Type:
    x, y = fully_known(x_t), fully_known(y_t)
    if x is None or y is None or x.dims is None or y.dims is None:
        return ctx.default_return_type
    try:
        dims = matmul(op, x.dims, y.dims)
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    return tensor_type(ctx.api, x.dtype, dims, ctx.default_return_type)


def matmul_method(ctx: MethodContext) -> Type:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return ctx.default_return_type
    return _matmul(ctx, ctx.type, ctx.arg_types[0][0], "matmul")


def _matmul_function(ctx: MethodContext) -> Type:
    operands = [ts[0] for ts in ctx.arg_types if len(ts) == 1]
    if len(operands) != 2:
        return ctx.default_return_type
    return _matmul(ctx, operands[0], operands[1], call_name(ctx.context, "matmul"))


# ------------------------------------------------------------------------------------------------ reductions


def reduction_signature(ctx: MethodSigContext) -> FunctionLike:
    """Accept any axis argument; ``bound_reduction`` / ``reduction_function`` check it exactly."""
    typ = get_proper_type(ctx.type)
    bound = isinstance(typ, Instance) and typ.type.name.startswith("Bound")
    operand = ctx.type if bound else argument_type(ctx, 0)
    if operand is None:
        return ctx.default_signature
    shaped = as_shaped(operand, generic_base=typ.type.fullname if bound and isinstance(typ, Instance) else None)
    if shaped is None or shaped.dims is None:
        return ctx.default_signature
    axis_index = 0 if bound else 1
    axis_type = argument_type(ctx, axis_index)
    if axis_type is not None and axis_items(axis_type, ctx.args[axis_index][0]) is None:
        if not isinstance(get_proper_type(axis_type), NoneType):
            return ctx.default_signature
    return permissive(ctx.default_signature, ctx.api, keep=0 if bound else 1)


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
    op = call_name(ctx.context, "reduce")
    one = LiteralType(1, ctx.api.named_generic_type("builtins.int", []))
    try:
        dims = reduce(op, shaped.dims, axes, keepdims, one)
    except ShapeFailure as failure:
        return report_shape_error(ctx.api, failure, ctx.context)
    dtype = shaped.dtype
    ret = get_proper_type(ctx.default_return_type)
    callee = str(get_proper_type(ctx.type))
    if "dtype" in ctx.callee_arg_names and ctx.arg_types[ctx.callee_arg_names.index("dtype")]:
        given = _dtype_argument(ctx.arg_types[ctx.callee_arg_names.index("dtype")][0])
        if given is None:
            return ctx.default_return_type
        dtype = given
    elif "Arg" in callee:
        dtype = named_instance(ctx.api, "tensorstage.dtypes.i32") or dtype
    elif "Accumulating" in callee:
        dtype = _accumulator(ctx.api, dtype)
    elif isinstance(ret, Instance) and ret.args:
        dtype = ret.args[0] if not isinstance(get_proper_type(ret.args[0]), AnyType) else dtype
    return tensor_type(ctx.api, dtype, dims, ctx.default_return_type)


def _dtype_argument(typ: Type) -> Type | None:
    """The dtype a ``dtype=`` argument names (``ts.f32`` is the class object), or None if not a dtype class."""
    proper = get_proper_type(typ)
    if isinstance(proper, TypeType):
        return proper.item
    if isinstance(proper, CallableType) and proper.is_type_obj():
        return proper.ret_type
    return None


_ACCUMULATORS = {f"tensorstage.dtypes.{narrow}": f"tensorstage.dtypes.{wide}"
                 for narrow, wide in (("bool_", "i32"), ("i8", "i32"), ("i16", "i32"), ("u8", "u32"),
                                     ("u16", "u32"))}


def _accumulator(api: object, dtype: Type) -> Type:
    """``tnp.sum``/``tnp.prod`` accumulate bool, i8 and i16 in i32 and u8 and u16 in u32
    (shape_typing.NarrowSigned, NarrowUnsigned)."""
    proper = get_proper_type(dtype)
    wide = _ACCUMULATORS.get(proper.type.fullname) if isinstance(proper, Instance) else None
    return (named_instance(api, wide) if wide is not None else None) or dtype


def bound_reduction(ctx: MethodContext) -> Type:
    typ = get_proper_type(ctx.type)
    if not isinstance(typ, Instance):
        return ctx.default_return_type
    shaped = as_shaped(typ, generic_base=typ.type.fullname)
    if shaped is None:
        return ctx.default_return_type
    keep = 1 if len(ctx.arg_types) > 1 else None
    return _reduce_result(ctx, shaped, 0, keep)


def reduction_function(ctx: MethodContext) -> Type:
    if not ctx.arg_types or len(ctx.arg_types[0]) != 1:
        return ctx.default_return_type
    shaped = fully_known(ctx.arg_types[0][0])
    if shaped is None:
        return ctx.default_return_type
    keep = 2 if len(ctx.arg_types) > 2 else None
    return _reduce_result(ctx, shaped, 1, keep)


PROTOCOL_CALLS: dict[str, Callable[[MethodContext], Type]] = {
    f"{OP_SIGNATURES}.Binary.__call__": _elementwise_function,
    f"{OP_SIGNATURES}.Arithmetic.__call__": _elementwise_function,
    f"{OP_SIGNATURES}.Comparison.__call__": _elementwise_function,
    f"{OP_SIGNATURES}.Where.__call__": _where_function,
    f"{OP_SIGNATURES}.MatMul.__call__": _matmul_function,
}
