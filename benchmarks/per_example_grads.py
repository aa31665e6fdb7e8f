"""Per-example gradients of a 784→256→10 tanh MLP at batch 128 (softmax cross-entropy loss).

Three ways, timed in the same run (median of interleaved calls, results waited for):
- ours ``vmap(grad(loss))``: the batching transform applied to the gradient graph;
- ours hand-batched: the same gradients written out by hand over the batch (the layout target);
- jax ``jit(vmap(grad(loss)))`` and jax hand-batched, when jax is importable (``pip install .[bench]``).

Target (issue #4): ours vmap(grad) ≤ 1.2× ours hand-batched. JAX's vmap(grad) anchor was 2.3× its hand-batched.

    python benchmarks/per_example_grads.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorstage as ts
from tensorstage import numpy as tnp

BATCH, N_IN, N_HIDDEN, N_OUT = 128, 784, 256, 10
Params = dict[str, Any]


def make_inputs(seed: int = 0) -> tuple[Params, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    params = {
        "w1": (rng.standard_normal((N_IN, N_HIDDEN)) / np.sqrt(N_IN)).astype(np.float32),
        "b1": np.zeros(N_HIDDEN, np.float32),
        "w2": (rng.standard_normal((N_HIDDEN, N_OUT)) / np.sqrt(N_HIDDEN)).astype(np.float32),
        "b2": np.zeros(N_OUT, np.float32),
    }
    xs = rng.standard_normal((BATCH, N_IN)).astype(np.float32)
    ys = np.eye(N_OUT, dtype=np.float32)[rng.integers(0, N_OUT, BATCH)]
    return params, xs, ys


# ------------------------------------------------------------------------------------------- tensorstage


def loss(params: Params, x: Any, y: Any) -> Any:
    """Cross-entropy of one example (``x``: (784,), ``y``: one-hot (10,))."""
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return tnp.logsumexp(logits) - tnp.sum(logits * y)


per_example_vmap = ts.vmap(ts.grad(loss), in_axes=(None, 0, 0))


@ts.program
def per_example_hand(params: Params, xs: Any, ys: Any) -> Params:
    """The same per-example gradients written by hand over the batch axis."""
    h = tnp.tanh(xs @ params["w1"] + params["b1"])  # (B, 256)
    logits = h @ params["w2"] + params["b2"]  # (B, 10)
    probs = tnp.exp(logits - tnp.logsumexp(logits, axis=1, keepdims=True))
    d_logits = probs - ys  # (B, 10)
    d_h = (d_logits @ tnp.transpose(params["w2"])) * (1.0 - h * h)  # (B, 256)
    return {
        "w1": tnp.expand_dims(xs, 2) * tnp.expand_dims(d_h, 1),  # (B, 784, 256)
        "b1": d_h,
        "w2": tnp.expand_dims(h, 2) * tnp.expand_dims(d_logits, 1),  # (B, 256, 10)
        "b2": d_logits,
    }


# ------------------------------------------------------------------------------------------------ timing


def wait(tree: Any) -> None:
    for leaf in ts.pytree.leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def median_seconds(variants: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median wall time per call of each variant; calls are interleaved so that load from other processes on the
    machine affects every variant alike."""
    for fn in variants.values():  # compile and warm up
        wait(fn())
        wait(fn())
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            start = time.perf_counter()
            wait(fn())
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts_) for name, ts_ in times.items()}


def to_numpy(tree: Params) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in tree.items()}


def check_close(name: str, got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    for key in want:
        if got[key].shape != want[key].shape or not np.allclose(got[key], want[key], rtol=1e-4, atol=1e-5):
            raise SystemExit(f"{name}: gradient {key} disagrees with the hand-batched result")


def jax_functions() -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def jax_loss(params: Params, x: Any, y: Any) -> Any:
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        return jax.nn.logsumexp(logits) - jnp.sum(logits * y)

    def jax_hand(params: Params, xs: Any, ys: Any) -> Params:
        h = jnp.tanh(xs @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        d_logits = jax.nn.softmax(logits, axis=1) - ys
        d_h = (d_logits @ params["w2"].T) * (1.0 - h * h)
        return {"w1": xs[:, :, None] * d_h[:, None, :], "b1": d_h, "w2": h[:, :, None] * d_logits[:, None, :],
                "b2": d_logits}

    return jax.jit(jax.vmap(jax.grad(jax_loss), in_axes=(None, 0, 0))), jax.jit(jax_hand)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    params, xs, ys = make_inputs()
    dev_params = {k: ts.asarray(v) for k, v in params.items()}
    dev_xs, dev_ys = ts.asarray(xs), ts.asarray(ys)

    reference = to_numpy(per_example_hand(dev_params, dev_xs, dev_ys))
    check_close("vmap(grad)", to_numpy(per_example_vmap(dev_params, dev_xs, dev_ys)), reference)
    variants: dict[str, Callable[[], Any]] = {
        "ours vmap(grad)": lambda: per_example_vmap(dev_params, dev_xs, dev_ys),
        "ours hand-batched": lambda: per_example_hand(dev_params, dev_xs, dev_ys),
    }
    jax_fns = jax_functions()
    if jax_fns is not None:
        import jax

        jax_vmap, jax_hand = jax_fns
        j_params = jax.device_put(params)
        j_xs, j_ys = jax.device_put(xs), jax.device_put(ys)
        check_close("jax vmap(grad)", to_numpy(jax_vmap(j_params, j_xs, j_ys)), reference)
        variants["jax vmap(grad)"] = lambda: jax_vmap(j_params, j_xs, j_ys)
        variants["jax hand-batched"] = lambda: jax_hand(j_params, j_xs, j_ys)
    results = median_seconds(variants, args.repeats)

    print(f"per-example gradients, MLP {N_IN}->{N_HIDDEN}->{N_OUT} tanh, batch {BATCH} (median of {args.repeats})")
    for name, seconds in results.items():
        print(f"  {name:<20} {seconds * 1e3:8.3f} ms")
    hand = results["ours hand-batched"]
    ours = results["ours vmap(grad)"]
    print(f"  ours vmap(grad) / ours hand-batched: {ours / hand:.2f}x   (target <= 1.2x)")
    if "jax vmap(grad)" in results:
        print(f"  ours vmap(grad) / jax vmap(grad):    {ours / results['jax vmap(grad)']:.2f}x")
        print(f"  jax vmap(grad) / jax hand-batched:   {results['jax vmap(grad)'] / results['jax hand-batched']:.2f}x")
        print(f"  ours hand-batched / jax hand-batched: {hand / results['jax hand-batched']:.2f}x")
    else:
        print("  (jax is not installed: pip install '.[bench]' to compare)")


if __name__ == "__main__":
    main()
