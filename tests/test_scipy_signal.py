"""ts.scipy.signal and ts.scipy.fft's DCTs against SciPy (float64, the oracle) inside programs and eagerly;
gradients against finite differences; vmap against a loop; and the refusals of bad arguments."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import fft as tfft
from tensorstage.scipy import signal as tsig

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

scipy_signal = pytest.importorskip("scipy.signal")
scipy_fft = pytest.importorskip("scipy.fft")

# (in1 shape, in2 shape): longer first, shorter first, 2-D both ways
SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((2, 3), (5, 6))]
MODES = ("full", "same", "valid")
BOUNDARIES = (("fill", 0.0), ("fill", 1.5), ("wrap", 0.0), ("symm", 0.0))


def _convolutions(sig: Any, pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    """Every convolution of ``sig`` (ts.scipy.signal or scipy.signal) on each pair, per mode (the FFT method and
    the boundaries of 2-D ones on the first pair of each rank)."""
    out = {}
    for p, (a, b) in enumerate(pairs):
        first = p == 0 or np.ndim(a) != np.ndim(pairs[p - 1][0])
        for mode in MODES:
            for method in ("direct", "fft") if first else ("direct",):
                out[f"convolve{p}{mode}{method}"] = sig.convolve(a, b, mode, method)
                out[f"correlate{p}{mode}{method}"] = sig.correlate(a, b, mode, method)
            # (a 'valid' result never reaches the boundary)
            for boundary, fill in BOUNDARIES[:None if first and mode != "valid" else 1] if np.ndim(a) == 2 else ():
                out[f"convolve2d{p}{mode}{boundary}{fill}"] = sig.convolve2d(a, b, mode, boundary, fill)
                out[f"correlate2d{p}{mode}{boundary}{fill}"] = sig.correlate2d(a, b, mode, boundary, fill)
    return out


def _assert_all_close(got: dict[str, Any], want: dict[str, Any], rtol: float, atol: float) -> None:
    for name, reference in want.items():
        result = np.asarray(got[name])
        assert result.shape == np.shape(reference), (name, result.shape, np.shape(reference))
        np.testing.assert_allclose(result, reference, rtol=rtol, atol=atol, err_msg=name)


def test_convolutions_match_scipy_real_and_complex(rng: np.random.Generator) -> None:
    real = [(rng.standard_normal(s1), rng.standard_normal(s2)) for s1, s2 in SHAPES]
    cplx = [(a + 1j * rng.standard_normal(a.shape), b + 1j * rng.standard_normal(b.shape)) for a, b in real[1:3]]
    got = ts.program(lambda r, c: (_convolutions(tsig, r), _convolutions(tsig, c)))(real, cplx)
    for result, pairs in zip(got, (real, cplx)):
        want = _convolutions(scipy_signal, pairs)
        _assert_all_close(result, want, rtol=1e-11, atol=1e-11)
        assert all(np.asarray(v).dtype == np.asarray(want[k]).dtype for k, v in result.items())
    # fftconvolve over some axes, the others matched (and broadcast from 1), as SciPy; a 3-D convolution
    a, b = rng.standard_normal((3, 8, 5)), rng.standard_normal((1, 4, 5))
    got = ts.program(lambda a, b: (tsig.fftconvolve(a, b, "same", axes=1), tsig.convolve(a, b, "valid")))(a, b)
    np.testing.assert_allclose(np.asarray(got[0]), scipy_signal.fftconvolve(a, b, "same", axes=1), atol=1e-12)
    np.testing.assert_allclose(np.asarray(got[1]), scipy_signal.convolve(a, b, "valid"), atol=1e-12)


def test_single_precision_keeps_its_dtype(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((40,)).astype(np.float32), rng.standard_normal((5,)).astype(np.float32)

    @ts.program
    def run(a: Any, b: Any) -> Any:
        return (tsig.convolve(a, b), tsig.correlate(a, b, "same", "fft"), tsig.welch(a, nperseg=16)[1],
                tsig.detrend(a), tfft.dct(a, norm="ortho"))

    results = run(a, b)
    wants = (scipy_signal.convolve(a, b), scipy_signal.correlate(a, b, "same"), scipy_signal.welch(a, nperseg=16)[1],
             scipy_signal.detrend(a.astype(np.float64)), scipy_fft.dct(a.astype(np.float64), norm="ortho"))
    for got, want in zip(results, wants):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)


WELCH_SETTINGS: list[dict[str, Any]] = [
    dict(nperseg=16), dict(nperseg=16, noverlap=4, nfft=20), dict(nperseg=15, window=("tukey", 0.3), detrend="linear"),
    dict(nperseg=16, return_onesided=False, scaling="spectrum"), dict(nperseg=8, average="median"), dict(),
    dict(window="blackman", nperseg=17, average="median", detrend=False),
]
STFT_SETTINGS: list[dict[str, Any]] = [
    dict(nperseg=16), dict(nperseg=16, noverlap=4, nfft=20, boundary="even"),
    dict(nperseg=15, window="hamming", boundary="odd", padded=False), dict(nperseg=16, return_onesided=False, boundary=None),
    dict(nperseg=16, boundary="constant", detrend="linear"),
]
ISTFT_SETTINGS: list[dict[str, Any]] = [dict(nperseg=16), dict(nperseg=16, noverlap=4), dict(nperseg=15, window="hamming"),
                                        dict(nperseg=16, nfft=20)]


def _spectral(sig: Any, x: Any, y: Any, zs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for k, kw in enumerate(WELCH_SETTINGS):
        out += [*sig.welch(x, **kw), sig.csd(x, y, **kw)[1]] + ([sig.welch(x.T, axis=0, **kw)[1]] if k < 2 else [])
    for k, kw in enumerate(STFT_SETTINGS):
        out += [*sig.stft(x, **kw)] + ([sig.stft(x.T, axis=0, **kw)[2]] if k < 2 else [])
    for kw, z in zip(ISTFT_SETTINGS, zs):
        out += [*sig.istft(z, **kw)]
    out += [sig.detrend(x, type=t, bp=bp) for t in ("linear", "constant") for bp in (0, [10, 30])]
    out.append(sig.detrend(x.T, axis=0))
    return out


def test_spectral_functions_match_scipy(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal((3, 50)), rng.standard_normal((3, 50))
    zs = [scipy_signal.stft(x, **kw)[2] for kw in ISTFT_SETTINGS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's note that 256-point segments do not fit 50 points
        want = _spectral(scipy_signal, x, y, zs)
    got = ts.program(lambda x, y, zs: _spectral(tsig, x, y, zs))(x, y, zs)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (k, np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12, err_msg=str(k))
    # the round trip: istft(stft(x)) is x
    _, _, z = tsig.stft(x[0], nperseg=16)
    np.testing.assert_allclose(np.asarray(tsig.istft(z, nperseg=16)[1])[:50], x[0], atol=1e-12)


@pytest.mark.parametrize("window", ["boxcar", "triang", "bartlett", "hann", "hamming", "blackman", "blackmanharris",
                                    "nuttall", "flattop", "cosine", "bohman", ("kaiser", 3.0), ("tukey", 0.4),
                                    ("gaussian", 2.5), ("general_hamming", 0.6)], ids=str)
def test_windows_match_scipy(window: Any) -> None:
    from tensorstage.prelude.scipy._signal_windows import get_window

    for n in (1, 2, 7, 8):
        for periodic in (True, False):
            np.testing.assert_allclose(get_window("w", window, n, periodic),
                                       scipy_signal.get_window(window, n, fftbins=periodic), rtol=1e-13, atol=1e-15)


def _dcts(fft: Any, x: Any, z: Any) -> dict[str, Any]:
    out = {}
    for t in (2, 3):
        for norm in (None, "ortho", "forward"):
            key = f"{t}{norm}"
            out["dct" + key] = fft.dct(x, type=t, norm=norm)
            out["idct" + key] = fft.idct(x, type=t, norm=norm, n=3, axis=0)
            out["dctn" + key] = fft.dctn(x, type=t, norm=norm, axes=(0, 2))
            out["idctn" + key] = fft.idctn(x, type=t, norm=norm, s=(3, 7))
    out["complex_dct"] = fft.dct(z, n=8, axis=1)
    out["complex_idctn"] = fft.idctn(z, type=3, norm="ortho")
    return out


def test_dcts_match_scipy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5, 6))
    z = x + 1j * rng.standard_normal(x.shape)
    got = ts.program(lambda x, z: _dcts(tfft, x, z))(x, z)
    want = _dcts(scipy_fft, x, z)
    _assert_all_close(got, want, rtol=1e-12, atol=1e-12)
    assert all(np.asarray(got[k]).dtype == np.asarray(w).dtype for k, w in want.items())


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    cases = [
        lambda x: tsig.convolve(x[0], x[1, :2], "same"),
        lambda x: tsig.correlate(x[0, 0], x[1, 1], "full", "fft"),
        lambda x: tsig.correlate2d(x[0], x[1, :2, :2], "same", "symm"),
        lambda x: tsig.detrend(x, bp=[2]),
        lambda x: tsig.welch(tnp.reshape(x, (24,)), nperseg=8)[1],
        lambda x: tsig.istft(tsig.stft(x[0, 0], nperseg=2)[2], nperseg=2)[1],
        lambda x: tfft.dctn(x, type=3, norm="ortho"),
    ]
    assert_grads_match_finite_differences(cases, rng)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((4, 9)), rng.standard_normal((4, 3))
    batched = ts.vmap(lambda u, v: (tsig.convolve(u, v, "valid"), tsig.welch(u, nperseg=4)[1]))(a, b)
    for i in range(4):
        np.testing.assert_allclose(np.asarray(batched[0])[i], scipy_signal.convolve(a[i], b[i], "valid"), atol=1e-12)
        np.testing.assert_allclose(np.asarray(batched[1])[i], scipy_signal.welch(a[i], nperseg=4)[1], atol=1e-12)


F32, F64, I32 = ts.f32, ts.f64, ts.i32
S = ts.Spec
BAD: list[tuple[Any, list[Any], type[Exception], list[str]]] = [
    (lambda a, b: tsig.convolve(a, b), [S((3, 4), F32), S((3,), F32)], ts.ShapeError,
     ["convolve", "same number of dimensions", "f32[3, 4]", "f32[3]"]),
    (lambda a, b: tsig.convolve(a, b, mode="bad"), [S((3,), F32), S((3,), F32)], ValueError, ["convolve", "'bad'"]),
    (lambda a, b: tsig.correlate(a, b, method="x"), [S((3,), F32), S((3,), F32)], ValueError, ["correlate", "method"]),
    (lambda a, b: tsig.convolve(a, b), [S((3,), F32), S((3,), F64)], ts.DTypeError, ["convolve", "f32[3]", "f64[3]"]),
    (lambda a, b: tsig.convolve(a, b), [S((3,), I32), S((3,), I32)], ts.DTypeError, ["convolve", "i32[3]", "astype"]),
    (lambda a, b: tsig.fftconvolve(a, b, "valid"), [S((3, 5), F32), S((5, 3), F32)], ts.ShapeError,
     ["fftconvolve", "'valid'", "f32[3, 5]", "f32[5, 3]"]),
    (lambda a, b: tsig.convolve2d(a, b), [S((3,), F32), S((3,), F32)], ts.ShapeError, ["convolve2d", "2-D"]),
    (lambda a, b: tsig.correlate2d(a, b, boundary="circular"), [S((3, 3), F32), S((3, 3), F32)], ValueError,
     ["correlate2d", "boundary", "'circular'"]),
    (lambda a: tsig.welch(a, nperseg=8, noverlap=8), [S((30,), F32)], ValueError, ["welch", "noverlap=8"]),
    (lambda a: tsig.csd(a, a, window="foo", nperseg=8), [S((30,), F32)], ValueError, ["csd", "unknown window 'foo'"]),
    (lambda a: tsig.stft(a, nperseg=8, boundary="periodic"), [S((30,), F32)], ValueError, ["stft", "'periodic'"]),
    (lambda a: tsig.istft(a), [S((30,), ts.c64)], ts.ShapeError, ["istft", "rank >= 2", "c64[30]"]),
    (lambda a: tsig.detrend(a, bp=[7]), [S((5,), F32)], ValueError, ["detrend", "[7]", "f32[5]"]),
    (lambda a: tsig.detrend(a, type="quadratic"), [S((5,), F32)], ValueError, ["detrend", "'quadratic'"]),
    (lambda a: tfft.dct(a, type=1), [S((3, 4), F32)], ValueError, ["dct", "type must be 2 or 3"]),
    (lambda a: tfft.idctn(a, norm="unitary"), [S((3, 4), F32)], ValueError, ["idctn", "'unitary'"]),
    (lambda a: tfft.dctn(a), [S((3, 4), I32)], ts.DTypeError, ["dctn", "i32[3, 4]"]),
]


def test_bad_arguments_raise_naming_the_function_and_the_line() -> None:
    check_staging_errors(BAD, "test_scipy_signal.py")
