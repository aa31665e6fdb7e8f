"""Indexing: ``x[...]`` and the functional ``x.at[...]`` updates (owned by the indexing work; see issue #2)."""

from __future__ import annotations

from typing import Any, Generic

from typing_extensions import Unpack

from ...tensor import DT, Shape, Tensor

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


def getitem(x: AnyTensor, index: Any) -> AnyTensor:
    raise NotImplementedError("indexing lands with the slice/gather primitives")


class AtIndexer(Generic[DT, Unpack[Shape]]):
    def __init__(self, x: Tensor[DT, Unpack[Shape]]) -> None:
        self.x = x
