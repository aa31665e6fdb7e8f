"""Embeddings: a table of vectors looked up by integer ids; the gradient scatters (adds) into the used rows."""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar

import attrs
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, Integer, f32
from ...staging import dtypes as _dt
from ...tensor import Tensor
from ..numpy import take
from ..numpy._core import as_tensor, describe, dtype_error, op, shape_error
from ..random import Key, normal

DT = TypeVar("DT", bound=DType)
IT = TypeVar("IT", bound=Integer)
V = TypeVar("V")
F = TypeVar("F")
S = TypeVarTuple("S")


@op
def embedding(table: Tensor[DT, V, F], ids: Tensor[IT, Unpack[S]]) -> Tensor[DT, Unpack[S], F]:
    """Rows of ``table`` ``(vocab, features)`` at integer ``ids`` of any shape: ``(*ids.shape, features)``.

    Negative ids count from the end (as in NumPy); ids out of range clamp into range, eagerly too (no IndexError:
    the lookup always runs compiled, like a staged ``take``)."""
    t, i = as_tensor(table), as_tensor(ids)
    if t.aval.ndim != 2:
        raise shape_error("embedding", f"the table must be (vocab, features), got {describe(table)}")
    if not _dt.is_integer(i.aval.dtype):
        raise dtype_error("embedding", f"ids must be integers, got {describe(ids)}")
    return take(table, ids, axis=0)


@attrs.frozen
class Embed(Generic[DT, V, F]):
    """An embedding layer: ``Embed[f32, Vocab, Features]`` maps ``Tensor[i32, *S]`` ids to
    ``Tensor[f32, *S, Features]``."""

    table: Tensor[DT, V, F]

    def __call__(self, ids: Tensor[IT, Unpack[S]]) -> Tensor[DT, Unpack[S], F]:
        return embedding(self.table, ids)


def embed(key: Key, num_embeddings: int, features: int, dtype: type[Floating] | Any = f32) -> Embed[Any, Any, Any]:
    """An ``Embed`` layer with a normal table of standard deviation ``1 / sqrt(features)`` (Flax's default scale)."""
    return Embed(normal(key, (num_embeddings, features), dtype) * (1.0 / math.sqrt(max(features, 1))))
