"""``checkpoint`` (remat): trade compute for memory in reverse-mode differentiation.

The wrapped function is staged into a subgraph and bound as one ``checkpoint_call``; its VJP rule recomputes the
function's forward values in the backward pass (behind an optimization barrier, so XLA does not merge the two),
so only the function's inputs are kept alive between the passes. Values, forward mode and vmap are unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from .staging.builder import is_staging
from .staging.primitives import remat as M
from .subgraph import function_name, stage_subgraph

P = ParamSpec("P")
R = TypeVar("R")


def checkpoint(fun: Callable[P, R], *, prevent_cse: bool = True) -> Callable[P, R]:
    """``fun`` with the same signature and values, whose intermediate values reverse mode recomputes from its
    inputs during the backward pass instead of saving them (JAX's ``jax.checkpoint`` with its default policy:
    nothing saved).

    Tensor leaves of the arguments (positional or keyword) and outer staged values ``fun`` closes over are its
    inputs, all differentiable; other arguments (Python numbers, strings, ...) are static, fixed while staging.
    ``prevent_cse=False`` drops the optimization barrier on the recomputation, letting XLA merge it with the
    forward pass again (useful only where something else already keeps them apart). Called outside a staged
    program, ``fun`` just runs.
    """
    name = function_name(fun)

    @functools.wraps(fun)
    def checkpointed(*args: P.args, **kwargs: P.kwargs) -> R:
        if not is_staging():
            return fun(*args, **kwargs)
        sub = stage_subgraph(fun, args, dict(kwargs))
        outs = M.checkpoint_call(sub.atoms, fun=sub.graph, name=name, prevent_cse=prevent_cse)
        result: Any = sub.outputs(outs)
        return result  # type: ignore[no-any-return]

    return checkpointed
