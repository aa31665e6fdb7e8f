"""Steady state: per-call time of compiled programs where XLA does the work, blocking on every result.

Workloads: SELU on 1M f32, ``x @ x.T`` at 2000x2000 f32, and two MLP train steps with their parameters donated
(updated in place): issue #3's (784->1024->1024->10, batch 256), the one the target names, and the 100-layer one.
Anchors: jax.jit of the same math (when installed) and NumPy. Target: <= 1.05x jax.

On a gpu run (``run.py --device gpu``) tensorstage and jax.jit run on the GPU and NumPy on the host; a big
matmul (f32 and bf16, ``BIG_MATMUL``) adds TFLOP/s rows for both. ``--quick`` drops the 100-layer step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import (
    check_placement,
    dry_run,
    gpu_run,
    interleaved,
    jax_put,
    pick,
    platform_name,
    quick,
    report,
    setup_device,
    ts_program,
    ts_put,
)
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
BIG_MATMUL = 8192  # gpu runs only (512 in a dry run on the CPU)


def numpy_selu(x: np.ndarray) -> np.ndarray:
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1.0))


def elementwise_and_matmul(jax: Any) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    cases = [
        ("selu f32[1M]", rng.standard_normal(1_000_000).astype(np.float32), ts_selu,
         jax_selu(jax) if jax is not None else None, numpy_selu, pick(200, 20)),
        ("x @ x.T f32[2000,2000]", rng.standard_normal((2000, 2000)).astype(np.float32), ts_gram,
         (lambda x: x @ x.T) if jax is not None else None, lambda x: x @ x.T, pick(5, 2)),
    ]
    for name, host, ts_fn, jax_fn, np_fn, number in cases:
        f = ts_program(ts_fn)
        x = ts_put(host)
        fns: dict[str, Callable[[], Any]] = {"tensorstage": _blocking(f, x), "numpy": _blocking(np_fn, host)}
        if jax_fn is not None:
            fns["jax.jit"] = _blocking(jax.jit(jax_fn), jax_put(jax, host))
        if gpu_run():
            check_placement(ours=f(x), theirs=jax.jit(jax_fn)(jax_put(jax, host)) if jax_fn is not None else None)
        best = interleaved(fns, number=number, rounds=pick(11, 5))
        row = _row(name, best)
        if jax_fn is not None:
            ours_hlo = hlo_ops(f.stage(host).compile(**_compile_device()).as_text())
            jax_hlo = hlo_ops(jax.jit(jax_fn).lower(host).compile().as_text())
            row["same_optimized_hlo_as_jax"] = ours_hlo == jax_hlo  # then any gap is timing noise
        rows.append(row)
    return rows


def _compile_device() -> dict[str, str]:
    """``Staged.compile``'s device: the default (as before) on a cpu run, the benchmark platform on a gpu run."""
    return {"device": platform_name()} if gpu_run() else {}


def big_matmul(jax: Any) -> list[dict[str, Any]]:
    """``a @ b`` at BIG_MATMUL^2 in f32 and bf16 on the GPU (gpu runs only): TFLOP/s for tensorstage and jax.jit.
    NumPy is not timed here (seconds per call on the host)."""
    import ml_dtypes

    n = 512 if dry_run() else BIG_MATMUL
    rng = np.random.default_rng(0)
    a32, b32 = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    rows = []
    for dtype, label in ((np.float32, "f32"), (ml_dtypes.bfloat16, "bf16")):
        ha, hb = a32.astype(dtype), b32.astype(dtype)
        f = ts_program(_matmul)
        ta, tb = ts_put(ha), ts_put(hb)
        fns: dict[str, Callable[[], Any]] = {"tensorstage": _waiting(f, ta, tb)}
        if jax is not None:
            jf = jax.jit(_matmul)
            ja, jb = jax_put(jax, ha), jax_put(jax, hb)
            fns["jax.jit"] = _waiting(jf, ja, jb)
            check_placement(ours=f(ta, tb), theirs=jf(ja, jb))
            close = np.allclose(np.asarray(f(ta, tb).numpy(), np.float32), np.asarray(jf(ja, jb), np.float32),
                                rtol=0.05, atol=0.05 * np.sqrt(n))
        best = interleaved(fns, number=pick(10, 5), rounds=pick(7, 3))
        row = _row(f"a @ b {label}[{n},{n}]", best)
        flops = 2.0 * n**3
        row["tflops"] = flops / best["tensorstage"] / 1e12
        if jax is not None:
            row["jax_tflops"] = flops / best["jax.jit"] / 1e12
            row["close_to_jax"] = bool(close)
            ours_hlo = hlo_ops(f.stage(ha, hb).compile(**_compile_device()).as_text())
            row["same_optimized_hlo_as_jax"] = ours_hlo == hlo_ops(jf.lower(ja, jb).compile().as_text())
        rows.append(row)
    return rows


def _matmul(a: Any, b: Any) -> Any:
    return a @ b


def _waiting(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args).block_until_ready()


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
    step = ts_program(ts_wide_step, donate_argnums=(0,))
    device_params = {name: ts_put(value) for name, value in params.items()}
    opt = wide_optimizer.init(device_params)
    if gpu_run():  # init makes its step count on the default device (the CPU): through the host to ours
        opt = ts.tree_map(lambda leaf: ts_put(np.asarray(leaf)), opt)
    state: dict[str, Any] = {"p": device_params, "opt": opt}
    tx, ty = ts_put(x), ts_put(y)

    def ours() -> None:
        state["p"], state["opt"], loss = step(state["p"], state["opt"], tx, ty)
        loss.block_until_ready()

    fns: dict[str, Callable[[], Any]] = {"tensorstage": ours}
    if jax is not None:
        fns["jax.jit"] = _jax_stepper(jax, jax_wide_step(jax), params, x, y)
    if gpu_run():
        ours()
        check_placement(ours=state["p"]["w0"])
        check_placement(ours=state["opt"].count)
    return _row("MLP train step 784-1024-1024-10 (donated)", interleaved(fns, number=5, rounds=pick(11, 5)))


def deep_train_step(jax: Any) -> dict[str, Any]:
    params, x, y = mlp_data(MLP_LAYERS)
    step = ts_program(fresh_ts_step().fn, donate_argnums=(0,))
    state = {"p": [(ts_put(w), ts_put(b)) for w, b in params]}
    tx, ty = ts_put(x), ts_put(y)

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
    state = {"p": jax_put(jax, params)}
    jx, jy = jax_put(jax, x), jax_put(jax, y)

    def theirs() -> None:
        state["p"], loss = jitted(state["p"], jx, jy)
        loss.block_until_ready()
        if gpu_run() and not checked:
            check_placement(theirs=loss)
            checked.append(True)

    checked: list[bool] = []
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
    jax = setup_device()
    rows = elementwise_and_matmul(jax)
    rows.append(wide_train_step(jax))
    if not quick():  # its compiles are the slow part of a quick run
        rows.append(deep_train_step(jax))
    if gpu_run():
        rows.extend(big_matmul(jax))
    report("steady state: per call", rows)


if __name__ == "__main__":
    main()
