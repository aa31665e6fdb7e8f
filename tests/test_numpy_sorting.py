"""Sorting, searching and order statistics against NumPy float64 on random inputs (with ties, NaNs and signed
zeros); gradients against central finite differences; vmap against a Python loop; errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Feat(Dim): ...


def _tricky(rng: np.random.Generator, *shape: int, dtype: Any = np.float64) -> np.ndarray:
    """Few distinct values (many ties), some NaNs and signed zeros."""
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.floating) and x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.15] = np.nan
        zeros = flat == 0
        flat[zeros] = np.where(rng.random(zeros.sum()) < 0.5, -0.0, 0.0)
    return x


def _desc_argsort(x: np.ndarray, axis: int) -> np.ndarray:
    """Stable descending order with NaNs first, by Python's (stable) sorted on each line."""
    def line(row: np.ndarray) -> np.ndarray:
        return np.array(sorted(range(len(row)), key=lambda i: (not np.isnan(row[i]), -row[i] if row[i] == row[i]
                                                                else 0.0)), dtype=np.int64)
    if x.shape[axis] == 0:
        return np.zeros(x.shape, np.int64)
    return np.apply_along_axis(line, axis, x.astype(np.float64))


def _same(got: Any, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":  # -0.0 and 0.0 compare equal: check the sign bits kept their input order too
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_sort_and_argsort_match_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x = _tricky(rng, 3, 4, 9, dtype=dtype)
    axes: list[int | None] = [0, 1, -1, None]

    @ts.program
    def run(x: Any) -> Any:
        return ([tnp.sort(x, axis=a) for a in axes], [tnp.argsort(x, axis=a) for a in axes],
                [tnp.sort(x, axis=a, descending=True) for a in (0, -1)],
                [tnp.argsort(x, axis=a, descending=True) for a in (0, -1)])

    sorts, orders, desc_sorts, desc_orders = run(x)
    for a, s, o in zip(axes, sorts, orders):
        _same(s, np.sort(x, axis=a, kind="stable"))
        _same(o, np.argsort(x, axis=a, kind="stable"))
        assert np.asarray(o).dtype == np.int32
    for a, s, o in zip((0, -1), desc_sorts, desc_orders):
        want = _desc_argsort(x, a)
        _same(o, want)
        _same(s, np.take_along_axis(x, want, axis=a))


def test_sort_edge_shapes_and_bools(rng: np.random.Generator) -> None:
    b = rng.random((2, 7)) < 0.5
    _same(tnp.sort(b), np.sort(b))
    _same(tnp.argsort(b, axis=0), np.argsort(b, axis=0, kind="stable"))
    _same(tnp.sort(np.float32(2.5), axis=None), np.array([2.5], np.float32))
    empty = np.zeros((0, 3), np.float32)
    _same(tnp.sort(empty, axis=0), empty)
    _same(tnp.argsort(empty, axis=1), np.zeros((0, 3), np.int32))
    one = rng.standard_normal((4, 1))
    _same(tnp.sort(one), one)
    x = rng.standard_normal((3, 5))
    _same(tnp.partition(x, 2), np.sort(x))  # a full sort meets partition's contract
    assert (np.asarray(tnp.argpartition(x, [0, 2], axis=0)) == np.argsort(x, axis=0)).all()


def test_sort_keeps_dim_names_and_flattens_for_axis_none() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, Feat]) -> Any:
        return tnp.sort(x, axis=Feat), tnp.argsort(x, axis=0), tnp.sort(x, axis=None)

    outs = f.stage(Batch=2, Feat=3).out_avals
    assert [o.dims for o in outs] == [("Batch", "Feat"), ("Batch", "Feat"), (None,)]
    assert outs[2].shape == (6,)


def test_lexsort_matches_numpy(rng: np.random.Generator) -> None:
    k1, k2 = rng.integers(0, 3, (2, 9)), rng.integers(0, 3, (2, 9))
    k3 = rng.standard_normal(9)
    _same(tnp.lexsort([k1[0], k2[0]]), np.lexsort([k1[0], k2[0]]))
    _same(tnp.lexsort((k1.astype(np.float64)[0], k3)), np.lexsort((k1[0], k3)))
    _same(tnp.lexsort([k1, k2], axis=-1), np.lexsort([k1, k2], axis=-1))


def test_searchsorted_matches_numpy(rng: np.random.Generator) -> None:
    sizes = [0, 1, 2, 5, 8, 9, 33]
    arrays = [np.sort(np.round(rng.standard_normal(n), 1)) for n in sizes]
    arrays[4][-2:] = np.nan  # NaNs sort last
    arrays[6][:5] = arrays[6][5]  # a run of duplicates
    v = np.concatenate([np.round(rng.standard_normal(12), 1), [np.nan, np.inf, -np.inf, 0.0]]).reshape(4, 4)
    v[0, :3] = arrays[6][5]

    @ts.program
    def run(arrays: Any, v: Any) -> Any:
        return [(tnp.searchsorted(a, v), tnp.searchsorted(a, v, side="right"), tnp.searchsorted(a, v[0, 1]))
                for a in arrays]

    for a, (left, right, scalar) in zip(arrays, run(arrays, v)):
        _same(left, np.searchsorted(a, v).astype(np.int32))
        _same(right, np.searchsorted(a, v, side="right").astype(np.int32))
        _same(scalar, np.asarray(np.searchsorted(a, v[0, 1]), np.int32))
    ints = np.sort(rng.integers(0, 10, 20)).astype(np.int32)
    probe = rng.integers(-1, 12, (3, 2)).astype(np.int32)
    _same(tnp.searchsorted(ints, probe, side="right"), np.searchsorted(ints, probe, side="right").astype(np.int32))
    perm = rng.permutation(20)
    shuffled = ints[perm]
    sorter = np.argsort(shuffled, kind="stable").astype(np.int32)
    _same(tnp.searchsorted(shuffled, probe, sorter=sorter), np.searchsorted(shuffled, probe, sorter=sorter)
          .astype(np.int32))
    _same(tnp.searchsorted(ints, 4), np.asarray(np.searchsorted(ints, 4), np.int32))


METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "hazen", "weibull", "median_unbiased",
           "normal_unbiased", "interpolated_inverted_cdf"]


def test_quantile_methods_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5, 6))
    x[1, 2, 3] = x[1, 2, 4]  # a tie
    qs = np.array([[0.0, 0.1, 0.25], [0.5, 0.77, 1.0]])

    @ts.program
    def run(x: Any, q: Any) -> Any:
        static = {m: tnp.quantile(x, qs, axis=1, method=m) for m in METHODS}
        dynamic = {m: tnp.quantile(x, q, axis=-1, method=m) for m in METHODS}
        return static, dynamic, tnp.quantile(x, 0.3), tnp.quantile(x, [0.2, 0.9], axis=(0, 2), keepdims=True)

    static, dynamic, whole, kept = run(x, qs)
    for m in METHODS:
        np.testing.assert_allclose(np.asarray(static[m]), np.quantile(x, qs, axis=1, method=m), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(dynamic[m]), np.quantile(x, qs, axis=-1, method=m), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(np.asarray(whole), np.quantile(x, 0.3), rtol=1e-12)
    want = np.quantile(x, [0.2, 0.9], axis=(0, 2), keepdims=True)
    assert np.asarray(kept).shape == want.shape == (2, 1, 5, 1)
    np.testing.assert_allclose(np.asarray(kept), want, rtol=1e-12)


def test_median_percentile_and_nan_variants_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 6)).astype(np.float32)
    y = rng.standard_normal((3, 7))
    y[0, [1, 4]] = np.nan
    y[2, :] = np.nan
    close = dict(rtol=1e-6, atol=1e-6)

    @ts.program
    def run(x: Any, y: Any) -> Any:
        return (tnp.median(x), tnp.median(x, axis=0), tnp.median(x, axis=-1, keepdims=True),
                tnp.percentile(x, [10.0, 50.0, 99.0], axis=1), tnp.quantile(y, 0.4, axis=1), tnp.median(y, axis=1),
                tnp.nanmedian(y, axis=1), tnp.nanquantile(y, [0.1, 0.8], axis=-1, method="nearest"),
                tnp.nanpercentile(y, 35.0, axis=1), tnp.nanmedian(y), tnp.median(x[:, :5], axis=1))

    got = [np.asarray(g) for g in run(x, y)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns about the all-NaN row
        x64 = x.astype(np.float64)
        want = [np.median(x64), np.median(x64, axis=0), np.median(x64, axis=-1, keepdims=True),
                np.percentile(x64, [10, 50, 99], axis=1), np.quantile(y, 0.4, axis=1), np.median(y, axis=1),
                np.nanmedian(y, axis=1), np.nanquantile(y, [0.1, 0.8], axis=-1, method="nearest"),
                np.nanpercentile(y, 35, axis=1), np.nanmedian(y), np.median(x64[:, :5], axis=1)]
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, **close)
    assert got[0].dtype == np.float32 and got[4].dtype == np.float64
    # Integer operands: the discrete methods keep the dtype; interpolation needs a float operand.
    ints = rng.integers(0, 50, (4, 5)).astype(np.int32)
    lower = tnp.quantile(ints, [0.3, 0.6], axis=0, method="lower")
    assert np.asarray(lower).dtype == np.int32
    _same(lower, np.quantile(ints, [0.3, 0.6], axis=0, method="lower").astype(np.int32))
    # An empty axis: NumPy's median is NaN; quantile has nothing to index.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(np.asarray(tnp.median(np.zeros((0, 3)), axis=0)),
                                      np.median(np.zeros((0, 3)), axis=0))


def test_quantile_keeps_dim_names() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, Feat]) -> Any:
        return tnp.median(x, axis=Feat), tnp.quantile(x, [0.1, 0.9], axis=0), tnp.median(x, axis=1, keepdims=True)

    outs = f.stage(Batch=2, Feat=3).out_avals
    assert [(o.shape, o.dims) for o in outs] == [
        ((2,), ("Batch",)), ((2, 3), (None, "Feat")), ((2, 1), ("Batch", None))
    ]


EPS = 1e-6


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    """Distinct values (no ties), so every order statistic is differentiable at the point."""
    x = rng.permutation(24).reshape(4, 6) + rng.random((4, 6)) * 0.5
    t = rng.standard_normal((4, 6))
    weights = rng.standard_normal(6)
    fs = [
        lambda x: tnp.sum(tnp.sin(tnp.sort(x, axis=0)) * weights),
        lambda x: tnp.sum(tnp.median(x, axis=1) ** 2),
        lambda x: tnp.median(x),
        lambda x: tnp.sum(tnp.quantile(x, [0.1, 0.35, 0.9], axis=0) ** 2),
        lambda x: tnp.sum(tnp.quantile(x, 0.3, axis=1, method="midpoint") * 1.5),
        lambda x: tnp.sum(tnp.percentile(x, [5.0, 60.0], axis=1, method="hazen") ** 3),
        lambda x: tnp.sum(tnp.sort(x, axis=None, descending=True)[:5] ** 2),
    ]

    @ts.program
    def run(x: Any, t: Any) -> Any:
        return [(f(x + EPS * t), f(x - EPS * t), ts.grad(f)(x)) for f in fs]

    for k, (plus, minus, grad) in enumerate(run(x, t)):
        expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
        assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), k


def test_gradient_with_respect_to_a_tensor_q(rng: np.random.Generator) -> None:
    x = rng.permutation(10) + rng.random(10) * 0.5
    q = np.array([0.13, 0.52, 0.81])
    dq = ts.grad(lambda q: tnp.sum(tnp.quantile(x, q)))(q)
    s = np.sort(x)
    pos = q * 9
    lo = np.floor(pos).astype(int)
    np.testing.assert_allclose(np.asarray(dq), (s[lo + 1] - s[lo]) * 9, rtol=1e-12)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 8))
    a = np.sort(rng.standard_normal((3, 8)), axis=1)
    v = rng.standard_normal((3, 5))

    def per_example(x: Any, a: Any, v: Any) -> Any:
        return (tnp.sort(x), tnp.argsort(x, descending=True), tnp.searchsorted(a, v), tnp.median(x),
                tnp.quantile(x, [0.2, 0.7], method="nearest"), ts.grad(lambda x: tnp.quantile(x, 0.4))(x))

    got = ts.vmap(per_example)(x, a, v)
    loop = ts.program(per_example)
    for i in range(3):
        for g, e in zip(got, loop(x[i], a[i], v[i])):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(e), rtol=1e-12)


def _message(fn: Any, *specs: ts.Spec) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError, TypeError, ValueError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    m, v, i = ts.Spec((2, 3), f32), ts.Spec((3,), f32), ts.Spec((2, 3), ts.i32)
    cases = [
        (lambda m: tnp.sort(m, axis=2), (m,), ts.ShapeError, ["sort", "axis 2", "f32[2, 3]"]),
        (lambda m: tnp.sort(m, order="x"), (m,), TypeError, ["sort", "structured"]),
        (lambda m: tnp.argsort(m, axis=(0, 1)), (m,), ts.ShapeError, ["argsort", "one axis"]),
        (lambda m: tnp.argsort(m, kind="bogo"), (m,), ValueError, ["argsort", "kind"]),
        (lambda m, v: tnp.searchsorted(m, v), (m, v), ts.ShapeError, ["searchsorted", "1-D", "f32[2, 3]"]),
        (lambda v, i: tnp.searchsorted(v, i), (v, i), ts.DTypeError, ["searchsorted", "f32[3]", "i32[2, 3]"]),
        (lambda v: tnp.searchsorted(v, v, side="middle"), (v,), ValueError, ["searchsorted", "side"]),
        (lambda i: tnp.median(i), (i,), ts.DTypeError, ["median", "i32[2, 3]", "floating-point"]),
        (lambda m: tnp.quantile(m, 1.5), (m,), ValueError, ["quantile", "[0, 1]"]),
        (lambda m: tnp.percentile(m, [50, 101]), (m,), ValueError, ["percentile", "[0, 100]"]),
        (lambda m: tnp.quantile(m, 0.5, method="magic"), (m,), ValueError, ["quantile", "method"]),
        (lambda m: tnp.quantile(m, 0.5, axis=3), (m,), ts.ShapeError, ["quantile", "axis 3"]),
        (lambda m, q: tnp.quantile(m, q), (m, ts.Spec((2,), ts.f64)), ts.DTypeError, ["quantile", "f64[2]", "dtype"]),
        (lambda m: tnp.quantile(m[:, :0], 0.5, axis=1), (m,), ts.ShapeError, ["quantile", "empty"]),
        (lambda m: tnp.partition(m, 3), (m,), ts.ShapeError, ["partition", "kth 3"]),
    ]
    for fn, specs, kind, parts in cases:
        with pytest.raises(kind):
            ts.program(fn).stage(*specs)
        message = _message(fn, *specs)
        for part in parts + ["test_numpy_sorting.py:"]:
            assert part in message, (part, message)


def test_eager_errors_point_at_the_caller() -> None:
    with pytest.raises(ValueError, match=r"(?s)quantile: q must be in the range \[0, 1\].*test_numpy_sorting.py:"):
        tnp.quantile(np.ones(3), -0.1)
    with pytest.raises(ts.ShapeError, match=r"(?s)sort.*test_numpy_sorting.py:"):
        tnp.sort(np.ones((2, 2)), axis=-3)


def test_review_regressions() -> None:
    inf = np.inf
    # median is the mean of the middle elements (NumPy's), not an interpolation that turns infinities into NaN
    np.testing.assert_array_equal(tnp.median(np.array([1.0, 2.0, inf])), 2.0)
    np.testing.assert_array_equal(tnp.median(np.array([-inf])), -inf)
    np.testing.assert_array_equal(tnp.nanmedian(np.array([[1.0, inf, np.nan], [inf, inf, 3.0]]), axis=1), [inf, inf])
    # clipped below the first element both neighbours are the first one
    x = np.array([0.0, inf])
    np.testing.assert_array_equal(tnp.quantile(x, 0.1, method="interpolated_inverted_cdf"), 0.0)
    np.testing.assert_array_equal(tnp.quantile(x, tnp.asarray(np.array(0.1)), method="interpolated_inverted_cdf"), 0.0)
    # H&F methods 1-3, static and staged q
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 7))
    q = np.array([0.0, 1 / 7, 0.25, 0.5, 3 / 7, 0.9, 1.0])
    for m in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation"):
        want = np.quantile(a, q, axis=1, method=m)
        np.testing.assert_allclose(tnp.quantile(a, q, axis=1, method=m), want, rtol=1e-12)
        off = np.array([0.0, 0.2, 0.3, 0.55, 0.9, 1.0])  # staged q: away from exact n*q integers (rounding)
        np.testing.assert_allclose(tnp.quantile(a, tnp.asarray(off), axis=1, method=m),
                                   np.quantile(a, off, axis=1, method=m), rtol=1e-12)
    np.testing.assert_array_equal(tnp.quantile(np.arange(10, dtype=np.int32), 0.35, method="closest_observation"),
                                  np.quantile(np.arange(10), 0.35, method="closest_observation"))
