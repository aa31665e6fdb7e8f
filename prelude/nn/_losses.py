"""Losses. Per-example losses keep the batch axes (take ``.mean()`` yourself); elementwise ones (the binary
cross-entropies, ``huber_loss``, ``smooth_l1_loss``) keep every axis; ``mse`` and ``l1_loss`` are already means.

Operands must share one dtype (labels of a float loss are floats of the predictions' dtype)."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import DType, Floating, Integer, f32, to_numpy
from ...staging import dtypes as _dt
from ...staging.builder import bind
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...staging.primitives.slicing import iota
from ...tensor import Tensor
from ...custom_derivatives import stop_gradient
from ..numpy import abs, isfinite, log, max as max_, mean, sqrt, sum, where
from ..numpy._core import (
    as_tensor, describe, dtype_error, float_operand, normalize_axes, op, parse_shape, shape_error, wrap,
)
from ..numpy.static_settings import static_int
from ._activations import _softplus, log_softmax

DT = TypeVar("DT", bound=DType)
S_ = TypeVarTuple("S_")
K = TypeVar("K")
IT = TypeVar("IT", bound=Integer)


@op
def one_hot(
    labels: Tensor[Any, Unpack[S_]], num_classes: int, dtype: type[Floating] | Any = f32
) -> Tensor[Any, Unpack[S_], Any]:
    """``labels`` (integers) as one-hot vectors along a new last axis of size ``num_classes``."""
    t = as_tensor(labels)
    if not _dt.is_integer(t.aval.dtype):
        raise dtype_error("one_hot", f"labels must be integers, got {describe(labels)}")
    (classes_size,), _ = parse_shape("one_hot", (static_int("one_hot", num_classes, "num_classes"),))  # >= 0
    return wrap(E.convert(_is_label(t, classes_size, None).atom, to_numpy(dtype)))


def _is_label(labels: Any, classes: int, class_dim: Any) -> Any:
    """Booleans ``labels[..., None] == arange(classes)`` (the last axis named ``class_dim``)."""
    shape = (*labels.aval.shape, classes)
    dims = (*labels.aval.dims, class_dim)
    spread = S.broadcast_in_dim(labels.atom, shape, tuple(range(labels.aval.ndim)), dims)
    return wrap(bind(E.eq_p, spread, iota(labels.aval.dtype, shape, labels.aval.ndim, dims)))


@op
def softmax_cross_entropy(
    logits: Tensor[DT, Unpack[S_], K], labels: Tensor[DT, Unpack[S_], K], axis: int | type = -1,
    label_smoothing: float = 0.0,
) -> Tensor[DT, Unpack[S_]]:
    """``-sum(labels * log_softmax(logits), axis)``: cross-entropy against class probabilities (or one-hots);
    ``label_smoothing`` mixes the labels with the uniform distribution: ``(1 - s) * labels + s / classes``.
    Classes with label 0 add 0 (as in Optax), so a masked-out ``-inf`` logit with label 0 gives no NaN."""
    name = "softmax_cross_entropy"
    lg, lb = as_tensor(logits), as_tensor(labels)
    lb_: Any = lb
    if lg.aval.shape != lb.aval.shape:
        raise shape_error(name, f"logits {describe(logits)} and labels {describe(labels)} must have one shape")
    if label_smoothing:
        (index,) = normalize_axes(name, axis, lg, allow_none=False)
        lb_ = _smooth(name, lb, label_smoothing, lg.aval.shape[index])
    return _cross_entropy(lb_, log_softmax(lg, axis), axis)  # type: ignore[no-any-return]


def _cross_entropy(labels: Any, log_probs: Any, axis: int | type) -> Any:
    """``-sum(labels * log_probs, axis)`` with zero-label terms 0: ``0 * -inf`` would be NaN."""
    return -sum(where(labels == 0, 0.0, labels * log_probs), axis=axis)


@op
def softmax_cross_entropy_with_integer_labels(
    logits: Tensor[DT, Unpack[S_], K], labels: Tensor[IT, Unpack[S_]], label_smoothing: float = 0.0
) -> Tensor[DT, Unpack[S_]]:
    """Cross-entropy of logits ``(..., classes)`` against integer class indices ``(...)``, optionally against
    label-smoothed targets as in ``softmax_cross_entropy``. A label outside ``[0, classes)`` gives a NaN loss (the
    labels are data, so this cannot be a staging-time error; NumPy-style negative indices are not accepted)."""
    name = "softmax_cross_entropy_with_integer_labels"
    lg, lb = as_tensor(logits), as_tensor(labels)
    if lg.aval.ndim == 0 or lg.aval.shape[:-1] != lb.aval.shape:
        raise shape_error(
            name, f"labels {describe(labels)} must have the logits' shape {describe(logits)} without the class axis"
        )
    classes = lg.aval.shape[-1]
    if not _dt.is_integer(lb.aval.dtype):
        raise dtype_error(name, f"labels must be integers, got {describe(labels)}")
    if label_smoothing:
        targets = _smooth(name, one_hot(lb, classes, lg.aval.dtype), label_smoothing, classes)
        loss = _cross_entropy(targets, log_softmax(lg), -1)
    else:  # the label's log-probability, picked by a mask: no float one-hot, no products
        loss = -sum(where(_is_label(lb, classes, lg.aval.dims[-1]), log_softmax(lg), 0.0), axis=-1)
    # one_hot of an out-of-range label is all zeros: a loss of 0 would silently drop the example from training
    return where(_in_range(lb, classes), loss, float("nan"))


def _in_range(labels: Any, classes: int) -> Any:
    """``0 <= labels < classes``; ``classes`` past the labels' dtype bounds nothing (and would not fit in it)."""
    below = labels < classes if classes <= np.iinfo(labels.aval.dtype).max else labels == labels
    return below if not _dt.is_signed(labels.aval.dtype) else below & (labels >= 0)


def _smooth(name: str, labels: Tensor[Any, Unpack[S_]], amount: float, classes: int) -> Tensor[Any, Unpack[S_]]:
    if not 0 <= amount <= 1:
        raise ValueError(f"{name}: label_smoothing must be in [0, 1], got {amount!r}")
    return (1 - amount) * labels + amount / max(classes, 1)


@op
def mse(predictions: Tensor[DT, Unpack[S_]], targets: Tensor[DT, Unpack[S_]]) -> Tensor[DT]:
    """Mean squared error over every element (one shape: a (N,) target against (N, 1) predictions would broadcast
    into an (N, N) mean silently)."""
    x, y = _pair("mse", predictions, targets, ("predictions", "targets"))
    diff = x - y
    return mean(diff * diff)


def _pair(name: str, a: Any, b: Any, what: tuple[str, str]) -> tuple[Tensor[Any], Tensor[Any]]:
    """Two float operands of one shape and dtype (losses never broadcast targets against predictions)."""
    x, y = float_operand(name, a), as_tensor(b)
    if x.aval.shape != y.aval.shape:
        raise shape_error(name, f"{what[0]} {describe(a)} and {what[1]} {describe(b)} must have one shape")
    if x.aval.dtype != y.aval.dtype:
        raise dtype_error(name, f"{what[0]} {describe(a)} and {what[1]} {describe(b)} must have one dtype")
    return x, y


@op
def binary_cross_entropy(
    probabilities: Tensor[DT, Unpack[S_]], labels: Tensor[DT, Unpack[S_]], eps: float = 1e-7
) -> Tensor[DT, Unpack[S_]]:
    """``-(y * log(p) + (1 - y) * log(1 - p))`` per element, with ``p`` and ``1 - p`` clipped to at least ``eps``
    (Keras' convention) so that saturated probabilities give a finite loss and gradient (prefer the logits form
    where you have logits)."""
    p, y = _pair("binary_cross_entropy", probabilities, labels, ("probabilities", "labels"))
    # 1 - p clipped itself, not p into [eps, 1 - eps]: in bf16/f16 1 - eps rounds to 1 and log(1 - 1) = -inf
    # (1 - p is exact for p >= 0.5, so this loses nothing against log1p where it matters)
    q = 1 - p
    return -(y * log(where(p < eps, eps, p)) + (1 - y) * log(where(q < eps, eps, q)))


@op
def sigmoid_binary_cross_entropy(
    logits: Tensor[DT, Unpack[S_]], labels: Tensor[DT, Unpack[S_]]
) -> Tensor[DT, Unpack[S_]]:
    """Binary cross-entropy of ``sigmoid(logits)`` against ``labels`` in [0, 1], per element, computed as
    ``softplus(x) - x * y``: exact and finite for any logits (also ``binary_cross_entropy_with_logits``)."""
    x, y = _pair("sigmoid_binary_cross_entropy", logits, labels, ("logits", "labels"))
    return _softplus(x) - x * y


binary_cross_entropy_with_logits = sigmoid_binary_cross_entropy


@op
def huber_loss(
    predictions: Tensor[DT, Unpack[S_]], targets: Tensor[DT, Unpack[S_]], delta: float = 1.0
) -> Tensor[DT, Unpack[S_]]:
    """Per element: ``0.5 * d**2`` where ``|d| <= delta``, else ``delta * (|d| - 0.5 * delta)``, ``d`` the error."""
    return _huber("huber_loss", predictions, targets, delta)  # type: ignore[no-any-return]


@op
def smooth_l1_loss(
    predictions: Tensor[DT, Unpack[S_]], targets: Tensor[DT, Unpack[S_]], beta: float = 1.0
) -> Tensor[DT, Unpack[S_]]:
    """PyTorch's smooth L1, per element: ``huber_loss(p, t, delta=beta) / beta`` (quadratic below ``beta``)."""
    return _huber("smooth_l1_loss", predictions, targets, beta) / beta  # type: ignore[no-any-return]


def _huber(name: str, predictions: Any, targets: Any, delta: float) -> Any:
    if not delta > 0:
        raise ValueError(f"{name}: the threshold must be > 0, got {delta!r}")
    p, t = _pair(name, predictions, targets, ("predictions", "targets"))
    err = abs(p - t)
    inside = where(err > delta, delta, err)  # the quadratic part, its derivative zero past delta
    return 0.5 * inside * inside + delta * (err - inside)


@op
def l1_loss(predictions: Tensor[DT, Unpack[S_]], targets: Tensor[DT, Unpack[S_]]) -> Tensor[DT]:
    """Mean absolute error over every element (like ``mse``)."""
    p, t = _pair("l1_loss", predictions, targets, ("predictions", "targets"))
    return mean(abs(p - t))


@op
def kl_divergence(
    log_predictions: Tensor[DT, Unpack[S_], K], targets: Tensor[DT, Unpack[S_], K], axis: int | type = -1
) -> Tensor[DT, Unpack[S_]]:
    """``KL(targets || predictions) = sum(t * (log(t) - log_predictions), axis)`` from log-probabilities and
    probabilities; terms with ``t == 0`` count 0."""
    name = "kl_divergence"
    lp, t = _pair(name, log_predictions, targets, ("log_predictions", "targets"))
    (index,) = normalize_axes(name, axis, lp, allow_none=False)
    positive = t > 0
    t_log_t = where(positive, t * log(where(positive, t, 1.0)), 0.0)  # log(1) on zeros keeps the gradient finite
    return sum(t_log_t - t * lp, axis=index)


@op
def cosine_similarity(
    x: Tensor[DT, Unpack[S_], K], y: Tensor[DT, Unpack[S_], K], axis: int | type = -1, eps: float = 1e-8
) -> Tensor[DT, Unpack[S_]]:
    """``sum(x * y) / max(|x| * |y|, eps)`` along ``axis`` (0 for a zero vector, not NaN)."""
    name = "cosine_similarity"
    a, b = _pair(name, x, y, ("x", "y"))
    (index,) = normalize_axes(name, axis, a, allow_none=False)
    # Each vector divided by its largest magnitude first: squares of entries past ~1.8e19 (f32) or ~256 (f16)
    # overflow. The cosine does not depend on that scale, and ``eps`` scales with it, so the result (and, the
    # scales held constant, its gradient) is unchanged.
    sa, sb = _max_abs(a, index), _max_abs(b, index)
    a_, b_ = a / sa, b / sb
    norms = _safe_sqrt(sum(a_ * a_, axis=index)) * _safe_sqrt(sum(b_ * b_, axis=index))
    floor = eps / (sa * sb).squeeze(index)  # inf where the scales underflow: then |x| |y| < eps and the result is 0
    return sum(a_ * b_, axis=index) / where(norms > floor, norms, floor)


def _max_abs(x: Any, axis: int) -> Any:
    """``max(|x|)`` along ``axis`` (kept), 1 where it is 0 or not finite, as a constant for autodiff."""
    peak = stop_gradient(max_(abs(x), axis=axis, keepdims=True))
    return where((peak > 0) & isfinite(peak), peak, 1.0)


def _safe_sqrt(x: Any) -> Any:
    """``sqrt(x)`` for ``x >= 0`` with a zero (not NaN) gradient at 0."""
    positive = x > 0
    return where(positive, sqrt(where(positive, x, 1.0)), 0.0)
