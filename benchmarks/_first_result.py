"""Child process for time_to_first_result.py and warm_start.py: one workload, from a fresh interpreter.

Prints one JSON line: ``import_s`` (importing the library), ``first_result_s`` (defining the program, staging,
compiling or loading from the disk cache, transferring inputs, running, and waiting for the result; the
interpreter start and the import are excluded), and whether the executable came from the disk cache.
Usage: python _first_result.py {tensorstage|jax} {selu|mlp|chain}
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


def main() -> None:
    impl, workload = sys.argv[1], sys.argv[2]
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
