"""``ts.nn.conv`` / ``max_pool`` / ``avg_pool`` / ``Conv`` and the ``conv_general_dilated`` primitive's batching
rule: against a float64 NumPy reference (and jax when installed), gradients against finite differences, vmap
against a loop, a small CNN trained with SGD, and errors that name the op and the user's line."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from tensorstage import numpy as tnp
from tensorstage.staging.builder import bind
from tensorstage.staging.primitives.convolution import ConvDims, conv_general_dilated_p
from tensorstage.tensor import Traced

from conv_cases import SPECS, conv_case_params, conv_reference

EPS = 1e-6


def _same_pads(sizes: tuple[int, ...], spans: list[int], strides: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    out = []
    for n, k, s in zip(sizes, spans, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        out.append((total // 2, total - total // 2))
    return tuple(out)


def _nn_reference(x: np.ndarray, w: np.ndarray, strides: Any, padding: Any, dilation: Any, groups: int) -> np.ndarray:
    n = w.ndim - 2
    strides = (strides,) * n if isinstance(strides, int) else tuple(strides)
    dilation = (dilation,) * n if isinstance(dilation, int) else tuple(dilation)
    spans = [(k - 1) * d + 1 for k, d in zip(w.shape[:n], dilation)]
    if padding == "SAME":
        pads = _same_pads(x.shape[1:-1], spans, strides)
    elif padding == "VALID":
        pads = ((0, 0),) * n
    else:
        pads = tuple(padding)
    params = conv_case_params(ConvDims.channels_last(n), strides, pads, None, dilation, groups)
    return conv_reference(x, w, **params)


# (x shape, w shape, strides, padding, dilation, groups)
NN_CONFIGS: list[tuple[tuple[int, ...], tuple[int, ...], Any, Any, Any, int]] = [
    ((2, 9, 3), (3, 3, 4), 1, "VALID", 1, 1),
    ((2, 9, 4), (2, 2, 6), 2, "SAME", 2, 2),
    ((2, 7, 6, 3), (3, 3, 3, 5), 1, "SAME", 1, 1),
    ((1, 7, 8, 4), (3, 2, 1, 8), (2, 3), "SAME", (1, 2), 4),  # depthwise, channel multiplier 2
    ((2, 6, 5, 2), (2, 3, 2, 3), (2, 1), ((1, 0), (2, 1)), 1, 1),
    ((1, 4, 5, 3, 2), (2, 2, 2, 2, 3), (1, 2, 1), "VALID", (2, 1, 1), 1),
]


def test_conv_matches_reference_in_f32_and_f64(rng: np.random.Generator) -> None:
    inputs = [(rng.standard_normal(xs), rng.standard_normal(ws)) for xs, ws, *_ in NN_CONFIGS]

    @ts.program
    def apply(pairs: Any) -> Any:
        return [
            ts.nn.conv(x, w, strides=s, padding=p, dilation=d, groups=g)
            for (x, w), (_, _, s, p, d, g) in zip(pairs, NN_CONFIGS)
        ]

    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        got = apply([(x.astype(dtype), w.astype(dtype)) for x, w in inputs])
        for out, (x, w), (_, _, s, p, d, g) in zip(got, inputs, NN_CONFIGS):
            want = _nn_reference(x, w, s, p, d, g)
            assert np.asarray(out).dtype == dtype
            np.testing.assert_allclose(np.asarray(out), want, rtol=tol, atol=tol)
    # Eagerly, and on an unbatched input (*spatial, C).
    x, w = inputs[2]
    np.testing.assert_allclose(np.asarray(ts.nn.conv(x[0], w, padding="SAME")), _nn_reference(x, w, 1, "SAME", 1, 1)[0],
                               rtol=1e-12, atol=1e-12)


def test_conv_and_pooling_match_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    from jax import lax

    x = rng.standard_normal((2, 9, 8, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 6)).astype(np.float32)
    layout = ("NHWC", "HWIO", "NHWC")
    for strides, padding in (((1, 1), "SAME"), ((2, 2), "VALID"), ((2, 1), ((2, 1), (0, 3)))):
        got = np.asarray(ts.nn.conv(x, w, strides, padding, dilation=(1, 2), groups=2))
        want = lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=(1, 2), dimension_numbers=layout,
                                        feature_group_count=2)
        np.testing.assert_allclose(got, np.asarray(want), rtol=2e-5, atol=2e-5)
    for padding in ("VALID", "SAME"):
        dims, steps = (1, 3, 2, 1), (1, 2, 2, 1)
        got_max = np.asarray(ts.nn.max_pool(x, (3, 2), strides=(2, 2), padding=padding))
        want_max = lax.reduce_window(x, -np.inf, lax.max, dims, steps, padding)
        np.testing.assert_array_equal(got_max, np.asarray(want_max))
        got_avg = np.asarray(ts.nn.avg_pool(x, (3, 2), strides=(2, 2), padding=padding))
        want_avg = lax.reduce_window(x, 0.0, lax.add, dims, steps, padding) / 6
        np.testing.assert_allclose(got_avg, np.asarray(want_avg), rtol=1e-6, atol=1e-6)

    def loss(x: Any, w: Any) -> Any:
        y = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=layout, feature_group_count=2)
        return (jax.numpy.tanh(y) ** 2).sum()

    gx, gw = ts.grad(lambda x, w: tnp.sum(tnp.tanh(ts.nn.conv(x, w, (2, 1), "SAME", groups=2)) ** 2), argnums=(0, 1))(x, w)
    jx, jw = jax.grad(loss, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(jx), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(jw), rtol=1e-4, atol=1e-4)


def _pool_reference(x: np.ndarray, window: tuple[int, ...], strides: tuple[int, ...], pads: Any, kind: str) -> np.ndarray:
    n = len(window)
    fill = -np.inf if kind == "max" else 0.0
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1 - n) + list(pads) + [(0, 0)], constant_values=fill)
    valid = np.pad(np.ones(x.shape[-1 - n:-1]), list(pads))
    first = x.ndim - 1 - n
    outs = [(padded.shape[first + i] - window[i]) // strides[i] + 1 for i in range(n)]
    result = np.full((*x.shape[:first], *outs, x.shape[-1]), fill)
    count = np.zeros(outs)
    for tap in itertools.product(*map(range, window)):
        view = tuple(slice(t, t + (m - 1) * s + 1, s) for t, m, s in zip(tap, outs, strides))
        piece = padded[(Ellipsis, *view, slice(None))]
        result = np.maximum(result, piece) if kind == "max" else result + piece
        count += valid[view]
    if kind == "avg":
        result = result / np.prod(window)
    elif kind == "avg_valid":
        result = result / count[..., None]
    return result


def test_pooling_matches_reference(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 7, 6, 3))
    x3 = rng.standard_normal((4, 5, 2))  # unbatched (H, W, C)

    @ts.program
    def pools(x: Any, x3: Any) -> Any:
        return (
            ts.nn.max_pool(x, (2, 2), strides=(2, 2)),
            ts.nn.max_pool(x, (3, 2), strides=(2, 1), padding="SAME"),
            ts.nn.avg_pool(x, (3, 3), strides=2, padding="SAME"),
            ts.nn.avg_pool(x, (3, 3), strides=2, padding="SAME", count_include_pad=False),
            ts.nn.avg_pool(x3, (2, 3), padding=((1, 0), (1, 1))),
            ts.nn.max_pool(x3[..., 0, :], (3,)),  # 1-D, (batch=4, length=5, C=2)
        )

    got = [np.asarray(v) for v in pools(x, x3)]
    want = [
        _pool_reference(x, (2, 2), (2, 2), ((0, 0), (0, 0)), "max"),
        _pool_reference(x, (3, 2), (2, 1), ((1, 1), (0, 1)), "max"),
        _pool_reference(x, (3, 3), (2, 2), ((1, 1), (0, 1)), "avg"),
        _pool_reference(x, (3, 3), (2, 2), ((1, 1), (0, 1)), "avg_valid"),
        _pool_reference(x3, (2, 3), (1, 1), ((1, 0), (1, 1)), "avg"),
        _pool_reference(x3[..., 0, :], (3,), (1,), ((0, 0),), "max"),
    ]
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    ints = rng.integers(-50, 50, (1, 5, 5, 2)).astype(np.int32)
    pooled = np.asarray(ts.nn.max_pool(ints, (2, 2), padding="SAME"))
    assert pooled.dtype == np.int32
    np.testing.assert_array_equal(pooled, _pool_reference(ints.astype(np.float64), (2, 2), (1, 1), ((0, 1), (0, 1)), "max"))


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 7, 6, 4))
    x[..., :] += np.arange(x.size).reshape(x.shape) * 1e-3  # distinct values: max_pool has no ties
    w = rng.standard_normal((3, 2, 2, 6))
    r1, r2, r3 = rng.standard_normal((2, 4, 3, 6)), rng.standard_normal((2, 3, 3, 4)), rng.standard_normal((2, 4, 3, 4))

    def f(x: Any, w: Any) -> Any:
        y = ts.nn.conv(x, w, strides=(2, 2), padding="SAME", dilation=(1, 2), groups=2)
        pooled = ts.nn.max_pool(x, (3, 2), strides=(2, 2))
        averaged = ts.nn.avg_pool(x, (2, 3), strides=2, padding="SAME", count_include_pad=False)
        return tnp.sum(tnp.sin(y) * r1) + tnp.sum(pooled * r2) + tnp.sum(averaged * r3)

    gx, gw = ts.grad(f, argnums=(0, 1))(x, w)
    tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    value = ts.program(f)
    finite = (float(value(x + EPS * tx, w + EPS * tw)) - float(value(x - EPS * tx, w - EPS * tw))) / (2 * EPS)
    assert float(np.sum(np.asarray(gx) * tx) + np.sum(np.asarray(gw) * tw)) == pytest.approx(finite, rel=1e-6)
    # max_pool's gradient is 1 at each window's maximum (windows do not overlap here: stride 2 >= width 2).
    gmax = ts.grad(lambda x: tnp.sum(ts.nn.max_pool(x, (2, 2), strides=(2, 2))))(x)
    blocks = x[:, :6, :6].reshape(2, 3, 2, 3, 2, 4)
    winners = blocks == blocks.max(axis=(2, 4), keepdims=True)
    expected = np.zeros_like(x)
    expected[:, :6, :6] = winners.reshape(2, 6, 6, 4)
    np.testing.assert_array_equal(np.asarray(gmax), expected)


def _apply_conv(params: dict[str, Any]) -> Any:
    def apply(lhs: Any, rhs: Any) -> Any:
        return Traced(bind(conv_general_dilated_p, lhs.atom, rhs.atom, **params))

    return apply


@pytest.mark.parametrize("label", [label for label, *_ in SPECS[1:5]])
def test_batch_rule_matches_loop(label: str, rng: np.random.Generator) -> None:
    _, lhs_shape, rhs_shape, params = next(s for s in SPECS if s[0] == label)
    apply = _apply_conv(params)
    size = 3
    lhs = [rng.standard_normal(lhs_shape).astype(np.float32) for _ in range(size)]
    rhs = [rng.standard_normal(rhs_shape).astype(np.float32) for _ in range(size)]
    single = ts.Program(apply, check_annotations=False)
    for lhs_axis, rhs_axis in ((1, None), (None, 2), (0, len(rhs_shape)), (len(lhs_shape), 1)):
        a = np.stack(lhs, lhs_axis) if lhs_axis is not None else lhs[0]
        b = np.stack(rhs, rhs_axis) if rhs_axis is not None else rhs[0]
        mapped = ts.vmap(apply, in_axes=(lhs_axis, rhs_axis), out_axes=-1)
        mapped.stage(a, b).typecheck()
        got = np.asarray(mapped(a, b))
        want = np.stack(
            [np.asarray(single(lhs[i] if lhs_axis is not None else lhs[0], rhs[i] if rhs_axis is not None else rhs[0]))
             for i in range(size)],
            axis=-1,
        )
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{label} {lhs_axis} {rhs_axis}")


def test_vmap_of_nn_functions_and_grad_matches_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((3, 6, 5, 4))  # three unbatched (H, W, C) examples
    w = rng.standard_normal((3, 3, 2, 4))

    def f(x: Any, w: Any) -> Any:
        return ts.nn.avg_pool(ts.nn.max_pool(ts.nn.conv(x, w, padding="SAME", groups=2), (2, 2)), (2, 1))

    per_example_grad = ts.vmap(ts.grad(lambda x, w: tnp.sum(f(x, w) ** 2), argnums=1), in_axes=(0, None))
    mapped = np.asarray(ts.vmap(f, in_axes=(0, None))(xs, w))
    grads = np.asarray(per_example_grad(xs, w))
    single, single_grad = ts.program(f), ts.grad(lambda x, w: tnp.sum(f(x, w) ** 2), argnums=1)
    for i in range(3):
        np.testing.assert_allclose(mapped[i], np.asarray(single(xs[i], w)), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads[i], np.asarray(single_grad(xs[i], w)), rtol=1e-10, atol=1e-12)


def test_small_cnn_trains_with_sgd(rng: np.random.Generator) -> None:
    keys = ts.random.split(ts.random.key(0), 3)
    params = {
        "c1": ts.nn.conv_layer(keys[0], 1, 4, (3, 3), padding="SAME"),
        "c2": ts.nn.conv_layer(keys[1], 4, 8, (3, 3), strides=2, groups=2),
        "out": ts.nn.dense(keys[2], 8, 2),
    }
    x = rng.standard_normal((8, 8, 8, 1)).astype(np.float32)
    labels = (x[:, :4].sum(axis=(1, 2, 3)) > x[:, 4:].sum(axis=(1, 2, 3))).astype(np.int32)

    def loss(params: Any, x: Any, labels: Any) -> Any:
        h = ts.nn.max_pool(ts.nn.relu(params["c1"](x)), (2, 2), strides=(2, 2))  # (8, 4, 4, 4)
        h = ts.nn.relu(params["c2"](h))  # (8, 1, 1, 8)
        logits = params["out"](tnp.mean(h, axis=(1, 2)))
        return tnp.mean(ts.nn.softmax_cross_entropy_with_integer_labels(logits, labels))

    opt = ts.optim.sgd(0.1, momentum=0.9)

    @ts.program
    def step(params: Any, state: Any, x: Any, labels: Any) -> Any:
        value, grads = ts.value_and_grad(loss)(params, x, labels)
        params, state = opt.update(grads, state, params)
        return params, state, value

    state = opt.init(params)
    losses = []
    for _ in range(30):
        params, state, value = step(params, state, x, labels)
        losses.append(float(value))
    assert isinstance(params["c2"], ts.nn.Conv) and params["c2"].strides == (2, 2)
    assert losses[-1] < 0.7 * losses[0], losses


def _message(fn: Any, *specs: Any) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    x, w = ts.Spec((2, 8, 8, 3), f32), ts.Spec((3, 3, 3, 4), f32)
    w_wrong, w64, big = ts.Spec((3, 3, 2, 4), f32), ts.Spec((3, 3, 3, 4), ts.f64), ts.Spec((9, 9, 3, 4), f32)
    cases = [
        (lambda x, w: ts.nn.conv(x, w), (x, w_wrong), ["conv", "feature", "f32[2, 8, 8, 3]", "f32[3, 3, 2, 4]"]),
        (lambda x, w: ts.nn.conv(x, w), (x, w64), ["conv", "dtypes differ", "f64[3, 3, 3, 4]"]),
        (lambda x, w: ts.nn.conv(x, w), (x, big), ["conv", "larger than the input", "f32[9, 9, 3, 4]"]),
        (lambda x, w: ts.nn.conv(x, w, groups=2), (x, w), ["conv", "feature_group_count (2)"]),
        (lambda x, w: ts.nn.conv(x, w, padding="FULL"), (x, w), ["conv", "'FULL'"]),
        (lambda x, w: ts.nn.conv(x, w, strides=(1, 0)), (x, w), ["conv", "strides", "(1, 0)"]),
        (lambda x, w: ts.nn.conv(x[0, 0], w), (x, w), ["conv", "spatial axes", "f32[8, 3]"]),
        (lambda x: ts.nn.max_pool(x, (9, 2)), (x,), ["max_pool", "larger than the padded", "f32[2, 8, 8, 3]"]),
        (lambda x: ts.nn.avg_pool(x, 2), (x,), ["avg_pool", "tuple of ints"]),
        (lambda x: ts.nn.avg_pool(x.astype(ts.i32), (2, 2)), (x,), ["avg_pool", "floating-point"]),
    ]
    for fn, specs, parts in cases:
        message = _message(fn, *specs)
        for part in parts + ["test_nn_conv.py:"]:
            assert part in message, (part, message)
