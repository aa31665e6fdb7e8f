"""Polynomial functions (polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, poly) and the
later selection functions (setxor1d, histogram2d, histogramdd) against NumPy float64 on seeded random inputs,
eagerly and staged; gradients against central finite differences; vmap against a Python loop; errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

LENGTHS = range(7)  # coefficient arrays of degrees 0..5, and the empty one
EPS = 1e-6


def _close(got: Any, want: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------- polynomials


def test_polynomial_functions_match_numpy_staged(rng: np.random.Generator) -> None:
    ps = [rng.standard_normal(n) for n in LENGTHS]
    qs = [rng.standard_normal(n) for n in LENGTHS]
    x = np.concatenate([rng.uniform(-3, 3, 9), [0.0, -0.0, 1.0]])
    long_p = rng.uniform(-1, 1, 40)  # past the unrolled length: one staged scan
    k = rng.standard_normal(3)

    @ts.program
    def run(ps: Any, qs: Any, x: Any, long_p: Any, k: Any) -> Any:
        return {
            "val": [tnp.polyval(p, x) for p in ps],
            "val_scalar": [tnp.polyval(p, 0.5) for p in ps],
            "val_long": tnp.polyval(long_p, x),
            "add": [[tnp.polyadd(p, q) for q in qs[::2]] for p in ps],
            "sub": [[tnp.polysub(p, q) for q in qs[1::2]] for p in ps],
            "mul": [[tnp.polymul(p, q) for q in qs[::2]] for p in ps],
            "div": [tnp.polydiv(p, q) for p, q in zip(ps[1:], qs[1:4] * 2)],
            "der": [[tnp.polyder(p, m) for m in range(4)] for p in ps],
            "int": [[tnp.polyint(p, m) for m in range(4)] for p in ps],
            "int_k": [(tnp.polyint(p, 3, k), tnp.polyint(p, 2, k[0]), tnp.polyint(p, 1, k)) for p in ps],
            "poly": [tnp.poly(p) for p in ps],
            "poly_long": tnp.poly(long_p),
        }

    got = run(ps, qs, x, long_p, k)
    for p, g in zip(ps, got["val"]):
        _close(g, np.polyval(p, x))
    for p, g in zip(ps, got["val_scalar"]):
        _close(g, np.polyval(p, 0.5))
    _close(got["val_long"], np.polyval(long_p, x), rtol=1e-12, atol=1e-12 * np.abs(np.polyval(np.abs(long_p), 3)))
    for i, p in enumerate(ps):
        for j, q in enumerate(qs[::2]):
            _close(got["add"][i][j], np.polyadd(p, q))
            want = np.convolve(p if len(p) else [0.0], q if len(q) else [0.0])  # untrimmed, as JAX
            _close(got["mul"][i][j], want)
        for j, q in enumerate(qs[1::2]):
            _close(got["sub"][i][j], np.polysub(p, q))
        for m in range(4):
            _close(got["der"][i][m], np.polyder(p, m))
            _close(got["int"][i][m], np.polyint(p, m))
        i3, i2, i1 = got["int_k"][i]
        _close(i3, np.polyint(p, 3, k))
        _close(i2, np.polyint(p, 2, k[0]))
        _close(i1, np.polyint(p, 1, k))
        _close(got["poly"][i], np.poly(p) if len(p) else np.array(1.0))
    for (q, r), p, v in zip(got["div"], ps[1:], qs[1:4] * 2):
        want_q, want_r = np.polydiv(p, v)
        _close(q, want_q, rtol=1e-9, atol=1e-9)
        r = np.asarray(r)
        _close(r[len(r) - len(want_r):], want_r, rtol=1e-9, atol=1e-9)  # NumPy trims leading zeros
        _close(r[:len(r) - len(want_r)], np.zeros(len(r) - len(want_r)), atol=1e-9)
    _close(got["poly_long"], np.poly(long_p), rtol=1e-9, atol=1e-12)


def test_polynomial_functions_eagerly_and_special_values(rng: np.random.Generator) -> None:
    p = rng.standard_normal(4)
    x = rng.standard_normal((2, 3))
    _close(tnp.polyval(p, x), np.polyval(p, x))
    _close(tnp.polyval(np.zeros(0), x), np.polyval(np.zeros(0), x))
    _close(tnp.polyval([1.0, 2.0], 3.0), 5.0)
    # Horner's rule from 0, as NumPy: an infinite x gives NaN, a NaN coefficient spreads
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    with np.errstate(all="ignore"):
        _close(tnp.polyval(np.array([2.0, -1.0]), special), np.polyval(np.array([2.0, -1.0]), special))
    _close(tnp.polyval(np.array([np.nan, 1.0]), np.array([0.0])), [np.nan])
    ints = np.array([3, -1, 2], np.int32)  # integer coefficients stay integers, as NumPy
    _same(tnp.polyval(ints, np.array([2, -3], np.int32)), np.polyval(ints, np.array([2, -3])).astype(np.int32))
    _same(tnp.polyder(ints, 1), np.polyder(ints).astype(np.int32))
    _same(tnp.polymul(ints, ints), np.polymul(ints, ints).astype(np.int32))
    _same(tnp.polyadd(ints, np.int32(5)), np.polyadd(ints, 5).astype(np.int32))
    p32 = p.astype(np.float32)
    x32 = x.astype(np.float32)
    _same(tnp.polyval([1.0, 2.0], x32), np.polyval(np.float32([1.0, 2.0]), x32))  # lists of numbers take the array's dtype
    _same(tnp.polyadd(p32, [1.0]), np.polyadd(p32, np.float32(1.0)))
    assert np.asarray(tnp.polyint(p32, 2)).dtype == np.float32  # NumPy: float64 (divided by int64 powers)
    _close(tnp.polyint(p32, 2), np.polyint(p32, 2), rtol=1e-6, atol=0)
    assert np.asarray(tnp.poly(p32)).dtype == np.float32
    # NumPy's trimming, on request (eager calls)
    a, b = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0])
    _close(tnp.polymul(a, b, trim_leading_zeros=True), np.polymul(a, b))
    _close(tnp.polymul(a, b), np.convolve(a, b))
    _close(tnp.polymul(np.zeros(0), b), np.convolve([0.0], b))
    u, v = np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0])  # exact division: NumPy's remainder is [0]
    q, r = tnp.polydiv(u, v, trim_leading_zeros=True)
    _close(q, np.polydiv(u, v)[0])
    _close(r, np.polydiv(u, v)[1])
    _close(tnp.poly(np.float64(2.0)), [1.0, -2.0])  # a 0-d zero is one zero
    _close(tnp.polyint(p, 0, k=[1.0, 2.0]), p)
    _close(tnp.polyder(p, 7), np.polyder(p, 7))
    _close(tnp.polyint(np.zeros(0), 1), np.polyint(np.zeros(0), 1))


def test_polyfit_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.uniform(-2, 2, 12)
    y = rng.standard_normal(12)
    y2 = rng.standard_normal((12, 3))
    w = rng.uniform(0.5, 2, 12)

    @ts.program
    def fits(x: Any, y: Any, y2: Any, w: Any) -> Any:
        return ([tnp.polyfit(x, y, deg) for deg in (0, 1, 4, 5)], tnp.polyfit(x, y2, 3, w=w, cov=True),
                tnp.polyfit(x, y, 2, rcond=1e-3, full=True), tnp.polyfit(x, y, 3, cov=True),
                tnp.polyfit(x, y, 1, w=w, cov="unscaled"))

    plain, weighted, full, cov, unscaled = fits(x, y, y2, w)
    for deg, c in zip((0, 1, 4, 5), plain):
        _close(c, np.polyfit(x, y, deg), rtol=1e-9, atol=1e-12)
    for got, want in [(weighted, np.polyfit(x, y2, 3, w=w, cov=True)), (full, np.polyfit(x, y, 2, 1e-3, full=True)),
                      (cov, np.polyfit(x, y, 3, cov=True)), (unscaled, np.polyfit(x, y, 1, w=w, cov="unscaled"))]:
        assert len(got) == len(want)
        for g, wv in zip(got, want):
            _close(g, wv, rtol=1e-8, atol=1e-12)
    # eager, f32, and NumPy's warning for a rank-deficient fit
    _close(tnp.polyfit(x.astype(np.float32), y.astype(np.float32), 2), np.polyfit(x, y, 2), rtol=1e-4, atol=1e-5)
    with pytest.warns(np.exceptions.RankWarning):
        tnp.polyfit(np.ones(3), np.arange(3.0), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _close(tnp.polyfit(x[:3], y[:3], 2), np.polyfit(x[:3], y[:3], 2), rtol=1e-9)  # interpolation: no warning


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    p, tp = rng.standard_normal(5), rng.standard_normal(5)
    x, tx = rng.uniform(-2, 2, 6), rng.standard_normal(6)
    px, y, ty = rng.uniform(-2, 2, 9), rng.standard_normal(9), rng.standard_normal(9)
    long_p, tlong = rng.uniform(-1, 1, 40), rng.standard_normal(40)
    weights = rng.standard_normal(6)
    fs_p = [
        lambda p: tnp.sum(tnp.polyval(p, x) * weights),
        lambda p: tnp.sum(tnp.polymul(p, p[:3]) ** 2) + tnp.sum(tnp.polyint(p, 2, 0.5) ** 2),
        lambda p: tnp.sum(tnp.polyder(p, 2) ** 2) + tnp.sum(tnp.poly(p) ** 2) + tnp.sum(tnp.polydiv(p, p[:2])[0]),
    ]
    f_x = lambda x: tnp.sum(tnp.polyval(p, x) * weights)  # noqa: E731
    f_y = lambda y: tnp.sum(tnp.polyfit(px, y, 3) ** 2)  # noqa: E731
    f_long = lambda q: tnp.sum(tnp.polyval(q, x) * weights)  # noqa: E731  (the scan)

    @ts.program
    def run(p: Any, x: Any, y: Any, q: Any) -> Any:
        def around(f: Any, v: Any, t: Any) -> Any:
            return f(v + EPS * t), f(v - EPS * t), ts.grad(f)(v)

        return [around(f, p, tp) for f in fs_p] + [around(f_x, x, tx), around(f_y, y, ty), around(f_long, q, tlong)]

    directions = [tp] * len(fs_p) + [tx, ty, tlong]
    for (plus, minus, grad), direction in zip(run(p, x, y, long_p), directions):
        expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
        assert float(np.sum(np.asarray(grad) * direction)) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    # the gradient of polyval with respect to p is the powers of x
    g = ts.grad(lambda p: tnp.polyval(p, 1.5))(p)
    _close(g, 1.5 ** np.arange(4, -1, -1))


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    ps = rng.standard_normal((3, 4))
    xs = rng.standard_normal((3, 5))
    ys = rng.standard_normal((3, 5))
    data = rng.standard_normal((3, 20))

    def per_example(p: Any, x: Any, y: Any, d: Any) -> Any:
        return (tnp.polyval(p, x), tnp.polymul(p, p[:2]), tnp.polyder(p), tnp.polyint(p), tnp.poly(p),
                tnp.polyfit(x, y, 2), tnp.setxor1d(tnp.round(d[:8]), tnp.round(d[8:12]), size=9, fill_value=-100.0),
                tnp.histogram2d(d[:10], d[10:], bins=3), tnp.histogramdd(tnp.reshape(d, (10, 2)), bins=(2, 3))[0])

    batched = ts.vmap(per_example)(ps, xs, ys, data)
    loop = ts.program(per_example)
    for i in range(3):
        want = loop(ps[i], xs[i], ys[i], data[i])
        for g, w in zip(ts.pytree.leaves(batched), ts.pytree.leaves(want)):
            _close(np.asarray(g)[i], w, rtol=1e-10, atol=1e-12)
        # and against NumPy
        _close(want[0], np.polyval(ps[i], xs[i]))
        _close(want[5], np.polyfit(xs[i], ys[i], 2), rtol=1e-9, atol=1e-12)
        d = data[i]
        xor = np.setxor1d(np.round(d[:8]), np.round(d[8:12]))
        _close(want[6], np.concatenate([xor, np.full(9 - xor.size, -100.0)]))
        for g, w in zip(want[7], np.histogram2d(d[:10], d[10:], bins=3)):
            _close(g, w)


def test_errors_name_op_and_line() -> None:
    v, m, i = ts.Spec((6,), f32), ts.Spec((3, 3), f32), ts.Spec((6,), ts.i32)
    cases = [
        (lambda m: tnp.polyval(m, m[0]), (m,), ts.ShapeError, ["polyval", "1-D", "f32[3, 3]"]),
        (lambda m: tnp.polyder(m), (m,), ts.ShapeError, ["polyder", "1-D"]),
        (lambda m: tnp.polyint(m), (m,), ts.ShapeError, ["polyint", "1-D"]),
        (lambda m: tnp.polyadd(m, m[0]), (m,), ts.ShapeError, ["polyadd", "1-D"]),
        (lambda m: tnp.polymul(m[0], m), (m,), ts.ShapeError, ["polymul", "1-D"]),
        (lambda v: tnp.polyder(v, -1), (v,), ValueError, ["polyder", "non-negative", "m=-1"]),
        (lambda v: tnp.polyint(v, -2), (v,), ValueError, ["polyint", "non-negative", "m=-2"]),
        (lambda v: tnp.polyder(v, 1.5), (v,), TypeError, ["polyder", "int"]),
        (lambda v: tnp.polyfit(v, v, -1), (v,), ValueError, ["polyfit", "deg", ">= 0"]),
        (lambda v: tnp.polyfit(v, v[:5], 2), (v,), ts.ShapeError, ["polyfit", "length"]),
        (lambda v: tnp.polyfit(v, v, 2, w=v[:4]), (v,), ts.ShapeError, ["polyfit", "w"]),
        (lambda v: tnp.polyfit(v, v, 2.0), (v,), TypeError, ["polyfit", "deg"]),
        (lambda v: tnp.polyfit(v[:2], v[:2], 2, cov=True), (v,), ValueError, ["polyfit", "exceed order"]),
        (lambda i: tnp.polyint(i), (i,), ts.DTypeError, ["polyint", "floating-point", "i32[6]"]),
        (lambda i: tnp.polyfit(i, i, 1), (i,), ts.DTypeError, ["polyfit", "floating-point"]),
        (lambda v: tnp.polyval(v, v.astype(ts.f64)), (v,), ts.DTypeError, ["polyval", "dtypes"]),
        (lambda v: tnp.polymul(v, v, trim_leading_zeros=True), (v,), ts.ShapeError, ["polymul", "trim_leading"]),
        (lambda v: tnp.polyint(v, 3, k=v[:2]), (v,), ValueError, ["polyint", "k must"]),
        (lambda m: tnp.poly(m), (m,), NotImplementedError, ["poly", "eigenvalues", "eigvalsh"]),
        (lambda m: tnp.poly(m[:2]), (m,), ts.ShapeError, ["poly", "1-D"]),
        (lambda v: tnp.roots(v), (v,), ts.ShapeError, ["roots", "strip_zeros=False"]),
        (lambda i: tnp.roots(i, strip_zeros=False), (i,), ts.DTypeError, ["roots", "i32[6]", "astype"]),
        (lambda m: tnp.roots(m, strip_zeros=False), (m,), ts.ShapeError, ["roots", "1-D"]),
        (lambda v: tnp.setxor1d(v, v), (v,), ts.ShapeError, ["setxor1d", "size="]),
        (lambda v: tnp.histogram2d(v, v, bins=2.5), (v,), TypeError, ["histogram2d", "integer"]),
        (lambda v: tnp.histogramdd(tnp.reshape(v, (3, 2)), bins=(2, 2.0)), (v,), TypeError, ["histogramdd",
                                                                                              "bins[1]"]),
        (lambda v: tnp.histogram2d(v, v[:5]), (v,), ts.ShapeError, ["histogram2d", "one length"]),
        (lambda v: tnp.histogramdd(tnp.reshape(v, (3, 2)), bins=(2, 2, 2)), (v,), ValueError, ["histogramdd",
                                                                                                 "3 entries"]),
        (lambda v: tnp.histogram2d(v, v, weights=v[:3]), (v,), ts.ShapeError, ["histogram2d", "weights"]),
    ]
    check_staging_errors(cases, "test_numpy_polynomials.py")
    with pytest.raises(TypeError, match="roots: strip_zeros must be a bool"):
        tnp.roots(np.array([1.0, -3.0, 2.0]), strip_zeros=None)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=r"(?s)histogram2d.*bins must be a positive integer.*test_numpy_polynomials"):
        tnp.histogram2d(np.ones(3), np.ones(3), bins=0)
    with pytest.raises(ValueError, match="polyfit: deg must be >= 0"):
        tnp.polyfit(np.ones(3), np.ones(3), -1)


# ---------------------------------------------------------------------------- setxor1d, histogram2d, histogramdd


def test_setxor1d_matches_numpy(rng: np.random.Generator) -> None:
    cases = [
        (rng.integers(0, 8, 9).astype(np.float64), rng.integers(0, 8, (2, 3)).astype(np.float64)),
        (np.array([1.0, np.nan, 2.0, np.nan]), np.array([np.nan, 3.0, 2.0])),  # a NaN in both: twice
        (np.array([1.0, np.nan]), np.array([3.0])),
        (np.zeros(0), np.array([2.0, 2.0, 1.0])),
        (np.zeros(0), np.zeros(0)),
        (rng.integers(-3, 3, 6).astype(np.int32), rng.integers(-3, 3, 5).astype(np.int32)),
        (np.array([1.0, 2.0]), np.array([2.0, 1.0])),  # nothing left
    ]
    sizes = [np.setxor1d(a, b).size for a, b in cases]

    @ts.program
    def staged(cases: Any) -> Any:
        return [[tnp.setxor1d(a, b, size=size, fill_value=-1) for size in (0, 2, n + 2)]
                for (a, b), n in zip(cases, sizes)] + [tnp.setxor1d(*cases[0], size=sizes[0] + 2)]

    *results, default_fill = staged(cases)
    for (a, b), n, outs in zip(cases, sizes, results):
        want = np.setxor1d(a, b)
        for size, got in zip((0, 2, n + 2), outs):
            out = np.full(size, -1, dtype=want.dtype)
            out[:min(size, n)] = want[:size]
            _same(got, out)
    for a, b in cases[1:3] + cases[4:5]:  # eagerly, the size read from the data
        _same(tnp.setxor1d(a, b), np.setxor1d(a, b))
    want = np.setxor1d(*cases[0])
    _same(np.asarray(default_fill)[:want.size], want)
    assert (np.asarray(default_fill)[want.size:] == want.min()).all()  # padded with the smallest result, as unique


def test_histogram2d_and_histogramdd_match_numpy(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal(60), rng.standard_normal(60)
    w = rng.random(60)
    sample = rng.standard_normal((50, 3))
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    kws: list[dict[str, Any]] = [
        {}, {"bins": 4}, {"bins": [3, 5]}, {"bins": [3, edges]}, {"bins": edges},
        {"bins": 3, "range": [[-1, 1], [-2, 2]]}, {"bins": 3, "range": [None, (-1, 1)]},
        {"bins": 3, "density": True}, {"bins": 3, "weights": w}, {"bins": [2, 4], "weights": w, "density": True},
    ]
    for kw in kws:
        got, want = tnp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)
        counts = want[0] if "weights" in kw or kw.get("density") else want[0].astype(np.int32)
        _close(got[0], counts, rtol=1e-12)
        _close(got[1], want[1], rtol=1e-15)
        _close(got[2], want[2], rtol=1e-15)
    hist, dd_edges = tnp.histogramdd(sample, bins=(2, 3, 4))
    want_h, want_e = np.histogramdd(sample, bins=(2, 3, 4))
    _same(hist, want_h.astype(np.int32))
    for g, e in zip(dd_edges, want_e):
        _close(g, e, rtol=1e-15)
    _same(tnp.histogramdd(sample[:, 0], bins=5)[0], np.histogramdd(sample[:, 0], bins=5)[0].astype(np.int32))
    _same(tnp.histogramdd(np.zeros((3, 2)), bins=2)[0], np.histogramdd(np.zeros((3, 2)), bins=2)[0].astype(np.int32))
    _same(tnp.histogramdd([x, y], bins=3)[0], np.histogramdd([x, y], bins=3)[0].astype(np.int32))  # D arrays
    ints = rng.integers(0, 5, (20, 2)).astype(np.int32)
    _close(tnp.histogramdd(ints, bins=3)[0], np.histogramdd(ints, bins=3)[0])

    @ts.program
    def staged(x: Any, y: Any, w: Any, sample: Any) -> Any:
        return (tnp.histogram2d(x, y, bins=[3, 4]), tnp.histogram2d(x, y, bins=3, weights=w, density=True),
                tnp.histogramdd(sample, bins=(2, edges, 4)))

    plain, dense, (hist, dd_edges) = staged(x, y, w, sample)
    for g, want in zip(plain, np.histogram2d(x, y, bins=[3, 4])):
        _close(g, want, rtol=1e-14)
    for g, want in zip(dense, np.histogram2d(x, y, bins=3, weights=w, density=True)):
        _close(g, want, rtol=1e-12)
    want_h, want_e = np.histogramdd(sample, bins=(2, edges, 4))
    _close(hist, want_h)
    for g, e in zip(dd_edges, want_e):
        _close(g, e, rtol=1e-14)
    # gradients with respect to the weights
    t = rng.standard_normal(60)
    coef = rng.standard_normal((3, 3))
    f = lambda w: tnp.sum(tnp.histogram2d(x, y, bins=3, range=[[-2, 2], [-2, 2]], weights=w)[0] * coef)  # noqa
    plus, minus, grad = ts.program(lambda w: (f(w + EPS * t), f(w - EPS * t), ts.grad(f)(w)))(w)
    expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
    assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8)
