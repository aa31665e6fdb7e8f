"""The benchmark workloads, written once for tensorstage and once for jax with the same math.

Two MLP train steps: the *wide* one is issue #3's (784->1024->1024->10 ReLU, batch 256, softmax cross-entropy,
SGD), the one issue #6's steady-state and first-result targets name; the *deep* one (100 tanh layers of width 256,
value_and_grad + SGD) is issue #6's staging workload and, as an extra row, a big program for the other targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorstage as ts
from tensorstage import numpy as tnp

WIDTH = 256
BATCH = 32
LR = 0.01
SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


def has_grad() -> bool:
    return hasattr(ts, "value_and_grad")


# ------------------------------------------------------------------------------------------- tensorstage
def ts_loss(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    h = x
    for w, b in params:
        h = tnp.tanh(h @ w + b)
    return tnp.mean((h - y) ** 2)


def ts_train_step(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    """value_and_grad + SGD; without autodiff in this checkout, the forward loss only (reported as such)."""
    if not has_grad():
        return params, ts_loss(params, x, y)
    value_and_grad: Any = ts.value_and_grad(ts_loss)  # untyped params list: skip the typed overloads
    loss, grads = value_and_grad(params, x, y)
    new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, loss


def ts_selu(x: Any) -> Any:
    return SELU_SCALE * tnp.where(x > 0, x, SELU_ALPHA * (tnp.exp(x) - 1.0))


def ts_gram(x: Any) -> Any:
    return x @ x.T


def ts_specs(layers: int) -> tuple[list[tuple[ts.Spec, ts.Spec]], ts.Spec, ts.Spec]:
    params = [(ts.Spec((WIDTH, WIDTH), ts.f32), ts.Spec((WIDTH,), ts.f32)) for _ in range(layers)]
    return params, ts.Spec((BATCH, WIDTH), ts.f32), ts.Spec((BATCH, WIDTH), ts.f32)


def fresh_ts_step() -> ts.Program[Any, Any]:
    """A new Program each time, so nothing staged earlier is reused."""
    return ts.program(lambda params, x, y: ts_train_step(params, x, y))


WIDE_SIZES = (784, 1024, 1024, 10)
WIDE_BATCH = 256
WIDE_LR = 0.01
wide_optimizer = ts.optim.sgd(WIDE_LR)


def wide_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = x
    for i in range(len(WIDE_SIZES) - 2):
        h = ts.nn.relu(h @ params[f"w{i}"] + params[f"b{i}"])
    last = len(WIDE_SIZES) - 2
    logits = h @ params[f"w{last}"] + params[f"b{last}"]
    return ts.nn.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def ts_wide_step(params: dict[str, Any], state: Any, x: Any, y: Any) -> Any:
    value_and_grad: Any = ts.value_and_grad(wide_loss)  # untyped params dict: skip the typed overloads
    value, grads = value_and_grad(params, x, y)
    params, state = wide_optimizer.update(grads, state, params)
    return params, state, value


# ------------------------------------------------------------------------------------------------ jax
def jax_loss(jnp: Any, params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.mean((h - y) ** 2)


def jax_train_step(jax: Any) -> Any:
    jnp = jax.numpy

    def step(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
        if not has_grad():
            return params, jax_loss(jnp, params, x, y)
        loss, grads = jax.value_and_grad(lambda p: jax_loss(jnp, p, x, y))(params)
        new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return new, loss

    return step


def jax_selu(jax: Any) -> Any:
    jnp = jax.numpy
    return lambda x: SELU_SCALE * jnp.where(x > 0, x, SELU_ALPHA * (jnp.exp(x) - 1.0))


def jax_specs(jax: Any, layers: int) -> tuple[Any, Any, Any]:
    s = jax.ShapeDtypeStruct
    f32 = np.float32
    params = [(s((WIDTH, WIDTH), f32), s((WIDTH,), f32)) for _ in range(layers)]
    return params, s((BATCH, WIDTH), f32), s((BATCH, WIDTH), f32)


def jax_wide_step(jax: Any) -> Any:
    """Issue #3's step in jax (not jitted); the loss has our formulation (a gather measured slower in jax)."""
    jnp = jax.numpy

    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = x
        for i in range(len(WIDE_SIZES) - 2):
            h = jax.nn.relu(h @ params[f"w{i}"] + params[f"b{i}"])
        last = len(WIDE_SIZES) - 2
        logits = h @ params[f"w{last}"] + params[f"b{last}"]
        return -jnp.mean(jnp.sum(jax.nn.one_hot(y, WIDE_SIZES[-1]) * jax.nn.log_softmax(logits), axis=1))

    def step(params: dict[str, Any], x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - WIDE_LR * g, params, grads), value

    return step


# -------------------------------------------------------------------------------------------- data
def wide_mlp_data(seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(WIDE_SIZES[:-1], WIDE_SIZES[1:])):
        params[f"w{i}"] = (rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    x = rng.standard_normal((WIDE_BATCH, WIDE_SIZES[0])).astype(np.float32)
    y = rng.integers(0, WIDE_SIZES[-1], WIDE_BATCH).astype(np.int32)
    return params, x, y


def mlp_data(layers: int, seed: int = 0) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(WIDTH)
    params = [
        ((rng.standard_normal((WIDTH, WIDTH)) * scale).astype(np.float32), np.zeros(WIDTH, np.float32))
        for _ in range(layers)
    ]
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    y = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    return params, x, y
