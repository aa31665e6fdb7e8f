"""Shared by the benchmarks: timing by minimum over repeats, optional jax, machine info, one result format.

Every benchmark measures its anchors (NumPy always, jax.jit when jax is installed) in the same run and reports
ratios; a missing jax only drops those columns.
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
