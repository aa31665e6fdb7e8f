"""Collective cases shared by tests/test_pmap.py, and the checks that need several CPU devices.

``OPS`` pairs each collective (per-member staged code) with its NumPy reference over the whole mapped axis.
Run as a script (``TENSORSTAGE_CPU_DEVICES=4 python tests/spmd_cases.py``) it runs every ``check_*`` on four
devices and prints one JSON object ``{check name: "ok" or the traceback}``; test_pmap.py does that in a
subprocess because the CPU client of the pytest process was created with one device.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorstage as ts
from tensorstage import numpy as tnp

N = 4
RING = [(k, (k + 1) % N) for k in range(N)]
PARTIAL = [(0, 2), (2, 1), (3, 0)]  # member 3 receives nothing


def _stack(x: np.ndarray) -> np.ndarray:
    """The same value on every member: (N, *x.shape)."""
    return np.broadcast_to(x, (N, *x.shape)).copy()


def _permuted(xs: np.ndarray, perm: list[tuple[int, int]]) -> np.ndarray:
    out = np.zeros_like(xs)
    for src, dst in perm:
        out[dst] = xs[src]
    return out


# name -> (per-member function of x (float, shape (3,)), NumPy function of the stacked xs (N, 3), differentiable)
OPS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray], bool]] = {
    "psum": (lambda x: ts.psum(x, "i"), lambda xs: _stack(xs.sum(0)), True),
    "pmean": (lambda x: ts.pmean(x, "i"), lambda xs: _stack(xs.mean(0)), True),
    "pmax": (lambda x: ts.pmax(x, "i"), lambda xs: _stack(xs.max(0)), True),
    "pmin": (lambda x: ts.pmin(x, "i"), lambda xs: _stack(xs.min(0)), True),
    "psum_nonlinear": (lambda x: ts.psum(tnp.sin(x) * x, "i") * x, lambda xs: _stack((np.sin(xs) * xs).sum(0)) * xs, True),
    "all_gather": (lambda x: ts.all_gather(x, "i"), lambda xs: _stack(xs), True),
    "all_gather_axis1": (lambda x: ts.all_gather(x, "i", axis=1), lambda xs: _stack(xs.T), True),
    "all_gather_tiled": (lambda x: ts.all_gather(x, "i", tiled=True), lambda xs: _stack(xs.reshape(-1)), True),
    "ppermute_ring": (lambda x: ts.ppermute(x, "i", RING), lambda xs: _permuted(xs, RING), True),
    "ppermute_partial": (lambda x: ts.ppermute(x * x, "i", PARTIAL), lambda xs: _permuted(xs * xs, PARTIAL), True),
    "axis_index": (
        lambda x: x * ts.axis_index("i").astype(x.dtype),
        lambda xs: xs * np.arange(N, dtype=xs.dtype)[:, None],
        True,
    ),
    "psum_of_constant": (lambda x: x + ts.psum(1.0, "i"), lambda xs: xs + N, True),
}


def data(seed: int = 0, dtype: Any = np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, 3)).astype(dtype)


def numerical_grad(f: Callable[[np.ndarray], float], xs: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(xs)
    for idx in np.ndindex(xs.shape):
        e = np.zeros_like(xs)
        e[idx] = eps
        g[idx] = (f(xs + e) - f(xs - e)) / (2 * eps)
    return g


def per_member_grad(fn: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """Each member's gradient of sum(fn(x) * c) (c: that member's cotangent of fn's output): with per-member semantics, the gradient of the sum over all
    members of their outputs with respect to this member's x."""
    return lambda x, c: ts.grad(lambda x: tnp.sum(fn(x) * c))(x)


# ------------------------------------------------------------------------------------ checks on 4 devices


def check_elementwise() -> None:
    xs = data(1, np.float32)
    got = ts.pmap(lambda x: tnp.tanh(x) * 2 + 1)(xs)
    np.testing.assert_allclose(np.asarray(got), np.tanh(xs) * 2 + 1, rtol=1e-5, atol=1e-6)


def check_collectives_match_numpy() -> None:
    xs = data(2)
    for name, (fn, ref, _) in OPS.items():
        got = np.asarray(ts.pmap(fn, axis_name="i")(xs))
        np.testing.assert_allclose(got, ref(xs), rtol=1e-12, atol=1e-12, err_msg=name)


def check_pmap_equals_vmap_axis_name() -> None:
    xs = data(3)
    for name, (fn, _, _) in OPS.items():
        np.testing.assert_allclose(
            np.asarray(ts.pmap(fn, axis_name="i")(xs)), np.asarray(ts.vmap(fn, axis_name="i")(xs)),
            rtol=1e-12, atol=1e-12, err_msg=name,
        )


def check_grads_across_devices() -> None:
    xs = data(4)
    for name, (fn, ref, _) in OPS.items():
        cs = np.random.default_rng(5).standard_normal(ref(xs).shape)  # one cotangent per member's output
        got = np.asarray(ts.pmap(per_member_grad(fn), axis_name="i")(xs, cs))
        expected = numerical_grad(lambda v: float(np.sum(ref(v) * cs)), xs)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, err_msg=name)


def check_psum_pmean_float32_and_int() -> None:
    xs = np.arange(N * 5, dtype=np.float32).reshape(N, 5)
    total, mean = ts.pmap(lambda x: (ts.psum(x, "i"), ts.pmean(x, "i")), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(total), _stack(xs.sum(0)))
    np.testing.assert_allclose(np.asarray(mean), _stack(xs.mean(0)))
    ints = np.arange(N * 2, dtype=np.int32).reshape(N, 2)
    np.testing.assert_array_equal(np.asarray(ts.pmap(lambda x: ts.psum(x, "i"), axis_name="i")(ints)), _stack(ints.sum(0)))
    flags = np.array([[True], [False], [False], [False]])
    got = ts.pmap(lambda b: (ts.pmax(b, "i"), ts.pmin(b, "i")), axis_name="i")(flags)
    np.testing.assert_array_equal(np.asarray(got[0]), np.ones((N, 1), bool))
    np.testing.assert_array_equal(np.asarray(got[1]), np.zeros((N, 1), bool))


def _loss(w: Any, b: Any, x: Any, y: Any) -> Any:
    pred = tnp.tanh(x @ w + b)
    return tnp.mean((pred - y) ** 2)


def check_data_parallel_sgd_step() -> None:
    """pmean of per-device gradients == the single-device gradient on the full batch (equal shards)."""
    rng = np.random.default_rng(6)
    w, b = rng.standard_normal((5, 2)), rng.standard_normal(2)
    x, y = rng.standard_normal((N * 8, 5)), rng.standard_normal((N * 8, 2))
    lr = 0.1

    def step(w: Any, b: Any, x: Any, y: Any) -> Any:
        gw, gb = ts.grad(_loss, argnums=(0, 1))(w, b, x, y)
        gw, gb = ts.pmean((gw, gb), "i")
        return w - lr * gw, b - lr * gb

    def step_through_pmean_loss(w: Any, b: Any, x: Any, y: Any) -> Any:
        # grad of the pmean'd loss: each device's gradient is its local one (psum transposes to psum), so the
        # data-parallel step still averages the gradients.
        gw, gb = ts.grad(lambda w, b: ts.pmean(_loss(w, b, x, y), "i"), argnums=(0, 1))(w, b)
        gw, gb = ts.pmean((gw, gb), "i")
        loss = ts.pmean(_loss(w, b, x, y), "i")
        return w - lr * gw, b - lr * gb, loss

    shards = (x.reshape(N, 8, 5), y.reshape(N, 8, 2))
    single_w, single_b = ts.program(lambda w, b: tuple(p - lr * g for p, g in zip(
        (w, b), ts.grad(_loss, argnums=(0, 1))(w, b, x, y))))(w, b)
    for fn in (step, step_through_pmean_loss):
        outs = ts.pmap(fn, axis_name="i", in_axes=(None, None, 0, 0))(w, b, *shards)
        new_w, new_b = np.asarray(outs[0]), np.asarray(outs[1])
        for k in range(N):  # every replica took the same step
            np.testing.assert_allclose(new_w[k], np.asarray(single_w), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(new_b[k], np.asarray(single_b), rtol=1e-10, atol=1e-12)
    full_loss = float(np.asarray(ts.program(_loss)(w, b, x, y)))
    loss = np.asarray(ts.pmap(step_through_pmean_loss, axis_name="i", in_axes=(None, None, 0, 0))(w, b, *shards)[2])
    np.testing.assert_allclose(loss, np.full(N, full_loss), rtol=1e-10)


def check_axes_pytrees_and_arrays() -> None:
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, N)).astype(np.float32)  # mapped along axis 1
    scale = np.float32(2.0)
    params = {"a": ts.asarray(rng.standard_normal((N, 2)).astype(np.float32)), "b": np.ones(2, np.float32)}

    def f(x: Any, s: Any, p: Any) -> Any:
        return {"sum": ts.psum(x * s, "i"), "mixed": p["a"] + p["b"] + x[0]}

    out = ts.pmap(f, axis_name="i", in_axes=(1, None, {"a": 0, "b": None}), out_axes={"sum": None, "mixed": 1})(
        xs, scale, params
    )
    np.testing.assert_allclose(np.asarray(out["sum"]), (xs * 2).sum(1), rtol=1e-6)
    expected = (np.asarray(params["a"]) + 1 + xs[0][:, None]).T
    np.testing.assert_allclose(np.asarray(out["mixed"]), expected, rtol=1e-6)


def check_repeated_calls_and_cache() -> None:
    g = ts.pmap(lambda x: ts.psum(x, "i"), axis_name="i")
    xs = data(8, np.float32)
    for _ in range(25):  # back-to-back collective launches must not deadlock
        out = g(xs)
    np.testing.assert_allclose(np.asarray(out), _stack(xs.sum(0)), rtol=1e-6)
    assert len(g._cache) == 1
    g(np.zeros((2, 3), np.float32))  # a new signature on 2 of the 4 devices
    assert len(g._cache) == 2


def check_vmap_inside_pmap() -> None:
    xs = data(9).reshape(N, 3, 1)[:, :, 0]  # (N, 3): devices x inner batch

    def inner(x: Any) -> Any:
        return ts.psum(x, "j") * 10 + ts.psum(x, "i")

    got = ts.pmap(ts.vmap(inner, axis_name="j"), axis_name="i")(xs)
    expected = xs.sum(1, keepdims=True) * 10 + xs.sum(0, keepdims=True)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def check_collective_inside_scan() -> None:
    xs = data(10)

    def f(x: Any) -> Any:
        def body(c: Any, _: Any) -> Any:
            c = ts.psum(c, "i") / N + 1
            return c, c

        return ts.scan(body, x, tnp.zeros(3))

    carry, ys = ts.pmap(f, axis_name="i")(xs)
    # step 1 averages the members and adds one; later steps average equal values and add one
    np.testing.assert_allclose(np.asarray(carry), _stack(xs.mean(0) + 3), rtol=1e-12)
    assert np.asarray(ys).shape == (N, 3, 3)


def check_never_imports_jax() -> None:
    assert "jax" not in sys.modules, "pmap imported jax"


def checks() -> dict[str, Callable[[], None]]:
    return {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_") and callable(fn)}


def main() -> None:
    results: dict[str, str] = {}
    for name, fn in checks().items():
        try:
            fn()
            results[name] = "ok"
        except BaseException:  # noqa: BLE001 - every failure is reported to the parent test
            results[name] = traceback.format_exc()
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main()
