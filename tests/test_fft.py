"""tnp.fft against numpy.fft (complex128 and complex64), its derivatives (JAX as the oracle where installed,
finite differences always), vmap, and its refusals of bad arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from directional_grads import assert_pair_grads_match
from staging_errors import check_staging_errors

NORMS = (None, "ortho", "forward")


def _transforms(fft: Any, x: Any, z: Any, norm: Any) -> dict[str, Any]:
    """Every transform of ``fft`` (``tnp.fft`` or ``np.fft``) on a real ``x`` and a complex ``z`` of shape (3, 6, 5),
    with the sizes and axes NumPy's rules give meaning to: padding, truncation, n-d over chosen axes."""
    return {
        "fft": fft.fft(z, norm=norm),
        "fft_padded": fft.fft(z, n=9, axis=1, norm=norm),
        "fft_truncated": fft.fft(z, n=2, axis=0, norm=norm),
        "fft_of_real": fft.fft(x, axis=-2, norm=norm),
        "ifft": fft.ifft(z, n=7, axis=1, norm=norm),
        "rfft": fft.rfft(x, n=7, axis=1, norm=norm),
        "irfft": fft.irfft(z, axis=1, norm=norm),
        "irfft_odd": fft.irfft(z, n=5, axis=0, norm=norm),
        "hfft": fft.hfft(z, norm=norm),
        "ihfft": fft.ihfft(x, n=4, norm=norm),
        "fft2": fft.fft2(z, norm=norm),
        "ifft2": fft.ifft2(z, s=(4, 3), axes=(0, 2), norm=norm),
        "rfft2": fft.rfft2(x, norm=norm),
        "irfft2": fft.irfft2(z, s=(5, 7), norm=norm),
        "fftn": fft.fftn(z, s=(4, 8), axes=(1, 2), norm=norm),
        "ifftn": fft.ifftn(z, axes=(0, 2), norm=norm),
        "rfftn": fft.rfftn(x, norm=norm),
        "irfftn": fft.irfftn(z, s=(3, 4, 7), axes=(0, 1, 2), norm=norm),
    }


@pytest.mark.parametrize("norm", NORMS)
def test_transforms_match_numpy_in_double_precision(norm: Any, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 6, 5))
    z = x + 1j * rng.standard_normal((3, 6, 5))
    got = ts.program(lambda a, b: _transforms(tnp.fft, a, b, norm))(x, z)
    want = _transforms(np.fft, x, z, norm)
    for name, reference in want.items():
        result = np.asarray(got[name])
        assert result.shape == reference.shape and result.dtype == reference.dtype, name
        np.testing.assert_allclose(result, reference, rtol=1e-11, atol=1e-11, err_msg=name)


def test_single_precision_gives_complex64(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 6, 5)).astype(np.float32)
    z = (x + 1j * rng.standard_normal((3, 6, 5))).astype(np.complex64)
    got = ts.program(lambda a, b: _transforms(tnp.fft, a, b, "ortho"))(x, z)
    want = _transforms(np.fft, x.astype(np.float64), z.astype(np.complex128), "ortho")
    for name, reference in want.items():
        result = np.asarray(got[name])
        single = np.complex64 if np.issubdtype(reference.dtype, np.complexfloating) else np.float32
        assert result.dtype == single, name
        np.testing.assert_allclose(result, reference, rtol=2e-5, atol=2e-5, err_msg=name)


def test_more_than_three_axes_and_round_trips(rng: np.random.Generator) -> None:
    """XLA transforms at most 3 axes at once: 5 take two ops, in the order real transforms need."""
    x = rng.standard_normal((2, 3, 2, 4, 3))
    z = x + 1j * rng.standard_normal(x.shape)

    @ts.program
    def transforms(a: Any, b: Any) -> Any:
        return (tnp.fft.fftn(b), tnp.fft.ifftn(b), tnp.fft.rfftn(a), tnp.fft.irfftn(b, s=(2, 3, 2, 4, 5)),
                tnp.fft.irfftn(tnp.fft.rfftn(a), s=a.shape), tnp.fft.ifft(tnp.fft.fft(b, axis=2), axis=2))

    got = transforms(x, z)
    want = (np.fft.fftn(z), np.fft.ifftn(z), np.fft.rfftn(x), np.fft.irfftn(z, s=(2, 3, 2, 4, 5), axes=range(5)),
            x, z)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-11, atol=1e-11)


def test_frequencies_and_shifts(rng: np.random.Generator) -> None:
    for n, d in ((7, 0.5), (8, 1.0), (1, 2.0)):
        np.testing.assert_allclose(np.asarray(tnp.fft.fftfreq(n, d)), np.fft.fftfreq(n, d), rtol=1e-7)
        np.testing.assert_allclose(np.asarray(tnp.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d), rtol=1e-7)
    assert np.asarray(tnp.fft.fftfreq(4)).dtype == np.float32
    assert np.asarray(tnp.fft.fftfreq(4, dtype=ts.f64)).dtype == np.float64
    x = rng.standard_normal((3, 5, 4))

    @ts.program
    def shifted(a: Any) -> Any:
        return (tnp.fft.fftshift(a), tnp.fft.ifftshift(a), tnp.fft.fftshift(a, axes=1),
                tnp.fft.ifftshift(a, axes=(0, 1)), tnp.fft.ifftshift(tnp.fft.fftshift(a)))

    got = shifted(x)
    want = (np.fft.fftshift(x), np.fft.ifftshift(x), np.fft.fftshift(x, axes=1), np.fft.ifftshift(x, axes=(0, 1)), x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


# ------------------------------------------------------------------------------------------- derivatives


def _spectral_loss(x: Any, y: Any, np_: Any) -> Any:
    """A real loss through every transform kind: complex, inverse, real and inverse real, padded and 2-d."""
    z = x + 1j * y if np_ is not tnp else x.astype(ts.c128) + 1j * y
    spectrum = np_.fft.fft(z, n=8) * np_.fft.rfft(x, n=14)[:8]
    back = np_.fft.irfft(spectrum, n=9) + np_.fft.ifft(z * z, norm="ortho").real[:9].sum()
    image = np_.fft.fft2(z.reshape(2, 3), norm="forward")
    return np_.sum(np_.sin(back)) + np_.sum(np_.abs(image) ** 2) + np_.sum(np_.fft.irfft2(image, s=(2, 5)) ** 2)


def test_gradients_match_finite_differences_and_jax(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal(6), rng.standard_normal(6)
    assert_pair_grads_match(_spectral_loss, x, y, rtol=1e-6, atol=1e-6, forward_tol=1e-11, jax_atol=1e-10)


def test_vmap_moves_the_batch_axis_off_the_transformed_ones(rng: np.random.Generator) -> None:
    z = rng.standard_normal((4, 3, 8)) + 1j * rng.standard_normal((4, 3, 8))
    got = ts.vmap(lambda v: tnp.fft.fft(v, axis=0), in_axes=2)(z)  # batch over the last (trailing) axis
    want = np.stack([np.fft.fft(z[..., k], axis=0) for k in range(8)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-11, atol=1e-11)
    real = rng.standard_normal((5, 6))
    np.testing.assert_allclose(np.asarray(ts.vmap(tnp.fft.rfft)(real)), np.fft.rfft(real), rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------------------------------------- errors

BAD: list[Any] = [
    (lambda z: tnp.fft.fft(z, n=0), [np.zeros(4, np.complex64)], ValueError, ["fft", "number of FFT data points (0)"]),
    (lambda z: tnp.fft.irfft(z), [np.zeros(1, np.complex64)], ValueError, ["irfft", "(0)"]),
    (lambda x: tnp.fft.fft(x), [np.zeros(4, np.int32)], ts.DTypeError, ["fft", "i32[4]", ".astype(f32)"]),
    (lambda x: tnp.fft.fft(x), [np.zeros(4, np.float16)], ts.DTypeError, ["fft", "f16[4]"]),
    (lambda z: tnp.fft.rfft(z), [np.zeros(4, np.complex64)], ts.DTypeError, ["rfft", "real operand", "c64[4]"]),
    (lambda z: tnp.fft.fft(z, axis=2), [np.zeros((2, 3), np.complex64)], ts.ShapeError, ["fft", "axis 2", "rank 2"]),
    (lambda z: tnp.fft.fftn(z, axes=(0, 0)), [np.zeros((2, 3), np.complex64)], ts.ShapeError, ["fftn", "repeated"]),
    (lambda z: tnp.fft.fftn(z, s=(2,), axes=(0, 1)), [np.zeros((2, 3), np.complex64)], ValueError,
     ["fftn", "different lengths"]),
    (lambda z: tnp.fft.fft2(z, s=(2, 2, 2)), [np.zeros((2, 3), np.complex64)], ValueError, ["fft2"]),
    (lambda z: tnp.fft.fft(z, norm="unitary"), [np.zeros(4, np.complex64)], ValueError, ["fft", "norm must be"]),
    (lambda z: tnp.fft.fft(z, axis=(0,)), [np.zeros(4, np.complex64)], TypeError, ["fft", "axis must be one"]),
]


def test_bad_arguments_raise_naming_the_op_and_the_line() -> None:
    check_staging_errors(BAD, "test_fft.py")
    with pytest.raises(ValueError, match="number of FFT data points"):
        tnp.fft.fftfreq(0)
