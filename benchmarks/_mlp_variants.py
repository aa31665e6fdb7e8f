"""Where the #3 MLP step's gap to jax comes from: the step as the benchmarks run it and variants with and
without its extras (the optimizer's step count, the out-of-range-label NaN), in both libraries, interleaved,
blocking per step. Not part of ``run.py``; BENCHMARKS.md quotes its H100 output.

    python3 benchmarks/_mlp_variants.py                           # on the CPU
    TENSORSTAGE_BENCH_DEVICE=gpu python3 benchmarks/_mlp_variants.py   # on a GPU (see _common.py)
"""

from __future__ import annotations

from typing import Any

import _common
import numpy as np
from _common import interleaved, setup_device
from workloads import WIDE_LR, WIDE_SIZES, jax_wide_step, ts_wide_step, wide_mlp_data, wide_optimizer

import tensorstage as ts
from tensorstage import numpy as tnp


def ts_plain_loss(p: dict[str, Any], x: Any, y: Any) -> Any:
    """jax's benchmark loss: one-hot times log_softmax, no label check."""
    h = x
    for i in range(len(WIDE_SIZES) - 2):
        h = ts.nn.relu(h @ p[f"w{i}"] + p[f"b{i}"])
    logits = h @ p["w2"] + p["b2"]
    return -tnp.mean(tnp.sum(ts.nn.one_hot(y, WIDE_SIZES[-1], ts.f32) * ts.nn.log_softmax(logits), axis=1))


def ts_plain_step(p: dict[str, Any], x: Any, y: Any) -> Any:
    value, grads = ts.value_and_grad(ts_plain_loss)(p, x, y)
    return ts.tree_map(lambda a, g: a - WIDE_LR * g, p, grads), value


def ts_counted_step(p: dict[str, Any], count: Any, x: Any, y: Any) -> Any:
    value, grads = ts.value_and_grad(ts_plain_loss)(p, x, y)
    return ts.tree_map(lambda a, g: a - WIDE_LR * g, p, grads), count + 1, value


def jax_extras_step(jax: Any) -> Any:
    jnp = jax.numpy

    def step(p: dict[str, Any], count: Any, x: Any, y: Any) -> Any:
        def loss(p: dict[str, Any]) -> Any:
            h = x
            for i in range(len(WIDE_SIZES) - 2):
                h = jax.nn.relu(h @ p[f"w{i}"] + p[f"b{i}"])
            logits = h @ p["w2"] + p["b2"]
            per = -jnp.sum(jax.nn.one_hot(y, WIDE_SIZES[-1]) * jax.nn.log_softmax(logits), axis=1)
            return jnp.mean(jnp.where((y >= 0) & (y < WIDE_SIZES[-1]), per, jnp.nan))

        value, grads = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, g: a - WIDE_LR * g, p, grads), count + 1, value

    return step


def stepper(step: Any, state: list[Any], args: tuple[Any, ...]) -> Any:
    """One step per call on ``state`` (replaced by the step's outputs but the last), blocking on the loss."""

    def run() -> None:
        out = step(*state, *args)
        state[:] = list(out[:-1])
        out[-1].block_until_ready()

    return run


def main() -> None:
    jax = setup_device()
    params, x, y = wide_mlp_data()
    device = ts.devices(_common.platform_name())[0]

    def put(value: Any) -> Any:
        return ts.device_put(value, device)

    def fresh() -> dict[str, Any]:
        return {k: put(v) for k, v in params.items()}

    tx, ty = put(x), put(y)
    opt = ts.tree_map(lambda leaf: put(np.asarray(leaf)), wide_optimizer.init(fresh()))
    fns = {
        "tensorstage, the benchmark's step": stepper(ts.program(ts_wide_step, donate_argnums=(0,)), [fresh(), opt],
                                                     (tx, ty)),
        "tensorstage, jax's math": stepper(ts.program(ts_plain_step, donate_argnums=(0,)), [fresh()], (tx, ty)),
        "tensorstage, jax's math + count": stepper(ts.program(ts_counted_step, donate_argnums=(0,)),
                                                   [fresh(), put(np.int32(0))], (tx, ty)),
    }
    base = "tensorstage, jax's math"
    if jax is not None:
        jdev = jax.devices(_common.platform_name())[0]
        jx, jy = jax.device_put(x, jdev), jax.device_put(y, jdev)

        def jax_params() -> dict[str, Any]:
            return {k: jax.device_put(v, jdev) for k, v in params.items()}

        fns["jax, the benchmark's step"] = stepper(jax.jit(jax_wide_step(jax), donate_argnums=(0,)), [jax_params()],
                                                   (jx, jy))
        fns["jax + count + label check"] = stepper(jax.jit(jax_extras_step(jax), donate_argnums=(0,)),
                                                   [jax_params(), jax.device_put(np.int32(0), jdev)], (jx, jy))
        base = "jax, the benchmark's step"
    best = interleaved(fns, number=20, rounds=15)
    for name, seconds in best.items():
        print(f"{name:36s} {seconds * 1e3:.4f} ms  {seconds / best[base]:.3f}x {base}")


if __name__ == "__main__":
    main()
