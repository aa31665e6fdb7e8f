"""Window functions by name, as ``scipy.signal.get_window`` gives them (JAX calls SciPy's; tensorstage does not
import SciPy, so the windows the spectral functions accept are computed here): NumPy float64 values of a static
length, periodic by default (``fftbins=True``: the symmetric window one longer, its last point dropped).

Names (and SciPy's aliases): 'boxcar', 'triang', 'bartlett', 'hann', 'hamming', 'blackman', 'blackmanharris',
'nuttall', 'flattop', 'cosine', 'bohman'; with a parameter, as a tuple: ('kaiser', beta), ('tukey', alpha),
('gaussian', std), ('general_hamming', alpha).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

FloatArray = np.ndarray[Any, np.dtype[np.float64]]

_COSINE_SUMS: dict[str, tuple[float, ...]] = {
    "blackman": (0.42, 0.50, 0.08),
    "nuttall": (0.3635819, 0.4891775, 0.1365995, 0.0106411),
    "blackmanharris": (0.35875, 0.48829, 0.14128, 0.01168),
    "flattop": (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368),
}


def _cosine_sum(m: int, coefficients: tuple[float, ...]) -> FloatArray:
    """SciPy's ``general_cosine``: ``sum_k a_k cos(k x)`` on ``x`` from -pi to pi."""
    x = np.linspace(-np.pi, np.pi, m)
    return np.asarray(sum(a * np.cos(k * x) for k, a in enumerate(coefficients)), np.float64)


def _triang(m: int) -> FloatArray:
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bohman(m: int) -> FloatArray:
    x = np.abs(np.linspace(-1, 1, m)[1:-1])
    inner = (1 - x) * np.cos(np.pi * x) + np.sin(np.pi * x) / np.pi
    return np.concatenate([[0.0], inner, [0.0]])


def _tukey(m: int, alpha: float) -> FloatArray:
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _cosine_sum(m, (0.5, 0.5))
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    rise = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n[: width + 1] / alpha / (m - 1))))
    fall = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n[m - width - 1:] / alpha / (m - 1))))
    return np.concatenate([rise, np.ones(m - 2 * width - 2), fall])


def _gaussian(m: int, std: float) -> FloatArray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.asarray(np.exp(-(n**2) / (2 * std * std)), np.float64)


Window = Callable[[int], FloatArray]

_PLAIN: dict[str, Window] = {
    "boxcar": lambda m: np.ones(m),
    "triang": _triang,
    "bartlett": lambda m: np.asarray(np.bartlett(m), np.float64),
    "hann": lambda m: _cosine_sum(m, (0.5, 0.5)),
    "hamming": lambda m: _cosine_sum(m, (0.54, 0.46)),
    "cosine": lambda m: np.sin(np.pi / m * (np.arange(m) + 0.5)),
    "bohman": _bohman,
    **{key: (lambda c: lambda m: _cosine_sum(m, c))(value) for key, value in _COSINE_SUMS.items()},
}
_WITH_PARAMETER: dict[str, Callable[[int, float], FloatArray]] = {
    "kaiser": lambda m, beta: np.asarray(np.kaiser(m, beta), np.float64),
    "tukey": _tukey,
    "gaussian": _gaussian,
    "general_hamming": lambda m, alpha: _cosine_sum(m, (alpha, 1.0 - alpha)),
}
_ALIASES = {
    "box": "boxcar", "ones": "boxcar", "rect": "boxcar", "rectangular": "boxcar", "triangle": "triang",
    "tri": "triang", "bart": "bartlett", "brt": "bartlett", "han": "hann", "hamm": "hamming", "ham": "hamming",
    "black": "blackman", "blk": "blackman", "blkh": "blackmanharris", "nutl": "nuttall", "nut": "nuttall",
    "flat": "flattop", "flt": "flattop", "halfcosine": "cosine", "bman": "bohman", "bmn": "bohman",
    "ksr": "kaiser", "tuk": "tukey", "gauss": "gaussian", "gss": "gaussian", "general hamming": "general_hamming",
}


def get_window(name: str, window: Any, length: int, fftbins: bool = True) -> FloatArray:
    """The window ``window`` (a name, or a tuple of a name and its parameter) of ``length`` points, float64;
    ``name`` is the calling function's, for errors."""
    key, args = (window[0], tuple(window[1:])) if isinstance(window, tuple) and window else (window, ())
    if not isinstance(key, str):
        raise ValueError(f"{name}: window must be a name, a (name, parameter) tuple or a 1-D array, got {window!r}")
    key = _ALIASES.get(key.lower(), key.lower())
    if key in _WITH_PARAMETER:
        if len(args) != 1 or not isinstance(args[0], (int, float)):
            raise ValueError(f"{name}: the {key!r} window needs one number: ({key!r}, value), got {window!r}")
        make: Window = lambda m: _WITH_PARAMETER[key](m, float(args[0]))  # noqa: E731
    elif key in _PLAIN and not args:
        make = _PLAIN[key]
    else:
        known = sorted([*_PLAIN, *_WITH_PARAMETER])
        raise ValueError(f"{name}: unknown window {window!r}; known windows: {', '.join(known)}")
    if length <= 1:
        return np.ones(max(length, 0))
    if fftbins:  # periodic: the symmetric window one longer, its last point dropped
        return make(length + 1)[:-1]
    return make(length)
