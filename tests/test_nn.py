"""``ts.nn``: activations, softmax with int or Dim axes, losses and initializers, against float64 NumPy."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
from scipy import special

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...


class Classes(Dim): ...


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def test_activations_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5)) * 3
    x[0, 0] = 0.0

    @ts.program
    def apply(x: Tensor[f64, Batch, Classes]) -> Any:
        return ts.nn.relu(x), ts.nn.silu(x), ts.nn.gelu(x), ts.nn.gelu(x, approximate=False), ts.nn.sigmoid(x)

    relu, silu, gelu_tanh, gelu_erf, sigmoid = (np.asarray(v) for v in apply(x))
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_allclose(silu, x / (1 + np.exp(-x)), rtol=1e-12)
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu_tanh, tanh_form, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gelu_erf, 0.5 * x * (1 + special.erf(x / np.sqrt(2))), atol=1e-6)
    np.testing.assert_allclose(sigmoid, 1 / (1 + np.exp(-x)), rtol=1e-12)


def test_softmax_and_log_softmax_take_an_int_or_a_dim(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4)) * 50  # large logits: no overflow

    @ts.program
    def both(x: Tensor[f64, Batch, Classes]) -> Any:
        return ts.nn.softmax(x, axis=Classes), ts.nn.log_softmax(x, axis=0), ts.nn.softmax(x, axis=Batch)

    by_class, log_by_batch, by_batch = (np.asarray(v) for v in both(x))
    np.testing.assert_allclose(by_class, np.exp(_log_softmax(x, 1)), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(log_by_batch, _log_softmax(x, 0), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(by_batch, np.exp(_log_softmax(x, 0)), rtol=1e-12, atol=1e-300)
    assert np.isfinite(np.asarray(ts.nn.log_softmax(np.array([1e4, 0.0], np.float32)))).all()


def test_cross_entropy_losses_and_one_hot(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((6, 4))
    labels = rng.integers(0, 4, 6).astype(np.int32)
    onehot = np.eye(4)[labels]
    expected = -(onehot * _log_softmax(logits, 1)).sum(axis=1)

    @ts.program
    def losses(logits: Tensor[f64, Batch, Classes], labels: Tensor[i32, Batch]) -> Any:
        targets = ts.nn.one_hot(labels, 4, ts.f64)
        return (
            ts.nn.softmax_cross_entropy(logits, targets),
            ts.nn.softmax_cross_entropy_with_integer_labels(logits, labels),
            targets,
            ts.nn.mse(logits, targets),
        )

    soft, integer, targets, mse = (np.asarray(v) for v in losses(logits, labels))
    np.testing.assert_allclose(soft, expected, rtol=1e-12)
    np.testing.assert_allclose(integer, expected, rtol=1e-12)
    np.testing.assert_array_equal(targets, onehot)
    assert float(mse) == pytest.approx(((logits - onehot) ** 2).mean(), rel=1e-12)


def test_cross_entropy_gradient_is_softmax_minus_labels(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((5, 3))
    labels = rng.integers(0, 3, 5).astype(np.int32)

    def loss(logits: Tensor[f64, Batch, Classes], labels: Tensor[i32, Batch]) -> Tensor[f64]:
        return ts.nn.softmax_cross_entropy_with_integer_labels(logits, labels).sum()

    grad = np.asarray(ts.grad(loss)(logits, labels))
    np.testing.assert_allclose(grad, np.exp(_log_softmax(logits, 1)) - np.eye(3)[labels], rtol=1e-10, atol=1e-12)


def test_relu_derivative_is_zero_at_zero() -> None:
    grad = ts.grad(lambda x: tnp.sum(ts.nn.relu(x)))(np.array([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(grad), [0.0, 0.0, 1.0])


def test_initializers_have_the_right_scale() -> None:
    key = ts.random.key(0)
    fan_in, fan_out = 400, 200
    glorot = np.asarray(ts.nn.glorot_uniform(key, (fan_in, fan_out)))
    limit = np.sqrt(6 / (fan_in + fan_out))
    assert glorot.shape == (fan_in, fan_out) and glorot.dtype == np.float32
    assert np.abs(glorot).max() <= limit and np.abs(glorot).max() > 0.99 * limit
    he = np.asarray(ts.nn.he_normal(key, (fan_in, fan_out), ts.f64))
    assert he.dtype == np.float64 and he.std() == pytest.approx(np.sqrt(2 / fan_in), rel=0.02)
    assert np.asarray(ts.nn.glorot_normal(key, (fan_in, fan_out))).std() == pytest.approx(
        np.sqrt(2 / (fan_in + fan_out)), rel=0.02
    )
    assert np.abs(np.asarray(ts.nn.he_uniform(key, (fan_in, fan_out)))).max() <= np.sqrt(6 / fan_in)


def test_errors() -> None:
    with pytest.raises(ts.DTypeError, match="log_softmax needs a floating-point operand"):
        ts.nn.log_softmax(np.array([1, 2], np.int32))
    with pytest.raises(ts.ShapeError, match=r"labels i32\[3\] must have the logits' shape f32\[2, 4\]"):
        ts.nn.softmax_cross_entropy_with_integer_labels(np.zeros((2, 4), np.float32), np.zeros(3, np.int32))
    with pytest.raises(ts.ShapeError, match="rank >= 2"):
        ts.nn.glorot_uniform(ts.random.key(0), (5,))
    with pytest.raises(ts.ShapeError, match=r"(?s)mse: predictions f32\[4, 1\] and targets f32\[4\] must have one shape"
                       r".*test_nn\.py:\d+"):
        ts.nn.mse(np.zeros((4, 1), np.float32), np.zeros(4, np.float32))  # would broadcast to a (4, 4) mean

    @ts.program
    def bad_axis(x: Tensor[f32, Batch, Classes]) -> Any:
        class Hidden(Dim): ...

        return ts.nn.softmax(x, axis=Hidden)

    with pytest.raises(ts.ShapeError, match="axis Hidden is not a dim of the operand"):
        bad_axis(np.zeros((2, 3), np.float32))


class Hidden(Dim): ...


@attrs.frozen
class TwoLayer:
    first: ts.nn.Dense[f64, Classes, Hidden]
    second: ts.nn.Dense[f64, Hidden, Classes]


def test_dense_layers_nest_in_parameter_classes(rng: np.random.Generator) -> None:
    k1, k2 = ts.random.split(ts.random.key(0))
    net = TwoLayer(ts.nn.dense(k1, 4, 5, ts.nn.he_normal, ts.f64), ts.nn.dense(k2, 5, 4, dtype=ts.f64))
    x = rng.standard_normal((3, 4))

    @ts.program
    def loss(net: TwoLayer, x: Tensor[f64, Batch, Classes]) -> Tensor[f64]:
        return tnp.sum(net.second(ts.nn.relu(net.first(x))))

    w1, b1, w2, b2 = (np.asarray(a) for a in (net.first.w, net.first.b, net.second.w, net.second.b))
    assert w1.shape == (4, 5) and not b1.any() and w2.shape == (5, 4)
    expected = (np.maximum(x @ w1 + b1, 0) @ w2 + b2).sum()
    assert float(loss(net, x)) == pytest.approx(expected, rel=1e-12)
    grads = ts.grad(loss)(net, x)
    assert isinstance(grads, TwoLayer) and isinstance(grads.first, ts.nn.Dense)
    np.testing.assert_allclose(np.asarray(grads.second.b), np.full(4, 3.0), rtol=1e-12)


def test_initializers_accept_empty_weights() -> None:
    key = ts.random.key(0)
    for init in (ts.nn.he_normal, ts.nn.he_uniform, ts.nn.glorot_normal, ts.nn.glorot_uniform):
        assert init(key, (0, 4)).shape == (0, 4)
