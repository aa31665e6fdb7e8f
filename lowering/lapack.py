"""LAPACK kernels for the CPU lowering of cholesky, eigh, qr, svd, solve, slogdet and eig (``potrf``, ``syevd``,
``geqrf``/``orgqr``, ``gesdd``, ``getrf``, ``trsm`` and ``geev``).

jaxlib ships typed-FFI custom-call targets for LAPACK (``jaxlib.cpu._lapack``: ``lapack_spotrf_ffi``, ...) whose
``initialize()`` binds them to the LAPACK in SciPy (``scipy.linalg.cython_lapack``). When both import, the CPU
lowering calls them instead of XLA's own expanders (several times faster); otherwise, and on every other
platform, XLA's expansion is used. ``eig`` has no expansion: without the kernels its lowering raises. Registration
happens once, on the first lowering that asks, under a lock.

Set ``TENSORSTAGE_LAPACK=0`` in the environment (read when a lowering asks) or call :func:`set_enabled` to force
XLA's expansion everywhere; the module text differs, so the persistent compile cache never mixes the two.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# The kernels used, without the dtype letter: ``lapack_{s,d}<name>_ffi``, and ``lapack_{c,z}<name>_ffi`` for
# complex matrices, where LAPACK names two of them differently (Hermitian / unitary): see ``_name``.
KERNELS = ("potrf", "syevd", "geqrf", "orgqr", "gesdd", "getrf", "trsm", "geev")
_COMPLEX_NAMES = {"syevd": "heevd", "orgqr": "ungqr"}
# Registered, for every dtype, where jaxlib has them: only the Schur family (lowering/rules/schur.py) asks for them,
# so a jaxlib without them loses that family alone, not every kernel.
OPTIONAL_KERNELS = ("gees", "gehrd")
_optional: set[str] = set()  # the optional kernels registered
_PREFIX: dict[np.dtype[Any], str] = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}
_COMPLEX_PREFIX: dict[np.dtype[Any], str] = {np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))

_lock = threading.RLock()  # re-entered by the self-test, whose lowering asks ``available()`` again
_available: bool | None = None  # None: not probed yet
_enabled: bool | None = None  # None: as TENSORSTAGE_LAPACK says


def _probe() -> bool:
    """Import jaxlib's LAPACK module and SciPy, bind the kernels and register them for the CPU platform."""
    try:
        from jaxlib import xla_client

        importlib.import_module("scipy.linalg.cython_lapack")  # what ``initialize`` binds the kernels to
        _lapack = importlib.import_module("jaxlib.cpu._lapack")

        targets: dict[str, Any] = dict(_lapack.registrations())
        prefixes = (*_PREFIX.values(), *_COMPLEX_PREFIX.values())
        names = [_name(p, k) for p in prefixes for k in KERNELS]
        if not all(name in targets for name in names):
            return False
        _lapack.initialize()
        optional = [name for name in (_name(p, k) for p in prefixes for k in OPTIONAL_KERNELS) if name in targets]
        for name in names + optional:
            # api_version 1: XLA's typed FFI (attributes travel in ``mhlo.backend_config``).
            xla_client.register_custom_call_target(name, targets[name], "cpu", 1)
        _optional.update(optional)
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
    """Run every kernel once, through the real lowering rules, on small matrices per dtype and check the results
    against NumPy. A jaxlib whose FFI reads our attributes differently (we verified 0.10.2) fails or raises here,
    and then XLA's own expansion is used instead of a wrong or failing kernel."""
    try:
        return all(
            check(dtype, 1e-4 if dtype in _SINGLE else 1e-10)
            for check in (_factorizations_agree, _lu_agrees, _svd_agrees, _eig_agrees)
            for dtype in (*_PREFIX, *_COMPLEX_PREFIX)
        )
    except Exception:  # a kernel that does not compile or run here
        return False


def _run(build: Callable[..., Sequence[Any]], *inputs: np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
    """``build`` (primitives on one staged value per input) lowered for CPU, compiled, run on ``inputs``; its
    results as float64 host arrays."""
    from ..staging.builder import building
    from ..staging.ir import Aval, Var
    from . import backend, emit, runtime

    device = backend.cpu_client().devices()[0]
    xs = [Var(Aval(x.shape, x.dtype)) for x in inputs]
    with building() as builder:
        graph = builder.graph(xs, list(build(*xs)))
    executable = backend.compile_module(emit.module_text(graph, "lapack_self_test", platform="cpu"), [device])
    handlers = [runtime.result_handler(a.shape, a.dtype, device) for a in graph.out_avals]
    outs = runtime.execute(executable, [runtime.device_put(x, device) for x in inputs], handlers)
    wide = [np.complex128 if np.issubdtype(a.dtype, np.complexfloating) else np.float64 for a in graph.out_avals]
    return [runtime.to_host(o, o_aval.dtype).astype(w) for o, o_aval, w in zip(outs, graph.out_avals, wide)]


def _factorizations_agree(dtype: np.dtype[Any], tolerance: float) -> bool:
    """potrf, syevd/heevd, geqrf/orgqr/ungqr on a positive definite 3x3 matrix (Hermitian for complex dtypes):
    each factorization reproduces it, in its shape."""
    from ..staging.primitives import decompositions as D

    rng = np.random.default_rng(0)
    b = rng.standard_normal((3, 3)) + (1j * rng.standard_normal((3, 3)) if dtype in _COMPLEX_PREFIX else 0)
    spd = (b @ b.conj().T + 3 * np.eye(3)).astype(dtype)
    low, w, v, q, r = _run(lambda x: [D.cholesky(x), *D.eigh(x), *D.qr(x)[:2]], spd)
    products = (low @ low.conj().T, (v * w) @ v.conj().T, q @ r)
    return all(np.allclose(p, spd, rtol=tolerance, atol=tolerance) for p in products) and bool(
        np.allclose(low, np.tril(low)) and np.all(np.diff(w) >= 0) and np.allclose(r, np.triu(r))
    )


def _svd_agrees(dtype: np.dtype[Any], tolerance: float) -> bool:
    """gesdd (svd's only lowering) on a wide 3x4 matrix (complex entries for complex dtypes): the factors
    reproduce it, s descends."""
    from ..staging.primitives import svd as SV

    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 4)) + (1j * rng.standard_normal((3, 4)) if dtype in _COMPLEX_PREFIX else 0)).astype(dtype)
    u, s, vh = _run(SV.svd, a)
    return bool(np.allclose((u * s) @ vh, a, rtol=tolerance, atol=tolerance) and np.all(np.diff(s) <= 0))


def _lu_agrees(dtype: np.dtype[Any], tolerance: float) -> bool:
    """getrf (through solve and slogdet) on a 3x3 matrix whose LU must pivot: ``a x = b`` and ``aᵀ y = b`` hold
    and the sign and log|det| are NumPy's."""
    from ..staging.primitives import decompositions as D

    a64 = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5], [-2.0, 5.0, 1.0]])  # LU of aᵀ swaps rows at both steps
    if dtype in _COMPLEX_PREFIX:
        a64 = a64 + 0.5j * np.eye(3, k=1)
    b = np.arange(6.0).reshape(3, 2)
    solved, solved_t, sign, logdet = _run(
        lambda x, y: [D.solve(x, y), D.solve(x, y, transpose_a=True), *D.slogdet(x)], a64.astype(dtype), b.astype(dtype)
    )
    sign_np, logdet_np = np.linalg.slogdet(a64)
    return bool(
        np.allclose(a64 @ solved, b, rtol=tolerance, atol=tolerance)
        and np.allclose(a64.T @ solved_t, b, rtol=tolerance, atol=tolerance)
        and abs(sign - sign_np) < tolerance
        and abs(logdet - logdet_np) < tolerance
    )


def _eig_agrees(dtype: np.dtype[Any], tolerance: float) -> bool:
    """geev (eig's only lowering) on a 3x3 matrix with a complex pair (or complex entries): ``a vr = vr diag(w)``,
    ``vlᴴ a = diag(w) vlᴴ``, and the eigenvalues are NumPy's."""
    from ..staging.primitives import eig as EG

    rotation = np.array([[0.0, -2.0, 1.0], [2.0, 0.0, 0.5], [0.0, 0.0, 3.0]])  # eigenvalues ±2i and 3
    a64 = rotation + (0.5j * np.eye(3, k=1) if np.issubdtype(dtype, np.complexfloating) else 0)
    w, vl, vr = _run(lambda x: EG.eig(x, compute_left=True, compute_right=True), a64.astype(dtype))
    expected = np.sort_complex(np.linalg.eigvals(a64))
    return bool(
        np.allclose(a64 @ vr, vr * w, rtol=tolerance, atol=tolerance)
        and np.allclose(vl.conj().T @ a64, w[:, None] * vl.conj().T, rtol=tolerance, atol=tolerance)
        and np.allclose(np.sort_complex(w), expected, rtol=tolerance, atol=tolerance)
    )


_ON_CHANGE: list[Callable[[], None]] = []
_asked = [0]  # how often a CPU lowering asked ``target``: a module lowered in between depends on the choice


def times_asked() -> int:
    """A counter that a lowering whose text depends on the LAPACK choice advances (compare before and after)."""
    return _asked[0]


def on_change(callback: Callable[[], None]) -> None:
    """Call ``callback`` whenever ``set_enabled`` changes the choice (Programs then drop the executables whose
    lowering asked ``target``)."""
    _ON_CHANGE.append(callback)


def set_enabled(enabled: bool | None) -> None:
    """Use LAPACK on CPU when available (True), never (False), or as ``TENSORSTAGE_LAPACK`` says (None).
    Every Program (library ops run eagerly included) compiles its next call afresh after a change; a ``Staged``
    keeps the module text it already lowered."""
    global _enabled
    before = _choice()
    _enabled = enabled
    if _choice() != before:
        for callback in _ON_CHANGE:
            callback()


def enabled() -> bool:
    return _choice()


def _choice() -> bool:
    if _enabled is not None:
        return _enabled
    return os.environ.get("TENSORSTAGE_LAPACK", "1").strip().lower() not in ("0", "false", "no", "off")


def target(kernel: str, dtype: np.dtype[Any], platform: str) -> str | None:
    """The custom-call target for ``kernel`` on ``dtype``, or None where XLA's own expansion is to be used."""
    if platform == "cpu":
        _asked[0] += 1
    prefix = _PREFIX.get(dtype) or _COMPLEX_PREFIX.get(dtype)
    if platform != "cpu" or prefix is None or not enabled() or not available():
        return None
    name = _name(prefix, kernel)
    return None if kernel in OPTIONAL_KERNELS and name not in _optional else name


def _name(prefix: str, kernel: str) -> str:
    """jaxlib's target name of ``kernel`` for the dtype letter ``prefix`` (LAPACK's complex names where they differ)."""
    return f"lapack_{prefix}{_COMPLEX_NAMES.get(kernel, kernel) if prefix in _COMPLEX_PREFIX.values() else kernel}_ffi"


__all__ = ["KERNELS", "OPTIONAL_KERNELS", "available", "enabled", "on_change", "set_enabled", "target", "times_asked"]
