"""Staging speed: stage + lower (to StableHLO text) of the MLP train step at 10/50/100/200 layers.

Anchor: jax's ``jax.jit(step).trace(...).lower()`` of the same step (when jax is installed). Targets (issue #6):
<= 0.2x jax at 100 layers, <= 5 us per emitted equation, linear in size.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from _common import report, try_jax
from workloads import fresh_ts_step, has_grad, jax_specs, jax_train_step, ts_specs

LAYERS = (10, 50, 100, 200)
REPEATS = 5


def time_ts(layers: int) -> tuple[float, int, int]:
    program = fresh_ts_step()  # a new Program each time, so nothing staged earlier is reused
    params, x, y = ts_specs(layers)
    gc.collect()
    start = time.perf_counter()
    staged = program.stage(params, x, y)
    text = staged.stablehlo()
    seconds = time.perf_counter() - start
    ops = sum(1 for line in text.splitlines() if '"stablehlo.' in line)
    return seconds, len(staged.graph.eqns), ops


def time_jax(jax: Any, layers: int) -> float:
    step = jax_train_step(jax)  # a new function: jax's trace cache cannot help
    params, x, y = jax_specs(jax, layers)
    gc.collect()
    start = time.perf_counter()
    jax.jit(step).trace(params, x, y).lower()
    return time.perf_counter() - start


def main() -> None:
    jax = try_jax()
    workload = "MLP train step (value_and_grad + SGD)" if has_grad() else "MLP forward loss only (no autodiff here)"
    rows = []
    for layers in LAYERS:
        ours = anchor = float("inf")
        eqns = ops = 0
        for _ in range(REPEATS):  # alternate, so drift on a shared machine hits both alike
            seconds, eqns, ops = time_ts(layers)
            ours = min(ours, seconds)
            if jax is not None:
                anchor = min(anchor, time_jax(jax, layers))
        row: dict[str, Any] = {
            "workload": workload,
            "layers": layers,
            "equations": eqns,
            "stablehlo_ops": ops,
            "ms": ours * 1e3,
            "us_per_equation": ours / eqns * 1e6,
            "us_per_op": ours / ops * 1e6,
        }
        if jax is not None:
            row["jax_ms"] = anchor * 1e3
            row["vs_jax"] = ours / anchor
        rows.append(row)
    report("staging: stage + lower", rows)


if __name__ == "__main__":
    main()
