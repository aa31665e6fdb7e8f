"""AdamW (Loshchilov & Hutter, 2019): Adam with weight decay decoupled from the gradient's moments."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from ..numpy import sqrt, zeros
from ._adam import AdamState, bias_correction
from ._schedule import LearningRate, rate_at
from ._tree import decay_mask, map_trees, zeros_tree

P = TypeVar("P")


@attrs.frozen
class AdamW(Generic[P]):
    learning_rate: LearningRate = 1e-3
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 1e-4
    mask: Any = None

    def init(self, params: P) -> AdamState[P]:
        return AdamState(zeros((), dtype="int32"), zeros_tree(params), zeros_tree(params))

    def update(self, grads: P, state: AdamState[P], params: P) -> tuple[P, AdamState[P]]:
        """``p -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)`` with Adam's bias-corrected moments;
        the decay applies where the mask is True."""
        b1, b2, eps, wd = self.b1, self.b2, self.eps, self.weight_decay
        count = state.count + 1
        lr = rate_at(self.learning_rate, state.count)
        mu = map_trees(lambda m, g: b1 * m + (1 - b1) * g, state.mu, grads)
        nu = map_trees(lambda v, g: b2 * v + (1 - b2) * (g * g), state.nu, grads)
        flags = decay_mask("adamw", self.mask, params)

        def step(p: Any, m: Any, v: Any, decay: bool) -> Any:
            m_hat, v_hat = m / bias_correction(b1, count, p.dtype), v / bias_correction(b2, count, p.dtype)
            direction = m_hat / (sqrt(v_hat) + eps)
            if decay and wd:
                direction = direction + wd * p
            return p - lr * direction

        return map_trees(step, params, mu, nu, flags), AdamState(count, mu, nu)


def adamw(
    learning_rate: LearningRate = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
    weight_decay: float = 1e-4, mask: Any = None,
) -> AdamW[Any]:
    """AdamW: Adam plus ``lr * weight_decay * p`` subtracted from the parameters (not added to the gradient).
    ``mask`` (a pytree of bools like the parameters, or a function of them) limits the decay, e.g. to weights."""
    if weight_decay < 0:
        raise ValueError(f"adamw: weight_decay must be >= 0, got {weight_decay!r}")
    return AdamW(learning_rate, b1, b2, eps, weight_decay, mask)
