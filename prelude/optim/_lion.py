"""Lion (Chen et al., 2023): sign-of-momentum steps with decoupled weight decay."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from ...tensor import Tensor
from ..numpy import sign, zeros
from ._schedule import LearningRate, rate_at
from ._tree import decay_mask, map_trees, zeros_tree

P = TypeVar("P")


@attrs.frozen
class LionState(Generic[P]):
    """The step count and the momentum ``mu``."""

    count: Tensor[Any]
    mu: P


@attrs.frozen
class Lion(Generic[P]):
    learning_rate: LearningRate = 1e-4
    b1: float = 0.9
    b2: float = 0.99
    weight_decay: float = 0.0
    mask: Any = None

    def init(self, params: P) -> LionState[P]:
        return LionState(zeros((), dtype="int32"), zeros_tree(params))

    def update(self, grads: P, state: LionState[P], params: P) -> tuple[P, LionState[P]]:
        """``p -= lr * (sign(b1 * m + (1 - b1) * g) + weight_decay * p)``; then ``m = b2 * m + (1 - b2) * g``."""
        b1, b2, wd = self.b1, self.b2, self.weight_decay
        lr = rate_at(self.learning_rate, state.count)
        flags = decay_mask("lion", self.mask, params)

        def step(p: Any, m: Any, g: Any, decay: bool) -> Any:
            direction = sign(b1 * m + (1 - b1) * g)
            if decay and wd:
                direction = direction + wd * p
            return p - lr * direction

        new_params = map_trees(step, params, state.mu, grads, flags)
        mu = map_trees(lambda m, g: b2 * m + (1 - b2) * g, state.mu, grads)
        return new_params, LionState(state.count + 1, mu)


def lion(
    learning_rate: LearningRate = 1e-4, b1: float = 0.9, b2: float = 0.99, weight_decay: float = 0.0, mask: Any = None
) -> Lion[Any]:
    """Lion as a pure optimizer; ``mask`` limits the weight decay as in ``adamw``."""
    return Lion(learning_rate, b1, b2, weight_decay, mask)
