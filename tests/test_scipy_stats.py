"""ts.scipy.stats against scipy.stats (float64 references; f32 and f64 in one staged program per dtype; eager
calls), support edges, gradients (finite differences), vmap, and refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as st

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import stats as tss

from staging_errors import check_staging_errors

LOC_SCALE = ["norm", "uniform", "expon", "laplace", "logistic", "cauchy"]
QUANTILES = ("ppf", "isf")


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = np.concatenate([rng.uniform(-4, 7, 30), [0.5, 2.25, -np.inf, np.inf]])  # 0.5 and 2.25: the uniform's edges
    return {
        "x": x, "q": np.concatenate([rng.uniform(0, 1, 30), [0.0, 1.0, 1e-6, 0.999]]),
        "xb": np.concatenate([rng.uniform(-0.2, 1.2, 30), [0.0, 1.0, 0.5, 2.0]]),
        "k": np.concatenate([rng.integers(-1, 9, 30).astype(float), [2.5, 0.0, 1.0, -1.0]]),
        "alpha": np.array([1.5, 2.0, 0.7]), "simplex": rng.dirichlet([1.5, 2.0, 0.7], 6),
        "mean": rng.standard_normal(3), "xm": rng.standard_normal((2, 4, 3)),
    }


def _everything(mod: Any, v: dict[str, Any], cov: Any) -> dict[str, Any]:
    """Every function, written once for ``tss`` and ``scipy.stats``."""
    out: dict[str, Any] = {}
    for dist in LOC_SCALE:
        for fn in getattr(tss, dist).__all__:
            arg = v["q"] if fn in QUANTILES else v["x"]
            out[f"{dist}.{fn}"] = getattr(getattr(mod, dist), fn)(arg, 0.5, 1.75)
    for fn in tss.t.__all__:
        out[f"t.{fn}"] = getattr(mod.t, fn)(v["x"], 3.5, 0.5, 1.7)
    for fn in tss.gamma.__all__:
        out[f"gamma.{fn}"] = getattr(mod.gamma, fn)(v["x"], 2.5, -0.5, 1.7)
    for fn in ("logpdf", "pdf", "cdf", "sf"):  # the rest are gamma's (tested above) through the same reparametrization
        out[f"chi2.{fn}"] = getattr(mod.chi2, fn)(v["x"], 3.0, -0.5, 1.7)
    for fn in tss.beta.__all__:
        out[f"beta.{fn}"] = getattr(mod.beta, fn)(v["xb"], 2.5, 1.5)
    for fn in tss.poisson.__all__:
        out[f"poisson.{fn}"] = getattr(mod.poisson, fn)(v["k"], 3.2)
    for fn in tss.bernoulli.__all__:
        out[f"bernoulli.{fn}"] = getattr(mod.bernoulli, fn)(v["k"], 0.3)
    out["multivariate_normal.logpdf"] = mod.multivariate_normal.logpdf(v["xm"], v["mean"], cov)
    out["multivariate_normal.pdf"] = mod.multivariate_normal.pdf(v["xm"][0, 0], v["mean"], cov)
    return out


# f32: relative tolerances beyond 2e-6 where the function is known to lose accuracy (see special's docstrings)
F32_LOOSE = {"norm.ppf": 2e-5, "norm.isf": 2e-5, "cauchy.ppf": 1e-5, "cauchy.isf": 1e-5, "gamma.logsf": 2e-5,
             "gamma.sf": 2e-5, "chi2.sf": 2e-5, "chi2.logsf": 2e-5, "gamma.cdf": 2e-5, "chi2.cdf": 2e-5,
             "gamma.logcdf": 2e-5, "chi2.logcdf": 2e-5, "poisson.cdf": 2e-5, "multivariate_normal.pdf": 1e-5,
             "expon.ppf": 1e-5, "logistic.ppf": 1e-5, "logistic.isf": 1e-5}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_distributions_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    inputs = _inputs(rng)
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    cast = {k: v.astype(dtype) for k, v in inputs.items()}
    got = ts.program(lambda v, c: _everything(tss, v, c))(cast, cov.astype(dtype))
    with np.errstate(all="ignore"):
        want = _everything(st, {k: v.astype(np.float64) for k, v in cast.items()}, cov.astype(dtype).astype(np.float64))
    for name, reference in want.items():
        result = np.asarray(got[name])
        assert result.dtype == dtype and result.shape == np.shape(reference), name
        tol = 1e-10 if dtype == np.float64 else F32_LOOSE.get(name, 2e-6)
        np.testing.assert_allclose(result, reference, rtol=tol, atol=tol, err_msg=name)


def test_dirichlet_on_and_off_the_simplex(rng: np.random.Generator) -> None:
    alpha = np.array([1.5, 2.0, 0.7])
    points = rng.dirichlet(alpha, 4)
    off = np.array([[0.5, 0.6, -0.1], [0.2, 0.2, 0.2]])
    got = np.asarray(tss.dirichlet.logpdf(np.concatenate([points, off]), alpha))
    np.testing.assert_allclose(got[:4], [st.dirichlet.logpdf(p, alpha) for p in points], rtol=1e-12)
    assert np.all(got[4:] == -np.inf)
    np.testing.assert_allclose(np.asarray(tss.dirichlet.pdf(points[0], alpha)), st.dirichlet.pdf(points[0], alpha),
                               rtol=1e-12)


def test_integer_counts_and_python_numbers() -> None:
    k = np.array([0, 1, 3, 7], np.int32)
    mu = np.full(4, 2.5, np.float32)
    got = np.asarray(tss.poisson.pmf(k, mu))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, st.poisson.pmf(k, 2.5), rtol=2e-6)
    assert float(tss.norm.cdf(np.float64(1.0))) == pytest.approx(st.norm.cdf(1.0), rel=1e-15)
    assert float(tss.expon.logpdf(np.float64(-1.0))) == -np.inf


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    """d/dx and d/dparameter of log-densities and CDFs, one program, f64 central differences."""
    x = rng.uniform(0.5, 3.0, 5)
    p = rng.uniform(1.2, 3.0, 5)
    cases = {
        "norm.logpdf": lambda x, p: tss.norm.logpdf(x, 0.3, p), "norm.logcdf": lambda x, p: tss.norm.logcdf(-3 * x, 0, p),
        "t.logpdf": lambda x, p: tss.t.logpdf(x, p), "gamma.logpdf": lambda x, p: tss.gamma.logpdf(x, p),
        "gamma.cdf": lambda x, p: tss.gamma.cdf(x, p), "beta.logpdf": lambda x, p: tss.beta.logpdf(x / 4, p, 2.0),
        "logistic.logpdf": lambda x, p: tss.logistic.logpdf(x, 0, p), "cauchy.sf": lambda x, p: tss.cauchy.sf(x, 0, p),
    }
    eps = 1e-6
    n = x.size

    @ts.program
    def run(x: Any, p: Any) -> Any:
        out = {}
        for name, f in cases.items():
            gx, gp = ts.grad(lambda a, b: tnp.sum(f(a, b)), argnums=(0, 1))(x, p)
            moved = f(tnp.concatenate([x + eps, x - eps, x, x]), tnp.concatenate([p, p, p + eps, p - eps]))
            out[name] = (gx, gp, moved)
        return out

    # atol: a few ulps of rounding in f (values ~1; a GPU's log and lgamma round differently) over 2 * eps.
    for name, (gx, gp, moved) in run(x, p).items():
        moved = np.asarray(moved)
        np.testing.assert_allclose(np.asarray(gx), (moved[:n] - moved[n:2 * n]) / (2 * eps), rtol=1e-6, atol=1e-8,
                                   err_msg=name)
        np.testing.assert_allclose(np.asarray(gp), (moved[2 * n:3 * n] - moved[3 * n:]) / (2 * eps), rtol=1e-6,
                                   atol=1e-8, err_msg=name)


def test_vmap_of_multivariate_normal_matches_a_loop(rng: np.random.Generator) -> None:
    a = rng.standard_normal((4, 3, 3))
    covs = a @ np.swapaxes(a, 1, 2) + np.eye(3)
    x = rng.standard_normal((5, 3))
    mapped = np.asarray(ts.vmap(lambda c: tss.multivariate_normal.logpdf(x, np.zeros(3), c))(covs))
    want = np.stack([st.multivariate_normal.logpdf(x, np.zeros(3), c) for c in covs])
    np.testing.assert_allclose(mapped, want, rtol=1e-11)


def test_bad_calls_raise_clear_errors() -> None:
    f32, f64 = ts.Spec((3,), ts.f32), ts.Spec((3,), ts.f64)
    check_staging_errors(
        [
            (lambda x, s: tss.norm.logpdf(x, 0.0, s), [f32, f64], ts.DTypeError, ["norm.logpdf"]),
            (lambda x: tss.gamma.cdf(x, 2.0), [ts.Spec((3,), ts.i32)], ts.DTypeError, ["gamma.cdf", "i32"]),
            (lambda x, m: tss.norm.cdf(x, m), [f32, ts.Spec((4,), ts.f32)], ts.ShapeError, ["norm.cdf"]),
        ],
        "test_scipy_stats.py",
    )
    with pytest.raises(ValueError, match="cov must be"):
        tss.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="alpha must be"):
        tss.dirichlet.logpdf(np.full(3, 1 / 3), np.ones(4))
