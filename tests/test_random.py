"""``ts.random``: Threefry known answers, a NumPy reference of the bit layout, distributions, determinism
inside and outside programs, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import special, stats

import tensorstage as ts
from conftest import PLATFORM, jax_platform
from tensorstage import Dim, Tensor, f32, i32, u32
from tensorstage.prelude.numpy._core import as_tensor, wrap
from tensorstage.prelude.random._keys import key_words
from tensorstage.prelude.random._threefry import threefry2x32

# ----------------------------------------------------------------------------------- a NumPy reference

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry_np(k0: int, k1: int, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32, 20 rounds, in NumPy uint32 arithmetic (wrap-around is what we want)."""
    mask = 0xFFFFFFFF
    ks = [np.uint32(k0), np.uint32(k1), np.uint32(k0 ^ k1 ^ 0x1BD11BDA)]
    x0, x1 = x0.astype(np.uint32) + ks[0], x1.astype(np.uint32) + ks[1]
    with np.errstate(over="ignore"):
        for group in range(5):
            for r in _ROTATIONS[group % 2]:
                x0 = x0 + x1
                x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) & mask
                x1 = (x0 ^ x1).astype(np.uint32)
            x0 = x0 + ks[(group + 1) % 3]
            x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x0.astype(np.uint32), x1.astype(np.uint32)


def _bits_np(key: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    count = int(np.prod(shape))
    hi, lo = _threefry_np(int(key[0]), int(key[1]), np.zeros(count, np.uint32), np.arange(count, dtype=np.uint32))
    return (hi ^ lo).reshape(shape)


# --------------------------------------------------------------------------------------------- keys, bits


@ts.program
def _threefry_block(key: Tensor[u32, Any], counter: Tensor[u32, Any]) -> tuple[Tensor[u32], Tensor[u32]]:
    k0, k1 = key_words(as_tensor(key).atom)
    x0, x1 = key_words(as_tensor(counter).atom)
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    return wrap(y0), wrap(y1)


@pytest.mark.parametrize(
    ("key", "counter", "expected"),
    [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_known_answers(key: tuple[int, int], counter: tuple[int, int], expected: tuple[int, int]) -> None:
    # The Random123 known-answer vectors for threefry2x32 with 20 rounds.
    y0, y1 = _threefry_block(np.array(key, np.uint32), np.array(counter, np.uint32))
    assert (int(y0), int(y1)) == expected


def test_key_words_for_python_seeds() -> None:
    assert np.asarray(ts.random.key(42)).tolist() == [0, 42]
    assert np.asarray(ts.random.key(2**40 + 7)).tolist() == [256, 7]
    assert np.asarray(ts.random.key(-1)).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    assert ts.random.key(0).dtype == np.uint32


@pytest.mark.parametrize("seed", [-5, -1, 0, 7, 2**31 - 1])
def test_a_seed_gives_one_key_staged_or_not(seed: int) -> None:
    expected = np.asarray(ts.random.key(seed)).tolist()
    from_program = ts.program(lambda s: ts.random.key(s))
    assert np.asarray(from_program(seed)).tolist() == expected  # a Python int staged as an i32 scalar
    for dtype in (np.int32, np.int64):
        assert np.asarray(ts.random.key(ts.asarray(dtype(seed)))).tolist() == expected


def test_bits_split_and_fold_in_match_the_numpy_reference() -> None:
    key = ts.random.key(1234)
    host = np.asarray(key)
    np.testing.assert_array_equal(np.asarray(ts.random.bits(key, (3, 4))), _bits_np(host, (3, 4)))
    hi, lo = _threefry_np(int(host[0]), int(host[1]), np.zeros(3, np.uint32), np.arange(3, dtype=np.uint32))
    for i, sub in enumerate(ts.random.split(key, 3)):
        assert np.asarray(sub).tolist() == [hi[i], lo[i]]
    a, b = _threefry_np(int(host[0]), int(host[1]), np.zeros(1, np.uint32), np.array([7], np.uint32))
    assert np.asarray(ts.random.fold_in(key, 7)).tolist() == [a[0], b[0]]


def test_fold_in_of_64_bit_data_keeps_the_high_word() -> None:
    """Data in [-2**31, 2**32) folds like the same Python int (and like jax.random.fold_in); 64-bit values past
    that fold their high word in as well, so 2**32 does not alias 0 (jax truncates it)."""
    key = ts.random.key(3)
    host = np.asarray(key)
    for value in (5, -1, 2**32 - 1):
        expected = np.asarray(ts.random.fold_in(key, value)).tolist()
        for dtype in (np.int64, np.int32, np.uint32):
            if np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                assert np.asarray(ts.random.fold_in(key, ts.asarray(dtype(value)))).tolist() == expected
    for value in (2**32, 2**40 + 9, -(2**31) - 1, -(2**62)):
        word = np.asarray([value], np.int64).view(np.uint32)  # little-endian: (low, high)
        a, b = _threefry_np(int(host[0]), int(host[1]), word[1:2], word[0:1])
        assert np.asarray(ts.random.fold_in(key, ts.asarray(np.int64(value)))).tolist() == [a[0], b[0]]
        assert np.asarray(ts.random.fold_in(key, ts.asarray(np.int64(value)))).tolist() != (
            np.asarray(ts.random.fold_in(key, int(word[0]))).tolist())


def test_same_numbers_inside_and_outside_programs() -> None:
    class Rows(Dim, size=4): ...

    @ts.program
    def draw(key: Tensor[u32, Any], seed: Tensor[i32]) -> Any:
        k1, k2, k3 = ts.random.split(key, 3)
        return (
            ts.random.uniform(k1, (Rows, 3)),
            ts.random.normal(k2, (5,)),
            ts.random.randint(k3, (6,), -3, 9),
            ts.random.key(seed),
            ts.random.fold_in(key, seed),
        )

    key = ts.random.key(7)
    inside = draw(key, np.int32(11))
    k1, k2, k3 = ts.random.split(key, 3)
    outside = (
        ts.random.uniform(k1, (4, 3)),
        ts.random.normal(k2, (5,)),
        ts.random.randint(k3, (6,), -3, 9),
        ts.random.key(11),
        ts.random.fold_in(key, 11),
    )
    for a, b in zip(inside, outside):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert inside[0].dims == ("Rows", None)  # fixed-size Dim classes name the axes of a draw
    again = draw(key, np.int32(11))
    np.testing.assert_array_equal(np.asarray(again[1]), np.asarray(inside[1]))


def test_staged_draws_typecheck() -> None:
    def draws(key: Tensor[u32, Any]) -> Any:
        k1, k2, k3, k4, k5, k6 = ts.random.split(ts.random.fold_in(key, 3), 6)
        logits = ts.random.normal(k2, (2, 3))
        return (
            ts.random.uniform(k1, (2, 3), ts.f64),
            ts.random.bernoulli(k3, 0.25, (4,)),
            ts.random.categorical(k4, logits),
            ts.random.randint(k5, (3,), 0, 7),
            ts.random.permutation(k6, logits),
        )

    staged = ts.program(draws).stage(ts.Spec((2,), u32))
    staged.typecheck()
    assert [str(a) for a in staged.out_avals] == ["f64[2, 3]", "bool[4]", "i32[2]", "i32[3]", "f32[2, 3]"]


def test_split_keys_differ_and_are_reproducible() -> None:
    a, b = ts.random.split(ts.random.key(0))
    assert np.asarray(a).tolist() != np.asarray(b).tolist()
    c, d = ts.random.split(ts.random.key(0))
    assert np.asarray(a).tolist() == np.asarray(c).tolist()


# ------------------------------------------------------------------------------------------ distributions


def test_uniform_is_the_top_mantissa_bits_and_respects_bounds() -> None:
    key = ts.random.key(3)
    u = np.asarray(ts.random.uniform(key, (1000,)))
    expected = (_bits_np(np.asarray(key), (1000,)) >> 9).astype(np.float32) * np.float32(2.0**-23)
    np.testing.assert_array_equal(u, expected)
    scaled = np.asarray(ts.random.uniform(key, (1000,), minval=-2.0, maxval=5.0))
    assert scaled.min() >= -2.0 and scaled.max() < 5.0 and scaled.dtype == np.float32
    wide = np.asarray(ts.random.uniform(key, (1000,), ts.f64))
    assert wide.dtype == np.float64 and 0.0 <= wide.min() and wide.max() < 1.0
    assert len(np.unique(wide)) == 1000 and stats.kstest(wide, "uniform").pvalue > 1e-3
    half = np.asarray(ts.random.uniform(key, (1000,), ts.f16))
    assert half.dtype == np.float16 and half.max() < 1.0


def test_normal_is_the_inverse_cdf_of_the_same_uniforms() -> None:
    key = ts.random.key(5)
    lowest = float(np.nextafter(np.float32(-1), np.float32(0)))
    u = np.asarray(ts.random.uniform(key, (20000,), minval=lowest, maxval=1.0)).astype(np.float64)
    z = np.asarray(ts.random.normal(key, (20000,)))
    np.testing.assert_allclose(z, np.sqrt(2) * special.erfinv(u), rtol=2e-5, atol=2e-6)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    assert stats.kstest(z, "norm").pvalue > 1e-3


def test_bernoulli_frequency_and_broadcast_probabilities() -> None:
    key = ts.random.key(9)
    draws = np.asarray(ts.random.bernoulli(key, 0.3, (20000,)))
    assert draws.dtype == np.bool_ and abs(draws.mean() - 0.3) < 0.02
    p = np.array([0.0, 0.5, 1.0], np.float32)
    many = np.asarray(ts.random.bernoulli(key, p, (5000, 3)))
    assert not many[:, 0].any() and many[:, 2].all() and abs(many[:, 1].mean() - 0.5) < 0.03


class Classes(Dim): ...


def test_categorical_frequencies_follow_the_softmax() -> None:
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))

    @ts.program
    def draw(key: Tensor[u32, Any], logits: Tensor[f32, Any, Classes]) -> Any:
        return ts.random.categorical(key, logits, axis=Classes, shape=(20000, 2))

    samples = np.asarray(draw(ts.random.key(2), logits))
    assert samples.shape == (20000, 2) and samples.dtype == np.int32
    for row in range(2):
        freq = np.bincount(samples[:, row], minlength=3) / 20000
        np.testing.assert_allclose(freq, np.exp(logits[row]), atol=0.015)


def test_randint_range_and_edge_cases() -> None:
    key = ts.random.key(4)
    x = np.asarray(ts.random.randint(key, (30000,), -3, 7))
    assert x.dtype == np.int32 and x.min() == -3 and x.max() == 6
    counts = np.bincount(x + 3, minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3
    empty = np.asarray(ts.random.randint(key, (5,), 4, 4))
    np.testing.assert_array_equal(empty, 4)
    full = np.asarray(ts.random.randint(key, (1000,), -(2**31), 2**31))
    assert full.min() < -(2**30) and full.max() > 2**30
    bytes_ = np.asarray(ts.random.randint(key, (1000,), 0, 256, ts.u8))
    assert bytes_.dtype == np.uint8 and bytes_.max() > 250


def test_permutation_of_range_and_of_rows(rng: np.random.Generator) -> None:
    key = ts.random.key(8)
    perm = np.asarray(ts.random.permutation(key, 50))
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    np.testing.assert_array_equal(np.asarray(ts.random.permutation(key, 50)), perm)
    x = rng.standard_normal((6, 3)).astype(np.float32)
    rows = np.asarray(ts.random.permutation(key, x))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))  # whole rows move together
    cols = np.asarray(ts.random.permutation(key, x, axis=1))
    assert sorted(map(tuple, cols.T.tolist())) == sorted(map(tuple, x.T.tolist()))


def test_vmap_over_keys_and_grad_through_bounds() -> None:
    keys = ts.random.split(ts.random.key(6), 3)
    stacked = np.stack([np.asarray(k) for k in keys])
    batched = np.asarray(ts.vmap(lambda k: ts.random.normal(k, (4,)))(stacked))
    for row, k in zip(batched, keys):
        np.testing.assert_array_equal(row, np.asarray(ts.random.normal(k, (4,))))
    # Reparameterized: d/d(maxval) sum(minval + u * (maxval - minval)) = sum(u).
    u = np.asarray(ts.random.uniform(keys[0], (8,)))
    grad = ts.grad(lambda hi: ts.numpy.sum(ts.random.uniform(keys[0], (8,), minval=0.0, maxval=hi)))(np.float32(3.0))
    assert float(grad) == pytest.approx(float(u.sum()), rel=1e-6)


def test_matches_jax_when_installed() -> None:
    jax = pytest.importorskip("jax")
    if not jax.config.jax_threefry_partitionable:
        pytest.skip("jax uses the older threefry layout here")
    theirs = jax.random.PRNGKey(42)
    want_normal = np.asarray(jax.random.normal(theirs, (64,)))
    # Bits, uniforms and integers are exact integer and float arithmetic: equal on every platform. normal goes
    # through erfinv, whose ulps differ across platforms: equal to jax's on jax's platform (the CPU in a GPU run,
    # see conftest.jax_platform), within a few float32 ulps of it on another.
    for platform in sorted({PLATFORM, jax_platform()}):
        ours = ts.device_put(ts.random.key(42), platform)  # eager ops follow their data
        uniform = ts.random.uniform(ours, (64,))
        assert uniform.device.platform == platform
        np.testing.assert_array_equal(np.asarray(uniform), np.asarray(jax.random.uniform(theirs, (64,))))
        np.testing.assert_array_equal(
            np.asarray(ts.random.randint(ours, (64,), 0, 10)), np.asarray(jax.random.randint(theirs, (64,), 0, 10))
        )
        normal = np.asarray(ts.random.normal(ours, (64,)))
        if platform == jax_platform():
            np.testing.assert_array_equal(normal, want_normal)
        else:
            np.testing.assert_allclose(normal, want_normal, rtol=4 * np.finfo(np.float32).eps, atol=1e-6)


# ------------------------------------------------------------------------------------------------ errors


def test_errors_name_the_op_and_the_mistake() -> None:
    key = ts.random.key(0)
    with pytest.raises(ts.DTypeError, match=r"normal.*key \(u32\[2\]\)"):
        ts.random.normal(np.zeros(2, np.float32), (3,))
    with pytest.raises(ts.DTypeError, match="uniform draws floating-point values"):
        ts.random.uniform(key, (3,), ts.i32)
    with pytest.raises(ts.DTypeError, match="randint draws integers, got dtype f32"):
        ts.random.randint(key, (3,), 0, 5, ts.f32)
    with pytest.raises(ts.DTypeError, match="maxval=300 is out of range for u8"):
        ts.random.randint(key, (3,), 0, 300, ts.u8)

    class Free(Dim): ...

    with pytest.raises(ts.ShapeError, match="dim Free has no fixed size"):
        ts.random.uniform(key, (Free, 3))
    with pytest.raises(ts.ShapeError, match=r"shape \(5,\) must end with the logits' batch shape \(2,\)"):
        ts.random.categorical(key, np.zeros((2, 3), np.float32), shape=(5,))
    with pytest.raises(ts.DTypeError, match="seed"):
        ts.random.key(1.5)  # type: ignore[arg-type]


def test_split_takes_numpy_integers_and_rejects_other_counts() -> None:
    key = ts.random.key(3)
    assert [np.asarray(k).tolist() for k in ts.random.split(key, np.int64(3))] == [
        np.asarray(k).tolist() for k in ts.random.split(key, 3)
    ]
    for bad in (0, 2.0, True):
        with pytest.raises(ts.ShapeError, match="positive int"):
            ts.random.split(key, bad)  # type: ignore[arg-type]
