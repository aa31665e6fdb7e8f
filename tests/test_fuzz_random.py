"""Fuzzing ``ts.random`` against exact distributions (NumPy float64 CDFs and moments, no scipy), with fixed seeds.

Checked: shapes and dtypes (f16/bf16/f32/f64, integer dtypes, empty shapes), ranges (randint/choice never out of
range, also with bounds at and past the dtype's limits), statistics (Kolmogorov-Smirnov distances against the
exact CDF for the inverse-CDF samplers; means and variances for the rejection samplers and discrete ones),
determinism (same key, same bits; eager, staged and vmapped draws are bit-identical), key semantics (split and
fold_in streams are distinct and uncorrelated) and invalid parameters (clean errors, or the documented NaN / -1).

Deliberate differences from NumPy's ``Generator`` (and notes on JAX):
- Keys are values (Threefry, as JAX), not generator state: a reused key gives the same draws.
- Tensor bounds of ``randint`` outside the result dtype's range are clipped into it (a maxval past the top makes
  the top a possible draw, as in JAX); Python int bounds out of range are a DTypeError. An empty or reversed
  range gives ``minval`` (as JAX).
- ``uniform`` with ``minval > maxval`` gives ``minval``; ``bernoulli`` with p outside [0, 1] saturates (as JAX).
- Invalid shape parameters give NaN (``gamma``/``beta``/``dirichlet``/``chisquare``/``t`` with a <= 0;
  ``truncated_normal`` with lower >= upper) or -1 for integer draws (``poisson`` with lam < 0, NaN or inf;
  ``geometric`` with p outside [0, 1]); ``geometric(p=0)`` saturates to the dtype's largest value.
- ``fold_in(key, i)`` equals ``split(key, n)[i]`` (JAX's partitionable Threefry layout, which draws match bit for
  bit): derive keys from one parent by splitting or by folding in, not both.
- ``categorical`` with an all ``-inf`` row returns class 0. ``truncated_normal`` far in a tail is coarse (see its
  docstring; JAX shares the limitation).
- A program that closes over NumPy parameters bakes them in as constants, which XLA may fold with slightly
  different rounding: draws are bit-identical to eager ones when the parameters are program arguments.
  Under ``vmap``, the gamma family may differ by an ulp (XLA fuses the batched loop differently); every other
  sampler is bit-identical.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import random as R

N = 20000  # draws per KS test: the 1e-4 critical distance is about 0.016
KS_LIMIT = 1.95 / math.sqrt(N) * 1.3  # a fixed-seed test, so a generous margin over the asymptotic critical value
_erf = np.frompyfunc(math.erf, 1, 1)


def _np_dtype(dtype: Any) -> np.dtype[Any]:
    return np.dtype(dtype.numpy)


def _phi(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.asarray(_erf(np.asarray(x, np.float64) / math.sqrt(2.0)), np.float64))


def _ks(samples: Any, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """The Kolmogorov-Smirnov distance between the samples' empirical CDF and ``cdf``."""
    x = np.sort(np.asarray(samples, np.float64).ravel())
    f = cdf(x)
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


TRUNC = (-0.7, 1.9)
CDFS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "uniform": lambda x: np.clip(x, 0, 1),
    "normal": _phi,
    "exponential": lambda x: 1 - np.exp(-x),
    "laplace": lambda x: np.where(x < 0, 0.5 * np.exp(x), 1 - 0.5 * np.exp(-x)),
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "gumbel": lambda x: np.exp(-np.exp(-x)),
    "cauchy": lambda x: 0.5 + np.arctan(x) / np.pi,
    "truncated_normal": lambda x: (
        (_phi(x) - _phi(np.array(TRUNC[0]))) / (_phi(np.array(TRUNC[1])) - _phi(np.array(TRUNC[0])))
    ),
}


def _inverse_cdf_draws(key: Any, dtype: Any) -> dict[str, Any]:
    keys = R.split(key, len(CDFS))
    out = {name: getattr(R, name)(k, (N,), dtype) for name, k in zip(CDFS, keys) if name != "truncated_normal"}
    out["truncated_normal"] = R.truncated_normal(keys[-1], *TRUNC, shape=(N,), dtype=dtype)
    return out


@pytest.mark.parametrize("dtype", [ts.f32, ts.f64])
def test_inverse_cdf_samplers_match_their_exact_cdfs(dtype: Any) -> None:
    draws = ts.program(lambda k: _inverse_cdf_draws(k, dtype))(R.key(7))
    for name, x in draws.items():
        assert np.asarray(x).dtype == _np_dtype(dtype) and np.asarray(x).shape == (N,), name
        assert _ks(x, CDFS[name]) < KS_LIMIT, (name, _ks(x, CDFS[name]))
    lo, hi = TRUNC
    t = np.asarray(draws["truncated_normal"])
    assert np.all((t > lo) & (t < hi))
    assert np.all((np.asarray(draws["uniform"]) >= 0) & (np.asarray(draws["uniform"]) < 1))


def _moment_draws(key: Any, params: dict[str, Any]) -> dict[str, Any]:
    k = R.split(key, 11)
    n = 4000
    return {
        "gamma": R.gamma(k[0], params["a"], (n, 4)),
        "beta": R.beta(k[1], params["a"], params["b"], (n, 4)),
        "chisquare": R.chisquare(k[2], params["a"] * 2.0, (n, 4)),
        "t": R.t(k[3], params["df"], (n,)),
        "dirichlet": R.dirichlet(k[4], params["alpha"], (n,)),
        "poisson": R.poisson(k[5], params["lam"], (n, 5)),
        "geometric": R.geometric(k[6], params["p"], (n, 3)),
        "bernoulli": R.bernoulli(k[7], params["p"], (n, 3)),
        "categorical": R.categorical(k[8], params["logits"], shape=(n,)),
        "rademacher": R.rademacher(k[9], (n,)),
        "mvn": R.multivariate_normal(k[10], params["mean"], params["cov"], (n,)),
    }


def test_rejection_and_discrete_samplers_have_the_right_moments() -> None:
    a = np.array([0.3, 1.0, 2.5, 9.0], np.float32)
    b = np.array([2.0, 0.5, 2.5, 1.0], np.float32)
    params = {
        "a": a, "b": b, "df": np.float32(7.0), "alpha": np.array([0.5, 2.0, 4.0], np.float32),
        "lam": np.array([0.0, 0.7, 4.0, 10.0, 250.0], np.float32), "p": np.array([0.1, 0.5, 1.0], np.float32),
        "logits": np.log(np.array([0.1, 0.0, 0.6, 0.3], np.float32)),
        "mean": np.array([1.0, -2.0], np.float32), "cov": np.array([[2.0, 0.6], [0.6, 1.0]], np.float32),
    }
    got = {name: np.asarray(v, np.float64) for name, v in ts.program(_moment_draws)(R.key(3), params).items()}

    def close(name: str, value: Any, want: Any, rel: float = 0.1, abs_: float = 0.02) -> None:
        np.testing.assert_allclose(value, want, rtol=rel, atol=abs_, err_msg=name)

    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close("gamma mean", got["gamma"].mean(0), a64)
    close("gamma var", got["gamma"].var(0), a64, rel=0.15)
    close("beta mean", got["beta"].mean(0), a64 / (a64 + b64))
    close("beta var", got["beta"].var(0), a64 * b64 / ((a64 + b64) ** 2 * (a64 + b64 + 1)), rel=0.15, abs_=0.005)
    close("chisquare mean", got["chisquare"].mean(0), 2 * a64)
    close("t var", got["t"].var(), 7.0 / 5.0, rel=0.15)
    alpha = params["alpha"].astype(np.float64)
    close("dirichlet mean", got["dirichlet"].mean(0), alpha / alpha.sum())
    np.testing.assert_allclose(got["dirichlet"].sum(-1), 1.0, atol=1e-5)
    lam = params["lam"].astype(np.float64)
    close("poisson mean", got["poisson"].mean(0), lam, rel=0.05)
    close("poisson var", got["poisson"].var(0), lam, rel=0.15)
    assert np.all(got["poisson"][:, 0] == 0)
    p = params["p"].astype(np.float64)
    close("geometric mean", got["geometric"].mean(0), 1 / p, rel=0.1)
    assert got["geometric"].min() >= 1 and np.all(got["geometric"][:, 2] == 1)
    close("bernoulli mean", got["bernoulli"].mean(0), p)
    freq = np.bincount(got["categorical"].astype(np.int64), minlength=4) / len(got["categorical"])
    close("categorical", freq, [0.1, 0.0, 0.6, 0.3], abs_=0.02)
    assert freq[1] == 0  # probability 0 (a -inf logit) is never drawn
    assert set(np.unique(got["rademacher"])) == {-1.0, 1.0}
    close("rademacher mean", got["rademacher"].mean(), 0.0, abs_=0.04)
    close("mvn mean", got["mvn"].mean(0), params["mean"], abs_=0.08)
    close("mvn cov", np.cov(got["mvn"].T), params["cov"], abs_=0.1)


# ------------------------------------------------------------------------------------------ shapes and dtypes

FLOAT_DTYPES = [ts.f16, ts.bf16, ts.f32, ts.f64]
SIMPLE = ["uniform", "normal", "exponential", "laplace", "logistic", "gumbel", "cauchy"]


def _every_float_sampler(key: Any, dtype: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    k = R.split(key, 8)
    out = {name: getattr(R, name)(k[i], shape, dtype) for i, name in enumerate(SIMPLE)}
    out["truncated_normal"] = R.truncated_normal(k[7], -1.0, 2.0, shape, dtype)
    return out


def _gamma_family(key: Any) -> dict[str, Any]:
    """The rejection samplers (a compiled loop each, so few of them), in half and double precision."""
    k = R.split(key, 4)
    return {"gamma_f16": R.gamma(k[0], 0.5, (5, 3), ts.f16), "beta_f64": R.beta(k[1], 1.5, 0.5, (0, 3), ts.f64),
            "dirichlet_bf16": R.dirichlet(k[2], np.ones(3, ts.bf16.numpy), (5,), ts.bf16),
            "orthogonal_f64": R.orthogonal(k[3], 3, (5,), ts.f64)}


@pytest.mark.parametrize("shape", [(5, 3), (0, 3)])
def test_float_samplers_give_the_requested_dtype_and_shape(shape: tuple[int, ...]) -> None:
    got = ts.program(lambda k: {str(d.__name__): _every_float_sampler(k, d, shape) for d in FLOAT_DTYPES})(R.key(1))
    for dtype in FLOAT_DTYPES:
        for name, x in got[dtype.__name__].items():
            a = np.asarray(x)
            assert a.dtype == _np_dtype(dtype) and a.shape == shape, (dtype, name, a.dtype, a.shape)
            assert np.all(np.isfinite(a.astype(np.float64))), (dtype, name)
        u = np.asarray(got[dtype.__name__]["uniform"]).astype(np.float64)
        assert np.all((u >= 0) & (u < 1)), dtype
        assert np.all(np.asarray(got[dtype.__name__]["exponential"]).astype(np.float64) >= 0), dtype
    if shape[0]:
        family = ts.program(_gamma_family)(R.key(2))
        q = np.asarray(family.pop("orthogonal_f64"))
        np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), q.shape), atol=1e-12)
        want = {"gamma_f16": ((5, 3), np.float16), "beta_f64": ((0, 3), np.float64),
                "dirichlet_bf16": ((5, 3), ts.bf16.numpy)}
        for name, (sizes, dt) in want.items():
            a = np.asarray(family[name])
            assert a.shape == sizes and a.dtype == dt, (name, a.shape, a.dtype)
            assert np.all(a.astype(np.float64) >= 0) and np.all(np.isfinite(a.astype(np.float64))), name


INT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32]


def _randint_cases() -> list[tuple[Any, int, int]]:
    """Static (Python int) bounds at the dtype's limits."""
    cases: list[tuple[Any, int, int]] = []
    for dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        lo_, hi_ = int(info.min), int(info.max) + 1
        cases += [(dtype, lo_, hi_), (dtype, lo_, lo_ + 1), (dtype, hi_ - 2, hi_)]
    return cases


def _random_bounds(rng: np.random.Generator, dtype: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    pairs = np.sort(rng.integers(int(info.min), int(info.max) + 1, size=(count, 2), dtype=np.int64), axis=1)
    pairs[: count // 2, 1] = pairs[: count // 2, 0] + rng.integers(0, 4, count // 2)  # small ranges, some empty
    pairs = np.minimum(pairs, int(info.max))
    return pairs[:, 0].astype(dtype), pairs[:, 1].astype(dtype)


def test_randint_stays_in_range_near_the_dtype_limits(rng: np.random.Generator) -> None:
    cases = _randint_cases()
    bounds = {np.dtype(d).name: _random_bounds(rng, d, 8) for d in INT_DTYPES}

    def draws(key: Any, bounds: Any) -> Any:
        ks = R.split(key, len(cases) + 1)
        static = [R.randint(k, (2000,), lo, hi, dt) for k, (dt, lo, hi) in zip(ks, cases)]
        dynamic = {
            name: ts.vmap(lambda k, lo, hi, dt=np.dtype(name): R.randint(k, (500,), lo, hi, dt))(
                ts.numpy.stack(R.split(ks[-1], 8)), *bounds[name])
            for name in bounds
        }
        return static, dynamic

    static, dynamic = ts.program(draws)(R.key(11), bounds)
    for (dtype, lo, hi), x in zip(cases, static):
        a = np.asarray(x)
        assert a.dtype == dtype and a.shape == (2000,)
        assert lo <= int(a.min()) and int(a.max()) < hi, (dtype, lo, hi, a.min(), a.max())
        if hi - lo <= 3:
            assert len(np.unique(a)) == hi - lo, (dtype, lo, hi)  # every value of a small range is drawn
        else:  # the whole range: the draws spread over it
            assert (int(a.max()) - int(a.min())) > 0.99 * (hi - lo), (dtype, lo, hi)
    for name, (los, his) in bounds.items():
        a = np.asarray(dynamic[name]).astype(np.int64)
        assert a.dtype == np.int64 and np.asarray(dynamic[name]).dtype == np.dtype(name)
        for row, lo, hi in zip(a, los.astype(np.int64), his.astype(np.int64)):
            if hi <= lo:
                assert np.all(row == lo), (name, lo, hi)  # an empty range gives minval
            else:
                assert lo <= row.min() and row.max() < hi, (name, lo, hi, row.min(), row.max())
                if hi - lo <= 3:
                    assert len(np.unique(row)) == hi - lo, (name, lo, hi)


def test_randint_tensor_bounds_are_clipped_to_the_dtype_not_wrapped() -> None:
    # regression: -1000 and 1000 as i32 tensors converted to i8 wrapped to 24 and -24: every draw was 24
    cases = [
        (np.int32(-1000), np.int32(1000), np.int8, -128, 127),
        (np.int32(100), np.int32(1000), np.int8, 100, 127),
        (np.int32(-1000), np.int32(-500), np.int8, -128, -128),
        (np.int32(-5), np.int32(300), np.uint8, 0, 255),
        (np.int8(-3), np.int8(3), np.int32, -3, 2),
        (np.int32(7), np.int32(3), np.int32, 7, 7),
    ]
    keys = R.split(R.key(5), len(cases))
    bounds = [(ts.asarray(lo), ts.asarray(hi)) for lo, hi, *_ in cases]
    staged = ts.program(lambda ks, bs: [R.randint(k, (3000,), lo, hi, c[2]) for k, (lo, hi), c in zip(ks, bs, cases)])(
        keys, bounds
    )
    for (lo, hi, dtype, want_lo, want_hi), x in zip(cases, staged):
        a = np.asarray(x)
        assert a.dtype == dtype and a.min() == want_lo and a.max() == want_hi, (lo, hi, dtype, a.min(), a.max())
    for i in (0, 3):  # eager draws are the staged ones
        eager = R.randint(keys[i], (3000,), *bounds[i], cases[i][2])
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(staged[i]))


def test_choice_permutation_and_shuffle_are_valid_samples() -> None:
    p = np.array([0.1, 0.0, 0.4, 0.2, 0.3], np.float32)
    values = np.arange(24.0).reshape(4, 6)

    def draws(key: Any, p: Any, values: Any) -> dict[str, Any]:
        k = R.split(key, 8)
        return {
            "replace": R.choice(k[0], 5, (4000,)),
            "replace_p": R.choice(k[1], 5, (4000,), p=p),
            "no_replace": R.choice(k[2], 9, (3, 3), replace=False),
            "no_replace_p": R.choice(k[3], 5, (4,), replace=False, p=p),
            "axis1": R.choice(k[4], values, (2,), axis=1, replace=False),
            "perm": R.permutation(k[5], 1000),
            "indep": R.permutation(k[6], values, axis=1, independent=True),
            "shuffle": R.shuffle(k[7], values, axis=0),
            "empty": R.choice(k[0], 0, (0,)),
        }

    got = {n: np.asarray(v) for n, v in ts.program(draws)(R.key(9), p, values).items()}
    assert got["replace"].min() >= 0 and got["replace"].max() <= 4
    np.testing.assert_allclose(np.bincount(got["replace"], minlength=5) / 4000, 0.2, atol=0.03)
    freq = np.bincount(got["replace_p"], minlength=5) / 4000
    np.testing.assert_allclose(freq, p, atol=0.03)
    assert freq[1] == 0
    assert sorted(got["no_replace"].ravel()) == list(range(9))
    assert len(set(got["no_replace_p"])) == 4 and 1 not in got["no_replace_p"]
    assert got["axis1"].shape == (4, 2) and len(set(got["axis1"][0])) == 2
    np.testing.assert_array_equal(got["axis1"] - got["axis1"][:1], np.repeat(np.arange(4)[:, None] * 6.0, 2, 1))
    assert sorted(got["perm"]) == list(range(1000)) and not np.array_equal(got["perm"], np.arange(1000))
    for row, orig in zip(got["indep"], values):
        assert sorted(row) == list(orig)
    assert sorted(map(tuple, got["shuffle"])) == sorted(map(tuple, values))
    assert got["empty"].shape == (0,)


# ----------------------------------------------------------------------------------------------- determinism


def _mixed_draws(key: Any, a: Any, logits: Any, p: Any) -> dict[str, Any]:
    k = R.split(key, 8)
    return {
        "uniform": R.uniform(k[0], (6,)), "normal64": R.normal(k[1], (6,), ts.f64),
        "randint": R.randint(k[2], (6,), -3, 9), "gamma": R.gamma(k[3], a), "perm": R.permutation(k[4], 6),
        "categorical": R.categorical(k[5], logits), "bits": R.bits(k[6], (6,)),
        "choice_p": R.choice(k[7], 5, (3,), replace=False, p=p),
    }


def test_draws_are_bit_identical_eager_staged_and_vmapped() -> None:
    args = (np.array([0.3, 1.0, 4.0], np.float32), np.log(np.array([[0.1, 0.2, 0.3, 0.3, 0.1]] * 2, np.float32)),
            np.array([0.1, 0.2, 0.3, 0.3, 0.1], np.float32))
    key = R.key(2024)
    staged = ts.program(_mixed_draws)
    once, again = staged(key, *args), staged(R.key(2024), *args)
    k = R.split(key, 8)
    eager = {"uniform": R.uniform(k[0], (6,)), "gamma": R.gamma(k[3], args[0]), "perm": R.permutation(k[4], 6)}
    for name in once:
        np.testing.assert_array_equal(np.asarray(once[name]), np.asarray(again[name]), err_msg=name)
    for name in eager:  # each eager op is its own compiled program: a few suffice
        np.testing.assert_array_equal(np.asarray(once[name]), np.asarray(eager[name]), err_msg=name)
    keys = ts.asarray(np.stack([np.asarray(k) for k in R.split(key, 3)]))
    batched = ts.vmap(lambda k: _mixed_draws(k, *args))(keys)
    for i in range(3):
        one = staged(ts.asarray(np.asarray(keys)[i]), *args)
        for name in one:
            got, want = np.asarray(batched[name])[i], np.asarray(one[name])
            if name == "gamma":  # XLA fuses the batched rejection loop differently: within an ulp
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)


def test_split_and_fold_in_give_distinct_uncorrelated_streams() -> None:
    def streams(key: Any) -> list[Any]:
        splits = R.split(key, 3)
        folds = [R.fold_in(key, d) for d in (3, 4, 2**31, 2**32 - 1)]
        nested = [R.split(splits[0])[1], R.fold_in(splits[1], 3)]
        return [R.normal(k, (4000,)) for k in (key, *splits, *folds, *nested, R.split(key)[0], R.fold_in(key, 1))]

    got = np.stack([np.asarray(x, np.float64) for x in ts.program(streams)(R.key(42))])
    np.testing.assert_array_equal(got[1], got[-2])  # key i of a split is counter i's block, whatever the count
    np.testing.assert_array_equal(got[2], got[-1])  # and fold_in(key, i) is split(key)[i] (as in JAX)
    corr = np.corrcoef(got[:-2])  # every other pair of streams is uncorrelated
    off = corr[~np.eye(len(corr), dtype=bool)]
    assert np.max(np.abs(off)) < 0.07, np.max(np.abs(off))
    assert np.asarray(R.fold_in(R.key(42), -1)).tolist() == np.asarray(R.fold_in(R.key(42), 2**32 - 1)).tolist()


# ------------------------------------------------------------------------------------------ invalid parameters


def test_invalid_parameters_give_the_documented_nan_or_minus_one() -> None:
    bad = np.array([-1.0, 0.0, np.nan], np.float32)

    def draws(key: Any, bad: Any) -> dict[str, Any]:
        k = R.split(key, 6)
        return {  # beta, chisquare and dirichlet share gamma's sampler; t adds a normal
            "gamma": R.gamma(k[0], bad), "t": R.t(k[3], bad),
            "poisson": R.poisson(k[4], np.array([-1.0, np.nan, np.inf, -np.inf], np.float32)),
            "geometric": R.geometric(k[5], np.array([-0.5, 1.5, np.nan, 0.0], np.float32)),
            "truncated": R.truncated_normal(k[0], np.array([1.0, 0.0], np.float32), np.array([-1.0, 0.0], np.float32)),
        }

    got = {n: np.asarray(v) for n, v in ts.program(draws)(R.key(0), bad).items()}
    for name in ("gamma", "t", "truncated"):
        assert np.all(np.isnan(got[name])), (name, got[name])
    np.testing.assert_array_equal(got["poisson"], [-1, -1, -1, -1])  # regression: inf gave 0
    np.testing.assert_array_equal(got["geometric"], [-1, -1, -1, np.iinfo(np.int32).max])  # regression: 0 and garbage


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda k: R.uniform(k, (2,), ts.i32), ts.DTypeError, "uniform"),
        (lambda k: R.normal(k, (-1,)), ts.ShapeError, "negative"),
        (lambda k: R.randint(k, (2,), 0, 300, ts.i8), ts.DTypeError, "maxval=300"),
        (lambda k: R.randint(k, (2,), 0, 5, ts.f32), ts.DTypeError, "draws integers"),
        (lambda k: R.randint(k, (2,), 0.5, 3), ts.DTypeError, "minval"),
        (lambda k: R.bernoulli(k, 1, (2,)), ts.DTypeError, "probability"),
        (lambda k: R.bernoulli(k, np.ones(3, np.float32) / 2, (2, 4)), ts.ShapeError, "broadcast"),
        (lambda k: R.categorical(k, np.zeros((2, 3), np.float32), shape=(4, 3)), ts.ShapeError, "batch shape"),
        (lambda k: R.categorical(k, np.zeros((2, 3), np.int32)), ts.DTypeError, "floating"),
        (lambda k: R.choice(k, 3, (4,), replace=False), ts.ShapeError, "without replacement"),
        (lambda k: R.choice(k, 3, (2,), p=np.ones(4, np.float32)), ts.ShapeError, "p must have shape"),
        (lambda k: R.choice(k, -1), ts.ShapeError, "non-negative"),
        (lambda k: R.permutation(k, np.float32(2.0)), ts.ShapeError, "rank"),
        (lambda k: R.split(k, 0), ts.ShapeError, "positive"),
        (lambda k: R.fold_in(k, 2**40), ts.DTypeError, "32 bits"),
        (lambda k: R.key(2**70), ts.DTypeError, "64 bits"),
        (lambda k: R.gamma(k, np.ones(2, np.float64), dtype=ts.f32), ts.DTypeError, "f32"),
        (lambda k: R.gamma(k, np.ones(2, np.float32), (3,)), ts.ShapeError, "broadcast"),
        (lambda k: R.dirichlet(k, np.float32(1.0)), ts.ShapeError, "categories"),
        (
            lambda k: R.multivariate_normal(k, np.zeros(3, np.float32), np.eye(2, dtype=np.float32)),
            ts.ShapeError, "n, n",
        ),
        (lambda k: R.multivariate_normal(k, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), method="lu"),
         ValueError, "method"),
        (lambda k: R.normal(ts.asarray(np.array([1, 2], np.int32)), (2,)), ts.DTypeError, "key"),
        (lambda k: R.normal(np.zeros(3, np.uint32), (2,)), ts.DTypeError, "key"),
        (lambda k: ts.vmap(lambda k: R.normal(k, (2,)))(R.split(k, 3)), ts.DTypeError, r"tnp\.stack\(keys\)"),
    ],
)
def test_bad_arguments_are_clear_errors(call: Callable[[Any], Any], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words) as info:
        call(R.key(0))
    assert "test_fuzz_random.py" in str(info.value)
