"""``checkpoint`` (remat): trade compute for memory in reverse-mode differentiation; ``checkpoint_name`` tags
values for its policies.

The wrapped function is staged into a subgraph and bound as one ``checkpoint_call``; its VJP rule recomputes the
function's forward values in the backward pass (behind an optimization barrier, so XLA does not merge the two),
so only the function's inputs, and the values its ``policy`` saves, are kept alive between the passes. Values,
forward mode and vmap are unchanged. Policies (``ts.checkpoint_policies``) are JAX's, on tensorstage's IR; see
``staging/primitives/remat.py`` for how they shape the recomputation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

from . import pytree
from .program import _normalized_argnums, _parameters
from .staging.builder import is_staging
from .staging.primitives import remat as M
from .staging.primitives.remat import CheckpointPolicy
from .staging.source import user_location
from .subgraph import function_name, stage_subgraph
from .tensor import Traced
from .trace import WeakTraced, wrap

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def checkpoint(
    fun: Callable[P, R], *, prevent_cse: bool = True, policy: CheckpointPolicy | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable[P, R]:
    """``fun`` with the same signature and values, whose intermediate values reverse mode recomputes from its
    inputs during the backward pass instead of saving them (``jax.checkpoint``).

    Tensor leaves of the arguments (positional or keyword) and outer staged values ``fun`` closes over are its
    inputs, all differentiable; other arguments (Python numbers, strings, ...) are static, fixed while staging,
    and so are the positional arguments at ``static_argnums``, passed to ``fun`` as they are.
    ``policy`` (``ts.checkpoint_policies.dots_saveable``, ``save_only_these_names("attn_out")``, or any
    ``policy(primitive, *avals, **params) -> bool``) picks the intermediate values to save instead; None saves
    none. ``prevent_cse=False`` drops the optimization barrier on the recomputation, letting XLA merge it with the
    forward pass again (useful only where something else already keeps them apart). Called outside a staged
    program, ``fun`` just runs.
    """
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint(): policy must be a callable (see ts.checkpoint_policies), got {policy!r}")
    statics = _normalized_argnums(fun, _parameters(fun), static_argnums, "checkpoint(): static_argnums")
    name = function_name(fun)

    @functools.wraps(fun)
    def checkpointed(*args: P.args, **kwargs: P.kwargs) -> R:
        if not is_staging():
            return fun(*args, **kwargs)
        target, dynamic = _holding_static(fun, args, statics)
        sub = stage_subgraph(target, dynamic, dict(kwargs))
        outs = M.checkpoint_call(sub.atoms, fun=sub.graph, name=name, prevent_cse=prevent_cse, policy=policy)
        result: Any = sub.outputs(outs)
        return result  # type: ignore[no-any-return]

    return checkpointed


def _holding_static(
    fun: Callable[..., Any], args: tuple[Any, ...], statics: tuple[int, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``fun`` with the arguments at ``statics`` bound to their values, and the remaining (staged) arguments."""
    fixed = {i: args[i] for i in statics if i < len(args)}
    if not fixed:
        return fun, args

    def target(*dynamic: Any, **kwargs: Any) -> Any:
        rest = iter(dynamic)
        return fun(*(fixed[i] if i in fixed else next(rest) for i in range(len(args))), **kwargs)

    return target, tuple(a for i, a in enumerate(args) if i not in fixed)


def checkpoint_name(x: T, name: str) -> T:
    """``x`` unchanged (leafwise on a pytree), its staged values tagged ``name`` for checkpoint policies
    (``save_only_these_names(name)`` saves them). Concrete values and Python scalars carry no tag: they are
    constants of the program, never recomputed."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: the name must be a string, got {name!r}\n  at {user_location()}")

    def leaf(v: Any) -> Any:
        if isinstance(v, Traced) and not isinstance(v, WeakTraced):
            return wrap(M.checkpoint_name(v.atom, name))
        return v

    return pytree.tree_map(leaf, x)  # type: ignore[no-any-return]
