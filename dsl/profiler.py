"""``ts.profiler``: traces of what the host and XLA did, for TensorBoard's profile plugin or Perfetto, and device
memory profiles (JAX's ``jax.profiler``, on jaxlib's profiler; no jax import).

``with ts.profiler.trace("/tmp/tb"):`` (or ``start_trace`` / ``stop_trace``) records Python calls, tensorstage's
dispatch and XLA's work (executable runs, thunks, transfers) and writes ``plugins/profile/<run>/<host>.xplane.pb``
and ``<host>.trace.json.gz`` under the directory. ``TraceAnnotation`` / ``StepTraceAnnotation`` /
``annotate_function`` name spans of your own in it. ``ProfileData`` reads a trace back (``from_file``,
``from_serialized_xspace``: planes, lines, events). ``device_memory_profile()`` is a pprof profile of the live
device buffers.

Deliberate differences from JAX: ``create_perfetto_link=True`` (a local web server that blocks until the
Perfetto UI has loaded the trace) is refused with a ValueError: open the written ``perfetto_trace.json.gz``
(``create_perfetto_trace=True``) in https://ui.perfetto.dev yourself.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from jaxlib import _profile_data  # type: ignore[attr-defined]  # compiled modules without stubs
from jaxlib import _profiler  # type: ignore[attr-defined]

from .array import default_device
from .lowering import backend as _backend

__all__ = [
    "ProfileData", "ProfileOptions", "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
    "device_memory_profile", "save_device_memory_profile", "start_server", "start_trace", "stop_server",
    "stop_trace", "trace",
]

P = ParamSpec("P")
R = TypeVar("R")

ProfileData: Any = _profile_data.ProfileData
ProfileOptions: Any = _profiler.ProfileOptions
TraceAnnotation: Any = _profiler.TraceMe  # ``with TraceAnnotation("name", key=value):`` a named span

_LOCK = threading.Lock()
_session: Any = None
_log_dir: Path | None = None
_perfetto_trace = False
_server: Any = None


def start_trace(
    log_dir: str | os.PathLike[str], create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
    profiler_options: Any = None,
) -> None:
    """Start recording a trace that ``stop_trace`` writes under ``log_dir``; one trace at a time."""
    global _session, _log_dir, _perfetto_trace
    if create_perfetto_link:
        raise ValueError(
            "start_trace: create_perfetto_link=True is not supported: pass create_perfetto_trace=True and open the "
            "written perfetto_trace.json.gz in https://ui.perfetto.dev"
        )
    if profiler_options is not None and not isinstance(profiler_options, ProfileOptions):
        raise TypeError(f"start_trace: profiler_options must be a ts.profiler.ProfileOptions, got "
                        f"{type(profiler_options).__name__}")
    with _LOCK:
        if _session is not None:
            raise RuntimeError("start_trace: a trace is already being recorded; call stop_trace() first")
        _backend.cpu_client()  # the client's threads exist before recording starts, so their work is named
        _session = _profiler.ProfilerSession(profiler_options if profiler_options is not None else ProfileOptions())
        _log_dir, _perfetto_trace = Path(log_dir), create_perfetto_trace


def stop_trace() -> None:
    """Stop the trace ``start_trace`` began and write it to its directory."""
    global _session, _log_dir
    with _LOCK:
        if _session is None or _log_dir is None:
            raise RuntimeError("stop_trace: no trace is being recorded (call start_trace first)")
        session, log_dir = _session, _log_dir
        _session = _log_dir = None
        before = set(_runs(log_dir))
        log_dir.mkdir(parents=True, exist_ok=True)
        session.export(session.stop(), str(log_dir))
        if _perfetto_trace:
            _copy_perfetto_trace(sorted(set(_runs(log_dir)) - before))


def _runs(log_dir: Path) -> list[Path]:
    return list((log_dir / "plugins" / "profile").glob("*")) if log_dir.exists() else []


def _copy_perfetto_trace(new_runs: list[Path]) -> None:
    """The Chrome-format trace jaxlib wrote (which Perfetto loads) under the name JAX gives it."""
    for run in new_runs:
        for written in run.glob("*.trace.json.gz"):
            shutil.copyfile(written, run / "perfetto_trace.json.gz")
            return


@contextmanager
def trace(
    log_dir: str | os.PathLike[str], create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
    profiler_options: Any = None,
) -> Iterator[None]:
    """Record a trace of the block (``start_trace`` on entry, ``stop_trace`` on exit, also on an exception)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def StepTraceAnnotation(name: str, **kwargs: Any) -> Any:  # noqa: N802 - JAX's name (a class there)
    """A span for one training step (``step_num=`` required), which TensorBoard's step views group by."""
    if "step_num" not in kwargs:
        raise TypeError("StepTraceAnnotation needs step_num=: the number of the step it spans")
    return _profiler.TraceMe(name, _r=1, **kwargs)


def annotate_function(
    func: Callable[P, R], name: str | None = None, **kwargs: Any
) -> Callable[P, R]:
    """``func`` recording a span named ``name`` (default: its qualified name) around each call."""
    label = name if name is not None else getattr(func, "__qualname__", repr(func))

    @functools.wraps(func)
    def annotated(*args: P.args, **kw: P.kwargs) -> R:
        with _profiler.TraceMe(label, **kwargs):
            return func(*args, **kw)

    return annotated


def start_server(port: int) -> Any:
    """Serve profiles on ``port`` (for TensorBoard's "capture profile"); one server per process."""
    global _server
    with _LOCK:
        if _server is not None:
            raise ValueError("start_server: a profiler server is already running; call stop_server() first")
        _backend.cpu_client()
        _server = _profiler.start_server(port)
        return _server


def stop_server() -> None:
    global _server
    with _LOCK:
        if _server is None:
            raise ValueError("stop_server: no profiler server is running")
        _server = None  # jaxlib stops it when the object goes


def device_memory_profile(backend: str | None = None) -> bytes:
    """A pprof profile (protocol buffer) of the live device buffers and executables of ``backend``'s client ('cpu',
    'gpu'; default: the default device's) — ``pprof`` or ``go tool pprof`` read it."""
    platform = backend if backend is not None else default_device().platform
    if platform not in ("cpu", "gpu"):
        raise ValueError(f"device_memory_profile: unknown backend {platform!r}; tensorstage has 'cpu' and 'gpu'")
    profile: bytes = _backend.client_for(platform).heap_profile()
    return profile


def save_device_memory_profile(filename: str | os.PathLike[str], backend: str | None = None) -> None:
    """``device_memory_profile(backend)`` written to ``filename``."""
    Path(filename).write_bytes(device_memory_profile(backend))
