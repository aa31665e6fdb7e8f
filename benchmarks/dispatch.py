"""Dispatch: per-call time of a tiny compiled program (device arrays in, blocking on the result), and the
marginal cost of each extra pytree leaf. Anchors: jax.jit (when installed), the jaxlib floor (our executable
called directly through execute_sharded, no library around it), and NumPy on the host.

Targets (issue #6): <= 0.7x jax.jit per call; <= 1 us per extra leaf; NumPy arguments without extra copies
(a 16 MB argument's call costs about one host copy). On a gpu run (``run.py --device gpu``) both libraries' arrays
and programs are on the GPU, so NumPy arguments cross to it on every call; NumPy itself stays on the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _common import check_placement, gpu_run, interleaved, jax_put, pick, report, setup_device, ts_program, ts_put, us

LEAF_COUNTS = (1, 8, 32, 64)


def add(x: Any, y: Any) -> Any:
    return x + y


def total(xs: list[Any]) -> Any:
    acc = xs[0]
    for x in xs[1:]:
        acc = acc + x
    return acc


def tiny_call(jax: Any) -> list[dict[str, Any]]:
    host = np.ones(8, np.float32)
    f = ts_program(add)
    a, b = ts_put(host), ts_put(host + 1)
    f(a, b).block_until_ready()
    (compiled,) = f._cache.values()
    execute, handlers, buffers = compiled.executable.execute_sharded, compiled._handlers, [a.buffer, b.buffer]
    fns = {
        "tensorstage": lambda: f(a, b).block_until_ready(),
        "jaxlib floor": lambda: execute(buffers).consume_with_handlers(handlers)[0].block_until_ready(),
        "numpy": lambda: np.add(host, host),
        "tensorstage, numpy args": lambda: f(host, host).block_until_ready(),
    }
    if jax is not None:
        jf = jax.jit(add)
        ja, jb = jax_put(jax, host), jax_put(jax, host + 1)
        fns["jax.jit"] = lambda: jf(ja, jb).block_until_ready()
        fns["jax.jit, numpy args"] = lambda: jf(host, host).block_until_ready()
    if gpu_run():  # every result where it should be
        check_placement(ours=f(a, b), theirs=jf(ja, jb) if jax is not None else None)
        check_placement(ours=f(host, host), theirs=jf(host, host) if jax is not None else None)
    best = interleaved(fns, number=pick(4000, 500), rounds=pick(15, 5))
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


def big_numpy_argument(jax: Any) -> list[dict[str, Any]]:
    """A 16 MB NumPy argument: its one host->device copy dominates, so an extra copy would show as ~2x."""
    host = np.random.default_rng(0).standard_normal(4_000_000).astype(np.float32)
    f = ts_program(first_element)
    fns = {"tensorstage": lambda: f(host).block_until_ready(), "numpy copy": lambda: host.copy()}
    if jax is not None:
        jf = jax.jit(first_element)
        fns["jax.jit"] = lambda: jf(host).block_until_ready()
    if gpu_run():
        check_placement(ours=f(host), theirs=jf(host) if jax is not None else None)
    best = interleaved(fns, number=pick(20, 5), rounds=pick(9, 5))
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


def per_leaf(jax: Any) -> list[dict[str, Any]]:
    f = ts_program(total)
    fns: dict[str, Any] = {}
    for n in LEAF_COUNTS:
        xs = [ts_put(np.full(8, i, np.float32)) for i in range(n)]
        fns[f"tensorstage/{n}"] = (lambda xs=xs: f(xs).block_until_ready())
        if jax is not None:
            jf = jax.jit(total)
            jxs = [jax_put(jax, np.full(8, i, np.float32)) for i in range(n)]
            fns[f"jax.jit/{n}"] = (lambda jf=jf, jxs=jxs: jf(jxs).block_until_ready())
    if gpu_run():
        check_placement(ours=f(xs), theirs=jf(jxs) if jax is not None else None)  # the last count's
    best = interleaved(fns, number=pick(1000, 200), rounds=pick(9, 5))
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
    jax = setup_device()
    report("dispatch: tiny program per call", tiny_call(jax))
    report("dispatch: per extra pytree leaf", per_leaf(jax))
    report("dispatch: one big NumPy argument", big_numpy_argument(jax))


if __name__ == "__main__":
    main()
