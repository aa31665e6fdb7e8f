"""Learning rates: a constant, or a schedule (a function of the step count, staged into the update).

A schedule maps the optimizer's step count (an i32 scalar tensor inside a program, or a Python int) to a scalar
f32 rate. It is a frozen attrs object, so it hashes and compares by value, and it uses no Python control flow on
the count: ``schedule(state.count)`` stages into the compiled train step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import attrs

from ...array import Array
from ...dtypes import f32
from ...tensor import Tensor, Traced
from ...trace import WeakTraced
from ..numpy import asarray, clip, cos, exp, floor, where

LearningRate: TypeAlias = "float | Callable[[Tensor[Any]], Any]"
Schedule: TypeAlias = "Callable[[Any], Tensor[Any]]"


def rate_at(learning_rate: LearningRate, count: Tensor[Any]) -> Any:
    """The rate at step ``count``; a schedule's tensor is weakly typed, so it adopts each parameter's dtype
    (an f32 schedule drives f64 parameters without a dtype error)."""
    if not callable(learning_rate):
        return learning_rate
    rate = learning_rate(count)
    if isinstance(rate, Traced) and not isinstance(rate, WeakTraced) and rate.aval.ndim == 0:
        return WeakTraced(rate.atom)
    if isinstance(rate, Array) and rate.aval.ndim == 0:
        return float(rate)  # an eager update's concrete rate: a Python float adopts the parameters' dtype too
    return rate


def _steps(count: Any) -> Tensor[Any]:
    return asarray(count).astype(f32)


@attrs.frozen
class Constant:
    value: float

    def __call__(self, count: Any) -> Tensor[Any]:
        return _steps(count) * 0.0 + self.value


@attrs.frozen
class Linear:
    init_value: float
    end_value: float
    transition_steps: int
    transition_begin: int = 0

    def __call__(self, count: Any) -> Tensor[Any]:
        steps = max(self.transition_steps, 1)  # zero steps: the end value from transition_begin on
        frac = clip((_steps(count) - self.transition_begin) / steps, 0.0, 1.0)
        if self.transition_steps <= 0:
            frac = where(_steps(count) >= self.transition_begin, 1.0, frac * 0.0)
        return self.init_value + (self.end_value - self.init_value) * frac


@attrs.frozen
class ExponentialDecay:
    init_value: float
    transition_steps: int
    decay_rate: float
    transition_begin: int = 0
    staircase: bool = False
    end_value: float | None = None

    def __call__(self, count: Any) -> Tensor[Any]:
        p = clip(_steps(count) - self.transition_begin, 0.0, None) / self.transition_steps
        if self.staircase:
            p = floor(p)
        # decay_rate ** p as exp(p * log(decay_rate)): p is a tensor, the base a positive constant
        value = self.init_value * exp(p * math.log(self.decay_rate))
        if self.end_value is not None:
            # a bound in the direction of the decay (a lower bound when decaying, an upper one when growing)
            value = clip(value, self.end_value, None) if self.decay_rate < 1 else clip(value, None, self.end_value)
        return value


@attrs.frozen
class CosineDecay:
    init_value: float
    decay_steps: int
    alpha: float = 0.0
    exponent: float = 1.0

    def __call__(self, count: Any) -> Tensor[Any]:
        frac = clip(_steps(count) / self.decay_steps, 0.0, 1.0)
        cosine = 0.5 * (1.0 + cos(math.pi * frac))
        if self.exponent != 1.0:
            cosine = cosine**self.exponent
        return self.init_value * ((1.0 - self.alpha) * cosine + self.alpha)


@attrs.frozen
class Joined:
    schedules: tuple[Schedule, ...]
    boundaries: tuple[int, ...]

    def __call__(self, count: Any) -> Tensor[Any]:
        steps = _steps(count)
        value = self.schedules[0](steps)
        # later pieces count from their boundary; a select per boundary, no Python branch on the count
        for boundary, schedule in zip(self.boundaries, self.schedules[1:]):
            value = where(steps >= boundary, schedule(steps - boundary), value)
        return value


def _positive_int(name: str, what: str, value: int, allow_zero: bool = False) -> None:
    if type(value) is not int or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name}: {what} must be an int {'>= 0' if allow_zero else '> 0'}, got {value!r}")


def constant(value: float) -> Constant:
    """The schedule ``value`` at every step."""
    return Constant(float(value))


def linear_schedule(
    init_value: float, end_value: float, transition_steps: int, transition_begin: int = 0
) -> Linear:
    """``init_value`` until ``transition_begin``, then linearly to ``end_value`` over ``transition_steps`` steps.
    With ``transition_steps=0`` it jumps to ``end_value`` at ``transition_begin`` (Optax stays at ``init_value``),
    so ``linear_warmup(peak, 0)`` is the constant ``peak``."""
    _positive_int("linear_schedule", "transition_steps", transition_steps, allow_zero=True)
    _positive_int("linear_schedule", "transition_begin", transition_begin, allow_zero=True)
    return Linear(float(init_value), float(end_value), transition_steps, transition_begin)


def linear_warmup(peak_value: float, warmup_steps: int, init_value: float = 0.0) -> Linear:
    """From ``init_value`` linearly to ``peak_value`` over ``warmup_steps`` steps, then constant."""
    return linear_schedule(init_value, peak_value, warmup_steps)


def exponential_decay(
    init_value: float, transition_steps: int, decay_rate: float, transition_begin: int = 0,
    staircase: bool = False, end_value: float | None = None,
) -> ExponentialDecay:
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)`` (the exponent floored with
    ``staircase``; constant before ``transition_begin``), bounded by ``end_value`` when given."""
    _positive_int("exponential_decay", "transition_steps", transition_steps)
    _positive_int("exponential_decay", "transition_begin", transition_begin, allow_zero=True)
    if not decay_rate > 0:
        raise ValueError(f"exponential_decay: decay_rate must be > 0, got {decay_rate!r}")
    end = None if end_value is None else float(end_value)
    return ExponentialDecay(float(init_value), transition_steps, float(decay_rate), transition_begin, staircase, end)


def cosine_decay(init_value: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0) -> CosineDecay:
    """``init_value * ((1 - alpha) * c + alpha)`` with ``c = (0.5 * (1 + cos(pi * min(count / decay_steps, 1))))
    ** exponent``: from ``init_value`` down to ``alpha * init_value`` at ``decay_steps``, constant after."""
    _positive_int("cosine_decay", "decay_steps", decay_steps)
    return CosineDecay(float(init_value), decay_steps, float(alpha), float(exponent))


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Joined:
    """``schedules[i]`` from ``boundaries[i - 1]`` on, each counting steps from its own start."""
    if len(schedules) != len(boundaries) + 1 or not schedules:
        raise ValueError(
            f"join_schedules: needs one more schedule than boundaries, got {len(schedules)} schedules and "
            f"{len(boundaries)} boundaries"
        )
    for b in boundaries:
        _positive_int("join_schedules", "every boundary", b, allow_zero=True)
    if list(boundaries) != sorted(boundaries):
        raise ValueError(f"join_schedules: boundaries must be increasing, got {list(boundaries)}")
    return Joined(tuple(schedules), tuple(boundaries))


def warmup_cosine_decay(
    init_value: float, peak_value: float, warmup_steps: int, decay_steps: int, end_value: float = 0.0,
    exponent: float = 1.0,
) -> Joined:
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then a cosine decay to
    ``end_value`` at step ``decay_steps`` (counted from 0, warmup included, as in Optax), constant after."""
    _positive_int("warmup_cosine_decay", "warmup_steps", warmup_steps, allow_zero=True)
    if type(decay_steps) is not int or decay_steps <= warmup_steps:
        raise ValueError(
            f"warmup_cosine_decay: decay_steps ({decay_steps!r}) must be an int > warmup_steps ({warmup_steps})"
        )
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    warmup = linear_schedule(init_value, peak_value, warmup_steps)
    decay = CosineDecay(float(peak_value), decay_steps - warmup_steps, float(alpha), float(exponent))
    return Joined((warmup, decay), (warmup_steps,))
