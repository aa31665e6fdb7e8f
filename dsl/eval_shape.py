"""``eval_shape``: the types a function returns for given argument types, by staging it (nothing compiles or
runs), as ``jax.eval_shape``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import pytree
from .program import Program
from .signature import Spec
from .subgraph import function_name


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fun(*args, **kwargs)``'s result as a pytree of ``ts.Spec`` (shape, dtype and dim names per leaf).
    Arguments may be arrays, Python numbers or ``ts.Spec`` placeholders; shape errors raise as when staging."""
    program = Program(lambda a, k: fun(*a, **k), name=f"eval_shape_{function_name(fun)}", check_annotations=False)
    staged = program.stage(args, kwargs)
    specs = [Spec(a.shape, a.dtype, a.dims) for a in staged.out_avals]
    return pytree.unflatten(staged.out_tree, specs)
