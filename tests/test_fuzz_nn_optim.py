"""Fuzzing ``ts.nn`` and ``ts.optim`` against NumPy float64 reference formulas, with seeded inputs.

nn: activations (tails included), softmax/log_softmax at extreme logits, losses (label smoothing, integer labels,
``-inf`` logits), normalizations (constant inputs), attention (masks, fully masked rows, causal), pooling,
dropout and embeddings; gradients against central finite differences (f64); errors name the dims.
optim: every optimizer and transformation against a hand-written NumPy update rule over several staged steps,
on pytrees with mixed dtypes and on empty trees; the state keeps its structure, shapes and dtypes (so a train
step can feed it back or donate it).

Conventions checked (Optax's unless said): schedules see the 0-based step count before the update; Adam and
AdamW divide by ``sqrt(v_hat) + eps`` with both moments bias-corrected; AdamW and Lion subtract
``lr * weight_decay * p`` (decoupled, scaled by the learning rate, from the pre-update parameters); SGD's
Nesterov form is PyTorch's ``p -= lr * (g + momentum * v)`` with ``v = momentum * v + g``; RMSProp (PyTorch's
form) and Adagrad (Optax's defaults: accumulator from 0.1, ``eps=1e-7``) add ``eps`` outside the root.

Deliberate differences from NumPy / JAX reference formulas:
- ``softmax``/``log_softmax`` of a row of only ``-inf`` (or with a ``+inf``) is NaN, as in JAX and the plain
  formula; ``dot_product_attention`` instead gives zeros for a fully masked query (JAX: the mean of the values).
- Cross-entropy terms with label 0 count 0 (as Optax), so a ``-inf`` logit with label 0 is finite; an integer
  label outside ``[0, classes)`` gives a NaN loss (JAX's gather would clamp it to a valid class).
- ``embedding`` clamps out-of-range ids (as a staged ``take``); ``cosine_similarity`` is 0 for a zero vector.
- Activations of ``±inf`` built from products (``silu``, ``gelu``, ``mish``, ``softsign``) are NaN, as in JAX.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import nn
from tensorstage import optim as O
from tensorstage import random as R

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
ACTIVATIONS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6)),
    "leaky_relu": (lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "selu": (nn.selu, lambda x: SELU[1] * np.where(x > 0, x, SELU[0] * np.expm1(np.minimum(x, 0)))),
    "sigmoid": (nn.sigmoid, _sigmoid),
    "softplus": (nn.softplus, _softplus),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_softplus(-x)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x)),
    "gelu": (nn.gelu, lambda x: x * _sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_erf": (lambda x: nn.gelu(x, approximate=False), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "softsign": (nn.softsign, lambda x: x / (1 + np.abs(x))),
    "mish": (nn.mish, lambda x: x * np.tanh(_softplus(x))),
    "erf": (nn.erf, _erf),
    "glu": (nn.glu, lambda x: x[..., :4] * _sigmoid(x[..., 4:])),
}
TAILS = np.array([-3e4, -700.0, -90.0, -30.0, -17.0, -1e-30, 0.0, 1e-30, 17.0, 30.0, 90.0, 700.0, 3e4, 5.5])


def _activation_inputs(rng: np.random.Generator, dtype: Any) -> np.ndarray:
    body = rng.standard_normal((3, 8)) * 4
    return np.concatenate([body.ravel(), TAILS, [-2.0, 3.0]]).reshape(-1, 8).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_match_numpy_including_tails(rng: np.random.Generator, dtype: Any) -> None:
    x = _activation_inputs(rng, dtype)
    got = ts.program(lambda v: {n: f(v) for n, (f, _) in ACTIVATIONS.items()})(x)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    for name, (_, ref) in ACTIVATIONS.items():
        want = ref(x.astype(np.float64))
        out = np.asarray(got[name])
        assert out.dtype == dtype and out.shape == want.shape, name
        # the erf form's 1 + erf(x) cancels in the left tail: an absolute error of about eps * |x| there
        # XLA flushes subnormals; the erf form's 1 + erf(x) cancels in the left tail (an error of eps * |x|)
        atol = tol * (np.abs(x) + 1) if name in ("erf", "gelu_erf") else 1e3 * float(np.finfo(dtype).tiny)
        bad = ~(np.abs(out - want) <= atol + 4 * tol * np.abs(want))
        assert not np.any(bad), (name, x[bad], out[bad], want[bad])
    eager = nn.softplus(x)  # eager agrees with staged
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(got["softplus"]))


def test_activations_propagate_nan() -> None:
    """Regression: relu and relu6 of NaN gave 0 (a select on ``x > 0``); NumPy and JAX give NaN, as every
    activation here must."""
    x = np.full(8, np.nan, np.float32)
    got = ts.program(lambda v: {n: f(v) for n, (f, _) in ACTIVATIONS.items()})(x)
    for name, out in got.items():
        assert np.isnan(np.asarray(out)).all(), (name, out)


def _central_difference(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    return (f(x + h) - f(x - h)) / (2 * h)


def test_activation_gradients_match_finite_differences_and_stay_finite(rng: np.random.Generator) -> None:
    x = np.concatenate([rng.uniform(-6, 6, 40), [-1e4, -200.0, 200.0, 1e4]])
    x = x[np.abs(x) > 1e-3]  # away from the kinks at 0 (and relu6's at 6 by the range)
    elementwise = {n: f for n, (f, _) in ACTIVATIONS.items() if n != "glu"}
    grads = ts.program(lambda v: {n: ts.vmap(ts.grad(f))(v) for n, f in elementwise.items()})(x)
    for name, f in elementwise.items():
        g = np.asarray(grads[name])
        assert np.all(np.isfinite(g)), (name, x[~np.isfinite(g)])
        ref = _central_difference(ACTIVATIONS[name][1], x)
        near_kink = (name in ("relu6", "hard_tanh")) & (np.abs(np.abs(x) - (6 if name == "relu6" else 1)) < 1e-3)
        np.testing.assert_allclose(g[~near_kink], ref[~near_kink], rtol=1e-6, atol=1e-7, err_msg=name)


# -------------------------------------------------------------------------------------------------- softmax


def _softmax_reference(x: np.ndarray) -> np.ndarray:
    peak = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - peak)
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax_at_extreme_logits(rng: np.random.Generator, dtype: Any) -> None:
    big = float(np.finfo(dtype).max) / 4
    rows = [rng.standard_normal(5) * 3, [big, -big, 0.0, 1.0, big], [-np.inf, 0.0, -np.inf, 1.0, -big],
            [-1e30, -1e30 + 1e24, -1e30, -1e30, -1e30], [0.0] * 5, [-np.inf] * 5, [np.inf, 0.0, 1.0, 2.0, 3.0]]
    x = np.array(rows, dtype)
    sm, lsm, sm0 = ts.program(lambda v: (nn.softmax(v), nn.log_softmax(v), nn.softmax(v, axis=0)))(x)
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        want = _softmax_reference(x64)
    ok = slice(0, 5)  # rows with a finite maximum
    np.testing.assert_allclose(np.asarray(sm)[ok], want[ok], rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(np.asarray(sm)[ok].sum(-1), 1.0, rtol=1e-6)
    shifted = x64[ok] - x64[ok].max(-1, keepdims=True)
    log_want = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(lsm)[ok], log_want.astype(dtype), rtol=1e-6, atol=1e-6)
    assert np.all(np.isnan(np.asarray(sm)[5])) and np.all(np.isnan(np.asarray(lsm)[5]))  # all -inf: NaN (as JAX)
    assert np.asarray(sm0).shape == x.shape


# --------------------------------------------------------------------------------------------------- losses


def _xent_reference(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    peak = logits.max(-1, keepdims=True)
    lsm = logits - peak - np.log(np.exp(logits - peak).sum(-1, keepdims=True))
    with np.errstate(invalid="ignore"):
        return -np.where(labels == 0, 0.0, labels * lsm).sum(-1)


def test_losses_match_numpy(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((6, 5)) * 3
    logits[0, 2] = -np.inf  # a masked class
    ints = np.array([0, 4, 1, 2, 3, 1], np.int32)
    ints_bad = np.array([0, 5, -1, 2, 3, 1], np.int32)
    onehot = np.eye(5)[ints]
    probs = rng.dirichlet(np.ones(5), 6)
    probs[0] = [0.5, 0.5, 0.0, 0.0, 0.0]
    p = rng.uniform(0, 1, (6, 5))
    p[0, :2] = [0.0, 1.0]
    y = (rng.uniform(0, 1, (6, 5)) < 0.5).astype(np.float64)
    t = rng.standard_normal((6, 5)) * 2

    def losses(lg: Any, oh: Any, pr: Any, ints: Any, ints_bad: Any, p: Any, y: Any, t: Any) -> dict[str, Any]:
        return {
            "xent": nn.softmax_cross_entropy(lg, pr),
            "xent_smooth": nn.softmax_cross_entropy(lg, oh, label_smoothing=0.2),
            "xent_int": nn.softmax_cross_entropy_with_integer_labels(lg, ints),
            "xent_int_smooth": nn.softmax_cross_entropy_with_integer_labels(lg, ints, label_smoothing=0.2),
            "xent_int_bad": nn.softmax_cross_entropy_with_integer_labels(lg, ints_bad),
            "xent_int_i8": nn.softmax_cross_entropy_with_integer_labels(lg, ints.astype(ts.i8)),
            "one_hot": nn.one_hot(ints_bad, 5, ts.f64),
            "bce": nn.binary_cross_entropy(p, y),
            "sbce": nn.sigmoid_binary_cross_entropy(t * 100, y),
            "huber": nn.huber_loss(t, p, delta=0.7),
            "smooth_l1": nn.smooth_l1_loss(t, p, beta=0.5),
            "mse": nn.mse(t, p), "l1": nn.l1_loss(t, p),
            "kl": nn.kl_divergence(nn.log_softmax(t), pr),
            "cos": nn.cosine_similarity(t, p),
        }

    got = {k: np.asarray(v) for k, v in ts.program(losses)(logits, onehot, probs, ints, ints_bad, p, y, t).items()}
    smooth = 0.8 * onehot + 0.2 / 5
    np.testing.assert_allclose(got["xent"], _xent_reference(logits, probs), rtol=1e-12)
    assert np.isinf(got["xent_smooth"][0]) and np.isfinite(got["xent"][0])  # smoothing puts mass on the -inf class
    np.testing.assert_allclose(got["xent_smooth"][1:], _xent_reference(logits, smooth)[1:], rtol=1e-12)
    np.testing.assert_allclose(got["xent_int"], _xent_reference(logits, onehot), rtol=1e-12)
    np.testing.assert_allclose(got["xent_int_i8"], got["xent_int"], rtol=0)
    np.testing.assert_allclose(got["xent_int_smooth"][1:], _xent_reference(logits, smooth)[1:], rtol=1e-12)
    bad = (ints_bad < 0) | (ints_bad >= 5)
    assert np.all(np.isnan(got["xent_int_bad"][bad]))  # regression: out-of-range labels gave a loss of 0
    np.testing.assert_allclose(got["xent_int_bad"][~bad], got["xent_int"][~bad], rtol=0)
    np.testing.assert_array_equal(got["one_hot"], (ints_bad[:, None] == np.arange(5)).astype(float))
    pc = np.clip(p, 1e-7, None)
    qc = np.clip(1 - p, 1e-7, None)
    np.testing.assert_allclose(got["bce"], -(y * np.log(pc) + (1 - y) * np.log(qc)), rtol=1e-12)
    np.testing.assert_allclose(got["sbce"], _softplus(t * 100) - t * 100 * y, rtol=1e-12, atol=1e-12)
    err = np.abs(t - p)
    np.testing.assert_allclose(got["huber"], np.where(err <= 0.7, 0.5 * err**2, 0.7 * (err - 0.35)), rtol=1e-12)
    np.testing.assert_allclose(got["smooth_l1"], np.where(err < 0.5, 0.5 * err**2 / 0.5, err - 0.25), rtol=1e-12)
    np.testing.assert_allclose(got["mse"], np.mean((t - p) ** 2), rtol=1e-12)
    np.testing.assert_allclose(got["l1"], np.mean(err), rtol=1e-12)
    lsm_t = t - np.log(np.exp(t).sum(-1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(probs > 0, probs * (np.log(probs) - lsm_t), 0.0).sum(-1)
    np.testing.assert_allclose(got["kl"], kl, rtol=1e-10, atol=1e-14)
    cos = (t * p).sum(-1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1)
    np.testing.assert_allclose(got["cos"], cos, rtol=1e-12)


def test_cross_entropy_gradients_are_softmax_minus_labels_even_with_masked_logits(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((4, 6))
    logits[1, [0, 3]] = -np.inf
    labels = rng.dirichlet(np.ones(6), 4)
    labels[1, [0, 3]] = 0.0
    labels /= labels.sum(-1, keepdims=True)
    g = np.asarray(ts.grad(lambda lg: nn.softmax_cross_entropy(lg, labels).sum())(logits))
    np.testing.assert_allclose(g, _softmax_reference(logits) - labels, rtol=1e-10, atol=1e-14)
    ints = np.array([0, 1, 5, 2], np.int32)
    g2 = np.asarray(ts.grad(lambda lg: nn.softmax_cross_entropy_with_integer_labels(lg, ints).sum())(logits))
    np.testing.assert_allclose(g2, _softmax_reference(logits) - np.eye(6)[ints], rtol=1e-10, atol=1e-14)


def test_cosine_similarity_does_not_overflow_in_its_norms() -> None:
    # regression: squared norms overflowed (f32 past ~1.8e19, f16 past ~256): inf / inf = NaN
    cases = [
        (np.full((1, 3), 1e25, np.float32), np.full((1, 3), -3e30, np.float32), -1.0),
        (np.full((1, 3), 300, np.float16), np.array([[300, -300, 1]], np.float16), 1 / math.sqrt(3 * 180001)),
        (np.array([[1e-30, 0, 0]], np.float32), np.array([[1e-30, 0, 0]], np.float32), 0.0),  # below eps: 0
        (np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32), 0.0),
        (np.array([[1e-3, 2e-3, 0]], np.float32), np.array([[2e-3, 4e-3, 0]], np.float32), 1.0),
    ]
    for x, y, want in cases:
        got = np.asarray(nn.cosine_similarity(x, y))
        assert got.dtype == x.dtype and got.shape == (1,)
        np.testing.assert_allclose(got.astype(np.float64), [want], rtol=2e-3, err_msg=str((x, y)))
    x = np.random.default_rng(0).standard_normal((3, 4)) * 1e200
    y = np.random.default_rng(1).standard_normal((3, 4))
    g = np.asarray(ts.grad(lambda a: nn.cosine_similarity(a, y).sum())(x / 1e200))
    fd = np.zeros_like(g)
    f = lambda a: ((a * y).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(y, axis=-1)).sum()  # noqa: E731
    for i in np.ndindex(g.shape):
        e = np.zeros_like(g)
        e[i] = 1e-6
        fd[i] = (f(x / 1e200 + e) - f(x / 1e200 - e)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    assert np.all(np.isfinite(np.asarray(nn.cosine_similarity(x, y))))


# -------------------------------------------------------------------------------------------- normalization


def _standardize(x: np.ndarray, axis: Any, eps: float) -> np.ndarray:
    c = x - x.mean(axis, keepdims=True)
    return c / np.sqrt((c * c).mean(axis, keepdims=True) + eps)


def test_normalizations_match_numpy_and_are_finite_on_constant_inputs(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4, 6)) * 5 + 2
    x[0] = 7.0  # constant rows: zeros, not NaN
    x[1, 0] = 1e200
    scale, bias = rng.standard_normal(6), rng.standard_normal(6)
    half = (np.array([[1000.0, 1001.0, 1002.0, 1003.0]]) + np.zeros((2, 1))).astype(np.float16)

    def norms(x: Any, s: Any, b: Any, h: Any) -> dict[str, Any]:
        return {
            "layer": nn.layer_norm(x, s, b), "rms": nn.rms_norm(x, s, eps=1e-6),
            "std01": nn.standardize(x, axis=(0, 1)), "layer_eps": nn.layer_norm(x, eps=0.5),
            "half": nn.layer_norm(h), "layer_layer": nn.layer_norm_layer(6, ts.f64)(x),
        }

    got = {k: np.asarray(v) for k, v in ts.program(norms)(x, scale, bias, half).items()}
    np.testing.assert_allclose(got["layer"], _standardize(x, -1, 1e-5) * scale + bias, rtol=1e-10, atol=1e-12)
    rms = x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-6) * scale
    np.testing.assert_allclose(got["rms"], rms, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got["std01"], _standardize(x, (0, 1), 1e-5), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["layer_eps"], _standardize(x, -1, 0.5), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got["layer_layer"], _standardize(x, -1, 1e-5), rtol=1e-10, atol=1e-12)
    assert np.all(got["layer"][0] == bias) and np.all(np.isfinite(got["rms"]))
    assert got["half"].dtype == np.float16
    np.testing.assert_allclose(got["half"], _standardize(half.astype(np.float64), -1, 1e-5), atol=2e-3)


def test_layer_norm_gradient_matches_finite_differences(rng: np.random.Generator) -> None:
    x, w = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    x[1] = 3.0  # a constant row: a finite gradient too
    g = np.asarray(ts.grad(lambda v: (nn.layer_norm(v, eps=1e-3) * w).sum())(x))
    f = lambda v: (_standardize(v, -1, 1e-3) * w).sum()  # noqa: E731
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        fd[i] = (f(x + e) - f(x - e)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------------------------------ attention


def _attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: np.ndarray, bias: Any) -> np.ndarray:
    logits = np.einsum("bthd,bshd->bhts", q, k) / math.sqrt(q.shape[-1]) + bias
    logits = np.where(valid, logits, -np.inf)
    peak = np.max(logits, -1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    w = np.exp(logits - peak)
    total = w.sum(-1, keepdims=True)
    return np.einsum("bhts,bshd->bthd", w / np.where(total > 0, total, 1.0), v)


def test_attention_matches_numpy_with_masks_bias_and_fully_masked_rows(rng: np.random.Generator) -> None:
    q, k, v = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 6, 3, 5)), rng.standard_normal((2, 6, 3, 2))
    mask = rng.uniform(size=(2, 3, 4, 6)) < 0.6
    mask[0, 1, 2] = False  # a fully masked query row
    bias = rng.standard_normal((3, 4, 6))

    def attend(q: Any, k: Any, v: Any, m: Any, b: Any) -> dict[str, Any]:
        return {
            "plain": nn.dot_product_attention(q, k, v),
            "masked": nn.dot_product_attention(q, k, v, bias=b, mask=m),
            "causal": nn.dot_product_attention(q, k, v, mask=m, is_causal=True),
            "grad": ts.grad(lambda qq: (nn.dot_product_attention(qq, k, v, mask=m) ** 2).sum())(q),
        }

    got = {n: np.asarray(x) for n, x in ts.program(attend)(q, k, v, mask, bias).items()}
    ones = np.ones((2, 3, 4, 6), bool)
    causal = np.tril(np.ones((4, 6), bool))
    np.testing.assert_allclose(got["plain"], _attention_reference(q, k, v, ones, 0.0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got["masked"], _attention_reference(q, k, v, mask, bias), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got["causal"], _attention_reference(q, k, v, mask & causal, 0.0), rtol=1e-12, atol=1e-14)
    assert np.all(got["masked"][0, 2, 1] == 0)  # the fully masked query attends to nothing
    assert np.all(np.isfinite(got["grad"])) and np.all(got["grad"][0, 2, 1] == 0)
    half = nn.dot_product_attention(*(a.astype(np.float16) for a in (q, k, v)), mask=mask)
    assert np.asarray(half).dtype == np.float16
    np.testing.assert_allclose(np.asarray(half, np.float64), _attention_reference(q, k, v, mask, 0.0), atol=1e-2)


# ---------------------------------------------------------------------------------- pooling, dropout, embed


def _pool_reference(x: np.ndarray, window: tuple[int, int], strides: tuple[int, int], pads: Any, fn: str,
                    include_pad: bool = True) -> np.ndarray:
    fill = -np.inf if fn == "max" else 0.0
    xp = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
    cnt = np.pad(np.ones_like(x), ((0, 0), pads[0], pads[1], (0, 0)))
    oh = (xp.shape[1] - window[0]) // strides[0] + 1
    ow = (xp.shape[2] - window[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[-1]))
    for i in range(oh):
        for j in range(ow):
            sl = (slice(None), slice(i * strides[0], i * strides[0] + window[0]),
                  slice(j * strides[1], j * strides[1] + window[1]))
            if fn == "max":
                out[:, i, j] = xp[sl].max((1, 2))
            else:
                n = window[0] * window[1] if include_pad else cnt[sl].sum((1, 2))
                out[:, i, j] = xp[sl].sum((1, 2)) / n
    return out


def test_pooling_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 7, 6, 3))
    cases = [((2, 2), (2, 2), "VALID", ((0, 0), (0, 0))), ((3, 2), (1, 2), "VALID", ((0, 0), (0, 0))),
             ((3, 3), (2, 2), "SAME", ((1, 1), (0, 1))), ((2, 3), (1, 1), ((1, 0), (2, 2)), ((1, 0), (2, 2)))]

    def pools(x: Any) -> list[Any]:
        out = []
        for window, strides, padding, _ in cases:
            out += [nn.max_pool(x, window, strides, padding), nn.avg_pool(x, window, strides, padding),
                    nn.avg_pool(x, window, strides, padding, count_include_pad=False)]
        return out

    got = ts.program(pools)(x)
    for i, (window, strides, _, pads) in enumerate(cases):
        np.testing.assert_allclose(np.asarray(got[3 * i]), _pool_reference(x, window, strides, pads, "max"), rtol=0)
        np.testing.assert_allclose(np.asarray(got[3 * i + 1]), _pool_reference(x, window, strides, pads, "avg"),
                                   rtol=1e-12)
        np.testing.assert_allclose(np.asarray(got[3 * i + 2]),
                                   _pool_reference(x, window, strides, pads, "avg", include_pad=False), rtol=1e-12)


def test_dropout_and_embedding(rng: np.random.Generator) -> None:
    x = rng.standard_normal((200, 50)).astype(np.float32)
    key = R.key(4)
    a, b = np.asarray(nn.dropout(key, x, 0.3)), np.asarray(ts.program(lambda k, v: nn.dropout(k, v, 0.3))(key, x))
    np.testing.assert_array_equal(a, b)  # the same key drops the same entries, eager or staged
    kept = a != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(a[kept], x[kept] / np.float32(0.7), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(nn.dropout(key, x, 0.3, deterministic=True)), x)
    assert np.all(np.asarray(nn.dropout(key, x, 1.0)) == 0)
    half = np.asarray(nn.dropout(key, x.astype(np.float16), 0.5))
    assert half.dtype == np.float16 and abs((half != 0).mean() - 0.5) < 0.02
    table = rng.standard_normal((5, 3))
    ids = np.array([[0, 4], [-1, 2]], np.int32)
    np.testing.assert_array_equal(np.asarray(nn.embedding(table, ids)), table[ids])
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(key, x, 1.5)
    with pytest.raises(ts.DTypeError, match="integers"):
        nn.embedding(table, ids.astype(np.float32))


# ---------------------------------------------------------------------------------------------------- errors


class Batch(ts.Dim): ...
class Feat(ts.Dim): ...
class Other(ts.Dim): ...


@pytest.mark.parametrize(
    "fn, error, words",
    [
        (
            lambda x, y: nn.layer_norm(x, y), ts.ShapeError,
            r"scale f32\[Batch=2, Other=4\] .* operand f32\[Batch=2, Feat=3\]",
        ),
        (lambda x, y: nn.softmax_cross_entropy(x, y), ts.ShapeError, r"Batch=2, Feat=3.*Batch=2, Other=4"),
        (lambda x, y: nn.glu(x), ts.ShapeError, "odd size"),
        (lambda x, y: nn.softmax(x, axis=Other), ts.ShapeError, "Other"),
        (lambda x, y: nn.softmax_cross_entropy(x, x, label_smoothing=1.5), ValueError, "label_smoothing"),
        (lambda x, y: nn.huber_loss(x, x, delta=0.0), ValueError, "threshold"),
        (lambda x, y: nn.softmax_cross_entropy_with_integer_labels(x, x[:, 0]), ts.DTypeError, "integers"),
        (lambda x, y: nn.dot_product_attention(x, x, x), ts.ShapeError, "rank >= 3"),
        (lambda x, y: nn.max_pool(x, (4,)), ts.ShapeError, "larger than"),
    ],
)
def test_nn_errors_name_the_dims_and_the_user_line(fn: Callable[..., Any], error: type[Exception], words: str) -> None:
    def staged(x: ts.Tensor[ts.f32, Batch, Feat], y: ts.Tensor[ts.f32, Batch, Other]) -> Any:
        return fn(x, y)

    with pytest.raises(error, match=words) as info:
        ts.program(staged).stage(Batch=2, Feat=3, Other=4)
    assert "test_fuzz_nn_optim.py" in str(info.value)


# ---------------------------------------------------------------------------------------------------- optim


def _schedule_reference(name: str, t: int) -> float:
    if name in ("const", "constant"):  # a Python float, or the constant schedule (an f32 rate)
        return 0.05
    if name == "linear":
        return 0.1 + (0.01 - 0.1) * min(max((t - 1) / 3, 0.0), 1.0)
    if name == "exp":
        return max(0.1 * 0.5 ** math.floor(t / 2), 0.03)
    if name == "cosine":
        return 0.1 * (0.8 * 0.5 * (1 + math.cos(math.pi * min(t / 4, 1.0))) + 0.2)
    assert name == "warmup"
    if t < 2:
        return 0.1 * t / 2
    return 0.1 * 0.5 * (1 + math.cos(math.pi * min((t - 2) / 3, 1.0)))


SCHEDULES = {
    "const": O.constant(0.05), "linear": O.linear_schedule(0.1, 0.01, 3, 1),
    "exp": O.exponential_decay(0.1, 2, 0.5, staircase=True, end_value=0.03), "cosine": O.cosine_decay(0.1, 4, 0.2),
    "warmup": O.warmup_cosine_decay(0.0, 0.1, 2, 5),
}


class _Ref:
    """NumPy float64 update rules, one leaf at a time (state in a dict per leaf)."""

    @staticmethod
    def sgd(p: np.ndarray, g: np.ndarray, s: dict[str, Any], t: int, lr: float, mom: float = 0.0,
            nesterov: bool = False) -> np.ndarray:
        if not mom:
            return p - lr * g
        s["v"] = mom * s.get("v", 0.0) + g
        return p - lr * (g + mom * s["v"]) if nesterov else p - lr * s["v"]

    @staticmethod
    def adam(p: np.ndarray, g: np.ndarray, s: dict[str, Any], t: int, lr: float, wd: float = 0.0) -> np.ndarray:
        b1, b2, eps = 0.9, 0.999, 1e-8
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        m_hat, v_hat = s["m"] / (1 - b1 ** (t + 1)), s["v"] / (1 - b2 ** (t + 1))
        return p - lr * (m_hat / (np.sqrt(v_hat) + eps) + wd * p)

    @staticmethod
    def rmsprop(p: np.ndarray, g: np.ndarray, s: dict[str, Any], t: int, lr: float) -> np.ndarray:
        rho, eps, mom = 0.9, 1e-8, 0.5
        s["v"] = rho * s.get("v", 0.0) + (1 - rho) * g * g
        s["m"] = rho * s.get("m", 0.0) + (1 - rho) * g
        d = g / (np.sqrt(np.maximum(s["v"] - s["m"] ** 2, 0.0)) + eps)
        s["b"] = mom * s.get("b", 0.0) + d
        return p - lr * s["b"]

    @staticmethod
    def adagrad(p: np.ndarray, g: np.ndarray, s: dict[str, Any], t: int, lr: float) -> np.ndarray:
        s["s"] = s.get("s", 0.1) + g * g
        return p - lr * g / (np.sqrt(s["s"]) + 1e-7)

    @staticmethod
    def lion(p: np.ndarray, g: np.ndarray, s: dict[str, Any], t: int, lr: float) -> np.ndarray:
        m = s.get("m", 0.0)
        out = p - lr * (np.sign(0.9 * m + 0.1 * g) + 0.3 * p)
        s["m"] = 0.99 * m + 0.01 * g
        return out


def _optimizers() -> dict[str, tuple[Any, Callable[..., np.ndarray], str, dict[str, Any]]]:
    """name: (optimizer, reference rule, schedule name, extra reference arguments)."""
    return {
        "sgd": (O.sgd(SCHEDULES["linear"]), _Ref.sgd, "linear", {}),
        "momentum": (O.sgd(0.05, momentum=0.9), _Ref.sgd, "const", {"mom": 0.9}),
        "nesterov": (O.sgd(SCHEDULES["exp"], 0.8, nesterov=True), _Ref.sgd, "exp", {"mom": 0.8, "nesterov": True}),
        "adam": (O.adam(SCHEDULES["warmup"]), _Ref.adam, "warmup", {}),
        "adamw": (O.adamw(SCHEDULES["cosine"], weight_decay=0.1), _Ref.adam, "cosine", {"wd": 0.1}),
        "rmsprop": (O.rmsprop(0.05, centered=True, momentum=0.5), _Ref.rmsprop, "const", {}),
        "adagrad": (O.adagrad(0.05), _Ref.adagrad, "const", {}),
        "lion": (O.lion(SCHEDULES["const"], weight_decay=0.3), _Ref.lion, "constant", {}),
    }


STEPS = 5


def _leaves(tree: Any) -> list[Any]:
    from tensorstage.pytree import leaves

    return list(leaves(tree))


def test_optimizers_match_numpy_update_rules_over_steps(rng: np.random.Generator) -> None:
    params = {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": rng.standard_normal(2)}
    grads = [{"w": rng.standard_normal((3, 2)).astype(np.float32), "b": rng.standard_normal(2)} for _ in range(STEPS)]
    grads[2]["b"][:] = 0.0  # a zero gradient step
    opts = _optimizers()

    def train(params: Any, grads: Any) -> dict[str, Any]:
        out = {}
        for name, (opt, *_rest) in opts.items():
            p, s = params, opt.init(params)
            for g in grads:
                p, s = opt.update(g, s, p)
            out[name] = (p, s)
        return out

    got = ts.program(train)(params, grads)
    for name, (opt, rule, sched, extra) in opts.items():
        p, state = got[name]
        for leaf in ("w", "b"):
            ref, s = params[leaf].astype(np.float64), {}
            for t, g in enumerate(grads):
                ref = rule(ref, g[leaf].astype(np.float64), s, t, _schedule_reference(sched, t), **extra)
            out = np.asarray(p[leaf])
            assert out.dtype == params[leaf].dtype, (name, leaf)
            tol = 2e-5 if leaf == "w" else 1e-10 if sched == "const" else 1e-6  # schedules compute in f32
            np.testing.assert_allclose(out, ref, rtol=tol, atol=tol, err_msg=f"{name} {leaf}")
        init = opt.init(params)  # the state comes back with the structure, shapes and dtypes it went in with
        assert [(np.asarray(x).dtype, np.shape(x)) for x in _leaves(state)] == [
            (np.asarray(x).dtype, np.shape(x)) for x in _leaves(init)], name
        assert int(np.asarray(state.count)) == STEPS


def test_schedules_match_their_formulas() -> None:
    counts = np.arange(8, dtype=np.int32)
    got = ts.program(lambda c: {n: ts.vmap(s)(c) for n, s in SCHEDULES.items()})(counts)
    for name in SCHEDULES:
        np.testing.assert_allclose(np.asarray(got[name]), [_schedule_reference(name, t) for t in counts],
                                   rtol=1e-6, atol=1e-8, err_msg=name)
    join = O.join_schedules([O.constant(1.0), O.linear_schedule(1.0, 0.0, 4), O.constant(0.5)], [2, 6])
    np.testing.assert_allclose([float(join(t)) for t in range(8)], [1, 1, 1, 0.75, 0.5, 0.25, 0.5, 0.5])


def test_clipping_and_chaining_match_numpy(rng: np.random.Generator) -> None:
    params = {"a": rng.standard_normal(4), "b": (rng.standard_normal((2, 2)).astype(np.float32),)}
    grads = {"a": rng.standard_normal(4) * 3, "b": (rng.standard_normal((2, 2)).astype(np.float32) * 3,)}
    g64 = [grads["a"], grads["b"][0].astype(np.float64)]
    norm = math.sqrt(sum(float((g * g).sum()) for g in g64))
    opt = O.chain(O.clip(2.0), O.clip_by_global_norm(1.5), O.sgd(0.1))
    small = O.clip_by_global_norm(1e3)

    def step(p: Any, g: Any) -> Any:
        return opt.update(g, opt.init(p), p)[0], small.update(g, small.init(p))[0], O.global_norm(g)

    new, unclipped, gnorm = ts.program(step)(params, grads)
    np.testing.assert_allclose(np.asarray(gnorm), norm, rtol=1e-6)
    clipped = [np.clip(g, -2, 2) for g in g64]
    cnorm = math.sqrt(sum(float((g * g).sum()) for g in clipped))
    scale = 1.5 / max(cnorm, 1.5)
    np.testing.assert_allclose(np.asarray(new["a"]), params["a"] - 0.1 * clipped[0] * scale, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(new["b"][0]), params["b"][0] - 0.1 * clipped[1] * scale, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(unclipped["a"]), grads["a"])
    zero = O.clip_by_global_norm(1.0).update({"a": np.zeros(3)}, O.EmptyState())[0]
    np.testing.assert_array_equal(np.asarray(zero["a"]), 0.0)  # no 0/0
    # regression: the norm of f16 gradients was summed in f16, so a norm past 256 overflowed and clipping zeroed them
    half = {"h": np.full(4, 200.0, np.float16), "s": np.ones(2, np.float32)}
    clipped_half = O.clip_by_global_norm(1.0).update(half, O.EmptyState())[0]
    np.testing.assert_allclose(np.asarray(clipped_half["h"], np.float64), 200 / math.sqrt(4 * 200**2 + 2), rtol=1e-3)
    assert np.asarray(O.global_norm(half)).dtype == np.float32


@pytest.mark.parametrize("tree", [{}, (), [], {"a": {}, "b": ()}])
def test_optimizers_accept_empty_parameter_trees(tree: Any) -> None:
    opts = [o for o, *_ in _optimizers().values()] + [O.chain(O.clip_by_global_norm(1.0), O.adamw(1e-3))]
    step = ts.program(lambda ps: [o.update(ps, o.init(ps), ps)[0] for o in opts])
    for out in step(tree):
        assert out == tree or (not _leaves(out) and type(out) is type(tree))
    for o in opts:  # eager too
        new, state = o.update(tree, o.init(tree), tree)
        assert not _leaves(new)


def test_mismatched_trees_are_clear_errors() -> None:
    opt = O.adam(1e-3)
    params = {"w": np.zeros(3, np.float32)}
    with pytest.raises(TypeError, match="structure"):
        opt.update({"v": np.zeros(3, np.float32)}, opt.init(params), params)
    with pytest.raises(TypeError, match="shape"):
        opt.update({"w": np.zeros(4, np.float32)}, opt.init(params), params)
    with pytest.raises(TypeError, match="dtype"):
        opt.update({"w": np.zeros(3, np.float64)}, opt.init(params), params)
    for bad in (lambda: O.sgd(0.1, nesterov=True), lambda: O.clip_by_global_norm(0.0), lambda: O.adamw(weight_decay=-1),
                lambda: O.rmsprop(decay=1.0), lambda: O.cosine_decay(1.0, 0), lambda: O.chain(O.sgd(0.1), O.clip(1.0)),
                lambda: O.warmup_cosine_decay(0.0, 1.0, 5, 5), lambda: O.exponential_decay(1.0, 2, 0.0)):
        with pytest.raises(ValueError):
            bad()
