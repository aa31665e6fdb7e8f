"""Typed transforms: grad and value_and_grad give the argument's type, vmap(f, Batch) adds the Batch dim to the
mapped arguments and the result, vmap of grad gives per-example gradients, jvp/vjp keep the primals' types."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


DIMS = dict(Batch=4, In=3, Out=2)


def predict(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, Out]:
    return tnp.tanh(x @ w)


def loss(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32]:
    y = predict(w, x)
    return (y * y).sum()


def energy(x: Tensor[f32, In]) -> Tensor[f32]:
    return (tnp.sin(x) * x).sum()


# Program[[Tensor[f32, In, Out], Tensor[f32, Batch, In]], Tensor[f32, Batch, Out]]: w is shared, x gains Batch.
batched_predict = ts.vmap(predict, Batch, in_axes=(None, 0))
# Per-example gradients: Program[[Tensor[f32, In, Out], Tensor[f32, Batch, In]], Tensor[f32, Batch, In, Out]].
per_example_grads = ts.vmap(ts.grad(loss), Batch, in_axes=(None, 0))
# One argument, every axis named: Program[[Tensor[f32, Batch, In]], Tensor[f32, Batch, In]].
batched_energy_grad = ts.vmap(ts.grad(energy), Batch)


@ts.program
def sgd_step(w: Tensor[f32, In, Out], xs: Tensor[f32, Batch, In]) -> Tensor[f32, In, Out]:
    grads: Tensor[f32, Batch, In, Out] = per_example_grads(w, xs)
    g: Tensor[f32, In, Out] = ts.grad(loss)(w, xs[0])
    return w - 0.1 * grads.mean(axis=Batch) + 0.0 * g


@ts.program
def forward(w: Tensor[f32, In, Out], xs: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
    return batched_predict(w, xs)


@ts.program
def scaled_gradient(x: Tensor[f32, In]) -> Tensor[f32, In]:
    value, g = ts.value_and_grad(energy)(x)
    return value * g


@ts.program
def directional(x: Tensor[f32, In], t: Tensor[f32, In]) -> Tensor[f32]:
    y, dy = ts.jvp(energy, (x,), (t,))
    return y + dy


@ts.program
def pullback(w: Tensor[f32, In, Out], x: Tensor[f32, In], ct: Tensor[f32, Out]) -> Tensor[f32, In, Out]:
    y, pull = ts.vjp(predict, w, x)
    gw, gx = pull(ct * y)
    return gw + 0.0 * (gx.sum() * w)
