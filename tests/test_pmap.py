"""pmap and collectives: forward numerics, derivatives and batching rules of every collective, and errors.

Collectives need a named mapped axis, so the registry-driven tests skip them and this file covers them:
- in this process (one CPU device) through ``vmap(f, axis_name="i")``, which runs the collectives' batching rules,
  and through a one-device ``pmap``;
- on four CPU devices in a subprocess (``tests/spmd_cases.py`` with ``TENSORSTAGE_CPU_DEVICES=4``): the SPMD
  executable, NumPy references, gradients across devices, a data-parallel SGD step, and results that stay on the
  devices (sharded Arrays fed back into pmap with no host copy, read back for every dtype, passed to
  single-device programs and eager ops).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim
from tensorstage import numpy as tnp
from tensorstage.staging.errors import DTypeError, ShapeError, TransformError

import spmd_cases
from conftest import PLATFORM
from spmd_cases import N, OPS, data, numerical_grad, per_member_grad


# ------------------------------------------------------------------- collectives as rules, under vmap(axis_name)


@pytest.mark.parametrize("name", sorted(OPS))
def test_vmap_axis_name_matches_numpy(name: str) -> None:
    fn, ref, _ = OPS[name]
    xs = data(11)
    got = ts.vmap(fn, axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(got), ref(xs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OPS))
def test_vmap_axis_name_grad_matches_finite_differences(name: str) -> None:
    fn, ref, _ = OPS[name]
    xs = data(12)
    cs = np.random.default_rng(13).standard_normal(ref(xs).shape)
    got = ts.vmap(per_member_grad(fn), axis_name="i")(xs, cs)
    expected = numerical_grad(lambda v: float(np.sum(ref(v) * cs)), xs)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(OPS))
def test_vmap_axis_name_jvp_matches_finite_differences(name: str) -> None:
    fn, ref, _ = OPS[name]
    xs, ts_ = data(14), data(15)
    got = ts.vmap(lambda x, t: ts.jvp(fn, (x,), (t,))[1], axis_name="i")(xs, ts_)
    eps = 1e-6
    expected = (ref(xs + eps * ts_) - ref(xs - eps * ts_)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-7)


def test_vmap_with_axis_name_psum_is_sum_over_batch(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    got = ts.vmap(lambda x: ts.psum(x, "batch"), axis_name="batch")(xs)
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to(xs.sum(0), (5, 3)), rtol=1e-6)
    normalized = ts.vmap(lambda x: x / ts.psum(tnp.sum(x), "b"), axis_name="b")(np.abs(xs))
    np.testing.assert_allclose(np.asarray(normalized).sum(), 1.0, rtol=1e-5)


def test_vmap_named_by_a_dim_class(rng: np.random.Generator) -> None:
    class Batch(Dim): ...

    xs = rng.standard_normal((4, 2))
    got = ts.vmap(lambda x: ts.pmean(x, Batch), Batch)(xs)
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to(xs.mean(0), (4, 2)), rtol=1e-12)


def test_nested_vmaps_reduce_over_the_named_axis(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((3, 4))

    def inner(x: Any) -> Any:
        return ts.psum(x, "rows") * 100 + ts.psum(x, "cols") + ts.axis_index("cols").astype(x.dtype)

    got = ts.vmap(ts.vmap(inner, axis_name="cols"), axis_name="rows")(xs)
    expected = xs.sum(0, keepdims=True) * 100 + xs.sum(1, keepdims=True) + np.arange(4)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)
    # an unnamed inner vmap does not capture a collective over the outer axis
    got = ts.vmap(ts.vmap(lambda x: ts.psum(x, "rows")), axis_name="rows")(xs)
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to(xs.sum(0), xs.shape), rtol=1e-12)


def test_collective_of_unbatched_value_under_vmap(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 2))
    w = rng.standard_normal(2)
    got = ts.vmap(lambda x, w: x + ts.psum(w, "i") + ts.all_gather(w, "i")[2], in_axes=(0, None), axis_name="i")(xs, w)
    np.testing.assert_allclose(np.asarray(got), xs + 4 * w + w, rtol=1e-12)


def test_collective_inside_control_flow_under_vmap(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 3))
    w = np.ones(3)
    # the cond's operands are all unbatched, but its branch sums over the vmapped axis
    f = lambda x, w: x + ts.cond(w[0] > 0, lambda w: ts.psum(w, "i"), lambda w: w, w)  # noqa: E731
    got = ts.vmap(f, in_axes=(0, None), axis_name="i")(xs, w)
    np.testing.assert_allclose(np.asarray(got), xs + 4, rtol=1e-12)

    def g(x: Any) -> Any:
        return ts.scan(lambda c, _: (ts.pmean(c, "i") + 1, c), x, tnp.zeros(2))

    carry, ys = ts.vmap(g, axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(carry), np.broadcast_to(xs.mean(0) + 2, xs.shape), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ys)[:, 0], xs, rtol=1e-12)


def test_control_flow_over_the_walked_axis_broadcasts_nothing_up_front(rng: np.random.Generator) -> None:
    """With no batched operand, a cond/while whose nested graph uses the vmapped axis is batched from the walked
    axis size: the unbatched predicate stays one cond (no per-example select of both branches)."""
    xs = rng.standard_normal((4, 3))
    w = np.ones(3)
    f = lambda x, w: x + ts.cond(w[0] > 0, lambda w: ts.psum(w, "i"), lambda w: w, w)  # noqa: E731
    mapped = ts.vmap(f, in_axes=(0, None), axis_name="i")
    staged = ts.Program(mapped, check_annotations=False).stage(xs, w)
    staged.typecheck()
    names = [eqn.primitive.name for eqn in staged.graph.eqns]
    assert "cond" in names and "select" not in names, names

    # no operands at all: the branches read their member's position
    g = lambda x, w: x + ts.cond(w[0] > 0, lambda: ts.axis_index("i") * 2, lambda: ts.axis_index("i"))  # noqa: E731
    got = ts.vmap(g, in_axes=(0, None), axis_name="i")(xs[:, 0].astype(np.int32), w)
    np.testing.assert_array_equal(np.asarray(got), xs[:, 0].astype(np.int32) + 2 * np.arange(4))

    # a while loop whose carry starts unbatched and becomes batched through a collective in its body
    def h(x: Any, w: Any) -> Any:
        body = lambda c: c + (ts.axis_index("i") + 1).astype(np.float64)  # noqa: E731
        return x + ts.while_loop(lambda c: c[0] < 10, body, w)

    got = ts.vmap(h, in_axes=(0, None), axis_name="i")(xs, w)
    want = np.stack([w + np.ceil((10 - 1) / (k + 1)) * (k + 1) for k in range(4)])
    np.testing.assert_allclose(np.asarray(got), xs + want, rtol=1e-12)

    def s(x: Any, w: Any) -> Any:
        step = lambda c, _: (c + ts.axis_index("i").astype(np.float64), c)  # noqa: E731
        return x + ts.scan(step, w, tnp.zeros(2))[0]

    got = ts.vmap(s, in_axes=(0, None), axis_name="i")(xs, w)
    np.testing.assert_allclose(np.asarray(got), xs + w + 2 * np.arange(4)[:, None], rtol=1e-12)


def test_every_primitive_that_uses_an_axis_has_an_axis_batch_rule() -> None:
    from tensorstage.staging import REGISTRY

    missing = [name for name, prim in REGISTRY.items() if prim.uses_axis is not None and prim.axis_batch is None]
    assert not missing, missing
    users = {name for name, prim in REGISTRY.items() if prim.uses_axis is not None}
    assert {"psum", "all_gather", "ppermute", "axis_index", "cond", "while", "scan", "custom_jvp_call"} <= users


def test_vmap_of_grad_with_pmean_loss_gives_local_gradients(rng: np.random.Generator) -> None:
    """Per-member semantics: each member's gradient of pmean(loss) is its local loss gradient (psum transposes
    to psum), so a data-parallel step averages the gradients with pmean."""
    xs = rng.standard_normal((4, 3))
    w = np.float64(0.7)

    def local(w: Any, x: Any) -> Any:
        return tnp.sum(tnp.sin(x * w))

    grads = ts.vmap(lambda x, w: ts.grad(lambda w: ts.pmean(local(w, x), "i"))(w), in_axes=(0, None), axis_name="i")(
        xs, w
    )
    np.testing.assert_allclose(np.asarray(grads), np.sum(np.cos(xs * w) * xs, axis=1), rtol=1e-12)


# --------------------------------------------------------------------------------------- one-device pmap


def test_pmap_on_one_device(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((1, 3)).astype(np.float32)
    out = ts.pmap(lambda x: (ts.psum(x, "i"), ts.axis_index("i")), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(out[0]), xs)
    np.testing.assert_array_equal(np.asarray(out[1]), [0])


def test_pmap_module_is_one_replicated_program() -> None:
    text = ts.pmap(lambda x: ts.psum(x, "i"), axis_name="i").stablehlo(np.zeros((1, 3), np.float32))
    assert "mhlo.num_replicas = 1" in text and "stablehlo.all_reduce" in text and "tensor<3xf32>" in text


def test_one_device_pmap_results_stay_on_device_and_flow_back_in(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorstage.lowering import spmd as spmd_runtime

    step = ts.pmap(lambda x: x * np.float32(0.5) + 1)
    x0 = np.arange(6, dtype=np.float32).reshape(1, 6)
    x = step(x0)
    assert isinstance(x, ts.Array) and x.shape == (1, 6) and x.devices() == (ts.default_device(),)
    passed: list[Any] = []
    run = spmd_runtime.run

    def recording_run(executable: Any, buffers: Any, handlers: Any) -> Any:
        passed.append(list(buffers))
        return run(executable, buffers, handlers)

    def no_put(*args: Any) -> Any:
        raise AssertionError("a pmap result was copied back from the host")

    monkeypatch.setattr(spmd_runtime, "run", recording_run)
    monkeypatch.setattr(spmd_runtime, "put_sharded", no_put)
    expected = x0 * np.float32(0.5) + 1
    for _ in range(4):
        previous = x
        x = step(x)
        assert passed[-1][0] is previous.buffer
        expected = expected * np.float32(0.5) + 1
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6)
    assert x.numpy().shape == (1, 6) and x.device == ts.default_device()
    # into a single-device program and an eager op
    np.testing.assert_allclose(np.asarray(ts.program(lambda a: a * 2)(x)), expected * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tnp.exp(x)), np.exp(expected), rtol=1e-6)


# ------------------------------------------------------------------------------------------------ errors


def test_collective_outside_pmap_or_vmap_names_the_axis() -> None:
    with pytest.raises(TransformError, match=r"axis name 'i' is not bound.*pmap\(f, axis_name='i'\)"):
        ts.program(lambda x: ts.psum(x, "i"))(np.ones(3))
    with pytest.raises(TransformError, match=r"'i' is not bound.*'j' \(vmap, size 2\)"):
        ts.vmap(lambda x: ts.pmax(x, "i"), axis_name="j")(np.ones((2, 3)))
    with pytest.raises(TransformError, match="'k' is not bound"):
        ts.axis_index("k")
    with pytest.raises(TransformError, match="'i' is not bound"):
        ts.psum(np.ones(3), "i")


def test_bad_permutation_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match="outside 0..3"):
        ts.vmap(lambda x: ts.ppermute(x, "i", [(0, 4)]), axis_name="i")(np.ones((4, 2)))
    with pytest.raises(ShapeError, match="repeats"):
        ts.vmap(lambda x: ts.ppermute(x, "i", [(0, 1), (2, 1)]), axis_name="i")(np.ones((4, 2)))


def test_pmean_of_integers_is_refused() -> None:
    with pytest.raises(DTypeError, match="floating-point"):
        ts.vmap(lambda x: ts.pmean(x, "i"), axis_name="i")(np.ones((2, 3), np.int32))


def test_too_few_devices_says_how_to_get_more() -> None:
    available = len(ts.devices(PLATFORM))  # pmap maps over the default platform's devices
    assert PLATFORM != "cpu" or available == 1  # the pytest process's CPU client
    size = available + 3
    with pytest.raises(TransformError) as err:
        ts.pmap(lambda batch: batch * 2, axis_name="i")(np.ones((size, 3)))
    message = str(err.value)
    assert f"argument batch has size {size} along its mapped axis 0" in message
    if PLATFORM == "cpu":  # more CPU devices are a setting away
        assert "only 1 CPU device is available" in message and f"TENSORSTAGE_CPU_DEVICES={size}" in message
    else:
        assert f"only {available} {PLATFORM} device" in message


def test_mapped_size_must_equal_given_device_count() -> None:
    with pytest.raises(TransformError, match=r"argument x has size 3 along its mapped axis 1, but pmap was given 1 dev"):
        ts.pmap(lambda x: x, in_axes=1, devices=ts.devices())(np.ones((2, 3)))


def test_mapped_sizes_must_agree() -> None:
    with pytest.raises(TransformError, match="argument x has size 2 along axis 0 but argument y has size 3"):
        ts.pmap(lambda x, y: x)(np.ones((2, 1)), np.ones((3, 1)))


def test_pmap_is_not_staged_inside_programs() -> None:
    with pytest.raises(TransformError, match="pmap runs on concrete arrays"):
        ts.program(lambda x: ts.pmap(lambda y: y)(x))(np.ones((1, 2)))


# ------------------------------------------------------------------------------- four devices, subprocess


test_on_four_cpu_devices = spmd_cases.device_checks(spmd_cases)
