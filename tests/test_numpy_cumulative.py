"""Cumulative sums/products/extrema and differences against NumPy (ints exactly, floats against float64 with a
tolerance that grows with the length); gradients against finite differences; vmap against a loop; errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Time(Dim): ...


SIZES = [0, 1, 2, 3, 7, 8, 9, 100, 1000]


def test_scans_match_numpy_for_every_length(rng: np.random.Generator) -> None:
    floats = [rng.standard_normal((2, n)).astype(np.float32) for n in SIZES]
    ints = [rng.integers(-100, 100, (n, 2)).astype(np.int32) for n in SIZES]
    factors = [(1 + 0.01 * rng.standard_normal(n)) for n in SIZES]  # products that stay O(1)

    @ts.program
    def run(floats: Any, ints: Any, factors: Any) -> Any:
        # Every length for the sums; the other scans share the code path, so the short lengths cover them.
        short = range(len(SIZES) - 2)
        return ([tnp.cumsum(x, axis=1) for x in floats], [tnp.cumsum(i, axis=0) for i in ints],
                [tnp.cumprod(factors[k]) for k in short], [tnp.cummax(ints[k], axis=0) for k in short],
                [tnp.cummin(floats[k], axis=-1) for k in short], [tnp.cumprod(ints[k] % 3 - 1, axis=0) for k in short])

    sums, isums, prods, imax, fmin, iprods = run(floats, ints, factors)
    for k, n in enumerate(SIZES):
        x = floats[k].astype(np.float64)
        scale = np.abs(x).sum(axis=1, keepdims=True) + 1
        # f32 pairwise sums: error ~ eps * log2(n) * sum|x|; allow a generous constant.
        tol = 4 * np.finfo(np.float32).eps * (math.log2(max(n, 2)) + 1)
        got = np.asarray(sums[k])
        assert got.shape == (2, n) and got.dtype == np.float32
        assert np.all(np.abs(got - np.cumsum(x, axis=1)) <= tol * scale), n
        np.testing.assert_array_equal(np.asarray(isums[k]), np.cumsum(ints[k], axis=0))
        assert np.asarray(isums[k]).dtype == np.int32
        if k >= len(prods):
            continue
        np.testing.assert_allclose(np.asarray(prods[k]), np.cumprod(factors[k]), rtol=1e-13 * max(n, 1))
        np.testing.assert_array_equal(np.asarray(imax[k]), np.maximum.accumulate(ints[k], axis=0))
        np.testing.assert_array_equal(np.asarray(fmin[k]), np.minimum.accumulate(floats[k], axis=-1))
        np.testing.assert_array_equal(np.asarray(iprods[k]), np.cumprod(ints[k] % 3 - 1, axis=0))


def test_axes_dtypes_and_nan_variants(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4, 5))
    x[0, 1, 2] = x[2, 3, 0] = np.nan
    small = {
        "bool": (rng.random((4, 6)) < 0.5, np.int32),
        "i8": (rng.integers(-128, 128, (4, 6)).astype(np.int8), np.int32),
        "i16": (rng.integers(-3000, 3000, (4, 6)).astype(np.int16), np.int32),
        "u8": (rng.integers(0, 256, (4, 6)).astype(np.uint8), np.uint32),
    }

    @ts.program
    def run(x: Any, small: Any) -> Any:
        return (
            [tnp.cumsum(x, axis=a) for a in (0, 1, -1, None)],
            tnp.cumprod(x, axis=-2), tnp.nancumsum(x, axis=2), tnp.nancumprod(x), tnp.cummax(x, axis=1),
            tnp.cumsum(x, axis=0, dtype=ts.f32),
            {k: (tnp.cumsum(v, axis=1), tnp.cumprod(v, axis=0)) for k, v in small.items()},
        )

    sums, prod, nansum, nanprod, cmax, as_f32, narrow = run(x, {k: v for k, (v, _) in small.items()})
    for a, got in zip((0, 1, -1, None), sums):
        np.testing.assert_allclose(np.asarray(got), np.cumsum(x, axis=a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(prod), np.cumprod(x, axis=-2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nansum), np.nancumsum(x, axis=2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nanprod), np.nancumprod(x), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(cmax), np.maximum.accumulate(x, axis=1))  # NaNs propagate
    assert np.asarray(as_f32).dtype == np.float32
    np.testing.assert_allclose(np.asarray(as_f32), np.cumsum(x, axis=0), rtol=1e-5, atol=1e-5)
    for k, (v, acc) in small.items():
        total, product = (np.asarray(t) for t in narrow[k])
        assert total.dtype == product.dtype == acc, k
        np.testing.assert_array_equal(total, np.cumsum(v.astype(acc), axis=1, dtype=acc))
        np.testing.assert_array_equal(product, np.cumprod(v.astype(acc), axis=0, dtype=acc))


def test_cumulative_sum_and_prod_numpy2(rng: np.random.Generator) -> None:
    v = rng.standard_normal(6)
    m = rng.integers(-3, 4, (3, 4)).astype(np.int32)
    names = ("cumulative_sum", "cumulative_prod")

    @ts.program
    def run(v: Any, m: Any) -> Any:
        return {n: (getattr(tnp, n)(v), getattr(tnp, n)(v, include_initial=True),
                    [getattr(tnp, n)(m, axis=a, include_initial=True) for a in (0, 1, -1)]) for n in names}

    got = run(v, m)
    for n in names:
        theirs = getattr(np, n)
        plain, initial, per_axis = got[n]
        np.testing.assert_allclose(np.asarray(plain), theirs(v), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(initial), theirs(v, include_initial=True), rtol=1e-12)
        for a, g in zip((0, 1, -1), per_axis):
            want = theirs(m, axis=a, include_initial=True)
            assert np.asarray(g).shape == want.shape
            np.testing.assert_array_equal(np.asarray(g), want)
    assert np.asarray(tnp.cumulative_sum(v, dtype=ts.f32)).dtype == np.float32


def test_diff_and_ediff1d_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 6))
    b = rng.random((3, 5)) < 0.5
    v = rng.standard_normal(7)
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "x"), ({"n": 2}, "x"), ({"n": 0}, "x"), ({"axis": 0}, "x"), ({"n": 3, "axis": -2}, "x"), ({"n": 7}, "x"),
        ({"prepend": 0.5}, "x"), ({"append": x[:, :2], "n": 2}, "x"),
        ({"prepend": x[:1], "append": 1.0, "axis": 0}, "x"), ({}, "b"), ({"axis": 0}, "b"),
    ]
    ends: list[dict[str, Any]] = [
        {}, {"to_begin": -1.0}, {"to_end": np.array([1.0, 2.0]), "to_begin": np.array([[3.0]])},
    ]

    @ts.program
    def run(x: Any, b: Any, v: Any) -> Any:
        operands = {"x": x, "b": b}
        return ([tnp.diff(operands[a], **kwargs) for kwargs, a in cases],
                [tnp.ediff1d(v, **kwargs) for kwargs in ends], tnp.ediff1d(x))

    diffs, ediffs, flat = run(x, b, v)
    for (kwargs, a), got in zip(cases, diffs):
        want = np.diff({"x": x, "b": b}[a], **kwargs)
        assert np.asarray(got).shape == want.shape and np.asarray(got).dtype == want.dtype, kwargs
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    for kwargs, got in zip(ends, ediffs):
        np.testing.assert_allclose(np.asarray(got), np.ediff1d(v, **kwargs), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(flat), np.ediff1d(x), rtol=1e-12)


def test_names_are_kept_and_the_graph_stays_logarithmic() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, Time]) -> Any:
        return tnp.cumsum(x, axis=Time), tnp.cumprod(x, axis=0), tnp.cumsum(x), tnp.diff(x, axis=Time)

    outs = f.stage(Batch=2, Time=5).out_avals
    assert [o.dims for o in outs[:2]] == [("Batch", "Time"), ("Batch", "Time")]
    assert outs[2].shape == (10,) and outs[3].shape == (2, 4)

    def equations(n: int) -> int:
        return len(ts.program(lambda x: tnp.cumsum(x)).stage(ts.Spec((n,), f32)).graph.eqns)

    small, large = equations(1024), equations(1024 * 1024)
    assert large <= small * 2.2  # 20 halvings vs 10: linear in log2(n)
    assert large < 400


EPS = 1e-6


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 9))
    x[1, 4] = 0.0  # cumprod through an exact zero must stay finite and right
    x[2, 0] = 0.0
    t = rng.standard_normal((3, 9))
    w = rng.standard_normal((3, 9))
    fs = [
        lambda x: tnp.sum(tnp.cumsum(x, axis=1) * w),
        lambda x: tnp.sum(tnp.cumsum(x) ** 2),
        lambda x: tnp.sum(tnp.cumprod(x, axis=1) * w),
        lambda x: tnp.sum(tnp.cumprod(x, axis=0) * w),
        lambda x: tnp.sum(tnp.cumulative_prod(x, axis=1, include_initial=True)[:, 1:] * w),
        lambda x: tnp.sum(tnp.cummax(x, axis=1) * w),
        lambda x: tnp.sum(tnp.diff(x, n=2) ** 2),
    ]

    @ts.program
    def run(x: Any, t: Any) -> Any:
        return [(f(x + EPS * t), f(x - EPS * t), ts.grad(f)(x), ts.jvp(f, (x,), (t,))[1]) for f in fs]

    for k, (plus, minus, grad, tangent) in enumerate(run(x, t)):
        grad = np.asarray(grad)
        assert np.all(np.isfinite(grad)), k
        expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
        assert float(np.sum(grad * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), k
        assert float(np.asarray(tangent)) == pytest.approx(expected, rel=1e-6, abs=1e-8), k
    # d/dx_j of sum(cumprod(x)) at a zero: the products of the other leading factors, exactly.
    v = np.array([2.0, 0.0, 3.0, 5.0])
    want = [1 + 0, 2 * (1 + 3 + 15), 0, 0]
    np.testing.assert_array_equal(np.asarray(ts.grad(lambda v: tnp.sum(tnp.cumprod(v)))(v)), want)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 7))

    def per_example(x: Any) -> Any:
        return (tnp.cumsum(x), tnp.cumprod(x), tnp.cummin(x), tnp.diff(x, prepend=0.0),
                ts.grad(lambda x: tnp.sum(tnp.cumprod(x) ** 2))(x))

    got = ts.vmap(per_example)(x)
    got_t = ts.vmap(per_example, in_axes=1)(np.ascontiguousarray(x.T))
    loop = ts.program(per_example)
    for i in range(4):
        for g, gt, e in zip(got, got_t, loop(x[i])):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(e), rtol=1e-12)
            np.testing.assert_allclose(np.asarray(gt)[i], np.asarray(e), rtol=1e-12)


def _message(fn: Any, *specs: ts.Spec) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError, TypeError, ValueError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    m, s = ts.Spec((2, 3), f32), ts.Spec((), f32)
    cases = [
        (lambda m: tnp.cumsum(m, axis=2), (m,), ts.ShapeError, ["cumsum", "axis 2", "f32[2, 3]"]),
        (lambda m: tnp.cumprod(m, axis=(0, 1)), (m,), ts.ShapeError, ["cumprod", "one axis"]),
        (lambda s: tnp.cummax(s, axis=0), (s,), ts.ShapeError, ["cummax", "axis 0", "f32[]"]),
        (lambda m: tnp.cumulative_sum(m), (m,), ts.ShapeError, ["cumulative_sum", "axis", "f32[2, 3]"]),
        (lambda s: tnp.diff(s), (s,), ts.ShapeError, ["diff", "rank", "f32[]"]),
        (lambda m: tnp.diff(m, n=-1), (m,), ValueError, ["diff", "n=-1"]),
        (lambda m: tnp.diff(m, prepend=np.zeros((3, 3), np.float32)), (m,), ts.ShapeError, ["diff", "f32[3, 3]"]),
        (lambda m: tnp.diff(m, append=np.zeros((2, 1), np.float64)), (m,), ts.DTypeError, ["diff", "f64[2, 1]"]),
    ]
    for fn, specs, kind, parts in cases:
        with pytest.raises(kind):
            ts.program(fn).stage(*specs)
        message = _message(fn, *specs)
        for part in parts + ["test_numpy_cumulative.py:"]:
            assert part in message, (part, message)


def test_review_regressions() -> None:
    np.testing.assert_array_equal(tnp.cumulative_sum(np.float32(2), include_initial=True), [0.0, 2.0])
    with pytest.raises(TypeError):
        tnp.diff(np.arange(3, dtype=np.int32), n=1.5)
