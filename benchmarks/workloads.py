"""The benchmark workloads, written once for tensorstage and once for jax with the same math."""

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


# -------------------------------------------------------------------------------------------- data
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
