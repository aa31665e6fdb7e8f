"""Time to first result in a fresh process: define the program, stage, compile, transfer, run, wait.

tensorstage runs with its persistent cache off (cold, like jax's default); the warm figures are in
warm_start.py. The import of each library is reported separately. Target (issue #6): <= jax for SELU on 1M and
issue #3's MLP train step (``mlp``); the 100-layer step (``deep_mlp``) is an extra row.

On a gpu run (``run.py --device gpu``) both make their GPU client in the import phase and run there; ``--quick``
runs each twice (not five times) and drops ``deep_mlp``.
"""

from __future__ import annotations

from typing import Any

from _children import first_result
from _common import gpu_run, pick, platform_name, report, try_jax

WORKLOADS = ("selu", "mlp", "deep_mlp")
RUNS = 5


def main() -> None:
    have_jax = try_jax() is not None
    rows = []
    for workload in pick(WORKLOADS, ("selu", "mlp")):
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        for _ in range(pick(RUNS, 2)):  # alternate, so drift on a shared machine hits both alike
            ours.append(first_result("tensorstage", workload, TENSORSTAGE_COMPILE_CACHE="0"))
            if have_jax:
                theirs.append(first_result("jax", workload))
        if gpu_run():  # each child says where its result was
            wrong = {r["platform"] for r in ours + theirs} - {platform_name()}
            if wrong:
                raise SystemExit(f"time to first result: a result was on {wrong}, not {platform_name()}")
        best = min(ours, key=lambda r: r["first_result_s"])
        row: dict[str, Any] = {
            "workload": workload,
            "ms": best["first_result_s"] * 1e3,
            "import_ms": min(r["import_s"] for r in ours) * 1e3,
        }
        if theirs:
            anchor = min(theirs, key=lambda r: r["first_result_s"])
            row["jax_ms"] = anchor["first_result_s"] * 1e3
            row["jax_import_ms"] = min(r["import_s"] for r in theirs) * 1e3
            row["vs_jax"] = best["first_result_s"] / anchor["first_result_s"]
        rows.append(row)
    report("time to first result (cold, fresh process)", rows)


if __name__ == "__main__":
    main()
