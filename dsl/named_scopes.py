"""``ts.named_scope`` and ``ts.named_call``: names for the equations staged inside a block or a function (JAX's
name stack), shown where their source lines are: after the line in the staged graph's listing and
``ts.make_jaxpr`` (``# model.py:12 [encoder/attention]``), in error messages, and in the StableHLO as MLIR name
locations (``loc("encoder/attention"("model.py":12:0))``), which XLA keeps as each op's ``op_name`` metadata for
profiles and HLO dumps.

Deliberate differences from JAX: the names are those of the scopes only (JAX prefixes ``jit(f)/`` and appends
the primitive, ``jit(f)/encoder/attention/dot_general``), and ``make_jaxpr`` shows them (JAX's listing does
not). A scope names what is staged inside it: a program compiled earlier and called inside a scope keeps the
names it was staged with (the scope is not part of its cache key), and ops run eagerly inside a scope reuse
their executables as they are. The open scopes are one global stack, not one per thread.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from .staging.source import SCOPES

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["named_call", "named_scope"]


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Within the block, every equation staged carries ``name`` (nested scopes: ``outer/inner``)."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {type(name).__name__} {name!r:.60}")
    SCOPES.append(name)
    try:
        yield
    finally:
        SCOPES.pop()


def named_call(fun: Callable[P, R], *, name: str | None = None) -> Callable[P, R]:
    """``fun`` whose calls stage inside ``named_scope(name)`` (``name`` defaults to ``fun.__name__``)."""
    if not callable(fun):
        raise TypeError(f"named_call: expected a function, got {type(fun).__name__} {fun!r:.60}")
    scope = name if name is not None else str(getattr(fun, "__name__", "named_call"))

    @functools.wraps(fun)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with named_scope(scope):
            return fun(*args, **kwargs)

    return call
