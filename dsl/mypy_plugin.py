"""mypy plugin: shape arithmetic that plain typing cannot express.

Enable it with ``plugins = tensorstage.mypy_plugin`` in the ``[tool.mypy]`` table (or ``mypy.ini``). Where every
operand's shape is spelled out (no ``*S`` variadic part), the plugin replaces the strict overloads of
broadcasting, matmul and reductions with the exact rule and computes result shapes for reshape, squeeze,
expand_dims, moveaxis, transpose/permutations, literal slicing, concatenate/stack and einsum. Mistakes are
reported with error code ``shape`` and a message naming the op and both shapes with dim names, e.g.

    error: add: (Batch, In) and (Batch, Out) do not broadcast: axis -1 is In in one and Out in the other  [shape]

In generic code (``Tensor[DT, *S, K]``) the strict overloads stay in charge. The rules are the ones staging
enforces (``prelude/numpy``), so a program the plugin accepts does not fail at ``stage()`` for those reasons.

This module picks the hook for each call; the hooks live in ``mypy_arith_hooks`` (operators, matmul, reductions)
and ``mypy_shape_hooks`` (shape functions), the shape arithmetic in ``mypy_shapes``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mypy.nodes import TypeInfo
from mypy.plugin import FunctionContext, MethodContext, MethodSigContext, Plugin, ReportConfigContext
from mypy.types import FunctionLike, Type

from .mypy_arith_hooks import (
    BINARY_METHODS,
    COMPARISON_METHODS,
    PROTOCOL_CALLS,
    bound_reduction,
    elementwise_method,
    elementwise_signature,
    matmul_method,
    reduction_function,
    reduction_signature,
)
from .mypy_shape_hooks import SHAPE_FUNCTIONS, SHAPE_METHODS
from .mypy_shapes import TENSOR

# mypy hashes only this file into its cache: the rules' own sources decide when cached results are stale.
_RULE_SOURCES = ("mypy_shapes.py", "mypy_hook_support.py", "mypy_arith_hooks.py", "mypy_shape_hooks.py")
_RULES_VERSION = hashlib.sha256(b"".join(Path(__file__).with_name(n).read_bytes() for n in _RULE_SOURCES)).hexdigest()
SHAPE_TYPING = "tensorstage.shape_typing"
PRELUDE = "tensorstage.prelude.numpy."


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
        if fullname in PROTOCOL_CALLS:
            return _guard(elementwise_signature, lambda ctx: ctx.default_signature)
        if fullname.startswith(f"{SHAPE_TYPING}.") and fullname.endswith("Reduction.__call__"):
            return _guard(reduction_signature, lambda ctx: ctx.default_signature)
        method = self._is_tensor_method(fullname)
        if method in BINARY_METHODS or method in COMPARISON_METHODS or method == "__matmul__":
            return _guard(elementwise_signature, lambda ctx: ctx.default_signature)
        return None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        hook: Callable[[MethodContext], Type] | None = PROTOCOL_CALLS.get(fullname)
        if hook is None and fullname.startswith(f"{SHAPE_TYPING}.") and fullname.endswith("Reduction.__call__"):
            hook = bound_reduction if fullname.startswith(f"{SHAPE_TYPING}.Bound") else reduction_function
        if hook is None:
            method = self._is_tensor_method(fullname) or ""
            if method in BINARY_METHODS or method in COMPARISON_METHODS:
                hook = elementwise_method
            elif method == "__matmul__":
                hook = matmul_method
            else:
                hook = SHAPE_METHODS.get(method)
        return _guard(hook, lambda ctx: ctx.default_return_type) if hook is not None else None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        hook = SHAPE_FUNCTIONS.get(fullname.rsplit(".", 1)[-1]) if fullname.startswith(PRELUDE) else None
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


