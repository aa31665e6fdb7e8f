"""``tensorstage.numpy``'s extra elementwise math and NaN-ignoring reductions against NumPy float64: ulp-scale
accuracy over wide ranges and at the special values, gradients against finite differences, vmap, errors.

Subnormals: XLA:CPU flushes subnormal operands to zero, so on the CPU the references read them as zeros. XLA:GPU
keeps them in some ops and flushes them in others (on an H100: ``rad2deg`` of a subnormal float32 and ``fmod`` by a
subnormal float64 kept them, as NumPy does; ``cbrt`` and ``arctan2`` flushed subnormal operands or results): on a
GPU (``TENSORSTAGE_DEFAULT_DEVICE=gpu``) the references use the operands as they are, and elements with a
subnormal operand or reference are left out. The ulp tolerances are the same on both, but for ``GPU_ULPS``: two
float32 binary functions built on division and sqrt, which XLA:GPU does not round correctly (see
``test_fuzz_dtypes.py``), measured a little further off on an H100.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from conftest import PLATFORM
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

FLOATS = (np.float32, np.float64)


def _special(dtype: Any) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, np.inf, -np.inf, np.nan, -np.nan, info.tiny, -info.tiny,
              info.smallest_subnormal * 3, info.max, -info.max, info.eps, 1 - info.epsneg, -(1 - info.epsneg),
              1 + info.eps, 1e-3, -1e-3, 3.0, 10.0, 20.0, 50.0, 88.5, 89.2, 710.0, -710.0, 1e5, 1e10, 1e20, 1e300]
    return np.array(values, np.float64).astype(dtype)


def _wide(rng: np.random.Generator, dtype: Any, n: int = 4000) -> np.ndarray:
    """Both signs, magnitudes spread log-uniformly over the dtype's range, a dense band in [-2, 2], and the
    special values."""
    lo, hi = (-40, 38) if dtype == np.float32 else (-300, 300)
    mags = 10.0 ** rng.uniform(lo, hi, n)
    band = rng.uniform(-2, 2, n)
    unit = rng.uniform(-1, 1, n)
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.concatenate([signs * mags, band, unit, _special(dtype)]).astype(dtype)


def _gpu_comparable(dtype: Any, *arrays: np.ndarray) -> np.ndarray:
    """On a GPU, the elements where no array (operands, reference) is subnormal in ``dtype``; elsewhere all."""
    if PLATFORM != "gpu":
        return np.ones(arrays[0].shape, bool)
    tiny = np.finfo(dtype).tiny
    return np.logical_and.reduce([~((np.abs(a) < tiny) & (a != 0)) for a in arrays])


def _flushed(x: np.ndarray) -> np.ndarray:
    """``x`` as XLA's arithmetic reads it, in float64: on the CPU subnormals are flushed to a signed zero; a GPU
    keeps them (see the module docstring)."""
    if PLATFORM == "gpu":
        return x.astype(np.float64)
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, x * 0, x).astype(np.float64)


def _ulps(
    got: np.ndarray, ref: np.ndarray, dtype: Any, scale: np.ndarray | None = None, zero_sign: bool = True
) -> float:
    """The largest error in units of the dtype's ulp at the reference (or at ``scale``, where an algorithm's
    error is relative to an operand). Results that are not finite in the dtype must match exactly and zeros must
    carry NumPy's sign; results that are subnormal or zero in the dtype match each other (XLA flushes them)."""
    got = np.asarray(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    ref_d = ref.astype(dtype)
    special = ~np.isfinite(ref_d)
    np.testing.assert_array_equal(got[special], ref_d[special])
    if zero_sign:
        zeros = ref_d == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(ref_d[zeros]))
    tiny = np.finfo(dtype).tiny
    finite = ~special & ~((np.abs(ref_d) < tiny) & (np.abs(got) < tiny))
    g, r = got[finite].astype(np.float64), ref[finite]
    assert np.isfinite(g).all(), ("non-finite result where NumPy's is finite", g[~np.isfinite(g)])
    at = np.abs(ref_d[finite]) if scale is None else np.maximum(np.abs(ref_d[finite]), scale[finite]).astype(dtype)
    spacing = np.maximum(np.spacing(at).astype(np.float64), np.finfo(dtype).smallest_subnormal)
    return float(np.max(np.abs(g - r) / spacing, initial=0.0))


# name -> (tnp function, NumPy reference, ulps allowed in f32, in f64)
UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], float, float]] = {
    "arcsin": (tnp.arcsin, np.arcsin, 2.5, 2),
    "arccos": (tnp.arccos, np.arccos, 2, 2),
    "arctan": (tnp.arctan, np.arctan, 1.5, 1.5),
    "sinh": (tnp.sinh, np.sinh, 2.5, 2.5),
    "cosh": (tnp.cosh, np.cosh, 2, 2),
    "arcsinh": (tnp.arcsinh, np.arcsinh, 3.5, 3),
    "arccosh": (tnp.arccosh, np.arccosh, 3, 3),
    "arctanh": (tnp.arctanh, np.arctanh, 3.5, 3),
    "exp2": (tnp.exp2, np.exp2, 1, 1),
    "cbrt": (tnp.cbrt, np.cbrt, 1, 3),  # XLA's float64 cbrt
    "deg2rad": (tnp.deg2rad, np.deg2rad, 1, 1),
    "rad2deg": (tnp.rad2deg, np.rad2deg, 1, 1),
    "trunc": (tnp.trunc, np.trunc, 0, 0),
    "fix": (tnp.fix, np.fix, 0, 0),
    "sinc": (tnp.sinc, np.sinc, 2, 2),  # absolute, in ulps of 1
    "nan_to_num": (tnp.nan_to_num, np.nan_to_num, 0, 0),
}


def _measure_unary(dtype: Any, x: np.ndarray) -> dict[str, float]:
    outs = ts.program(lambda x: {name: f(x) for name, (f, _, _, _) in UNARY.items()})(x)
    x64 = _flushed(x)
    errors = {}
    with np.errstate(all="ignore"):
        for name, (_, ref, _, _) in UNARY.items():
            want, got = ref(x64), np.asarray(outs[name])
            if name == "nan_to_num":  # the dtype's own limits, not float64's
                want = np.nan_to_num(x).astype(np.float64)
            if name == "sinc":
                # sin(pi x) / (pi x) rounds pi x first, as NumPy's own sinc does in the dtype: an absolute error
                # (|sinc| <= 1) in ulps of 1, where pi x is not huge.
                keep = (np.abs(x64) < 1e3) | ~np.isfinite(x64)
                want, got = want[keep], got[keep]
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                errors[name] = float(np.nanmax(np.abs(got - want)) / np.finfo(dtype).eps)
                continue
            comparable = _gpu_comparable(dtype, x64, want)
            errors[name] = _ulps(got[comparable], want[comparable], dtype)
    return errors


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_functions_match_numpy_to_a_few_ulps(dtype: Any, rng: np.random.Generator) -> None:
    errors = _measure_unary(dtype, _wide(rng, dtype))
    column = 2 if dtype == np.float32 else 3
    too_far = {name: err for name, err in errors.items() if err > UNARY[name][column]}
    assert not too_far, too_far


@pytest.mark.parametrize("dtype", FLOATS)
def test_log1p_is_accurate_across_xlas_seam(dtype: Any) -> None:
    """XLA's f64 log_plus_one is 128 ulps off on [-0.4143, -0.3645]; tensorstage's lowering takes log(1 + x)
    there. A dense grid over [-0.999, 3] (the seam inside) and the edges."""
    x = np.concatenate([np.linspace(-0.999, 3, 100_001), [-1.0, 0.0, -0.0, np.inf, 1e-30]]).astype(dtype)
    got = ts.program(tnp.log1p)(x)
    with np.errstate(all="ignore"):
        want = np.log1p(_flushed(x))
    comparable = _gpu_comparable(dtype, _flushed(x), want)
    assert _ulps(np.asarray(got)[comparable], want[comparable], dtype) <= (2.5 if dtype == np.float32 else 2)


BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], float, float]] = {
    "arctan2": (tnp.arctan2, np.arctan2, 1.5, 1.5),
    "hypot": (tnp.hypot, np.hypot, 2, 2.5),
    "logaddexp": (tnp.logaddexp, np.logaddexp, 3, 3),  # in ulps of the larger operand, as NumPy's algorithm
    "logaddexp2": (tnp.logaddexp2, np.logaddexp2, 3.5, 3),
    "fmod": (tnp.fmod, np.fmod, 0, 0),
    "copysign": (tnp.copysign, np.copysign, 0, 0),
    "heaviside": (tnp.heaviside, np.heaviside, 0, 0),
    "fmax": (tnp.fmax, np.fmax, 0, 0),
    "fmin": (tnp.fmin, np.fmin, 0, 0),
}


# GPU only: (function, dtype) -> ulps in place of BINARY's. Measured on an H100: arctan2 1.56, hypot 2.23.
GPU_ULPS = {("arctan2", np.float32): 2.0, ("hypot", np.float32): 3.0}


def _binary_tolerance(name: str, dtype: Any) -> float:
    tolerance = BINARY[name][2 if dtype == np.float32 else 3]
    return max(tolerance, GPU_ULPS.get((name, dtype), 0.0)) if PLATFORM == "gpu" else tolerance


def _pairs(rng: np.random.Generator, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs over the whole range, pairs of close magnitudes, and every pair of special values."""
    a, b = _wide(rng, dtype, 3000), _wide(rng, dtype, 3000)
    b = rng.permutation(b)
    close = a * (1 + rng.uniform(-1e-3, 1e-3, a.shape)).astype(dtype)
    s = _special(dtype)
    sa, sb = np.meshgrid(s, s)
    return np.concatenate([a, a, sa.ravel()]).astype(dtype), np.concatenate([b, close, sb.ravel()]).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_functions_match_numpy_to_a_few_ulps(dtype: Any, rng: np.random.Generator) -> None:
    x, y = _pairs(rng, dtype)
    outs = ts.program(lambda x, y: {name: f(x, y) for name, (f, _, _, _) in BINARY.items()})(x, y)
    x64, y64 = _flushed(x), _flushed(y)
    errors: dict[str, float] = {}
    broken: dict[str, str] = {}
    with np.errstate(all="ignore"):
        for name, (_, ref, _, _) in BINARY.items():
            want = ref(x64, y64)
            got = np.asarray(outs[name])
            keep = np.ones(x64.shape, bool)
            keep &= _gpu_comparable(dtype, x64, y64, want)
            scale = None
            if name.startswith("logaddexp"):  # max + log1p(...): as NumPy, accurate relative to the larger operand
                scale = np.nan_to_num(np.maximum(np.abs(x64), np.abs(y64)), posinf=0)[keep]
            # fmax/fmin of +0 and -0 may return either (IEEE; NumPy's SIMD loops differ by position)
            zero_sign = name not in ("fmax", "fmin")
            try:
                errors[name] = _ulps(got[keep], want[keep], dtype, scale, zero_sign)
            except AssertionError as failure:  # special values or zero signs: reported beside the other ops
                broken[name] = str(failure)[:600]
    too_far = {name: err for name, err in errors.items() if err > _binary_tolerance(name, dtype)}
    assert not too_far and not broken, (too_far, broken, errors)


# ------------------------------------------------------------------------------------ integers, closeness


def test_integer_operands() -> None:
    x = np.array([7, -7, 7, -7, 0, 5, -1], np.int32)
    y = np.array([3, 3, -3, -3, 4, 0, 0], np.int32)
    out = ts.program(lambda x, y: {
        "fmod": tnp.fmod(x, y), "trunc": tnp.trunc(x), "fix": tnp.fix(x), "fmax": tnp.fmax(x, y),
        "fmin": tnp.fmin(x, y), "signbit": tnp.signbit(x), "nan_to_num": tnp.nan_to_num(x),
        "isclose": tnp.isclose(x, y, atol=4), "count": tnp.count_nonzero(x),
    })(x, y)
    with np.errstate(all="ignore"):
        want = {"fmod": np.fmod(x, y), "trunc": x, "fix": x, "fmax": np.fmax(x, y), "fmin": np.fmin(x, y),
                "signbit": np.signbit(x), "nan_to_num": x, "isclose": np.isclose(x, y, atol=4),
                "count": np.count_nonzero(x)}
    for name, value in want.items():
        np.testing.assert_array_equal(np.asarray(out[name]), value, err_msg=name)
        assert np.asarray(out[name]).dtype == (np.int32 if name in ("fmod", "trunc", "fix", "fmax", "fmin",
                                                                      "nan_to_num", "count") else np.bool_), name


@pytest.mark.parametrize("dtype", FLOATS)
def test_isclose_allclose_nan_to_num_and_signbit(dtype: Any, rng: np.random.Generator) -> None:
    base = rng.standard_normal(40).astype(dtype)
    a = np.concatenate([base, [np.inf, -np.inf, np.inf, np.nan, -np.nan, 0.0, -0.0, 1e-9]]).astype(dtype)
    b = np.concatenate([base * (1 + rng.uniform(-3e-5, 3e-5, 40)), [np.inf, np.inf, 1e30, np.nan, 1.0, -0.0,
                                                                      0.0, 0.0]]).astype(dtype)
    out = ts.program(lambda a, b: {
        "default": tnp.isclose(a, b), "loose": tnp.isclose(a, b, rtol=1e-3, atol=0.5),
        "nan": tnp.isclose(a, b, equal_nan=True), "scalar": tnp.isclose(a, 0.0, atol=1e-8),
        "all": tnp.allclose(a[:40], b[:40], rtol=1e-4), "not_all": tnp.allclose(a, b, equal_nan=True),
        "nan_to_num": tnp.nan_to_num(a, nan=-1.0, posinf=7.0), "signbit": tnp.signbit(a),
        "default_fill": tnp.nan_to_num(a),
    })(a, b)
    np.testing.assert_array_equal(np.asarray(out["default"]), np.isclose(a, b))
    np.testing.assert_array_equal(np.asarray(out["loose"]), np.isclose(a, b, rtol=1e-3, atol=0.5))
    np.testing.assert_array_equal(np.asarray(out["nan"]), np.isclose(a, b, equal_nan=True))
    np.testing.assert_array_equal(np.asarray(out["scalar"]), np.isclose(a, 0.0, atol=1e-8))
    assert np.asarray(out["all"]).shape == () and bool(out["all"]) == np.allclose(a[:40], b[:40], rtol=1e-4)
    assert bool(out["not_all"]) is False
    np.testing.assert_array_equal(np.asarray(out["nan_to_num"]), np.nan_to_num(a, nan=-1.0, posinf=7.0))
    np.testing.assert_array_equal(np.asarray(out["default_fill"]), np.nan_to_num(a))
    np.testing.assert_array_equal(np.asarray(out["signbit"]), np.signbit(a))  # -nan's sign bit too
    # Outside staging allclose gives a 0-d bool array, usable where NumPy's Python bool is.
    result = tnp.allclose(a[:40], a[:40])
    assert isinstance(result, ts.Array) and result.shape == () and bool(result)
    assert tnp.allclose(np.float64([1.0, np.nan]), np.float64([1.0, np.nan]), equal_nan=True)


def test_float_power_computes_in_float64(rng: np.random.Generator) -> None:
    x = rng.uniform(0.5, 3, 6).astype(np.float32)
    y = rng.uniform(-2, 2, 6).astype(np.float32)
    out = tnp.float_power(x, y)
    assert np.asarray(out).dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), np.float_power(x, y), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(tnp.float_power(x, 2)), np.float_power(x, 2), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(tnp.float_power(np.int32([2, 3]), -1)), [0.5, 1 / 3], rtol=1e-15)


# -------------------------------------------------------------------------------------------- gradients


def _central(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


GRAD_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[float, float]]] = {
    "arcsin": (tnp.arcsin, np.arcsin, (-0.9, 0.9)),
    "arccos": (tnp.arccos, np.arccos, (-0.9, 0.9)),
    "arctan": (tnp.arctan, np.arctan, (-5, 5)),
    "sinh": (tnp.sinh, np.sinh, (-30, 30)),
    "cosh": (tnp.cosh, np.cosh, (-30, 30)),
    "arcsinh": (tnp.arcsinh, np.arcsinh, (-1e9, 1e9)),
    "arccosh": (tnp.arccosh, np.arccosh, (1.1, 1e9)),
    "arctanh": (tnp.arctanh, np.arctanh, (-0.95, 0.95)),
    "exp2": (tnp.exp2, np.exp2, (-10, 10)),
    "cbrt": (tnp.cbrt, np.cbrt, (0.1, 5)),
    "deg2rad": (tnp.deg2rad, np.deg2rad, (-360, 360)),
    "rad2deg": (tnp.rad2deg, np.rad2deg, (-7, 7)),
    "sinc": (tnp.sinc, np.sinc, (-3, 3)),
}
GRAD_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "arctan2": (tnp.arctan2, np.arctan2), "hypot": (tnp.hypot, np.hypot), "logaddexp": (tnp.logaddexp, np.logaddexp),
    "logaddexp2": (tnp.logaddexp2, np.logaddexp2), "fmod": (tnp.fmod, np.fmod),
    "copysign": (tnp.copysign, np.copysign), "fmax": (tnp.fmax, np.fmax), "fmin": (tnp.fmin, np.fmin),
}


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    xs = {name: rng.uniform(lo, hi, 8) for name, (_, _, (lo, hi)) in GRAD_UNARY.items()}
    xs["cbrt"] *= np.where(rng.random(8) < 0.5, -1, 1)
    pairs = {name: (rng.uniform(-3, 3, 8), rng.uniform(-3, 3, 8)) for name in GRAD_BINARY}
    pairs["fmod"] = (rng.uniform(-3, 3, 8), rng.uniform(0.5, 0.9, 8) * np.array([1, -1] * 4))
    pairs["fmax"][1][:2] = np.nan  # the NaN operand is ignored: the gradient goes to the other one
    pairs["fmin"][0][:2] = np.nan

    def loss(xs: dict[str, Any], pairs: dict[str, Any]) -> Any:
        total = sum(tnp.sum(GRAD_UNARY[name][0](x)) for name, x in xs.items())
        return total + sum(tnp.sum(GRAD_BINARY[name][0](x, y)) for name, (x, y) in pairs.items())

    gx, gp = ts.grad(loss, argnums=(0, 1))(xs, pairs)
    for name, x in xs.items():
        np.testing.assert_allclose(np.asarray(gx[name]), _central(GRAD_UNARY[name][1], x), rtol=1e-6, err_msg=name)
    for name, (x, y) in pairs.items():
        ref = GRAD_BINARY[name][1]
        want_x = np.nan_to_num(_central(lambda v: ref(v, y), x))  # noqa: B023
        want_y = np.nan_to_num(_central(lambda v: ref(x, v), y))  # noqa: B023
        np.testing.assert_allclose(np.asarray(gp[name][0]), want_x, rtol=1e-6, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(np.asarray(gp[name][1]), want_y, rtol=1e-6, atol=1e-9, err_msg=name)


def test_gradients_at_zero_ties_and_steps() -> None:
    zero = np.zeros(3)
    odd = {"sinh": tnp.sinh, "arcsinh": tnp.arcsinh, "arctanh": tnp.arctanh, "arcsin": tnp.arcsin,
           "arctan": tnp.arctan}
    for name, f in odd.items():  # |x| has no derivative at 0: the odd-function composition must keep 1 there
        g = ts.grad(lambda x: tnp.sum(f(x)))(zero)  # noqa: B023
        np.testing.assert_array_equal(np.asarray(g), 1.0, err_msg=name)
    np.testing.assert_array_equal(np.asarray(ts.grad(lambda x: tnp.sum(tnp.sinc(x)))(zero)), 0.0)
    # sinc's second derivative at 0 is -pi²/3 (the Taylor branch keeps it)
    d2 = ts.grad(lambda x: tnp.sum(ts.grad(lambda y: tnp.sum(tnp.sinc(y)))(x)))(zero)
    np.testing.assert_allclose(np.asarray(d2), -np.pi**2 / 3, rtol=1e-12)
    x = np.array([0.3, -2.0, np.inf, -np.inf])
    gx, gy = ts.grad(lambda x, y: tnp.sum(tnp.logaddexp(x, y)), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(np.asarray(gx)[:2], 0.5)  # finite ties split evenly
    np.testing.assert_array_equal(np.asarray(gy)[:2], 0.5)
    np.testing.assert_array_equal(np.asarray(gx + gy), 1.0)  # equal infinities: finite, no NaN
    gx, gy = ts.grad(lambda x, y: tnp.sum(tnp.hypot(x, y)), argnums=(0, 1))(np.array([3.0, 0.0]), np.array([-3.0, 0.0]))
    np.testing.assert_allclose(np.asarray(gx), [np.sqrt(0.5), 0.0], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(gy), [-np.sqrt(0.5), 0.0], rtol=1e-15)
    steps = np.array([-1.0, 0.0, 2.0])
    g = ts.grad(lambda x, h: tnp.sum(tnp.heaviside(x, h)), argnums=(0, 1))(steps, np.full(3, 0.5))
    np.testing.assert_array_equal(np.asarray(g[0]), 0.0)
    np.testing.assert_array_equal(np.asarray(g[1]), [0.0, 1.0, 0.0])  # h is the value where x == 0
    g = ts.grad(lambda x: tnp.sum(tnp.where(tnp.signbit(x) | tnp.isclose(x, 2.0), x * 0, x)))(steps)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0, 0.0])
    g = ts.grad(lambda x: tnp.sum(tnp.trunc(x) + tnp.nan_to_num(x)))(np.array([1.5, np.nan, np.inf]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0, 0.0])


# ------------------------------------------------------------------------------------- NaN-ignoring reductions

NAN_REDUCTIONS = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd")
AXES: list[Any] = [None, 0, -1, (0, 2), (-1, 1)]


def _with_nans(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.3] = np.nan
    if len(shape) == 3:
        x[1, 2, :] = np.nan  # an all-NaN slice along the last axis
        x[0, 0, 1] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_reductions_match_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x3 = _with_nans(rng, (3, 4, 5), dtype)
    x1 = _with_nans(rng, (6,), dtype)
    x0 = np.asarray(np.nan, dtype)

    def run(x3: Any, x1: Any, x0: Any) -> Any:
        out: dict[str, Any] = {}
        for name in NAN_REDUCTIONS:
            f = getattr(tnp, name)
            for i, axis in enumerate(AXES):
                out[f"{name}/{i}"] = f(x3, axis=axis)
            out[f"{name}/keep"] = f(x3, axis=(0, -1), keepdims=True)
            out[f"{name}/rank1"] = f(x1)
            out[f"{name}/rank0"] = f(x0)
        out["nanvar/ddof"] = tnp.nanvar(x3, axis=1, ddof=1)
        out["nanstd/ddof"] = tnp.nanstd(x3, axis=-1, ddof=2, keepdims=True)
        out["nanargmax/1"] = tnp.nanargmax(x3, axis=1)
        out["nanargmin/-1"] = tnp.nanargmin(x3, axis=-1)
        out["nanargmax/None"] = tnp.nanargmax(x1)
        out["ptp/0"] = tnp.ptp(x3, axis=0)
        out["ptp/keep"] = tnp.ptp(x1, keepdims=True)
        out["count/(1,2)"] = tnp.count_nonzero(x3, axis=(1, 2))
        out["count/keep"] = tnp.count_nonzero(x3 > 0, axis=-1, keepdims=True)
        return out

    got = ts.program(run)(x3, x1, x0)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):  # NumPy warns about its all-NaN slices
        want: dict[str, Any] = {}
        for name in NAN_REDUCTIONS:
            f = getattr(np, name)
            for i, axis in enumerate(AXES):
                want[f"{name}/{i}"] = f(x3.astype(np.float64), axis=axis)
            want[f"{name}/keep"] = f(x3.astype(np.float64), axis=(0, -1), keepdims=True)
            want[f"{name}/rank1"] = f(x1.astype(np.float64))
            want[f"{name}/rank0"] = f(x0.astype(np.float64))
        want["nanvar/ddof"] = np.nanvar(x3.astype(np.float64), axis=1, ddof=1)
        want["nanstd/ddof"] = np.nanstd(x3.astype(np.float64), axis=-1, ddof=2, keepdims=True)
    # NumPy raises for all-NaN slices in nanargmax/nanargmin; those slices give -1 here.
    masked = np.where(np.isnan(x3), -np.inf, x3)
    want["nanargmax/1"] = np.where(np.isnan(x3).all(1), -1, np.argmax(masked, 1))
    masked = np.where(np.isnan(x3), np.inf, x3)
    want["nanargmin/-1"] = np.where(np.isnan(x3).all(-1), -1, np.argmin(masked, -1))
    want["nanargmax/None"] = np.nanargmax(x1)
    want["ptp/0"] = np.ptp(x3, axis=0)
    want["ptp/keep"] = np.ptp(x1, keepdims=True)
    want["count/(1,2)"] = np.count_nonzero(x3, axis=(1, 2))
    want["count/keep"] = np.count_nonzero(x3 > 0, axis=-1, keepdims=True)
    rtol = 2e-6 if dtype == np.float32 else 1e-13
    for key, value in want.items():
        result = np.asarray(got[key])
        assert result.shape == np.shape(value), (key, result.shape, np.shape(value))
        if key.startswith(("nanarg", "count")):
            assert result.dtype == np.int32, key
            np.testing.assert_array_equal(result, value, err_msg=key)
        else:
            assert result.dtype == dtype, key
            np.testing.assert_allclose(result, value, rtol=rtol, atol=rtol, err_msg=key)


def test_nan_reductions_on_integers_empty_extents_and_ties() -> None:
    i = np.array([[3, -1, 7], [0, 0, 2]], np.int32)
    assert np.asarray(tnp.nansum(i, axis=1)).tolist() == [9, 2]
    assert np.asarray(tnp.nanprod(i, axis=0)).tolist() == [0, 0, 14]
    assert np.asarray(tnp.nanmax(i, axis=-1)).tolist() == [7, 2]
    assert np.asarray(tnp.nanargmin(i, axis=1)).tolist() == [1, 0]
    assert np.asarray(tnp.ptp(i)).tolist() == 8
    assert np.asarray(tnp.nansum(np.array([1, 2], np.int8))).dtype == np.int32  # as tnp.sum
    empty = np.zeros((3, 0), np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.nansum(empty, axis=1)), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(tnp.nanprod(empty, axis=1)), np.ones(3))
    assert np.isnan(np.asarray(tnp.nanmean(empty, axis=1))).all()
    np.testing.assert_array_equal(np.asarray(tnp.count_nonzero(empty, axis=0)), np.zeros(0))
    # NaNs count as -inf (+inf for nanargmin) in the search, as in NumPy and JAX: one before a real -inf wins
    x = np.array([np.nan, -np.inf, np.nan, -np.inf], np.float32)
    assert int(tnp.nanargmax(x)) == np.nanargmax(x) == 0 and int(tnp.nanargmin(-x)) == np.nanargmin(-x) == 0
    assert int(tnp.nanargmax(np.full(3, np.nan))) == -1
    assert float(tnp.nanvar(np.array([1.0, np.nan]), ddof=1)) != float(tnp.nanvar(np.array([1.0, np.nan]), ddof=1))


def test_average(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    w1 = rng.uniform(0.1, 1, 4)
    wf = rng.uniform(0.1, 1, (3, 4))
    out = ts.program(lambda x, w1, wf: {
        "plain": tnp.average(x), "axis": tnp.average(x, axis=0), "w1": tnp.average(x, axis=1, weights=w1),
        "wf": tnp.average(x, axis=(0, 1), weights=wf), "ret": tnp.average(x, -1, wf, returned=True, keepdims=True),
        "ret_plain": tnp.average(x, axis=0, returned=True),
    })(x, w1, wf)
    np.testing.assert_allclose(np.asarray(out["plain"]), np.average(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(out["axis"]), np.average(x, axis=0), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(out["w1"]), np.average(x, axis=1, weights=w1), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(out["wf"]), np.average(x, axis=(0, 1), weights=wf), rtol=1e-13)
    for got, want in zip(out["ret"], np.average(x, -1, wf, returned=True, keepdims=True)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    for got, want in zip(out["ret_plain"], np.average(x, axis=0, returned=True)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_nan_reduction_gradients_are_zero_at_nans(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 5))
    x[0, 1] = x[2, 4] = x[2, 0] = np.nan
    valid = ~np.isnan(x)
    n = valid.sum(1, keepdims=True)
    fns: dict[str, Callable[[Any], Any]] = {
        "nansum": lambda x: tnp.nansum(x), "nanmean": lambda x: tnp.sum(tnp.nanmean(x, axis=1)),
        "nanvar": lambda x: tnp.sum(tnp.nanvar(x, axis=1, ddof=1)),
        "nanstd": lambda x: tnp.sum(tnp.nanstd(x, axis=-1)), "nanmax": lambda x: tnp.sum(tnp.nanmax(x, axis=1)),
        "nanprod": lambda x: tnp.sum(tnp.nanprod(x, axis=1)),
    }
    grads = ts.program(lambda x: {name: ts.grad(f)(x) for name, f in fns.items()})(x)
    filled = np.where(valid, x, 0.0)
    mean = filled.sum(1, keepdims=True) / n
    centered = np.where(valid, x - mean, 0.0)
    std = np.sqrt((centered**2).sum(1, keepdims=True) / n)
    prod = np.where(valid, x, 1.0).prod(1, keepdims=True)
    want = {
        "nansum": valid * 1.0, "nanmean": valid / n, "nanvar": 2 * centered / (n - 1),
        "nanstd": centered / (n * std), "nanmax": (x == np.nanmax(x, 1, keepdims=True)) * 1.0,
        "nanprod": np.where(valid, prod / np.where(valid, x, 1.0), 0.0),
    }
    for name, value in want.items():
        g = np.asarray(grads[name])
        assert np.isfinite(g).all(), name
        np.testing.assert_allclose(g, value, rtol=1e-12, atol=1e-15, err_msg=name)


# ----------------------------------------------------------------------------------------- vmap, staging


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 3, 5)).astype(np.float32)
    xs[1, 0, :] = np.nan
    xs[2, 1, 3] = np.nan
    ys = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.uniform(0.1, 1, 5).astype(np.float32)

    def per_example(x: Any, y: Any) -> Any:
        return {
            "arcsinh": tnp.arcsinh(x), "logaddexp": tnp.logaddexp(x, y), "hypot": tnp.hypot(y, 2.0),
            "fmax": tnp.fmax(x, y), "nanmean": tnp.nanmean(x, axis=0), "nanargmax": tnp.nanargmax(x, axis=-1),
            "nanstd": tnp.nanstd(x, axis=1, ddof=1), "average": tnp.average(y, weights=w),
            "isclose": tnp.isclose(x, y, atol=0.5), "count": tnp.count_nonzero(x > 0, axis=1),
            "arctan2": tnp.arctan2(x, y), "cbrt": tnp.cbrt(y),
        }

    batched = ts.vmap(per_example)(xs, ys)
    single = ts.program(per_example)
    for i in range(xs.shape[0]):
        one = single(xs[i], ys[i])
        for key, value in one.items():
            np.testing.assert_allclose(np.asarray(batched[key])[i], np.asarray(value), rtol=1e-6, err_msg=key)


class Batch(ts.Dim): ...
class Feature(ts.Dim): ...


def test_staged_dims_and_errors_name_the_op_and_line() -> None:
    @ts.program
    def f(x: ts.Tensor[ts.f32, Batch, Feature]) -> Any:
        return tnp.nanmean(x, axis=Batch), tnp.nanargmax(x, axis=Feature), tnp.arcsinh(x), tnp.hypot(x, x)

    staged = f.stage(Batch=3, Feature=4)
    assert [a.dims for a in staged.out_avals] == [("Feature",), ("Batch",), ("Batch", "Feature"),
                                                   ("Batch", "Feature")]
    a, b, i = ts.Spec((2, 3), ts.f32), ts.Spec((2, 3), ts.f64), ts.Spec((2, 3), ts.i32)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...], list[str], type[Exception]]] = [
        (lambda i: tnp.arcsin(i), (i,), ["arcsin", "i32[2, 3]", "floating-point"], ts.DTypeError),
        (lambda a, b: tnp.hypot(a, b), (a, b), ["hypot", "f32[2, 3]", "f64[2, 3]"], ts.DTypeError),
        (lambda i: tnp.logaddexp(i, i), (i,), ["logaddexp", "floating-point"], ts.DTypeError),
        (lambda a: tnp.nansum(a, axis=2), (a,), ["nansum", "axis 2", "out of range"], ts.ShapeError),
        (lambda a: tnp.nanvar(a, axis=(0, 0)), (a,), ["nanvar", "repeated axis"], ts.ShapeError),
        (lambda a: tnp.nanargmax(a, axis=(0, 1)), (a,), ["nanargmax", "one axis"], ts.ShapeError),
        (lambda a: tnp.nanmax(a[:, :0], axis=1), (a,), ["nanmax", "empty axis"], ts.ShapeError),
        (lambda a: tnp.average(a, axis=0, weights=a[0]), (a,), ["average", "length of axis 0"], ts.ShapeError),
        (lambda a: tnp.average(a, weights=a[0]), (a,), ["average", "axis="], ts.ShapeError),
        (lambda a, b: tnp.average(a, axis=0, weights=b), (a, b), ["average", "dtypes"], ts.DTypeError),
        (lambda i: tnp.ptp(i > 0), (i,), ["ptp", "bool"], ts.DTypeError),
        (lambda i: tnp.nanmean(i), (i,), ["nanmean", "floating-point"], ts.DTypeError),
        (lambda a, b: tnp.isclose(a, b), (a, b), ["isclose", "dtypes"], ts.DTypeError),
    ]
    check_staging_errors(cases, "test_numpy_math.py")


def test_float_power_of_an_integer_passed_to_a_program(rng: np.random.Generator) -> None:
    """A Python int argument is a weakly typed staged int: ``x ** n`` takes x's float dtype (it once reached the
    integer square-and-multiply path and failed on float operands), for negative bases and exponents too."""
    x = rng.uniform(-3, 3, 6)
    power = ts.program(lambda x, n: x**n)
    slope = ts.program(ts.grad(lambda x, n: (x**n).sum()))
    for dtype, rtol in ((np.float32, 2e-6), (np.float64, 1e-14)):
        for n in (-3, 0, 2, 5):
            np.testing.assert_allclose(np.asarray(power(x.astype(dtype), n)), x**n, rtol=rtol)
        np.testing.assert_allclose(np.asarray(slope(x.astype(dtype), 3)), 3 * x**2, rtol=rtol)
