"""Train a small convolutional network on scikit-learn's bundled digits (8x8 images, 10 classes) with Adam.

Two 3x3 convolutions with max pooling, then a dense layer: `ts.nn.Conv`, `ts.nn.max_pool` and `ts.nn.Dense`
in a pytree of parameters; one training step (loss, gradient through the convolutions and Adam update) is one
compiled call.

    python examples/train_digits_cnn.py        # full run: about 98% test accuracy
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Literal

import attrs
import numpy as np

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, i32
from tensorstage import numpy as tnp
from train_digits import load_data


class Batch(Dim): ...


class Classes(Dim): ...


Image = Tensor[f32, Batch, Literal[8], Literal[8], Literal[1]]  # height, width, one grey channel


@attrs.frozen
class CNN:
    conv1: ts.nn.Conv[f32, Any, Any]
    conv2: ts.nn.Conv[f32, Any, Any]
    head: ts.nn.Dense[f32, Any, Classes]


AdamState = ts.optim.AdamState[CNN]
optimizer = ts.optim.adam(learning_rate=3e-3)


@ts.program(static_argnums=(1,))
def init_cnn(key: ts.random.Key, channels: int) -> CNN:
    k1, k2, k3 = ts.random.split(key, 3)
    return CNN(
        conv1=ts.nn.conv_layer(k1, 1, channels, (3, 3), padding="SAME", init=ts.nn.he_normal),
        conv2=ts.nn.conv_layer(k2, channels, 2 * channels, (3, 3), padding="SAME", init=ts.nn.he_normal),
        head=ts.nn.dense(k3, 2 * 2 * 2 * channels, 10),  # two 2x2 poolings leave 2x2 pixels
    )


def logits(params: CNN, x: Image) -> Tensor[f32, Batch, Classes]:
    h = ts.nn.max_pool(ts.nn.relu(params.conv1(x)), (2, 2), strides=2)  # 8x8 -> 4x4
    h = ts.nn.max_pool(ts.nn.relu(params.conv2(h)), (2, 2), strides=2)  # 4x4 -> 2x2
    flat = h.reshape(h.shape[0], -1)
    return params.head(flat)


def loss_fn(params: CNN, x: Image, y: Tensor[i32, Batch]) -> Tensor[f32]:
    return ts.nn.softmax_cross_entropy_with_integer_labels(logits(params, x), y).mean()


@ts.program(donate_argnums=(0, 1))
def train_step(params: CNN, state: AdamState, x: Image, y: Tensor[i32, Batch]) -> tuple[CNN, AdamState, Tensor[f32]]:
    loss, grads = ts.value_and_grad(loss_fn)(params, x, y)
    params, state = optimizer.update(grads, state, params)
    return params, state, loss


@ts.program
def predict(params: CNN, x: Image) -> Tensor[i32, Batch]:
    return tnp.argmax(logits(params, x), axis=-1)


def as_images(pixels: np.ndarray) -> np.ndarray:
    return pixels.reshape(-1, 8, 8, 1)


def main(epochs: int = 15, batch_size: int = 32, channels: int = 16, seed: int = 0, quiet: bool = False) -> float:
    """Train and return the test accuracy."""
    start = time.perf_counter()
    x_train, x_test, y_train, y_test = load_data(seed)
    x_train, x_test = as_images(x_train), as_images(x_test)
    key, init_key = ts.random.split(ts.random.key(seed))
    params = init_cnn(init_key, channels)
    state = ts.program(optimizer.init)(params)
    steps_per_epoch = len(x_train) // batch_size  # full batches only: one compiled signature

    for epoch in range(epochs):
        order = np.asarray(ts.random.permutation(ts.random.fold_in(key, epoch), len(x_train)))
        total = tnp.zeros(())
        for step in range(steps_per_epoch):
            batch = order[step * batch_size : (step + 1) * batch_size]
            params, state, loss = train_step(params, state, ts.asarray(x_train[batch]), ts.asarray(y_train[batch]))
            total = total + loss  # stays on the device: no sync per step
        if not quiet:
            print(f"epoch {epoch + 1:2d}: loss {float(np.asarray(total)) / steps_per_epoch:.4f}")

    predicted = np.asarray(predict(params, ts.asarray(x_test)))
    accuracy = float((predicted == y_test).mean())
    if not quiet:
        print(f"test accuracy: {accuracy:.2%} ({len(y_test)} held-out digits)")
        print(f"wall time: {time.perf_counter() - start:.1f} s (load, compile and {epochs} epochs)")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    main(epochs=args.epochs, quiet=args.quiet)
