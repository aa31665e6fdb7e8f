"""Gradient of ``sum(1 / (1 + exp(-x)))`` over 1M float32 elements (issue #3, item 9).

Three implementations timed in one run (best of interleaved rounds, results waited for): ours ``ts.grad``,
``jax.jit(jax.grad(f))`` when jax is installed, and NumPy with the derivative written by hand. All three are
checked against each other first. Target: ours <= 1.1x jax.jit.

    python benchmarks/grad_sigmoid.py [--rounds N]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from _common import interleaved, machine, ratio, report, try_jax, us
from steady_state import hlo_ops

import tensorstage as ts
from tensorstage import numpy as tnp

N = 1_000_000


def f(x: ts.Tensor[ts.f32, Any]) -> ts.Tensor[ts.f32]:
    return tnp.sum(1.0 / (1.0 + tnp.exp(-x)))


ours: Callable[[Any], Any] = ts.grad(f)


def numpy_grad(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    s: np.ndarray[Any, Any] = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 - s)  # d/dx sigmoid(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=20, help="calls per round")
    args = parser.parse_args()

    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    dev_x = ts.asarray(x)
    expected = numpy_grad(x)
    np.testing.assert_allclose(np.asarray(ours(dev_x)), expected, rtol=1e-5, atol=1e-6)
    candidates: dict[str, Callable[[], Any]] = {
        "tensorstage": lambda: ours(dev_x).block_until_ready(),
        "numpy": lambda: numpy_grad(x),
    }
    jax = try_jax()
    if jax is not None:
        import jax.numpy as jnp

        def jax_f(x: Any) -> Any:
            return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

        jax_grad = jax.jit(jax.grad(jax_f))
        jax_x = jax.device_put(x)
        np.testing.assert_allclose(np.asarray(jax_grad(jax_x)), expected, rtol=1e-5, atol=1e-6)
        candidates["jax.jit"] = lambda: jax_grad(jax_x).block_until_ready()
        ours_hlo = hlo_ops(ts.program(ours).stage(x).compile().as_text())
        same_hlo = ours_hlo == hlo_ops(jax_grad.lower(jax_x).compile().as_text())
    best = interleaved(candidates, args.number, args.rounds)

    rows: list[dict[str, Any]] = [{"impl": name, "us_per_call": us(t)} for name, t in best.items()]
    rows.append({"ratio": "tensorstage / jax.jit", "value": _fmt(ratio(best["tensorstage"], best.get("jax.jit")))})
    rows.append({"ratio": "tensorstage / numpy", "value": _fmt(ratio(best["tensorstage"], best["numpy"]))})
    if jax is not None:  # the same optimized HLO: a ratio away from 1 is this machine's noise
        rows.append({"check": "same optimized HLO as jax.jit", "value": str(same_hlo)})
    report(f"grad of sum(sigmoid(x)), x: f32[{N}]  (target tensorstage/jax.jit <= 1.1)", rows)
    print("  machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()))


def _fmt(value: float | None) -> str:
    return "n/a (jax not installed)" if value is None else f"{value:.3f}x"


if __name__ == "__main__":
    main()
