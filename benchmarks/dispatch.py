"""Dispatch: per-call time of a tiny compiled program (device arrays in, blocking on the result), and the
marginal cost of each extra pytree leaf. Anchors: jax.jit (when installed), the jaxlib floor (our executable
called directly through execute_sharded, no library around it), and NumPy on the host.

Targets (issue #6): <= 0.7x jax.jit per call; <= 1 us per extra leaf; NumPy arguments without extra copies
(a 16 MB argument's call costs about one host copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _common import interleaved, report, try_jax, us

import tensorstage as ts

LEAF_COUNTS = (1, 8, 32, 64)


def add(x: Any, y: Any) -> Any:
    return x + y


def total(xs: list[Any]) -> Any:
    acc = xs[0]
    for x in xs[1:]:
        acc = acc + x
    return acc


def tiny_call() -> list[dict[str, Any]]:
    host = np.ones(8, np.float32)
    f = ts.program(add)
    a, b = ts.asarray(host), ts.asarray(host + 1)
    f(a, b).block_until_ready()
    (compiled,) = f._cache.values()
    execute, handlers, buffers = compiled.executable.execute_sharded, compiled._handlers, [a.buffer, b.buffer]
    fns = {
        "tensorstage": lambda: f(a, b).block_until_ready(),
        "jaxlib floor": lambda: execute(buffers).consume_with_handlers(handlers)[0].block_until_ready(),
        "numpy": lambda: np.add(host, host),
        "tensorstage, numpy args": lambda: f(host, host).block_until_ready(),
    }
    jax = try_jax()
    if jax is not None:
        jf = jax.jit(add)
        ja, jb = jax.device_put(host), jax.device_put(host + 1)
        fns["jax.jit"] = lambda: jf(ja, jb).block_until_ready()
        fns["jax.jit, numpy args"] = lambda: jf(host, host).block_until_ready()
    best = interleaved(fns, number=4000)
    ours = best["tensorstage"]
    rows = []
    for name, seconds in best.items():
        row: dict[str, Any] = {"case": "x + y, f32[8]", "impl": name, "us_per_call": us(seconds)}
        if "jax.jit" in best:
            anchor = best["jax.jit, numpy args"] if "numpy args" in name else best["jax.jit"]
            row["vs_jax"] = seconds / anchor
        row["vs_tensorstage"] = seconds / ours
        rows.append(row)
    return rows


def big_numpy_argument() -> list[dict[str, Any]]:
    """A 16 MB NumPy argument: its one host->device copy dominates, so an extra copy would show as ~2x."""
    host = np.random.default_rng(0).standard_normal(4_000_000).astype(np.float32)
    f = ts.program(first_element)
    fns = {"tensorstage": lambda: f(host).block_until_ready(), "numpy copy": lambda: host.copy()}
    jax = try_jax()
    if jax is not None:
        jf = jax.jit(first_element)
        fns["jax.jit"] = lambda: jf(host).block_until_ready()
    best = interleaved(fns, number=20, rounds=9)
    rows = []
    for name, seconds in best.items():
        row: dict[str, Any] = {"case": "x[0], x: NumPy f32[4M] (16 MB)", "impl": name, "us_per_call": us(seconds)}
        if "jax.jit" in best:
            row["vs_jax"] = seconds / best["jax.jit"]
        row["vs_numpy_copy"] = seconds / best["numpy copy"]
        rows.append(row)
    return rows


def first_element(x: Any) -> Any:
    return x[0]


def per_leaf() -> list[dict[str, Any]]:
    jax = try_jax()
    f = ts.program(total)
    fns: dict[str, Any] = {}
    for n in LEAF_COUNTS:
        xs = [ts.asarray(np.full(8, i, np.float32)) for i in range(n)]
        fns[f"tensorstage/{n}"] = (lambda xs=xs: f(xs).block_until_ready())
        if jax is not None:
            jf = jax.jit(total)
            jxs = [jax.device_put(np.full(8, i, np.float32)) for i in range(n)]
            fns[f"jax.jit/{n}"] = (lambda jf=jf, jxs=jxs: jf(jxs).block_until_ready())
    best = interleaved(fns, number=1000, rounds=9)
    rows = []
    for impl in ("tensorstage", "jax.jit"):
        times = [best.get(f"{impl}/{n}") for n in LEAF_COUNTS]
        if any(t is None for t in times):
            continue
        slope = (times[-1] - times[0]) / (LEAF_COUNTS[-1] - LEAF_COUNTS[0])  # type: ignore[operator]
        row: dict[str, Any] = {"case": "sum of N leaves (list arg)", "impl": impl, "us_per_extra_leaf": us(slope)}
        for n, t in zip(LEAF_COUNTS, times):
            row[f"us_at_{n}"] = us(t)  # type: ignore[arg-type]
        rows.append(row)
    return rows


def main() -> None:
    report("dispatch: tiny program per call", tiny_call())
    report("dispatch: per extra pytree leaf", per_leaf())
    report("dispatch: one big NumPy argument", big_numpy_argument())


if __name__ == "__main__":
    main()
