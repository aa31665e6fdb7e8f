"""JAX's debugging and tuning switches: disable_jit, named_scope / named_call, default_matmul_precision,
transfer guards, custom_gradient, the process queries, print_environment_info, live_arrays, copy_to_host_async and
checkify's init_error / check_error."""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.contexts import default_matmul_precision, disable_jit
from tensorstage.custom_gradient import custom_gradient
from tensorstage.environment import print_environment_info
from tensorstage.experimental import checkify
from tensorstage.live_arrays import live_arrays
from tensorstage.named_scopes import named_call, named_scope
from tensorstage.processes import host_count, host_id, host_ids, process_count, process_index, process_indices
from tensorstage.transfer_guards import (
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from tensorstage.transfers import copy_to_host_async

RNG = np.random.default_rng(7)


def _f32(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------------------------------------- disable_jit


def test_disable_jit_runs_the_function_eagerly_on_arrays_and_transforms_still_stage() -> None:
    seen: list[str] = []

    @ts.jit
    def f(x: Any) -> Any:
        seen.append(type(x).__name__)
        return tnp.sin(x) * 2.0

    x = ts.asarray(_f32(4))
    expected = np.sin(np.asarray(x)) * 2
    np.testing.assert_allclose(f(x), expected, rtol=1e-6)
    f(x)
    assert seen == ["Traced"]  # staged once, then cached
    with disable_jit():
        assert ts.config.jax_disable_jit is True
        np.testing.assert_allclose(f(x), expected, rtol=1e-6)
        np.testing.assert_allclose(f(x), expected, rtol=1e-6)
        assert seen == ["Traced", "Array", "Array"]  # the Python body ran per call, on concrete values
        g = ts.grad(lambda v: tnp.sum(f(v)))(x)  # grad stages f (JAX: its tracers), as vmap does
        np.testing.assert_allclose(g, 2 * np.cos(np.asarray(x)), rtol=1e-5)
        np.testing.assert_allclose(ts.vmap(f)(x), expected, rtol=1e-6)
        assert "sin" in str(ts.make_jaxpr(f)(x))
    assert ts.config.jax_disable_jit is False
    count = len(seen)
    np.testing.assert_allclose(f(x), expected, rtol=1e-6)
    assert len(seen) == count  # compiled again from the cache: no new staging, no Python body
    ts.config.update("jax_disable_jit", True)
    try:
        f(x)
        assert seen[-1] == "Array"
    finally:
        ts.config.update("jax_disable_jit", False)
    with pytest.raises(TypeError, match="must be a bool"):
        ts.config.update("jax_disable_jit", "yes")


# ------------------------------------------------------------------------------------------------- named scopes


def test_named_scope_names_reach_the_graph_the_stablehlo_and_xla_metadata() -> None:
    def f(x: Any) -> Any:
        with named_scope("encoder"):
            with named_scope("attention"):
                y = tnp.sin(x) @ x
            z = named_call(lambda v: v * 3.0, name="scale")(y)
        return named_call(_offset)(z)

    x = _f32(3)
    listing = str(ts.make_jaxpr(f)(x))
    sin_line = next(line for line in listing.splitlines() if " sin " in line)
    assert sin_line.endswith("[encoder/attention]") and "test_contexts.py:" in sin_line
    assert re.search(r"mul .*\[encoder/scale\]", listing)
    assert re.search(r"add .*\[_offset\]", listing)  # named_call's default name: the function's
    staged = ts.jit(f).stage(x)
    text = staged.stablehlo()
    assert re.search(r'"stablehlo.sine".*loc\("encoder/attention"\("[^"]*test_contexts.py":\d+:0\)\)', text)
    assert 'loc("encoder/scale"(' in text
    assert 'op_name="encoder/attention"' in staged.compile().as_text()  # XLA keeps it as op metadata
    np.testing.assert_allclose(ts.jit(f)(x), np.sin(x) @ x * 3 + 1, rtol=1e-5)
    grad_listing = str(ts.make_jaxpr(ts.grad(f))(x))
    assert "cos" in grad_listing and re.search(r"cos .*\[encoder/attention\]", grad_listing)
    with pytest.raises(TypeError, match="must be a string"):
        with named_scope(3):  # type: ignore[arg-type]
            pass


def _offset(v: Any) -> Any:
    return v + 1.0


# ------------------------------------------------------------------------------------------ matmul precision


def _precisions(text: str) -> list[str]:
    return re.findall(r"precision_config = \[#stablehlo<precision (\w+)>", text)


@pytest.mark.parametrize(("name", "expected"), [("bfloat16", "DEFAULT"), ("tensorfloat32", "HIGH"),
                                                ("float32", "HIGHEST"), ("high", "HIGH")])
def test_default_matmul_precision_reaches_the_dot_lowering(name: str, expected: str) -> None:
    a, b = _f32(3, 4), _f32(4, 2)
    prog = ts.jit(lambda a, b: a @ b)
    with default_matmul_precision(name):
        staged = prog.stage(a, b)
    assert _precisions(staged.stablehlo("cpu")) == [expected]
    assert _precisions(staged.stablehlo("gpu")) == [expected]
    outside = prog.stage(a, b)
    assert _precisions(outside.stablehlo("cpu")) == []  # CPU modules carry none by default
    assert _precisions(outside.stablehlo("gpu")) == ["HIGHEST"]  # full f32 on GPUs by default


def test_default_matmul_precision_keys_the_cache_and_reaches_derivatives() -> None:
    a, b = _f32(5, 4), _f32(4, 3)
    prog = ts.jit(lambda a, b: tnp.einsum("ij,jk->ik", a, b))
    np.testing.assert_allclose(prog(a, b), a @ b, rtol=1e-5)
    with default_matmul_precision("bfloat16"):
        assert ts.config.jax_default_matmul_precision == "bfloat16"
        np.testing.assert_allclose(prog(a, b), a @ b, rtol=1e-5)  # CPUs compute f32 products exactly anyway
    np.testing.assert_allclose(prog(a, b), a @ b, rtol=1e-5)
    assert prog.recompile_reasons == ["default_matmul_precision changed: None -> DEFAULT"]  # and back: cached
    assert ts.config.jax_default_matmul_precision is None

    def loss(a: Any, b: Any) -> Any:
        return tnp.sum(ts.vmap(lambda row: row @ b)(a) ** 2)

    ts.config.update("jax_default_matmul_precision", "float32")
    try:
        listing = str(ts.make_jaxpr(ts.grad(loss, argnums=(0, 1)))(a, b))
    finally:
        ts.config.update("jax_default_matmul_precision", None)
    dots = [line for line in listing.splitlines() if "dot_general" in line]
    assert len(dots) >= 3 and all("precision='HIGHEST'" in line for line in dots)
    with pytest.raises(ValueError, match="dot-algorithm presets"):
        with default_matmul_precision("BF16_BF16_F32"):
            pass
    assert ts.config.jax_default_matmul_precision is None


# ------------------------------------------------------------------------------------------------ transfer guards


def test_transfer_guard_refuses_implicit_transfers_only() -> None:
    prog = ts.jit(lambda a: a * 2.0)
    host = _f32(3)
    x = ts.device_put(host)
    prog(x)
    prog(host)
    with transfer_guard("disallow"):
        np.testing.assert_allclose(ts.device_get(prog(x)), host * 2)  # device arrays and explicit reads: fine
        with pytest.raises(RuntimeError, match=r"Disallowed host-to-device transfer: f32\[3\] argument"):
            prog(host)
        with pytest.raises(RuntimeError, match="host-to-device"):
            ts.jit(lambda a, s: a * s)(x, 2.0)  # a Python scalar argument travels too
        with pytest.raises(RuntimeError, match="host-to-device"):
            tnp.sin(host)
        with pytest.raises(RuntimeError, match="host-to-device"):
            ts.asarray(host)  # as jnp.asarray
        y = ts.device_put(host)  # explicit
        with pytest.raises(RuntimeError, match=r"Disallowed device-to-host transfer: f32\[3\]"):
            np.asarray(y)
        with pytest.raises(RuntimeError, match="device-to-host"):
            float(y[0])
        np.testing.assert_array_equal(y.numpy(), host)
    np.testing.assert_allclose(prog(host), host * 2)  # the block's end restored 'allow'
    with transfer_guard("disallow_explicit"):
        with pytest.raises(RuntimeError, match="explicit host-to-device"):
            ts.device_put(host)
        with pytest.raises(RuntimeError, match="explicit device-to-host"):
            ts.device_get(x)


def test_transfer_guard_directions_logging_and_config(caplog: pytest.LogCaptureFixture) -> None:
    prog = ts.jit(lambda a: a + 1.0)
    host = _f32(2)
    x = ts.device_put(host)
    with transfer_guard_device_to_host("disallow"):
        np.testing.assert_allclose(ts.device_get(prog(host)), host + 1)  # host-to-device still allowed
        with pytest.raises(RuntimeError, match="device-to-host"):
            x.tolist()
    with transfer_guard_host_to_device("disallow"):
        assert x.tolist() == host.tolist()
    with transfer_guard_device_to_device("disallow_explicit"):
        assert ts.device_put(x) is x  # already there: nothing moves
    with caplog.at_level(logging.WARNING, logger="tensorstage"):
        with transfer_guard("log"):
            prog(host)
            ts.device_put(host)
        assert [r.getMessage().splitlines()[0] for r in caplog.records] == [
            f"host-to-device transfer: f32[2] argument to {ts.default_device()}"]
        caplog.clear()
        with transfer_guard("log_explicit"):
            ts.device_put(host)
        assert caplog.records[0].getMessage().startswith("explicit host-to-device transfer: f32[2]")
    ts.config.update("jax_transfer_guard", "disallow")
    try:
        assert ts.config.jax_transfer_guard_device_to_host == "disallow"
        with pytest.raises(RuntimeError, match="host-to-device"):
            prog(host)
    finally:
        ts.config.update("jax_transfer_guard", None)
    prog(host)
    with pytest.raises(ValueError, match="transfer guard level"):
        with transfer_guard("never"):
            pass


# ---------------------------------------------------------------------------------------------- custom_gradient


@custom_gradient
def _scaled_sin(x: Any, y: Any) -> Any:
    value = tnp.sin(x) * y
    return value, lambda g: (g * tnp.cos(x) * y, g * tnp.sin(x))


@custom_gradient
def _clipped(x: Any) -> Any:
    return x, lambda g: tnp.clip(g, -1.0, 1.0)  # a bare cotangent for the only argument


def test_custom_gradient_values_and_gradients() -> None:
    x, y = RNG.uniform(-2, 2, 5), RNG.uniform(-2, 2, 5)
    np.testing.assert_allclose(_scaled_sin(x, y), np.sin(x) * y, rtol=1e-12)

    def loss(a: Any, b: Any) -> Any:
        return tnp.sum(_scaled_sin(a, b) ** 2)

    gx, gy = ts.grad(loss, argnums=(0, 1))(x, y)
    eps = 1e-6
    for k in range(x.size):  # central differences of the float64 function
        e = np.eye(x.size)[k] * eps
        ref = lambda a, b: np.sum((np.sin(a) * b) ** 2)  # noqa: E731
        np.testing.assert_allclose(gx[k], (ref(x + e, y) - ref(x - e, y)) / (2 * eps), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gy[k], (ref(x, y + e) - ref(x, y - e)) / (2 * eps), rtol=1e-6, atol=1e-8)
    per_example = ts.vmap(ts.grad(lambda a, b: _scaled_sin(a, b)))(x, y)
    np.testing.assert_allclose(per_example, [np.cos(a) * b for a, b in zip(x, y)], rtol=1e-12)
    clip_grad = ts.jit(ts.grad(lambda v: tnp.sum(_clipped(v) * 5.0)))(x)
    np.testing.assert_array_equal(clip_grad, np.ones(5))  # the rule, not the true derivative (5)
    jax = pytest.importorskip("jax")

    @jax.custom_gradient
    def jax_scaled_sin(a: Any, b: Any) -> Any:
        return jax.numpy.sin(a) * b, lambda g: (g * jax.numpy.cos(a) * b, g * jax.numpy.sin(a))

    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    want = jax.grad(lambda a, b: jax.numpy.sum(jax_scaled_sin(a, b) ** 2), argnums=(0, 1))(x32, y32)
    got = ts.grad(loss, argnums=(0, 1))(x32, y32)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5)


def test_custom_gradient_refuses_a_function_without_a_vjp() -> None:
    bad = custom_gradient(lambda x: x * 2.0)
    with pytest.raises(ts.TransformError, match=r"must return a pair \(value, vjp function\)"):
        bad(np.ones(2, np.float32))


# ------------------------------------------------------------------------------------------------- small ones


def test_process_queries_environment_and_live_arrays(capsys: pytest.CaptureFixture[str]) -> None:
    assert (process_index(), process_count(), process_indices()) == (0, 1, [0])
    assert (host_id("cpu"), host_count(), host_ids()) == (0, 1, [0])
    with pytest.raises(ValueError, match="unknown device platform"):
        process_index("tpu")
    info = print_environment_info(return_string=True)
    platform = ts.default_device().platform
    assert info is not None and "tensorstage:" in info and "jaxlib:" in info and f"{platform}-" in info
    assert print_environment_info() is None and "numpy:" in capsys.readouterr().out
    x = ts.asarray(_f32(3)) * 2.0
    assert any(a.buffer is x.buffer for a in live_arrays())
    listed = next(a for a in live_arrays(platform) if a.buffer is x.buffer)
    np.testing.assert_array_equal(listed, x)
    x.delete()
    assert not any(a.buffer is x.buffer for a in live_arrays())
    y = ts.asarray(_f32(2))
    tree = {"y": y, "n": 3}
    assert copy_to_host_async(tree) is tree
    y.copy_to_host_async()
    np.testing.assert_array_equal(np.asarray(y), y.numpy())


def test_checkify_init_error_and_check_error() -> None:
    assert checkify.init_error.get() is None
    checkify.check_error(checkify.init_error)

    def positive_log(x: Any) -> Any:
        checkify.check(tnp.all(x > 0), "must be positive, got {}", x[0])
        return tnp.log(x)

    checked = ts.jit(checkify.checkify(positive_log))

    def rechecked(x: Any) -> Any:
        err, out = checked(x)
        checkify.check_error(err)
        return out

    np.testing.assert_allclose(rechecked(np.ones(2, np.float32)), [0, 0])
    with pytest.raises(checkify.CheckifyError, match=r"must be positive, got -1.0 \(`check` failed\)"):
        rechecked(-np.ones(2, np.float32))
    err, _ = checkify.checkify(rechecked)(-np.ones(2, np.float32))
    assert re.fullmatch(r"must be positive, got -1\.0 \(`check` failed\) at .*test_contexts\.py:\d+", err.get() or "")
    err, _ = checkify.checkify(rechecked)(np.ones(2, np.float32))
    assert err.get() is None
    with pytest.raises(TypeError, match="takes an Error"):
        checkify.check_error("no")  # type: ignore[arg-type]
