"""Memory: no growth over 10,000 calls, nor over 500 distinct compiles beyond the cache bounds.

Measures resident set size (RSS, from /proc) and live device buffers / executables (the jaxlib client's own
counts) after a warm-up, then after the loop. The persistent disk cache is switched off here (it holds no
memory, only files). Anchor: the same loops under jax.jit, when installed.
"""

from __future__ import annotations

import gc
import os
import resource
from typing import Any

import numpy as np
from _common import report, try_jax

import tensorstage as ts
from tensorstage.lowering import backend, compile_cache

CALLS = 10_000
COMPILES = 500
CACHE_BOUND = 64


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def live() -> tuple[int, int]:
    client = backend.cpu_client()
    return len(client.live_arrays()), len(client.live_executables())


def calls() -> dict[str, Any]:
    f = ts.program(lambda x, y: x * y + x)
    x = ts.asarray(np.ones(1024, np.float32))
    for _ in range(1000):  # warm-up: first allocations, caches
        f(x, x).block_until_ready()
    gc.collect()
    rss0, (arrays0, _) = rss_mb(), live()
    for _ in range(CALLS):
        f(x, x).block_until_ready()
    gc.collect()
    rss1, (arrays1, _) = rss_mb(), live()
    return {"case": f"{CALLS} calls", "rss_growth_mb": rss1 - rss0, "live_buffer_growth": arrays1 - arrays0}


def compiles() -> dict[str, Any]:
    f = ts.Program(lambda x: x * 2.0 + 1.0, cache_size=CACHE_BOUND)
    warm = 100
    for n in range(1, warm + 1):
        f(ts.asarray(np.ones(n, np.float32))).block_until_ready()
    gc.collect()
    rss0, (arrays0, exes0) = rss_mb(), live()
    for n in range(warm + 1, COMPILES + 1):
        f(ts.asarray(np.ones(n, np.float32))).block_until_ready()
    gc.collect()
    rss1, (arrays1, exes1) = rss_mb(), live()
    return {
        "case": f"{COMPILES} compiles (cache bound {CACHE_BOUND})",
        "rss_growth_mb": rss1 - rss0,
        "rss_growth_kb_per_compile": (rss1 - rss0) * 1024 / (COMPILES - warm),
        "live_buffer_growth": arrays1 - arrays0,
        "live_executables": exes1,
        "live_executable_growth": exes1 - exes0,
        "programs_cached": len(f._cache),
    }


def jax_anchor(jax: Any) -> list[dict[str, Any]]:
    rows = []
    f = jax.jit(lambda x, y: x * y + x)
    x = jax.device_put(np.ones(1024, np.float32))
    for _ in range(1000):
        f(x, x).block_until_ready()
    gc.collect()
    rss0 = rss_mb()
    for _ in range(CALLS):
        f(x, x).block_until_ready()
    gc.collect()
    rows.append({"case": f"jax.jit: {CALLS} calls", "rss_growth_mb": rss_mb() - rss0})
    g = jax.jit(lambda x: x * 2.0 + 1.0)
    for n in range(1, 101):
        g(np.ones(n, np.float32)).block_until_ready()
    gc.collect()
    rss0 = rss_mb()
    for n in range(101, COMPILES + 1):
        g(np.ones(n, np.float32)).block_until_ready()
    gc.collect()
    rows.append({
        "case": f"jax.jit: {COMPILES} compiles (jax's own cache, unbounded by default)",
        "rss_growth_mb": rss_mb() - rss0,
        "rss_growth_kb_per_compile": (rss_mb() - rss0) * 1024 / (COMPILES - 100),
    })
    return rows


def main() -> None:
    compile_cache.disable()
    rows = [calls(), compiles()]
    jax = try_jax()
    if jax is not None:
        rows.extend(jax_anchor(jax))
    report("memory", rows)


if __name__ == "__main__":
    main()
