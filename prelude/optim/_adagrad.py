"""Adagrad (Duchi et al., 2011): steps scaled by the root of every gradient's accumulated square."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from ...pytree import tree_map
from ...tensor import Tensor
from ..numpy import full_like, sqrt, zeros
from ._schedule import LearningRate, rate_at
from ._tree import map_trees

P = TypeVar("P")


@attrs.frozen
class AdagradState(Generic[P]):
    """The step count and the sum of squared gradients (from ``initial_accumulator_value``)."""

    count: Tensor[Any]
    sum_sq: P


@attrs.frozen
class Adagrad(Generic[P]):
    learning_rate: LearningRate = 1e-2
    initial_accumulator_value: float = 0.1
    eps: float = 1e-7

    def init(self, params: P) -> AdagradState[P]:
        start = self.initial_accumulator_value
        return AdagradState(zeros((), dtype="int32"), tree_map(lambda p: full_like(p, start), params))

    def update(self, grads: P, state: AdagradState[P], params: P) -> tuple[P, AdagradState[P]]:
        """``s += g**2``; ``p -= lr * g / (sqrt(s) + eps)``."""
        eps = self.eps
        lr = rate_at(self.learning_rate, state.count)
        sum_sq = map_trees(lambda s, g: s + g * g, state.sum_sq, grads)
        new_params = map_trees(lambda p, g, s: p - lr * g / (sqrt(s) + eps), params, grads, sum_sq)
        return new_params, AdagradState(state.count + 1, sum_sq)


def adagrad(
    learning_rate: LearningRate = 1e-2, initial_accumulator_value: float = 0.1, eps: float = 1e-7
) -> Adagrad[Any]:
    """Adagrad as a pure optimizer with Optax's defaults (the accumulator starts at 0.1, ``eps=1e-7``) but PyTorch's
    ``eps`` placement, outside the root: ``g / (sqrt(s) + eps)`` (Optax: ``g / sqrt(s + eps)``)."""
    if initial_accumulator_value < 0:
        raise ValueError(f"adagrad: initial_accumulator_value must be >= 0, got {initial_accumulator_value!r}")
    return Adagrad(learning_rate, initial_accumulator_value, eps)
