"""ts.scipy.stats.gaussian_kde against scipy.stats.gaussian_kde (float64 references on seeded data): densities,
log-densities far from the data, the integrals, bandwidth methods, weights, resampling statistics, use inside
programs (a pytree), gradients, and its refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as st

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import stats as tss


@pytest.mark.parametrize("bw_method", [None, "silverman", 0.35, lambda kde: kde.neff ** -0.2])
def test_densities_and_integrals_match_scipy(rng: np.random.Generator, bw_method: Any) -> None:
    data = rng.standard_normal((2, 40)) * np.array([[1.0], [0.5]]) + np.array([[0.3], [-1.0]])
    weights = rng.uniform(0.2, 2.0, 40)
    points = np.concatenate([rng.standard_normal((2, 9)) * 2, [[40.0], [-35.0]]], axis=1)  # one far away
    ours, theirs = tss.gaussian_kde(data, bw_method, weights), st.gaussian_kde(data, bw_method, weights)
    np.testing.assert_allclose(np.asarray(ours.covariance), theirs.covariance, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ours.inv_cov), theirs.inv_cov, rtol=1e-10)
    np.testing.assert_allclose(float(ours.neff), theirs.neff, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ours(points)), theirs(points), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(np.asarray(ours.logpdf(points)), theirs.logpdf(points), rtol=1e-10)
    assert np.isfinite(np.asarray(ours.logpdf(points))[-1])  # far out: the density underflows, its log does not
    mean, cov = np.array([0.2, -0.4]), np.array([[0.6, 0.1], [0.1, 0.3]])
    np.testing.assert_allclose(float(ours.integrate_gaussian(mean, cov)), theirs.integrate_gaussian(mean, cov),
                               rtol=1e-12)
    other = rng.standard_normal((2, 15)) + 0.5
    np.testing.assert_allclose(float(ours.integrate_kde(tss.gaussian_kde(other))),
                               theirs.integrate_kde(st.gaussian_kde(other)), rtol=1e-12)
    one_point = points[:, 0]  # a (d,) vector is one point, as SciPy
    np.testing.assert_allclose(np.asarray(ours.pdf(one_point)), theirs.pdf(one_point), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_dimensional_estimates_and_box_integrals(rng: np.random.Generator, dtype: Any) -> None:
    data = np.concatenate([rng.normal(-2, 0.5, 30), rng.normal(1, 1, 50)]).astype(dtype)
    ours, theirs = tss.gaussian_kde(data), st.gaussian_kde(data.astype(np.float64))
    x = np.linspace(-5, 5, 21).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-11
    got = ours(x)
    assert got.dtype == dtype and got.shape == (21,)
    np.testing.assert_allclose(np.asarray(got), theirs(x.astype(np.float64)), rtol=tol)
    np.testing.assert_allclose(float(ours.integrate_box_1d(-1.5, 0.7)), theirs.integrate_box_1d(-1.5, 0.7), rtol=tol)
    np.testing.assert_allclose(float(ours.integrate_box_1d(-np.inf, np.inf)), 1.0, rtol=tol)


def test_resample_draws_from_the_estimate(rng: np.random.Generator) -> None:
    """The draws' mean is the weighted data mean and their covariance the data's plus the kernel's."""
    data = rng.standard_normal((2, 30)) * np.array([[2.0], [0.5]])
    weights = rng.uniform(0.1, 1.0, 30)
    kde = tss.gaussian_kde(data, weights=weights)
    draws = np.asarray(kde.resample(ts.random.key(3), (200_000,)))
    assert draws.shape == (2, 200_000) and kde.resample(ts.random.key(3), (4, 5)).shape == (2, 4, 5)
    w = weights / weights.sum()
    mean = data @ w
    centred = data - mean[:, None]
    expected_cov = (centred * w) @ centred.T + np.asarray(kde.covariance)
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=0.02)
    np.testing.assert_allclose(np.cov(draws), expected_cov, rtol=0.03, atol=0.01)


def test_inside_programs_and_gradients(rng: np.random.Generator) -> None:
    data, points = rng.standard_normal((2, 12)), rng.standard_normal((2, 5))
    kde = tss.gaussian_kde(data)
    staged = ts.program(lambda k, p: k.logpdf(p))  # the estimate crosses the boundary as a pytree
    np.testing.assert_allclose(np.asarray(staged(kde, points)), st.gaussian_kde(data).logpdf(points), rtol=1e-10)
    built_inside = ts.program(lambda d, p: tss.gaussian_kde(d, "silverman").pdf(p))
    np.testing.assert_allclose(np.asarray(built_inside(data, points)),
                               st.gaussian_kde(data, "silverman").pdf(points), rtol=1e-10)
    for f, x in [(lambda d: tnp.sum(tss.gaussian_kde(d).logpdf(points)), data), (lambda p: tnp.sum(kde.pdf(p)), points)]:
        direction, eps = rng.standard_normal(x.shape), 1e-6
        slope = float(np.sum(np.asarray(ts.grad(f)(x)) * direction))
        quotient = (float(f(x + eps * direction)) - float(f(x - eps * direction))) / (2 * eps)
        np.testing.assert_allclose(slope, quotient, rtol=1e-6)


def test_refusals_name_the_method() -> None:
    data = np.arange(12.0).reshape(2, 6) ** 1.5
    kde = tss.gaussian_kde(data)
    with pytest.raises(ts.DTypeError, match="gaussian_kde needs real floating-point data, got i64"):
        tss.gaussian_kde(np.arange(5))
    with pytest.raises(ts.ShapeError, match=r"(?s)gaussian_kde.*more than one element.*test_scipy_kde"):
        tss.gaussian_kde(np.array([1.0]))
    with pytest.raises(ts.ShapeError, match=r"weights must be \(6,\)"):
        tss.gaussian_kde(data, weights=np.ones(5))
    with pytest.raises(ts.ShapeError, match=r"(?s)evaluate: points must be \(2, m\).*f64\[3, 4\].*test_scipy_kde"):
        kde(np.ones((3, 4)))
    with pytest.raises(ts.ShapeError, match="only one-dimensional estimates"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(ts.ShapeError, match=r"mean must be \(2,\)"):
        kde.integrate_gaussian(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="bw_method must be"):
        tss.gaussian_kde(data, bw_method="wide")
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        kde.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="set_bandwidth"):
        kde.set_bandwidth("scott")
