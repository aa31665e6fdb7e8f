"""Shared by the benchmarks: timing by minimum over repeats, optional jax, machine info, one result format.

Every benchmark measures its anchors (NumPy always, jax.jit when jax is installed) in the same run and reports
ratios; a missing jax only drops those columns.

Device (``run.py --device``, forwarded as ``TENSORSTAGE_BENCH_DEVICE``): ``cpu`` (the default) pins jax to its
CPU (``JAX_PLATFORMS=cpu``: a machine with jax-cuda would otherwise compare CPU tensorstage with GPU jax);
``gpu`` runs tensorstage (``ts.device_put(x, "gpu")``, programs with ``device="gpu"``) and jax
(``jax.devices("gpu")[0]``) on the GPU, NumPy staying the host anchor, both multiplying f32 at one precision
(full f32; ``TENSORSTAGE_MATMUL_PRECISION=default``: XLA's TF32 for both). ``TENSORSTAGE_BENCH_GPU_AS_CPU=1`` is a dry
run of the gpu code paths on the CPU devices. ``TENSORSTAGE_BENCH_QUICK=1`` (``run.py --quick``) cuts repeats.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # silence jaxlib's client-creation log lines


def bench_device() -> str:
    """``'cpu'`` or ``'gpu'``: which code paths the benchmarks take (``TENSORSTAGE_BENCH_DEVICE``)."""
    device = os.environ.get("TENSORSTAGE_BENCH_DEVICE", "cpu") or "cpu"
    if device not in ("cpu", "gpu"):
        raise SystemExit(f"TENSORSTAGE_BENCH_DEVICE={device!r}: use 'cpu' or 'gpu'")
    return device


def gpu_run() -> bool:
    """Whether the gpu code paths run (a real gpu run or a dry run)."""
    return bench_device() == "gpu"


def dry_run() -> bool:
    """The gpu code paths, run on the CPU devices (``TENSORSTAGE_BENCH_GPU_AS_CPU``): a check that needs no GPU."""
    return bench_device() == "gpu" and bool(os.environ.get("TENSORSTAGE_BENCH_GPU_AS_CPU"))


def platform_name() -> str:
    """The platform both libraries really run on: ``'gpu'`` for a gpu run (``'cpu'`` in a dry run)."""
    return "gpu" if bench_device() == "gpu" and not dry_run() else "cpu"


def quick() -> bool:
    return bool(os.environ.get("TENSORSTAGE_BENCH_QUICK"))


def pick(full: Any, fewer: Any) -> Any:
    """``full`` normally, ``fewer`` with ``--quick``."""
    return fewer if quick() else full


def configure_environment() -> None:
    """Set what jax and the XLA clients read at startup; run at import (before jax is imported) and by run.py
    after it parses ``--device``, so child processes inherit it."""
    if platform_name() == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"  # never GPU jax against CPU tensorstage
        return
    os.environ["JAX_PLATFORMS"] = "cuda,cpu"  # jax raises, rather than falls back to its CPU, if CUDA fails
    # jax and tensorstage each make a GPU client in one process: neither may grab 75% of the memory up front.
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    # One shot on a fresh machine: keep GPU executables off the disk cache unless asked (the cache is untried there).
    os.environ.setdefault("TENSORSTAGE_COMPILE_CACHE", "0")
    # Both libraries multiply f32 at one precision: tensorstage's (full f32 unless TENSORSTAGE_MATMUL_PRECISION=default).
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", matmul_precision())


def matmul_precision() -> str:
    """The f32 matmul precision of a gpu run, for both libraries: ``'highest'`` (tensorstage's default) or
    ``'default'`` (XLA's, TF32 on recent NVIDIA GPUs) with ``TENSORSTAGE_MATMUL_PRECISION=default``."""
    return "default" if os.environ.get("TENSORSTAGE_MATMUL_PRECISION", "").lower() == "default" else "highest"


configure_environment()


def best_of(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Seconds per call: the minimum over ``repeat`` rounds of ``number`` calls (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(fns: dict[str, Callable[[], Any]], number: int, rounds: int = 15) -> dict[str, float]:
    """Like ``best_of`` for several candidates, alternating rounds so drift on a shared machine hits all alike."""
    for fn in fns.values():
        fn()
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def try_jax() -> Any | None:
    """The jax module, or None (the benchmarks then print NumPy anchors only)."""
    if os.environ.get("TENSORSTAGE_BENCH_NO_JAX"):
        return None
    try:
        import jax

        return jax
    except ImportError:
        return None


_JAX_DEVICE: list[Any] = []


def setup_device() -> Any | None:
    """Call first in a benchmark's ``main``: the jax module (or None), with jax's device and, on a gpu run,
    tensorstage's made now, in this order (jax's CUDA plugin cannot load after tensorstage's; tensorstage reuses
    jax's), and printed. Raises when either library is not on the platform asked for, so a run never silently
    compares different devices."""
    jax = try_jax()
    if bench_device() == "cpu":
        return jax  # as before: JAX_PLATFORMS=cpu (configure_environment) keeps jax on its CPU
    if jax is not None:
        device = jax.devices(platform_name())[0]  # raises when jax has no such backend
        if device.platform != platform_name():
            raise SystemExit(f"jax's device {device} is on {device.platform}, not {platform_name()}")
        _JAX_DEVICE[:] = [device]
        if jax.default_backend() != platform_name():
            raise SystemExit(f"jax's default backend is {jax.default_backend()}, not {platform_name()}")
    import tensorstage as ts

    ours = ts.devices(platform_name())[0]
    theirs = f"jax on {_JAX_DEVICE[0]} ({_JAX_DEVICE[0].device_kind})" if _JAX_DEVICE else "jax absent"
    suffix = " [dry run on CPU: TENSORSTAGE_BENCH_GPU_AS_CPU]" if dry_run() else ""
    print(f"  devices: tensorstage on {ours} ({ours.xla.device_kind}); {theirs}{suffix}", file=sys.stderr)
    return jax


def probe() -> dict[str, str]:
    """A gpu run's preflight (``python _common.py``, run by run.py in a fresh process): both libraries make their
    clients in the benchmarks' order, run x + 1 and show where the results are. Returns the machine-info fields."""
    import numpy as np

    jax = setup_device()
    host = np.arange(4, dtype=np.float32)
    ours = ts_program(lambda x: x + 1)(ts_put(host)).block_until_ready()
    check_placement(ours=ours)
    device = ours.device
    info = {"device": platform_name(), "gpu": str(device.xla.device_kind), "tensorstage_device": str(device)}
    if not np.array_equal(ours.numpy(), host + 1):
        raise SystemExit(f"tensorstage on {device}: x + 1 gave {ours.numpy()}")
    if jax is not None:
        theirs = jax.jit(lambda x: x + 1)(jax_put(jax, host)).block_until_ready()
        check_placement(theirs=theirs)
        (jax_device,) = theirs.devices()
        info["jax_device"] = f"{jax_device} ({jax_device.device_kind})"
    if dry_run():
        info["gpu"] = f"none: dry run on {info['gpu']} (TENSORSTAGE_BENCH_GPU_AS_CPU)"
    return info


def ts_put(x: Any) -> Any:
    """Host data onto tensorstage's benchmark device (``ts.asarray`` on a cpu run, as before)."""
    import tensorstage as ts

    if bench_device() == "cpu":
        return ts.asarray(x)
    return ts.device_put(x, platform_name())


def ts_program(fn: Any, **options: Any) -> Any:
    """``ts.program`` (on a gpu run with ``device=``, so NumPy arguments go to the GPU too)."""
    import tensorstage as ts

    if bench_device() == "gpu":
        options["device"] = platform_name()
    return ts.program(**options)(fn) if options else ts.program(fn)


def jax_put(jax: Any, x: Any) -> Any:
    """``jax.device_put`` onto jax's benchmark device (jax's default device on a cpu run, as before)."""
    if bench_device() == "cpu":
        return jax.device_put(x)
    if not _JAX_DEVICE:
        raise RuntimeError("call setup_device() before jax_put")
    return jax.device_put(x, _JAX_DEVICE[0])


def check_placement(ours: Any = None, theirs: Any = None) -> None:
    """On a gpu run, raise unless tensorstage's result ``ours`` and jax's ``theirs`` are on the benchmark platform."""
    if bench_device() == "cpu":
        return
    want = platform_name()
    if ours is not None and ours.device.platform != want:
        raise SystemExit(f"tensorstage's result is on {ours.device}, not {want}")
    if theirs is not None:
        where = {d.platform for d in theirs.devices()}
        if where != {want}:
            raise SystemExit(f"jax's result is on {where}, not {want}")


def machine() -> dict[str, str]:
    import jaxlib
    import numpy as np

    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = f"{names[0]} x{len(names)}" if names else cpu
    except OSError:
        pass
    jax = try_jax()
    return {
        "cpu": cpu,
        "python": platform.python_version(),
        "jaxlib": str(getattr(jaxlib, "__version__", "?")),
        "jax": str(jax.__version__) if jax is not None else "absent",
        "numpy": np.__version__,
        "os": platform.platform(),
        **({"f32 matmul precision": matmul_precision()} if gpu_run() else {}),
    }


def report(name: str, rows: list[dict[str, Any]]) -> None:
    """Print one table and, when ``TENSORSTAGE_BENCH_JSON`` names a file, append the rows to it as JSON."""
    print(f"\n== {name} ==")
    for row in rows:
        cells = []
        for key, value in row.items():
            if isinstance(value, float):
                cells.append(f"{key}={value:.4g}")
            else:
                cells.append(f"{key}={value}")
        print("  " + "  ".join(cells))
    path = os.environ.get("TENSORSTAGE_BENCH_JSON")
    if path:
        with open(path, "a") as f:
            for row in rows:
                f.write(json.dumps({"benchmark": name, **row}) + "\n")
    sys.stdout.flush()


def us(seconds: float) -> float:
    return seconds * 1e6


def ratio(ours: float, anchor: float | None) -> float | None:
    return None if anchor is None or anchor == 0 else ours / anchor


if __name__ == "__main__":  # run.py's gpu preflight
    print(json.dumps(probe()))
