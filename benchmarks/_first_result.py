"""Child process for time_to_first_result.py and warm_start.py: one workload, from a fresh interpreter.

Prints one JSON line: ``import_s`` (importing the library), ``first_result_s`` (defining the program, staging,
compiling or loading from the disk cache, transferring inputs, running, and waiting for the result; the
interpreter start and the import are excluded), and whether the executable came from the disk cache.
Usage: python _first_result.py {tensorstage|jax} {selu|mlp|chain}

``python _first_result.py phases {selu|mlp}`` instead times tensorstage's first result phase by phase (stage,
compile or load, first run including the input transfer, second run), to show what bounds a warm start.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
CHAIN_STEPS = 700  # x3 ops: a 2100-op elementwise chain, compile-bound like JAXLIB.md's 2000-op probe


def phases(workload: str) -> None:
    import numpy as np

    import tensorstage as ts
    from tensorstage.lowering import backend
    from workloads import mlp_data, ts_selu, ts_train_step

    backend.cpu_client()
    args: tuple[Any, ...]
    if workload == "selu":
        f: Any = ts.program(ts_selu)
        args = (np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32),)
    else:
        f = ts.program(ts_train_step)
        args = mlp_data(100)
    marks = [time.perf_counter()]
    staged = f.stage(*args)
    staged.stablehlo()
    marks.append(time.perf_counter())
    compiled = staged.compile()
    marks.append(time.perf_counter())
    for _ in range(2):
        ts.tree_map(lambda a: a.block_until_ready(), compiled(*args))
        marks.append(time.perf_counter())
    seconds = [b - a for a, b in zip(marks, marks[1:])]
    print(json.dumps({
        "stage_s": seconds[0], "compile_or_load_s": seconds[1], "first_run_s": seconds[2],
        "second_run_s": seconds[3], "from_disk": compiled.from_disk_cache,
    }))


def main() -> None:
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

        backend.cpu_client()
    imported = time.perf_counter()
    import numpy as np
    from workloads import jax_selu, jax_train_step, mlp_data, ts_selu, ts_train_step

    from_disk = None
    f: Any = None
    if workload == "selu":
        x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
        t0 = time.perf_counter()
        if impl == "jax":
            jax.jit(jax_selu(jax))(x).block_until_ready()
        else:
            f = ts.program(ts_selu)
            f(x).block_until_ready()
    elif workload == "mlp":
        params, x, y = mlp_data(100)
        t0 = time.perf_counter()
        if impl == "jax":
            jax.jit(jax_train_step(jax))(params, x, y)[1].block_until_ready()
        else:
            f = ts.program(ts_train_step)
            f(params, x, y)[1].block_until_ready()
    else:
        x = np.linspace(-1, 1, 128, dtype=np.float32)

        def chain(v: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]) -> Any:
            for i in range(CHAIN_STEPS):
                v = (sin(v) if i % 2 else cos(v)) * 1.001 + 0.1
            return v

        t0 = time.perf_counter()
        if impl == "jax":
            jnp = jax.numpy
            jax.jit(lambda v: chain(v, jnp.sin, jnp.cos))(x).block_until_ready()
        else:
            from tensorstage import numpy as tnp

            f = ts.program(lambda v: chain(v, tnp.sin, tnp.cos))
            f(x).block_until_ready()
    done = time.perf_counter()
    if impl != "jax":
        (compiled,) = f._cache.values()
        from_disk = compiled.from_disk_cache
    print(json.dumps({"import_s": imported - start, "first_result_s": done - t0, "from_disk": from_disk}))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
