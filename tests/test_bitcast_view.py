"""``lax.bitcast_convert_type`` between any widths and ``x.view(dtype)``: bytes against NumPy's ``view`` (and jax's
when installed) for every pair of the twelve real dtypes, eager and staged, on seeded random bytes that include
NaN payloads (compared as bytes, never as values); vmap with the batch axis last; errors; derivatives (none)."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, lax, u8
from tensorstage import numpy as tnp
from tensorstage.staging.dtypes import bfloat16

REAL = [np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float16)] + [bfloat16] + [
    np.dtype(t) for t in (np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64)
]
PAIRS = list(itertools.product(REAL, REAL))
ROW_BYTES = 32
HERE = re.escape(__file__.rsplit("/", 1)[-1])


class Batch(Dim): ...
class In(Dim): ...


def _raw_bytes(rng: np.random.Generator) -> np.ndarray:
    """Three rows of random bytes; the first starts with NaNs that carry payloads (quiet and signalling, f64,
    f32, f16 and bf16), which a value round trip could change and a bit copy must not."""
    raw = rng.integers(0, 256, size=(3, ROW_BYTES), dtype=np.uint8)
    payloads = np.array([0x7FF8_0000_0000_0001], "<u8").view(np.uint8).tolist()
    payloads += np.array([0xFFA0_0002, 0x7FC0_1234], "<u4").view(np.uint8).tolist()
    payloads += np.array([0x7E01, 0xFD03, 0x7F81, 0xFFC1], "<u2").view(np.uint8).tolist()
    raw[0, : len(payloads)] = payloads
    return raw


def _lax_operand(x: np.ndarray, target: np.dtype[Any]) -> np.ndarray:
    """``x`` shaped for lax's rule: a widening bitcast joins a last axis of exactly the width ratio."""
    ratio = target.itemsize // x.dtype.itemsize
    return x.reshape(*x.shape[:-1], -1, ratio) if ratio > 1 else x


def _lax_reference(x: np.ndarray, target: np.dtype[Any]) -> np.ndarray:
    narrowing = x.dtype.itemsize // target.itemsize
    if narrowing > 1:
        return x.view(target).reshape(*x.shape, narrowing)
    out = _lax_operand(x, target).view(target)
    return out[..., 0] if target.itemsize > x.dtype.itemsize else out


def _same_bytes(got: Any, want: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{what}: {got.dtype}{got.shape}, not {want.shape}"
    assert got.tobytes() == want.tobytes(), f"{what}: bytes differ"


@pytest.fixture(scope="module")
def sources() -> dict[np.dtype[Any], np.ndarray]:
    raw = _raw_bytes(np.random.default_rng(20261127))
    return {d: raw.view(d) for d in REAL}


def _all_pairs(*xs: Any) -> tuple[Any, ...]:
    """lax's bitcast and the view of every pair, in ``PAIRS`` order (lax's, then the view's)."""
    by_dtype = dict(zip(REAL, xs))
    out = []
    for s, t in PAIRS:
        x = by_dtype[s]
        ratio = t.itemsize // s.itemsize
        operand = x.reshape(*x.shape[:-1], x.shape[-1] // ratio, ratio) if ratio > 1 else x
        out += [lax.bitcast_convert_type(operand, t), x.view(t)]
    return tuple(out)


UNSIGNED = {d.itemsize: d for d in REAL if d.kind == "u"}


def _flat_by_width(outs: tuple[Any, ...], concatenate: Any, as_bits: Any) -> tuple[Any, ...]:
    """The results' bits flattened and joined per width (as unsigned ints: XLA's CPU concatenation may quiet a
    bf16 NaN's payload): 4 outputs where 288 would take XLA seconds to compile."""
    groups: dict[int, list[Any]] = {n: [] for n in UNSIGNED}
    for (_, t), bits, view in zip(PAIRS, outs[::2], outs[1::2]):
        groups[t.itemsize] += [as_bits(r, UNSIGNED[t.itemsize]).reshape(-1) for r in (bits, view)]
    return tuple(concatenate(groups[n]) for n in UNSIGNED)


def _expected_by_target(xs: dict[np.dtype[Any], np.ndarray]) -> tuple[list[np.ndarray], tuple[np.ndarray, ...]]:
    """NumPy's results of every pair (in ``_all_pairs``' order) and their flat concatenations per dtype."""
    want = []
    for s, t in PAIRS:
        want += [_lax_reference(xs[s], t), xs[s].view(t)]
    return want, _flat_by_width(tuple(want), np.concatenate, np.ndarray.view)


# One program for all the pairs, shared by the tests (its compile is the cost).
ALL_PAIRS_BITS = ts.program(lambda *xs: _flat_by_width(_all_pairs(*xs), tnp.concatenate, lax.bitcast_convert_type))


def test_every_width_pair_staged_matches_numpy_bytes(sources: dict[np.dtype[Any], np.ndarray]) -> None:
    args = list(sources.values())
    want, flat = _expected_by_target(sources)
    avals = ts.make_jaxpr(_all_pairs)(*args).out_avals
    for k, (aval, w) in enumerate(zip(avals, want)):
        assert (aval.shape, aval.dtype) == (w.shape, w.dtype), f"{PAIRS[k // 2]} {'view' if k % 2 else 'lax'}"
    got = ALL_PAIRS_BITS(*args)
    for n, g, w in zip(UNSIGNED, got, flat):
        _same_bytes(g, w, f"every bitcast and view to a {n}-byte dtype")


# Eager: 36 pairs with every pair of widths and every dtype on both sides (the staged tests take all 144).
EAGER_PAIRS = [(s, REAL[(i + k) % len(REAL)]) for i, s in enumerate(REAL) for k in (1, 4, 8)]


def test_eager_views_match_numpy_bytes(sources: dict[np.dtype[Any], np.ndarray]) -> None:
    assert {(s.itemsize, t.itemsize) for s, t in EAGER_PAIRS} == {(a, b) for a in (1, 2, 4, 8) for b in (1, 2, 4, 8)}
    assert {t for _, t in EAGER_PAIRS} == set(REAL)
    for s, t in EAGER_PAIRS:
        x = sources[s]
        _same_bytes(ts.asarray(x).view(t), x.view(t), f"eager view {s} -> {t}")


def test_eager_bitcast_and_same_dtype_views() -> None:
    x = ts.asarray(np.array([[1.0, -0.0, np.inf, 2.5]], np.float32))
    assert x.view() is x and x.view(None) is x and x.view(np.float32) is x and x.view(f32) is x
    _same_bytes(lax.bitcast_convert_type(x, np.float32), np.asarray(x), "eager f32 -> f32")
    _same_bytes(lax.bitcast_convert_type(x, u8), np.asarray(x).view(np.uint8).reshape(1, 4, 4), "eager f32 -> u8")
    _same_bytes(lax.bitcast_convert_type(np.arange(8, dtype=np.uint8).reshape(2, 4), f32),
                np.arange(8, dtype=np.uint8).view(np.float32), "eager u8 -> f32")


def test_bool_and_complex_views_match_numpy(sources: dict[np.dtype[Any], np.ndarray]) -> None:
    rng = np.random.default_rng(3)
    flags = rng.random((3, 8)) < 0.5
    c64 = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    c128 = c64.astype(np.complex128)
    cases = [(flags, np.uint8), (flags, np.int16), (flags, np.float64), (c64, np.float32), (c64, np.uint8),
             (c64, np.float64), (c64, np.complex128), (c128, np.complex64), (c128, np.int16),
             (sources[np.dtype(np.float32)], np.complex64), (sources[np.dtype(np.uint16)], np.complex128)]
    got = ts.program(lambda *xs: tuple(x.view(t) for x, (_, t) in zip(xs, cases)))(*(x for x, _ in cases))
    for g, (x, t) in zip(got, cases):
        _same_bytes(g, x.view(t), f"view {x.dtype} -> {np.dtype(t)}")
    bits = np.array([[0, 1, 2, 255]], np.uint8)  # bytes other than 0 and 1 read as True, as jnp's view
    np.testing.assert_array_equal(np.asarray(ts.asarray(bits).view(np.bool_)), bits != 0)
    scalar = ts.asarray(np.complex64(1 + 2j))
    _same_bytes(scalar.view(np.uint64), np.complex64(1 + 2j).view(np.uint64), "rank-0 c64 -> u64")


def test_view_keeps_dim_names_when_the_width_is_kept() -> None:
    def f(x: Tensor[f32, Batch, In]) -> Any:
        return x.view(np.int32), x.view(np.uint8), lax.bitcast_convert_type(x, np.uint16)

    same, narrow, split = ts.program(f).stage(Batch=2, In=3).out_avals
    assert same.dims == ("Batch", "In") and narrow.dims == ("Batch", None) and split.dims == ("Batch", "In", None)


def test_chained_width_changes_compile() -> None:
    """XLA folds adjacent width-changing bitcasts into one of the wrong shape (jax fails on these): the lowering
    writes width changes without them."""
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)

    def chains(x: Any) -> Any:
        wide = lax.bitcast_convert_type(x.reshape(3, 2, 2), np.float64)
        halves = lax.bitcast_convert_type(x, np.uint16)
        return (lax.bitcast_convert_type(wide, np.uint8), lax.bitcast_convert_type(halves, np.uint8),
                x.view(np.float64).view(np.uint16), x.view(np.uint8).view(np.float16).view(np.float64))

    staged = ts.program(chains).stage(x)
    for platform in ("cpu", "gpu"):
        lines = [line for line in staged.stablehlo(platform).splitlines() if "stablehlo.bitcast_convert" in line]
        for line in lines:  # every bitcast keeps the width: its operand and result element types have one
            widths = {int(re.search(r"\d+$", t.split("x")[-1]).group()) for t in re.findall(r"tensor<([^>]*)>", line)}
            assert len(widths) == 1, line
        assert lines
    got = staged.compile()(x)
    _same_bytes(got[0], x.view(np.uint8).reshape(3, 2, 8), "f32 -> f64 -> u8")
    _same_bytes(got[1], x.view(np.uint8).reshape(3, 4, 2, 2), "f32 -> u16 -> u8")
    _same_bytes(got[2], x.view(np.uint16), "view f32 -> f64 -> u16")
    _same_bytes(got[3], x.view(np.float64), "view f32 -> u8 -> f16 -> f64")


def test_vmap_with_the_batch_axis_last() -> None:
    rng = np.random.default_rng(7)
    floats = rng.standard_normal((5, 3)).astype(np.float32)  # batch of 3, last
    bytes_ = rng.integers(0, 256, (5, 8, 3), dtype=np.uint8)  # per example (5, 8) -> f64 (5,)

    def mapped(floats: Any, bytes_: Any) -> Any:
        return (ts.vmap(lambda x: lax.bitcast_convert_type(x, u8), in_axes=-1, out_axes=-1)(floats),
                ts.vmap(lambda x: lax.bitcast_convert_type(x, np.float64), in_axes=-1, out_axes=-1)(bytes_),
                ts.vmap(lambda x: lax.bitcast_convert_type(x, np.float64), in_axes=-1)(bytes_),
                ts.vmap(lambda x: x.view(np.uint16), in_axes=-1, out_axes=-1)(floats),
                ts.vmap(lambda x: x.view(np.int32), in_axes=-1, out_axes=-1)(bytes_.reshape(5, 8, 3)))

    staged = ts.program(mapped).stage(floats, bytes_)
    staged.typecheck()
    got = staged.compile()(floats, bytes_)
    per = tuple([np.ascontiguousarray(a[..., i]) for i in range(3)] for a in (floats, bytes_))
    want = (np.stack([x.view(np.uint8).reshape(5, 4) for x in per[0]], -1),
            np.stack([b.view(np.float64)[:, 0] for b in per[1]], -1),
            np.stack([b.view(np.float64)[:, 0] for b in per[1]], 0),
            np.stack([x.view(np.uint16) for x in per[0]], -1),
            np.stack([b.view(np.int32) for b in per[1]], -1))
    for k, (g, w) in enumerate(zip(got, want)):
        _same_bytes(g, w, f"vmap case {k}")


def test_errors_name_the_op_the_operand_and_the_line() -> None:
    def joins_three(x: Tensor[u8, Batch, In]) -> Any:
        return lax.bitcast_convert_type(x, f32)

    with pytest.raises(ts.ShapeError, match=rf"bitcast_convert.*u8\[Batch=2, In=3\].*size 4(.|\n)*{HERE}:\d+"):
        ts.program(joins_three).stage(Batch=2, In=3)
    with pytest.raises(ts.ShapeError, match=r"bitcast_convert.*u8\[\].*size 4"):
        lax.bitcast_convert_type(np.uint8(1), np.float32)
    for source, target in ((np.bool_, np.uint8), (np.uint8, np.bool_), (np.complex64, np.float64),
                           (np.float32, np.complex64), (np.complex64, np.complex128)):
        with pytest.raises(ts.DTypeError, match=rf"bitcast_convert(.|\n)*bool and complex(.|\n)*{HERE}:\d+"):
            lax.bitcast_convert_type(np.zeros((2, 8), source), target)
    flags = ts.asarray(np.zeros((2, 3), np.bool_))
    _same_bytes(lax.bitcast_convert_type(flags, np.bool_), np.asarray(flags), "bool -> bool")  # as jax allows
    x = ts.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=rf"view of f32\[2, 3\] as f64: the last axis holds 12 bytes(.|\n)*{HERE}:\d+"):
        x.view(np.float64)
    with pytest.raises(ValueError, match=r"view of a rank-0 f32\[\] as u8"):
        ts.program(lambda s: s.view(np.uint8))(np.float32(1))
    with pytest.raises(TypeError, match=r"view: .*not a dtype"):
        x.view("not-a-dtype")


def test_no_derivative_flows_through_bits() -> None:
    x = np.linspace(1, 2, 6, dtype=np.float32).reshape(2, 3)
    for fn in (lambda x: lax.bitcast_convert_type(x, np.float16).astype(np.float32).sum(),
               lambda x: x.view(np.float16).astype(np.float32).sum(),
               lambda x: x.view(np.uint8).view(np.float32).sum()):
        np.testing.assert_array_equal(np.asarray(ts.grad(fn)(x)), np.zeros_like(x))
    _, tangent = ts.jvp(lambda x: lax.bitcast_convert_type(x, np.float16), (x,), (x,))
    assert np.asarray(tangent).shape == (2, 3, 2) and not np.asarray(tangent).any()


def test_matches_jax(sources: dict[np.dtype[Any], np.ndarray]) -> None:
    jax = pytest.importorskip("jax")
    from jax import numpy as jnp

    args = list(sources.values())
    ours = ALL_PAIRS_BITS(*args)
    with jax.enable_x64(True):
        def theirs(*xs: Any) -> Any:
            by_dtype = dict(zip(REAL, xs))
            out = []
            for s, t in PAIRS:
                x = by_dtype[s]
                out += [jax.lax.bitcast_convert_type(_lax_operand(x, t), t), x.view(t)]
            return _flat_by_width(tuple(out), jnp.concatenate, jax.lax.bitcast_convert_type)

        expected = jax.jit(theirs)(*args)
        for n, g, w in zip(UNSIGNED, ours, expected):
            _same_bytes(g, np.asarray(w), f"every bitcast and view to a {n}-byte dtype, against jax")
