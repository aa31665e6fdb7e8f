"""Time to first result in a fresh process: define the program, stage, compile, transfer, run, wait.

tensorstage runs with its persistent cache off (cold, like jax's default); the warm figures are in
warm_start.py. The import of each library is reported separately. Target (issue #6): <= jax for SELU on 1M and
the 100-layer MLP train step.
"""

from __future__ import annotations

from typing import Any

from _children import best_first_result
from _common import report, try_jax

WORKLOADS = ("selu", "mlp")
RUNS = 3


def main() -> None:
    have_jax = try_jax() is not None
    rows = []
    for workload in WORKLOADS:
        ours = best_first_result("tensorstage", workload, RUNS, TENSORSTAGE_COMPILE_CACHE="0")
        row: dict[str, Any] = {
            "workload": workload,
            "ms": ours["first_result_s"] * 1e3,
            "import_ms": ours["import_s"] * 1e3,
        }
        if have_jax:
            theirs = best_first_result("jax", workload, RUNS)
            row["jax_ms"] = theirs["first_result_s"] * 1e3
            row["jax_import_ms"] = theirs["import_s"] * 1e3
            row["vs_jax"] = ours["first_result_s"] / theirs["first_result_s"]
        rows.append(row)
    report("time to first result (cold, fresh process)", rows)


if __name__ == "__main__":
    main()
