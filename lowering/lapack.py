"""LAPACK kernels for the CPU lowering of cholesky, eigh and qr (``potrf``, ``syevd``, ``geqrf``/``orgqr``).

jaxlib ships typed-FFI custom-call targets for LAPACK (``jaxlib.cpu._lapack``: ``lapack_spotrf_ffi``, ...) whose
``initialize()`` binds them to the LAPACK in SciPy (``scipy.linalg.cython_lapack``). When both import, the CPU
lowering calls them instead of XLA's own expanders (several times faster); otherwise, and on every other
platform, XLA's expansion is used. Registration happens once, on the first lowering that asks, under a lock.

Set ``TENSORSTAGE_LAPACK=0`` in the environment (read at that first ask) or call :func:`set_enabled` to force
XLA's expansion everywhere; the module text differs, so the persistent compile cache never mixes the two.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

import numpy as np

# The kernels used, without the dtype letter: ``lapack_{s,d}<name>_ffi``.
KERNELS = ("potrf", "syevd", "geqrf", "orgqr")
_PREFIX: dict[np.dtype[Any], str] = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}

_lock = threading.RLock()  # re-entered by the self-test, whose lowering asks ``available()`` again
_available: bool | None = None  # None: not probed yet
_enabled: bool | None = None  # None: read TENSORSTAGE_LAPACK on first use


def _probe() -> bool:
    """Import jaxlib's LAPACK module and SciPy, bind the kernels and register them for the CPU platform."""
    try:
        from jaxlib import xla_client

        importlib.import_module("scipy.linalg.cython_lapack")  # what ``initialize`` binds the kernels to
        _lapack = importlib.import_module("jaxlib.cpu._lapack")

        targets: dict[str, Any] = dict(_lapack.registrations())
        names = [f"lapack_{p}{k}_ffi" for p in _PREFIX.values() for k in KERNELS]
        if not all(name in targets for name in names):
            return False
        _lapack.initialize()
        for name in names:
            # api_version 1: XLA's typed FFI (attributes travel in ``mhlo.backend_config``).
            xla_client.register_custom_call_target(name, targets[name], "cpu", 1)
    except Exception:  # no SciPy, no jaxlib.cpu._lapack, or a jaxlib whose API differs: XLA's expansion
        return False
    return True


def available() -> bool:
    """Whether the LAPACK kernels are registered and work (probing, registering and testing them on the first
    call)."""
    global _available
    if _available is None:
        with _lock:
            if _available is None:
                _available = _probe()
                if _available:  # the self-test's own lowering sees True and emits the kernels it tests
                    _available = _kernels_agree_with_numpy()
    return _available


def _kernels_agree_with_numpy() -> bool:
    """Run every kernel once, through the real lowering rules, on a small SPD matrix per dtype and check the
    factorizations reproduce it. A jaxlib whose FFI reads our attributes differently (we verified 0.10.2)
    fails or raises here, and then XLA's own expansion is used instead of a wrong or failing kernel."""
    from ..staging.builder import building
    from ..staging.ir import Aval, Var
    from ..staging.primitives import decompositions as D
    from . import backend, emit, runtime

    try:
        device = backend.cpu_client().devices()[0]
        rng = np.random.default_rng(0)
        for dtype in _PREFIX:
            b = rng.standard_normal((3, 3))
            spd = (b @ b.T + 3 * np.eye(3)).astype(dtype)
            x = Var(Aval((3, 3), dtype))
            with building() as builder:
                values, vectors = D.eigh(x)
                factors = D.qr(x)[:2]
                graph = builder.graph([x], [D.cholesky(x), values, vectors, *factors])
            executable = backend.compile_module(emit.module_text(graph, "lapack_self_test", platform="cpu"), [device])
            handlers = [runtime.result_handler(a.shape, a.dtype, device) for a in graph.out_avals]
            outs = runtime.execute(executable, [runtime.device_put(spd, device)], handlers)
            low, w, v, q, r = (runtime.to_host(o, dtype).astype(np.float64) for o in outs)
            tolerance = 1e-4 if dtype == np.float32 else 1e-10
            products = (low @ low.T, (v * w) @ v.T, q @ r)
            if not all(np.allclose(p, spd, rtol=tolerance, atol=tolerance) for p in products):
                return False
            if not (np.allclose(low, np.tril(low)) and np.all(np.diff(w) >= 0) and np.allclose(r, np.triu(r))):
                return False
    except Exception:  # a kernel that does not compile or run here: XLA's expansion
        return False
    return True


def set_enabled(enabled: bool | None) -> None:
    """Use LAPACK on CPU when available (True), never (False), or as ``TENSORSTAGE_LAPACK`` says (None).
    Affects lowerings done afterwards (``Staged.stablehlo`` caches its text per staged program)."""
    global _enabled
    _enabled = enabled


def enabled() -> bool:
    global _enabled
    if _enabled is None:
        _enabled = os.environ.get("TENSORSTAGE_LAPACK", "1").strip().lower() not in ("0", "false", "no", "off")
    return _enabled


def target(kernel: str, dtype: np.dtype[Any], platform: str) -> str | None:
    """The custom-call target for ``kernel`` on ``dtype``, or None where XLA's own expansion is to be used."""
    prefix = _PREFIX.get(dtype)
    if platform != "cpu" or prefix is None or not enabled() or not available():
        return None
    return f"lapack_{prefix}{kernel}_ffi"


__all__ = ["KERNELS", "available", "enabled", "set_enabled", "target"]
