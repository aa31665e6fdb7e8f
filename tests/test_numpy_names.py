"""``tensorstage.numpy``'s NumPy 2 aliases, constants, dtype names and utilities, array-attribute functions, and
the float-anatomy and integer functions of ``float_math`` (``frexp``, ``ldexp``, ``modf``, ``nextafter``,
``spacing``, ``gcd``, ``lcm``, ``bitwise_count``...) against NumPy: exact results on seeded random inputs over
each dtype's whole range and at the special values, eagerly and staged; gradients, vmap and errors.

Subnormals: the bit-level functions are exact there on every platform; ``ldexp`` multiplies, so on XLA:CPU (which
flushes subnormal operands and results of arithmetic) its reference reads subnormal operands as zero and its
subnormal results may be zero (see ``float_math``'s docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from conftest import PLATFORM
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

BF16 = np.dtype(ml_dtypes.bfloat16)
SUPPORTED = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32,
                                   np.float16, np.float32, np.float64)]
INTEGERS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32)]


def _finfo(dtype: Any) -> Any:
    return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]


def _wide(rng: np.random.Generator, dtype: Any, n: int = 3000) -> np.ndarray:
    """Both signs over the dtype's whole range (log-uniform, subnormals included), a band in [-4, 4], integers
    and half-integers, and the special values."""
    info = _finfo(dtype)
    lo, hi = np.log10(float(info.smallest_subnormal)), np.log10(float(info.max))
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, -3.0, 2.5, -2.5, np.inf, -np.inf, np.nan, float(info.max),
               -float(info.max), float(info.tiny), -float(info.tiny), float(info.smallest_subnormal),
               -float(info.smallest_subnormal) * 3, float(info.eps), 1e4, -1e4]
    halves = np.round(rng.uniform(-50, 50, 200) * 2) / 2
    values = [signs * 10.0 ** rng.uniform(lo, hi, n), rng.uniform(-4, 4, n), halves, np.array(special)]
    with np.errstate(over="ignore"):
        return np.concatenate(values).astype(dtype)


def _same(got: Any, want: np.ndarray, zero_sign: bool = True) -> None:
    """Equal values, NaNs in the same places, and (unless told) the same signs of zeros."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((g == w) | (np.isnan(g) & np.isnan(w)))
    if zero_sign:
        bad |= (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    assert not bad.any(), (np.flatnonzero(bad)[:8], g[bad][:8], w[bad][:8])


# ------------------------------------------------------------------------------- aliases and constants


def test_aliases_constants_and_dtype_names() -> None:
    aliases = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
               "atan2": "arctan2", "atanh": "arctanh", "concat": "concatenate", "pow": "power",
               "bitwise_invert": "invert", "around": "round"}
    for alias, name in aliases.items():
        assert getattr(tnp, alias) is getattr(tnp, name), alias
    assert (tnp.pi, tnp.e, tnp.inf, tnp.euler_gamma) == (np.pi, np.e, np.inf, np.euler_gamma)
    assert np.isnan(tnp.nan) and tnp.newaxis is None
    x = tnp.arange(3.0)
    assert x[tnp.newaxis].shape == (1, 3) and tnp.concat([x, x], axis=0).shape == (6,)
    np.testing.assert_array_equal(np.asarray(tnp.pow(x, 2.0)), [0.0, 1.0, 4.0])
    names = {"bool_": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
             "uint8": np.uint8, "uint32": np.uint32, "float16": np.float16, "bfloat16": BF16, "float32": np.float32,
             "float64": np.float64}
    for name, numpy_type in names.items():
        dtype = getattr(tnp, name)
        assert tnp.zeros(2, dtype=dtype).dtype == np.dtype(numpy_type), name
        assert x.astype(dtype).dtype == np.dtype(numpy_type), name
        assert tnp.isdtype(np.dtype(numpy_type), dtype), name
    assert tnp.uint16 is ts.u16 and tnp.uint64 is ts.u64 and np.dtype(tnp.uint64) == np.uint64
    staged = ts.program(lambda v: (v.astype(tnp.int8), tnp.zeros(2, dtype=tnp.bfloat16)))(np.arange(3.0))
    assert [np.asarray(a).dtype for a in staged] == [np.int8, BF16]


# ---------------------------------------------------------------------------------------- dtype utilities


def test_finfo_and_iinfo() -> None:
    for dtype in (tnp.float16, tnp.bfloat16, tnp.float32, tnp.float64):
        info, want = tnp.finfo(dtype), _finfo(dtype.numpy)
        assert (info.eps, info.max, info.tiny, info.bits, info.dtype) == (want.eps, want.max, want.tiny, want.bits,
                                                                          want.dtype)
    assert tnp.finfo(float).dtype == np.float32  # Python float is tensorstage's default float
    assert tnp.finfo(np.zeros(2)).dtype == np.float64 and tnp.finfo(tnp.ones(2)).dtype == np.float32
    assert tnp.finfo("float16").max == np.finfo(np.float16).max
    for dtype in INTEGERS:
        assert (tnp.iinfo(dtype).min, tnp.iinfo(dtype).max) == (np.iinfo(dtype).min, np.iinfo(dtype).max)
    assert tnp.iinfo(tnp.uint32).max == 2**32 - 1 and tnp.iinfo(int).bits == 32
    with pytest.raises(ValueError, match="finfo"):
        tnp.finfo(tnp.int8)
    with pytest.raises(ValueError, match="iinfo"):
        tnp.iinfo(tnp.float32)
    with pytest.raises(TypeError, match="category"):
        tnp.finfo(tnp.floating)


def test_issubdtype_and_isdtype_match_numpy() -> None:
    categories = [(np.generic, tnp.generic), (np.number, tnp.number), (np.integer, tnp.integer),
                  (np.signedinteger, tnp.signedinteger), (np.unsignedinteger, tnp.unsignedinteger),
                  (np.floating, tnp.floating), (np.inexact, tnp.inexact), (np.bool_, tnp.bool_)]
    for dtype in SUPPORTED:
        for numpy_kind, ours in categories:
            want = np.issubdtype(dtype, numpy_kind)
            assert tnp.issubdtype(dtype, numpy_kind) == want, (dtype, numpy_kind)
            assert tnp.issubdtype(dtype, ours) == want, (dtype, ours)
        for other in SUPPORTED:
            assert tnp.issubdtype(dtype, other) == np.issubdtype(dtype, other)
    assert tnp.issubdtype(tnp.bfloat16, tnp.floating) and tnp.issubdtype(BF16, np.inexact)
    assert not tnp.issubdtype(tnp.bfloat16, np.integer) and not tnp.issubdtype(tnp.bfloat16, tnp.float16)
    assert tnp.issubdtype(tnp.floating, tnp.number) and not tnp.issubdtype(tnp.float32, np.complexfloating)
    kinds: list[Any] = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
                        "numeric", ("bool", "real floating"), np.dtype(np.int8)]
    for dtype in SUPPORTED:
        for kind in kinds:
            assert tnp.isdtype(dtype, kind) == np.isdtype(dtype, kind), (dtype, kind)
    assert tnp.isdtype(tnp.bfloat16, "real floating") and tnp.isdtype(BF16, "numeric")
    assert tnp.isdtype(tnp.zeros(2).dtype, tnp.float32) and tnp.isdtype(BF16, (tnp.integer, tnp.floating))
    assert not tnp.isdtype(tnp.uint8, tnp.signedinteger) and tnp.isdtype(tnp.bool_, tnp.generic)
    with pytest.raises(ValueError, match="kind 'float'"):
        tnp.isdtype(tnp.float32, "float")


def test_can_cast_result_type_and_promote_types() -> None:
    for a in SUPPORTED:
        for b in SUPPORTED:
            assert tnp.promote_types(a, b) == np.promote_types(a, b), (a, b)
            assert tnp.result_type(a, b) == np.result_type(a, b), (a, b)
            for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
                assert tnp.can_cast(a, b, casting) == np.can_cast(a, b, casting), (a, b, casting)
    # bfloat16 promotes as float16 does, and with float16 to float32
    assert tnp.promote_types(tnp.bfloat16, tnp.float16) == np.float32
    assert tnp.promote_types(tnp.bfloat16, tnp.uint8) == BF16 and tnp.result_type(BF16, tnp.float64) == np.float64
    assert tnp.promote_types(tnp.bfloat16, tnp.int32) == np.float64
    assert tnp.can_cast(tnp.bfloat16, tnp.float32) and not tnp.can_cast(tnp.float16, tnp.bfloat16)
    # Python scalars are weak: they adopt an array's dtype (NumPy 2), alone or across kinds tensorstage's defaults
    x8, f16 = tnp.zeros(2, dtype=tnp.int8), tnp.zeros(2, dtype=tnp.float16)
    assert tnp.result_type(x8, 1) == np.int8 and tnp.result_type(f16, 1.0, 2) == np.float16
    assert tnp.result_type(1.0) == np.float32 and tnp.result_type(1) == np.int32 and tnp.result_type(True) == np.bool_
    assert tnp.result_type(x8, 1.0) == np.float32 and tnp.result_type(np.bool_, 1) == np.int32
    assert tnp.result_type(np.ones(2), x8, tnp.float16) == np.float64
    assert tnp.can_cast(x8, tnp.int16) and not tnp.can_cast(tnp.float64, f16)
    with pytest.raises(ValueError, match="at least one"):
        tnp.result_type()
    with pytest.raises(TypeError, match="weak"):
        tnp.can_cast(1.0, tnp.float32)
    with pytest.raises(ValueError, match="casting"):
        tnp.can_cast(tnp.int8, tnp.int16, "sometimes")
    with pytest.raises(ts.DTypeError, match="add"):  # the answer says what to convert to; ops still refuse
        tnp.add(x8, f16)


# ---------------------------------------------------------------------------------------- array attributes


class Batch(ts.Dim): ...
class Feature(ts.Dim): ...


def test_shape_functions_eager_and_staged() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    for a in (x, tnp.asarray(x), x.tolist()):
        assert tnp.ndim(a) == 3 and tnp.shape(a) == (2, 3, 4) and tnp.size(a) == 24
        assert tnp.size(a, 1) == 3 and tnp.size(a, -1) == 4 and tnp.size(a, (0, 2)) == 8
    assert tnp.ndim(1.5) == 0 and tnp.shape(2) == () and tnp.size(3) == 1

    @ts.program
    def f(v: ts.Tensor[ts.f32, Batch, Feature]) -> Any:
        assert tnp.ndim(v) == 2 and tnp.shape(v) == (5, 3) and tnp.size(v, Feature) == 3
        assert tnp.isscalar(v[0, 0]) and not tnp.isscalar(v)
        return tnp.copy(v) + tnp.real(v) + tnp.imag(v), tnp.iscomplex(v), tnp.isreal(v)

    v = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    total, iscomplex, isreal = f(v)
    np.testing.assert_array_equal(np.asarray(total), 2 * v)
    assert not np.asarray(iscomplex).any() and np.asarray(isreal).all() and np.asarray(isreal).shape == (5, 3)
    assert [a.dims for a in f.stage(Batch=5, Feature=3).out_avals] == [("Batch", "Feature")] * 3
    with pytest.raises(ts.ShapeError, match="size.*axis 3"):
        tnp.size(tnp.asarray(x), 3)
    with pytest.raises(ValueError):
        tnp.size(x, 3)


def test_copy_real_imag_and_complex_predicates() -> None:
    a = tnp.asarray(np.arange(4, dtype=np.int16))
    c = tnp.copy(a)
    assert isinstance(c, ts.Array) and c is not a and c.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(c), np.arange(4))
    np.testing.assert_array_equal(np.asarray(tnp.copy(np.arange(3.0))), np.arange(3.0))
    assert tnp.real(a).dtype == np.int16 and np.asarray(tnp.imag(a)).tolist() == [0, 0, 0, 0]
    assert tnp.imag(a).dtype == np.int16
    assert not tnp.iscomplexobj(a) and tnp.isrealobj(a) and tnp.iscomplexobj(np.array([1j]))
    assert not tnp.isrealobj(np.array([1j])) and tnp.isrealobj(np.ones(2))
    assert tnp.isscalar(1.0) and tnp.isscalar(np.float32(1)) and not tnp.isscalar([1.0]) and tnp.isscalar(a[0])
    assert not tnp.isscalar(np.array(1.0)) and not tnp.isscalar(a)  # NumPy's answer for 0-d ndarrays
    with pytest.raises(ValueError, match="copy.*order"):
        tnp.copy(a, order="F")


def test_array_equal_and_equiv(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    x[0, 1] = np.nan
    y = x.copy()
    y[2, 3] += 1
    row = np.where(np.isnan(x[1]), 0.0, x[1])
    tiled = np.tile(row, (3, 1))
    cases: list[tuple[str, Callable[..., Any], tuple[Any, ...], bool]] = [
        ("equal nan", lambda a, b: tnp.array_equal(a, b), (x, x), False),
        ("equal_nan", lambda a, b: tnp.array_equal(a, b, equal_nan=True), (x, x), True),
        ("different", lambda a, b: tnp.array_equal(a, b, equal_nan=True), (x, y), False),
        ("shapes", lambda a, b: tnp.array_equal(a, b), (x, x[:2]), False),
        ("no broadcast", lambda a, b: tnp.array_equal(a, b), (tiled, row), False),
        ("equiv", lambda a, b: tnp.array_equiv(a, b), (tiled, row), True),
        ("equiv outer", lambda a, b: tnp.array_equiv(a, b), (row[:, None], row), False),
        ("equiv ones", lambda a, b: tnp.array_equiv(a, b), (np.ones((4, 1)), np.ones(3)), True),
        ("equiv no", lambda a, b: tnp.array_equiv(a, b), (tiled, x[:2]), False),
        ("empty", lambda a, b: tnp.array_equal(a, b), (x[:0], y[:0]), True),
    ]
    staged = ts.program(lambda args: [f(*a) for _, f, a, _ in cases])([a for _, _, a, _ in cases])
    for (name, f, args, want), got in zip(cases, staged, strict=True):
        assert np.asarray(got).shape == () and np.asarray(got).dtype == np.bool_, name
        assert bool(got) is want, name
        assert bool(f(*args)) is want, name  # eager
        assert bool(np.array_equiv(*args) if "equiv" in name else np.array_equal(*args, equal_nan="_" in name)) \
            is want, name
    assert bool(tnp.array_equal(np.arange(3), tnp.arange(3).astype(tnp.int64)))
    assert bool(tnp.array_equiv(tnp.full(3, 2.0), 2.0)) and not bool(tnp.array_equal(tnp.full(3, 2.0), 2.0))
    with pytest.raises(ts.DTypeError, match="array_equal.*different dtypes"):
        tnp.array_equal(tnp.ones(3), tnp.ones(3, dtype=tnp.float64))
    with pytest.raises(ts.DTypeError, match="array_equiv"):
        tnp.array_equiv(tnp.ones(3), tnp.ones(2, dtype=tnp.int32))


# ------------------------------------------------------------------------------- taking floats apart

FLOAT_DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]


def _exponents(rng: np.random.Generator, dtype: Any, n: int) -> np.ndarray:
    limit = 2 * (_finfo(dtype).maxexp - 1) + _finfo(dtype).nmant + 10
    k = rng.integers(-limit, limit, n)
    k[:6] = [0, 1, -1, 2**31 - 1, -(2**31), limit]
    return k.astype(np.int32)


def _anatomy(x: Any, y: Any, k: Any) -> dict[str, Any]:
    mantissa, exponent = tnp.frexp(x)
    fraction, whole = tnp.modf(x)
    return {"frexp_m": mantissa, "frexp_e": exponent, "modf_f": fraction, "modf_w": whole, "spacing": tnp.spacing(x),
            "nextafter": tnp.nextafter(x, y), "ldexp": tnp.ldexp(x, k), "fabs": tnp.fabs(x),
            "isposinf": tnp.isposinf(x), "isneginf": tnp.isneginf(x), "around": tnp.around(x, 2)}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_float_anatomy_matches_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x = _wide(rng, dtype)
    y = rng.permutation(x)
    y[:40] = x[:40]  # equal pairs: nextafter returns y
    y[40:60] = np.array([np.inf, -np.inf, 0.0, -0.0] * 5, dtype)
    k = _exponents(rng, dtype, x.size)
    got = ts.program(_anatomy)(x, y, k)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        mantissa, exponent = np.frexp(x64)
        _same(got["frexp_m"], mantissa.astype(dtype))
        _same(got["frexp_e"], exponent)
        fraction, whole = np.modf(x64)
        _same(got["modf_f"], fraction.astype(dtype))
        _same(got["modf_w"], whole.astype(dtype))
        _same(got["fabs"], np.abs(x))
        _same(got["isposinf"], np.isposinf(x64))
        _same(got["isneginf"], np.isneginf(x64))
        _same(got["around"], np.asarray(tnp.round(x, 2)))  # the same function (tested in test_numpy_ufuncs)
        if dtype != BF16:  # NumPy has neither for bfloat16
            spacing = np.spacing(x)
            if dtype == np.float16:  # NumPy's float16 loop steps toward +inf for negatives too: as float32/64 here
                away = np.nextafter(x, np.copysign(np.inf, x).astype(dtype)).astype(np.float64) - x64
                spacing = np.where(x == 0, spacing, away.astype(dtype))
            _same(got["spacing"], spacing)
            # equal operands: C's nextafter returns y; NumPy's float16 loop returns x (they differ only at ±0)
            _same(got["nextafter"], np.nextafter(x, y), zero_sign=dtype != np.float16)
        # XLA:CPU flushes subnormals; it computes float16 in float32, where float16's are normal numbers
        flushes = PLATFORM == "cpu" and dtype != np.float16
        tiny = float(_finfo(dtype).tiny)
        flushed = np.where(np.abs(x64) < tiny, 0.0 * x64, x64) if flushes else x64
        want = np.ldexp(flushed, k.astype(np.int64)).astype(dtype)  # exact in float64 but where it is subnormal
        ldexp = np.asarray(got["ldexp"])
        normal = ~((np.abs(want.astype(np.float64)) < tiny) & (want != 0))
        _same(ldexp[normal], want[normal])
        # subnormal results: zero where the platform flushes them, else within one subnormal ulp (double rounding)
        error = np.abs(ldexp[~normal].astype(np.float64) - want[~normal].astype(np.float64))
        assert (ldexp[~normal] == 0).all() if flushes else (error <= float(_finfo(dtype).smallest_subnormal)).all()


def test_eager_calls_python_scalars_and_ldexp_exponent_dtypes(rng: np.random.Generator) -> None:
    assert tnp.frexp(np.float32(12.0))[1].dtype == np.int32
    m, e = tnp.frexp(np.array([12.0, -0.375]))
    np.testing.assert_array_equal(np.asarray(m), [0.75, -0.75])
    np.testing.assert_array_equal(np.asarray(e), [4, -1])
    f, w = tnp.modf(np.float32(-2.25))
    assert (float(f), float(w)) == (-0.25, -2.0) and f.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(tnp.ldexp(1.5, np.array([1, 2], np.int8))), [3.0, 6.0])
    assert tnp.ldexp(1.5, np.array([1], np.int8)).dtype == np.float32  # a Python float is float32 here
    x = rng.standard_normal(6)
    for dtype in INTEGERS + [np.dtype(np.bool_)]:
        k = rng.integers(-5, 6, 6).astype(dtype) if dtype != np.bool_ else rng.random(6) < 0.5
        np.testing.assert_array_equal(np.asarray(tnp.ldexp(x, k)), np.ldexp(x, k.astype(np.int64)), err_msg=str(dtype))
    huge = np.array([np.iinfo(np.uint32).max], np.uint32)
    np.testing.assert_array_equal(np.asarray(tnp.ldexp(np.array([1e-300]), huge)), [np.inf])
    np.testing.assert_array_equal(np.asarray(tnp.ldexp(np.ones((2, 3)), np.arange(3))), [[1.0, 2.0, 4.0]] * 2)
    assert float(tnp.ldexp(np.float32(3.0), 10**30)) == np.inf and float(tnp.ldexp(np.float32(3.0), -(10**30))) == 0.0
    assert float(tnp.nextafter(np.float32(1.0), 2.0)) == np.nextafter(np.float32(1), np.float32(2))
    np.testing.assert_array_equal(np.asarray(tnp.isposinf(np.array([1, -2]))), [False, False])


# ------------------------------------------------------------------------------------------- integers


def _integers(rng: np.random.Generator, dtype: Any, n: int = 600) -> np.ndarray:
    info = np.iinfo(dtype)
    wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
    small = rng.integers(max(info.min, -60), 61, n).astype(dtype)
    special = np.array([0, 0, 1, info.max, info.min, info.max - 1, 12, 18], dtype=np.int64).astype(dtype)
    return np.concatenate([wide, small, special])


@pytest.mark.parametrize("dtype", INTEGERS, ids=lambda d: d.name)
def test_gcd_lcm_and_bitwise_count_match_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x = _integers(rng, dtype)
    y = rng.permutation(x)
    y[-8:] = np.array([0, 5, 0, 0, 0, 7, 18, 12], np.int64).astype(dtype)  # gcd(0, 0), (MIN, 0), ...
    got = ts.program(lambda a, b: (tnp.gcd(a, b), tnp.lcm(a, b), tnp.bitwise_count(a), tnp.gcd(a, 6)))(x, y)
    with np.errstate(over="ignore"):
        want = (np.gcd(x, y), np.lcm(x, y), np.bitwise_count(x), np.gcd(x, dtype.type(6)))
    for g, w, name in zip(got, want, ("gcd", "lcm", "bitwise_count", "gcd scalar"), strict=True):
        assert np.asarray(g).dtype == w.dtype, name
        np.testing.assert_array_equal(np.asarray(g), w, err_msg=name)
    np.testing.assert_array_equal(np.asarray(tnp.gcd(x[:5], y[:5])), np.gcd(x[:5], y[:5]))  # eager


def test_integer_functions_on_bools_broadcasts_and_empties() -> None:
    flags = np.array([True, False, True])
    np.testing.assert_array_equal(np.asarray(tnp.bitwise_count(flags)), np.bitwise_count(flags))
    assert tnp.bitwise_count(flags).dtype == np.uint8
    a = np.array([[4], [6], [0]], np.int32)
    b = np.array([[6, 9, 0, -15]], np.int32)
    np.testing.assert_array_equal(np.asarray(tnp.gcd(a, b)), np.gcd(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.lcm(a, b)), np.lcm(a, b))
    np.testing.assert_array_equal(np.asarray(tnp.gcd(np.int64(12), 18)), 6)
    assert np.asarray(tnp.lcm(np.zeros((0, 2), np.int16), np.int16(3))).shape == (0, 2)


# ------------------------------------------------------------------------------------- transforms


def _central(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.uniform(-5, 5, 8)
    x[:2] = [-3.0, 2.0]  # modf at integers: the fraction's derivative is 1 there too
    k = rng.integers(-4, 5, 8).astype(np.int32)

    def loss(v: Any) -> Any:
        fraction, whole = tnp.modf(v)
        return tnp.sum(tnp.fabs(v) * 3 + tnp.ldexp(v, k) + fraction * 5 + whole + tnp.around(v, 1))

    g = np.asarray(ts.grad(loss)(x))
    want = 3 * np.sign(x) + np.ldexp(1.0, k) + 5
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(g[2:], _central(lambda v: 3 * np.abs(v) + np.ldexp(v, k[2:]) + 5 * np.modf(v)[0], x[2:]),
                               rtol=1e-6)
    # the bit-level functions have zero gradients, as in jax.numpy
    zero = ts.grad(lambda v: tnp.sum(tnp.frexp(v)[0] + tnp.nextafter(v, 0.0) + tnp.spacing(v)))(x)
    np.testing.assert_array_equal(np.asarray(zero), 0.0)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 5)) * 100
    ks = rng.integers(-60, 60, (4, 5)).astype(np.int32)
    ns = rng.integers(-1000, 1000, (4, 5)).astype(np.int32)

    def per_example(x: Any, k: Any, n: Any) -> Any:
        mantissa, exponent = tnp.frexp(x)
        return {"frexp_m": mantissa, "frexp_e": exponent, "ldexp": tnp.ldexp(x, k), "gcd": tnp.gcd(n, k),
                "lcm": tnp.lcm(n, 7), "nextafter": tnp.nextafter(x, 0.0), "count": tnp.bitwise_count(n),
                "equal": tnp.array_equal(x, x), "equiv": tnp.array_equiv(n, n[:1])}

    batched = ts.vmap(per_example)(xs, ks, ns)
    single = ts.program(per_example)
    for i in range(xs.shape[0]):
        for key, value in single(xs[i], ks[i], ns[i]).items():
            np.testing.assert_array_equal(np.asarray(batched[key])[i], np.asarray(value), err_msg=key)


# ----------------------------------------------------------------------------------------------- errors


def test_errors_name_the_op_and_line() -> None:
    f32, f64, i32 = ts.Spec((2, 3), ts.f32), ts.Spec((2, 3), ts.f64), ts.Spec((2, 3), ts.i32)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...], list[str], type[Exception]]] = [
        (lambda a: tnp.gcd(a, a), (f32,), ["gcd", "integer operands", "f32[2, 3]"], ts.DTypeError),
        (lambda a: tnp.lcm(a > 0, a > 0), (i32,), ["lcm", "integer operands", "bool"], ts.DTypeError),
        (lambda a, b: tnp.gcd(a, b), (i32, f32), ["gcd", "different dtypes"], ts.DTypeError),
        (lambda a: tnp.fabs(a), (i32,), ["fabs", "floating-point", "i32[2, 3]"], ts.DTypeError),
        (lambda a: tnp.frexp(a), (i32,), ["frexp", "floating-point"], ts.DTypeError),
        (lambda a: tnp.modf(a), (i32,), ["modf", "floating-point"], ts.DTypeError),
        (lambda a: tnp.spacing(a), (i32,), ["spacing", "floating-point"], ts.DTypeError),
        (lambda a, b: tnp.nextafter(a, b), (f32, f64), ["nextafter", "f32[2, 3]", "f64[2, 3]"], ts.DTypeError),
        (lambda a: tnp.nextafter(a, a), (i32,), ["nextafter", "floating-point"], ts.DTypeError),
        (lambda a, b: tnp.ldexp(a, b), (f32, f32), ["ldexp", "integer exponent", "f32[2, 3]"], ts.DTypeError),
        (lambda a: tnp.ldexp(a, 2), (i32,), ["ldexp", "floating-point"], ts.DTypeError),
        (lambda a: tnp.ldexp(a, 1.5), (f32,), ["ldexp", "integer exponent", "1.5"], ts.DTypeError),
        (lambda a, b: tnp.ldexp(a, b[:, :2]), (f32, i32), ["ldexp", "broadcast"], ts.ShapeError),
        (lambda a: tnp.bitwise_count(a), (f32,), ["bitwise_count", "integer or bool", "f32[2, 3]"], ts.DTypeError),
        (lambda a: tnp.size(a, 2), (f32,), ["size", "axis 2", "out of range"], ts.ShapeError),
        (lambda a, b: tnp.array_equal(a, b), (f32, f64), ["array_equal", "different dtypes"], ts.DTypeError),
    ]
    check_staging_errors(cases, "test_numpy_names.py")
    with pytest.raises(ts.DTypeError, match="gcd"):
        tnp.gcd(np.ones(2), np.ones(2))  # eager, float64
    with pytest.raises(ts.DTypeError, match="fabs"):
        tnp.fabs(np.arange(3))
