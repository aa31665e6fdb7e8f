"""Run every benchmark (each in its own process), print the whole table against issue #6's targets, and write
``benchmarks/results.json`` and ``benchmarks/results.svg``.

    .venv/bin/python benchmarks/run.py            # all
    .venv/bin/python benchmarks/run.py dispatch   # some: their rows replace theirs in results.json
    .venv/bin/python benchmarks/run.py --summarize   # the summary and chart again from results.json
    .venv/bin/python benchmarks/run.py --quick dispatch   # fewer repeats: prints, never writes results.json

    python3 benchmarks/run.py --device gpu --quick    # dispatch, steady_state, time_to_first_result on the GPU

``--device gpu`` runs tensorstage and jax.jit on the GPU (NumPy stays on the host), after a preflight that both
reach it, and writes ``results_gpu.json`` / ``results_gpu.svg`` (never results.json); only the scripts in
``GPU_SCRIPTS`` know the GPU. A script that fails or passes ``--timeout`` is reported and the others still run.
``TENSORSTAGE_BENCH_GPU_AS_CPU=1`` with ``--device gpu`` is a dry run of those code paths on the CPU (writes
nothing).

Without jax installed, the jax columns are absent and the rows that need them say so.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import _common
from _common import machine
from plot import write_svg

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results.json")
RESULTS_GPU = os.path.join(HERE, "results_gpu.json")
SCRIPTS = ("dispatch", "staging_speed", "steady_state", "warm_start", "time_to_first_result", "memory")
GPU_SCRIPTS = ("dispatch", "steady_state", "time_to_first_result")  # the ones that place their work on the GPU
_NOT_BENCHMARKS = {"run", "plot", "workloads"}


def all_scripts() -> tuple[str, ...]:
    """Issue #6's scripts first, then every other benchmark in this folder (other issues' workloads)."""
    others = sorted(
        name[:-3]
        for name in os.listdir(HERE)
        if name.endswith(".py") and not name.startswith("_") and name[:-3] not in _NOT_BENCHMARKS | set(SCRIPTS)
    )
    return SCRIPTS + tuple(others)


def run_scripts(names: tuple[str, ...], keep_going: bool = False, timeout: float | None = None,
                timed: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Every row the scripts report, each tagged with the script that measured it, and the scripts that failed.
    Without ``keep_going`` the first failure raises (as always on a full CPU run); with it, a failed or timed-out
    script is reported and the rest still run. ``timed`` prints each script's wall time."""
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    for name in names:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
            path = f.name
        try:
            env = {**os.environ, "TENSORSTAGE_BENCH_JSON": path}
            start = time.perf_counter()
            command = [sys.executable, os.path.join(HERE, f"{name}.py")]
            if keep_going:
                problem = _run_child(command, env, timeout)
            else:
                subprocess.run(command, env=env, check=True)
                problem = None
            if timed:
                print(f"  [{name}: {time.perf_counter() - start:.1f} s wall{'; ' + problem if problem else ''}]",
                      flush=True)
            if problem:
                failed.append(f"{name} ({problem})")
            with open(path) as f:  # a failed script keeps the tables it finished
                rows.extend({**json.loads(line), "script": name} for line in f if line.strip())
        finally:
            os.unlink(path)
    return rows, failed


def _run_child(command: list[str], env: dict[str, str], timeout: float | None) -> str | None:
    """Run one benchmark in its own process group; None, or what went wrong. A child past ``timeout`` is killed
    with everything it started (time_to_first_result's interpreters)."""
    child = subprocess.Popen(command, env=env, start_new_session=True)
    try:
        code = child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        return f"TIMED OUT after {timeout:g} s, killed"
    except KeyboardInterrupt:
        os.killpg(child.pid, signal.SIGKILL)
        raise
    return None if code == 0 else f"FAILED with exit status {code}"


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


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run the benchmarks and print the summary against issue #6.")
    parser.add_argument("names", nargs="*", help="scripts to run (default: all; with --device gpu: GPU_SCRIPTS)")
    parser.add_argument("--summarize", action="store_true", help="the summary and chart again from the results")
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                        help="where tensorstage and jax run (NumPy: the host); gpu writes results_gpu.json")
    parser.add_argument("--quick", action="store_true",
                        help="fewer repeats (about 2 minutes for the GPU set); never writes results.json")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per script before it is killed (default: none; 180 with --device gpu)")
    return parser.parse_args(argv)


def preflight() -> dict[str, str]:
    """Check, in a fresh process, that tensorstage and jax both run on the GPU; the GPU's fields for the machine
    info. Exits with the child's output when they do not."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, "_common.py")], capture_output=True, text=True,
                              timeout=120)
    except subprocess.TimeoutExpired:
        raise SystemExit("gpu preflight: no answer in 120 s (GPU client creation hung?)") from None
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"gpu preflight failed (exit status {done.returncode}); see above. Nothing was run. "
                         "(TENSORSTAGE_BENCH_NO_JAX=1 runs tensorstage alone, without jax in its processes.)")
    info: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  [preflight: {time.perf_counter() - start:.1f} s wall]", flush=True)
    return info


def main() -> None:
    args = parse_args(sys.argv[1:])
    gpu = args.device == "gpu"
    os.environ["TENSORSTAGE_BENCH_DEVICE"] = args.device
    if args.quick:
        os.environ["TENSORSTAGE_BENCH_QUICK"] = "1"
    else:
        os.environ.pop("TENSORSTAGE_BENCH_QUICK", None)
    _common.configure_environment()  # for the children: JAX_PLATFORMS and the GPU memory settings
    dry = _common.dry_run()
    results = RESULTS_GPU if gpu else RESULTS
    failed: list[str] = []
    if args.summarize:  # recompute the summary and chart from the saved rows, running nothing
        if args.names:
            raise SystemExit("--summarize runs nothing: give it no script names")
        with open(results) as f:
            saved = json.load(f)
        info, rows = saved["machine"], saved["rows"]
    else:
        names = tuple(args.names) or (GPU_SCRIPTS if gpu else all_scripts())
        unknown = [n for n in names if n not in all_scripts()]
        if unknown:
            raise SystemExit(f"unknown benchmark(s): {', '.join(unknown)}; the scripts are {', '.join(all_scripts())}")
        if gpu and any(n not in GPU_SCRIPTS for n in names):
            raise SystemExit(f"--device gpu: only {', '.join(GPU_SCRIPTS)} place their work on the GPU; "
                             f"{', '.join(n for n in names if n not in GPU_SCRIPTS)} would run on the CPU")
        started = time.perf_counter()
        info = machine()
        if gpu:
            info |= preflight()
        if args.quick:
            info["quick"] = "yes (fewer repeats)"
        print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()), flush=True)
        keep_going = gpu or args.quick
        timeout = args.timeout if args.timeout is not None else (180.0 if gpu else None)
        rows, failed = run_scripts(names, keep_going=keep_going, timeout=timeout, timed=keep_going)
        if keep_going:
            print(f"  [all scripts: {time.perf_counter() - started:.1f} s wall]")
        finished = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        if args.names and os.path.exists(results):  # a partial run: the other rows stay from the saved run
            with open(results) as f:
                saved = json.load(f)
            rows = merged(saved, names, rows)
            info = saved["machine"] | {"rerun": f"{', '.join(names)}, finished {finished}"}
        else:
            info["finished"] = finished
    summary = summarize(rows, info["jax"] != "absent")
    if failed:
        print("\nFAILED: " + "; ".join(failed))
    if dry:
        print("\ndry run (TENSORSTAGE_BENCH_GPU_AS_CPU): nothing written")
    elif args.quick and not gpu:
        print(f"\n--quick: not written (fewer repeats; {os.path.basename(results)} keeps the full run's numbers)")
    else:
        svg = os.path.splitext(results)[0] + ".svg"
        with open(results, "w") as f:
            json.dump({"machine": info, "rows": rows, "summary": summary}, f, indent=1)
        write_svg(summary, svg, info)
        print(f"\nwrote {results} and {os.path.basename(svg)}")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
