"""Losses. Per-example losses keep the batch axes (take ``.mean()`` yourself); ``mse`` is already a mean."""

from __future__ import annotations

from typing import Any, TypeVar

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, Integer, f32, to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...staging.primitives.slicing import iota
from ...tensor import Tensor
from ..numpy import mean, sum
from ..numpy._core import as_tensor, describe, dtype_error, op, parse_shape, shape_error, wrap
from ._activations import log_softmax

DT = TypeVar("DT", bound=DType)
S_ = TypeVarTuple("S_")
K = TypeVar("K")
IT = TypeVar("IT", bound=Integer)


@op
def one_hot(labels: Tensor[Any, Unpack[S_]], num_classes: int, dtype: type[Floating] | Any = f32) -> Tensor[Any, Unpack[S_], Any]:
    """``labels`` (integers) as one-hot vectors along a new last axis of size ``num_classes``."""
    t = as_tensor(labels)
    if not _dt.is_integer(t.aval.dtype):
        raise dtype_error("one_hot", f"labels must be integers, got {describe(labels)}")
    (classes_size,), _ = parse_shape("one_hot", (num_classes,))  # an int >= 0: XLA would crash on a float size
    shape = (*t.aval.shape, classes_size)
    dims = (*t.aval.dims, None)
    spread = S.broadcast_in_dim(t.atom, shape, tuple(range(t.aval.ndim)), dims)
    classes = iota(t.aval.dtype, shape, t.aval.ndim, dims)
    return wrap(E.convert(bind(E.eq_p, spread, classes), to_numpy(dtype)))


@op
def softmax_cross_entropy(
    logits: Tensor[DT, Unpack[S_], K], labels: Tensor[DT, Unpack[S_], K], axis: int | type = -1
) -> Tensor[DT, Unpack[S_]]:
    """``-sum(labels * log_softmax(logits), axis)``: cross-entropy against class probabilities (or one-hots)."""
    lg, lb = as_tensor(logits), as_tensor(labels)
    if lg.aval.shape != lb.aval.shape:
        raise shape_error(
            "softmax_cross_entropy", f"logits {describe(logits)} and labels {describe(labels)} must have one shape"
        )
    return -sum(lb * log_softmax(lg, axis), axis=axis)


@op
def softmax_cross_entropy_with_integer_labels(
    logits: Tensor[DT, Unpack[S_], K], labels: Tensor[IT, Unpack[S_]]
) -> Tensor[DT, Unpack[S_]]:
    """Cross-entropy of logits ``(..., classes)`` against integer class indices ``(...)``."""
    lg, lb = as_tensor(logits), as_tensor(labels)
    if lg.aval.ndim == 0 or lg.aval.shape[:-1] != lb.aval.shape:
        raise shape_error(
            "softmax_cross_entropy_with_integer_labels",
            f"labels {describe(labels)} must have the logits' shape {describe(logits)} without the class axis",
        )
    targets = one_hot(lb, lg.aval.shape[-1], lg.aval.dtype)
    return -sum(targets * log_softmax(lg), axis=-1)


@op
def mse(predictions: Tensor[DT, Unpack[S_]], targets: Tensor[DT, Unpack[S_]]) -> Tensor[DT]:
    """Mean squared error over every element."""
    diff = as_tensor(predictions) - as_tensor(targets)
    return mean(diff * diff)
