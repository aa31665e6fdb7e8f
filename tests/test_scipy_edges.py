"""ts.scipy.stats and the touched ts.scipy.special functions against SciPy float64 on grids of edge values (NaN,
±inf, out-of-support points, invalid parameters, probabilities outside [0, 1]); ndtri's accuracy over its whole
range (f32 and f64) and its gradient (1 / pdf)."""

from __future__ import annotations

import inspect
import itertools
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import special as tsp
from tensorstage.scipy import stats as tss

STATS_GRID = [np.nan, -1.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf]
SPECIAL_GRID = [np.nan, -np.inf, -1.0, -0.5, 0.0, 1e-300, 0.5, 1.0, 2.0, 50.0, 1e10, np.inf]
# the module docstrings' deliberate differences: limits SciPy takes at an infinite shape parameter
INFINITE_SHAPE_LIMITS = ("beta.", "chi2.logpdf", "chi2.pdf", "pareto.ppf")
SPECIAL = {"ndtri": 1, "gammainc": 2, "gammaincc": 2, "gammaincinv": 2, "gammainccinv": 2, "kl_div": 2,
           "rel_entr": 2}


def _grid(values: list[float], arity: int) -> list[np.ndarray]:
    combos = list(itertools.product(values, repeat=arity))
    return [np.array([c[i] for c in combos]) for i in range(arity)]


def _mismatches(got: Any, want: Any, rtol: float, atol: float) -> np.ndarray:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    same = np.isclose(got, want, rtol=rtol, atol=atol) | (np.isnan(got) & np.isnan(want))
    return np.flatnonzero(~same)


def _stats_functions() -> list[tuple[str, Any, Any, int]]:
    out = []
    for dist in tss.__all__:
        if dist in ("multivariate_normal", "dirichlet", "multinomial") or not inspect.ismodule(getattr(tss, dist)):
            continue  # vector-valued operands, and the functions (rankdata, sem, mode) of tests/test_scipy_stats_more.py
        for fn in getattr(tss, dist).__all__:
            ours = getattr(getattr(tss, dist), fn)
            required = [p for p in inspect.signature(ours).parameters.values() if p.default is inspect.Parameter.empty]
            out.append((f"{dist}.{fn}", ours, getattr(getattr(st, dist), fn), len(required)))
    return out


def test_stats_edges_match_scipy() -> None:
    """Every distribution function on every combination of edge values of its required operands."""
    functions = _stats_functions()
    grids = {arity: _grid(STATS_GRID, arity) for arity in (1, 2, 3, 4)}
    # one staged program for all of them (compiles are the cost)
    everything = ts.program(lambda g: [fn(*g[arity]) for _, fn, _, arity in functions])(grids)
    failures = []
    for (name, _, theirs, arity), got in zip(functions, everything):
        args = grids[arity]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = theirs(*args)
        for i in _mismatches(got, want, 1e-7, 1e-10):
            point = tuple(float(a[i]) for a in args)
            if name.startswith(INFINITE_SHAPE_LIMITS) and np.inf in point[1:]:
                continue
            failures.append((name, point))
    assert not failures, failures[:20]


def test_nan_and_invalid_parameters_give_nan() -> None:
    """The headline cases: NaN x, invalid parameters, q outside [0, 1], df = inf (the normal)."""
    nan_cases = [
        tss.norm.logpdf(np.nan), tss.expon.pdf(np.nan), tss.uniform.logpdf(np.nan), tss.gamma.logpdf(np.nan, 2.0),
        tss.poisson.pmf(np.nan, 1.0), tss.binom.cdf(np.nan, 3.0, 0.5), tss.norm.pdf(0.0, 0.0, -1.0),
        tss.gamma.pdf(1.0, -1.0), tss.beta.cdf(0.5, 0.0, 1.0), tss.bernoulli.pmf(1.0, 1.5), tss.geom.pmf(1.0, 0.0),
        tss.poisson.pmf(1.0, -1.0), tss.cauchy.ppf(-1.0), tss.expon.ppf(2.0), tss.pareto.ppf(0.5, -1.0),
    ]
    assert np.isnan([float(v) for v in nan_cases]).all()
    z = np.array([-1.5, 0.0, 2.0])
    np.testing.assert_allclose(np.asarray(tss.t.logpdf(z, np.inf)), st.norm.logpdf(z), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(tss.t.cdf(z, np.inf)), st.norm.cdf(z), rtol=1e-14)


def test_special_edges_match_scipy() -> None:
    failures = []
    grids = {arity: _grid(SPECIAL_GRID, arity) for arity in set(SPECIAL.values())}
    # one staged program for all of them (compiles are the cost; the incomplete gamma ones share their loops' code)
    everything = ts.program(lambda g: {name: getattr(tsp, name)(*g[arity]) for name, arity in SPECIAL.items()})(grids)
    for name, arity in SPECIAL.items():
        args, got = grids[arity], everything[name]
        for i in _mismatches(got, getattr(ss, name)(*args), 1e-8, 1e-300):
            point = tuple(float(a[i]) for a in args)
            # documented: the incomplete gamma's clamped 1e-300 corner, kl_div's overflow, SciPy's inverses' 0 for an
            # invalid y beside a = 1e-300 and at (0, 1e-300), and its wrong gammaincinv(1e10, 1e-300) (its series)
            if point == (1e-300, 1e-300) or (name == "kl_div" and point == (1e10, 1e-300)):
                continue
            invalid_y = point[0] == 1e-300 and not 0 <= point[1] <= 1
            if name.endswith("inv") and (invalid_y or point in ((0.0, 1e-300), (1e10, 1e-300))):
                continue
            failures.append((name, point))
    assert not failures, failures
    assert float(tsp.kl_div(1e-300, 1e10)) == pytest.approx(1e10)
    assert float(tsp.gammainc(0.0, 0.5)) == 1.0 and float(tsp.gammaincc(1e-300, 0.5)) >= 0.0


@pytest.mark.parametrize("dtype, smallest, ulps", [(np.float64, 307, 6.0), (np.float32, 37, 3.0)])
def test_ndtri_accuracy_over_the_whole_range(dtype: Any, smallest: int, ulps: float) -> None:
    eps = np.finfo(dtype).eps
    upper = 1 - 10.0 ** -np.linspace(1, -np.log10(eps) - 0.5, 60)
    p = np.concatenate([10.0 ** -np.linspace(0.31, smallest, 300), np.linspace(0.01, 0.99, 99), upper,
                        [0.0, 1.0, 0.5, -0.5, 1.5, np.nan]]).astype(dtype)
    got = np.asarray(ts.program(tsp.ndtri)(p)).astype(float)
    want = ss.ndtri(p.astype(float))
    assert got.dtype == float and np.asarray(tsp.ndtri(p)).dtype == dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    error = np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), 1.0)
    assert error.max() <= ulps * eps, error.max() / eps


def test_ndtri_gradient_is_one_over_the_density() -> None:
    p = np.array([1e-300, 1e-20, 1e-3, 0.3, 0.5, 0.9, 1 - 1e-12])
    grad = np.asarray(ts.grad(lambda v: tnp.sum(tsp.ndtri(v)))(p))
    x = ss.ndtri(p)
    np.testing.assert_allclose(grad * np.exp(-x * x / 2) / np.sqrt(2 * np.pi), 1.0, rtol=1e-10)
    h = 1e-7  # and central differences in the bulk
    fd = (ss.ndtri(0.3 + h) - ss.ndtri(0.3 - h)) / (2 * h)
    assert grad[3] == pytest.approx(fd, rel=1e-6)
