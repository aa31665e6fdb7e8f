"""shard_map checks that need four CPU devices: run as a script by tests/test_shard_map.py in a subprocess
(``TENSORSTAGE_CPU_DEVICES=4``); prints one ``RESULTS`` JSON line (see ``spmd_cases.run_checks``).

Few, larger programs: each check stages one shard_map with many outputs, since compiles are the cost.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.staging.errors import ShapeError, TransformError

from spmd_cases import OPS, run_checks

P = ts.P
N = 4
RNG = np.random.default_rng(2024)


def _mesh22() -> ts.sharding.Mesh:
    return ts.make_mesh((2, 2), ("i", "j"))


def _per_device(x: np.ndarray) -> np.ndarray:
    """A (4, 6) array's 2x2 blocks by mesh position: (2, 2, 2, 3), [a, b] = device (a, b)'s block."""
    return x.reshape(2, 2, 2, 3).transpose(0, 2, 1, 3)


def _global(blocks: np.ndarray) -> np.ndarray:
    """The inverse of ``_per_device`` (for P("i", "j") results)."""
    a, b, r, c = blocks.shape
    return blocks.transpose(0, 2, 1, 3).reshape(a * r, b * c)


def check_one_d_mesh_equals_pmap_and_numpy() -> None:
    xs = RNG.standard_normal((N, 3))
    fns = [fn for fn, _, _ in OPS.values()]
    mapped = ts.shard_map(lambda b: tuple(fn(b[0])[None] for fn in fns), mesh=ts.make_mesh((N,), ("i",)),
                          in_specs=P("i"), out_specs=P("i"))
    got = mapped(xs)
    pmapped = ts.pmap(lambda x: tuple(fn(x) for fn in fns), axis_name="i")(xs)
    for name, out, by_pmap, (_, ref, _) in zip(OPS, got, pmapped, OPS.values()):
        np.testing.assert_array_equal(np.asarray(out), np.asarray(by_pmap), err_msg=name)
        np.testing.assert_allclose(np.asarray(out), ref(xs), rtol=1e-12, atol=1e-12, err_msg=name)


def check_collectives_on_a_2x2_mesh() -> None:
    x = RNG.standard_normal((4, 6))
    blocks = _per_device(x)  # [a, b]: the (2, 3) block of device (a, b)

    def f(b: Any) -> Any:
        return dict(
            psum_i=ts.psum(b, "i"), psum_j=ts.psum(b, "j"), psum_ij=ts.psum(b, ("i", "j")),
            pmean_i=ts.pmean(b, "i"), pmax_j=ts.pmax(b, "j"), pmin_ij=ts.pmin(b, ("j", "i")),
            gather_i=ts.all_gather(b, "i"), gather_j_tiled=ts.all_gather(b, "j", axis=1, tiled=True),
            gather_ij=ts.all_gather(b, ("i", "j")),
            index=tnp.stack([ts.axis_index("i"), ts.axis_index("j"), ts.axis_index(("i", "j")),
                             ts.axis_index(("j", "i"))])[None, None],
            shift_j=ts.ppermute(b, "j", [(0, 1), (1, 0)]), shift_i=ts.ppermute(b, "i", [(0, 1)]),
            scatter_j=ts.psum_scatter(b[:, :2], "j", scatter_dimension=1, tiled=True),
            swap_i=ts.all_to_all(b, "i", 0, 0, tiled=True),
        )

    specs = dict(
        psum_i=P(None, "j"), psum_j=P("i"), psum_ij=P(), pmean_i=P(None, "j"), pmax_j=P("i"), pmin_ij=P(),
        gather_i=P(None, None, "j"), gather_j_tiled=P("i"), gather_ij=P(), index=P("i", "j"),
        shift_j=P("i", "j"), shift_i=P("i", "j"), scatter_j=P("i", "j"), swap_i=P("i", "j"),
    )
    mapped = ts.shard_map(f, mesh=_mesh22(), in_specs=P("i", "j"), out_specs=specs)
    got = {k: np.asarray(v) for k, v in mapped(x).items()}
    every = blocks.reshape(4, 2, 3)
    np.testing.assert_allclose(got["psum_i"], blocks.sum(0).transpose(1, 0, 2).reshape(2, 6), rtol=1e-12)
    np.testing.assert_allclose(got["psum_j"], blocks.sum(1).reshape(4, 3), rtol=1e-12)
    np.testing.assert_allclose(got["psum_ij"], every.sum(0), rtol=1e-12)
    np.testing.assert_allclose(got["pmean_i"], blocks.mean(0).transpose(1, 0, 2).reshape(2, 6), rtol=1e-12)
    np.testing.assert_array_equal(got["pmax_j"], blocks.max(1).reshape(4, 3))
    np.testing.assert_array_equal(got["pmin_ij"], every.min(0))
    # gather over i: every device (a, b) holds [block(0, b), block(1, b)]; out P(None, None, "j") joins the b's
    np.testing.assert_array_equal(got["gather_i"], np.concatenate([blocks[:, 0], blocks[:, 1]], axis=2))
    np.testing.assert_array_equal(got["gather_j_tiled"], x)
    np.testing.assert_array_equal(got["gather_ij"], every)
    index = np.array([[[a, b, 2 * a + b, 2 * b + a] for b in range(2)] for a in range(2)])
    np.testing.assert_array_equal(got["index"], index)
    np.testing.assert_array_equal(got["shift_j"], _global(blocks[:, ::-1]))
    shifted = np.zeros_like(blocks)
    shifted[1] = blocks[0]  # device (1, b) receives (0, b)'s block; row 0 receives nothing (zeros)
    np.testing.assert_array_equal(got["shift_i"], _global(shifted))
    summed = blocks[..., :2].sum(1)  # (a, 2, 2): the j-sum of the first two columns; device (a, b) keeps column b
    np.testing.assert_allclose(got["scatter_j"], summed.reshape(4, 2), rtol=1e-12)
    swapped = blocks.reshape(2, 2, 2, 1, 3).transpose(2, 1, 0, 3, 4).reshape(2, 2, 2, 3)  # block rows change device
    np.testing.assert_array_equal(got["swap_i"], _global(swapped))


def check_stablehlo_groups_follow_the_mesh() -> None:
    text = ts.shard_map(lambda b: (ts.psum(b, "i"), ts.psum(b, "j")), mesh=_mesh22(), in_specs=P("i", "j"),
                        out_specs=P("i", "j"), check_vma=False).stablehlo(np.ones((2, 2), np.float32))
    assert "replica_groups = dense<[[0, 2], [1, 3]]>" in text  # along i: devices sharing j
    assert "replica_groups = dense<[[0, 1], [2, 3]]>" in text  # along j: devices sharing i
    assert "mhlo.num_replicas = 4" in text


def check_specs_replicated_inputs_and_pytrees() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((4,)).astype(np.float32)

    def f(params: Any, x: Any) -> Any:
        y = x * params["w"] + params["s"]  # x: (3, 2) columns by j; w: (2,) by j; s: whole
        return {"y": y, "col_sums": ts.psum(tnp.sum(y, axis=0), "i")}

    mapped = ts.shard_map(f, mesh=_mesh22(), in_specs=({"w": P("j"), "s": P()}, P(None, "j")),
                          out_specs={"y": P(None, "j"), "col_sums": P("j")})
    out = mapped({"w": w, "s": np.float32(0.5)}, x)
    np.testing.assert_allclose(np.asarray(out["y"]), x * w + 0.5, rtol=1e-6)
    # every device along i sees the whole x (not split over i), so the psum over i doubles the column sums
    np.testing.assert_allclose(np.asarray(out["col_sums"]), 2 * (x * w + 0.5).sum(0), rtol=1e-5)
    assert out["y"].device == ts.default_device()  # P(None, "j"): assembled on the default device
    # Python scalars and mixed Arrays as arguments
    scaled = ts.shard_map(lambda a, k: a * k, mesh=_mesh22(), in_specs=(P(("i", "j")), P()), out_specs=P(("i", "j")))
    np.testing.assert_allclose(np.asarray(scaled(x.T.copy(), 3.0)), 3 * x.T, rtol=1e-6)


def _loss(w: Any, b: Any, x: Any, y: Any) -> Any:
    return tnp.mean((tnp.tanh(x @ w + b) - y) ** 2)


def _numpy_step(w: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray, shards: int) -> tuple[Any, Any]:
    """SGD with the mean over ``shards`` equal shards of each shard's gradient, in float64."""
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for xs, ys in zip(np.split(x, shards), np.split(y, shards)):
        pre = xs @ w + b
        d = 2 * (np.tanh(pre) - ys) / ys.size * (1 - np.tanh(pre) ** 2)
        gw += xs.T @ d / shards
        gb += d.sum(0) / shards
    return w - 0.1 * gw, b - 0.1 * gb


def check_data_parallel_train_step_matches_float64_numpy() -> None:
    from tensorstage.lowering import spmd as spmd_runtime

    w, b = RNG.standard_normal((5, 2)), RNG.standard_normal(2)
    x, y = RNG.standard_normal((16, 5)), RNG.standard_normal((16, 2))
    for batch in ("i", ("i", "j")):

        @ts.shard_map(mesh=_mesh22(), in_specs=(P(), P(), P(batch), P(batch)), out_specs=P())
        def step(w: Any, b: Any, x: Any, y: Any) -> Any:
            gw, gb = ts.grad(_loss, argnums=(0, 1))(w, b, x, y)  # this device's gradient on its shard
            return w - 0.1 * ts.pmean(gw, batch), b - 0.1 * ts.pmean(gb, batch)

        shards = 2 if batch == "i" else 4
        ref_w, ref_b = w, b
        state = step(w, b, x, y)
        puts = []
        original = spmd_runtime.put_replicated
        spmd_runtime.put_replicated = lambda *a: puts.append(1) or original(*a)  # type: ignore[assignment]
        try:
            for _ in range(3):
                ref_w, ref_b = _numpy_step(ref_w, ref_b, x, y, shards)
                buffers = [s.buffer for s in state]
                state = step(*state, x, y)
                assert state[0].is_sharded and state[0].is_fully_replicated and state[0].buffer not in buffers
        finally:
            spmd_runtime.put_replicated = original  # type: ignore[assignment]
        assert not puts, "replicated results fed back were copied through the host"
        ref_w, ref_b = _numpy_step(ref_w, ref_b, x, y, shards)
        np.testing.assert_allclose(np.asarray(state[0]), ref_w, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(np.asarray(state[1]), ref_b, rtol=1e-12, atol=1e-13)


def check_sharded_results_stay_on_devices_and_feed_back() -> None:
    from tensorstage.lowering import spmd as spmd_runtime

    x = RNG.standard_normal((8, 3)).astype(np.float32)
    double = ts.shard_map(lambda b: b * 2, mesh=_mesh22(), in_specs=P(("i", "j")), out_specs=P(("i", "j")))
    y = double(x)
    assert y.is_sharded and not y.is_fully_replicated and y.devices() == tuple(ts.devices()[:4]) and y.shape == (8, 3)
    passed: list[Any] = []
    original = spmd_runtime.run
    spmd_runtime.run = lambda e, bufs, h: passed.append(bufs) or original(e, bufs, h)  # type: ignore[assignment]
    try:
        z = double(y)
    finally:
        spmd_runtime.run = original  # type: ignore[assignment]
    assert passed[0][0] is y.buffer
    np.testing.assert_allclose(np.asarray(z), 4 * x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tnp.sum(z, axis=0)), 4 * x.sum(0), rtol=1e-5)  # an eager op on it
    np.testing.assert_allclose(np.asarray(ts.device_put(z, ts.devices()[1])), 4 * x, rtol=1e-6)
    # a pmap result is split the same way on a 1-D mesh of the same devices, and the reverse
    on_pmap = ts.pmap(lambda b: b + 1)(x[:4])
    one_d = ts.shard_map(lambda b: b * 3, mesh=ts.make_mesh((4,), ("d",)), in_specs=P("d"), out_specs=P("d"))
    np.testing.assert_allclose(np.asarray(one_d(on_pmap)), 3 * (x[:4] + 1), rtol=1e-6)
    # an Array laid out differently (split over i only) is copied, not misread
    np.testing.assert_allclose(np.asarray(double(ts.shard_map(lambda b: b, mesh=ts.make_mesh((2,), ("i",)),
                                                              in_specs=P("i"), out_specs=P("i"))(x))), 2 * x)


def check_grad_vmap_and_control_flow_inside() -> None:
    x = RNG.standard_normal((4, 4))

    def f(b: Any) -> Any:
        per_row = ts.vmap(lambda r: ts.grad(lambda v: tnp.sum(tnp.sin(v) * ts.psum(v, "j")))(r))(b)
        total = ts.scan(lambda c, r: (c + ts.pmean(r, "i"), None), tnp.zeros(b.shape[1:], b.dtype), b)[0]
        picked = ts.cond(ts.axis_index("i") == 0, lambda v: v * 2, lambda v: v - 1, b)
        return per_row, total, picked

    out = ts.shard_map(f, mesh=_mesh22(), in_specs=P("i", "j"), out_specs=(P("i", "j"), P(("i", "j")), P("i", "j")))(x)
    b = x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3)  # [a, c]: device (a, c)'s (2, 2) block
    # d/dv sum(sin(v) * psum_j(v)) on device (a, c) = cos(v) psum_j(v) + sum over j-partners of their sin(v')
    s = b.sum(1, keepdims=True)
    sin_sum = np.sin(b).sum(1, keepdims=True)
    grads = np.cos(b) * s + sin_sum
    np.testing.assert_allclose(np.asarray(out[0]), grads.transpose(0, 2, 1, 3).reshape(4, 4), rtol=1e-12)
    means = b.mean(0, keepdims=True).sum(2, keepdims=True)  # scan of the rows of pmean_i(block)
    # the scan's result varies over j only; an out_spec may name more axes than that (copies are concatenated)
    np.testing.assert_allclose(np.asarray(out[1]), np.broadcast_to(means, (2, 2, 1, 2)).reshape(8), rtol=1e-12)
    picked = np.concatenate([b[:1] * 2, b[1:] - 1])
    np.testing.assert_allclose(np.asarray(out[2]), picked.transpose(0, 2, 1, 3).reshape(4, 4), rtol=1e-12)


def check_replication_check() -> None:
    x = np.ones((4, 4), np.float32)
    mesh = _mesh22()
    with pytest.raises(TransformError) as err:
        ts.shard_map(lambda b: {"out": b * 2}, mesh=mesh, in_specs=P("i", "j"), out_specs={"out": P("i")})(x)
    text = str(err.value)
    assert "output['out']" in text and "P('i')" in text and "'j'" in text and "('i', 'j')" in text, text
    assert "shard_map_cases.py" in text and "check_vma=False" in text, text
    # reductions, all_gather and axis_index are tracked; an index makes a value vary
    ok = ts.shard_map(lambda b: (ts.pmean(b, "j"), ts.all_gather(b, "j", tiled=True, axis=1),
                                 tnp.sum(b, keepdims=True)),
                      mesh=mesh, in_specs=P("i", "j"), out_specs=(P("i"), P("i"), P("i", "j")))
    ok(x)
    with pytest.raises(TransformError, match="varies over mesh axes \\('j',\\)"):
        ts.shard_map(lambda b: b + ts.axis_index("j"), mesh=mesh, in_specs=P(), out_specs=P())(np.ones(2, np.int32))
    with pytest.raises(TransformError, match="'i'"):  # ppermute makes a replicated value vary
        ts.shard_map(lambda b: ts.ppermute(b, "i", [(0, 1)]), mesh=mesh, in_specs=P(), out_specs=P())(x)
    # through loops and branches: a psum in a scan body makes the carry replicated; a while predicate or a cond
    # index that varies makes the results vary
    rows = np.arange(24, dtype=np.float32).reshape(3, 8)
    summed = ts.shard_map(lambda b: ts.scan(lambda c, r: (c + ts.psum(r, "j"), None), tnp.zeros(4), b)[0],
                          mesh=mesh, in_specs=P(None, "j"), out_specs=P())(rows)
    np.testing.assert_allclose(np.asarray(summed), rows.reshape(3, 2, 4).sum((0, 1)))
    with pytest.raises(TransformError, match="made by `while`"):
        ts.shard_map(lambda b: ts.while_loop(lambda c: c[0] < tnp.sum(b), lambda c: c + 1.0, tnp.zeros(2)),
                     mesh=mesh, in_specs=P("i"), out_specs=P())(x)
    with pytest.raises(TransformError, match="made by `cond`"):
        ts.shard_map(lambda b: ts.cond(ts.axis_index("j") == 0, lambda: tnp.ones(2), lambda: tnp.zeros(2)),
                     mesh=mesh, in_specs=P(), out_specs=P())(x)
    # check_vma=False (and jax's older check_rep=False) take the first device's block along an omitted axis
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    for flag in ({"check_vma": False}, {"check_rep": False}):
        got = ts.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("i", "j"), out_specs=P("i"), **flag)(x)
        np.testing.assert_array_equal(np.asarray(got), 2 * x[:, :2])
        got = ts.shard_map(lambda b: b, mesh=mesh, in_specs=P(("i", "j")), out_specs=P(), **flag)(x)
        np.testing.assert_array_equal(np.asarray(got), x[:1])


def check_errors_on_several_devices() -> None:
    mesh = _mesh22()
    with pytest.raises(ShapeError, match=r"argument b has shape \(3, 4\): dimension 0 \(size 3\) is split over mesh "
                                         r"axes \('i',\) of total size 2"):
        ts.shard_map(lambda b: b, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"dimension 1 \(size 6\) is split over mesh axes \('i', 'j'\) of total "
                                         r"size 4"):
        ts.shard_map(lambda b: b, mesh=mesh, in_specs=P(None, ("i", "j")), out_specs=P())(np.ones((2, 6)))
    with pytest.raises(ValueError, match="needs 8 devices, but only 4 cpu"):
        ts.make_mesh((2, 4), ("i", "j"))


def check_against_jax() -> None:
    """jax.shard_map as the oracle (check_vma=False: per-device semantics, as ours) on a 2x2 mesh."""
    assert "jax" not in sys.modules, "shard_map imported jax"
    try:
        import jax
    except ImportError:
        return
    jax.config.update("jax_num_cpu_devices", 4)
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.sharding import Mesh as JMesh, PartitionSpec as JP

    jmesh = JMesh(np.array(jax.devices("cpu")[:4]).reshape(2, 2), ("i", "j"))
    x = RNG.standard_normal((4, 8))
    w = RNG.standard_normal((8,))

    def body(lib: Any, lax: Any, grad: Any) -> Any:
        def f(b: Any, w: Any) -> Any:
            g = grad(lambda v: lib.sum(lib.tanh(b * v) ** 2))(w)
            return (lax.psum(b * w, "i"), lax.pmean(g, ("i", "j")), lax.all_gather(b, "j", axis=1, tiled=True),
                    lax.psum_scatter(b, "j", scatter_dimension=1, tiled=True),
                    b * 0 + lax.axis_index("j").astype(b.dtype))

        return f

    ins, outs = ("i", "j"), (P(None, "j"), P(), P("i"), P("i", "j"), P("i", "j"))
    jouts = tuple(JP(*o) for o in outs)
    ours = ts.shard_map(body(tnp, ts.lax, ts.grad), mesh=_mesh22(), in_specs=(P(*ins), P("j")), out_specs=outs,
                        check_vma=False)(x, w)
    theirs = jax.shard_map(body(jnp, jax.lax, jax.grad), mesh=jmesh, in_specs=(JP(*ins), JP("j")), out_specs=jouts,
                           check_vma=False)(x, w)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12, err_msg=str(k))


if __name__ == "__main__":
    run_checks(globals())
