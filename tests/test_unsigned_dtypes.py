"""uint16 and uint64 end to end: names, promotion, arithmetic, bit operations, reductions, sorting, indexing,
casts and bitcasts, random bits, transfers and lowering, against NumPy (exact) on seeded inputs that include 0
and the dtype's maximum, staged and eagerly, with JAX as the oracle for promotion and random bits when installed.

u64 is native, as i64 is: values past 2**63 keep every bit through arithmetic, comparisons, sorting and transfers.
Deliberate differences (shared with the other integer dtypes, see prelude/numpy/names.py and reductions.py):
- ``promote_types`` between an integer and a float (or complex) dtype is NumPy's (u16 with f16 is f32, u64 with
  f32 is f64); JAX keeps the float. Between integer dtypes NumPy's and JAX's answers agree, and so do these.
- sums, products and cumulative sums of u16 accumulate in u32 (as JAX's ``sum`` without x64 does); u64 in u64.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax
from tensorstage import numpy as tnp

U16, U64 = np.dtype(np.uint16), np.dtype(np.uint64)
NEW = (U16, U64)
BF16 = np.dtype(ml_dtypes.bfloat16)
SUPPORTED = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]
SUPPORTED.insert(10, BF16)

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the hard-coded tables below are JAX's (and NumPy's) answers
    jax = jnp = None


def _values(dtype: np.dtype[Any], rng: np.random.Generator, n: int = 24) -> np.ndarray:
    """0, 1, the top values and the sign-bit boundary of the same width, then random values over the whole range."""
    top = int(np.iinfo(dtype).max)
    edges = np.array([0, 1, 2, 3, top, top - 1, top // 2, top // 2 + 1, 255, 256], dtype)
    return np.concatenate([edges, rng.integers(0, top, n, dtype, endpoint=True)])


def _same(got: Any, want: Any, what: str) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype, g.shape, w.shape)
    assert np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"), f"{what}: got {g[:8]}, want {w[:8]}"


# ------------------------------------------------------------------------------------------- names and types


def test_names_dtypes_and_printing() -> None:
    assert ts.u16 is tnp.uint16 and ts.u64 is tnp.uint64 and tnp.uint is ts.u64  # NumPy's and JAX's uint
    assert np.dtype(ts.u16) == np.uint16 and ts.u64.dtype == np.uint64 and issubclass(ts.u64, ts.Unsigned)
    assert tnp.iinfo(tnp.uint16).max == 2**16 - 1 and tnp.iinfo(tnp.uint64).max == 2**64 - 1
    assert tnp.iinfo(tnp.uint64).bits == 64 and tnp.iinfo(np.uint64).min == 0
    for dt in NEW:
        assert tnp.isdtype(dt, "unsigned integer") and tnp.issubdtype(dt, tnp.unsignedinteger)
        assert not tnp.issubdtype(dt, tnp.signedinteger) and tnp.zeros(2, dtype=dt).dtype == dt
    top = ts.asarray(np.array([0, 2**64 - 1], np.uint64))
    assert "dtype=u64" in repr(top) and "18446744073709551615" in repr(top)
    assert "dtype=u16" in repr(ts.asarray(np.array([65535], np.uint16)))
    staged = ts.program(lambda v, w: (v >> 3) + w.astype(ts.u64)).stage(np.zeros(3, U64), np.zeros(3, U16))
    assert "u64[3]" in str(staged) and "u16[3]" in str(staged)
    for platform in ("cpu", "gpu"):
        text = staged.stablehlo(platform)
        assert "tensor<3xui64>" in text and "tensor<3xui16>" in text and "shift_right_logical" in text


def _jax_promote(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(jnp.promote_types(a, b))


# JAX's and NumPy's promotion of the new dtypes with every integer dtype and bool (they agree).
INTEGER_TABLE = {
    U16: {"bool": "uint16", "int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64",
          "uint8": "uint16", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"},
    U64: {"bool": "uint64", "int8": "float64", "int16": "float64", "int32": "float64", "int64": "float64",
          "uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "uint64": "uint64"},
}


def test_promotion_of_the_new_dtypes() -> None:
    for new in NEW:
        for other in SUPPORTED:
            got = tnp.promote_types(new, other)
            assert got == tnp.promote_types(other, new) == tnp.result_type(new, other), (new, other)
            if other.kind in "biu":  # integers and bool: JAX's lattice
                want = np.dtype(INTEGER_TABLE[new][other.name])
                assert got == want, (new, other, got, want)
                if jnp is not None:
                    assert got == _jax_promote(new, other), (new, other, got)
            elif other != BF16:
                assert got == np.promote_types(new, other), (new, other, got)  # NumPy's, deliberately
    assert tnp.promote_types(tnp.uint16, tnp.bfloat16) == np.float32  # as NumPy's float16 would
    # weak Python scalars adopt the array's dtype, or give the default of their kind
    for new in NEW:
        assert tnp.result_type(new, 1) == new and tnp.result_type(new, True) == new
        assert tnp.result_type(new, 1.0) == np.float32 and tnp.result_type(new, 1j) == np.complex64
    if jax is not None:
        with jax.enable_x64(True):
            for new in NEW:
                assert np.dtype(jnp.result_type(new, 1)) == new and np.dtype(jnp.result_type(new, True)) == new


def test_python_scalars_and_lists() -> None:
    x = ts.asarray(np.array([1, 2], np.uint64))
    _same(x + (2**64 - 2), np.array([2**64 - 1, 0], np.uint64), "u64 + a scalar past 2**63 (wraps)")
    _same(ts.asarray(np.array([1, 2], np.uint16)) * 40000, np.array([40000, 14464], np.uint16), "u16 * 40000")
    for fn, dt, text in [(lambda v: v + 2**16, U16, "does not fit u16"), (lambda v: v - 2**64, U64, "does not fit u64"),
                         (lambda v: v + -1, U64, "does not fit u64"), (lambda v: v * 0.5, U16, "float scalar")]:
        with pytest.raises(ts.DTypeError, match=text):
            fn(ts.asarray(np.ones(2, dt)))
    assert tnp.full((2,), 2**64 - 1, dtype=tnp.uint64).dtype == U64
    _same(tnp.arange(3, dtype=tnp.uint16), np.arange(3, dtype=U16), "arange u16")


# ---------------------------------------------------------------------------------------- numerics vs NumPy


def _ops(x: Any, y: Any, s: Any, idx: Any) -> dict[str, Any]:
    """Everything checked on one dtype, run as one staged program and eagerly."""
    safe = tnp.maximum(y, 1)
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "floordiv": x // safe, "mod": x % safe, "max": tnp.maximum(x, y),
        "lt": x < y, "ge": x >= y, "eq": x == y, "and": x & y, "or": x | y, "xor": x ^ y, "invert": ~x,
        "shl": x << s, "shr": x >> s, "popcount": lax.population_count(x), "clz": lax.clz(x),
        "bitwise_count": tnp.bitwise_count(x), "sum": tnp.sum(x), "prod": tnp.prod(y[:6]), "cumsum": tnp.cumsum(x),
        "row_sums": x.reshape(2, -1).sum(axis=1), "max_red": tnp.max(x), "min_red": tnp.min(x), "argmax": tnp.argmax(x),
        "sort": tnp.sort(x), "argsort": tnp.argsort(x, stable=True), "take": x[idx], "where": tnp.where(x > y, x, y),
        "scatter_add": x.at[idx].add(y[: idx.shape[0]]), "scatter_max": x.at[idx].max(y[: idx.shape[0]]),
        "searchsorted": tnp.searchsorted(tnp.sort(x), y), "f64": x.astype(tnp.float64), "f32": x.astype(tnp.float32),
        "i64": x.astype(tnp.int64), "u8": x.astype(tnp.uint8), "u32": x.astype(tnp.uint32),
    }


def _reference(x: np.ndarray, y: np.ndarray, s: np.ndarray, idx: np.ndarray) -> dict[str, Any]:
    dt = x.dtype
    bits = 8 * dt.itemsize
    acc = np.uint32 if dt == U16 else dt  # u16 accumulates in u32
    safe = np.maximum(y, 1)
    wide_shift = s.astype(np.int64) >= bits
    scatter_add, scatter_max = x.copy(), x.copy()
    np.add.at(scatter_add, idx, y[: idx.size])
    np.maximum.at(scatter_max, idx, y[: idx.size])
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "floordiv": x // safe, "mod": x % safe, "max": np.maximum(x, y),
        "lt": x < y, "ge": x >= y, "eq": x == y, "and": x & y, "or": x | y, "xor": x ^ y, "invert": ~x,
        "shl": np.where(wide_shift, 0, x << np.minimum(s, bits - 1)).astype(dt),
        "shr": np.where(wide_shift, 0, x >> np.minimum(s, bits - 1)).astype(dt),
        "popcount": np.bitwise_count(x).astype(dt),
        "clz": np.array([bits - int(v).bit_length() for v in x], dt),
        "bitwise_count": np.bitwise_count(x), "sum": np.sum(x, dtype=acc), "prod": np.prod(y[:6], dtype=acc),
        "cumsum": np.cumsum(x, dtype=acc), "row_sums": x.reshape(2, -1).sum(axis=1, dtype=acc),
        "max_red": np.max(x), "min_red": np.min(x), "argmax": np.int32(np.argmax(x)), "sort": np.sort(x),
        "argsort": np.argsort(x, kind="stable").astype(np.int32), "take": x[idx], "where": np.where(x > y, x, y),
        "scatter_add": scatter_add, "scatter_max": scatter_max,
        "searchsorted": np.searchsorted(np.sort(x), y).astype(np.int32), "f64": x.astype(np.float64),
        "f32": x.astype(np.float32), "i64": x.astype(np.int64), "u8": x.astype(np.uint8), "u32": x.astype(np.uint32),
    }


def _inputs(rng: np.random.Generator) -> dict[str, tuple[np.ndarray, ...]]:
    out = {}
    for dt in NEW:
        x = _values(dt, rng)
        y = np.concatenate([x[:2], x[2:][::-1]])  # ties, zeros against the maximum and random pairs
        bits = 8 * dt.itemsize
        s = np.resize(np.array([0, 1, bits - 1, bits, bits + 5, 3, 7], dt), x.size)
        idx = np.array([0, 4, 4, x.size - 1, 2], np.int32)  # a repeated index: scatter combines both
        out[dt.name] = (x, y, s, idx)
    return out


def test_ops_match_numpy_staged_and_eager(rng: np.random.Generator) -> None:
    inputs = _inputs(rng)
    staged = ts.program(lambda ins: {k: _ops(*v) for k, v in ins.items()})(inputs)
    for name, args in inputs.items():
        want = _reference(*args)
        for op, value in want.items():
            _same(staged[name][op], value, f"staged {op} {name}")
    x, y, s, idx = (ts.asarray(a) for a in inputs["uint64"])
    eager = {"mul": x * y, "shr": x >> s, "sort": tnp.sort(x), "sum": tnp.sum(x), "clz": lax.clz(x)}
    for op, value in eager.items():
        _same(value, staged["uint64"][op], f"eager {op}")
    _same(tnp.unique(x), np.unique(inputs["uint64"][0]), "eager unique u64")


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    for dt in NEW:
        rows = _values(dt, rng, 26).reshape(3, 12)

        def f(v: Any) -> Any:
            return (v * 3) ^ (v >> 1), tnp.sum(v), tnp.max(v), tnp.sort(v)

        batched = ts.vmap(f)(rows)
        for i in range(3):
            for b, one in zip(batched, ts.program(f)(rows[i])):
                _same(np.asarray(b)[i], one, f"vmap row {i} {dt}")


def test_casts_saturate_and_bitcasts_keep_bits(rng: np.random.Generator) -> None:
    floats = np.array([np.nan, -1.0, -np.inf, np.inf, 0.5, 1.5, 65535.7, 7e4, 2.0**63, 2.0**64, 1e30, 2.0**64 - 2048])

    def saturated(dt: np.dtype[Any], v: np.ndarray) -> np.ndarray:  # truncate; NaN -> 0; saturate (JAX's on CPU)
        top = int(np.iinfo(dt).max)
        return np.array([0 if np.isnan(f) else min(max(int(np.trunc(f)) if np.isfinite(f) else int(np.sign(f)) * 2**70,
                                                           0), top) for f in v.astype(np.float64)], dt)

    def run(f64: Any, f32: Any, u16: Any, u64: Any) -> Any:
        return (f64.astype(tnp.uint64), f64.astype(tnp.uint16), f32.astype(tnp.uint64), f32.astype(tnp.uint16),
                lax.bitcast_convert_type(u16, np.float16), lax.bitcast_convert_type(u16, BF16),
                lax.bitcast_convert_type(u16, np.int16), lax.bitcast_convert_type(u64, np.float64),
                lax.bitcast_convert_type(u64, np.int64),
                lax.bitcast_convert_type(lax.bitcast_convert_type(u64, np.float64), np.uint64),
                lax.bitcast_convert_type(lax.bitcast_convert_type(u16, np.float16), np.uint16))

    u16, u64 = _values(U16, rng), _values(U64, rng)
    f32 = floats.astype(np.float32)
    got = ts.program(run)(floats, f32, u16, u64)
    for k, (dt, src) in enumerate([(U64, floats), (U16, floats), (U64, f32), (U16, f32)]):
        _same(got[k], saturated(dt, src), f"astype {src.dtype} -> {dt}")
    for k, (view, width) in enumerate([(np.float16, U16), (BF16, U16), (np.int16, U16), (np.float64, U64),
                                       (np.int64, U64)], start=4):
        source = u16 if width == U16 else u64
        g = np.asarray(got[k])
        assert g.dtype == view and np.array_equal(g.view(width), source), f"bitcast {width} -> {view}"
    _same(got[9], u64, "u64 -> f64 -> u64 bitcast round trip")
    _same(got[10], u16, "u16 -> f16 -> u16 bitcast round trip")


# ------------------------------------------------------------------------------------------------ random


RANDINT = ((np.uint16, 5, 60000), (np.uint64, 5, 2**64 - 1), (np.int64, -(2**62), 2**40))


def _draws(key: Any) -> dict[str, Any]:
    """Every draw checked, in one program (Threefry compiles slowly). Element i's bits depend on the key and i only
    (JAX's partitionable layout), so a longer draw starts with a shorter one's values."""
    out = {np.dtype(dt).name: ts.random.bits(key, (4000,), dtype=dt) for dt in (ts.u16, ts.u64, np.uint8)}
    out["uint32"] = ts.random.bits(key, (4000,))  # the default
    out.update({f"randint {np.dtype(dt)}": ts.random.randint(key, (2000,), lo, hi, dt) for dt, lo, hi in RANDINT})
    for dt in NEW:
        out[f"rbg {dt}"] = lax.rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (6,), dt)[1]
    return out


def _jax_draws(key: Any) -> dict[str, Any]:
    out = {np.dtype(dt).name: jax.random.bits(key, (50,), dt) for dt in NEW}
    for dt, lo, hi in RANDINT:
        out[f"randint {np.dtype(dt)}"] = jax.random.randint(key, (50,), dt(lo), dt(hi), dt)
    for dt in NEW:
        out[f"rbg {dt}"] = jax.lax.rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (6,), dt)[1]
    return out


def test_random_bits_randint_and_rng_bit_generator() -> None:
    key = ts.random.key(7)
    got = {k: np.asarray(v) for k, v in ts.program(_draws)(key).items()}
    b16, b64, b8 = got["uint16"], got["uint64"], got["uint8"]
    assert b16.dtype == U16 and b64.dtype == U64 and b8.dtype == np.uint8
    _same(b16, got["uint32"].astype(U16), "u16 bits are the low half of the u32 bits")
    for b in (b16, b64):  # every bit position is set about half the time
        width = 8 * b.dtype.itemsize
        frequency = ((b[:, None] >> np.arange(width, dtype=b.dtype)) & 1).mean(axis=0)
        assert np.all(np.abs(frequency - 0.5) < 0.04), frequency
    assert len(np.unique(b64)) == b64.size and b64.max() > 2**63  # the top bit is drawn too
    for dt, lo, hi in RANDINT:
        draw = got[f"randint {np.dtype(dt)}"]
        assert draw.dtype == dt and draw.min() >= lo and draw.max() < hi, (dt, draw.min(), draw.max())
        assert draw.max() > lo + (hi - lo) * 0.99, dt  # reaches the top of the range
    _same(ts.random.bits(key, (3,), dtype=ts.u64), b64[:3], "eager u64 bits")
    with pytest.raises(ts.DTypeError, match="bits come in an unsigned dtype"):
        ts.random.bits(key, (2,), dtype=ts.i32)
    if jax is not None:  # the same numbers as JAX's from the same key (threefry, partitionable layout)
        with jax.enable_x64(True):
            want = jax.jit(_jax_draws)(jax.random.PRNGKey(7))
            for name, value in want.items():
                _same(got[name][: value.shape[0]], np.asarray(value), name)


# ------------------------------------------------------------------------------------- transfers and IO


def test_transfers_files_and_collectives_round_trip(tmp_path: Any) -> None:
    for dt in NEW:
        host = np.array([[0, 1, np.iinfo(dt).max], [np.iinfo(dt).max // 2 + 1, 7, 255]], dt)
        on_device = ts.device_put(host)
        _same(on_device, host, f"device_put {dt}")
        _same(ts.device_get(on_device), host, f"device_get {dt}")
        _same(tnp.frombuffer(host.tobytes(), dtype=dt), host.ravel(), f"frombuffer {dt}")
        tnp.save(tmp_path / f"{dt}.npy", on_device)
        _same(tnp.load(tmp_path / f"{dt}.npy"), host, f"save and load {dt}")
        _same(ts.program(lambda v: v)(host), host, f"program argument and result {dt}")
    words = np.array([[2**64 - 1, 5, 2**63]], np.uint64)
    collectives = ts.pmap(lambda v: (ts.psum(v, "i"), ts.pmax(v, "i"), ts.all_gather(v, "i")), axis_name="i")
    total, top, gathered = collectives(words)
    _same(total, words, "psum u64")
    _same(top, words, "pmax u64")
    _same(gathered, words[None], "all_gather u64")
    pairs = np.array([[2**64 - 1], [2]], np.uint64)
    _same(ts.vmap(lambda v: ts.psum(v, "i"), axis_name="i")(pairs), np.array([[1], [1]], np.uint64), "psum wraps")
