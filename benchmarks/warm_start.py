"""Warm start: a new process reaching its first result with the persistent executable cache filled (warm) vs
empty (cold). Both include staging, lowering, compiling or deserializing, transfer, the run and the wait.

Target (issue #6): warm <= 0.1x cold. Workloads: a 2100-op elementwise chain (compile-bound), SELU on 1M,
issue #3's MLP train step and the 100-layer one (XLA:CPU's first execution of a program is slower than later ones
whether the executable was compiled or deserialized, which bounds those rows). Anchor: jax with its own persistent
compilation cache (min compile time and entry size 0), cold and warm the same way, when jax is installed. A second
table times the phases of one first result (stage, compile or load, first run with the input transfer, second
run) cold and warm, to show what bounds them. A third compares the cold first run and the steady state with
XLA:CPU's YNNPACK matmuls on (the default) and off (``compiler_options``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from typing import Any

from _children import first_result
from _common import report, try_jax

WORKLOADS = ("chain", "selu", "mlp", "deep_mlp")
RUNS = 5


def main() -> None:
    have_jax = try_jax() is not None
    rows = []
    for workload in WORKLOADS:
        row = {"workload": workload} | warm_and_cold("tensorstage", workload)
        if have_jax:
            jax_row = warm_and_cold("jax", workload)
            row |= {
                "jax_cold_ms": jax_row["cold_ms"],
                "jax_warm_ms": jax_row["warm_ms"],
                "jax_warm_vs_cold": jax_row["warm_vs_cold"],
                "warm_vs_jax_warm": row["warm_ms"] / jax_row["warm_ms"],
            }
        rows.append(row)
    report("warm start: new process, first result", rows)
    report("warm start: phases of a first result (new process, ms)", anatomy())
    report("first run with XLA's own matmul kernels (compiler_options, new process, cold, ms)", without_ynnpack())


def warm_and_cold(impl: str, workload: str) -> dict[str, Any]:
    """Best of RUNS first results in new processes with an empty and with a filled cache directory."""
    colds: list[dict[str, Any]] = []
    warms: list[dict[str, Any]] = []
    filled = tempfile.mkdtemp(prefix="ts-warm-")
    try:
        first_result(impl, workload, **cache_env(impl, filled))  # fills the cache
        for _ in range(RUNS):  # alternate, so drift on a shared machine hits both alike
            fresh = tempfile.mkdtemp(prefix="ts-cold-")
            try:
                colds.append(first_result(impl, workload, **cache_env(impl, fresh)))
            finally:
                shutil.rmtree(fresh, ignore_errors=True)
            warms.append(first_result(impl, workload, **cache_env(impl, filled)))
    finally:
        shutil.rmtree(filled, ignore_errors=True)
    cold = min(colds, key=lambda r: r["first_result_s"])
    warm = min(warms, key=lambda r: r["first_result_s"])
    result = {
        "cold_ms": cold["first_result_s"] * 1e3,
        "warm_ms": warm["first_result_s"] * 1e3,
        "warm_vs_cold": warm["first_result_s"] / cold["first_result_s"],
        "import_ms": warm["import_s"] * 1e3,
        "warm_vs_cold_incl_import": (warm["first_result_s"] + warm["import_s"])
        / (cold["first_result_s"] + cold["import_s"]),
    }
    if impl == "tensorstage":
        result["warm_loaded_from_disk"] = all(w["from_disk"] for w in warms)
    return result


def cache_env(impl: str, directory: str) -> dict[str, str]:
    if impl == "jax":  # jax's defaults skip caching quick compiles and small entries: cache everything, as we do
        return {"JAX_COMPILATION_CACHE_DIR": directory, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    return {"TENSORSTAGE_CACHE_DIR": directory}


def anatomy() -> list[dict[str, Any]]:
    """Where a first result's time goes, cold and warm: what the disk cache removes and what it cannot."""
    rows = []
    for workload in WORKLOADS[1:]:
        filled = tempfile.mkdtemp(prefix="ts-phases-")
        try:
            for cache in ("cold", "warm"):
                runs = []
                for _ in range(3):
                    directory = filled if cache == "warm" else tempfile.mkdtemp(prefix="ts-cold-")
                    runs.append(first_result("phases", workload, TENSORSTAGE_CACHE_DIR=directory))
                    if cache == "cold":
                        shutil.rmtree(directory, ignore_errors=True)
                if cache == "cold":
                    first_result("phases", workload, TENSORSTAGE_CACHE_DIR=filled)
                best = min(runs, key=lambda r: r["stage_s"] + r["compile_or_load_s"] + r["first_run_s"])
                rows.append({"workload": workload, "cache": cache, "from_disk": best["from_disk"]} | _in_ms(best))
        finally:
            shutil.rmtree(filled, ignore_errors=True)
    return rows


PHASES = ("stage_s", "compile_or_load_s", "first_run_s", "second_run_s", "steady_run_s")
YNNPACK_OFF = {"xla_cpu_experimental_ynn_fusion_type": ""}


def _in_ms(run: dict[str, Any]) -> dict[str, float]:
    return {name[:-2] + "_ms": run[name] * 1e3 for name in PHASES}


def without_ynnpack() -> list[dict[str, Any]]:
    """XLA:CPU hands matmuls to YNNPACK, which builds a runtime per matmul on a program's first run (most of the
    deep step's first run). ``compiler_options`` can turn that off: the first run and the steady state, both ways."""
    rows = []
    for workload in ("mlp", "deep_mlp"):
        for label, options in (("default", {}), ("ynnpack off", YNNPACK_OFF)):
            runs = []
            for _ in range(3):
                directory = tempfile.mkdtemp(prefix="ts-cold-")
                try:
                    runs.append(first_result(
                        "phases", workload, TENSORSTAGE_CACHE_DIR=directory, BENCH_COMPILER_OPTIONS=json.dumps(options)
                    ))
                finally:
                    shutil.rmtree(directory, ignore_errors=True)
            best = min(runs, key=lambda r: r["first_run_s"])
            steady = sorted(r["steady_run_s"] for r in runs)[1]
            rows.append({"workload": workload, "matmuls": label} | _in_ms(best) | {"steady_run_ms": steady * 1e3})
    return rows


if __name__ == "__main__":
    main()
