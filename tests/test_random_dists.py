"""``ts.random``'s JAX-named extras: key data (PRNGKey, key_data, wrap_key_data, clone), closed-form samplers
(lognormal, pareto, rayleigh, maxwell, double_sided_maxwell, weibull_min, wald, triangular), Gamma-based ones
(loggamma, f, generalized_normal, ball) and counts (binomial, multinomial).

Every draw is seeded, so the statistical checks are deterministic: a KS p-value or a moment either passes on
these draws or fails every run. The thresholds (p > 1e-3, several standard errors) were checked to hold."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from conftest import jax_platform
from tensorstage import Tensor, u32

R = ts.random
N = 4000


def _pvalue(x: Any, cdf: Any) -> float:
    stats = pytest.importorskip("scipy.stats")
    return float(stats.kstest(np.asarray(x, np.float64), cdf).pvalue)


# ------------------------------------------------------------------------------------------------- keys


def test_key_data_names_pass_keys_through_and_interoperate() -> None:
    key = R.PRNGKey(7)
    np.testing.assert_array_equal(np.asarray(key), np.asarray(R.key(7)))
    data = R.key_data(key)
    assert data.dtype == np.uint32 and data.shape == (2,)
    np.testing.assert_array_equal(np.asarray(R.wrap_key_data(np.asarray(data))), np.asarray(key))
    np.testing.assert_array_equal(np.asarray(R.clone(key)), np.asarray(key))
    stacked = np.stack([np.asarray(k) for k in R.split(key, 3)])
    assert R.key_data(R.wrap_key_data(stacked, impl="threefry2x32")).shape == (3, 2)
    wrapped = R.wrap_key_data(np.asarray(R.key_data(key)))
    np.testing.assert_array_equal(np.asarray(R.lognormal(wrapped, 0.5, (4,))), np.asarray(R.lognormal(key, 0.5, (4,))))
    with pytest.raises(ts.DTypeError, match=r"wrap_key_data[\s\S]*u32\[\.\.\., 2\][\s\S]*test_random_dists.py"):
        R.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(ts.DTypeError, match=r"key_data[\s\S]*f32\[2\]"):
        R.key_data(ts.numpy.zeros(2))
    with pytest.raises(ValueError, match="only PRNG implementation is 'threefry2x32'"):
        R.wrap_key_data(stacked, impl="rbg")


# --------------------------------------------------------------------------------------- against jax


def test_closed_form_samplers_and_small_binomials_match_jax() -> None:
    jax = pytest.importorskip("jax")
    if not jax.config.jax_threefry_partitionable:
        pytest.skip("jax uses the older threefry layout here")
    jkey = jax.random.PRNGKey(42)
    assert np.array_equal(np.asarray(jkey), np.asarray(R.PRNGKey(42)))
    key = ts.device_put(R.wrap_key_data(np.asarray(jax.random.key_data(jkey))), jax_platform())
    shape = (512,)
    n = np.array([5.0, 20.0, 30.0, 0.0], np.float32)
    p = np.array([0.3, 0.4, 0.9, 0.5], np.float32)
    dyadic = np.array([0.25, 0.25, 0.5], np.float32)  # reverse cumulative sums exact in any summation order

    def draws(r: Any, key: Any) -> Any:
        """The same calls on ``r`` = ts.random or jax.random (the binomials in the inversion regime,
        n * min(p, 1 - p) <= 10, with p on both sides of 1/2)."""
        return (r.lognormal(key, 0.7, shape), r.pareto(key, 2.5, shape), r.rayleigh(key, 1.5, shape),
                r.weibull_min(key, 2.0, 1.5, shape), r.triangular(key, -1.0, 0.5, 2.0, shape),
                r.binomial(key, n, p, (128, 4)), r.multinomial(key, 8.0, dyadic, shape=(64, 3)),
                r.maxwell(key, shape), r.double_sided_maxwell(key, 0.5, 2.0, shape), r.wald(key, 1.3, shape))

    ours_all = ts.program(lambda k: draws(R, k))(key)
    theirs_all = jax.jit(lambda k: draws(jax.random, k))(jkey)
    same = list(zip(ours_all[:7], theirs_all[:7]))
    for i, (ours, theirs) in enumerate(same):
        assert ours.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=str(i))
    # The same formulas, but XLA orders the length's 3-term sum differently (an ulp), and Wald's
    # ``mu + mu² y / 2 - mu / 2 * sqrt(...)`` cancels, magnifying ulps of its inputs.
    for ours, theirs, rtol in zip(ours_all[7:], theirs_all[7:], (4e-7, 4e-7, 1e-4)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-6)
    # reparameterized: jax's gradients through the same construction
    g = ts.grad(lambda s: ts.numpy.sum(R.weibull_min(key, 2.0, s, (64,))))(np.float32(1.5))
    jg = jax.grad(lambda s: jax.random.weibull_min(jkey, 2.0, s, (64,)).sum())(np.float32(1.5))
    assert float(g) == pytest.approx(float(jg), rel=1e-5)


# ------------------------------------------------------------------------------------ distributions


def test_continuous_samplers_follow_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")

    @ts.program
    def sample(key: Tensor[u32, Any]) -> Any:
        k = R.split(key, 13)
        return (R.lognormal(k[0], 0.6, (N,)), R.pareto(k[1], 3.0, (N,)), R.rayleigh(k[2], 2.0, (N,)),
                R.maxwell(k[3], (N,)), R.weibull_min(k[4], 1.5, 0.7, (N,)), R.wald(k[5], 0.8, (N,)),
                R.triangular(k[6], -1.0, 0.0, 3.0, (N,)), R.loggamma(k[7], 0.4, (N,)), R.f(k[8], 3.0, 7.0, (N,)),
                R.generalized_normal(k[9], 1.5, (N,)), R.double_sided_maxwell(k[10], 1.0, 2.0, (N,)),
                R.ball(k[11], 3, 2.0, (N,)), R.ball(k[12], 2, 1.0, (N,)))

    out = sample(R.key(2024))
    cdfs = [stats.lognorm(0.6).cdf, stats.pareto(3.0).cdf, stats.rayleigh(scale=2.0).cdf, stats.maxwell.cdf,
            stats.weibull_min(0.7, scale=1.5).cdf, stats.invgauss(0.8).cdf,
            stats.triang(0.25, loc=-1.0, scale=4.0).cdf, stats.loggamma(0.4).cdf, stats.f(3.0, 7.0).cdf,
            stats.gennorm(1.5).cdf]
    for i, (draws, cdf) in enumerate(zip(out, cdfs)):
        x = np.asarray(draws)
        assert x.dtype == np.float32 and x.shape == (N,) and np.isfinite(x).all(), i
        assert _pvalue(x, cdf) > 1e-3, i
    dsm = np.asarray(out[10])
    assert _pvalue(np.abs(dsm - 1.0) / 2.0, stats.maxwell.cdf) > 1e-3 and abs(np.mean(dsm > 1.0) - 0.5) < 0.03
    # Uniform in a unit p-ball of dimension d: ||x||_p ** d is uniform on [0, 1], and the direction is symmetric.
    for p, d, draws in ((2.0, 3, out[11]), (1.0, 2, out[12])):
        x = np.asarray(draws)
        assert x.shape == (N, d)
        radius = np.sum(np.abs(x.astype(np.float64)) ** p, axis=-1) ** (1 / p)
        assert radius.max() <= 1.0 + 1e-6 and _pvalue(radius ** d, stats.uniform.cdf) > 1e-3
        assert np.abs(x.mean(0)).max() < 0.03
    tiny = np.asarray(R.loggamma(R.key(1), 1e-3, (256,), ts.f64))  # exp underflows; the log stays finite
    assert np.isfinite(tiny).all() and tiny.min() < -745


def _ecdf_gap(x: np.ndarray, cdf: Any) -> float:
    support = np.arange(x.min(), x.max() + 1)
    return float(np.abs(np.searchsorted(np.sort(x), support, side="right") / len(x) - cdf(support)).max())


def test_binomial_regimes_edges_and_multinomial() -> None:
    stats = pytest.importorskip("scipy.stats")
    # inversion (n q <= 10), flipped inversion (p > 1/2), BTRS (n q > 10) on both sides of 1/2
    n = np.array([5.0, 40.0, 30.0, 1000.0, 200.0, 57.9], np.float32)
    p = np.array([0.3, 0.2, 0.9, 0.3, 0.7, 0.5], np.float32)
    x = np.asarray(R.binomial(R.key(5), n, p, (N, 6)))
    assert x.dtype == np.float32 and (x == np.floor(x)).all()
    for j in range(6):
        dist = stats.binom(int(n[j]), float(p[j]))  # n is floored
        assert 0 <= x[:, j].min() and x[:, j].max() <= n[j]
        assert abs(x[:, j].mean() - dist.mean()) < 5 * dist.std() / np.sqrt(N), j
        assert _ecdf_gap(x[:, j], dist.cdf) < 0.04, j  # DKW: P(gap > 0.04) < 1e-5
    edges = np.asarray(R.binomial(
        R.key(6), np.array([-1.0, np.nan, np.inf, 7.0, 7.0, 7.0, 7.0], np.float32),
        np.array([0.3, 0.3, 0.3, 0.0, 1.0, 1.5, np.nan], np.float32),
    ))
    np.testing.assert_array_equal(edges, [np.nan, np.nan, np.inf, 0.0, 7.0, np.nan, np.nan])

    probs = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
    m = np.asarray(R.multinomial(R.key(8), np.array([20.0, 50.0], np.float32), probs, shape=(N, 2, 4)))
    assert m.shape == (N, 2, 4) and m.dtype == np.float32 and (m[..., 1] == 0).all()
    np.testing.assert_array_equal(m.sum(-1), np.broadcast_to([20.0, 50.0], (N, 2)))
    np.testing.assert_allclose(m.mean(0), np.outer([20.0, 50.0], probs), atol=0.15)
    assert _ecdf_gap(m[:, 1, 2], stats.binom(50, 0.6).cdf) < 0.04  # a multinomial marginal is a binomial


# ----------------------------------------------------------------------- shapes, staging, vmap, grads


def test_shapes_dtypes_and_broadcasting() -> None:
    sigma = np.array([0.5, 1.0, 2.0], np.float32)
    ones3 = np.ones(3, np.float32)

    @ts.program
    def sample(key: Tensor[u32, Any]) -> Any:
        return (
            R.lognormal(key, sigma), R.lognormal(key, sigma, (2, 3)), R.lognormal(key), R.maxwell(key, (2,), ts.f64),
            R.pareto(key, np.ones(3)),  # the parameter's dtype
            R.double_sided_maxwell(key, np.zeros(3, np.float32), 1.0, (2,)),
            R.triangular(key, 0.0, np.full((2, 1), 0.5, np.float32), np.ones(4, np.float32)),
            R.ball(key, 4, shape=(2, 3)), R.ball(key, 0), R.multinomial(key, 5.0, np.full((2, 3), 1 / 3, np.float32)),
            R.multinomial(key, 5.0, np.ones((0,), np.float32)), R.generalized_normal(key, 2.0, (5,), ts.f64),
            R.binomial(key, np.array([3, 9], np.int32), 0.5, (5, 2), dtype=ts.f64),
            # one independent draw per element where the parameters widen shape (jax repeats one draw)
            R.weibull_min(key, ones3, 1.0), R.wald(key, 1.0, (4,), ts.bf16), R.wald(key, 1.0, (4,)),
        )

    want = ["f32[3]", "f32[2, 3]", "f32[]", "f64[2]", "f64[3]", "f32[2, 3]", "f32[2, 4]", "f32[2, 3, 4]", "f32[0]",
            "f32[2, 3]", "f32[0]", "f64[5]", "f64[5, 2]", "f32[3]", "bf16[4]", "f32[4]"]
    assert [str(a) for a in sample.stage(R.key(3)).out_avals] == want
    out = sample(R.key(3))
    assert len(set(np.asarray(out[13]).tolist())) == 3
    assert (np.asarray(out[12]) <= [3, 9]).all()
    np.testing.assert_allclose(np.asarray(out[14]).astype(np.float32), np.asarray(out[15]), rtol=1e-2)


def test_staged_equals_eager_and_vmap_over_keys() -> None:
    @ts.program
    def draws(key: Tensor[u32, Any], sigma: Tensor[Any, Any]) -> Any:
        k1, k2 = R.split(key)
        return R.lognormal(k1, sigma), R.binomial(k2, 30.0, 0.4, (6,))

    key = R.key(9)
    sigma = np.array([0.5, 1.0, 2.0], np.float32)
    k1, k2 = R.split(key)
    eager = R.lognormal(k1, sigma), R.binomial(k2, 30.0, 0.4, (6,))
    for staged, plain in zip(draws(key, sigma), eager):
        np.testing.assert_array_equal(np.asarray(staged), np.asarray(plain))

    keys = R.split(R.key(10), 3)

    def per_key(k: Any) -> Any:
        k1, k2 = R.split(R.clone(k))
        return R.triangular(k1, 0.0, 0.3, 1.0, (4,)), R.binomial(k2, 400.0, 0.5, (4,))  # the BTRS loop

    batched = ts.vmap(per_key)(R.wrap_key_data(np.stack([np.asarray(k) for k in keys])))
    looped = [per_key(k) for k in keys]
    for j, column in enumerate(batched):
        np.testing.assert_array_equal(np.asarray(column), np.stack([np.asarray(draws[j]) for draws in looped]))


def test_closed_form_gradients_match_finite_differences() -> None:
    key = R.key(11)

    def sums(t: Any) -> Any:
        """One parameter per sampler: entry i of the result depends on t[i] only."""
        p = [t[i] for i in range(6)]
        draws = (R.lognormal(key, p[0], (6,)), R.pareto(key, p[1], (6,)), R.rayleigh(key, p[2], (6,)),
                 R.double_sided_maxwell(key, 0.5, p[3], (6,)), R.wald(key, p[4], (6,)),
                 R.triangular(key, -1.0, p[5], 2.0, (6,)))
        return ts.numpy.stack([ts.numpy.sum(d) for d in draws])

    theta, h = np.full(6, 0.8), 1e-6
    fd = (np.asarray(sums(theta + h)) - np.asarray(sums(theta - h))) / (2 * h)
    grad = np.asarray(ts.grad(lambda t: ts.numpy.sum(sums(t)))(theta))
    np.testing.assert_allclose(grad, fd, rtol=1e-5)
    with pytest.raises(ts.TransformError, match=r"loggamma: no derivative[\s\S]*test_random_dists.py"):
        ts.grad(lambda a: ts.numpy.sum(R.loggamma(key, a, (3,))))(np.float32(2.0))
    # counts are constants to differentiation
    assert float(ts.grad(lambda q: ts.numpy.sum(R.binomial(key, 50.0, q, (4,))))(np.float32(0.4))) == 0.0


def test_bad_inputs_raise_clear_errors() -> None:
    key = R.key(0)
    where = r"[\s\S]*test_random_dists.py:\d+"
    with pytest.raises(ts.DTypeError, match=r"lognormal[\s\S]*key \(u32\[2\]\)" + where):
        R.lognormal(np.zeros(2, np.float32))
    with pytest.raises(ts.DTypeError, match=r"binomial[\s\S]*a tuple of keys"):
        R.binomial(R.split(key), 3.0, 0.5)
    with pytest.raises(ts.DTypeError, match=r"pareto draws floating-point values" + where):
        R.pareto(key, 2.0, (3,), ts.i32)
    with pytest.raises(ts.DTypeError, match=r"wald[\s\S]*must be f64"):
        R.wald(key, np.ones(3, np.float32), dtype=ts.f64)
    with pytest.raises(ts.ShapeError, match=r"rayleigh[\s\S]*does not broadcast to the sample shape" + where):
        R.rayleigh(key, np.ones(3, np.float32), (4,))
    with pytest.raises(ts.ShapeError, match=r"weibull_min[\s\S]*do not broadcast together"):
        R.weibull_min(key, np.ones(3, np.float32), 1.0, (4,))
    with pytest.raises(ts.ShapeError, match=r"negative dimension"):
        R.maxwell(key, (-1,))
    with pytest.raises(ts.ShapeError, match=r"ball[\s\S]*d must be a non-negative int, got -1"):
        R.ball(key, -1)
    with pytest.raises(ts.ShapeError, match=r"ball[\s\S]*p must be a scalar"):
        R.ball(key, 3, np.ones(3, np.float32))
    with pytest.raises(ts.ShapeError, match=r"multinomial[\s\S]*last axis of categories"):
        R.multinomial(key, 3.0, np.float32(0.5))
    with pytest.raises(ts.ShapeError, match=r"multinomial[\s\S]*does not broadcast"):
        R.multinomial(key, np.ones(3, np.float32), np.ones((2, 4), np.float32) / 4)
    with pytest.raises(ts.DTypeError, match=r"binomial[\s\S]*n must be integer or floating-point counts"):
        R.binomial(key, np.array([True]), 0.5)
