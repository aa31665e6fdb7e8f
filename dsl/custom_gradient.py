"""``ts.custom_gradient`` (``jax.custom_gradient``): a function that returns its value and its own
vector-Jacobian product, ``f(*args) -> (value, vjp)`` with ``vjp(ct) -> one cotangent per argument`` (a tuple;
a single cotangent for a one-argument function may be returned bare), built on ``ts.custom_vjp``.

    @ts.custom_gradient
    def clip_gradient(x):
        return x, lambda g: (tnp.clip(g, -1.0, 1.0),)

Deliberate differences from JAX: the ``vjp`` closure cannot be carried from the forward pass to the backward pass
as a residual (programs pass arrays between them, not Python functions), so the backward pass calls ``f`` again on
the saved arguments to rebuild it (XLA merges the repeated forward work with the forward pass where it can; a
side effect in ``f``, such as a ``ts.debug.print``, runs again there). Arguments are positional, as for
``ts.custom_vjp``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

from .custom_derivatives import custom_vjp
from .staging.errors import TransformError
from .staging.source import user_location
from .subgraph import function_name

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["custom_gradient"]


def custom_gradient(fun: Callable[P, tuple[R, Callable[..., Any]]]) -> custom_vjp[P, R]:
    """``fun`` with the derivative it returns: ``fun(*args) -> (value, vjp)``; calls return ``value``."""
    if not callable(fun):
        raise TypeError(f"custom_gradient: expected a function, got {type(fun).__name__} {fun!r:.60}")
    name = function_name(fun)
    plain: Callable[..., Any] = fun

    def split(args: tuple[Any, ...]) -> tuple[Any, Callable[..., Any]]:
        result = plain(*args)
        if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
            raise TransformError(
                f"custom_gradient function {name} must return a pair (value, vjp function), got "
                f"{type(result).__name__} {result!r:.80}", "custom_gradient", user_location(),
            )
        return result

    def value(*args: Any) -> Any:
        return split(args)[0]

    def fwd(*args: Any) -> tuple[Any, tuple[Any, ...]]:
        return split(args)[0], args

    def bwd(args: tuple[Any, ...], ct: Any) -> tuple[Any, ...]:
        cts = split(args)[1](ct)
        return cts if isinstance(cts, tuple) else (cts,)  # JAX's convention: a bare cotangent is the only one

    wrapped: custom_vjp[P, R] = custom_vjp(cast(Callable[P, R], functools.wraps(fun)(value)))
    wrapped.defvjp(fwd, bwd)
    return wrapped
