"""ts.checkpoint (remat): same values and derivatives as the plain function, the recomputation in the backward
pass behind an optimization barrier, and the memory it saves."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

Spec = ts.Spec


def _mlp(x: Any, w1: Any, w2: Any) -> Any:
    return tnp.tanh(tnp.tanh(x @ w1) @ w2) + x


def _close(got: Any, want: Any, tol: float = 1e-6) -> None:
    flat_got, flat_want = _leaves(got), _leaves(want)
    assert len(flat_got) == len(flat_want)
    for g, w in zip(flat_got, flat_want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _leaves(x: Any) -> list[Any]:
    return [leaf for item in x for leaf in _leaves(item)] if isinstance(x, (tuple, list)) else [x]


def _weights(rng: np.random.Generator, dtype: Any = np.float64) -> tuple[np.ndarray, ...]:
    x = rng.standard_normal((3, 4)).astype(dtype)
    return x, (rng.standard_normal((4, 5)) * 0.5).astype(dtype), (rng.standard_normal((5, 4)) * 0.5).astype(dtype)


def test_values_gradients_jvp_vmap_match_plain(rng: np.random.Generator) -> None:
    args = _weights(rng)
    tangents = _weights(rng)

    def all_of(f: Any) -> Any:
        def run(x: Any, w1: Any, w2: Any, tx: Any, t1: Any, t2: Any) -> Any:
            loss = lambda x, w1, w2: tnp.sum(f(f(x, w1, w2), w1, w2) ** 2)  # noqa: E731
            value = f(x, w1, w2)
            grads = ts.grad(loss, argnums=(0, 1, 2))(x, w1, w2)
            _, tangent = ts.jvp(lambda x, w1: f(x, w1, w2), (x, w1), (tx, t1))
            mapped = ts.vmap(f, in_axes=(0, None, None))(tnp.stack([x, x * 2.0]), w1, w2)
            per_example = ts.vmap(ts.grad(lambda x, w: tnp.sum(f(x, w, w2))), in_axes=(0, None))(x, w1)
            return value, *grads, tangent, mapped, per_example

        return ts.program(run)(*args, *tangents)

    plain, checkpointed = all_of(_mlp), all_of(ts.checkpoint(_mlp))
    assert len(plain) == 7
    _close(checkpointed, plain, 1e-12)
    # The gradient against central finite differences, so both are right and not just equal.
    loss = ts.program(lambda x, w1, w2: tnp.sum(ts.checkpoint(_mlp)(ts.checkpoint(_mlp)(x, w1, w2), w1, w2) ** 2))
    eps, (x, w1, w2) = 1e-6, args
    fd = (np.asarray(loss(x, w1 + eps * tangents[1], w2)) - np.asarray(loss(x, w1 - eps * tangents[1], w2))) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(plain[2]) * tangents[1]), fd, rtol=1e-6)


def test_closures_kwargs_nested_grad_and_eager(rng: np.random.Generator) -> None:
    x, w1, w2 = _weights(rng)

    def make(ck: Any) -> Any:
        def f(x: Any, w1: Any) -> Any:
            # w1 reaches the checkpointed block through a closure, w2 as a keyword argument, 0.5 is static.
            inner = ck(lambda y, *, w, scale: tnp.sin(y @ w1) @ w * scale)
            return tnp.sum(inner(x, w=w2, scale=0.5) ** 3)

        return ts.program(lambda x, w1: (f(x, w1), ts.grad(f, argnums=(0, 1))(x, w1),
                                           ts.grad(lambda w: tnp.sum(ts.grad(f)(x, w) ** 2))(w1)))

    _close(make(ts.checkpoint)(x, w1), make(lambda g: g)(x, w1), 1e-12)
    # Outside a staged program the function just runs.
    _close(ts.checkpoint(_mlp)(x, w1, w2), ts.program(_mlp)(x, w1, w2), 1e-12)


def test_scan_over_layers_differentiates_and_saves_memory() -> None:
    depth, batch, width = 32, 256, 512

    def block(x: Any, w: Any) -> Any:
        return tnp.tanh(tnp.tanh(x @ w[0]) @ w[1])

    def make(blk: Any) -> Any:
        def loss(x: Any, ws: Any) -> Any:
            y, _ = ts.scan(lambda c, w: (blk(c, w), None), x, ws)
            return tnp.sum(y)

        return ts.grad(loss, argnums=(0, 1))

    # Values on small sizes (f64), then the memory of the full-size gradient program.
    rng = np.random.default_rng(3)
    x, ws = rng.standard_normal((3, 4)), rng.standard_normal((5, 2, 4, 4)) * 0.5
    _close(make(ts.checkpoint(block))(x, ws), make(block)(x, ws), 1e-12)
    specs = (Spec((batch, width), np.float32), Spec((depth, 2, width, width), np.float32))
    plain = make(block).stage(*specs)
    remat = make(ts.checkpoint(block)).stage(*specs)
    text = remat.stablehlo()
    assert plain.stablehlo().count("stablehlo.tanh") == 2
    assert text.count("stablehlo.tanh") == 4  # forward, then its recomputation in the backward loop
    assert text.count("stablehlo.optimization_barrier") == 1
    plain_temp = plain.compile().memory_analysis().temp_size_in_bytes
    remat_temp = remat.compile().memory_analysis().temp_size_in_bytes
    # Per layer, the plain loop saves x, tanh(x @ w0) and the output; the checkpointed one only x.
    print(f"temp bytes: plain {plain_temp}, checkpointed {remat_temp}")
    assert remat_temp < plain_temp / 3, (plain_temp, remat_temp)


def test_grad_of_checkpoint_recomputes_behind_a_barrier(rng: np.random.Generator) -> None:
    specs = [Spec((3, 4), np.float32), Spec((4, 5), np.float32), Spec((5, 4), np.float32)]
    # value_and_grad: the forward value is needed, so the plain program's tanh serve both passes.
    plain = ts.value_and_grad(lambda *a: tnp.sum(_mlp(*a)), argnums=(0, 1, 2)).stage(*specs).stablehlo()
    staged = ts.value_and_grad(lambda *a: tnp.sum(ts.checkpoint(_mlp)(*a)), argnums=(0, 1, 2)).stage(*specs)
    staged.typecheck()
    text = staged.stablehlo()
    assert plain.count("stablehlo.tanh") == 2 and text.count("stablehlo.tanh") == 4
    assert text.count("stablehlo.optimization_barrier") == 1
    # The barrier text parses and compiles through the backend, and runs.
    x, w1, w2 = (a.astype(np.float32) for a in _weights(rng))
    want = ts.value_and_grad(lambda *a: tnp.sum(_mlp(*a)), argnums=(0, 1, 2))(x, w1, w2)
    _close(staged.compile()(x, w1, w2), want, 1e-5)
    without = ts.grad(lambda *a: tnp.sum(ts.checkpoint(_mlp, prevent_cse=False)(*a))).stage(*specs).stablehlo()
    assert "optimization_barrier" not in without


def test_errors_in_the_function_point_at_the_caller() -> None:
    def bad(x: Any) -> Any:
        return x @ x

    with pytest.raises(ts.ShapeError, match="test_checkpoint.py"):
        ts.program(lambda x: ts.checkpoint(bad)(x))(np.zeros((2, 3), np.float32))
