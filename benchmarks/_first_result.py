"""Child process for time_to_first_result.py and warm_start.py: one workload, from a fresh interpreter.

Prints one JSON line: ``import_s`` (importing the library), ``first_result_s`` (defining the program, staging,
compiling or loading from the disk cache, transferring inputs, running, and waiting for the result; the
interpreter start and the import are excluded), and whether the executable came from the disk cache.
Usage: python _first_result.py {tensorstage|jax} {selu|mlp|deep_mlp|chain}
(mlp: issue #3's train step; deep_mlp: the 100-layer one).

``python _first_result.py phases {selu|mlp|deep_mlp}`` instead times tensorstage's first result phase by phase
(stage, compile or load, first run including the input transfer, second run, the median of later runs), to show
what bounds a warm start; ``BENCH_COMPILER_OPTIONS`` (JSON) passes ``compiler_options`` to its compile.

On a gpu run (``TENSORSTAGE_BENCH_DEVICE=gpu``, see _common.py) tensorstage makes its GPU client in the import
phase and its programs run on the GPU; jax's default device is the GPU (``JAX_PLATFORMS=cuda,cpu``). The JSON line
also says the ``platform`` the result was on.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
STEADY_RUNS = 9  # after the second run: their median is the steady state
CHAIN_STEPS = 700  # x3 ops: a 2100-op elementwise chain, compile-bound like JAXLIB.md's 2000-op probe


def workload_args(impl: str, workload: str) -> tuple[Any, ...]:
    """The host data of one workload (made before the clock starts: it is not part of a first result)."""
    import numpy as np

    import workloads as w

    if workload == "selu":
        return (np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32),)
    if workload == "deep_mlp":
        return w.mlp_data(100)
    params, x, y = w.wide_mlp_data()
    if impl == "jax":
        return params, x, y
    state = w.wide_optimizer.init(params)  # its step count is an Array on the default device (the CPU)
    if os.environ.get("TENSORSTAGE_BENCH_DEVICE") == "gpu":  # host data, as the rest: no CPU->GPU Array copy
        import tensorstage as ts

        state = ts.tree_map(np.asarray, state)
    return params, state, x, y


def ts_program(workload: str) -> Any:
    import _common
    import workloads as w

    if workload == "selu":
        return _common.ts_program(w.ts_selu)
    if workload == "mlp":  # issue #3's step, as mlp_step.py runs it
        return _common.ts_program(w.ts_wide_step, donate_argnums=(0,))
    return _common.ts_program(w.ts_train_step)


def jax_program(jax: Any, workload: str) -> Any:
    import workloads as w

    if workload == "selu":
        return jax.jit(w.jax_selu(jax))
    if workload == "mlp":
        return jax.jit(w.jax_wide_step(jax), donate_argnums=0)
    return jax.jit(w.jax_train_step(jax))


def waited(out: Any) -> Any:
    """Wait for a first result: SELU's array, or a train step's loss (its last output); returns it."""
    return (out if hasattr(out, "block_until_ready") else out[-1]).block_until_ready()


def platform_of(result: Any) -> str:
    """Where a result is, for either library: ``'cpu'`` or ``'gpu'``."""
    devices = result.devices()
    return ",".join(sorted({d.platform for d in devices}))


def phases(workload: str) -> None:
    import tensorstage as ts
    from tensorstage.lowering import backend

    backend.cpu_client()
    args = workload_args("tensorstage", workload)
    f = ts_program(workload)
    marks = [time.perf_counter()]
    staged = f.stage(*args)
    staged.stablehlo()
    marks.append(time.perf_counter())
    compiled = staged.compile(compiler_options=json.loads(os.environ.get("BENCH_COMPILER_OPTIONS", "{}")))
    marks.append(time.perf_counter())
    for _ in range(2 + STEADY_RUNS):
        ts.tree_map(lambda a: a.block_until_ready(), compiled(*args))
        marks.append(time.perf_counter())
    seconds = [b - a for a, b in zip(marks, marks[1:])]
    print(json.dumps({
        "stage_s": seconds[0], "compile_or_load_s": seconds[1], "first_run_s": seconds[2],
        "second_run_s": seconds[3], "steady_run_s": sorted(seconds[4:])[STEADY_RUNS // 2],
        "from_disk": compiled.from_disk_cache,
    }))


def main() -> None:
    import _common  # before the clock: it only sets the environment (JAX_PLATFORMS) and reads the device

    impl, workload = sys.argv[1], sys.argv[2]
    if impl == "phases":
        phases(workload)
        return
    start = time.perf_counter()
    if impl == "jax":
        import jax

        jax.numpy.zeros(())  # create jax's client now: it belongs to the import, as ours does below
    else:
        import tensorstage as ts
        from tensorstage.lowering import backend

        backend.client_for(_common.platform_name())  # cpu_client() on a cpu run
    imported = time.perf_counter()
    out: Any = None
    from_disk = None
    if workload == "chain":
        import numpy as np

        x = np.linspace(-1, 1, 128, dtype=np.float32)

        def chain(v: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]) -> Any:
            for i in range(CHAIN_STEPS):
                v = (sin(v) if i % 2 else cos(v)) * 1.001 + 0.1
            return v

        t0 = time.perf_counter()
        if impl == "jax":
            jnp = jax.numpy
            out = jax.jit(lambda v: chain(v, jnp.sin, jnp.cos))(x).block_until_ready()
        else:
            from tensorstage import numpy as tnp

            f: Any = _common.ts_program(lambda v: chain(v, tnp.sin, tnp.cos))
            out = f(x).block_until_ready()
    else:
        args = workload_args(impl, workload)
        t0 = time.perf_counter()
        f = jax_program(jax, workload) if impl == "jax" else ts_program(workload)
        out = waited(f(*args))
    done = time.perf_counter()
    if impl != "jax":
        (compiled,) = f._cache.values()
        from_disk = compiled.from_disk_cache
    print(json.dumps({"import_s": imported - start, "first_result_s": done - t0, "from_disk": from_disk,
                      "platform": platform_of(out)}))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
