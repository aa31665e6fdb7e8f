"""``ts.nn``: normalization, dropout, embeddings, attention, the added activations and losses, against float64
NumPy, with gradients against finite differences and errors pointing at the caller's line."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from scipy import special

import tensorstage as ts
from tensorstage import Dim, Tensor, f64, i32
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences


class Batch(Dim): ...


class Feat(Dim): ...


def _line() -> str:
    """``file:line`` of the caller's next line (where the bad call is)."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return f"test_nn_layers.py:{frame.f_back.f_lineno + 1}"


# ------------------------------------------------------------------------------------------------- activations


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x, 0.0)


def test_activations_match_numpy_including_extremes(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 8)) * 4
    x[0, :6] = [0.0, 100.0, -100.0, 6.0, 1.0, -1.0]

    @ts.program
    def apply(x: Tensor[f64, Batch, Feat]) -> Any:
        nn = ts.nn
        return (nn.leaky_relu(x, 0.1), nn.elu(x, 0.7), nn.selu(x), nn.softplus(x), nn.softsign(x), nn.hard_tanh(x),
                nn.relu6(x), nn.mish(x), nn.log_sigmoid(x), nn.glu(x), nn.glu(x, axis=Batch))

    got = [np.asarray(v) for v in apply(x)]
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    half = x.shape[1] // 2
    want = [
        np.where(x > 0, x, 0.1 * x), np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0))),
        scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))), _softplus(x), x / (1 + np.abs(x)),
        np.clip(x, -1, 1), np.clip(x, 0, 6), x * np.tanh(_softplus(x)), -_softplus(-x),
        x[:, :half] * special.expit(x[:, half:]), x[:2] * special.expit(x[2:]),
    ]
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300, err_msg=str(i))
    assert_grads_match_finite_differences(
        [ts.nn.softplus, ts.nn.elu, ts.nn.mish, ts.nn.log_sigmoid, ts.nn.selu, lambda v: ts.nn.glu(v, axis=-1)],
        rng, shape=(2, 4),
    )
    # gradients at the extremes and the kinks are finite and exact
    g = ts.program(lambda v: [ts.grad(lambda u, f=f: tnp.sum(f(u)))(v) for f in
                              (ts.nn.softplus, ts.nn.log_sigmoid, ts.nn.elu, ts.nn.mish)])(
        np.array([-1000.0, -100.0, 0.0, 100.0, 1000.0]))
    np.testing.assert_allclose(np.asarray(g[0]), [0, special.expit(-100), 0.5, 1, 1], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g[1]), [1, 1, 0.5, special.expit(-100), 0], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g[2]), [0, np.exp(-100), 1, 1, 1], rtol=1e-12, atol=1e-15)
    assert np.isfinite(np.asarray(g[3])).all()


def test_activation_errors_name_the_op_and_the_line() -> None:
    with pytest.raises(ts.ShapeError, match="glu") as err:
        where = _line()
        ts.nn.glu(np.ones((2, 3), np.float32))
    assert where in str(err.value)
    with pytest.raises(ts.DTypeError, match="softplus"):
        ts.nn.softplus(np.ones(3, np.int32))


# ------------------------------------------------------------------------------------------------------ losses


def test_losses_match_numpy_and_stay_finite_for_extreme_logits(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((4, 5)) * 3
    logits[0, :4] = [100.0, -100.0, 100.0, -100.0]
    labels = rng.uniform(size=(4, 5))
    labels[0, :4] = [1.0, 0.0, 0.0, 1.0]
    probs = special.expit(rng.standard_normal((4, 5)))
    probs[0, :2] = [0.0, 1.0]
    pred, targ = rng.standard_normal((4, 5)) * 2, rng.standard_normal((4, 5))
    logp = rng.standard_normal((4, 5))
    logp = logp - special.logsumexp(logp, axis=-1, keepdims=True)
    dist = rng.dirichlet(np.ones(5), size=4)
    dist[1, 2] = 0.0

    @ts.program
    def losses(logits: Any, labels: Any, probs: Any, pred: Any, targ: Any, logp: Any, dist: Any) -> Any:
        nn = ts.nn
        return (nn.sigmoid_binary_cross_entropy(logits, labels), nn.binary_cross_entropy_with_logits(logits, labels),
                nn.binary_cross_entropy(probs, labels), nn.huber_loss(pred, targ, delta=1.5),
                nn.smooth_l1_loss(pred, targ, beta=0.5), nn.l1_loss(pred, targ), nn.kl_divergence(logp, dist),
                nn.cosine_similarity(pred, targ), nn.cosine_similarity(pred, targ, axis=0),
                ts.grad(lambda z: tnp.sum(nn.sigmoid_binary_cross_entropy(z, labels)))(logits))

    got = [np.asarray(v) for v in losses(logits, labels, probs, pred, targ, logp, dist)]
    bce_logits = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    err = np.abs(pred - targ)

    def cos(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
        return np.sum(a * b, axis) / (np.linalg.norm(a, axis=axis) * np.linalg.norm(b, axis=axis))

    want = [
        bce_logits, bce_logits,
        -(labels * np.log(np.maximum(probs, 1e-7)) + (1 - labels) * np.log(np.maximum(1 - probs, 1e-7))),
        np.where(err <= 1.5, 0.5 * err**2, 1.5 * (err - 0.75)), np.where(err < 0.5, 0.5 * err**2 / 0.5, err - 0.25),
        np.mean(err), np.sum(special.xlogy(dist, dist) - dist * logp, axis=-1), cos(pred, targ, -1), cos(pred, targ, 0),
        special.expit(logits) - labels,
    ]
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.isfinite(g).all(), i
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-14, err_msg=str(i))
    assert got[0][0, 0] == pytest.approx(0.0, abs=1e-40) and got[0][0, 2] == pytest.approx(100.0, rel=1e-15)
    # f32 stays finite and accurate at +-100
    f32_loss = np.asarray(ts.nn.sigmoid_binary_cross_entropy(logits.astype(np.float32), labels.astype(np.float32)))
    np.testing.assert_allclose(f32_loss, bce_logits, rtol=1e-5, atol=1e-6)
    # regressions: in bf16/f16 1 - 1e-7 rounds to 1, and clipping p there gave log(0) (inf, or NaN for y = 1);
    # the product of squared norms overflowed f32 (a cosine of 0 for parallel vectors of norm ~1e11)
    for dt in (ts.bf16, np.float16):
        sat = ts.nn.binary_cross_entropy(*(tnp.asarray(np.array(v, np.float32)).astype(dt) for v in ([1, 0, 1, 0],
                                                                                                    [1, 0, 0, 1])))
        np.testing.assert_allclose(np.asarray(sat.astype(np.float32)), [0, 0, 16.1181, 16.1181], rtol=2e-2, atol=1e-6)
    big = np.full((2, 8), 3e10, np.float32)
    np.testing.assert_allclose(np.asarray(ts.nn.cosine_similarity(big, 2 * big)), [1, 1], rtol=1e-6)
    assert_grads_match_finite_differences(
        [lambda z: ts.nn.huber_loss(z, tnp.ones_like(z) * 0.3), lambda z: ts.nn.cosine_similarity(z, tnp.cos(z)),
         lambda z: ts.nn.kl_divergence(ts.nn.log_softmax(z), ts.nn.softmax(z * 0.5))],
        rng, shape=(3, 4),
    )


def test_label_smoothing(rng: np.random.Generator) -> None:
    logits = rng.standard_normal((3, 4))
    ids = np.array([0, 3, 1], np.int32)
    onehot = np.eye(4)[ids]
    smoothed = 0.8 * onehot + 0.2 / 4
    log_p = logits - special.logsumexp(logits, axis=-1, keepdims=True)
    want = -np.sum(smoothed * log_p, axis=-1)
    np.testing.assert_allclose(np.asarray(ts.nn.softmax_cross_entropy_with_integer_labels(logits, ids, 0.2)), want,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ts.nn.softmax_cross_entropy(logits, onehot, label_smoothing=0.2)), want,
                               rtol=1e-12)


def test_loss_errors_name_the_op_and_the_line() -> None:
    with pytest.raises(ts.ShapeError, match="huber_loss") as err:
        where = _line()
        ts.nn.huber_loss(np.ones((2, 3)), np.ones((3,)))
    assert where in str(err.value)
    with pytest.raises(ts.DTypeError, match="sigmoid_binary_cross_entropy") as dt_err:
        where = _line()
        ts.nn.sigmoid_binary_cross_entropy(np.ones(3, np.float32), np.ones(3, np.float64))
    assert where in str(dt_err.value)


# ------------------------------------------------------------------------------------------------ normalization


def _layer_norm(x: np.ndarray, axis: Any, eps: float) -> np.ndarray:
    mu = x.mean(axis=axis, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=axis, keepdims=True) + eps)


def test_layer_norm_and_rms_norm_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 5)) * 3 + 10
    scale, bias = rng.standard_normal(5), rng.standard_normal(5)
    layer = ts.nn.LayerNorm(ts.asarray(scale), ts.asarray(bias))

    @ts.program
    def norms(x: Any, scale: Any, bias: Any, layer: Any) -> Any:
        return (ts.nn.layer_norm(x, scale, bias), ts.nn.layer_norm(x, axis=(1, -1), eps=1e-3),
                ts.nn.rms_norm(x, scale), ts.nn.standardize(x, axis=0), layer(x),
                ts.vmap(lambda row: ts.nn.layer_norm(row, scale, bias))(x))

    ln, ln_axes, rms, std, by_layer, by_vmap = (np.asarray(v) for v in norms(x, scale, bias, layer))
    want = _layer_norm(x, -1, 1e-5) * scale + bias
    np.testing.assert_allclose(ln, want, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(ln_axes, _layer_norm(x, (1, 2), 1e-3), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(rms, x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * scale, rtol=1e-12)
    np.testing.assert_allclose(std, _layer_norm(x, 0, 1e-5), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(by_layer, want, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(by_vmap, want, rtol=1e-11, atol=1e-12)
    # f32 on large offsets: the two-pass variance keeps it accurate
    got32 = np.asarray(ts.nn.layer_norm((x + 1e3).astype(np.float32)))
    np.testing.assert_allclose(got32, _layer_norm(x, -1, 1e-5), atol=2e-3)
    # regression: bf16 statistics are taken in f32 (a bf16 mean of 64 values near 30 was off by ~0.1 std)
    wide = rng.standard_normal((2, 64)) + 30
    half = tnp.asarray(wide.astype(np.float32)).astype(ts.bf16)
    exact = _layer_norm(np.asarray(half.astype(np.float64)), -1, 1e-5)
    np.testing.assert_allclose(np.asarray(ts.nn.layer_norm(half).astype(np.float32)), exact, atol=0.03)
    assert_grads_match_finite_differences(
        [lambda v: ts.nn.layer_norm(v, tnp.cos(v[0, 0]), tnp.sin(v[0, 0])), lambda v: ts.nn.rms_norm(v, v[0, 0]),
         lambda v: ts.nn.layer_norm(v, axis=(0, 2))],
        rng, shape=(2, 3, 4),
    )
    init = ts.nn.layer_norm_layer(4)
    assert np.asarray(init.scale).tolist() == [1.0] * 4 and np.asarray(init.bias).dtype == np.float32


def test_norm_errors_name_the_op_and_the_line() -> None:
    x = np.ones((2, 5), np.float32)
    with pytest.raises(ts.ShapeError, match="layer_norm") as err:
        where = _line()
        ts.nn.layer_norm(x, np.ones(3, np.float32))
    assert where in str(err.value) and "scale" in str(err.value)
    with pytest.raises(ts.DTypeError, match="rms_norm"):
        ts.nn.rms_norm(x, np.ones(5))
    with pytest.raises(ts.ShapeError, match="layer_norm"):
        ts.nn.layer_norm(x, axis=2)


# ---------------------------------------------------------------------------------------------------- dropout


def test_dropout_statistics_and_edge_cases() -> None:
    x = np.full((200, 100), 2.0, np.float32)

    @ts.program(static_argnums=(2, 3))
    def drop(key: Any, x: Any, rate: float, deterministic: bool) -> Any:
        return ts.nn.dropout(key, x, rate, deterministic)

    key = ts.random.key(7)
    y = np.asarray(drop(key, x, 0.3, False))
    kept = y != 0
    assert kept.mean() == pytest.approx(0.7, abs=0.01)
    np.testing.assert_allclose(y[kept], 2.0 / 0.7, rtol=1e-6)
    assert y.mean() == pytest.approx(2.0, rel=0.02)
    np.testing.assert_array_equal(np.asarray(drop(key, x, 0.3, False)), y)  # same key: same mask
    assert not np.array_equal(np.asarray(drop(ts.random.key(8), x, 0.3, False)), y)
    np.testing.assert_array_equal(np.asarray(drop(key, x, 0.3, True)), x)
    np.testing.assert_array_equal(np.asarray(drop(key, x, 0.0, False)), x)
    np.testing.assert_array_equal(np.asarray(drop(key, x, 1.0, False)), 0 * x)
    # the gradient is the mask over the keep probability
    g = np.asarray(ts.program(lambda k, v: ts.grad(lambda u: tnp.sum(ts.nn.dropout(k, u, 0.3)))(v))(key, x))
    np.testing.assert_allclose(g, np.where(kept, 1 / 0.7, 0.0), rtol=1e-6)
    with pytest.raises(ValueError, match="dropout: rate") as err:
        where = _line()
        ts.nn.dropout(key, x, 1.5)
    assert where in str(err.value)


# -------------------------------------------------------------------------------------------------- embeddings


def test_embedding_lookup_and_scattered_gradient(rng: np.random.Generator) -> None:
    layer = ts.nn.embed(ts.random.key(0), 6, 3, dtype=f64)
    table = np.asarray(layer.table)
    ids = np.array([[0, 5, 5], [2, 0, 0]], np.int32)
    weights = rng.standard_normal((2, 3, 3))

    @ts.program
    def run(layer: Any, ids: Tensor[i32, Batch, Feat], w: Any) -> Any:
        loss = lambda lay: tnp.sum(lay(ids) * w)  # noqa: E731
        return layer(ids), ts.grad(loss)(layer)

    out, grads = run(layer, ids, weights)
    np.testing.assert_array_equal(np.asarray(out), table[ids])
    want = np.zeros_like(table)
    np.add.at(want, ids, weights)
    np.testing.assert_allclose(np.asarray(grads.table), want, rtol=1e-12)
    assert isinstance(grads, ts.nn.Embed)
    with pytest.raises(ts.DTypeError, match="embedding") as err:
        where = _line()
        layer(np.zeros(2, np.float32))  # type: ignore[arg-type]
    assert where in str(err.value)


# --------------------------------------------------------------------------------------------------- attention


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: Any = None, mask: Any = None) -> np.ndarray:
    logits = np.einsum("...thd,...shd->...hts", q, k) / np.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = np.where(mask, logits, -np.inf)
    peak = np.max(logits, axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    w = np.exp(logits - peak)
    total = w.sum(-1, keepdims=True)
    return np.einsum("...hts,...shd->...thd", w / np.where(total > 0, total, 1), v)


def test_dot_product_attention_matches_numpy(rng: np.random.Generator) -> None:
    q, k = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 6, 3, 5))
    v, bias = rng.standard_normal((2, 6, 3, 2)), rng.standard_normal((3, 4, 6))
    mask = rng.uniform(size=(2, 1, 4, 6)) < 0.7
    mask[0, 0, 1] = False  # a fully masked query row
    causal = np.tril(np.ones((4, 6), bool))

    @ts.program
    def run(q: Any, k: Any, v: Any, bias: Any, mask: Any) -> Any:
        attn = ts.nn.dot_product_attention

        def loss(q: Any, k: Any, v: Any) -> Any:
            return tnp.sum(tnp.sin(attn(q, k, v, mask=mask)))

        return (attn(q, k, v), attn(q, k, v, bias=bias, mask=mask), attn(q, k, v, is_causal=True),
                attn(q[0], k[0], v[0], scale=0.5), ts.grad(loss, argnums=(0, 1, 2))(q, k, v),
                ts.vmap(lambda q, k, v, m: attn(q, k, v, mask=m))(q, k, v, mask))

    plain, masked, by_causal, unbatched, grads, by_vmap = run(q, k, v, bias, mask)
    np.testing.assert_allclose(np.asarray(by_vmap), _attention(q, k, v, mask=mask), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(plain), _attention(q, k, v), rtol=1e-12)
    got_masked = np.asarray(masked)
    np.testing.assert_allclose(got_masked, _attention(q, k, v, bias, mask), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got_masked[0, 1], 0.0)  # fully masked: zeros, not NaN
    np.testing.assert_allclose(np.asarray(by_causal), _attention(q, k, v, mask=causal), rtol=1e-12)
    scaled = _attention(q[0] * 0.5 * np.sqrt(5), k[0], v[0])
    np.testing.assert_allclose(np.asarray(unbatched), scaled, rtol=1e-12)
    for g in grads:
        assert np.isfinite(np.asarray(g)).all()
    assert np.all(np.asarray(grads[0])[0, 1] == 0)  # the masked row's query gets no gradient
    f32_out = ts.nn.dot_product_attention(*(a.astype(np.float32) * 100 for a in (q, k, v)))
    assert np.isfinite(np.asarray(f32_out)).all()  # large logits: the stable softmax does not overflow
    # regression: a bf16 softmax runs in f32 (JAX's choice too): its bf16 sum over 512 keys was off by ~1%, the
    # output by 0.028 (5x the f32-softmax error); the output stays bf16
    r = np.random.default_rng(5)
    qb, kb, vb = (tnp.asarray(a.astype(np.float32)).astype(ts.bf16) for a in (
        r.standard_normal((1, 2, 1, 4)), r.standard_normal((1, 512, 1, 4)), r.standard_normal((1, 512, 1, 2)) + 3))
    out16 = ts.nn.dot_product_attention(qb, kb, vb)
    assert str(out16.dtype) == "bfloat16"
    exact16 = _attention(*(np.asarray(a.astype(np.float64)) for a in (qb, kb, vb)))
    np.testing.assert_allclose(np.asarray(out16.astype(np.float32)), exact16, atol=0.0125)


def test_attention_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    k, v = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2, 4))
    mask = np.array([[True, False, True]])
    attn = ts.nn.dot_product_attention
    assert_grads_match_finite_differences(
        [lambda q: attn(q, k, v), lambda q: attn(q, q, q, mask=mask),
         lambda q: attn(k, q, tnp.cos(q), bias=tnp.swapaxes(q[:, :, :3], 0, 1))],
        rng, shape=(3, 2, 4),
    )


def test_multi_head_attention_layer(rng: np.random.Generator) -> None:
    layer = ts.nn.multi_head_attention(ts.random.key(1), in_features=6, num_heads=2, head_size=3, out_features=4,
                                       dtype=f64)
    x, ctx = rng.standard_normal((2, 5, 6)), rng.standard_normal((2, 7, 6))
    got, cross = ts.program(lambda lay, x, c: (lay(x, is_causal=True), lay(x, c)))(layer, x, ctx)
    wq, wk, wv, wo = (np.asarray(w) for w in (layer.query, layer.key, layer.value, layer.out))

    def mha(x: np.ndarray, c: np.ndarray, mask: Any) -> np.ndarray:
        q, k, v = (np.einsum("...i,ihd->...hd", a, w) for a, w in ((x, wq), (c, wk), (c, wv)))
        return np.einsum("...hd,hdo->...o", _attention(q, k, v, mask=mask), wo)

    np.testing.assert_allclose(np.asarray(got), mha(x, x, np.tril(np.ones((5, 5), bool))), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cross), mha(x, ctx, None), rtol=1e-12)
    assert np.asarray(got).shape == (2, 5, 4) and wq.shape == (6, 2, 3) and wo.shape == (2, 3, 4)


def test_attention_errors_name_the_op_and_the_line() -> None:
    q = np.ones((4, 2, 3), np.float32)
    with pytest.raises(ts.ShapeError, match="dot_product_attention") as err:
        where = _line()
        ts.nn.dot_product_attention(q, np.ones((5, 2, 4), np.float32), np.ones((5, 2, 3), np.float32))
    assert where in str(err.value)
    with pytest.raises(ts.DTypeError, match="mask must be booleans"):
        ts.nn.dot_product_attention(q, q, q, mask=np.ones((4, 4), np.float32))
    with pytest.raises(ts.ShapeError, match="mask"):
        ts.nn.dot_product_attention(q, q, q, mask=np.ones((3, 4), bool))
