"""Dims are types: ``class Batch(Dim): ...`` is symbolic (its size is bound at stage time);
``class One(Dim, size=1)`` is fixed. ``Literal[n]`` in a Tensor annotation is a fixed anonymous dim."""

from __future__ import annotations

from typing import Any, ClassVar


class Dim:
    """Base class of named dims; subclasses are used as types, never instantiated."""

    size: ClassVar[int | None] = None

    def __init_subclass__(cls, size: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"dim {cls.__name__}: size must be a non-negative int, got {size!r}")
        cls.size = size

    def __init__(self) -> None:
        raise TypeError("dims are types, not values: write Tensor[f32, Batch], not Batch()")


def dim_name(dim: type[Dim]) -> str:
    return dim.__name__
