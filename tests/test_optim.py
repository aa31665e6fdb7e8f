"""``ts.optim``: SGD (plain, momentum, Nesterov) and Adam against float64 NumPy, over pytrees, in programs."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f64
from tensorstage import numpy as tnp


class In(Dim): ...


class Out(Dim): ...


@attrs.frozen
class Linear:
    w: Tensor[f64, In, Out]
    b: Tensor[f64, Out]


def _tree(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}


def _run(opt: Any, params: Any, grads: list[Any]) -> Any:
    @ts.program
    def step(params: Any, state: Any, grads: Any) -> Any:
        return opt.update(grads, state, params)

    state = opt.init(params)
    for g in grads:
        params, state = step(params, state, g)
    return params, state


@pytest.mark.parametrize(("momentum", "nesterov"), [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_matches_numpy(momentum: float, nesterov: bool, rng: np.random.Generator) -> None:
    params = _tree(rng)
    grads = [_tree(rng) for _ in range(3)]
    got, state = _run(ts.optim.sgd(0.1, momentum, nesterov), params, grads)
    want = {k: v.copy() for k, v in params.items()}
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    for g in grads:
        for k in want:
            velocity[k] = momentum * velocity[k] + g[k]
            step = g[k] + momentum * velocity[k] if nesterov else (velocity[k] if momentum else g[k])
            want[k] = want[k] - 0.1 * step
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-12)
    assert int(state.count) == 3


def test_adam_matches_numpy(rng: np.random.Generator) -> None:
    params = _tree(rng)
    grads = [_tree(rng) for _ in range(4)]
    got, state = _run(ts.optim.adam(0.01, b1=0.8, b2=0.95, eps=1e-6), params, grads)
    want = {k: v.copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(x) for k, x in params.items()}
    for t, g in enumerate(grads, start=1):
        for k in want:
            m[k] = 0.8 * m[k] + 0.2 * g[k]
            v[k] = 0.95 * v[k] + 0.05 * g[k] ** 2
            m_hat, v_hat = m[k] / (1 - 0.8**t), v[k] / (1 - 0.95**t)
            want[k] = want[k] - 0.01 * m_hat / (np.sqrt(v_hat) + 1e-6)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-12)
        np.testing.assert_allclose(np.asarray(state.mu[k]), m[k], rtol=1e-12)
    assert int(state.count) == 4


def test_training_an_attrs_model_in_one_program_step(rng: np.random.Generator) -> None:
    x = rng.standard_normal((32, 3))
    true_w = rng.standard_normal((3, 2))
    y = x @ true_w + 0.5
    opt = ts.optim.adam(0.1)

    def loss(p: Linear, x: Tensor[f64, Any, In], y: Tensor[f64, Any, Out]) -> Tensor[f64]:
        return ts.nn.mse(x @ p.w + p.b, y)

    @ts.program
    def step(p: Linear, state: ts.optim.AdamState[Linear], x: Tensor[f64, Any, In], y: Tensor[f64, Any, Out]) -> Any:
        value, grads = ts.value_and_grad(loss)(p, x, y)
        p, state = opt.update(grads, state, p)
        return p, state, value

    params = Linear(tnp.zeros((3, 2), dtype=f64), tnp.zeros((2,), dtype=f64))
    state = opt.init(params)
    for _ in range(300):
        params, state, value = step(params, state, x, y)
    assert isinstance(params, Linear) and isinstance(state.mu, Linear)
    assert float(value) < 1e-4
    np.testing.assert_allclose(np.asarray(params.w), true_w, atol=1e-2)


def test_learning_rate_schedule_is_staged_into_the_update(rng: np.random.Generator) -> None:
    params = {"w": rng.standard_normal(3)}
    grads = [{"w": np.ones(3)} for _ in range(3)]
    got, _ = _run(ts.optim.sgd(lambda count: 0.1 * (count + 1).astype(ts.f64)), params, grads)
    np.testing.assert_allclose(np.asarray(got["w"]), params["w"] - (0.1 + 0.2 + 0.3), rtol=1e-12)


def test_mismatched_trees_are_a_clear_error(rng: np.random.Generator) -> None:
    opt = ts.optim.sgd(0.1)
    params = _tree(rng)
    with pytest.raises(TypeError, match="trees differ in structure"):
        opt.update({"w": params["w"]}, opt.init(params), params)
    with pytest.raises(ValueError, match="nesterov=True needs a non-zero momentum"):
        ts.optim.sgd(0.1, nesterov=True)
