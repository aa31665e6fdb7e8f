"""ts.scipy.stats' truncnorm, gennorm, vonmises, wrapcauchy, multinomial, rankdata, sem and mode against scipy.stats
(float64 references; f32 and f64 in one staged program per dtype), truncnorm far in the tails, edges, gradients
(finite differences, and jax when installed), vmap vs a loop, and refusals. (The edge grids of the elementwise
distributions are in test_scipy_edges.py, which walks every module.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as st

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import stats as tss

from staging_errors import check_staging_errors

TRUNCNORM = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    data = rng.integers(0, 4, (6, 5)).astype(float)
    data[2, 3] = np.nan
    x = np.concatenate([rng.uniform(-3, 4, 30), [-1.0, 3.5, -np.inf, np.inf]])  # -1, 3.5: truncnorm's ends
    tail = np.concatenate([rng.uniform(6, 9, 10), [6.0, 9.0]])  # truncnorm on [6, 9]: Phi rounds to 1 there
    circle = rng.uniform(-1, 7, 20)
    return {
        # truncnorm on [-0.75, 1.5] (loc 0.5, scale 2) beside [6, 9] (loc 0, scale 1), elementwise
        "x": np.concatenate([x, tail]), "a": np.repeat([-0.75, 6.0], [34, 12]), "b": np.repeat([1.5, 9.0], [34, 12]),
        "loc": np.repeat([0.5, 0.0], [34, 12]), "scale": np.repeat([2.0, 1.0], [34, 12]),
        "q": np.concatenate([rng.uniform(0, 1, 30), [0.0, 1.0, 1e-6, 0.999]] * 2),
        "qa": np.repeat([-0.75, 6.0], 34), "qb": np.repeat([1.5, 9.0], 34),
        "beta": np.repeat([1.6, 0.6], 23), "circle": np.concatenate([circle, circle / 30]),
        "kappa": np.repeat([2.5, 400.0], 20),
        "counts": np.array([[1, 2, 3], [0, 0, 6], [6, 0, 0], [2, 2, 1], [-1, 4, 3], [2, 2, 2]], float),
        "p": np.array([0.2, 0.3, 0.5]), "data": data, "ties": rng.integers(0, 3, (4, 6)).astype(float),
    }


def _everything(mod: Any, v: dict[str, Any]) -> dict[str, Any]:
    """Every function, written once for ``tss`` and ``scipy.stats``."""
    out: dict[str, Any] = {}
    for fn in TRUNCNORM:
        out[f"truncnorm.{fn}"] = getattr(mod.truncnorm, fn)(v["x"], v["a"], v["b"], v["loc"], v["scale"])
    out["truncnorm.ppf"] = mod.truncnorm.ppf(v["q"], v["qa"], v["qb"])
    for fn in ("logpdf", "pdf", "cdf"):
        out[f"gennorm.{fn}"] = getattr(mod.gennorm, fn)(v["x"], v["beta"], 0.2, 1.3)
    for fn in ("logpdf", "pdf"):
        out[f"vonmises.{fn}"] = getattr(mod.vonmises, fn)(v["circle"], v["kappa"])
        out[f"wrapcauchy.{fn}"] = getattr(mod.wrapcauchy, fn)(v["circle"], 0.6)
    out["multinomial.logpmf"] = mod.multinomial.logpmf(v["counts"], 6, v["p"])
    out["multinomial.pmf"] = mod.multinomial.pmf(v["counts"], 6, v["p"])
    for method in RANK_METHODS:
        out[f"rankdata.{method}"] = mod.rankdata(v["data"], method, axis=1)
    out["rankdata (flat)"] = mod.rankdata(v["ties"])
    for policy in ("propagate", "omit"):
        out[f"sem.{policy}"] = mod.sem(v["data"], 0, 1, policy)
    out["sem (all, keepdims)"] = mod.sem(v["ties"], None, 2, keepdims=True)
    for axis in (0, 1, None):
        result = mod.mode(v["ties"], axis)
        out[f"mode.{axis}"], out[f"mode.{axis} count"] = result.mode, result.count
    return out


F32_LOOSE = {"truncnorm.ppf": 2e-5, "vonmises.pdf": 2e-5, "gennorm.pdf": 1e-5}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functions_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    cast = {k: v.astype(dtype) for k, v in _inputs(rng).items()}
    got = ts.program(lambda v: _everything(tss, v))(cast)
    reference_inputs = {k: v.astype(np.float64) for k, v in cast.items()}
    # SciPy >= 1.18 gives NaN for probabilities summing to 1 only within float32's rounding: renormalized in float64
    reference_inputs["p"] = reference_inputs["p"] / reference_inputs["p"].sum(-1, keepdims=True)
    with np.errstate(all="ignore"):
        want = _everything(st, reference_inputs)
    for name, reference in want.items():
        result = np.asarray(got[name])
        assert result.shape == np.shape(reference), name
        assert result.dtype == (np.int32 if name.endswith("count") else dtype), name
        tol = 1e-11 if dtype == np.float64 else F32_LOOSE.get(name, 3e-6)
        np.testing.assert_allclose(result, reference, rtol=tol, atol=tol, err_msg=name)


def test_truncnorm_far_in_the_tails() -> None:
    """Intervals where Phi(a) and Phi(b) round to one number (or to 1), and narrow ones: every function stays
    accurate (one call per function, the intervals elementwise)."""
    cases = [(30.0, 31.0), (-40.0, -35.0), (-np.inf, -20.0), (25.0, np.inf), (-0.5, -0.4), (3.0, 3.001)]
    a, b = (np.repeat([case[i] for case in cases], 7) for i in (0, 1))
    x = np.concatenate([np.linspace(max(lo, -45.0), min(hi, 45.0), 7) for lo, hi in cases])
    q = np.tile([0.0, 1e-12, 0.1, 0.5, 0.9, 1 - 1e-12, 1.0], len(cases))
    got = ts.program(lambda x, q, a, b: ([getattr(tss.truncnorm, f)(x, a, b) for f in TRUNCNORM],
                                         tss.truncnorm.ppf(q, a, b)))(x, q, a, b)
    with np.errstate(all="ignore"):
        for f, value in zip(TRUNCNORM, got[0]):
            np.testing.assert_allclose(np.asarray(value), getattr(st.truncnorm, f)(x, a, b), rtol=1e-11,
                                       atol=1e-300, err_msg=f)
        np.testing.assert_allclose(np.asarray(got[1]), st.truncnorm.ppf(q, a, b), rtol=1e-12, err_msg="ppf")


def test_edges_and_invalid_parameters() -> None:
    nan = np.nan
    values = ts.program(lambda: [
        tss.truncnorm.ppf(np.array([0.0, 1.0, -0.1, 1.1, nan]), -1.0, 2.0), tss.truncnorm.cdf(0.5, 2.0, 1.0),
        tss.multinomial.logpmf(np.array([[1.5, 1.5, 3], [1, 2, 3], [1, 2, 3], [1, 2, nan], [0, 0, 0]]),
                               np.array([6, 6.5, -6, 6, 0]), np.array([0.2, 0.3, 0.5])),
        tss.multinomial.logpmf(np.array([1.0, 2, 3]), 6, np.array([-0.2, 0.7, 0.5])),
        tss.rankdata(np.array([[1.0, nan, 2], [3, 1, 3]]), axis=1), tss.sem(np.array([1.0])),
        tss.mode(np.zeros((0, 2))), tss.mode(np.array([1.0, 1, nan, nan, nan])),
    ])()
    ppf, invalid, multi, bad_p, ranks, single, empty, nans = (np.asarray(v) if not isinstance(v, tuple) else v
                                                              for v in values)
    np.testing.assert_array_equal(ppf, [-1.0, 2.0, nan, nan, nan])
    assert np.isnan(invalid)
    np.testing.assert_array_equal(multi, [-np.inf, nan, nan, nan, 0.0])  # non-integer counts or n: see the docstring
    assert np.isnan(bad_p)
    np.testing.assert_array_equal(ranks, [[nan, nan, nan], [2.5, 1, 2.5]])
    assert np.isnan(single)
    assert np.isnan(np.asarray(empty.mode)).all() and (np.asarray(empty.count) == 0).all()
    assert np.isnan(float(nans.mode)) and int(nans.count) == 3


def test_integer_inputs() -> None:
    counts = np.array([[1, 2, 3], [0, 6, 0]], np.int32)
    p = np.array([0.2, 0.3, 0.5], np.float32)
    got = np.asarray(tss.multinomial.pmf(counts, np.array(6, np.int32), p))
    assert got.dtype == np.float32
    p64 = p.astype(np.float64) / p.astype(np.float64).sum()  # (SciPy >= 1.18 wants a sum of 1 to float64 rounding)
    np.testing.assert_allclose(got, st.multinomial.pmf(counts, 6, p64), rtol=2e-6)
    data = np.array([[3, 1, 3, 2], [0, 0, 5, 5]], np.int32)
    ranks = np.asarray(tss.rankdata(data, "min", axis=1))
    assert ranks.dtype == np.float32
    np.testing.assert_array_equal(ranks, st.rankdata(data, "min", axis=1))
    result = tss.mode(data, axis=1)
    assert np.asarray(result.mode).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(result.mode), [3, 0])
    np.testing.assert_array_equal(np.asarray(result.count), [2, 2])


def _gradient_cases() -> dict[str, tuple[Any, Any, Any]]:
    """name -> (f(x, p), x, p): points inside the support, parameters inside their range."""
    x = np.array([-0.3, 0.4, 1.1, 1.6])
    return {
        "truncnorm.logpdf": (lambda x, s: tss.truncnorm.logpdf(x, -0.5, 1.8, 0.1, s), x, np.full(4, 1.2)),
        "truncnorm.logcdf b": (lambda x, b: tss.truncnorm.logcdf(x, -0.5, b), x, np.full(4, 1.9)),
        "truncnorm.ppf b": (lambda q, b: tss.truncnorm.ppf(q / 4 + 0.4, -1.0, b), x, np.full(4, 0.8)),
        "gennorm.logpdf": (lambda x, beta: tss.gennorm.logpdf(x, beta), x, np.full(4, 1.7)),
        "gennorm.cdf": (lambda x, beta: tss.gennorm.cdf(x, beta, 0.2, 1.1), x, np.full(4, 2.3)),
        "vonmises.logpdf": (lambda x, kappa: tss.vonmises.logpdf(x, kappa), x, np.array([0.5, 2.0, 30.0, 800.0])),
        "wrapcauchy.logpdf": (lambda x, c: tss.wrapcauchy.logpdf(x + 1, c), x, np.array([0.1, 0.4, 0.7, 0.95])),
    }


def test_gradients_match_finite_differences_and_jax() -> None:
    """d/dx and d/dparameter in one program, f64 central differences; and jax's gradients where jax has them."""
    cases = _gradient_cases()
    eps = 1e-6

    @ts.program
    def run(args: Any) -> Any:
        out = {}
        for name, (f, _, _) in cases.items():
            x, p = args[name]
            n = x.shape[0]
            gx, gp = ts.grad(lambda a, b: tnp.sum(f(a, b)), argnums=(0, 1))(x, p)
            moved = f(tnp.concatenate([x + eps, x - eps, x, x]), tnp.concatenate([p, p, p + eps, p - eps]))
            out[name] = (gx, gp, moved[:n] - moved[n:2 * n], moved[2 * n:3 * n] - moved[3 * n:])
        counts = np.array([[1.0, 2, 3], [4, 0, 2]])
        out["multinomial p"] = ts.grad(lambda p: tnp.sum(tss.multinomial.logpmf(counts, 6, p)))(args["p"])
        out["sem"] = ts.grad(lambda a: tnp.sum(tss.sem(a, axis=1)))(args["data"])
        return out

    rng = np.random.default_rng(7)
    args = {name: (x, p) for name, (_, x, p) in cases.items()}
    got = run({**args, "p": np.array([0.2, 0.3, 0.5]), "data": rng.standard_normal((2, 5))})
    for name in cases:
        gx, gp, dx, dp = (np.asarray(v) for v in got[name])
        np.testing.assert_allclose(gx, dx / (2 * eps), rtol=1e-6, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(gp, dp / (2 * eps), rtol=1e-6, atol=1e-8, err_msg=name)
    np.testing.assert_allclose(np.asarray(got["multinomial p"]), [5 / 0.2, 2 / 0.3, 5 / 0.5], rtol=1e-12)
    _compare_with_jax(cases, got)


def _compare_with_jax(cases: dict[str, tuple[Any, Any, Any]], got: dict[str, Any]) -> None:
    try:
        import jax
        import jax.scipy.stats as js
    except ImportError:
        return
    jax.config.update("jax_enable_x64", True)
    theirs = {
        "truncnorm.logpdf": lambda x, s: js.truncnorm.logpdf(x, -0.5, 1.8, 0.1, s),
        "truncnorm.logcdf b": lambda x, b: js.truncnorm.logcdf(x, -0.5, b),
        "gennorm.logpdf": js.gennorm.logpdf,
        "vonmises.logpdf": js.vonmises.logpdf,
        "wrapcauchy.logpdf": lambda x, c: js.wrapcauchy.logpdf(x + 1, c),
    }

    @jax.jit
    def gradients(args: Any) -> Any:  # one compile for all (jax's eager dispatch would cost seconds)
        return {name: jax.grad(lambda a, b, f=f: f(a, b).sum(), argnums=(0, 1))(*args[name])
                for name, f in theirs.items()}

    expected = gradients({name: cases[name][1:] for name in theirs})
    for name, (gx, gp) in expected.items():
        np.testing.assert_allclose(np.asarray(got[name][0]), np.asarray(gx), rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(np.asarray(got[name][1]), np.asarray(gp), rtol=1e-9, atol=1e-12, err_msg=name)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a = rng.uniform(-2, 0, 3)
    b = a + rng.uniform(0.5, 3, 3)
    x = np.linspace(-2, 3, 7)
    ps = rng.dirichlet([1.0, 2.0, 3.0], 4)
    counts = np.array([[1.0, 2, 3], [3, 3, 0]])
    data = rng.integers(0, 3, (3, 5)).astype(float)
    got = ts.program(lambda a, b, ps, data: (
        ts.vmap(lambda a, b: tss.truncnorm.logcdf(x, a, b))(a, b),
        ts.vmap(lambda p: tss.multinomial.logpmf(counts, 6, p))(ps),
        ts.vmap(lambda row: tss.rankdata(row, "average"))(data),
        ts.vmap(lambda row: tss.mode(row, axis=0))(data),
        ts.vmap(lambda row: tss.sem(row))(data),
    ))(a, b, ps, data)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(got[0]), [st.truncnorm.logcdf(x, ai, bi) for ai, bi in zip(a, b)],
                                   rtol=1e-11)
    np.testing.assert_allclose(np.asarray(got[1]), [st.multinomial.logpmf(counts, 6, p) for p in ps], rtol=1e-11)
    np.testing.assert_array_equal(np.asarray(got[2]), [st.rankdata(row) for row in data])
    np.testing.assert_array_equal(np.asarray(got[3].mode), [st.mode(row).mode for row in data])
    np.testing.assert_array_equal(np.asarray(got[3].count), [st.mode(row).count for row in data])
    np.testing.assert_allclose(np.asarray(got[4]), [st.sem(row) for row in data], rtol=1e-13)


def test_bad_calls_raise_clear_errors() -> None:
    f32, f64 = ts.Spec((3,), ts.f32), ts.Spec((3,), ts.f64)
    check_staging_errors(
        [
            (lambda x, a: tss.truncnorm.logpdf(x, a, 1.0), [f32, f64], ts.DTypeError, ["truncnorm.logpdf"]),
            (lambda x, p: tss.multinomial.logpmf(x, 3.0, p), [ts.Spec((2,), ts.f64), f64], ts.ShapeError,
             ["multinomial.logpmf", "f64[2]", "f64[3]"]),
            (lambda x: tss.sem(x), [ts.Spec((3,), ts.i32)], ts.DTypeError, ["sem", "i32"]),
        ],
        "test_scipy_stats_more.py",
    )
    with pytest.raises(ValueError, match="method must be one of"):
        tss.rankdata(np.ones(3), "median")
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        tss.mode(np.ones(3), nan_policy="omit")
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        tss.sem(np.ones(3), nan_policy="raise")
