"""Signal tools (convolve, correlate, windows, i0, unwrap) and sampled calculus (interp, trapezoid, gradient)
against NumPy float64 on seeded random inputs and edge cases, eagerly and staged (cases grouped into one program
where natural, to keep compiles few); result dtypes; gradients against central finite differences; vmap against
a Python loop; errors that name the op and the caller's line."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from conftest import PLATFORM
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

MODES = ("full", "same", "valid")
WINDOWS = ("hanning", "hamming", "blackman", "bartlett")


def _close(got: Any, want: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    return [tree]


# ----------------------------------------------------------------------------------- convolve, correlate


def test_convolve_and_correlate_match_numpy(rng: np.random.Generator) -> None:
    lengths = (1, 2, 5, 8)
    pairs = [(rng.standard_normal(n), rng.standard_normal(m)) for n in lengths for m in lengths]

    @ts.program
    def every_mode(pairs: Any) -> Any:
        return [[(tnp.convolve(a, v, mode), tnp.correlate(a, v, mode)) for mode in MODES] for a, v in pairs]

    for (a, v), results in zip(pairs, every_mode(pairs)):
        for mode, (conv, corr) in zip(MODES, results):
            _close(conv, np.convolve(a, v, mode))
            _close(corr, np.correlate(a, v, mode))
    a, v = pairs[7]  # eagerly, with NumPy's defaults ('full' and 'valid')
    _close(tnp.convolve(a, v), np.convolve(a, v))
    _close(tnp.correlate(a, v), np.correlate(a, v))
    _close(tnp.correlate(v, a), np.correlate(v, a))  # the longer v: the swapped result reversed


def test_convolve_keeps_integer_and_float32_dtypes(rng: np.random.Generator) -> None:
    a, v = rng.integers(-5, 6, 9).astype(np.int32), rng.integers(-5, 6, 4).astype(np.int32)
    if PLATFORM == "cpu":
        got = tnp.convolve(a, v, "same")
        assert np.asarray(got).dtype == np.int32
        np.testing.assert_array_equal(got, np.convolve(a, v, "same"))
    else:  # XLA has no integer convolutions on GPUs (tests/test_lowering_platforms.py)
        with pytest.raises(ts.DTypeError, match="integer convolutions"):
            tnp.convolve(a, v, "same")
    x, k = rng.standard_normal(20).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    got = tnp.correlate(x, k, "full")
    assert np.asarray(got).dtype == np.float32
    _close(got, np.correlate(x.astype(np.float64), k.astype(np.float64), "full"), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------- windows


def test_windows_match_numpy() -> None:
    sizes = (-1, 0, 1, 2, 5, 12)

    @ts.program
    def windows() -> Any:
        plain = {name: [getattr(tnp, name)(m) for m in sizes] for name in WINDOWS}
        wide = {name: [getattr(tnp, name)(m, dtype=ts.f64) for m in sizes] for name in WINDOWS}
        kaiser = [tnp.kaiser(m, beta, dtype=ts.f64) for m in sizes for beta in (0.0, 5.0, 14.0)]
        return plain, wide, kaiser

    plain, wide, kaiser = windows()
    for name in WINDOWS:
        for m, got32, got64 in zip(sizes, plain[name], wide[name]):
            want = getattr(np, name)(m)
            assert np.asarray(got32).dtype == np.float32 and np.asarray(got64).dtype == np.float64
            np.testing.assert_array_equal(got64, want)  # NumPy's float64 values, exactly
            np.testing.assert_array_equal(got32, want.astype(np.float32))  # rounded once
    for (m, beta), got in zip([(m, b) for m in sizes for b in (0.0, 5.0, 14.0)], kaiser):
        np.testing.assert_array_equal(got, np.kaiser(m, beta))
    np.testing.assert_array_equal(tnp.hanning(np.int64(7)), np.hanning(7).astype(np.float32))  # eagerly


def test_kaiser_with_a_staged_beta(rng: np.random.Generator) -> None:
    betas = np.array([0.0, 0.5, 5.0, 14.0, 40.0])
    got = ts.vmap(lambda b: tnp.kaiser(9, b))(betas)
    _close(got, np.stack([np.kaiser(9, b) for b in betas]), rtol=1e-14, atol=1e-15)
    one = tnp.kaiser(1, np.float32(3.0))
    assert np.asarray(one).dtype == np.float32
    np.testing.assert_array_equal(one, [1.0])
    assert np.asarray(tnp.kaiser(0, np.float64(3.0))).shape == (0,)


# --------------------------------------------------------------------------------------------------- i0


def _i0_inputs(rng: np.random.Generator, dtype: Any, top: float) -> np.ndarray:
    """Both signs, dense near 0 and the expansions' seam at 8, log-spread up to ``top``, and special values."""
    n = 3000
    values = [rng.uniform(-10, 10, n), 10.0 ** rng.uniform(-8, np.log10(top), n) * rng.choice([-1, 1], n),
              np.array([0.0, -0.0, 8.0, -8.0, np.nextafter(8.0, 0), np.nextafter(8.0, 9), 1e-300])]
    return np.concatenate(values).astype(dtype)


@pytest.mark.parametrize("dtype, top, ulps", [(np.float32, 91.0, 1.0), (np.float64, 705.0, 8.0)])
def test_i0_matches_numpy(rng: np.random.Generator, dtype: Any, top: float, ulps: float) -> None:
    """float32 is computed in float64 and rounded once: within one ulp of NumPy's float64 value. float64 is
    NumPy's own method, each a few ulps from the truth (exp and the recurrence round differently): see
    ``test_i0_is_accurate`` for the distance to exact values."""
    x = _i0_inputs(rng, dtype, top)
    got = np.asarray(tnp.i0(x))
    assert got.dtype == dtype
    want = np.i0(x.astype(np.float64))
    error = np.abs(got - want) / np.spacing(want.astype(dtype)).astype(np.float64)
    assert error.max() <= ulps, (error.max(), x[np.argmax(error)])


def _exact_i0(x: float) -> float:
    """``sum_k (x/2)^2k / (k!)^2`` in exact rational arithmetic, rounded once."""
    term, total, k = Fraction(1), Fraction(0), 0
    quarter_square = Fraction(x) ** 2 / 4
    while term > total * Fraction(1, 10**30) or k == 0:
        total += term
        k += 1
        term = term * quarter_square / (k * k)
    return float(total)


def test_i0_is_accurate(rng: np.random.Generator) -> None:
    x = np.concatenate([rng.uniform(-15, 15, 40), 10.0 ** rng.uniform(-9, 0, 20)])
    want = np.array([_exact_i0(float(v)) for v in x])
    error = np.abs(np.asarray(tnp.i0(x)) - want) / np.spacing(want)
    assert error.max() <= 4, (error.max(), x[np.argmax(error)])


def test_i0_special_values_and_range() -> None:
    got = np.asarray(tnp.i0(np.array([np.inf, -np.inf, np.nan, 0.0, 712.0, 716.0])))
    assert got[0] == np.inf and got[1] == np.inf and np.isnan(got[2]) and got[3] == 1.0  # NumPy: NaN at ±inf
    # Finite up to the largest value float64 holds (NumPy's exp(x) overflows at 709.8): i0(x) ~ e^x / sqrt(2 pi x).
    assert np.isfinite(got[4]) and got[4] == pytest.approx(np.exp(356.0) * (np.exp(356.0) / np.sqrt(2 * np.pi * 712)), rel=1e-3)
    assert got[5] == np.inf
    x32 = np.array([90.0, 91.0, -91.5], np.float32)
    np.testing.assert_array_equal(tnp.i0(x32), np.i0(x32.astype(np.float64)).astype(np.float32))
    for dtype in (ts.f16, ts.bf16):
        half = tnp.i0(tnp.astype(np.array([0.5, 3.0], np.float32), dtype))
        assert half.dtype == tnp.astype(np.zeros(1, np.float32), dtype).dtype
        _close(np.asarray(half).astype(np.float64), np.i0([0.5, 3.0]), rtol=1e-2)


# ----------------------------------------------------------------------------------------------- unwrap


def test_unwrap_matches_numpy(rng: np.random.Generator) -> None:
    walk = np.cumsum(rng.uniform(-7, 7, (4, 30)), axis=1)
    ties = np.array([0.0, np.pi, 0.0, -np.pi, 3 * np.pi, 2.0])  # jumps of exactly period / 2
    degrees = np.cumsum(rng.uniform(-300, 300, 25))

    @ts.program
    def unwrapped(walk: Any, ties: Any, degrees: Any) -> Any:
        return (tnp.unwrap(walk), tnp.unwrap(walk, axis=0), tnp.unwrap(walk, discont=4.0),
                tnp.unwrap(walk, period=3.0, discont=1.0), tnp.unwrap(ties), tnp.unwrap(degrees, period=360.0),
                tnp.unwrap(walk[:, :1]))

    got = unwrapped(walk, ties, degrees)
    want = (np.unwrap(walk), np.unwrap(walk, axis=0), np.unwrap(walk, discont=4.0),
            np.unwrap(walk, period=3.0, discont=1.0), np.unwrap(ties), np.unwrap(degrees, period=360.0),
            np.unwrap(walk[:, :1]))
    for g, w in zip(got, want):
        _close(g, w, rtol=1e-12, atol=1e-9)
    single = tnp.unwrap(walk.astype(np.float32))
    assert np.asarray(single).dtype == np.float32
    _close(single, np.unwrap(walk.astype(np.float32).astype(np.float64)), rtol=1e-5, atol=1e-4)


# ----------------------------------------------------------------------------------------------- interp


def _interp_cases(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]]:
    xp = np.sort(rng.uniform(-3, 3, 9))
    fp = rng.standard_normal(9)
    x = np.concatenate([rng.uniform(-4, 4, 40), xp, [np.nan, np.inf, -np.inf, xp[0], xp[-1]]])
    dup = np.array([0.0, 1.0, 1.0, 2.0, 2.0])  # repeated points: NumPy's choice of sample at them
    steps = np.array([0.0, 1.0, np.inf, np.inf, -np.inf, 3.0])  # infinite samples: the fallbacks
    return [
        (x, xp, fp, {}),
        (x, xp, fp, {"left": -7.0, "right": 9.5}),
        (x, xp, fp, {"period": 2.5}),
        (x, xp, fp, {"period": -4.0}),
        (x, xp[:1], fp[:1], {}),
        (x, xp[:2], fp[:2], {"left": 0.25}),
        (np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]), dup, rng.standard_normal(5), {}),
        (np.array([-1.0, 0.5, 1.0, 1.5, 2.5, 3.5, 4.5, 5.0]), np.arange(6.0), steps, {}),
        (x.reshape(6, 9), xp, fp, {}),
    ]


def test_interp_matches_numpy(rng: np.random.Generator) -> None:
    cases = _interp_cases(rng)

    @ts.program
    def interpolated(arrays: Any) -> Any:
        return [tnp.interp(x, xp, fp, **kw) for (x, xp, fp), (_, _, _, kw) in zip(arrays, cases)]

    for (x, xp, fp, kw), got in zip(cases, interpolated([c[:3] for c in cases])):
        with np.errstate(invalid="ignore"):
            want = np.interp(x, xp, fp, **kw)
        _close(got, want, rtol=1e-14, atol=1e-14)
    x, xp, fp, _ = cases[0]
    np.testing.assert_array_equal(tnp.interp(xp, xp, fp), fp)  # sample points give their samples exactly
    got = tnp.interp(0.3, xp, fp)  # a Python number adopts the dtype
    assert np.asarray(got).shape == () and np.asarray(got).dtype == np.float64
    _close(got, np.interp(0.3, xp, fp))
    single = tnp.interp(x.astype(np.float32), xp.astype(np.float32), fp.astype(np.float32), left=0.0)
    assert np.asarray(single).dtype == np.float32
    _close(single, np.interp(x, xp, fp, left=0.0), rtol=1e-5, atol=1e-5)


def test_interp_extrapolates_on_request(rng: np.random.Generator) -> None:
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([1.0, 3.0, 2.0])
    x = np.array([-2.0, 0.5, 4.0, 7.0])
    got = tnp.interp(x, xp, fp, left="extrapolate", right="extrapolate")
    _close(got, [1.0 + 2 * -2.0, 2.0, 1.5, 0.0])
    _close(tnp.interp(x, xp, fp, right="extrapolate"), [1.0, 2.0, 1.5, 0.0])


# -------------------------------------------------------------------------------------------- trapezoid


def test_trapezoid_matches_numpy(rng: np.random.Generator) -> None:
    y = rng.standard_normal((3, 7))
    x1 = np.cumsum(rng.uniform(0.1, 1, 7))
    x0 = np.cumsum(rng.uniform(0.1, 1, 3))
    xs = np.cumsum(rng.uniform(0.1, 1, (3, 7)), axis=1)
    got = ts.program(lambda y, x1, x0, xs: (
        tnp.trapezoid(y), tnp.trapezoid(y, x1), tnp.trapezoid(y, x0, axis=0), tnp.trapezoid(y, xs),
        tnp.trapezoid(y, dx=0.25, axis=0), tnp.trapezoid(y[:, :1]), tnp.trapezoid(y[:, :0]), tnp.trapezoid(y[0]),
        tnp.trapezoid(y, dx=tnp.sum(x0)),
    ))(y, x1, x0, xs)
    want = (np.trapezoid(y), np.trapezoid(y, x1), np.trapezoid(y, x0, axis=0), np.trapezoid(y, xs),
            np.trapezoid(y, dx=0.25, axis=0), np.trapezoid(y[:, :1]), np.trapezoid(y[:, :0]), np.trapezoid(y[0]),
            np.trapezoid(y, dx=np.sum(x0)))
    for g, w in zip(got, want):
        _close(g, w)
    single = tnp.trapezoid(y.astype(np.float32), x1.astype(np.float32))
    assert np.asarray(single).dtype == np.float32
    _close(single, np.trapezoid(y, x1), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------- gradient


def test_gradient_matches_numpy(rng: np.random.Generator) -> None:
    f = rng.standard_normal((4, 5, 3))
    c0, c1, c2 = (np.cumsum(rng.uniform(0.1, 1, n)) for n in f.shape)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}), ((0.5,), {}), ((c0, c1, c2), {}), ((c0, 2.0, c2), {"edge_order": 2}), ((), {"edge_order": 2}),
        ((c1,), {"axis": 1, "edge_order": 2}), ((0.3, c2), {"axis": (0, 2)}), ((), {"axis": -1}),
    ]
    got = ts.program(lambda f: [tnp.gradient(f, *args, **kw) for args, kw in calls])(f)
    for (args, kw), g in zip(calls, got):
        want = np.gradient(f, *args, **kw)
        assert type(g) is type(want) or not isinstance(want, tuple), (type(g), type(want))
        for a, b in zip(_leaves(g), _leaves(want)):
            _close(a, b, rtol=1e-12, atol=1e-12)
    line = rng.standard_normal(2)
    _close(tnp.gradient(line), np.gradient(line))  # two samples: one-sided at both ends
    uneven = np.cumsum(rng.uniform(0.1, 1, 6))
    _close(tnp.gradient(f[0, :, 0], uneven[:5], edge_order=2), np.gradient(f[0, :, 0], uneven[:5], edge_order=2))
    single = tnp.gradient(f.astype(np.float32), axis=0)
    assert np.asarray(single).dtype == np.float32
    _close(single, np.gradient(f, axis=0), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------- derivatives and vmap

EPS = 1e-6


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    a, v = rng.standard_normal(7), rng.standard_normal(4)
    xp, fp = np.sort(rng.uniform(-3, 3, 6)), rng.standard_normal(6)
    x = rng.uniform(-3.5, 3.5, 10)
    y2 = rng.standard_normal((3, 6))
    coords = np.cumsum(rng.uniform(0.2, 1, 6))
    weights = rng.standard_normal((3, 6))
    probes = rng.uniform(-12, 12, 9)
    # name -> (function of one float64 array, point)
    fs: dict[str, tuple[Callable[[Any], Any], np.ndarray]] = {
        "convolve a": (lambda a: tnp.sum(tnp.convolve(a, v, "same") ** 2), a),
        "convolve v": (lambda v: tnp.sum(tnp.convolve(a, v) * tnp.arange(10.0, dtype=ts.f64)), v),
        "correlate v": (lambda v: tnp.sum(tnp.correlate(a, v, "valid") ** 3), v),
        "interp fp": (lambda fp: tnp.sum(tnp.interp(x, xp, fp) ** 2), fp),
        "interp xp": (lambda xp: tnp.sum(tnp.interp(x, xp, fp) ** 2), xp),
        "interp x": (lambda x: tnp.sum(tnp.sin(tnp.interp(x, xp, fp))), x),
        "interp period": (lambda x: tnp.sum(tnp.interp(x, xp, fp, period=4.0) ** 2), x),
        "trapezoid y": (lambda y: tnp.sum(tnp.trapezoid(y**2, coords)), y2),
        "trapezoid x": (lambda c: tnp.sum(tnp.trapezoid(y2, c) ** 2), coords),
        "gradient f": (lambda y: tnp.sum(tnp.gradient(y**2, 0.5, coords, edge_order=2)[1] * weights), y2),
        "gradient coordinates": (lambda c: tnp.sum(tnp.gradient(y2, c, axis=1) ** 2), coords),
        "i0": (lambda p: tnp.sum(tnp.i0(p) * tnp.cos(p)), probes),
        "unwrap": (lambda p: tnp.sum(tnp.unwrap(p * 3.0) ** 2), probes),
        "kaiser beta": (lambda b: tnp.sum(tnp.kaiser(7, b[0]) * tnp.arange(7.0, dtype=ts.f64)), np.array([4.0])),
    }
    directions = {name: rng.standard_normal(point.shape) for name, (_, point) in fs.items()}

    @ts.program
    def probe() -> Any:
        return {name: (f(w + EPS * directions[name]), f(w - EPS * directions[name]), ts.grad(f)(w))
                for name, (f, w) in fs.items()}

    for name, (plus, minus, grad) in probe().items():
        expected = float(np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
        got = float(np.sum(np.asarray(grad) * directions[name]))
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-6), name


def test_i0_derivative_is_i1() -> None:
    x = np.array([-30.0, -8.0, -1.0, 0.0, 0.5, 7.99, 8.01, 100.0])
    got = ts.vmap(ts.grad(tnp.i0))(x)
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    central = (np.i0(x + h) - np.i0(x - h)) / (2 * h)
    _close(got, central, rtol=1e-7, atol=1e-9)
    assert float(np.asarray(ts.grad(ts.grad(tnp.i0))(0.0))) == pytest.approx(0.5, rel=1e-12)  # i1'(0) = 1/2


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a, v = rng.standard_normal((3, 9)), rng.standard_normal((3, 4))
    x, fp = rng.uniform(-1, 4, (3, 5)), rng.standard_normal((3, 6))
    xp = np.linspace(0.0, 3.0, 6)
    p = np.cumsum(rng.uniform(-6, 6, (3, 8)), axis=1)
    shared = rng.standard_normal(6)

    def per_example(a: Any, v: Any, x: Any, fp: Any, p: Any) -> Any:
        return (tnp.convolve(a, v, "same"), tnp.correlate(a, v), tnp.interp(x, xp, fp), tnp.interp(x, xp, shared),
                tnp.gradient(p, edge_order=2), tnp.trapezoid(p), tnp.unwrap(p), tnp.i0(p))

    got = ts.vmap(per_example)(a, v, x, fp, p)
    loop = ts.program(per_example)
    for i in range(3):
        for g, e in zip(_leaves(got), _leaves(loop(a[i], v[i], x[i], fp[i], p[i]))):
            _close(np.asarray(g)[i], e)
    _close(got[2][1], np.interp(x[1], xp, fp[1]))


# ------------------------------------------------------------------------------------------------- errors


def test_errors_name_op_and_line() -> None:
    v, m, i = ts.Spec((6,), f32), ts.Spec((2, 3), f32), ts.Spec((6,), ts.i32)
    cases = [
        (lambda m: tnp.convolve(m, m[0]), (m,), ts.ShapeError, ["convolve", "1-D", "f32[2, 3]"]),
        (lambda v: tnp.correlate(v, v, "wide"), (v,), ValueError, ["correlate", "'wide'", "valid"]),
        (lambda v: tnp.convolve(v[:0], v), (v,), ValueError, ["convolve", "empty"]),
        (lambda v: tnp.convolve(v > 0, v > 1), (v,), ts.DTypeError, ["convolve", "bool[6]"]),
        (lambda v: tnp.interp(v, v, v[:4]), (v,), ValueError, ["interp", "same length", "f32[4]"]),
        (lambda v, m: tnp.interp(v, m, m), (v, m), ts.ShapeError, ["interp", "1-D", "f32[2, 3]"]),
        (lambda v: tnp.interp(v, v[:0], v[:0]), (v,), ValueError, ["interp", "empty"]),
        (lambda v: tnp.interp(v, v, v, period=0.0), (v,), ValueError, ["interp", "period"]),
        (lambda v, i: tnp.interp(v, i, v), (v, i), ts.DTypeError, ["interp", "i32[6]"]),
        (lambda v: tnp.gradient(v[:2], edge_order=2), (v,), ValueError, ["gradient", "edge_order=2", "3"]),
        (lambda v: tnp.gradient(v, edge_order=3), (v,), ValueError, ["gradient", "edge_order"]),
        (lambda m: tnp.gradient(m, 1.0, 2.0, 3.0), (m,), TypeError, ["gradient", "spacing"]),
        (lambda m: tnp.gradient(m, m[0], 1.0), (m,), ts.ShapeError, ["gradient", "coordinates", "f32[3]"]),
        (lambda i: tnp.gradient(i), (i,), ts.DTypeError, ["gradient", "i32[6]"]),
        (lambda v: tnp.trapezoid(v, v[:4]), (v,), ts.ShapeError, ["trapezoid", "f32[4]", "f32[6]"]),
        (lambda i: tnp.trapezoid(i), (i,), ts.DTypeError, ["trapezoid", "i32[6]"]),
        (lambda i: tnp.i0(i), (i,), ts.DTypeError, ["i0", "i32[6]"]),
        (lambda i: tnp.unwrap(i), (i,), ts.DTypeError, ["unwrap", "i32[6]"]),
        (lambda v: tnp.unwrap(v[0]), (v,), ts.ShapeError, ["unwrap", "rank"]),
        (lambda v: tnp.kaiser(4, v), (v,), ts.ShapeError, ["kaiser", "0-d"]),
        (lambda v: tnp.hanning(v), (v,), ts.ConcretizationError, ["hanning", "static", "f32[6]", "shape"]),
    ]
    check_staging_errors(cases, "test_numpy_signal.py")
    with pytest.raises(ValueError, match=r"(?s)convolve.*mode.*test_numpy_signal.py:"):
        tnp.convolve(np.ones(3), np.ones(2), mode="middle")
    with pytest.raises(TypeError, match=r"(?s)hamming.*int.*test_numpy_signal.py:"):
        tnp.hamming(2.5)
    with pytest.raises(ts.DTypeError, match=r"(?s)blackman.*floating-point.*test_numpy_signal.py:"):
        tnp.blackman(4, dtype=ts.i32)
    with pytest.raises(ValueError, match=r"(?s)interp.*'extrapolate'.*test_numpy_signal.py:"):
        tnp.interp(np.ones(2), np.arange(3.0), np.arange(3.0), right="clamp")
