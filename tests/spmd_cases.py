"""Collective cases shared by tests/test_pmap.py, and the checks that need several CPU devices.

``OPS`` pairs each collective (per-member staged code) with its NumPy reference over the whole mapped axis.
Run as a script (``TENSORSTAGE_CPU_DEVICES=4 python tests/spmd_cases.py``) it runs every ``check_*`` on four
devices and prints one JSON object ``{check name: "ok" or the traceback}``; test_pmap.py does that in a
subprocess because the CPU client of the pytest process was created with one device.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
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


def check_results_stay_on_the_devices() -> None:
    xs = data(11, np.float32)
    out = ts.pmap(lambda x: tnp.tanh(x) * 2 + 1)(xs)
    assert type(out) is ts.Array and out.is_sharded, out
    assert out.devices() == tuple(ts.devices()[:N]) and out.shape == (N, 3) and out.dtype == np.float32
    assert len(out.buffer._sharding._internal_device_list) == N  # one global buffer, one shard per device
    assert out.block_until_ready() is out and out.is_ready()
    np.testing.assert_allclose(out.numpy(), np.tanh(xs) * 2 + 1, rtol=1e-5, atol=1e-6)
    assert "Array(" in repr(out) and "dtype=f32" in repr(out)
    try:
        out.device
    except ValueError as err:
        assert "sharded over 4 devices" in str(err) and ".devices()" in str(err), err
    else:
        raise AssertionError("a sharded array has no single device")
    # other out_axes still come back through the host as single-device arrays
    total, moved = ts.pmap(lambda x: (ts.psum(x, "i"), x), axis_name="i", out_axes=(None, 1))(xs)
    assert not total.is_sharded and not moved.is_sharded
    np.testing.assert_allclose(np.asarray(moved), xs.T)


def check_loop_feeds_results_back_without_host_copies() -> None:
    from tensorstage.lowering import runtime as host_runtime
    from tensorstage.lowering import spmd as spmd_runtime

    step = ts.pmap(lambda x, b: x * np.float32(0.5) + b, in_axes=(0, None))
    x0 = data(12, np.float32)
    bias = np.float32(1.0)
    x = step(x0, bias)  # the first call puts the host data on the devices
    counts = {"put_sharded": 0, "gather": 0, "to_host": 0}
    passed: list[list[object]] = []
    originals = {name: getattr(spmd_runtime, name) for name in ("put_sharded", "run")}
    originals_host = {name: getattr(host_runtime, name) for name in ("gather", "to_host")}

    def counting(module: Any, name: str, original: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return original(*args, **kwargs)

        setattr(module, name, wrapped)

    def recording_run(executable: Any, buffers: Any, handlers: Any) -> Any:
        passed.append(list(buffers))
        return originals["run"](executable, buffers, handlers)

    try:
        counting(spmd_runtime, "put_sharded", originals["put_sharded"])
        counting(host_runtime, "gather", originals_host["gather"])
        counting(host_runtime, "to_host", originals_host["to_host"])
        spmd_runtime.run = recording_run
        expected = x0 * np.float32(0.5) + bias
        for _ in range(6):
            previous = x
            x = step(x, bias)
            assert passed[-1][0] is previous.buffer  # the result itself went back in: no copy
            expected = expected * np.float32(0.5) + bias
        assert counts == {"put_sharded": 0, "gather": 0, "to_host": 0}, counts
    finally:
        for name, fn in originals.items():
            setattr(spmd_runtime, name, fn)
        for name, fn in originals_host.items():
            setattr(host_runtime, name, fn)
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6)
    # a pytree of parameters, as a data-parallel training loop passes them
    update = ts.pmap(lambda p: {"w": p["w"] - 0.1 * p["b"], "b": p["b"] * 2})
    params = {"w": data(13), "b": data(14)}
    state = update(params)
    for _ in range(3):
        buffers = (state["w"].buffer, state["b"].buffer)
        state = update(state)
        assert state["w"].is_sharded and state["w"].buffer not in buffers
    w, b = params["w"], params["b"]
    for _ in range(4):
        w, b = w - 0.1 * b, b * 2
    np.testing.assert_allclose(np.asarray(state["w"]), w, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(state["b"]), b, rtol=1e-12)


def check_sharded_arrays_elsewhere() -> None:
    xs = data(15, np.float32)
    out = ts.pmap(lambda x: x + 1)(xs)
    ref = xs + 1
    # a single-device program gets a single-device copy, never the multi-device buffer
    total = ts.program(lambda a: tnp.sum(a * 2, axis=0))(out)
    assert total.device == ts.devices()[0]
    np.testing.assert_allclose(np.asarray(total), (ref * 2).sum(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tnp.sin(out)), np.sin(ref), rtol=1e-6)  # eager ops
    np.testing.assert_allclose(np.asarray(out + out), ref * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out[2]), ref[2])
    np.testing.assert_allclose(np.asarray(list(out)[3]), ref[3])
    moved = ts.device_put(out, ts.devices()[2])
    assert moved.device == ts.devices()[2] and not moved.is_sharded
    np.testing.assert_allclose(np.asarray(moved), ref)
    assert ts.device_put(out).device == ts.devices()[0]
    np.testing.assert_allclose(np.asarray(ts.program(lambda a: a)(moved)), ref)
    assert ts.asarray(out) is out
    # the pmap input path: other in_axes, replicated, or other devices go through the host and stay correct
    reversed_devices = tuple(reversed(ts.devices()[:N]))
    again = ts.pmap(lambda x: x * 3, devices=reversed_devices)(out)
    assert again.devices() == reversed_devices
    np.testing.assert_allclose(np.asarray(again), ref * 3, rtol=1e-6)
    square = ts.pmap(lambda x: x * 2)(np.ones((N, N), np.float32) * np.arange(N, dtype=np.float32))
    columns = ts.pmap(lambda x, s: x + tnp.sum(s), in_axes=(1, None))(square, square)
    np.testing.assert_allclose(np.asarray(columns), (np.asarray(square) + np.asarray(square).sum()).T, rtol=1e-6)
    grads = ts.pmap(ts.grad(lambda x: tnp.sum(x * x)))(out)
    np.testing.assert_allclose(np.asarray(grads), 2 * ref, rtol=1e-6)


def check_sharded_readback_dtypes() -> None:
    import ml_dtypes

    base = np.arange(N * 6).reshape(N, 2, 3) - 7
    identity = ts.pmap(lambda x: x)
    for dtype in (np.float32, np.float64, np.int32, np.int8, np.uint8, np.float16, ml_dtypes.bfloat16, np.bool_):
        host = (base % 3 == 0) if dtype is np.bool_ else base.astype(dtype)
        out = identity(host)
        assert out.is_sharded and out.dtype == np.dtype(dtype), (dtype, out.dtype)
        got = out.numpy()
        assert got.dtype == np.dtype(dtype) and got.shape == host.shape, (dtype, got.dtype, got.shape)
        np.testing.assert_array_equal(got, host, err_msg=str(dtype))
        np.testing.assert_array_equal(np.asarray(out), host, err_msg=str(dtype))
        np.testing.assert_array_equal(np.asarray(ts.device_put(out)), host, err_msg=str(dtype))
    scalars = identity(np.arange(N, dtype=np.float32))  # a scalar per device
    assert scalars.shape == (N,) and scalars.is_sharded
    np.testing.assert_array_equal(scalars.numpy(), np.arange(N, dtype=np.float32))
    assert scalars.tolist() == [0.0, 1.0, 2.0, 3.0]


def check_never_imports_jax() -> None:
    assert "jax" not in sys.modules, "pmap imported jax"


def checks(namespace: dict[str, Any] | None = None) -> dict[str, Callable[[], None]]:
    """The ``check_*`` functions of ``namespace`` (default: this module's), by name without the prefix."""
    scope = globals() if namespace is None else namespace
    return {name[len("check_"):]: fn for name, fn in scope.items() if name.startswith("check_") and callable(fn)}


def run_checks(namespace: dict[str, Any] | None = None) -> None:
    """Run every check (in the subprocess) and print one ``RESULTS`` line for the parent test to read."""
    results: dict[str, str] = {}
    for name, fn in checks(namespace).items():
        try:
            fn()
            results[name] = "ok"
        except BaseException:  # noqa: BLE001 - every failure is reported to the parent test
            results[name] = traceback.format_exc()
    print("RESULTS " + json.dumps(results))


def results_on_devices(script: Path) -> dict[str, str]:
    """Run ``script`` (a module of checks) in a subprocess with N CPU devices; its checks' results by name."""
    env = dict(os.environ, TENSORSTAGE_CPU_DEVICES=str(N), TENSORSTAGE_DEFAULT_DEVICE="cpu")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, f"rc={proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULTS "):])  # type: ignore[no-any-return]


def device_checks(cases: ModuleType, name: str = "test_on_four_cpu_devices") -> Callable[[str], None]:
    """A test parametrized by the checks of ``cases`` (a ``*_cases.py`` module), all run in one subprocess with N
    CPU devices the first time one is asked for (a test file assigns it to a ``test_`` name)."""
    import pytest

    results: dict[str, str] = {}

    @pytest.mark.parametrize("check", sorted(checks(vars(cases))))
    def test(check: str) -> None:
        if not results:
            results.update(results_on_devices(Path(cases.__file__)))
        assert results[check] == "ok", results[check]

    test.__name__ = test.__qualname__ = name
    return test


if __name__ == "__main__":
    run_checks()
