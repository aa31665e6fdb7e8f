"""Run every benchmark (each in its own process), print the whole table against issue #6's targets, and write
``benchmarks/results.json`` and ``benchmarks/results.svg``.

    .venv/bin/python benchmarks/run.py            # all
    .venv/bin/python benchmarks/run.py dispatch   # some: their rows replace theirs in results.json
    .venv/bin/python benchmarks/run.py --summarize   # the summary and chart again from results.json

Without jax installed, the jax columns are absent and the rows that need them say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _common import machine
from plot import write_svg

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results.json")
SCRIPTS = ("dispatch", "staging_speed", "steady_state", "warm_start", "time_to_first_result", "memory")
_NOT_BENCHMARKS = {"run", "plot", "workloads"}


def all_scripts() -> tuple[str, ...]:
    """Issue #6's scripts first, then every other benchmark in this folder (other issues' workloads)."""
    others = sorted(
        name[:-3]
        for name in os.listdir(HERE)
        if name.endswith(".py") and not name.startswith("_") and name[:-3] not in _NOT_BENCHMARKS | set(SCRIPTS)
    )
    return SCRIPTS + tuple(others)


def run_scripts(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every row the scripts report, each tagged with the script that measured it."""
    rows: list[dict[str, Any]] = []
    for name in names:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
            path = f.name
        try:
            env = {**os.environ, "TENSORSTAGE_BENCH_JSON": path}
            subprocess.run([sys.executable, os.path.join(HERE, f"{name}.py")], env=env, check=True)
            with open(path) as f:
                rows.extend({**json.loads(line), "script": name} for line in f if line.strip())
        finally:
            os.unlink(path)
    return rows


def merged(saved: dict[str, Any], names: tuple[str, ...], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The saved run's rows with those of the scripts just run replaced, so a partial run keeps the others."""
    kept = [row for row in saved["rows"] if row.get("script") not in names]
    return kept + rows


def _find(rows: list[dict[str, Any]], benchmark: str, **match: Any) -> dict[str, Any] | None:
    for row in rows:
        if row["benchmark"].startswith(benchmark) and all(row.get(k) == v for k, v in match.items()):
            return row
    return None


Check = tuple[str, Callable[[list[dict[str, Any]]], float | None], str, float]

CHECKS: list[Check] = [
    ("dispatch, tiny program vs jax.jit", lambda r: _get(r, "dispatch: tiny", "vs_jax", impl="tensorstage"), "<=", 0.7),
    ("dispatch, us per extra leaf", lambda r: _get(r, "dispatch: per extra", "us_per_extra_leaf", impl="tensorstage"),
     "<=", 1.0),
    ("dispatch, NumPy args vs jax.jit (no target)",
     lambda r: _get(r, "dispatch: tiny", "vs_jax", impl="tensorstage, numpy args"), "<=", float("inf")),
    ("dispatch, 16 MB NumPy arg vs one host copy",  # a second copy would read ~2
     lambda r: _get(r, "dispatch: one big", "vs_numpy_copy", impl="tensorstage"), "<=", 1.5),
    ("staging, 100 layers vs jax", lambda r: _get(r, "staging", "vs_jax", layers=100), "<=", 0.2),
    ("staging, us per equation (100 layers)", lambda r: _get(r, "staging", "us_per_equation", layers=100), "<=", 5.0),
    ("staging, us per StableHLO op (100 layers)", lambda r: _get(r, "staging", "us_per_op", layers=100), "<=", 5.0),
    ("staging, linearity: us/eqn 200 vs 50 layers", lambda r: _linearity(r), "<=", 1.25),
    ("warm start, 2100-op chain: warm/cold", lambda r: _get(r, "warm start", "warm_vs_cold", workload="chain"),
     "<=", 0.1),
    ("warm start, SELU: warm/cold", lambda r: _get(r, "warm start", "warm_vs_cold", workload="selu"), "<=", 0.1),
    ("warm start, MLP step (#3): warm/cold", lambda r: _get(r, "warm start", "warm_vs_cold", workload="mlp"),
     "<=", 0.1),
    ("warm start, deep MLP step: warm/cold", lambda r: _get(r, "warm start", "warm_vs_cold", workload="deep_mlp"),
     "<=", 0.1),
    ("warm start, SELU: warm vs jax's disk cache (no target)",
     lambda r: _get(r, "warm start", "warm_vs_jax_warm", workload="selu"), "<=", float("inf")),
    ("warm start, MLP step: warm vs jax's disk cache (no target)",
     lambda r: _get(r, "warm start", "warm_vs_jax_warm", workload="mlp"), "<=", float("inf")),
    ("steady state, SELU 1M vs jax", lambda r: _get(r, "steady", "vs_jax", case="selu f32[1M]"), "<=", 1.05),
    ("steady state, x @ x.T 2000^2 vs jax", lambda r: _get(r, "steady", "vs_jax", case="x @ x.T f32[2000,2000]"),
     "<=", 1.05),
    ("steady state, MLP step (#3) vs jax", lambda r: _get_prefix(r, "steady", "vs_jax", "case", "MLP"), "<=", 1.05),
    ("steady state, deep MLP step vs jax", lambda r: _get_prefix(r, "steady", "vs_jax", "case", "deep MLP"),
     "<=", 1.05),
    ("time to first result, SELU vs jax", lambda r: _get(r, "time to first", "vs_jax", workload="selu"), "<=", 1.0),
    ("time to first result, MLP step (#3) vs jax", lambda r: _get(r, "time to first", "vs_jax", workload="mlp"),
     "<=", 1.0),
    ("time to first result, deep MLP step vs jax",
     lambda r: _get(r, "time to first", "vs_jax", workload="deep_mlp"), "<=", 1.0),
    ("memory, MB growth over 10,000 calls", lambda r: _get(r, "memory", "rss_growth_mb", case="10000 calls"),
     "<=", 0.5),
    ("memory, KB per compile beyond the cache bound",
     lambda r: _get_prefix(r, "memory", "rss_growth_kb_per_compile", "case", "500 compiles"), "<=", 50.0),
]


def _get(rows: list[dict[str, Any]], benchmark: str, key: str, **match: Any) -> float | None:
    row = _find(rows, benchmark, **match)
    return None if row is None or key not in row else float(row[key])


def _get_prefix(rows: list[dict[str, Any]], benchmark: str, key: str, field: str, prefix: str) -> float | None:
    for row in rows:
        if row["benchmark"].startswith(benchmark) and str(row.get(field, "")).startswith(prefix) and key in row:
            return float(row[key])
    return None


def _linearity(rows: list[dict[str, Any]]) -> float | None:
    small, large = _get(rows, "staging", "us_per_equation", layers=50), _get(rows, "staging", "us_per_equation",
                                                                              layers=200)
    return None if small is None or large is None else large / small


def summarize(rows: list[dict[str, Any]], have_jax: bool) -> list[dict[str, Any]]:
    summary = []
    print("\n== summary against issue #6 ==")
    for label, get, op, target in CHECKS:
        value = get(rows)
        if value is None:
            status = "n/a (needs jax)" if "jax" in label and not have_jax else "not run"
        elif target == float("inf"):
            status = "info"
        else:
            status = "met" if value <= target else "MISSED"
        shown = "-" if value is None else f"{value:.3g}"
        goal = "" if target == float("inf") else f"{op} {target:g}"
        print(f"  {label:<58} {shown:>9}  {goal:<9} {status}")
        summary.append({"check": label, "value": value, "target": None if target == float("inf") else target,
                        "status": status})
    return summary


def main() -> None:
    if sys.argv[1:] == ["--summarize"]:  # recompute the summary and chart from results.json's rows, running nothing
        with open(RESULTS) as f:
            saved = json.load(f)
        info, rows = saved["machine"], saved["rows"]
    else:
        names = tuple(sys.argv[1:]) or all_scripts()
        info = machine()
        print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
        rows = run_scripts(names)
        finished = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        if sys.argv[1:] and os.path.exists(RESULTS):  # a partial run: the other rows stay from the saved run
            with open(RESULTS) as f:
                saved = json.load(f)
            rows = merged(saved, names, rows)
            info = saved["machine"] | {"rerun": f"{', '.join(names)}, finished {finished}"}
        else:
            info["finished"] = finished
    summary = summarize(rows, info["jax"] != "absent")
    with open(RESULTS, "w") as f:
        json.dump({"machine": info, "rows": rows, "summary": summary}, f, indent=1)
    write_svg(summary, os.path.join(HERE, "results.svg"), info)
    print(f"\nwrote {os.path.join(HERE, 'results.json')} and results.svg")


if __name__ == "__main__":
    main()
