"""One SGD train step of a 784->1024->1024->10 ReLU MLP at batch 256 with softmax cross-entropy (issue #3, item 9).

Timed in one run (best of interleaved rounds, results waited for): ours, one ``@ts.program`` doing
``value_and_grad`` + ``ts.optim.sgd`` with the parameters donated; ``jax.jit`` of the same step (donated) when
jax is installed; and NumPy with the backward pass written by hand. The first steps of all three are checked
against each other. Target: ours <= 1.1x jax.jit.

    python benchmarks/mlp_step.py [--rounds N]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import interleaved, machine, ratio, report, try_jax, us
from workloads import WIDE_BATCH, WIDE_LR, WIDE_SIZES, jax_wide_step, ts_wide_step, wide_mlp_data, wide_optimizer

import tensorstage as ts

Params = dict[str, Any]
train_step = ts.program(donate_argnums=(0,))(ts_wide_step)


# ----------------------------------------------------------------------------------------------- numpy


def numpy_step(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> tuple[dict[str, np.ndarray], float]:
    layers = len(WIDE_SIZES) - 1
    acts = [x]
    for i in range(layers - 1):
        acts.append(np.maximum(acts[-1] @ params[f"w{i}"] + params[f"b{i}"], 0))
    logits = acts[-1] @ params[f"w{layers - 1}"] + params[f"b{layers - 1}"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    value = float(-log_probs[np.arange(WIDE_BATCH), y].mean())
    delta = np.exp(log_probs)
    delta[np.arange(WIDE_BATCH), y] -= 1
    delta /= WIDE_BATCH
    new = {}
    for i in reversed(range(layers)):
        new[f"w{i}"] = params[f"w{i}"] - WIDE_LR * (acts[i].T @ delta)
        new[f"b{i}"] = params[f"b{i}"] - WIDE_LR * delta.sum(axis=0)
        if i:
            delta = (delta @ params[f"w{i}"].T) * (acts[i] > 0)
    return new, value


# ------------------------------------------------------------------------------------------------- jax


def jax_step_fn(jax: Any) -> Callable[..., Any]:
    return jax.jit(jax_wide_step(jax), donate_argnums=0)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--number", type=int, default=5, help="steps per round")
    args = parser.parse_args()

    host_params, x, y = wide_mlp_data()
    want_params, want_loss = numpy_step(host_params, x, y)

    ours: dict[str, Any] = {"params": {k: ts.asarray(v) for k, v in host_params.items()}}
    ours["state"] = wide_optimizer.init(ours["params"])
    dev_x, dev_y = ts.asarray(x), ts.asarray(y)
    ours["params"], ours["state"], value = train_step(ours["params"], ours["state"], dev_x, dev_y)
    _check("tensorstage", ours["params"], float(value), want_params, want_loss)

    def ours_step() -> None:
        ours["params"], ours["state"], value = train_step(ours["params"], ours["state"], dev_x, dev_y)
        value.block_until_ready()

    numpy_params = dict(host_params)
    candidates: dict[str, Callable[[], Any]] = {
        "tensorstage": ours_step,
        "numpy": lambda: numpy_step(numpy_params, x, y),
    }
    jax = try_jax()
    if jax is not None:
        jax_step = jax_step_fn(jax)
        theirs: dict[str, Any] = {"params": jax.device_put(host_params)}
        jax_x, jax_y = jax.device_put(x), jax.device_put(y)
        theirs["params"], jax_value = jax_step(theirs["params"], jax_x, jax_y)
        _check("jax.jit", theirs["params"], float(jax_value), want_params, want_loss)

        def jax_train() -> None:
            theirs["params"], value = jax_step(theirs["params"], jax_x, jax_y)
            value.block_until_ready()

        candidates["jax.jit"] = jax_train
    best = interleaved(candidates, args.number, args.rounds)

    rows: list[dict[str, Any]] = [{"impl": name, "ms_per_step": us(t) / 1e3} for name, t in best.items()]
    rows.append({"ratio": "tensorstage / jax.jit", "value": _fmt(ratio(best["tensorstage"], best.get("jax.jit")))})
    rows.append({"ratio": "tensorstage / numpy", "value": _fmt(ratio(best["tensorstage"], best["numpy"]))})
    shape = "->".join(map(str, WIDE_SIZES))
    report(f"MLP train step {shape}, batch {WIDE_BATCH}, softmax CE + SGD  (target tensorstage/jax.jit <= 1.1)", rows)
    print("  machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()))


def _check(name: str, params: Params, value: float, want: dict[str, np.ndarray], want_loss: float) -> None:
    if abs(value - want_loss) > 1e-4 * max(1.0, abs(want_loss)):
        raise SystemExit(f"{name}: loss {value} differs from NumPy's {want_loss}")
    for key, expected in want.items():
        if not np.allclose(np.asarray(params[key]), expected, rtol=1e-3, atol=1e-5):
            raise SystemExit(f"{name}: updated {key} differs from NumPy's")


def _fmt(value: float | None) -> str:
    return "n/a (jax not installed)" if value is None else f"{value:.3f}x"


if __name__ == "__main__":
    main()
