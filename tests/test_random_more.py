"""``ts.random`` distributions beyond uniform/normal: agreement with jax.random where the algorithm is the same,
Kolmogorov–Smirnov and moment checks against scipy's exact distributions, determinism, dtypes, vmap over keys,
reparameterized gradients, and errors."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from conftest import PLATFORM, jax_platform
from tensorstage import Tensor, u32



R = ts.random
N = 4000


def _ks(x: np.ndarray, cdf: Any) -> float:
    stats = pytest.importorskip("scipy.stats")
    return float(stats.kstest(np.asarray(x, np.float64), cdf).pvalue)


def test_inverse_cdf_samplers_follow_their_distributions() -> None:
    stats = pytest.importorskip("scipy.stats")
    keys = R.split(R.key(11), 6)
    cases = [
        (R.exponential(keys[0], (N,)), stats.expon.cdf),
        (R.laplace(keys[1], (N,)), stats.laplace.cdf),
        (R.logistic(keys[2], (N,)), stats.logistic.cdf),
        (R.gumbel(keys[3], (N,)), stats.gumbel_r.cdf),
        (R.cauchy(keys[4], (N,)), stats.cauchy.cdf),
        (R.truncated_normal(keys[5], -0.5, 2.0, (N,)), stats.truncnorm(-0.5, 2.0).cdf),
    ]
    for draws, cdf in cases:
        x = np.asarray(draws)
        assert x.dtype == np.float32 and x.shape == (N,) and np.isfinite(x).all()
        assert _ks(x, cdf) > 1e-3
    tn = np.asarray(cases[-1][0])
    assert tn.min() > -0.5 and tn.max() < 2.0


def test_matches_jax_bit_for_bit_when_installed() -> None:
    jax = pytest.importorskip("jax")
    if not jax.config.jax_threefry_partitionable:
        pytest.skip("jax uses the older threefry layout here")
    theirs = jax.random.PRNGKey(42)
    # On jax's platform (the CPU in a GPU run, see conftest.jax_platform): same uniforms, same formulas, identical
    # f32 draws (Cauchy's tan is lowered differently: close, not equal). On another platform the draws that go
    # through log/log1p/erf/erfinv (GPU_TRANSCENDENTAL) differ by ulps: close; bit-based ones stay identical.
    for platform in sorted({PLATFORM, jax_platform()}):
        ours = ts.device_put(R.key(42), platform)  # eager ops follow their data
        same = _same_platform_check(platform == jax_platform())
        for name in ("exponential", "laplace", "logistic", "gumbel"):
            a = np.asarray(getattr(R, name)(ours, (256,)))
            same(a, np.asarray(getattr(jax.random, name)(theirs, (256,))), name)
        np.testing.assert_allclose(
            np.asarray(R.cauchy(ours, (256,))), np.asarray(jax.random.cauchy(theirs, (256,))), rtol=1e-5, atol=1e-6
        )
        np.testing.assert_array_equal(
            np.asarray(R.rademacher(ours, (256,))), np.asarray(jax.random.rademacher(theirs, (256,)))
        )
        # floor(log1p(-u) / log1p(-p)): an ulp off can only move a draw that sits on a step by one
        same(np.asarray(R.geometric(ours, 0.3, (256,))), np.asarray(jax.random.geometric(theirs, 0.3, (256,))),
             "geometric", integer=True)
        same(np.asarray(R.truncated_normal(ours, -1.0, 2.0, (256,))),
             np.asarray(jax.random.truncated_normal(theirs, -1.0, 2.0, (256,))), "truncated_normal")
        np.testing.assert_array_equal(
            np.asarray(R.choice(ours, 10, (64,))), np.asarray(jax.random.choice(theirs, 10, (64,)))
        )


# Across platforms (tensorstage on a GPU, jax on the CPU), transcendental float32 draws agree to a few ulps: the
# GPU's log1p was 1 ulp off XLA:CPU's on 14 of 256 exponential draws on an H100.
GPU_TRANSCENDENTAL_RTOL = 4 * float(np.finfo(np.float32).eps)


def _same_platform_check(exact: bool) -> Any:
    """Bit-for-bit where ``exact``, else within ``GPU_TRANSCENDENTAL_RTOL`` (integers: a step of at most one)."""

    def check(got: np.ndarray, want: np.ndarray, name: str, integer: bool = False) -> None:
        assert got.dtype == want.dtype, name
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=name)
        elif integer:
            assert np.abs(got.astype(np.int64) - want).max(initial=0) <= 1, name
        else:
            np.testing.assert_allclose(got, want, rtol=GPU_TRANSCENDENTAL_RTOL, atol=1e-6, err_msg=name)

    return check


def test_gamma_family_distributions() -> None:
    stats = pytest.importorskip("scipy.stats")
    k = R.split(R.key(3), 5)
    shapes = np.array([0.3, 1.0, 4.5], np.float32)
    g = np.asarray(R.gamma(k[0], shapes, (N, 3)))
    assert g.shape == (N, 3) and g.dtype == np.float32 and (g > 0).all()
    for j, a in enumerate(shapes):
        assert _ks(g[:, j], stats.gamma(float(a)).cdf) > 1e-3
    assert _ks(np.asarray(R.beta(k[1], 0.5, 2.0, (N,))), stats.beta(0.5, 2.0).cdf) > 1e-3
    assert _ks(np.asarray(R.chisquare(k[2], 3.0, (N,))), stats.chi2(3.0).cdf) > 1e-3
    assert _ks(np.asarray(R.t(k[3], 4.0, (N,))), stats.t(4.0).cdf) > 1e-3
    alpha = np.array([0.5, 2.0, 3.5], np.float32)
    d = np.asarray(R.dirichlet(k[4], alpha, (N,)))
    assert d.shape == (N, 3)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=0.01)
    assert _ks(d[:, 0], stats.beta(0.5, 5.5).cdf) > 1e-3  # a Dirichlet marginal is a Beta
    tiny = np.asarray(R.gamma(k[0], 1e-3, (100,), ts.f64))  # boosted in log space: tiny but not all zero
    assert tiny.dtype == np.float64 and (tiny >= 0).all() and (tiny > 0).any()
    assert np.isnan(np.asarray(R.gamma(k[0], np.array([-1.0, 0.0], np.float32)))).all()


def test_poisson_both_regimes_and_geometric() -> None:
    stats = pytest.importorskip("scipy.stats")
    lam = np.array([0.0, 0.7, 6.0, 10.0, 45.0, 3000.0], np.float32)
    x = np.asarray(R.poisson(R.key(5), lam, (N, 6)))
    assert x.dtype == np.int32 and (x[:, 0] == 0).all()
    for j in range(1, 6):
        # Discrete KS with the exact CDF is conservative; compare moments too (standard errors in brackets).
        mean, var = x[:, j].mean(), x[:, j].var()
        assert abs(mean - lam[j]) < 5 * np.sqrt(lam[j] / N), (lam[j], mean)
        assert abs(var - lam[j]) < 6 * lam[j] * np.sqrt(2 / N) + 0.05, (lam[j], var)
        # KS is not valid for discrete data; the empirical CDF at the support points is (DKW: P(> 0.04) < 1e-5).
        support = np.arange(x[:, j].min(), x[:, j].max() + 1)
        ecdf = np.searchsorted(np.sort(x[:, j]), support, side="right") / N
        assert np.abs(ecdf - stats.poisson(float(lam[j])).cdf(support)).max() < 0.04, lam[j]
    g = np.asarray(R.geometric(R.key(6), 0.25, (N,)))
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.25


def test_multivariate_normal_covariance_and_methods() -> None:
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mean = np.array([1.0, -2.0, 0.5])
    key = R.key(9)
    for method in ("cholesky", "eigh", "svd"):
        # SVD is lowered only on the CPU (LAPACK): on a GPU run the svd method runs there, by its key
        where = "cpu" if method == "svd" and PLATFORM != "cpu" else PLATFORM
        y = np.asarray(R.multivariate_normal(ts.device_put(key, where), mean, cov, (N,), method=method))
        assert y.shape == (N, 3) and y.dtype == np.float64
        np.testing.assert_allclose(y.mean(0), mean, atol=0.08)
        np.testing.assert_allclose(np.cov(y.T), cov, atol=0.12)
    batched = np.asarray(R.multivariate_normal(key, np.zeros((2, 3)), np.stack([cov, 2 * cov])))
    assert batched.shape == (2, 3)


def test_choice_shuffle_and_orthogonal(rng: np.random.Generator) -> None:
    key = R.key(12)
    p = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
    freq = np.bincount(np.asarray(R.choice(key, 4, (N,), p=p)), minlength=4) / N
    np.testing.assert_allclose(freq, p, atol=0.025)
    picked = np.asarray(R.choice(key, 10, (2, 3), replace=False))
    assert picked.shape == (2, 3) and len(set(picked.ravel().tolist())) == 6
    weighted = np.asarray(R.choice(key, 4, (3,), replace=False, p=p))
    assert 1 not in weighted.tolist() and len(set(weighted.tolist())) == 3  # p = 0 is never drawn
    x = rng.standard_normal((3, 5)).astype(np.float32)
    cols = np.asarray(R.choice(key, x, (2, 2), axis=-1))
    assert cols.shape == (3, 2, 2) and all(any(np.array_equal(c, col) for col in x.T) for c in cols.reshape(3, 4).T)
    shuffled = np.asarray(R.shuffle(key, x, axis=1))
    assert sorted(map(tuple, shuffled.T.tolist())) == sorted(map(tuple, x.T.tolist()))
    np.testing.assert_array_equal(shuffled, np.asarray(R.permutation(key, x, axis=1)))
    rows = np.asarray(R.permutation(key, np.tile(np.arange(8, dtype=np.int32), (5, 1)), axis=-1, independent=True))
    assert (np.sort(rows, axis=1) == np.arange(8)).all() and len({tuple(r) for r in rows.tolist()}) == 5
    q = np.asarray(R.orthogonal(key, 4, (2,), ts.f64))
    assert q.shape == (2, 4, 4)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)


def test_determinism_dtypes_and_staging() -> None:
    key = R.key(1)
    other = R.key(2)
    for f in (R.exponential, R.laplace, R.logistic, R.gumbel, R.cauchy, R.rademacher):
        a, b, c = (np.asarray(f(k, (16,))) for k in (key, key, other))
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    np.testing.assert_array_equal(np.asarray(R.gamma(key, 2.0, (8,))), np.asarray(R.gamma(key, 2.0, (8,))))
    assert np.asarray(R.exponential(key, (4,), ts.f64)).dtype == np.float64
    half = R.gumbel(key, (4,), ts.bf16)
    assert str(half.dtype) == "bfloat16"
    np.testing.assert_allclose(
        np.asarray(half).astype(np.float32), np.asarray(R.gumbel(key, (4,))), rtol=1e-2
    )

    @ts.program
    def staged(key: Tensor[u32, Any]) -> Any:
        k1, k2 = R.split(key)
        return R.gamma(k1, 2.5, (5,)), R.choice(k2, 7, (3,), False)

    inside = staged(key)
    k1, k2 = R.split(key)
    outside = (R.gamma(k1, 2.5, (5,)), R.choice(k2, 7, (3,), False))
    for a, b in zip(inside, outside):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_vmap_over_keys_matches_a_loop() -> None:
    keys = R.split(R.key(4), 3)
    stacked = np.stack([np.asarray(k) for k in keys])

    def draws(k: Any) -> Any:
        k1, k2 = R.split(k)
        return R.laplace(k1, (4,)), R.gamma(k2, 0.7, (4,))

    batched = ts.vmap(draws)(stacked)
    for i, k in enumerate(keys):
        for b, single in zip(batched, draws(k)):
            np.testing.assert_array_equal(np.asarray(b)[i], np.asarray(single))


def test_reparameterized_gradients_match_finite_differences() -> None:
    key = R.key(7)

    def tn(lower: Any) -> Any:
        return ts.numpy.sum(R.truncated_normal(key, lower, 1.5, (6,), ts.f64))

    def mvn(mean: Any, cov: Any) -> Any:
        return ts.numpy.sum(R.multivariate_normal(key, mean, cov, (5,)) ** 2)

    lower = np.float64(-0.3)
    h = 1e-6
    fd = (float(tn(lower + h)) - float(tn(lower - h))) / (2 * h)
    assert float(ts.grad(tn)(lower)) == pytest.approx(fd, rel=1e-5)
    mean = np.array([0.5, -1.0])
    cov = np.array([[1.0, 0.3], [0.3, 0.8]])
    g_mean, g_cov = ts.grad(mvn, argnums=(0, 1))(mean, cov)
    for i in range(2):
        e = np.eye(2)[i] * h
        fd = (float(mvn(mean + e, cov)) - float(mvn(mean - e, cov))) / (2 * h)
        assert float(np.asarray(g_mean)[i]) == pytest.approx(fd, rel=1e-5)
    # cov is symmetric: perturb both off-diagonal entries; the gradient pairs add up.
    e = np.array([[0.0, h], [h, 0.0]])
    fd = (float(mvn(mean, cov + e)) - float(mvn(mean, cov - e))) / (2 * h)
    g = np.asarray(g_cov)
    assert g[0, 1] + g[1, 0] == pytest.approx(fd, rel=1e-4)


def test_gamma_family_refuses_derivatives_in_its_shape_parameters() -> None:
    """Holding the accepted draws fixed would give a biased derivative: both modes raise instead, at the line."""
    where = r"no derivative with respect to its shape parameter[\s\S]*test_random_more.py:\d+"
    with pytest.raises(ts.TransformError, match="gamma: " + where):
        ts.grad(lambda a: ts.numpy.sum(R.gamma(R.key(0), a, (3,))))(np.float32(2.0))
    with pytest.raises(ts.TransformError, match="beta: " + where):
        ts.jvp(lambda a: R.beta(R.key(0), a, 2.0, (3,)), (np.float32(2.0),), (np.float32(1.0),))
    scale = ts.grad(lambda s: ts.numpy.sum(s * R.gamma(R.key(0), 2.0, (3,))))(np.float32(1.0))
    assert float(scale) == pytest.approx(float(np.sum(np.asarray(R.gamma(R.key(0), 2.0, (3,))))), rel=1e-6)


def test_errors_name_the_op_and_the_line() -> None:
    key = R.key(0)
    with pytest.raises(ts.DTypeError, match=r"exponential draws floating-point values[\s\S]*test_random_more.py:\d+"):
        R.exponential(key, (3,), ts.i32)
    with pytest.raises(ts.DTypeError, match=r"gamma[\s\S]*must be f64[\s\S]*test_random_more.py"):
        R.gamma(key, np.ones(3, np.float32), dtype=ts.f64)
    with pytest.raises(ts.ShapeError, match=r"truncated_normal[\s\S]*does not broadcast to the sample shape"):
        R.truncated_normal(key, np.zeros(3, np.float32), 1.0, (4,))
    with pytest.raises(ts.ShapeError, match=r"multivariate_normal[\s\S]*mean must be \(\.\.\., n\)"):
        R.multivariate_normal(key, np.zeros(3, np.float32), np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="method must be"):
        R.multivariate_normal(key, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), method="qr")
    with pytest.raises(ts.ShapeError, match=r"choice[\s\S]*cannot take 6 samples from 5 without replacement"):
        R.choice(key, 5, (6,), replace=False)
    with pytest.raises(ts.ShapeError, match=r"p must have shape \(5,\)"):
        R.choice(key, 5, (2,), p=np.ones(4, np.float32) / 4)
    with pytest.raises(ts.DTypeError, match="poisson draws integers"):
        R.poisson(key, 3.0, (2,), ts.f32)
    with pytest.raises(ts.ShapeError, match="dirichlet"):
        R.dirichlet(key, 1.0)
    with pytest.raises(ts.DTypeError, match=r"t[\s\S]*key \(u32\[2\]\)"):
        R.t(np.zeros(2, np.float32), 3.0)


_REJECTION_LOOP = """
import numpy as np, tensorstage as ts
from tensorstage import numpy as tnp
key = ts.random.key(0)
def draw(d, counter):
    def body(carry):
        i, x, done = carry
        z = ts.random.normal(ts.random.fold_in(key, i), (4,))
        u = tnp.log(ts.random.uniform(ts.random.fold_in(key, i + 100), (4,)))
        accept = u < 0.5 * z * z - d * z
        return i + 1, tnp.where(accept & ~done, z, x), done | accept
    return ts.while_loop(lambda c: (c[0] < 32) & tnp.any(~c[2]), body, (tnp.asarray(0, counter), d, d > 100.0))[1]
for counter in (ts.i32, ts.i64):
    ts.program(lambda d: draw(d, counter)).stage(np.full(4, 2.0, np.float32)).compile()
print("compiled")
"""


def test_a_user_rejection_loop_drawing_from_a_folded_counter_compiles() -> None:
    """jaxlib 0.11's CPU compiler never finished such a loop while Threefry's rounds fused with erf_inv (the bits
    now pass an optimization barrier); run apart, so a regression fails instead of hanging the suite."""
    out = subprocess.run([sys.executable, "-c", _REJECTION_LOOP], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "compiled", out.stderr[-2000:]
