"""Reading call sites and writing result types for the mypy plugin's hooks (``mypy_plugin``), and reporting
shape errors with error code ``shape``."""

from __future__ import annotations

from collections.abc import Sequence

from mypy.errorcodes import ErrorCode
from mypy.nodes import CallExpr, Context, IndexExpr, MemberExpr, NameExpr, TypeInfo
from mypy.plugin import FunctionSigContext, MethodSigContext
from mypy.types import AnyType, CallableType, Instance, Type, TypeOfAny, UnpackType, get_proper_type

from .mypy_shapes import TENSOR, Dims, Shaped, ShapeFailure, as_shaped


SHAPE = ErrorCode("shape", "Tensor shapes do not fit the operation", "tensorstage")


def call_name(context: Context, fallback: str) -> str:
    """The name the user wrote (``tnp.mean``, ``x.sum``, ``x[...]``), for messages."""
    if isinstance(context, CallExpr):
        callee = context.callee
        if isinstance(callee, (NameExpr, MemberExpr)):
            return callee.name
    if isinstance(context, IndexExpr):
        return "index"
    return fallback


def report_shape_error(api: object, failure: ShapeFailure, context: Context, dtype: Type | None = None) -> Type:
    """Report at the call; the call then has an open shape (so one mistake gives one error, not a cascade)."""
    api.fail(str(failure), context, code=SHAPE)  # type: ignore[attr-defined]
    dtype = dtype if dtype is not None else AnyType(TypeOfAny.from_error)
    open_shape = named_instance(api, "builtins.tuple", [AnyType(TypeOfAny.from_error)])
    if open_shape is None:
        return AnyType(TypeOfAny.from_error)
    return named_instance(api, TENSOR, [dtype, UnpackType(open_shape)]) or AnyType(TypeOfAny.from_error)


def named_instance(api: object, fullname: str, args: list[Type] | None = None) -> Instance | None:
    """An instance of a class by full name (through the module table: the user file need not import it)."""
    module, _, name = fullname.rpartition(".")
    table = getattr(api, "modules", {}).get(module)
    sym = table.names.get(name) if table is not None else None
    if sym is None or not isinstance(sym.node, TypeInfo):
        return None
    return Instance(sym.node, args or [])


def tensor_type(api: object, dtype: Type, dims: Dims, fallback: Type) -> Type:
    """``Tensor[dtype, *dims]``."""
    return named_instance(api, TENSOR, [dtype, *dims]) or fallback


def argument_type(ctx: MethodSigContext | FunctionSigContext, index: int) -> Type | None:
    if index >= len(ctx.args) or len(ctx.args[index]) != 1:
        return None
    return ctx.api.get_expression_type(ctx.args[index][0])


def fully_known(typ: Type | None) -> Shaped | None:
    """A tensor operand whose every dim is spelled out (not a ``*S`` variadic)."""
    if typ is None:
        return None
    shaped = as_shaped(typ)
    return shaped if shaped is not None and shaped.dims is not None else None


def scalar_or_fully_known(typ: Type | None) -> bool:
    if typ is None:
        return False
    t = get_proper_type(typ)
    if isinstance(t, Instance) and t.type.fullname in ("builtins.int", "builtins.float", "builtins.bool"):
        return True
    return fully_known(typ) is not None


def same_dtype(shapes: Sequence[Shaped]) -> bool:
    dtypes = [get_proper_type(s.dtype) for s in shapes]
    names = {d.type.fullname for d in dtypes if isinstance(d, Instance)}
    return len(names) <= 1 and all(isinstance(d, Instance) for d in dtypes)


def permissive(sig: CallableType, api: object, keep: int = 0) -> CallableType:
    """The same signature accepting any argument after the first ``keep`` (the method hook then applies the exact
    rule). ``object``, not Any: an Any type context would make mypy infer nested generic calls as Any."""
    accept_all: Type = named_instance(api, "builtins.object") or AnyType(TypeOfAny.special_form)
    types = [t if i < keep else accept_all for i, t in enumerate(sig.arg_types)]
    return sig.copy_modified(
        arg_types=types, ret_type=AnyType(TypeOfAny.special_form), variables=sig.variables if keep else []
    )
