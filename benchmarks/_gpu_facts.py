"""GPU facts in one short run (needs a GPU and jax with CUDA): jax's GPU backend first, then tensorstage's in the
same process (tensorstage reuses jax's CUDA plugin); asynchronous and blocking dispatch, device-to-host reads,
moves between CPU and GPU Arrays, and the precision and speed of f32 matrix products, for both.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python3 benchmarks/_gpu_facts.py

Not part of ``run.py`` (it needs a GPU); BENCHMARKS.md quotes its output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

JAX_GPU = jax.devices("gpu")[0]  # before tensorstage: jax's plugin cannot load after ours

import tensorstage as ts  # noqa: E402
from tensorstage import numpy as tnp  # noqa: E402


def us_per_call(fn: Callable[[], Any], calls: int) -> float:
    """Mean microseconds per call over ``calls`` calls after one warm-up, blocking on the last result."""
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        result = fn()
    if hasattr(result, "block_until_ready"):
        result.block_until_ready()
    return (time.perf_counter() - start) / calls * 1e6


def dispatch_and_reads() -> None:
    x = ts.device_put(np.ones(8, np.float32), "gpu")
    jx = jax.device_put(np.ones(8, np.float32), JAX_GPU)
    f = ts.program(lambda a: a * 2.0 + 1.0)
    jf = jax.jit(lambda a: a * 2.0 + 1.0)
    timings = {
        "async dispatch": (lambda: f(x), lambda: jf(jx), 5000),
        "blocking dispatch": (lambda: f(x).block_until_ready(), lambda: jf(jx).block_until_ready(), 2000),
        "eager sum, blocking": (lambda: tnp.sum(x).block_until_ready(), lambda: jnp.sum(jx).block_until_ready(),
                                1000),
        "float(sum(x))": (lambda: float(tnp.sum(x)), lambda: float(jnp.sum(jx)), 300),
        "small result to NumPy": (lambda: f(x).numpy(), lambda: np.asarray(jf(jx)), 300),
    }
    for name, (ours, theirs, calls) in timings.items():
        print(f"{name}: tensorstage {us_per_call(ours, calls):.1f} us, jax {us_per_call(theirs, calls):.1f} us")


def moves_between_platforms() -> None:
    on_cpu = ts.device_put(np.arange(6, dtype=np.float32))
    moved = ts.device_put(on_cpu, "gpu")
    print("CPU Array to GPU:", moved.device, moved.numpy())
    mixed = ts.device_put(np.ones(6, np.float32), "gpu") + on_cpu
    print("GPU + CPU Array (follows the GPU one):", mixed.device, mixed.numpy())
    for dtype in (ml_dtypes.bfloat16, np.bool_, np.int8):
        there = ts.device_put(ts.device_put(np.arange(5).astype(dtype)), "gpu")
        print(f"{np.dtype(dtype).name} CPU -> GPU -> host:", there.numpy())


def f32_matmul(n: int = 4096) -> None:
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    reference = a[:256].astype(np.float64) @ a.astype(np.float64)
    ours = (ts.program(lambda p: p @ p), ts.device_put(a, "gpu"))
    jax_a = jax.device_put(a, JAX_GPU)
    candidates = {
        "tensorstage (full f32)": ours,
        "jax default": (jax.jit(lambda p: p @ p), jax_a),
        "jax highest": (jax.jit(lambda p: jnp.matmul(p, p, precision="highest")), jax_a),
    }
    for name, (fn, arg) in candidates.items():
        out = np.asarray(fn(arg))
        error = np.abs(out[:256] - reference).max() / np.abs(reference).max()
        ms = us_per_call(lambda: fn(arg), 20) / 1e3
        print(f"{name}: {n}^2 f32 matmul, relative error {error:.2e}, {ms:.2f} ms, {2 * n**3 / ms / 1e9:.1f} TFLOP/s")


if __name__ == "__main__":
    print("jax", jax.__version__, JAX_GPU, "| tensorstage", ts.devices("gpu")[0])
    dispatch_and_reads()
    moves_between_platforms()
    f32_matmul()
