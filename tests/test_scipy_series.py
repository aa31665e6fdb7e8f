"""ts.scipy.special's series-built functions (erfcx, exp1, expi) against SciPy float64: one staged program per dtype
over wide ranges, SciPy's values at the edges (f64, f32, f16), gradients against finite differences, vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as ss

import tensorstage as ts
from tensorstage.scipy import special as tsp

NAMES = ("erfcx", "exp1", "expi")
EI_ZERO = 0.3725074107813666  # Ei's only zero: the error is absolute near it


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Both branches of every function and their switch points (erfcx: 3; exp1: 1; expi: 24 in f32, 40 in f64)."""
    return {
        "erfcx": np.concatenate([rng.uniform(-9, 6, 60), np.geomspace(6, 1e30, 20), [3.0, -3.0, 0.0]]),
        "exp1": np.concatenate([np.geomspace(1e-30, 1, 30), rng.uniform(0.5, 80, 50), [1.0, 2.0, 3.0]]),
        "expi": np.concatenate([rng.uniform(-80, 80, 60), np.geomspace(1e-30, 1, 10), np.geomspace(20, 85, 10),
                                [24.0, 40.0, -1.0]]),
    }


# SciPy's own float64 errors (against 50-digit references): expi 2.8e-14 near 40, erfcx ~x² eps below -5.
F64_RTOL = {"erfcx": 2e-14, "exp1": 4e-15, "expi": 4e-14}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functions_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    inputs = {k: v.astype(dtype) for k, v in _inputs(rng).items()}
    got = ts.program(lambda v: {name: getattr(tsp, name)(v[name]) for name in NAMES})(inputs)
    for name in NAMES:
        x = inputs[name]
        want = getattr(ss, name)(x.astype(np.float64))
        result = np.asarray(got[name])
        assert result.dtype == dtype and result.shape == x.shape, name
        near_zero = np.abs(x - EI_ZERO) < 1e-2 if name == "expi" else np.zeros(x.shape, bool)
        rtol = F64_RTOL[name] if dtype == np.float64 else 1.5e-6
        np.testing.assert_allclose(result[~near_zero], want[~near_zero].astype(dtype), rtol=rtol, err_msg=name)
        np.testing.assert_allclose(result[near_zero], want[near_zero], atol=1e-15 if dtype == np.float64 else 2e-7)


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -27.0, -9.5, 1e-20, 700.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", NAMES)
def test_edges_are_scipys(name: str, dtype: Any) -> None:
    x = EDGES.astype(dtype)
    got = np.asarray(getattr(tsp, name)(x))
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
        want = getattr(ss, name)(x.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-6)
    numbers = ~np.isnan(want)  # a NaN's sign bit means nothing (and differs between XLA and SciPy versions)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def test_expi_is_finite_where_scipys_overflows_early() -> None:
    """Ei(712) = 2.3e306: SciPy's is inf from 709.8 (exp(x) overflowing before its division by x)."""
    got = float(np.asarray(tsp.expi(np.array([712.0])))[0])
    assert np.isclose(got, np.exp(356.0) * (np.exp(356.0) / 712.0) * (1 + 1 / 712 + 2 / 712**2 + 6 / 712**3), rtol=1e-9)


DERIVATIVES = {
    "erfcx": lambda x: 2 * x * ss.erfcx(x) - 2 / np.sqrt(np.pi),
    "exp1": lambda x: -np.exp(-x) / x,
    "expi": lambda x: np.exp(x) / x,
}
GRAD_POINTS = {
    "erfcx": np.array([-8.0, -2.5, -0.3, 0.0, 0.7, 2.99, 3.0, 5.0, 9.0]),  # the closed form cancels above
    "exp1": np.array([1e-5, 0.3, 0.999, 1.0, 2.5, 30.0, 600.0]),
    "expi": np.array([-600.0, -3.0, -1e-3, 1e-3, 0.5, 7.0, 39.9, 40.0, 300.0]),
}


@pytest.mark.parametrize("name", NAMES)
def test_gradients_are_the_derivatives(name: str) -> None:
    x = GRAD_POINTS[name]
    exact = DERIVATIVES[name](x)
    fn = getattr(tsp, name)
    grad = ts.grad(lambda v: ts.numpy.sum(fn(v)))(x)
    np.testing.assert_allclose(np.asarray(grad), exact, rtol=1e-12)
    tangent = ts.jvp(fn, (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(np.asarray(tangent), exact, rtol=1e-12)
    h = 1e-6 * np.where(x == 0, 1.0, np.abs(x))
    fd = (getattr(ss, name)(x + h) - getattr(ss, name)(x - h)) / (2 * h)
    np.testing.assert_allclose(exact, fd, rtol=1e-6)  # the closed forms above are the derivatives


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    x = rng.uniform(0.1, 50, (3, 5))
    got = ts.vmap(lambda row: tsp.expi(row) + tsp.exp1(row) + tsp.erfcx(-row / 10))(x)
    want = np.stack([ss.expi(r) + ss.exp1(r) + ss.erfcx(-r / 10) for r in x])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_integer_operands_are_refused() -> None:
    with pytest.raises(ts.DTypeError, match="erfcx needs a floating-point operand"):
        tsp.erfcx(np.array([1, 2]))
