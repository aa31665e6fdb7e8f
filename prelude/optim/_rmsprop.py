"""RMSProp (Hinton, 2012): steps scaled by a running root mean square of the gradients."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from ...tensor import Tensor
from ..numpy import maximum, sqrt, zeros
from ._schedule import LearningRate, rate_at
from ._tree import map_trees, zeros_tree

P = TypeVar("P")


@attrs.frozen
class RMSPropState(Generic[P]):
    """The step count, the mean square ``nu``, the mean ``mu`` (centered only) and the momentum buffer."""

    count: Tensor[Any]
    nu: P
    mu: P | None
    momentum: P | None


@attrs.frozen
class RMSProp(Generic[P]):
    learning_rate: LearningRate = 1e-2
    decay: float = 0.9
    eps: float = 1e-8
    centered: bool = False
    momentum: float = 0.0

    def init(self, params: P) -> RMSPropState[P]:
        mu = zeros_tree(params) if self.centered else None
        buf = zeros_tree(params) if self.momentum else None
        return RMSPropState(zeros((), dtype="int32"), zeros_tree(params), mu, buf)

    def update(self, grads: P, state: RMSPropState[P], params: P) -> tuple[P, RMSPropState[P]]:
        """``nu = decay * nu + (1 - decay) * g**2``; ``d = g / (sqrt(nu - mu**2) + eps)`` (``mu`` the running mean
        of ``g`` when centered, else 0); with momentum ``buf = momentum * buf + d``, ``p -= lr * buf``, else
        ``p -= lr * d``."""
        rho, eps = self.decay, self.eps
        lr = rate_at(self.learning_rate, state.count)
        nu = map_trees(lambda v, g: rho * v + (1 - rho) * (g * g), state.nu, grads)
        mu = None
        if state.mu is not None:
            mu = map_trees(lambda m, g: rho * m + (1 - rho) * g, state.mu, grads)
            # v - m**2 >= 0 in exact arithmetic, but rounding can take it below 0 (a NaN root) once it is tiny
            direction = map_trees(lambda g, v, m: g / (sqrt(maximum(v - m * m, 0.0)) + eps), grads, nu, mu)
        else:
            direction = map_trees(lambda g, v: g / (sqrt(v) + eps), grads, nu)
        buf = None
        if state.momentum is not None:
            beta = self.momentum
            buf = map_trees(lambda b, d: beta * b + d, state.momentum, direction)
            direction = buf
        new_params = map_trees(lambda p, d: p - lr * d, params, direction)
        return new_params, RMSPropState(state.count + 1, nu, mu, buf)


def rmsprop(
    learning_rate: LearningRate = 1e-2, decay: float = 0.9, eps: float = 1e-8, centered: bool = False,
    momentum: float = 0.0,
) -> RMSProp[Any]:
    """RMSProp as a pure optimizer (PyTorch's form: ``eps`` added outside the square root)."""
    if not 0 <= decay < 1:
        raise ValueError(f"rmsprop: decay must be in [0, 1), got {decay!r}")
    return RMSProp(learning_rate, decay, eps, centered, momentum)
