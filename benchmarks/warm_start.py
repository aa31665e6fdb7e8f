"""Warm start: a new process reaching its first result with the persistent executable cache filled (warm) vs
empty (cold). Both include staging, lowering, compiling or deserializing, transfer, the run and the wait.

Target (issue #6): warm <= 0.1x cold. Workloads: a 2100-op elementwise chain (compile-bound), SELU on 1M,
and the 100-layer MLP train step (XLA:CPU's first execution of a big program is slow whether the executable was
compiled or deserialized, which bounds that row's ratio). A second table times the phases of one first result
(stage, compile or load, first run with the input transfer, second run) cold and warm, to show what bounds them.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from _children import first_result
from _common import report

WORKLOADS = ("chain", "selu", "mlp")
RUNS = 5


def main() -> None:
    rows = []
    for workload in WORKLOADS:
        colds: list[dict[str, Any]] = []
        warms: list[dict[str, Any]] = []
        filled = tempfile.mkdtemp(prefix="ts-warm-")
        try:
            first_result("tensorstage", workload, TENSORSTAGE_CACHE_DIR=filled)  # fills the cache
            for _ in range(RUNS):  # alternate, so drift on a shared machine hits both alike
                fresh = tempfile.mkdtemp(prefix="ts-cold-")
                try:
                    colds.append(first_result("tensorstage", workload, TENSORSTAGE_CACHE_DIR=fresh))
                finally:
                    shutil.rmtree(fresh, ignore_errors=True)
                warms.append(first_result("tensorstage", workload, TENSORSTAGE_CACHE_DIR=filled))
        finally:
            shutil.rmtree(filled, ignore_errors=True)
        cold = min(colds, key=lambda r: r["first_result_s"])
        warm = min(warms, key=lambda r: r["first_result_s"])
        rows.append({
            "workload": workload,
            "cold_ms": cold["first_result_s"] * 1e3,
            "warm_ms": warm["first_result_s"] * 1e3,
            "warm_vs_cold": warm["first_result_s"] / cold["first_result_s"],
            "warm_loaded_from_disk": all(w["from_disk"] for w in warms),
            "import_ms": warm["import_s"] * 1e3,
            "warm_vs_cold_incl_import": (warm["first_result_s"] + warm["import_s"])
            / (cold["first_result_s"] + cold["import_s"]),
        })
    report("warm start: new process, first result", rows)
    report("warm start: phases of a first result (new process, ms)", anatomy())


def anatomy() -> list[dict[str, Any]]:
    """Where a first result's time goes, cold and warm: what the disk cache removes and what it cannot."""
    rows = []
    for workload in ("selu", "mlp"):
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
                rows.append({"workload": workload, "cache": cache, "from_disk": best["from_disk"]} | {
                    name[:-2] + "_ms": best[name] * 1e3
                    for name in ("stage_s", "compile_or_load_s", "first_run_s", "second_run_s")
                })
        finally:
            shutil.rmtree(filled, ignore_errors=True)
    return rows


if __name__ == "__main__":
    main()
