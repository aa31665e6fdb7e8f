"""Registry cases for the special primitives (staging/primitives/special.py), merged into ``primitive_cases.CASES``.

Operands stay where float32 meets the registry's 2e-6 relative tolerance (away from lgamma's zeros at 1 and 2). The
"large a" cases run Temme's expansion (a > 20, |x - a| < 0.3 a) and the Stirling form of the prefactor in the x
derivative; tests/test_scipy_igamma.py measures the range up to a = 1e12."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from primitive_cases import CASES, Case, Maker


def _uniform(*ranges: tuple[float, float], shape: tuple[int, ...] = (3, 4)) -> Maker:
    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [rng.uniform(lo, hi, shape).astype(dtype) for lo, hi in ranges]

    return make


def _scalar_first(lo: float, hi: float, *rest: tuple[float, float]) -> Maker:
    """A rank-0 first operand beside a shaped second one."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [np.asarray(rng.uniform(lo, hi), dtype), *_uniform(*rest)(rng, dtype)]

    return make


def _igamma_grad_a_ref(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Five-point differences of SciPy's gammainc in a (truncation ~h⁴, rounding ~eps/h: ~1e-13 relative)."""
    h = 2e-3 * a
    p = [special.gammainc(a + k * h, x) for k in (-2, -1, 1, 2)]
    return (p[0] - 8 * p[1] + 8 * p[2] - p[3]) / (12 * h)  # type: ignore[no-any-return]


SPECIAL_CASES: dict[str, list[Case]] = {
    "lgamma": [Case(_uniform((2.5, 9.0)), special.gammaln),
               Case(_uniform((-3.9, -3.1)), special.gammaln, label="negative")],
    "digamma": [Case(_uniform((2.0, 9.0)), special.digamma),
                Case(_uniform((-2.9, -2.1)), special.digamma, label="negative")],
    "erfc": [Case(_uniform((-2.0, 1.5)), special.erfc)],
    "bessel_i0e": [Case(_uniform((-12.0, 12.0)), special.i0e)],
    "bessel_i1e": [Case(_uniform((-12.0, 12.0)), special.i1e)],
    "zeta": [Case(_uniform((2.0, 5.0), (0.5, 4.0)), special.zeta),
             Case(_scalar_first(2.0, 4.0, (0.5, 3.0)), special.zeta, label="scalar s")],
    "igamma": [Case(_uniform((0.5, 3.0), (0.1, 5.0)), special.gammainc),
               Case(_scalar_first(0.5, 3.0, (0.1, 5.0)), special.gammainc, label="scalar a"),
               Case(_uniform((60.0, 80.0), (62.0, 78.0)), special.gammainc, label="large a")],
    "igammac": [Case(_uniform((0.5, 3.0), (0.1, 5.0)), special.gammaincc),
                Case(_uniform((60.0, 80.0), (62.0, 78.0)), special.gammaincc, label="large a")],
    "betainc": [Case(_uniform((0.5, 4.0), (0.5, 4.0), (0.05, 0.95)), special.betainc),
                Case(_scalar_first(0.5, 3.0, (0.5, 4.0), (0.05, 0.95)), special.betainc, label="scalar a")],
    # (f64: tests/test_scipy_special.py and tests/test_scipy_igamma.py)
    "igamma_grad_a": [Case(_uniform((0.5, 3.0), (0.1, 5.0)), _igamma_grad_a_ref, dtypes=("float32",)),
                      Case(_uniform((60.0, 80.0), (62.0, 78.0)), _igamma_grad_a_ref, dtypes=("float32",),
                           label="large a")],
}

CASES.update(SPECIAL_CASES)
