"""The incomplete gamma functions for large ``a`` (Temme's expansion), their ``a``-derivative there, and the
inverses ``gammaincinv`` / ``gammainccinv`` against SciPy (float64 references), their edge values and derivative in
``y`` (1 / density)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import special as ss

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import special as tsp


def _ulps(got: np.ndarray, want: np.ndarray, dtype: type) -> float:
    got = np.asarray(got, dtype=float)
    scale = np.maximum(np.abs(want), np.finfo(dtype).tiny)
    return float((np.abs(got - want) / scale).max() / np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype, limit", [(np.float64, 32.0), (np.float32, 32.0)])
def test_large_a_near_x_equals_a(dtype: type, limit: float) -> None:
    """Within SciPy's own Temme window (|x - a| < 4 sqrt(a), where SciPy is accurate), a from 200 to 1e12 (measured:
    20 / 21 ulps in f64 / f32; erfc's own error and the rounding of (x - a) / a, amplified by a (x - a)² / x)."""
    a = np.repeat(10.0 ** np.linspace(2.3, 12, 12), 9)
    x = a + np.tile(np.linspace(-4, 4, 9), 12) * np.sqrt(a)
    a, x = np.append(a, 1e10).astype(dtype), np.append(x, 1e10).astype(dtype)  # and Q(1e10, 1e10) = 0.5 (was 0.934)
    p, q = ts.program(lambda a, x: (tsp.gammainc(a, x), tsp.gammaincc(a, x)))(a, x)
    wide = a.astype(float), x.astype(float)
    assert _ulps(p, ss.gammainc(*wide), dtype) < limit
    assert _ulps(q, ss.gammaincc(*wide), dtype) < limit
    assert float(np.asarray(q)[-1]) == pytest.approx(0.5, abs=1e-5)


def test_a_derivative_for_large_a() -> None:
    a = np.array([25.0, 150.0, 1e3, 1e5, 1e8])
    x = a + np.array([-1.0, 0.5, 2.0, -0.3, 1.0]) * np.sqrt(a)
    grad, dx = (np.asarray(g) for g in ts.grad(lambda a, x: tnp.sum(tsp.gammainc(a, x)), argnums=(0, 1))(a, x))
    h = 1e-3 * np.sqrt(a)
    fd = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5)
    # dx: the density, without lgamma's cancellation
    np.testing.assert_allclose(dx, np.exp((a - 1) * np.log(x) - x - ss.gammaln(a)), rtol=1e-6)


def test_inverses_match_scipy_with_edges_and_derivatives(rng: np.random.Generator) -> None:
    """Random points (SciPy is accurate there: a below 1e5), the edge grid and the implicit derivatives (in y against
    1 / density, in a against differences of SciPy's inverse), in one program of two solves (compiles are the cost:
    each solve is a large loop), the derivatives taken at the same points as the values. (float32 is solved in
    float64 and rounded once: within 2 ulps of SciPy, measured; tests/test_scipy_stats.py runs it through gamma.ppf /
    isf.)"""
    a = 10 ** rng.uniform(-0.3, 5, 40)
    y = np.concatenate([rng.uniform(0.01, 0.99, 20), 10 ** rng.uniform(-20, -2, 20)])
    grid = np.array([np.nan, -1.0, 0.0, 0.5, 1.0, 2.0, np.inf])
    edge_a, edge_y = (g.ravel() for g in np.meshgrid(grid, grid, indexing="ij"))
    a2, y2 = np.array([0.7, 3.0, 40.0]), np.array([0.2, 0.5, 0.9])
    a_all, y_all = np.concatenate([a, edge_a, a2]), np.concatenate([y, edge_y, y2])

    @ts.program
    def run(a: ts.Array, y: ts.Array) -> object:
        def solved(f: Any) -> Any:  # the values, and the gradient of their sum: per point, d/da and d/dy
            def total(b: ts.Array, v: ts.Array) -> Any:
                x = f(b, v)
                return tnp.sum(x), x
            return ts.value_and_grad(total, argnums=(0, 1), has_aux=True)(a, y)
        return solved(tsp.gammaincinv), solved(tsp.gammainccinv)

    ((_, lower), (grad_a, grad_y)), ((_, upper), (_, grad_upper)) = run(a_all, y_all)
    lower, upper = np.asarray(lower), np.asarray(upper)
    n, m = a.size, a.size + edge_a.size
    assert _ulps(lower[:n], ss.gammaincinv(a, y), np.float64) < 48
    assert _ulps(upper[:n], ss.gammainccinv(a, y), np.float64) < 48
    np.testing.assert_allclose(lower[n:m], ss.gammaincinv(edge_a, edge_y), rtol=1e-14)
    np.testing.assert_allclose(upper[n:m], ss.gammainccinv(edge_a, edge_y), rtol=1e-14)
    grad_a, grad_y, grad_upper = (np.asarray(g)[m:] for g in (grad_a, grad_y, grad_upper))
    for g, x, sign in ((grad_y, ss.gammaincinv(a2, y2), 1), (grad_upper, ss.gammainccinv(a2, y2), -1)):
        density = np.exp((a2 - 1) * np.log(x) - x - ss.gammaln(a2))
        np.testing.assert_allclose(g, sign / density, rtol=1e-8)
    h = 1e-6 * a2  # in a: central differences of SciPy's inverse
    np.testing.assert_allclose(grad_a, (ss.gammaincinv(a2 + h, y2) - ss.gammaincinv(a2 - h, y2)) / (2 * h), rtol=1e-6)
