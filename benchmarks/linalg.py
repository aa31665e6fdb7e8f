"""Linear algebra: per-call time of ``tnp.linalg`` functions against NumPy (LAPACK) and jax.jit (LAPACK custom
calls on CPU), float32, blocking on every result.

On CPU tensorstage calls LAPACK too (potrf, syevd, geqrf/orgqr, getrf + trsm, gesdd through jaxlib's kernels,
when SciPy is installed); ``TENSORSTAGE_LAPACK=0`` measures XLA's own decompositions instead (Householder QR,
Jacobi eigh, blocked Cholesky; svd has no such fallback and is left out then). No issue sets a target here;
``run.py`` runs it with the rest.
Usage: python benchmarks/linalg.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from _common import interleaved, report, try_jax, us

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack


def _spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = rng.standard_normal(shape)
    return (b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(np.float32)


def _block(out: Any) -> Any:
    for leaf in out if isinstance(out, tuple) else (out,):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return out


def _call(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    return fn(*args)


def _call_and_block(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    return _block(fn(*args))


def main() -> None:
    rng = np.random.default_rng(0)
    jax = try_jax()
    rows = []
    for n, batch in ((32, 64), (256, 1)):
        shape = (batch, n, n) if batch > 1 else (n, n)
        a = _spd(rng, *shape)
        b = rng.standard_normal((*shape[:-1], 1)).astype(np.float32)
        cases: list[tuple[str, Callable[..., Any], Callable[..., Any], Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
            ("cholesky", tnp.linalg.cholesky, np.linalg.cholesky, lambda j: j.numpy.linalg.cholesky, (a,)),
            ("solve", tnp.linalg.solve, np.linalg.solve, lambda j: j.numpy.linalg.solve, (a, b)),
            ("qr", tnp.linalg.qr, np.linalg.qr, lambda j: j.numpy.linalg.qr, (a,)),
            ("eigh", tnp.linalg.eigh, np.linalg.eigh, lambda j: j.numpy.linalg.eigh, (a,)),
            ("det", tnp.linalg.det, np.linalg.det, lambda j: j.numpy.linalg.det, (a,)),
            ("svd", tnp.linalg.svd, np.linalg.svd, lambda j: j.numpy.linalg.svd, (a,)),
        ]
        for name, ours, numpy_fn, jax_fn, args in cases:
            if name == "svd" and not lapack.enabled():
                continue
            program = ts.program(ours)
            device_args = [ts.asarray(x) for x in args]
            fns: dict[str, Callable[[], Any]] = {
                "tensorstage": partial(_call_and_block, program, device_args),
                "numpy": partial(_call, numpy_fn, args),
            }
            if jax is not None:
                jitted = jax.jit(jax_fn(jax))
                jax_args = [jax.device_put(x) for x in args]
                fns["jax.jit"] = partial(_call_and_block, jitted, jax_args)
            best = interleaved(fns, number=5 if n > 100 else 20, rounds=5)
            row: dict[str, Any] = {"op": name, "shape": "x".join(map(str, shape)), "us": us(best["tensorstage"]),
                                   "vs_numpy": best["tensorstage"] / best["numpy"]}
            if "jax.jit" in best:
                row["vs_jax"] = best["tensorstage"] / best["jax.jit"]
            rows.append(row)
    report("linalg: per call, f32", rows)


if __name__ == "__main__":
    main()
