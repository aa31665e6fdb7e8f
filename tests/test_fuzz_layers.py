"""Fuzzing the structured ``ts.nn`` layers against NumPy float64 references and, when installed, ``jax.lax`` /
``jax.nn`` (scoped ``jax.enable_x64()``): the ``conv_general_dilated`` primitive (any layout, lhs and rhs
dilation, negative padding, feature groups, empty batch), ``nn.conv`` in 1-D/2-D/3-D, pooling, attention,
normalization, embeddings, initializers, dense layers and dropout. Values and gradients (inputs and weights) are
checked in one staged program per family; vmap against a Python loop; bf16/f16 accumulation; error messages.

Deliberate differences from NumPy / JAX:
- ``nn.conv`` is channels-last (Flax's layout); a window larger than the (padded) input is a ``ShapeError``
  (``lax`` would return an empty output) unless that input axis is empty ('SAME' of an empty axis: empty, as lax). Explicit negative padding crops, as
  in ``lax``; pooling rejects negative padding (jax's own reduce_window gradient fails on it).
- There is no transposed convolution, ``batch_group_count`` (only 1), min pooling, batch/group norm or
  attention dropout in ``ts.nn``; the primitive's ``lhs_dilation`` is the transposed-convolution building block.
- ``dot_product_attention``: a query with no key to attend to (all masked, or no keys at all) gives zeros and
  zero gradients (JAX: the mean of the values); JAX computes the logits in f32 even for f64 inputs, so the jax
  comparison uses f32 tolerances while the NumPy one is exact.
- ``avg_pool``, ``layer_norm`` and the attention softmax of bf16/f16 inputs accumulate in f32.
- A pooling window made only of padding has the maximum ``-inf`` (as ``lax.reduce_window``) and, with
  ``count_include_pad=False``, the average ``0 / 0 = NaN``; neither sends a gradient.
- ``embedding`` clamps out-of-range runtime ids (a staged ``take``); constant ids known at staging time that are
  out of range raise ``IndexOutOfRangeError``.
- Static arguments (``strides``, ``groups``, ``dropout``'s ``rate``) must be Python numbers.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import nn
from tensorstage import numpy as tnp
from tensorstage import random as R
from tensorstage.staging.builder import bind
from tensorstage.staging.primitives.convolution import ConvDims, conv_general_dilated_p
from tensorstage.tensor import Traced

from conv_cases import conv_reference

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError:  # jax is an optional oracle
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")


def _close(got: Any, want: np.ndarray, tol: float = 1e-10, what: Any = "") -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol, err_msg=repr(what))


# ------------------------------------------------------------------------------------- conv_general_dilated


def _random_conv(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]:
    """A valid random convolution: rank, layout permutations, strides, both dilations, padding (negative too),
    feature groups and sometimes an empty batch."""
    n = int(rng.integers(1, 4))
    groups, cg, og = int(rng.choice([1, 1, 2, 3])), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    batch = 0 if rng.random() < 0.1 else int(rng.integers(1, 3))
    window = [int(rng.integers(1, 4)) for _ in range(n)]
    sizes = [int(rng.integers(1, 6)) for _ in range(n)]
    strides, lhs_dil, rhs_dil = (tuple(int(v) for v in rng.integers(1, 3, n)) for _ in range(3))
    pads = []
    for size, k, ld, rd in zip(sizes, window, lhs_dil, rhs_dil):
        lo, hi = -99, -99
        while (size - 1) * ld + 1 + lo + hi < (k - 1) * rd + 1:
            lo, hi = int(rng.integers(-2, 4)), int(rng.integers(-2, 4))
        pads.append((lo, hi))
    dn = ConvDims(*(tuple(int(a) for a in rng.permutation(n + 2)) for _ in range(3)))
    lhs, rhs = [0] * (n + 2), [0] * (n + 2)
    lhs[dn.lhs[0]], lhs[dn.lhs[1]], rhs[dn.rhs[0]], rhs[dn.rhs[1]] = batch, groups * cg, groups * og, cg
    for i in range(n):
        lhs[dn.lhs[2 + i]], rhs[dn.rhs[2 + i]] = sizes[i], window[i]
    params = {"window_strides": strides, "padding": tuple(pads), "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
              "dimension_numbers": dn, "feature_group_count": groups, "batch_group_count": 1}
    return tuple(lhs), tuple(rhs), params


def _bind_conv(params: dict[str, Any]) -> Callable[[Any, Any], Any]:
    return lambda lhs, rhs: Traced(bind(conv_general_dilated_p, lhs.atom, rhs.atom, **params))


def test_conv_primitive_values_and_both_cotangents_match_reference(rng: np.random.Generator) -> None:
    cases = [_random_conv(rng) for _ in range(10)]
    data = [(rng.standard_normal(ls), rng.standard_normal(rs)) for ls, rs, _ in cases]
    tangents = [(rng.standard_normal(ls), rng.standard_normal(rs)) for ls, rs, _ in cases]
    outs = [conv_reference(x, w, **p) for (x, w), (_, _, p) in zip(data, cases)]
    cts = [rng.standard_normal(o.shape) for o in outs]

    def run(data: Any, cts: Any) -> Any:
        results = []
        for ((x, w), ct, (_, _, params)) in zip(data, cts, cases):
            conv = _bind_conv(params)
            grads = ts.grad(lambda a, b: tnp.sum(conv(a, b) * ct), argnums=(0, 1))(x, w)
            results.append((conv(x, w), grads))
        return results

    got = ts.program(run)(data, cts)
    for i, ((y, (gx, gw)), (x, w), (tx, tw), want, ct, case) in enumerate(zip(got, data, tangents, outs, cts, cases)):
        _close(y, want, what=case)
        assert np.asarray(gx).shape == x.shape and np.asarray(gw).shape == w.shape, case
        # The op is bilinear: <ct, conv(tx, w) + conv(x, tw)> == <gx, tx> + <gw, tw> exactly.
        forward = np.sum(ct * (conv_reference(tx, w, **case[2]) + conv_reference(x, tw, **case[2])))
        assert float(np.sum(np.asarray(gx) * tx) + np.sum(np.asarray(gw) * tw)) == pytest.approx(forward, abs=1e-9), case
        if jax is not None and i < 3:  # jax compiles each call: a sample
            with jax.enable_x64():
                dn = case[2]["dimension_numbers"]
                p = case[2]
                fn = lambda a, b: lax.conv_general_dilated(  # noqa: E731
                    a, b, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
                    lax.ConvDimensionNumbers(dn.lhs, dn.rhs, dn.out), p["feature_group_count"])
                jy, vjp = jax.vjp(fn, jnp.asarray(x), jnp.asarray(w))
                jgx, jgw = vjp(jnp.asarray(ct))
            _close(y, np.asarray(jy), what=case)
            _close(gx, np.asarray(jgx), what=case)
            _close(gw, np.asarray(jgw), what=case)


# ---------------------------------------------------------------------------------------------------- nn.conv


def _conv_params(w: np.ndarray, x_spatial: tuple[int, ...], strides: Any, padding: Any, dilation: Any,
                 groups: int) -> dict[str, Any]:
    n = w.ndim - 2
    strides = (strides,) * n if isinstance(strides, int) else tuple(strides)
    dilation = (dilation,) * n if isinstance(dilation, int) else tuple(dilation)
    if padding == "SAME":
        pads = []
        for size, k, s, d in zip(x_spatial, w.shape[:n], strides, dilation):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            pads.append((total // 2, total - total // 2))
    elif padding == "VALID":
        pads = [(0, 0)] * n
    elif isinstance(padding, int):
        pads = [(padding, padding)] * n
    else:
        pads = [tuple(p) if isinstance(p, tuple) else (p, p) for p in padding]
    return {"window_strides": strides, "padding": tuple(pads), "lhs_dilation": (1,) * n, "rhs_dilation": dilation,
            "dimension_numbers": ConvDims.channels_last(n), "feature_group_count": groups}


# (x shape, w shape, strides, padding, dilation, groups)
NN_CONVS: list[tuple[tuple[int, ...], tuple[int, ...], Any, Any, Any, int]] = [
    ((2, 9, 4), (3, 2, 6), 2, "SAME", 2, 2),
    ((3, 8, 2), (9, 2, 3), 1, "SAME", 1, 1),  # kernel wider than the input
    ((2, 6, 5, 3), (2, 3, 3, 4), (2, 1), ((-1, 2), 1), 1, 1),  # negative padding crops
    ((1, 7, 6, 4), (3, 3, 1, 8), (3, 2), "SAME", (1, 2), 4),  # depthwise, channel multiplier 2
    ((0, 5, 5, 2), (3, 3, 2, 3), 1, 1, 1, 1),  # empty batch
    ((2, 5, 6, 6), (2, 2, 2, 6), 1, "VALID", 2, 3),
    ((1, 4, 5, 3, 2), (2, 3, 2, 2, 4), (1, 2, 1), "SAME", (2, 1, 1), 1),
    ((4, 3, 5, 2), (3, 3, 2, 2, 2), 2, ((2, 2), (0, 0), (1, 0)), 1, 1),  # 3-D, unbatched
]


def test_nn_conv_matches_reference_jax_and_gradients(rng: np.random.Generator) -> None:
    data = [(rng.standard_normal(xs), rng.standard_normal(ws)) for xs, ws, *_ in NN_CONVS]

    def run(data: Any) -> Any:
        out = []
        for (x, w), (_, _, s, p, d, g) in zip(data, NN_CONVS):
            def loss(a: Any, b: Any) -> Any:
                return tnp.sum(tnp.sin(nn.conv(a, b, s, p, d, g)))
            out.append((nn.conv(x, w, s, p, d, g), ts.grad(loss, argnums=(0, 1))(x, w)))
        return out

    got = ts.program(run)(data)
    for i, ((y, (gx, gw)), (x, w), (_, _, s, p, d, g)) in enumerate(zip(got, data, NN_CONVS)):
        unbatched = x.ndim == w.ndim - 1
        xb = x[None] if unbatched else x
        params = _conv_params(w, xb.shape[1:-1], s, p, d, g)
        want = conv_reference(xb, w, **params)
        _close(y, want[0] if unbatched else want, what=(x.shape, w.shape))
        # The gradient of sum(sin(conv)) is the conv's vjp of cos(conv): check it through the bilinear identity.
        ct = np.cos(want)
        tx, tw = rng.standard_normal(xb.shape), rng.standard_normal(w.shape)
        forward = np.sum(ct * (conv_reference(tx, w, **params) + conv_reference(xb, tw, **params)))
        inner = np.sum(np.asarray(gx).reshape(xb.shape) * tx) + np.sum(np.asarray(gw) * tw)
        assert float(inner) == pytest.approx(forward, abs=1e-9)
        if jax is not None and i % 3 == 0:  # jax compiles each call: a sample
            with jax.enable_x64():
                jy = lax.conv_general_dilated(xb, w, params["window_strides"], params["padding"],
                                              rhs_dilation=params["rhs_dilation"], feature_group_count=g,
                                              dimension_numbers=lax.ConvDimensionNumbers(*ConvDims.channels_last(w.ndim - 2)))
            _close(y, np.asarray(jy)[0] if unbatched else np.asarray(jy))
    eager = nn.conv(data[2][0], data[2][1], (2, 1), ((-1, 2), 1))
    _close(eager, np.asarray(got[2][0]))


def test_same_padding_of_an_empty_spatial_axis_is_an_empty_output(rng: np.random.Generator) -> None:
    x, w = np.zeros((2, 0, 5, 2)), rng.standard_normal((3, 3, 2, 4))
    y, (gx, gw) = ts.program(lambda x, w: (nn.conv(x, w, padding="SAME"),
                                           ts.grad(lambda a, b: tnp.sum(nn.conv(a, b, padding="SAME")),
                                                   argnums=(0, 1))(x, w)))(x, w)
    assert y.shape == (2, 0, 5, 4) and gx.shape == x.shape
    np.testing.assert_array_equal(np.asarray(gw), np.zeros(w.shape))
    with pytest.raises(ts.ShapeError, match="larger than the input"):  # a non-empty axis smaller than the window
        nn.conv(np.zeros((2, 1, 5, 2)), w, padding="VALID")


def test_conv_vmap_over_inputs_and_kernels_matches_loop(rng: np.random.Generator) -> None:
    xs, ws = rng.standard_normal((3, 2, 7, 6, 4)), rng.standard_normal((3, 3, 2, 2, 6))

    def f(x: Any, w: Any) -> Any:
        return nn.conv(x, w, strides=(2, 1), padding=((-1, 1), 1), dilation=(1, 2), groups=2)

    both, over_w = ts.vmap(f)(xs, ws), ts.vmap(f, in_axes=(None, 0))(xs[0], ws)
    grads = ts.vmap(ts.grad(lambda x, w: tnp.sum(f(x, w) ** 2), argnums=1))(xs, ws)
    single = ts.program(f)
    single_grad = ts.grad(lambda x, w: tnp.sum(f(x, w) ** 2), argnums=1)
    for i in range(3):
        _close(both[i], np.asarray(single(xs[i], ws[i])), 1e-12)
        _close(over_w[i], np.asarray(single(xs[0], ws[i])), 1e-12)
        _close(grads[i], np.asarray(single_grad(xs[i], ws[i])), 1e-10)


def test_low_precision_conv_and_pooling_accumulate_accurately(rng: np.random.Generator) -> None:
    x = rng.uniform(0, 1, (1, 64, 64, 2)) + 100  # a sum of 4096 values near 100 overflows f16, rounds in bf16
    xc, wc = rng.standard_normal((2, 3, 512)), rng.standard_normal((1, 512, 2))
    for dtype, tol in ((ts.bf16, 1e-2), (ts.f16, 2e-3)):
        xs, xcs, wcs = (ts.asarray(a.astype(np.float32)).astype(dtype) for a in (x, xc, wc))
        xr, xcr, wcr = (np.asarray(a.astype(ts.f32), np.float64) for a in (xs, xcs, wcs))
        pooled = nn.avg_pool(xs, (64, 64))
        assert pooled.dtype == ts.dtypes.to_numpy(dtype)
        _close(pooled.astype(ts.f32), xr.mean(axis=(1, 2), keepdims=True), tol * 100)
        padded = nn.avg_pool(xs, (5, 5), strides=3, padding="SAME", count_include_pad=False).astype(ts.f32)
        assert np.all(np.abs(np.asarray(padded) - 100.5) < 0.6)
        want = np.einsum("bsc,co->bso", xcr, wcr[0])
        got = np.asarray(nn.conv(xcs, wcs).astype(ts.f32), np.float64)
        assert np.max(np.abs(got - want)) < tol * np.max(np.abs(want)), dtype


# -------------------------------------------------------------------------------------------------- pooling


def _pool_reference(x: np.ndarray, n: int, window: tuple[int, ...], strides: tuple[int, ...],
                    pads: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(max, sum, count of real elements) over each window of the ``n`` axes before the last."""
    first = x.ndim - 1 - n
    full = [(0, 0)] * first + list(pads) + [(0, 0)]
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xm = np.pad(x, full, constant_values=low)
    xs = np.pad(x.astype(np.float64), full)
    ones = np.pad(np.ones(x.shape[first:-1]), list(pads))
    outs = [(xs.shape[first + i] - window[i]) // strides[i] + 1 for i in range(n)]
    mx = np.empty((*x.shape[:first], *outs, x.shape[-1]), x.dtype)
    total, count = np.empty(mx.shape), np.empty(outs)
    for pos in itertools.product(*map(range, outs)):
        view = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, window))
        axes = tuple(range(first, first + n))
        mx[(Ellipsis, *pos, slice(None))] = xm[(Ellipsis, *view, slice(None))].max(axis=axes)
        total[(Ellipsis, *pos, slice(None))] = xs[(Ellipsis, *view, slice(None))].sum(axis=axes)
        count[pos] = ones[view].sum()
    return mx, total, count[..., None]


def _random_pool(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], Any]:
    n = int(rng.integers(1, 4))
    sizes = tuple(int(v) for v in rng.integers(1, 6, n))
    window = tuple(int(rng.integers(1, s + 2)) for s in sizes)
    strides = tuple(int(v) for v in rng.integers(1, 4, n))
    lead = tuple(int(v) for v in rng.integers(0, 3, int(rng.integers(0, 3))))
    padding: Any = ["SAME", "VALID", "explicit"][int(rng.integers(0, 3))]
    if padding == "explicit" or (padding == "VALID" and any(k > s for k, s in zip(window, sizes))):
        padding = tuple((int(rng.integers(0, k)), int(k - 1 - rng.integers(0, k) + (k > s))) for k, s in zip(window, sizes))
    return (*lead, *sizes, 2), window, strides, padding


def _resolved(shape: tuple[int, ...], window: tuple[int, ...], strides: tuple[int, ...], padding: Any) -> Any:
    if padding == "VALID":
        return ((0, 0),) * len(window)
    if padding != "SAME":
        return padding
    sizes = shape[len(shape) - 1 - len(window):-1]
    return tuple(((t := max((-(-n // s) - 1) * s + k - n, 0)) // 2, t - t // 2) for n, k, s in zip(sizes, window, strides))


def test_pooling_fuzz_matches_reference_with_gradients(rng: np.random.Generator) -> None:
    cases = [_random_pool(rng) for _ in range(7)]
    xs = [rng.standard_normal(shape) for shape, *_ in cases]
    cts = [rng.standard_normal(_pool_reference(x, len(w), w, s, _resolved(x.shape, w, s, p))[0].shape)
           for x, (_, w, s, p) in zip(xs, cases)]

    def run(xs: Any, cts: Any) -> Any:
        out = []
        for x, ct, (_, w, s, p) in zip(xs, cts, cases):
            def excl(a: Any) -> Any:
                return nn.avg_pool(a, w, s, p, count_include_pad=False)
            out.append((nn.max_pool(x, w, s, p), nn.avg_pool(x, w, s, p), excl(x),
                        ts.grad(lambda a: tnp.sum(nn.max_pool(a, w, s, p) * ct))(x),
                        ts.grad(lambda a: tnp.sum(excl(a) * ct))(x)))
        return out

    got = ts.program(run)(xs, cts)
    for i, ((mx, avg, ex, gmax, gavg), x, ct, (shape, w, s, p)) in enumerate(zip(got, xs, cts, cases)):
        pads = _resolved(shape, w, s, p)
        want_max, total, count = _pool_reference(x, len(w), w, s, pads)
        _close(mx, want_max, 0, (shape, w, s, p))
        _close(avg, total / math.prod(w), 1e-12, (shape, w, s, p))
        _close(ex, total / count, 1e-12, (shape, w, s, p))
        # Both are linear in x away from ties (random data): <grad, x> is the output weighted by the cotangent. A
        # window of padding only has the maximum -inf and the average 0 / 0 (NaN), as the formulas, and sends no
        # gradient.
        _close(tnp.sum(gmax * x), np.sum(np.where(count > 0, ct * np.where(count > 0, want_max, 0), 0.0)), 1e-9)
        _close(tnp.sum(gavg * x), np.sum(np.where(count > 0, ct * total / np.maximum(count, 1), 0.0)), 1e-9)
        if jax is not None and i < 3:
            full = ((0, 0),) * (x.ndim - 1 - len(w)) + tuple(pads) + ((0, 0),)
            dims, steps = (1,) * (x.ndim - 1 - len(w)) + w + (1,), (1,) * (x.ndim - 1 - len(w)) + s + (1,)
            with jax.enable_x64():
                jmax = jax.grad(lambda a: jnp.sum(lax.reduce_window(a, -jnp.inf, lax.max, dims, steps, full) * ct))(x)
            _close(gmax, np.asarray(jmax), 1e-12)


def test_integer_max_pool_and_global_pooling(rng: np.random.Generator) -> None:
    x = rng.integers(-100, 100, (2, 5, 4, 3))
    for dtype in (np.int8, np.uint8, np.int32):
        xi = x.astype(dtype) if dtype != np.uint8 else (x + 100).astype(dtype)
        want, _, _ = _pool_reference(xi, 2, (3, 2), (2, 2), ((1, 1), (0, 0)))
        got = nn.max_pool(xi, (3, 2), 2, "SAME")
        assert np.asarray(got).dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    xf = rng.standard_normal((2, 5, 4, 3))
    _close(nn.avg_pool(xf, (5, 4)), xf.mean(axis=(1, 2), keepdims=True), 1e-12)
    _close(nn.max_pool(xf, (5, 4)), xf.max(axis=(1, 2), keepdims=True), 0)
    assert np.asarray(nn.max_pool(np.zeros((0, 4, 4, 2), np.float32), (2, 2))).shape == (0, 3, 3, 2)


# ------------------------------------------------------------------------------------------------ attention


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: Any, bias: Any, scale: float) -> np.ndarray:
    logits = np.einsum("...thd,...shd->...hts", q, k) * scale + bias
    logits = np.where(valid, logits, -np.inf)
    peak = np.max(logits, -1, keepdims=True, initial=-np.inf)
    w = np.exp(logits - np.where(np.isfinite(peak), peak, 0.0))
    total = w.sum(-1, keepdims=True)
    return np.einsum("...hts,...shd->...thd", w / np.where(total > 0, total, 1.0), v)


MASK_SHAPES = [(), (6,), (1, 6), (4, 6), (3, 1, 6), (3, 4, 1), (2, 1, 1, 6), (2, 3, 4, 6), (1, 1, 4, 1)]


def test_attention_masks_bias_scale_and_causal_match_reference(rng: np.random.Generator) -> None:
    B, T, S, H, D, Dv = 2, 4, 6, 3, 5, 2
    q, k, v = rng.standard_normal((B, T, H, D)), rng.standard_normal((B, S, H, D)), rng.standard_normal((B, S, H, Dv))
    masks = [rng.random(shape) < 0.7 for shape in MASK_SHAPES]
    biases = [rng.standard_normal(shape) for shape in MASK_SHAPES]
    scales = [float(s) for s in rng.uniform(0.2, 2.0, len(MASK_SHAPES))]

    def run(q: Any, k: Any, v: Any, masks: Any, biases: Any) -> Any:
        out = [nn.dot_product_attention(q, k, v, b, m, scale=c, is_causal=i % 2 == 1)
               for i, (m, b, c) in enumerate(zip(masks, biases, scales))]
        # T > S and T < S, causal (top-left aligned, as jax)
        out += [nn.dot_product_attention(k, q, q, is_causal=True), nn.dot_product_attention(q, k, v, is_causal=True)]
        return out + [nn.dot_product_attention(q, k, tnp.repeat(v[..., :1], D, -1), biases[6], masks[6], scales[6])]

    got = ts.program(run)(q, k, v, masks, biases)
    causal = np.tril(np.ones((T, S), bool))
    for i, (m, b, c) in enumerate(zip(masks, biases, scales)):
        valid = m & causal if i % 2 else m
        _close(got[i], _attention(q, k, v, valid, b, c), 1e-12, MASK_SHAPES[i])
    _close(got[-3], _attention(k, q, q, np.tril(np.ones((S, T), bool)), 0.0, 1 / math.sqrt(D)), 1e-12)
    _close(got[-2], _attention(q, k, v, causal, 0.0, 1 / math.sqrt(D)), 1e-12)
    if jax is not None:
        with jax.enable_x64():  # jax's logits are f32 whatever the inputs: f32 tolerances
            want = jax.nn.dot_product_attention(k, q, q, is_causal=True)
            _close(got[-3], np.asarray(want), 1e-6)
            want = jax.nn.dot_product_attention(q, k, v[..., :1].repeat(D, -1), biases[6],
                                                jnp.broadcast_to(masks[6], (B, H, T, S)), scale=scales[6])
        alive = np.broadcast_to(masks[6], (B, H, T, S)).any(-1).transpose(0, 2, 1)[..., None]
        _close(got[-1], np.where(alive, np.asarray(want), 0.0), 1e-6)


def test_attention_gradients_for_query_key_value_and_bias(rng: np.random.Generator) -> None:
    q, k, v = rng.standard_normal((2, 3, 2, 4)), rng.standard_normal((2, 5, 2, 4)), rng.standard_normal((2, 5, 2, 4))
    bias, mask = rng.standard_normal((2, 3, 5)), rng.random((3, 5)) < 0.6
    mask[1] = False  # a fully masked query row: zero output, zero gradients
    mask[0, 0] = mask[2, 0] = True

    def loss(q: Any, k: Any, v: Any, b: Any) -> Any:
        return tnp.sum(tnp.sin(nn.dot_product_attention(q, k, v, b, mask, scale=0.8)))

    grads = [np.asarray(g) for g in ts.grad(loss, argnums=(0, 1, 2, 3))(q, k, v, bias)]
    assert np.all(grads[0][:, 1] == 0) and np.all(np.isfinite(grads[1]))

    def ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(np.sin(_attention(q, k, v, mask, b, 0.8))))

    args = [q, k, v, bias]
    for i, g in enumerate(grads):  # directional finite differences, f64
        t = rng.standard_normal(args[i].shape)
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + 1e-6 * t, args[i] - 1e-6 * t
        assert float(np.sum(g * t)) == pytest.approx((ref(*plus) - ref(*minus)) / 2e-6, rel=1e-6, abs=1e-8), i


def test_attention_edge_shapes_and_low_precision(rng: np.random.Generator) -> None:
    q, k, v = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 6, 3, 5)), rng.standard_normal((2, 6, 3, 2))
    no_keys = nn.dot_product_attention(q, k[:, :0], v[:, :0])  # attends to nothing: zeros
    _close(no_keys, np.zeros((2, 4, 3, 2)), 0)
    gq = ts.grad(lambda a: tnp.sum(nn.dot_product_attention(a, k[:, :0], v[:, :0])))(q)
    _close(gq, np.zeros_like(q), 0)
    no_features = nn.dot_product_attention(q[..., :0], k[..., :0], v)  # all logits 0: the mean of the values
    _close(no_features, np.broadcast_to(v.mean(1, keepdims=True), (2, 4, 3, 2)), 1e-12)
    _close(nn.dot_product_attention(q[0], k[0], v[0]), _attention(q[0], k[0], v[0], True, 0.0, 1 / math.sqrt(5)), 1e-12)
    _close(nn.dot_product_attention(q[:, :0], k, v), np.zeros((2, 0, 3, 2)), 0)
    qq, kk = rng.standard_normal((1, 256, 1, 64)), rng.standard_normal((1, 256, 1, 64))
    for dtype, tol in ((ts.bf16, 2e-2), (ts.f16, 2e-3)):
        qs, ks = (ts.asarray(a.astype(np.float32)).astype(dtype) for a in (qq, kk))
        qr, kr = (np.asarray(a.astype(ts.f32), np.float64) for a in (qs, ks))
        got = nn.dot_product_attention(qs, ks, ks)
        assert got.dtype == ts.dtypes.to_numpy(dtype)
        _close(got.astype(ts.f32), _attention(qr, kr, kr, True, 0.0, 1 / 8), tol)


def test_multi_head_attention_layer_matches_numpy(rng: np.random.Generator) -> None:
    layer = nn.multi_head_attention(R.key(3), 4, 2, 3, out_features=5, dtype=ts.f64)
    x, ctx = rng.standard_normal((2, 6, 4)), rng.standard_normal((2, 7, 4))
    mask = rng.random((2, 6, 7)) < 0.7
    wq, wk, wv, wo = (np.asarray(p) for p in (layer.query, layer.key, layer.value, layer.out))
    q, k, v = np.einsum("bti,ihd->bthd", x, wq), np.einsum("bti,ihd->bthd", ctx, wk), np.einsum("bti,ihd->bthd", ctx, wv)
    want = np.einsum("bthd,hdo->bto", _attention(q, k, v, mask, 0.0, 1 / math.sqrt(3)), wo)
    _close(layer(x, ctx, mask=mask), want, 1e-12)
    assert wq.shape == (4, 2, 3) and wo.shape == (2, 3, 5) and wq.dtype == np.float64


# ---------------------------------------------------------------------------------------------- normalization


class Batch(ts.Dim): ...
class Time(ts.Dim): ...
class Feat(ts.Dim): ...


def _layer_norm(x: np.ndarray, axes: tuple[int, ...], eps: float, center: bool = True) -> np.ndarray:
    c = x - x.mean(axes, keepdims=True) if center else x
    return c / np.sqrt((c * c).mean(axes, keepdims=True) + eps)


def test_norms_over_axes_with_scale_and_bias_match_numpy_and_fd(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4)) * 5 + 3
    cases = [(-1, (2,), (4,)), ((1, 2), (1, 2), (3, 4)), ((0, -1), (0, 2), (2, 1, 4)), (Time, (1,), (3, 1))]
    scales = [rng.standard_normal(shape) for _, _, shape in cases]
    biases = [rng.standard_normal(shape) for _, _, shape in cases]

    def run(x: ts.Tensor[ts.f64, Batch, Time, Feat], scales: Any, biases: Any) -> Any:
        out = []
        for (axis, _, _), s, b in zip(cases, scales, biases):
            out += [nn.layer_norm(x, s, b, axis=axis, eps=1e-3), nn.rms_norm(x, s, axis=axis, eps=1e-2),
                    nn.standardize(x, axis=axis),
                    ts.grad(lambda a, s: tnp.sum(tnp.sin(nn.layer_norm(a, s, axis=axis))), argnums=(0, 1))(x, s)]
        return out

    got = ts.program(run)(x, scales, biases)
    for i, ((_, axes, _), s, b) in enumerate(zip(cases, scales, biases)):
        ln, rms, std, (gx, gs) = got[4 * i: 4 * i + 4]
        _close(ln, _layer_norm(x, axes, 1e-3) * s + b, 1e-12, axes)
        _close(rms, _layer_norm(x, axes, 1e-2, center=False) * s, 1e-12, axes)
        _close(std, _layer_norm(x, axes, 1e-5), 1e-12, axes)
        tx, ts_ = rng.standard_normal(x.shape), rng.standard_normal(s.shape)
        ref = lambda a, c: np.sum(np.sin(_layer_norm(a, axes, 1e-5) * c))  # noqa: E731
        fd = (ref(x + 1e-6 * tx, s + 1e-6 * ts_) - ref(x - 1e-6 * tx, s - 1e-6 * ts_)) / 2e-6
        assert float(np.sum(np.asarray(gx) * tx) + np.sum(np.asarray(gs) * ts_)) == pytest.approx(fd, rel=1e-6)
    layer = nn.layer_norm_layer(4, dtype=ts.f64)
    _close(layer(x), _layer_norm(x, (2,), 1e-5), 1e-12)
    big = rng.standard_normal((2, 1024)) * 3 + 50
    for dtype in (ts.bf16, ts.f16):
        out = np.asarray(nn.layer_norm(ts.asarray(big.astype(np.float32)).astype(dtype)).astype(ts.f32), np.float64)
        assert np.all(np.abs(out.mean(-1)) < 1e-2) and np.all(np.abs(out.std(-1) - 1) < 1e-2), dtype


def test_norm_vmap_matches_loop(rng: np.random.Generator) -> None:
    x, s = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 5))
    mapped = ts.vmap(lambda a, c: nn.layer_norm(a, c, axis=(0, 1)))(x, s)
    for i in range(3):
        _close(mapped[i], _layer_norm(x[i], (0, 1), 1e-5) * s[i], 1e-12)


# -------------------------------------------------------------------------------- embedding, init, dense, dropout


def test_embedding_lookup_clamping_and_scatter_gradient(rng: np.random.Generator) -> None:
    table = rng.standard_normal((5, 3))
    ids = np.array([[0, 4, 4], [-1, 2, 0]], np.int32)
    for dtype in (np.int8, np.uint8, np.int32, np.int64):
        got = nn.embedding(table, ids.astype(dtype) if dtype != np.uint8 else ids.clip(0).astype(dtype))
        np.testing.assert_array_equal(np.asarray(got), table[ids if dtype != np.uint8 else ids.clip(0)])
    oob = np.array([7, -9, 255], np.int32)  # runtime ids out of range clamp into range
    np.testing.assert_array_equal(np.asarray(nn.embedding(table, oob)), table[[4, 0, 4]])
    ct = rng.standard_normal((2, 3, 3))
    grad = ts.grad(lambda t, i, c: tnp.sum(nn.embedding(t, i) * c))(table, ids, ct)
    want = np.zeros_like(table)
    np.add.at(want, ids, ct)  # repeated ids accumulate
    _close(grad, want, 1e-12)
    layer = nn.embed(R.key(0), 1000, 16)
    std = float(np.asarray(layer.table).std())
    assert abs(std - 0.25) < 0.01 and np.asarray(layer(np.array([3], np.int32))).shape == (1, 16)
    assert np.asarray(nn.embedding(table, np.zeros((0, 2), np.int32))).shape == (0, 2, 3)


INITIALIZERS = ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal"]


def test_initializer_variance_bounds_and_dtypes() -> None:
    shapes = [(300, 200), (3, 3, 40, 60)]

    def draw(key: Any) -> Any:
        out = {}
        for name in INITIALIZERS:
            init = getattr(nn, name)
            out[name] = ([init(key, shape, ts.f64) for shape in shapes], init(key, shapes[0], ts.f64),
                         [init(key, (4, 3), dtype) for dtype in (ts.f32, ts.bf16, ts.f16)], init(key, (0, 3)))
        return out

    got = ts.program(draw)(R.key(7))
    for name, (draws, again, typed, empty) in got.items():
        for shape, w in zip(shapes, draws):
            w = np.asarray(w)
            fan_in, fan_out = math.prod(shape[:-1]), shape[-1] * math.prod(shape[:-2])
            variance = 2 / (fan_in + fan_out) if name.startswith("glorot") else 2 / fan_in
            assert w.shape == shape and w.dtype == np.float64
            assert abs(w.var() / variance - 1) < 0.05 and abs(w.mean()) < 0.05 * math.sqrt(variance), (name, shape)
            if name.endswith("uniform"):
                assert np.max(np.abs(w)) <= math.sqrt(3 * variance)
        np.testing.assert_array_equal(np.asarray(again), np.asarray(draws[0]))  # a fixed key repeats
        assert [a.dtype for a in typed] == [ts.dtypes.to_numpy(d) for d in (ts.f32, ts.bf16, ts.f16)]
        assert np.asarray(empty).shape == (0, 3)


def test_dense_and_conv_layers_apply_and_differentiate(rng: np.random.Generator) -> None:
    layer = nn.dense(R.key(2), 4, 3, init=nn.he_normal, dtype=ts.f64)
    x = rng.standard_normal((2, 5, 4))
    _close(layer(x), x @ np.asarray(layer.w) + np.asarray(layer.b), 1e-12)
    g = ts.grad(lambda p, x: tnp.sum(p(x) ** 2))(layer, x)
    y = x @ np.asarray(layer.w)
    _close(g.w, np.einsum("bti,bto->io", x, 2 * y), 1e-10)
    _close(g.b, (2 * y).sum((0, 1)), 1e-10)
    conv = nn.conv_layer(R.key(3), 4, 6, (3,), strides=2, padding=((-1, 2),), groups=2, dtype=ts.f64)
    assert np.asarray(conv.w).shape == (3, 2, 6) and conv.padding == ((-1, 2),)
    xs = rng.standard_normal((2, 9, 4))
    want = conv_reference(xs, np.asarray(conv.w), **_conv_params(np.asarray(conv.w), (9,), 2, ((-1, 2),), 1, 2))
    _close(conv(xs), want, 1e-12)


def test_dropout_rates_modes_statistics_and_gradient(rng: np.random.Generator) -> None:
    x = rng.standard_normal((100, 100)).astype(np.float32)
    key = R.key(11)
    for rate in (0.1, 0.5, 0.9):
        out = np.asarray(nn.dropout(key, x, rate))
        kept = out != 0
        assert abs(kept.mean() - (1 - rate)) < 0.02, rate
        np.testing.assert_allclose(out[kept], x[kept] / np.float32(1 - rate), rtol=1e-6)
        g = np.asarray(ts.grad(lambda a: tnp.sum(nn.dropout(key, a, rate)))(x))
        np.testing.assert_allclose(g, kept / np.float32(1 - rate), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(nn.dropout(key, x, 0.0)), x)
    np.testing.assert_array_equal(np.asarray(nn.dropout(key, x, 0.7, deterministic=True)), x)
    assert np.all(np.asarray(nn.dropout(key, x, 1.0)) == 0)
    assert np.all(np.asarray(ts.grad(lambda a: tnp.sum(nn.dropout(key, a, 1.0)))(x)) == 0)
    a, b = np.asarray(nn.dropout(R.key(1), x, 0.5)), np.asarray(nn.dropout(R.key(2), x, 0.5))
    assert 0.4 < np.mean((a != 0) != (b != 0)) < 0.6  # independent masks for different keys
    assert np.asarray(nn.dropout(key, np.zeros((0, 3), np.float32), 0.5)).shape == (0, 3)
    for bad in (-0.1, 1.5, float("nan"), True, "0.5"):
        with pytest.raises(ValueError, match="rate"):
            nn.dropout(key, x, bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "fn, error, words",
    [
        (lambda x, w: nn.conv(x, w), ts.ShapeError, r"conv.*feature.*Feat=4.*f32\[3, 3, 5\]"),
        (lambda x, w: nn.conv(x, w, padding=((1, 2, 3),)), ts.ShapeError, r"conv: padding"),
        (lambda x, w: nn.conv(x, w[:1, :, :4], strides=(1, 1)), ts.ShapeError, r"conv: strides"),
        (lambda x, w: nn.conv(x, tnp.ones((3, 2, 4), ts.f32), groups=2, padding=((-1, -1),)), ts.ShapeError,
         r"larger than the input.*Time=3"),
        (lambda x, w: nn.conv(x[0, 0], w), ts.ShapeError, r"conv: input f32\[Feat=4\]"),
        (lambda x, w: nn.max_pool(x, (2,), padding=((-1, 0),)), ts.ShapeError, r"max_pool: padding"),
        (lambda x, w: nn.avg_pool(x, (5,)), ts.ShapeError, r"avg_pool.*larger than.*Time=3"),
        (lambda x, w: nn.dot_product_attention(x[:, :, None], w, w), ts.ShapeError,
         r"dot_product_attention.*Batch=2, Time=3"),
        (lambda x, w: nn.dot_product_attention(x[:, :, None], x[:, :, None], x[:, :, None], mask=x > 0),
         ts.ShapeError, r"mask bool\[Batch=2, Time=3, Feat=4\] does not broadcast"),
        (lambda x, w: nn.dot_product_attention(x[:, :, None], x[:, :, None], x[:, :, None], scale="a"),
         TypeError, r"dot_product_attention: scale"),
        (lambda x, w: nn.rms_norm(x, axis=Batch, scale=w), ts.ShapeError, r"rms_norm: scale f32\[3, 3, 5\]"),
        (lambda x, w: nn.embedding(x, x.astype(ts.i32)), ts.ShapeError, r"embedding: the table.*Batch=2"),
    ],
)
def test_layer_errors_name_the_op_dims_and_user_line(fn: Callable[..., Any], error: type[Exception], words: str) -> None:
    def staged(x: ts.Tensor[ts.f32, Batch, Time, Feat], w: Any) -> Any:
        return fn(x, w)

    with pytest.raises(error, match=words) as info:
        ts.program(staged).stage(ts.Spec((2, 3, 4), ts.f32, ("Batch", "Time", "Feat")), ts.Spec((3, 3, 5), ts.f32))
    assert "test_fuzz_layers.py" in str(info.value)
