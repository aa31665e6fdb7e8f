"""Registry cases for the Schur and Hessenberg primitives (staging/primitives/schur.py), merged into
``primitive_cases.CASES``. They lower only to LAPACK on CPU (as eig): elsewhere tests/test_scipy_linalg_more.py
checks the error instead. float64 and complex128 only, where SciPy runs the same LAPACK routine in the same
precision and so gives the same (non-unique) decomposition."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

import tensorstage as ts
from primitive_cases import CASES, Case, normal

SCHUR_RUNS = ts.default_device().platform == "cpu" and importlib.util.find_spec("scipy") is not None


def _each(f: Any, a: np.ndarray) -> tuple[np.ndarray, ...]:
    """SciPy's ``f`` on every matrix of ``a`` (leading axes as a batch), its results stacked back."""
    flat = a.reshape(-1, *a.shape[-2:])
    results = [f(m) for m in flat]
    return tuple(np.stack(parts).reshape(*a.shape[:-2], *parts[0].shape) for parts in zip(*results))


def _schur_ref(a: np.ndarray, compute_vectors: bool) -> tuple[np.ndarray, ...]:
    from scipy.linalg import schur

    outs = _each(lambda m: schur(m), a)
    return outs if compute_vectors else outs[:1]


def _hessenberg_ref(a: np.ndarray, compute_q: bool) -> tuple[np.ndarray, ...]:
    from scipy.linalg import hessenberg

    outs = _each(lambda m: hessenberg(m, calc_q=True), a)
    return outs if compute_q else outs[:1]


_EXACT = ("float64", "complex128")
CASES["schur"] = [] if not SCHUR_RUNS else [
    Case(normal(4, 4), _schur_ref, {"compute_vectors": True}, dtypes=_EXACT, label="vectors"),
    Case(normal(2, 3, 3), _schur_ref, {"compute_vectors": False}, dtypes=("float64",), label="form batched"),
]
CASES["hessenberg"] = [] if not SCHUR_RUNS else [
    Case(normal(5, 5), _hessenberg_ref, {"compute_q": True}, dtypes=_EXACT, label="with q"),
    Case(normal(2, 4, 4), _hessenberg_ref, {"compute_q": False}, dtypes=("float64",), label="form batched"),
]
