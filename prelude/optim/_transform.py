"""Gradient transformations (clipping) and ``chain``, in the optimizers' ``init`` / ``update`` protocol.

Every optimizer and transformation has ``init(params) -> state`` and ``update(grads, state, params) ->
(tree, state)``. An optimizer's tree is the new parameters; a gradient transformation's (``transforms_gradients``
is True) is the transformed gradients. ``chain(t1, ..., opt)`` runs gradient transformations in order and ends
with at most one optimizer, so ``chain(clip_by_global_norm(1.0), adamw(1e-3))`` is itself an optimizer.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, TypeVar

import attrs

import numpy as np

from ...dtypes import f32, f64
from ...pytree import leaves
from ...tensor import Tensor
from ..numpy import asarray, maximum, sqrt, sum, zeros
from ..numpy import clip as clip_values
from ._tree import map_trees

P = TypeVar("P")


class Transformation(Protocol):
    """What ``chain`` accepts: an optimizer or a gradient transformation."""

    def init(self, params: Any) -> Any: ...

    def update(self, grads: Any, state: Any, params: Any) -> tuple[Any, Any]: ...


@attrs.frozen
class EmptyState:
    """The state of a stateless transformation (a pytree with no leaves)."""


@attrs.frozen
class ChainState:
    """One state per transformation of a ``chain``, in order."""

    states: tuple[Any, ...]


def global_norm(tree: Any) -> Tensor[Any]:
    """``sqrt(sum of every leaf's squared entries)``: the L2 norm of the whole pytree as one vector, accumulated
    and returned in f64 if any leaf is f64, else in f32 (in f16, the squares of a norm past 256 overflow: clipping
    would then zero every gradient)."""
    xs = [asarray(x) for x in leaves(tree)]
    wide = f64 if any(x.dtype == np.float64 for x in xs) else f32
    total = zeros((), dtype=wide)
    for x in xs:
        w = x.astype(wide)
        total = total + sum(w * w)
    return sqrt(total)


@attrs.frozen
class ClipByGlobalNorm:
    max_norm: float
    transforms_gradients: ClassVar[bool] = True

    def init(self, params: P) -> EmptyState:
        return EmptyState()

    def update(self, grads: P, state: EmptyState, params: Any = None) -> tuple[P, EmptyState]:
        """``grads * max_norm / max(global_norm(grads), max_norm)`` (unchanged when the norm is within bounds;
        zero gradients stay zero, no division by zero)."""
        norm = global_norm(grads)
        scale = self.max_norm / maximum(norm, self.max_norm)
        return map_trees(lambda g: g * scale.astype(g.dtype), grads), state


@attrs.frozen
class Clip:
    max_abs: float
    transforms_gradients: ClassVar[bool] = True

    def init(self, params: P) -> EmptyState:
        return EmptyState()

    def update(self, grads: P, state: EmptyState, params: Any = None) -> tuple[P, EmptyState]:
        """Every gradient entry clipped into ``[-max_abs, max_abs]``."""
        m = self.max_abs
        return map_trees(lambda g: clip_values(g, -m, m), grads), state


@attrs.frozen
class Chain:
    transforms: tuple[Transformation, ...]

    @property
    def transforms_gradients(self) -> bool:
        return bool(getattr(self.transforms[-1], "transforms_gradients", False))

    def init(self, params: Any) -> ChainState:
        return ChainState(tuple(t.init(params) for t in self.transforms))

    def update(self, grads: Any, state: ChainState, params: Any) -> tuple[Any, ChainState]:
        """Each transformation's output feeds the next; the last one's tree (parameters or gradients) returns."""
        if len(state.states) != len(self.transforms):
            raise TypeError(
                f"chain: the state has {len(state.states)} parts for {len(self.transforms)} transformations "
                "(use the state this chain's init returned)"
            )
        tree, states = grads, []
        for t, s in zip(self.transforms, state.states):
            tree, s = t.update(tree, s, params)
            states.append(s)
        return tree, ChainState(tuple(states))


def clip_by_global_norm(max_norm: float) -> ClipByGlobalNorm:
    """A gradient transformation scaling all gradients together so their global norm is at most ``max_norm``."""
    if not max_norm > 0:
        raise ValueError(f"clip_by_global_norm: max_norm must be > 0, got {max_norm!r}")
    return ClipByGlobalNorm(float(max_norm))


def clip(max_abs: float) -> Clip:
    """A gradient transformation clipping every gradient entry into ``[-max_abs, max_abs]``."""
    if not max_abs >= 0:
        raise ValueError(f"clip: max_abs must be >= 0, got {max_abs!r}")
    return Clip(float(max_abs))


def chain(*transforms: Transformation) -> Chain:
    """Gradient transformations applied in order, optionally ending with one optimizer (then the chain is an
    optimizer: ``params, state = opt.update(grads, state, params)``)."""
    if not transforms:
        raise ValueError("chain: needs at least one transformation")
    for i, t in enumerate(transforms):
        if not (callable(getattr(t, "init", None)) and callable(getattr(t, "update", None))):
            raise TypeError(f"chain: argument {i} ({t!r}) has no init/update (an optimizer or a transformation)")
        if i < len(transforms) - 1 and not getattr(t, "transforms_gradients", False):
            raise ValueError(
                f"chain: only the last transformation may be an optimizer (returning parameters), but argument {i} "
                f"is {type(t).__name__}; put gradient transformations such as clip_by_global_norm before it"
            )
    return Chain(tuple(transforms))
