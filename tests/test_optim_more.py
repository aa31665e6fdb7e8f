"""``ts.optim``: AdamW, RMSProp, Adagrad, Lion, clipping, ``chain`` and schedules against float64 NumPy references
written from each documented formula; a staged MLP train step with warmup, clipping and AdamW."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, i32

Tree = dict[str, np.ndarray]


def _tree(rng: np.random.Generator) -> Tree:
    return {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}


def _run(opt: Any, params: Any, grads: list[Any]) -> Any:
    @ts.program
    def step(params: Any, state: Any, grads: Any) -> Any:
        return opt.update(grads, state, params)

    state = ts.program(opt.init)(params)
    for g in grads:
        params, state = step(params, state, g)
    return params, state


def _close(got: Any, want: Tree, rtol: float = 1e-12) -> None:
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=rtol, atol=1e-14)


def _copy(t: Tree) -> Tree:
    return {k: v.copy() for k, v in t.items()}


def test_adamw_decays_only_masked_leaves(rng: np.random.Generator) -> None:
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    mask = {"w": True, "b": False}
    got, state = _run(ts.optim.adamw(0.05, b1=0.8, b2=0.9, eps=1e-6, weight_decay=0.3, mask=mask), params, grads)
    want, m, v = _copy(params), {k: 0 * x for k, x in params.items()}, {k: 0 * x for k, x in params.items()}
    for t, g in enumerate(grads, start=1):
        for k in want:
            m[k] = 0.8 * m[k] + 0.2 * g[k]
            v[k] = 0.9 * v[k] + 0.1 * g[k] ** 2
            direction = (m[k] / (1 - 0.8**t)) / (np.sqrt(v[k] / (1 - 0.9**t)) + 1e-6)
            want[k] = want[k] - 0.05 * (direction + (0.3 * want[k] if mask[k] else 0.0))
    _close(got, want)
    assert int(state.count) == 3
    # a mask given as a function of the parameters, and a mask of the wrong structure
    by_fn, _ = _run(ts.optim.adamw(0.05, b1=0.8, b2=0.9, eps=1e-6, weight_decay=0.3, mask=lambda p: mask), params,
                    grads)
    _close(by_fn, want)
    with pytest.raises(TypeError, match="adamw: the weight decay mask"):
        _run(ts.optim.adamw(mask={"w": True}), params, grads[:1])


@pytest.mark.parametrize(("centered", "momentum"), [(False, 0.0), (True, 0.7)])
def test_rmsprop_matches_numpy(centered: bool, momentum: float, rng: np.random.Generator) -> None:
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    got, _ = _run(ts.optim.rmsprop(0.01, decay=0.8, eps=1e-5, centered=centered, momentum=momentum), params, grads)
    want = _copy(params)
    nu, mu, buf = ({k: 0 * x for k, x in params.items()} for _ in range(3))
    for g in grads:
        for k in want:
            nu[k] = 0.8 * nu[k] + 0.2 * g[k] ** 2
            mu[k] = 0.8 * mu[k] + 0.2 * g[k]
            d = g[k] / (np.sqrt(nu[k] - (mu[k] ** 2 if centered else 0)) + 1e-5)
            buf[k] = momentum * buf[k] + d
            want[k] = want[k] - 0.01 * (buf[k] if momentum else d)
    _close(got, want)
    if centered:
        # regression: nu - mu**2 >= 0 only in exact arithmetic; a state where rounding took it below 0 gave NaN
        opt = ts.optim.rmsprop(0.01, decay=0.8, centered=True)
        state = ts.optim.RMSPropState(ts.asarray(np.int32(5)), [ts.asarray(np.zeros(2))], [ts.asarray(np.ones(2))],
                                      None)
        stepped, _ = opt.update([np.ones(2)], state, [np.zeros(2)])
        assert np.isfinite(np.asarray(stepped[0])).all()


def test_adam_and_adamw_step_bf16_parameters() -> None:
    # regression: the bias correction 1 - 0.999**t was computed in the parameters' dtype, where bf16 rounds 0.999
    # to 1: a zero divisor, and bf16 parameters never moved
    for opt in (ts.optim.adam(0.01), ts.optim.adamw(0.01, weight_decay=0.0)):
        params = [ts.asarray(np.ones(3, np.float32)).astype(ts.bf16)]
        grads = [ts.asarray(np.full(3, 0.5, np.float32)).astype(ts.bf16)]
        stepped, _ = opt.update(grads, opt.init(params), params)
        np.testing.assert_allclose(np.asarray(stepped[0].astype(np.float32)), 0.99, atol=4e-3)  # 1 - lr * sign(g)


def test_adagrad_and_lion_match_numpy(rng: np.random.Generator) -> None:
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    got, state = _run(ts.optim.adagrad(0.1, initial_accumulator_value=0.2, eps=1e-6), params, grads)
    want, acc = _copy(params), {k: np.full_like(x, 0.2) for k, x in params.items()}
    for g in grads:
        for k in want:
            acc[k] = acc[k] + g[k] ** 2
            want[k] = want[k] - 0.1 * g[k] / (np.sqrt(acc[k]) + 1e-6)
    _close(got, want)
    _close(state.sum_sq, acc)

    got, _ = _run(ts.optim.lion(0.01, b1=0.8, b2=0.95, weight_decay=0.5), params, grads)
    want, m = _copy(params), {k: 0 * x for k, x in params.items()}
    for g in grads:
        for k in want:
            want[k] = want[k] - 0.01 * (np.sign(0.8 * m[k] + 0.2 * g[k]) + 0.5 * want[k])
            m[k] = 0.95 * m[k] + 0.05 * g[k]
    _close(got, want)


def test_clipping_chain_and_global_norm(rng: np.random.Generator) -> None:
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    grads[1] = {k: 1e-3 * g for k, g in grads[1].items()}  # within the bound: left unchanged
    grads[2] = {k: 0 * g for k, g in grads[2].items()}  # zero gradients: no division by zero
    opt = ts.optim.chain(ts.optim.clip(1.5), ts.optim.clip_by_global_norm(1.0), ts.optim.sgd(0.1, momentum=0.5))
    got, state = _run(opt, params, grads)
    want, vel = _copy(params), {k: 0 * x for k, x in params.items()}
    for g in grads:
        g = {k: np.clip(x, -1.5, 1.5) for k, x in g.items()}
        norm = math.sqrt(sum(float(np.sum(x**2)) for x in g.values()))
        scale = 1.0 / max(norm, 1.0)
        for k in want:
            vel[k] = 0.5 * vel[k] + g[k] * scale
            want[k] = want[k] - 0.1 * vel[k]
    _close(got, want)
    assert isinstance(state, ts.optim.ChainState) and int(state.states[2].count) == 3
    assert not opt.transforms_gradients

    tree = _tree(rng)
    expected = math.sqrt(sum(float(np.sum(x**2)) for x in tree.values()))
    assert float(ts.program(ts.optim.global_norm)(tree)) == pytest.approx(expected, rel=1e-12)
    # a chain of transformations only is a gradient transformation: it returns the clipped gradients
    clipped, _ = _run(ts.optim.chain(ts.optim.clip_by_global_norm(0.5)), tree, [tree])
    np.testing.assert_allclose(np.asarray(clipped["w"]), tree["w"] * 0.5 / expected, rtol=1e-12)


def test_chain_and_hyperparameter_errors() -> None:
    with pytest.raises(ValueError, match="chain: only the last transformation may be an optimizer"):
        ts.optim.chain(ts.optim.sgd(0.1), ts.optim.clip(1.0))
    with pytest.raises(TypeError, match="chain: argument 0"):
        ts.optim.chain(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clip_by_global_norm: max_norm must be > 0"):
        ts.optim.clip_by_global_norm(0.0)
    with pytest.raises(ValueError, match="warmup_cosine_decay: decay_steps"):
        ts.optim.warmup_cosine_decay(0.0, 1.0, warmup_steps=10, decay_steps=5)
    with pytest.raises(ValueError, match="join_schedules: needs one more schedule"):
        ts.optim.join_schedules([ts.optim.constant(1.0)], [3])
    with pytest.raises(ValueError, match="rmsprop: decay"):
        ts.optim.rmsprop(decay=1.0)


def test_schedules_match_closed_forms() -> None:
    counts = np.array([0, 1, 3, 5, 9, 10, 11, 20, 40], np.int32)
    schedules = {
        "constant": ts.optim.constant(0.3),
        "linear": ts.optim.linear_schedule(1.0, 0.2, transition_steps=8, transition_begin=2),
        "warmup": ts.optim.linear_warmup(0.5, warmup_steps=10),
        "exp": ts.optim.exponential_decay(2.0, transition_steps=4, decay_rate=0.5, transition_begin=1),
        "stairs": ts.optim.exponential_decay(2.0, transition_steps=4, decay_rate=0.5, staircase=True, end_value=0.3),
        "cosine": ts.optim.cosine_decay(1.5, decay_steps=20, alpha=0.1),
        "warmup_cosine": ts.optim.warmup_cosine_decay(0.1, 1.0, warmup_steps=10, decay_steps=30, end_value=0.05),
        "joined": ts.optim.join_schedules([ts.optim.constant(1.0), ts.optim.constant(0.5)], [5]),
    }

    @ts.program
    def evaluate(c: Tensor[i32, Dim]) -> Any:
        return {name: s(c) for name, s in schedules.items()}

    got = {k: np.asarray(v) for k, v in evaluate(counts).items()}
    c = counts.astype(np.float64)

    def cosine(init: float, steps: float, alpha: float, c: np.ndarray) -> np.ndarray:
        return init * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * np.minimum(c / steps, 1))) + alpha)

    want = {
        "constant": np.full_like(c, 0.3),
        "linear": 1.0 + (0.2 - 1.0) * np.clip((c - 2) / 8, 0, 1),
        "warmup": 0.5 * np.minimum(c / 10, 1),
        "exp": 2.0 * 0.5 ** (np.maximum(c - 1, 0) / 4),
        "stairs": np.maximum(2.0 * 0.5 ** np.floor(c / 4), 0.3),
        "cosine": cosine(1.5, 20, 0.1, c),
        "warmup_cosine": np.where(c < 10, 0.1 + 0.9 * c / 10, cosine(1.0, 20, 0.05, c - 10)),
        "joined": np.where(c < 5, 1.0, 0.5),
    }
    for name in want:
        assert got[name].dtype == np.float32, name
        np.testing.assert_allclose(got[name], want[name], rtol=2e-6, atol=1e-7, err_msg=name)


def test_a_schedule_drives_f64_parameters_and_donated_state(rng: np.random.Generator) -> None:
    """The f32 schedule adopts the f64 parameters' dtype; the step compiles once with donated inputs."""
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    opt = ts.optim.sgd(ts.optim.exponential_decay(0.1, transition_steps=1, decay_rate=0.5))

    @ts.program(donate_argnums=(0, 1))
    def step(params: Any, state: Any, grads: Any) -> Any:
        return opt.update(grads, state, params)

    state = ts.program(opt.init)(params)
    p: Any = {k: ts.asarray(v) for k, v in params.items()}
    for g in grads:
        p, state = step(p, state, g)
    want = _copy(params)
    for t, g in enumerate(grads):
        for k in want:
            want[k] = want[k] - 0.1 * 0.5**t * g[k]
    _close(p, want, rtol=1e-7)
    assert np.asarray(p["w"]).dtype == np.float64
    # regression: an eager update got the schedule's concrete f32 rate and raised a DTypeError on f64 parameters
    eager = ts.optim.sgd(lambda count: ts.asarray(np.float32(0.5)))
    stepped, _ = eager.update(grads[0], eager.init(params), params)
    _close(stepped, {k: params[k] - 0.5 * grads[0][k] for k in params})


class Batch(Dim): ...


class In(Dim): ...


class Hidden(Dim): ...


def test_staged_mlp_train_step_with_warmup_clipping_and_adamw(rng: np.random.Generator) -> None:
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = (np.sin(x @ np.array([1.0, -2.0, 0.5, 1.5])) > 0).astype(np.float32)
    k1, k2 = ts.random.split(ts.random.key(0))
    params = {"l1": ts.nn.dense(k1, 4, 16), "l2": ts.nn.dense(k2, 16, 1)}
    opt = ts.optim.chain(
        ts.optim.clip_by_global_norm(1.0),
        ts.optim.adamw(ts.optim.warmup_cosine_decay(0.0, 0.05, warmup_steps=5, decay_steps=60), weight_decay=1e-3),
    )

    def loss_fn(params: Any, x: Tensor[f32, Batch, In], y: Tensor[f32, Batch]) -> Tensor[f32]:
        h = ts.nn.gelu(params["l1"](x))
        logits = params["l2"](h)[:, 0]
        return ts.nn.sigmoid_binary_cross_entropy(logits, y).mean()

    @ts.program(donate_argnums=(0, 1))
    def train_step(params: Any, state: Any, x: Tensor[f32, Batch, In], y: Tensor[f32, Batch]) -> Any:
        loss, grads = ts.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    state = ts.program(opt.init)(params)
    losses = []
    for _ in range(60):
        params, state, loss = train_step(params, state, x, y)
        losses.append(float(loss))
    assert np.isfinite(losses).all()
    assert losses[-1] < 0.6 * losses[0], losses[::10]


def test_optax_cross_check(rng: np.random.Generator) -> None:
    optax = pytest.importorskip("optax")
    jnp = pytest.importorskip("jax.numpy")
    params, grads = _tree(rng), [_tree(rng) for _ in range(3)]
    ours = ts.optim.chain(ts.optim.clip_by_global_norm(1.0), ts.optim.adamw(0.01, weight_decay=0.1))
    theirs = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(0.01, weight_decay=0.1))
    got, _ = _run(ours, params, grads)
    p = {k: jnp.asarray(v) for k, v in params.items()}
    s = theirs.init(p)
    for g in grads:
        u, s = theirs.update({k: jnp.asarray(v) for k, v in g.items()}, s, p)
        p = optax.apply_updates(p, u)
    _close(got, {k: np.asarray(v) for k, v in p.items()}, rtol=1e-5)
