"""ts.profiler: traces written for TensorBoard and Perfetto and read back, annotations in them, device memory
profiles, and the refusals."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jaxlib import _jax  # type: ignore[attr-defined]

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage import profiler


def _event_names(xplane: Path) -> set[str]:
    data = profiler.ProfileData.from_file(str(xplane))
    return {event.name for plane in data.planes for line in plane.lines for event in line.events}


def test_a_trace_holds_annotations_dispatch_and_xla_work(tmp_path: Path, rng: np.random.Generator) -> None:
    step = ts.program(lambda w, x: tnp.tanh(x @ w).sum())
    w, x = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)

    @profiler.annotate_function
    def train_loop() -> float:
        total = 0.0
        for i in range(3):
            with profiler.StepTraceAnnotation("train_step", step_num=i):
                total += float(step(w, x))
        return total

    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.TraceAnnotation("warm_up", phase="start"):
            step(w, x).block_until_ready()
        total = train_loop()
    assert total == pytest.approx(3 * float(np.tanh(x.astype(np.float64) @ w).sum()), rel=1e-4)
    (run,) = (tmp_path / "plugins" / "profile").iterdir()
    (xplane,) = run.glob("*.xplane.pb")
    names = _event_names(xplane)
    loop_name = "test_a_trace_holds_annotations_dispatch_and_xla_work.<locals>.train_loop"
    assert {"warm_up", "train_step", loop_name} <= names
    assert any("Execute" in n for n in names)  # XLA's executable runs, named by PjRt
    assert (run / "perfetto_trace.json.gz").stat().st_size > 0

    # A trace ends, and is written, on an exception too.
    with pytest.raises(ZeroDivisionError):
        with profiler.trace(tmp_path / "failed"):
            1 / 0
    assert list((tmp_path / "failed" / "plugins" / "profile").glob("*/*.xplane.pb"))


def test_refusals() -> None:
    with pytest.raises(RuntimeError, match="no trace is being recorded"):
        profiler.stop_trace()
    with pytest.raises(ValueError, match="create_perfetto_link=True is not supported"):
        profiler.start_trace("/tmp/unused", create_perfetto_link=True)
    with pytest.raises(TypeError, match="profiler_options must be a ts.profiler.ProfileOptions"):
        profiler.start_trace("/tmp/unused", profiler_options={"python_tracer_level": 0})
    with pytest.raises(TypeError, match="needs step_num="):
        profiler.StepTraceAnnotation("step")
    options = profiler.ProfileOptions()
    options.python_tracer_level = 0
    profiler.start_trace("/tmp/unused_trace", profiler_options=options)
    try:
        with pytest.raises(RuntimeError, match="a trace is already being recorded"):
            profiler.start_trace("/tmp/unused_trace")
    finally:
        profiler.stop_trace()
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        profiler.device_memory_profile("tpu")


def test_device_memory_profile_counts_live_buffers(tmp_path: Path) -> None:
    def live_bytes() -> list[int]:
        profile: Any = json.loads(_jax.pprof_profile_to_json(profiler.device_memory_profile("cpu")))
        return [int(s["value"][1]) for s in profile["sample"]]

    held = ts.asarray(np.ones(12_345, np.float32))
    assert 4 * 12_345 in live_bytes() or sum(live_bytes()) >= 4 * 12_345
    profiler.save_device_memory_profile(tmp_path / "memory.prof", "cpu")
    assert (tmp_path / "memory.prof").read_bytes()[:1] == b"\n"  # a protocol buffer's first field
    del held


def test_profile_server_starts_once_and_stops() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    profiler.start_server(port)
    try:
        with pytest.raises(ValueError, match="already running"):
            profiler.start_server(port)
    finally:
        profiler.stop_server()
    with pytest.raises(ValueError, match="no profiler server is running"):
        profiler.stop_server()
