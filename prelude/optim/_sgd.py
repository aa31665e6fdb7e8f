"""Stochastic gradient descent, optionally with (Nesterov) momentum."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from ...tensor import Tensor
from ..numpy import zeros
from ._schedule import LearningRate, rate_at
from ._tree import map_trees, zeros_tree

P = TypeVar("P")


@attrs.frozen
class SGDState(Generic[P]):
    """The step count and, with momentum, the velocity of every parameter."""

    count: Tensor[Any]
    velocity: P | None


@attrs.frozen
class SGD(Generic[P]):
    learning_rate: LearningRate
    momentum: float = 0.0
    nesterov: bool = False

    def init(self, params: P) -> SGDState[P]:
        velocity = zeros_tree(params) if self.momentum else None
        return SGDState(zeros((), dtype="int32"), velocity)

    def update(self, grads: P, state: SGDState[P], params: P) -> tuple[P, SGDState[P]]:
        """New parameters and state: ``v = momentum * v + g``; ``p -= lr * v`` (or ``lr * (g + momentum * v)``)."""
        lr = rate_at(self.learning_rate, state.count)
        if state.velocity is None:
            new_params = map_trees(lambda p, g: p - lr * g, params, grads)
            return new_params, SGDState(state.count + 1, None)
        mu = self.momentum
        velocity = map_trees(lambda v, g: mu * v + g, state.velocity, grads)
        if self.nesterov:
            new_params = map_trees(lambda p, g, v: p - lr * (g + mu * v), params, grads, velocity)
        else:
            new_params = map_trees(lambda p, v: p - lr * v, params, velocity)
        return new_params, SGDState(state.count + 1, velocity)


def sgd(learning_rate: LearningRate, momentum: float = 0.0, nesterov: bool = False) -> SGD[Any]:
    """SGD as a pure optimizer: ``state = opt.init(params)``; ``params, state = opt.update(grads, state, params)``."""
    if nesterov and not momentum:
        raise ValueError("sgd: nesterov=True needs a non-zero momentum")
    return SGD(learning_rate, momentum, nesterov)
