"""ts.lax's fft, mulhi, index_take, scatter_apply, ragged dots, conv_general_dilated_local, rng_bit_generator and
staging tools (prelude/lax/: fourier, integer_math, indexed, ragged, convolution_local, random_bits,
staging_tools): values against NumPy float64 / exact integer references and against jax (when installed), eager
and staged, gradients, vmap, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax

SEED = 20261127


def _rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


def _jax() -> Any:
    return pytest.importorskip("jax")


# ------------------------------------------------------------------------------------------------- fft


def test_fft_kinds_match_numpy_eager_and_staged() -> None:
    rng = _rng()
    x = rng.standard_normal((3, 4, 6))
    z = x + 1j * rng.standard_normal((3, 4, 6))

    @ts.program
    def kinds(x: Any, z: Any) -> Any:
        return (lax.fft(z, lax.FftType.FFT, (4, 6)), lax.fft(z, "ifft", (6,)), lax.fft(x, "RFFT", (6,)),
                lax.fft(lax.fft(x, "rfft", (4, 6)), lax.FftType.IRFFT, (4, 6)), lax.fft(x, "FFT", (6,)))

    fwd, inv, real, back, promoted = kinds(x, z)
    np.testing.assert_allclose(np.asarray(fwd), np.fft.fft2(z), atol=1e-12)
    np.testing.assert_allclose(np.asarray(inv), np.fft.ifft(z), atol=1e-12)
    np.testing.assert_allclose(np.asarray(real), np.fft.rfft(x), atol=1e-12)
    np.testing.assert_allclose(np.asarray(back), x, atol=1e-12)
    assert np.asarray(promoted).dtype == np.complex128  # a real operand of FFT becomes complex, as in JAX
    np.testing.assert_allclose(np.asarray(promoted), np.fft.fft(x), atol=1e-12)
    f32 = x.astype(np.float32)
    eager = lax.fft(f32, "FFT", ())  # no axes: the operand, converted
    assert np.asarray(eager).dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(eager), f32.astype(np.complex64))


def test_fft_errors() -> None:
    z = np.ones((2, 4), np.complex64)
    with pytest.raises(TypeError, match="unknown FFT type"):
        lax.fft(z, "dct", (4,))
    with pytest.raises(ts.DTypeError, match="RFFT takes real operands"):
        lax.fft(z, "RFFT", (4,))
    with pytest.raises(ts.ShapeError, match="needs trailing axes"):
        lax.fft(z, "FFT", (5,))


# ----------------------------------------------------------------------------------------------- mulhi


def test_mulhi_is_the_exact_high_half_for_every_integer_width() -> None:
    rng = _rng()
    kinds = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32)
    pairs = []
    for kind in kinds:
        info = np.iinfo(kind)
        a = rng.integers(info.min, info.max, size=64, dtype=kind, endpoint=True)
        b = rng.integers(info.min, info.max, size=64, dtype=kind, endpoint=True)
        a[:4], b[:4] = [info.min, info.max, info.min, info.max], [info.min, info.min, info.max, info.max]
        pairs += [a, b]

    @ts.program
    def highs(*xs: Any) -> Any:
        return tuple(lax.mulhi(xs[i], xs[i + 1]) for i in range(0, len(xs), 2))

    for kind, got, a, b in zip(kinds, highs(*pairs), pairs[::2], pairs[1::2]):
        bits = np.iinfo(kind).bits
        mask = (1 << bits) - 1
        want = np.array([(int(p) * int(q) >> bits) & mask for p, q in zip(a, b)], np.uint64)
        assert np.asarray(got).dtype == kind
        np.testing.assert_array_equal(np.asarray(got), want.astype(kind), err_msg=kind.__name__)
    with pytest.raises(ts.DTypeError, match="integer operands"):
        lax.mulhi(np.ones(3, np.float32), np.ones(3, np.float32))


# ------------------------------------------------------------------------------------- gathers, scatters


def test_index_take_wraps_indices_like_jax() -> None:
    src = _rng().standard_normal((5, 4, 3))
    rows, cols = np.array([0, 4, -1, 7], np.int32), np.array([1, 2, 0, -3], np.int32)
    got = np.asarray(lax.index_take(src, (rows, cols), (0, 2)))
    np.testing.assert_array_equal(got, src[rows % 5, :, cols % 3])
    with pytest.raises(ts.ShapeError, match="one index array per axis"):
        lax.index_take(src, (rows,), (0, 2))


def test_scatter_apply_applies_once_per_hit() -> None:
    x = np.arange(8.0).reshape(4, 2)
    idx = np.array([[1], [3], [1], [9]], np.int32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    got = lax.scatter_apply(x, idx, lambda v: v * 2 + 1, dn, update_shape=(4, 2))
    want = x.copy()
    for i in (1, 3, 1):  # the out-of-range window is dropped (FILL_OR_DROP)
        want[i] = want[i] * 2 + 1
    np.testing.assert_array_equal(np.asarray(got), want)
    clipped = lax.scatter_apply(x, idx, lambda v: v + 10, dn, update_shape=(4, 2), mode="clip")
    np.testing.assert_array_equal(np.asarray(clipped), x + np.array([[0], [20], [0], [20]]))  # 9 clipped to 3
    jax = pytest.importorskip("jax")
    theirs = jax.lax.scatter_apply(jax.numpy.asarray(x), idx, lambda v: v * 2 + 1, jax.lax.ScatterDimensionNumbers(
        (1,), (0,), (0,)), update_shape=(4, 2))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(theirs))


# ------------------------------------------------------------------------------------------ ragged dots


def _ragged_reference(lhs: np.ndarray, rhs: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out = np.zeros((lhs.shape[0], rhs.shape[2]))
    start = 0
    for g, n in enumerate(sizes):
        out[start:start + n] = lhs[start:start + n] @ rhs[g]
        start += n
    return out


def test_ragged_dot_values_gradients_and_vmap() -> None:
    rng = _rng()
    lhs, rhs = rng.standard_normal((9, 4)), rng.standard_normal((3, 4, 5))
    sizes = np.array([3, 0, 4], np.int32)  # an empty group, and two rows past the last group (zero)
    ct = rng.standard_normal((9, 5))

    def loss(a: Any, b: Any) -> Any:
        return (lax.ragged_dot(a, b, sizes) * ct).sum()

    value, (g_lhs, g_rhs) = ts.value_and_grad(loss, argnums=(0, 1))(lhs, rhs)
    np.testing.assert_allclose(float(np.asarray(value)), (_ragged_reference(lhs, rhs, sizes) * ct).sum(), rtol=1e-12)
    group = np.repeat([0, 1, 2, -1], [3, 0, 4, 2])  # each row's group (-1: none)
    want_lhs = np.stack([ct[i] @ rhs[g].T if g >= 0 else np.zeros(4) for i, g in enumerate(group)])
    want_rhs = np.stack([lhs[group == g].T @ ct[group == g] for g in range(3)])
    np.testing.assert_allclose(np.asarray(g_lhs), want_lhs, atol=1e-12)
    np.testing.assert_allclose(np.asarray(g_rhs), want_rhs, atol=1e-12)

    batch_sizes = np.array([[2, 3, 4], [0, 9, 0], [5, 1, 1]], np.int32)
    lhs_b = rng.standard_normal((3, 9, 4))
    mapped = ts.vmap(lambda a, s: lax.ragged_dot(a, rhs, s))(lhs_b, batch_sizes)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(mapped)[i], _ragged_reference(lhs_b[i], rhs, batch_sizes[i]), atol=1e-12)
    jax = pytest.importorskip("jax")
    f32 = lhs.astype(np.float32), rhs.astype(np.float32)
    np.testing.assert_allclose(np.asarray(lax.ragged_dot(*f32, sizes)), np.asarray(jax.lax.ragged_dot(*f32, sizes)),
                               rtol=1e-6, atol=1e-6)


def test_ragged_dot_general_contracting_and_batch_modes() -> None:
    rng = _rng()
    sizes = np.array([2, 3, 1], np.int32)
    lhs, rhs = rng.standard_normal((4, 6)), rng.standard_normal((6, 5))
    contracting = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
    got = np.asarray(lax.ragged_dot_general(lhs, rhs, sizes, contracting))
    ends = np.cumsum(sizes)
    want = np.stack([lhs[:, e - n:e] @ rhs[e - n:e] for n, e in zip(sizes, ends)])
    np.testing.assert_allclose(got, want, atol=1e-12)
    lhs_b, rhs_b = rng.standard_normal((6, 2, 3)), rng.standard_normal((6, 3, 4))
    batch = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
    np.testing.assert_allclose(np.asarray(lax.ragged_dot_general(lhs_b, rhs_b, sizes, batch)), lhs_b @ rhs_b,
                               atol=1e-12)


def test_ragged_dot_errors() -> None:
    lhs, rhs = np.ones((4, 2), np.float32), np.ones((3, 2, 5), np.float32)
    with pytest.raises(ts.ShapeError, match="one size per group") as info:
        lax.ragged_dot(lhs, rhs, np.array([1, 3], np.int32))
    assert "test_lax_extras_more.py" in str(info.value)  # the user's line
    with pytest.raises(ts.DTypeError, match="1-d integer array"):
        lax.ragged_dot(lhs, rhs, np.ones((2, 3), np.int32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs, rhs, np.array([1, 1, 2], np.int32), group_offset=np.zeros(1, np.int32))
    with pytest.raises(ts.ShapeError, match=r"lhs \[m, k\] and rhs \[g, k, n\]"):
        lax.ragged_dot(lhs, rhs[0], np.array([4], np.int32))


# ------------------------------------------------------------------------------------------ convolution


def test_conv_general_dilated_local_is_a_kernel_per_position() -> None:
    rng = _rng()
    x = rng.standard_normal((2, 3, 5, 4))  # N C H W
    out_h, out_w = 4, 2  # window 2x3, stride 1, VALID
    k = rng.standard_normal((6, 3 * 2 * 3, out_h, out_w))  # O, C * prod(filter), out H, out W
    got = np.asarray(lax.conv_general_dilated_local(x, k, (1, 1), "VALID", (2, 3)))
    want = np.zeros((2, 6, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            patch = x[:, :, i:i + 2, j:j + 3].reshape(2, -1)  # channel-major, then window position (JAX's order)
            want[:, :, i, j] = patch @ k[:, :, i, j].T
    np.testing.assert_allclose(got, want, atol=1e-12)
    jax = pytest.importorskip("jax")
    nhwc = ("NHWC", "HWIO", "NHWC")
    xs, ks = x.transpose(0, 2, 3, 1).astype(np.float32), k.transpose(2, 3, 1, 0).astype(np.float32)
    ours = lax.conv_general_dilated_local(xs, ks, (1, 1), "VALID", (2, 3), dimension_numbers=nhwc)
    theirs = jax.lax.conv_general_dilated_local(xs, ks, (1, 1), "VALID", (2, 3), dimension_numbers=nhwc)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------- random bits


def test_rng_bit_generator_matches_jax_bit_for_bit() -> None:
    jax = _jax()
    key = np.array([7, 0xFFFFFFFF, 123456789, 0], np.uint32)

    @ts.program
    def draws(key: Any) -> Any:
        return tuple(lax.rng_bit_generator(key, (3, 7), dtype, algorithm)
                     for algorithm in (lax.RandomAlgorithm.RNG_THREE_FRY, lax.RandomAlgorithm.RNG_PHILOX)
                     for dtype in (np.uint32, np.uint8))

    ours = draws(key)
    i = 0
    for algorithm in (jax.lax.RandomAlgorithm.RNG_THREE_FRY, jax.lax.RandomAlgorithm.RNG_PHILOX):
        for dtype in (np.uint32, np.uint8):
            new_key, bits = jax.lax.rng_bit_generator(key, (3, 7), dtype, algorithm)
            np.testing.assert_array_equal(np.asarray(ours[i][0]), np.asarray(new_key))
            np.testing.assert_array_equal(np.asarray(ours[i][1]), np.asarray(bits))
            assert np.asarray(ours[i][1]).dtype == dtype
            i += 1


def test_rng_bit_generator_vmap_draws_per_key_and_errors() -> None:
    keys = _rng().integers(0, 2**32, size=(3, 4), dtype=np.uint32)

    def draw(k: Any) -> Any:
        return lax.rng_bit_generator(k, (5,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)

    new_keys, bits = ts.vmap(draw)(keys)
    for i in range(3):
        k, b = draw(keys[i])
        np.testing.assert_array_equal(np.asarray(new_keys)[i], np.asarray(k))
        np.testing.assert_array_equal(np.asarray(bits)[i], np.asarray(b))
    assert len(set(map(tuple, np.asarray(bits)))) == 3
    staged = ts.program(draw).stage(ts.Spec((4,), np.uint32))
    assert "stablehlo.rng_bit_generator" in staged.stablehlo("gpu")
    with pytest.raises(ts.DTypeError, match="u32\\[4\\]"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(ts.DTypeError, match="u8, u16, u32 or u64"):
        lax.rng_bit_generator(keys[0], (3,), np.int32)
    with pytest.raises(ValueError, match="RandomAlgorithm"):
        lax.rng_bit_generator(keys[0], (3,), algorithm=7)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- staging tools


def test_platform_dependent_composite_and_small_tools() -> None:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    branches = {"cpu": lambda v: v + 1, "cuda": lambda v: v - 1}
    picked = ts.program(lambda v: lax.platform_dependent(v, default=lambda v: v * 0, **branches))(x)
    np.testing.assert_array_equal(np.asarray(picked), x + (1 if ts.default_backend() == "cpu" else -1))
    with pytest.raises(ValueError, match="'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=lambda v: v)
    with pytest.raises(ValueError, match="no branch for platform"):
        lax.platform_dependent(x, tpu=lambda v: v)

    softmax = lax.composite(lambda v, *, axis: ts.nn.softmax(v, axis=axis), "my.softmax")
    np.testing.assert_allclose(np.asarray(softmax(x, axis=1)).sum(1), 1.0, rtol=1e-6)
    with pytest.raises(TypeError, match="attributes are static"):
        ts.program(lambda v: softmax(v, axis=v))(x)

    assert lax.dtype(1.0) == np.float32 and lax.dtype(True) == np.bool_ and lax.dtype(x) == np.float32
    assert lax.dtype(ts.f64) == np.float64 and lax.dtype("int8") == np.int8 and lax.dtype(np.int16(3)) == np.int16
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), np.array([2, 3], np.int32))
    assert lax.shape_as_value(()).shape == (0,)
    assert np.asarray(lax.empty((2, 3), np.float32)).shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(lax.stage(x)), x)
    assert lax.Precision("highest") is lax.Precision.HIGHEST and str(lax.Precision.HIGH) == "HIGH"
    product = lax.dot(x, x.T, precision=lax.DotAlgorithmPreset.F32_F32_F32)  # advisory: full precision
    np.testing.assert_allclose(np.asarray(product), x @ x.T, rtol=1e-6)
