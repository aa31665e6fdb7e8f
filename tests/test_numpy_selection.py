"""Value-dependent-size functions (nonzero, unique, bincount, histogram, extract, compress, set operations) and
the selecting ones (select, choose, piecewise, isin, digitize) against NumPy on random inputs, eagerly and staged
with static ``size=``; gradients against central finite differences; vmap against a Python loop; errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def _sized(want: np.ndarray, size: int, fill: Any) -> np.ndarray:
    """NumPy's result truncated or padded to ``size`` along the first axis (what ``size=`` promises)."""
    out = np.full((size, *want.shape[1:]), fill, dtype=want.dtype)
    k = min(size, want.shape[0])
    out[:k] = want[:k]
    return out


def _inputs(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        (rng.random((3, 4, 5)) < 0.3).astype(np.float32) * rng.standard_normal((3, 4, 5)).astype(np.float32),
        rng.integers(-1, 2, size=(7,)).astype(np.int32),
        rng.random((4, 6)) < 0.5,
        np.zeros((2, 3)),  # all zero
        np.zeros((0, 4), np.float32),  # empty
        np.array([np.nan, 0.0, -0.0, 1.0]),  # NaN counts as non-zero, -0.0 as zero
    ]


def test_nonzero_family_matches_numpy_eagerly(rng: np.random.Generator) -> None:
    for x in _inputs(rng):
        want = np.nonzero(x)
        got = tnp.nonzero(x)
        assert len(got) == x.ndim and all(np.asarray(g).dtype == np.int32 for g in got)
        for g, w in zip(got, want):
            _same(g, w.astype(np.int32))
        _same(tnp.flatnonzero(x), np.flatnonzero(x).astype(np.int32))
        _same(tnp.argwhere(x), np.argwhere(x).astype(np.int32))
        for g, w in zip(tnp.where(x != 0), want):
            _same(g, w.astype(np.int32))
        count = len(want[0])
        for size in (0, max(count - 2, 0), count + 3):
            for g, w in zip(tnp.nonzero(x, size=size, fill_value=-1), want):
                _same(g, _sized(w.astype(np.int32), size, -1))
            _same(tnp.argwhere(x, size=size), _sized(np.argwhere(x).astype(np.int32), size, 0))
    _same(tnp.argwhere(np.float32(3.0)), np.zeros((1, 0), np.int32))
    x = np.array([[0, 5], [7, 0]])
    r, c = tnp.nonzero(x, size=3, fill_value=(9, 8))  # one fill value per axis, as JAX
    _same(r, [0, 1, 9])
    _same(c, [1, 0, 8])


def test_nonzero_staged_and_under_vmap(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 3, 5)) * (rng.random((4, 3, 5)) < 0.4)
    v = rng.standard_normal((4, 2, 5))

    def per_example(x: Any, v: Any) -> Any:
        return (tnp.nonzero(x, size=6, fill_value=-1), tnp.flatnonzero(x > 0, size=4),
                tnp.argwhere(x, size=3), tnp.where(x < 0, size=2), tnp.extract(x > 0, x, size=5, fill_value=-7.0),
                tnp.compress(tnp.any(x != 0, axis=0), v, axis=1, size=3))

    got = ts.vmap(per_example)(x, v)
    loop = ts.program(per_example)
    for i in range(4):
        (r, c), flat, arg, (wr, wc), ext, comp = loop(x[i], v[i])
        want_r, want_c = np.nonzero(x[i])
        _same(r, _sized(want_r.astype(np.int32), 6, -1))
        _same(c, _sized(want_c.astype(np.int32), 6, -1))
        _same(flat, _sized(np.flatnonzero(x[i] > 0).astype(np.int32), 4, 0))
        _same(arg, _sized(np.argwhere(x[i]).astype(np.int32), 3, 0))
        _same(wr, _sized(np.nonzero(x[i] < 0)[0].astype(np.int32), 2, 0))
        _same(ext, _sized(np.extract(x[i] > 0, x[i]), 5, -7.0))
        keep = np.compress(np.any(x[i] != 0, axis=0), v[i], axis=1)
        _same(comp, np.moveaxis(_sized(np.moveaxis(keep, 1, 0), 3, 0.0), 0, 1))
        for g, e in zip(_leaves(got), _leaves((r, c, flat, arg, wr, wc, ext, comp))):
            _same(np.asarray(g)[i], np.asarray(e))


def test_sized_results_under_vmap_match_a_loop(rng: np.random.Generator) -> None:
    x = rng.integers(0, 4, size=(3, 7)).astype(np.float32)

    def per_example(x: Any) -> Any:
        return (tnp.unique(x, return_counts=True, return_inverse=True, size=3),
                tnp.bincount(tnp.astype(x, ts.i32), x, length=5), tnp.histogram(x, 3, range=(0.0, 4.0)),
                tnp.histogram(x, 3), tnp.isin(x, x[:2]), tnp.digitize(x, x[:3]), tnp.setdiff1d(x, x[:2], size=4),
                tnp.select([x > 1], [x], 0.0))

    got = ts.vmap(per_example)(x)
    loop = ts.program(per_example)
    for i in range(3):
        for g, e in zip(_leaves(got), _leaves(loop(x[i]))):
            _same(np.asarray(g)[i], np.asarray(e))


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def test_extract_and_compress_match_numpy(rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 5))
    cond = rng.random((3, 5)) < 0.5
    _same(tnp.extract(cond, a), np.extract(cond, a))
    _same(tnp.extract(cond.astype(np.int32), a, size=20), _sized(np.extract(cond, a), 20, 0.0))
    for axis in (0, 1, -1, None):
        n = a.size if axis is None else a.shape[axis]
        c = rng.random(n - 1) < 0.6  # shorter than the axis: the rest count as false
        _same(tnp.compress(c, a, axis=axis), np.compress(c, a, axis=axis))
    _same(tnp.compress([False, False, False], a, axis=0), np.compress([False] * 3, a, axis=0))
    _same(tnp.extract(np.zeros(0, bool), np.zeros(0), size=2, fill_value=1.0), np.ones(2))


def _np_unique_padded(x: np.ndarray, size: int, fill: Any, **kw: Any) -> tuple[np.ndarray, ...]:
    vals, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, **kw)
    return (_sized(vals, size, fill), _sized(index.astype(np.int32), size, 0), inverse.astype(np.int32),
            _sized(counts.astype(np.int32), size, 0))


def test_unique_matches_numpy(rng: np.random.Generator) -> None:
    nan_data = rng.integers(-3, 4, size=(4, 5)).astype(np.float64)
    nan_data[rng.random((4, 5)) < 0.25] = np.nan
    cases = [
        nan_data, nan_data.astype(np.float32), rng.integers(0, 5, size=(11,)).astype(np.int32),
        rng.random(9) < 0.5, np.zeros(0, np.float32), np.array([np.nan, np.nan]), np.array([2.5]),
    ]
    for x in cases:
        # eagerly, size from the data; NaNs collapse (equal_nan=True)
        got = tnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            _same(g, w.astype(np.int32) if w.dtype.kind == "i" else w)
        _same(tnp.unique(x), np.unique(x))
        n = len(want[0])
        for size in (max(n - 1, 0), n + 2):
            fill = np.sort(x.reshape(-1))[0] if x.size else 0
            g = tnp.unique(x, True, True, True, size=size)
            for a, b in zip(g, _np_unique_padded(x, size, fill)):
                _same(a, b)
            _same(tnp.unique(x, size=size, fill_value=1), _sized(np.unique(x), size, 1))
        _same(tnp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))
        _same(tnp.unique_values(x), np.sort(np.unique_values(x)))  # NumPy 2.3+ may not sort these
        everything, reference = tnp.unique_all(x), np.unique_all(x)
        _same(everything.values, reference.values)
        # every NaN is its own value here, and NumPy orders them arbitrarily: check that the inverse rebuilds x
        _same(np.asarray(everything.values)[np.asarray(everything.inverse_indices)], x)
        assert np.asarray(everything.inverse_indices).shape == x.shape
        _same(everything.counts, reference.counts.astype(np.int32))
        _same(everything.indices, np.unique(x, return_index=True, equal_nan=False)[1].astype(np.int32))
        counts = tnp.unique_counts(x)
        _same(counts.counts, np.unique_counts(x).counts.astype(np.int32))
        values, inverse = tnp.unique_inverse(x)
        _same(np.asarray(values)[np.asarray(inverse)], x)

    @ts.program
    def staged(a: Any, b: Any) -> Any:
        return (tnp.unique(a, return_index=True, return_inverse=True, return_counts=True, size=6),
                tnp.unique(b, size=3, fill_value=-1), tnp.unique_counts(b, size=4))

    (vals, index, inverse, counts), small, (cv, cc) = staged(nan_data, cases[2])
    for a, b in zip((vals, index, inverse, counts), _np_unique_padded(nan_data, 6, np.nanmin(nan_data))):
        _same(a, b)
    _same(small, _sized(np.unique(cases[2]), 3, -1))
    _same(cc, _sized(np.unique_counts(cases[2]).counts.astype(np.int32), 4, 0))


def test_sizes_read_from_device_data_keep_its_dtype() -> None:
    """An eager unique sizes its result from the data on the host: an f64 Array is read as f64 (it was rounded to
    f32 there, so values 1e-12 apart counted once and the result lost an element), a u64 one as u64."""
    close = np.array([1.0, 1.0 + 1e-12, 2.0])
    np.testing.assert_array_equal(tnp.unique(ts.asarray(close)), np.unique(close))
    huge = np.array([5, 2**64 - 1, 0, 5], np.uint64)
    np.testing.assert_array_equal(tnp.unique(ts.asarray(huge)), np.unique(huge))
    assert ts.asarray([1.5, 2]).dtype == np.float32  # Python lists still take the defaults


def test_unique_along_an_axis(rng: np.random.Generator) -> None:
    x = rng.integers(0, 2, size=(6, 3)).astype(np.float32)
    x[2] = x[4]
    for axis in (0, 1, -1):
        got = tnp.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        for g, w in zip(got, want):
            _same(g, w.astype(np.int32) if w.dtype.kind == "i" else w)
    g = tnp.unique(x, axis=0, size=8, fill_value=5.0)
    _same(g, _sized(np.unique(x, axis=0), 8, 5.0))


def test_set_operations_match_numpy(rng: np.random.Generator) -> None:
    a = rng.integers(0, 8, size=10).astype(np.float64)
    b = rng.integers(4, 12, size=7).astype(np.float64)
    a[0] = b[0] = np.nan
    for name in ("union1d", "intersect1d", "setdiff1d"):
        want = getattr(np, name)(a, b)
        _same(getattr(tnp, name)(a, b), want)
        _same(getattr(tnp, name)(a, b, size=len(want) + 2, fill_value=-1.0), _sized(want, len(want) + 2, -1.0))

    @ts.program
    def staged(a: Any, b: Any) -> Any:
        return tnp.union1d(a, b, size=4), tnp.intersect1d(a, b, size=3), tnp.setdiff1d(a, b, size=12)

    for got, name, size in zip(staged(a, b), ("union1d", "intersect1d", "setdiff1d"), (4, 3, 12)):
        want = getattr(np, name)(a, b)
        _same(got, _sized(want, size, want[0] if len(want) else 0.0))


def test_isin_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.integers(0, 40, size=(3, 7)).astype(np.float32)
    x[0, 0] = np.nan
    small = rng.integers(0, 40, size=5).astype(np.float32)
    large = np.append(rng.integers(0, 60, size=5000), [np.nan]).astype(np.float32)  # sort + searchsorted path
    for test in (small, large, np.zeros(0, np.float32)):
        _same(tnp.isin(x, test), np.isin(x, test))
        _same(tnp.isin(x, test, invert=True), np.isin(x, test, invert=True))
    i = rng.integers(0, 5, size=(4,)).astype(np.int32)
    _same(tnp.isin(i, [1, 3]), np.isin(i, [1, 3]))
    _same(ts.program(lambda x, t: tnp.isin(x, t))(x, large), np.isin(x, large))


def test_bincount_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.integers(0, 6, size=20).astype(np.int32)
    w = rng.standard_normal(20)
    _same(tnp.bincount(x), np.bincount(x).astype(np.int32))
    _same(tnp.bincount(x, minlength=10), np.bincount(x, minlength=10).astype(np.int32))
    np.testing.assert_allclose(np.asarray(tnp.bincount(x, w)), np.bincount(x, w), rtol=1e-12)
    _same(tnp.bincount(np.zeros(0, np.int32)), np.zeros(0, np.int32))
    _same(tnp.bincount(np.array([True, False, True])), [1, 2])
    _same(tnp.bincount(x.astype(np.uint8), length=3), np.bincount(x)[:3].astype(np.int32))

    @ts.program
    def staged(x: Any, w: Any) -> Any:  # staged: values < 0 or >= length are dropped
        return tnp.bincount(x, length=4), tnp.bincount(x - 2, w, length=8)

    counts, weighted = staged(x, w)
    _same(counts, np.bincount(x)[:4].astype(np.int32))
    keep = x - 2 >= 0
    np.testing.assert_allclose(np.asarray(weighted), np.bincount(x[keep] - 2, w[keep], minlength=8), rtol=1e-12)


def test_histogram_and_digitize_match_numpy(rng: np.random.Generator) -> None:
    a = np.round(rng.standard_normal(50), 1)
    w = rng.random(50)
    edges = np.array([-2.0, -0.5, 0.0, 0.3, 2.0])
    for kw in ({}, {"bins": 7}, {"bins": 4, "range": (-1.0, 1.0)}, {"bins": edges}, {"bins": 3, "weights": w},
               {"bins": 5, "density": True}, {"bins": edges, "density": True, "weights": w}):
        h, e = tnp.histogram(a, **kw)
        wh, we = np.histogram(a, **kw)
        np.testing.assert_allclose(np.asarray(h), wh, rtol=1e-12)
        _same(e, we)
        _same(tnp.histogram_bin_edges(a, kw.get("bins", 10), kw.get("range")),
              np.histogram_bin_edges(a, kw.get("bins", 10), kw.get("range")))
    a32 = a.astype(np.float32)
    h, e = tnp.histogram(a32, 6, range=(-2.0, 2.0))
    wh, we = np.histogram(a32, 6, range=(-2.0, 2.0))
    _same(h, wh.astype(np.int32))
    _same(e, we)
    _same(tnp.histogram(np.zeros(0, np.float32), 3)[0], np.zeros(3, np.int32))
    _same(tnp.histogram(np.full(4, 2.0), 2)[1], np.histogram(np.full(4, 2.0), 2)[1])  # lo == hi: +-0.5
    _same(tnp.histogram(np.arange(10, dtype=np.int32), 3)[0], np.histogram(np.arange(10), 3)[0].astype(np.int32))

    @ts.program
    def staged(a: Any, w: Any, ints: Any, zeros: Any) -> Any:  # range from the staged data's min and max
        return (tnp.histogram(a, 8), tnp.histogram(a, edges, weights=w), tnp.digitize(a, edges),
                [tnp.histogram(ints, b) for b in (7, 9, 10)], tnp.histogram(zeros, 10))

    # edges computed on device may differ from NumPy's in the last bit: data off the grid of edges
    a = rng.standard_normal(50)
    ints = np.array([3, 38, 28, 10, 17, 24, 31], np.float32)  # on NumPy's edges for 7 bins: were off by an ulp
    (h, e), (hw, _), d, on_edges, (hz, ez) = staged(a, w, ints, np.zeros(3, np.float32))
    for (hi, ei), b in zip(on_edges, (7, 9, 10)):
        _same(hi, np.histogram(ints, b)[0].astype(np.int32))
        np.testing.assert_allclose(np.asarray(ei), np.histogram(ints, b)[1], rtol=1e-7)
    _same(hz, np.histogram(np.zeros(3), 10)[0].astype(np.int32))  # all equal: the middle edge exactly 0
    _same(ez, np.histogram(np.zeros(3), 10)[1].astype(np.float32))
    _same(h, np.histogram(a, 8)[0].astype(np.int32))
    np.testing.assert_allclose(np.asarray(e), np.histogram(a, 8)[1], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(hw), np.histogram(a, edges, weights=w)[0], rtol=1e-12)
    _same(d, np.digitize(a, edges).astype(np.int32))

    x = np.concatenate([a, edges, [np.nan, np.inf, -np.inf]])
    for bins in (edges, edges[::-1], np.array([0.0, 0.0, 1.0]), np.array([1.0])):
        for right in (False, True):
            _same(tnp.digitize(x, bins, right=right), np.digitize(x, bins, right=right).astype(np.int32))
            _same(ts.program(lambda x, b: tnp.digitize(x, b, right=right))(x, bins),
                  np.digitize(x, bins, right=right).astype(np.int32))  # staged bins: direction found at run time
    _same(tnp.digitize(np.array([1, 5, 9], np.int32), [0, 5, 10]), [1, 2, 2])
    u8 = np.array([0, 1, 2, 5], np.uint8)  # decreasing unsigned bins: np.diff wrapped around, read as increasing
    _same(tnp.digitize(u8, [4, 2, 0]), np.digitize(u8, np.array([4, 2, 0], np.uint8)).astype(np.int32))
    _same(tnp.digitize(u8, np.array([4, 2, 2, 0], np.uint8), right=True),
          np.digitize(u8, np.array([4, 2, 2, 0], np.uint8), right=True).astype(np.int32))
    _same(tnp.digitize(u8, []), np.zeros(4, np.int32))  # no bins: no float dtype to complain about
    h, e = tnp.histogram(np.arange(5, dtype=np.int32), np.array([0.0, 2.5, 4.0]))  # ints take the edges' dtype
    _same(h, [3, 2])
    assert np.asarray(e).dtype == np.float64


def test_select_choose_piecewise_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    conds = [x > 0.5, x < -0.5, x > 0]
    choices = [x * 2, x**2, np.float64(3.0) + 0 * x]
    _same(tnp.select(conds, choices), np.select(conds, choices))
    _same(tnp.select(conds, choices, default=-1.0), np.select(conds, choices, default=-1.0))
    _same(tnp.select([x[0] > 0], [x], default=x[1]), np.select([x[0] > 0], [x], default=x[1]))
    _same(tnp.select([True], [2.0], default=1.0), np.select([True], [2.0], default=1.0))
    idx = rng.integers(0, 3, size=(3, 4)).astype(np.int32)
    choice_arrays = [x, -x, 10 * x]
    _same(tnp.choose(idx, choice_arrays), np.choose(idx, choice_arrays))
    _same(tnp.choose(idx + 2, choice_arrays, mode="wrap"), np.choose(idx + 2, choice_arrays, mode="wrap"))
    _same(tnp.choose(idx - 1, choice_arrays, mode="clip"), np.choose(idx - 1, choice_arrays, mode="clip"))
    y = np.linspace(-2, 2, 9)
    fs = [lambda v: -v, lambda v, k: v * k, 7.0]
    want = np.piecewise(y, [y < 0, y > 1], [lambda v: -v, lambda v: v * 3, 7.0])
    _same(tnp.piecewise(y, [y < 0, y > 1], [fs[0], lambda v: v * 3, 7.0]), want)
    _same(ts.program(lambda y: tnp.piecewise(y, [y < 0, y > 1], [fs[0], lambda v: v * 3, 7.0]))(y), want)
    _same(tnp.piecewise(y, y > 0, [lambda v: v + 1]), np.piecewise(y, y > 0, [lambda v: v + 1]))


EPS = 1e-6


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    idx = rng.integers(0, 5, size=12).astype(np.int32)
    x = rng.standard_normal((3, 4))
    w = rng.standard_normal(12)
    t = rng.standard_normal(12)
    tx = rng.standard_normal((3, 4))
    coef = rng.standard_normal(5)
    fs_w = [
        lambda w: tnp.sum(tnp.bincount(idx, w, length=5) * coef),
        lambda w: tnp.sum(tnp.histogram(idx.astype(np.float64), 4, range=(0.0, 5.0), weights=w)[0] ** 2),
        lambda w: tnp.sum(tnp.extract(idx > 2, w, size=4) ** 2) + tnp.sum(tnp.unique(w, size=5) * coef),
    ]
    fs_x = [
        lambda c: tnp.sum(tnp.select([x > 0.5, x < 0], [c * 2, c**2], default=c) * tx),
        lambda c: tnp.sum(tnp.compress(np.array([True, False, True, True]), c, axis=1, size=2) ** 3),
    ]

    @ts.program
    def run(w: Any, x: Any) -> Any:
        return ([(f(w + EPS * t), f(w - EPS * t), ts.grad(f)(w)) for f in fs_w],
                [(f(x + EPS * tx), f(x - EPS * tx), ts.grad(f)(x)) for f in fs_x])

    outs = run(w, x)
    for (plus, minus, grad), direction in [(o, t) for o in outs[0]] + [(o, tx) for o in outs[1]]:
        expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
        assert float(np.sum(np.asarray(grad) * direction)) == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_errors_name_op_and_line() -> None:
    v, i = ts.Spec((6,), f32), ts.Spec((6,), ts.i32)
    cases = [
        (lambda v: tnp.nonzero(v), (v,), ts.ShapeError, ["nonzero", "size="]),
        (lambda v: tnp.where(v > 0), (v,), ts.ShapeError, ["where", "size="]),
        (lambda v: tnp.argwhere(v), (v,), ts.ShapeError, ["argwhere", "size="]),
        (lambda v: tnp.unique(v), (v,), ts.ShapeError, ["unique", "size="]),
        (lambda v: tnp.extract(v > 0, v), (v,), ts.ShapeError, ["extract", "size="]),
        (lambda i: tnp.bincount(i), (i,), ts.ShapeError, ["bincount", "length="]),
        (lambda v: tnp.nonzero(v, size=-1), (v,), ts.ShapeError, ["nonzero", "negative"]),
        (lambda v: tnp.bincount(v, length=3), (v,), ts.DTypeError, ["bincount", "integers", "f32[6]"]),
        (lambda v: tnp.nonzero(v[0], size=2), (v,), ts.ShapeError, ["nonzero", "0-d"]),
        (lambda v: tnp.compress(v > 0, v[:3], size=1), (v,), ts.ShapeError, ["compress", "longer"]),
        (lambda v: tnp.select([v], [v]), (v,), ts.DTypeError, ["select", "bool", "f32[6]"]),
        (lambda v: tnp.where(v > 0, v), (v,), TypeError, ["where", "both"]),
    ]
    check_staging_errors(cases, "test_numpy_selection.py")
    with pytest.raises(ValueError, match=r"(?s)bincount.*negative.*test_numpy_selection.py:"):
        tnp.bincount(np.array([1, -2]))
    with pytest.raises(ts.DTypeError, match=r"(?s)bincount.*integers.*test_numpy_selection.py:"):
        tnp.bincount(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="choose"):
        tnp.choose(np.array([0, 3]), [np.zeros(2), np.ones(2)])
    with pytest.raises(ValueError, match="monotonically"):
        tnp.digitize(np.ones(3), [0.0, 2.0, 1.0])


def test_staged_result_types() -> None:
    @ts.program
    def f(x: ts.Tensor[f32, Any]) -> Any:
        return tnp.nonzero(x, size=3), tnp.unique(x, size=4), tnp.bincount(tnp.astype(x, ts.i32), length=7)

    (r,), u, b = f(np.arange(5, dtype=np.float32))
    assert np.asarray(r).dtype == np.int32 and np.asarray(r).shape == (3,)
    assert np.asarray(u).dtype == np.float32 and np.asarray(u).shape == (4,)
    assert np.asarray(b).dtype == np.int32 and np.asarray(b).shape == (7,)
