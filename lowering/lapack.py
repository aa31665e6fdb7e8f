"""LAPACK kernels for the CPU lowering of cholesky, eigh, qr, svd, solve and slogdet (``potrf``, ``syevd``,
``geqrf``/``orgqr``, ``gesdd``, ``getrf`` and ``trsm``).

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
KERNELS = ("potrf", "syevd", "geqrf", "orgqr", "gesdd", "getrf", "trsm")
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
    return _svd_agrees_with_numpy() and _lu_agrees_with_numpy()


def _svd_agrees_with_numpy() -> bool:
    """``gesdd`` (svd's only lowering) on a wide 3x4 matrix per dtype: the factors reproduce it, s descends."""
    from ..staging.builder import building
    from ..staging.ir import Aval, Var
    from ..staging.primitives import svd as SV
    from . import backend, emit, runtime

    try:
        device = backend.cpu_client().devices()[0]
        for dtype in _PREFIX:
            a = np.random.default_rng(1).standard_normal((3, 4)).astype(dtype)
            x = Var(Aval((3, 4), dtype))
            with building() as builder:
                graph = builder.graph([x], list(SV.svd(x)))
            executable = backend.compile_module(emit.module_text(graph, "lapack_svd_test", platform="cpu"), [device])
            handlers = [runtime.result_handler(o.shape, o.dtype, device) for o in graph.out_avals]
            outs = runtime.execute(executable, [runtime.device_put(a, device)], handlers)
            u, s, vh = (runtime.to_host(o, dtype).astype(np.float64) for o in outs)
            tolerance = 1e-4 if dtype == np.float32 else 1e-10
            if not (np.allclose((u * s) @ vh, a, rtol=tolerance, atol=tolerance) and np.all(np.diff(s) <= 0)):
                return False
    except Exception:
        return False
    return True


def _lu_agrees_with_numpy() -> bool:
    """``getrf`` (through solve and slogdet) on a 3x3 matrix per dtype whose LU must pivot: ``a x = b`` and
    ``aᵀ y = b`` hold and the sign and log|det| are NumPy's."""
    from ..staging.builder import building
    from ..staging.ir import Aval, Var
    from ..staging.primitives import decompositions as D
    from . import backend, emit, runtime

    try:
        device = backend.cpu_client().devices()[0]
        a64 = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5], [-2.0, 5.0, 1.0]])  # LU of aᵀ swaps rows at both steps
        for dtype in _PREFIX:
            a, b = a64.astype(dtype), np.arange(6.0).reshape(3, 2).astype(dtype)
            x, y = Var(Aval((3, 3), dtype)), Var(Aval((3, 2), dtype))
            with building() as builder:
                outs = [D.solve(x, y), D.solve(x, y, transpose_a=True), *D.slogdet(x)]
                graph = builder.graph([x, y], outs)
            executable = backend.compile_module(emit.module_text(graph, "lapack_lu_test", platform="cpu"), [device])
            handlers = [runtime.result_handler(o.shape, o.dtype, device) for o in graph.out_avals]
            results = runtime.execute(executable, [runtime.device_put(v, device) for v in (a, b)], handlers)
            solved, solved_t, sign, logdet = (runtime.to_host(o, dtype).astype(np.float64) for o in results)
            tolerance = 1e-4 if dtype == np.float32 else 1e-10
            sign_np, logdet_np = np.linalg.slogdet(a64)
            checks = (
                np.allclose(a64 @ solved, b, rtol=tolerance, atol=tolerance),
                np.allclose(a64.T @ solved_t, b, rtol=tolerance, atol=tolerance),
                sign == sign_np and abs(logdet - logdet_np) < tolerance,
            )
            if not all(checks):
                return False
    except Exception:
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
