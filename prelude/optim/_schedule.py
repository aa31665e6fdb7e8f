"""Learning rates: a constant, or a function of the step count (a schedule, staged into the update)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from ...tensor import Tensor

LearningRate: TypeAlias = "float | Callable[[Tensor[Any]], Any]"


def rate_at(learning_rate: LearningRate, count: Tensor[Any]) -> Any:
    return learning_rate(count) if callable(learning_rate) else learning_rate
