"""JAX's small top-level tools for looking at and resetting staged programs: ``make_jaxpr`` (the staged graph of a
function for given arguments) and ``clear_caches`` (every program's staged graphs and executables dropped)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .program import _PROGRAMS, Program
from .staged import Staged
from .subgraph import function_name


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = ()) -> Callable[..., Staged[Any, Any]]:
    """A function that stages ``fun`` for its arguments (arrays, Python numbers or ``ts.Spec`` placeholders) and
    returns the ``Staged`` program: printed, it is the graph, one equation per line with the line that made it
    (``jax.make_jaxpr``); ``.stablehlo()`` is its module text. Nothing is compiled or run."""
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = function_name(fun)
    program = Program(fun, static_argnums=statics, name=name, check_annotations=False)

    def staged(*args: Any, **kwargs: Any) -> Staged[Any, Any]:
        if kwargs:  # staged with the keyword arguments fixed (their arrays become the graph's constants)
            return Program(lambda *a: fun(*a, **kwargs), static_argnums=statics, name=name,
                           check_annotations=False).stage(*args)
        return program.stage(*args)

    return staged


def clear_caches() -> None:
    """Drop the staged graphs and executables of every program, eager ops' included (``jax.clear_caches``): the
    next calls stage and compile again (from the on-disk executable cache where it holds them)."""
    for program in list(_PROGRAMS):
        program.clear_cache("ts.clear_caches()")
