"""Adam (Kingma & Ba, 2015): per-parameter step sizes from bias-corrected moment estimates."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs
import numpy as np

from ...dtypes import f32, f64
from ...tensor import Tensor
from ..numpy import sqrt, zeros
from ._schedule import LearningRate, rate_at
from ._tree import map_trees, zeros_tree

P = TypeVar("P")


@attrs.frozen
class AdamState(Generic[P]):
    """The step count and the running first (``mu``) and second (``nu``) moments of every gradient."""

    count: Tensor[Any]
    mu: P
    nu: P


@attrs.frozen
class Adam(Generic[P]):
    learning_rate: LearningRate = 1e-3
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8

    def init(self, params: P) -> AdamState[P]:
        return AdamState(zeros((), dtype="int32"), zeros_tree(params), zeros_tree(params))

    def update(self, grads: P, state: AdamState[P], params: P) -> tuple[P, AdamState[P]]:
        """New parameters and state after one step."""
        b1, b2, eps = self.b1, self.b2, self.eps
        count = state.count + 1
        lr = rate_at(self.learning_rate, state.count)
        mu = map_trees(lambda m, g: b1 * m + (1 - b1) * g, state.mu, grads)
        nu = map_trees(lambda v, g: b2 * v + (1 - b2) * (g * g), state.nu, grads)

        def step(p: Any, m: Any, v: Any) -> Any:
            m_hat = m / bias_correction(b1, count, p.dtype)  # undo the bias of moments that start at zero
            v_hat = v / bias_correction(b2, count, p.dtype)
            return p - lr * m_hat / (sqrt(v_hat) + eps)

        return map_trees(step, params, mu, nu), AdamState(count, mu, nu)


def bias_correction(beta: float, count: Tensor[Any], dtype: Any) -> Tensor[Any]:
    """``1 - beta**count`` in ``dtype``, computed in at least f32: in bf16, 0.999 rounds to 1 (a zero divisor) and
    counts past 256 are inexact."""
    wide = f64 if dtype == np.float64 else f32
    return (1 - beta ** count.astype(wide)).astype(dtype)


def adam(learning_rate: LearningRate = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Adam[Any]:
    """Adam as a pure optimizer: ``state = opt.init(params)``; ``params, state = opt.update(grads, state, params)``."""
    return Adam(learning_rate, b1, b2, eps)
