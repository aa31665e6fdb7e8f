"""Steady state: per-call time of compiled programs where XLA does the work, blocking on every result.

Workloads: SELU on 1M f32, ``x @ x.T`` at 2000x2000 f32, and two MLP train steps with their parameters donated
(updated in place): issue #3's (784->1024->1024->10, batch 256), the one the target names, and the 100-layer one.
Anchors: jax.jit of the same math (when installed) and NumPy. Target: <= 1.05x jax.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import interleaved, report, try_jax
from workloads import (
    fresh_ts_step,
    has_grad,
    jax_selu,
    jax_train_step,
    jax_wide_step,
    mlp_data,
    ts_gram,
    ts_selu,
    ts_wide_step,
    wide_mlp_data,
    wide_optimizer,
)

import tensorstage as ts

MLP_LAYERS = 100


def numpy_selu(x: np.ndarray) -> np.ndarray:
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1.0))


def elementwise_and_matmul(jax: Any) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    cases = [
        ("selu f32[1M]", rng.standard_normal(1_000_000).astype(np.float32), ts_selu,
         jax_selu(jax) if jax is not None else None, numpy_selu, 200),
        ("x @ x.T f32[2000,2000]", rng.standard_normal((2000, 2000)).astype(np.float32), ts_gram,
         (lambda x: x @ x.T) if jax is not None else None, lambda x: x @ x.T, 5),
    ]
    for name, host, ts_fn, jax_fn, np_fn, number in cases:
        f = ts.program(ts_fn)
        x = ts.asarray(host)
        fns: dict[str, Callable[[], Any]] = {"tensorstage": _blocking(f, x), "numpy": _blocking(np_fn, host)}
        if jax_fn is not None:
            fns["jax.jit"] = _blocking(jax.jit(jax_fn), jax.device_put(host))
        best = interleaved(fns, number=number, rounds=11)
        row = _row(name, best)
        if jax_fn is not None:
            ours_hlo = hlo_ops(f.stage(host).compile().as_text())
            jax_hlo = hlo_ops(jax.jit(jax_fn).lower(host).compile().as_text())
            row["same_optimized_hlo_as_jax"] = ours_hlo == jax_hlo  # then any gap is timing noise
        rows.append(row)
    return rows


def hlo_ops(text: str) -> list[tuple[str, str]]:
    """(result type, opcode) of every HLO instruction: equal lists mean XLA built the same program."""
    return re.findall(r"= (\S+) ([\w-]+)\(", re.sub(r", metadata=\{[^}]*\}", "", text))


def _blocking(fn: Callable[[Any], Any], arg: Any) -> Callable[[], Any]:
    def call() -> Any:
        out = fn(arg)
        return out.block_until_ready() if hasattr(out, "block_until_ready") else out

    return call


def wide_train_step(jax: Any) -> dict[str, Any]:
    """Issue #3's step, as benchmarks/mlp_step.py runs it (ts.optim.sgd; jax: the same update written out)."""
    params, x, y = wide_mlp_data()
    step = ts.program(donate_argnums=(0,))(ts_wide_step)
    device_params = {name: ts.asarray(value) for name, value in params.items()}
    state: dict[str, Any] = {"p": device_params, "opt": wide_optimizer.init(device_params)}
    tx, ty = ts.asarray(x), ts.asarray(y)

    def ours() -> None:
        state["p"], state["opt"], loss = step(state["p"], state["opt"], tx, ty)
        loss.block_until_ready()

    fns: dict[str, Callable[[], Any]] = {"tensorstage": ours}
    if jax is not None:
        fns["jax.jit"] = _jax_stepper(jax, jax_wide_step(jax), params, x, y)
    return _row("MLP train step 784-1024-1024-10 (donated)", interleaved(fns, number=5, rounds=11))


def deep_train_step(jax: Any) -> dict[str, Any]:
    params, x, y = mlp_data(MLP_LAYERS)
    step = ts.program(donate_argnums=(0,))(fresh_ts_step().fn)
    state = {"p": [(ts.asarray(w), ts.asarray(b)) for w, b in params]}
    tx, ty = ts.asarray(x), ts.asarray(y)

    def ours() -> None:
        state["p"], loss = step(state["p"], tx, ty)
        loss.block_until_ready()

    fns: dict[str, Callable[[], Any]] = {"tensorstage": ours}
    if jax is not None:
        fns["jax.jit"] = _jax_stepper(jax, jax_train_step(jax), params, x, y)
    label = "deep MLP train step 100x256 (donated)" if has_grad() else "deep MLP forward loss 100x256 (no autodiff)"
    return _row(label, interleaved(fns, number=5, rounds=11))


def _jax_stepper(jax: Any, step: Callable[..., Any], params: Any, x: Any, y: Any) -> Callable[[], None]:
    jitted = jax.jit(step, donate_argnums=(0,))
    state = {"p": jax.device_put(params)}
    jx, jy = jax.device_put(x), jax.device_put(y)

    def theirs() -> None:
        state["p"], loss = jitted(state["p"], jx, jy)
        loss.block_until_ready()

    return theirs


def _row(name: str, best: dict[str, float]) -> dict[str, Any]:
    row: dict[str, Any] = {"case": name, "ms": best["tensorstage"] * 1e3}
    if "jax.jit" in best:
        row["jax_ms"] = best["jax.jit"] * 1e3
        row["vs_jax"] = best["tensorstage"] / best["jax.jit"]
    if "numpy" in best:
        row["numpy_ms"] = best["numpy"] * 1e3
        row["vs_numpy"] = best["tensorstage"] / best["numpy"]
    return row


def main() -> None:
    jax = try_jax()
    rows = elementwise_and_matmul(jax)
    rows.append(wide_train_step(jax))
    rows.append(deep_train_step(jax))
    report("steady state: per call", rows)


if __name__ == "__main__":
    main()
