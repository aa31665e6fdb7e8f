"""NamedSharding checks that need four CPU devices: run as a script by tests/test_named_sharding.py in a subprocess
(``TENSORSTAGE_CPU_DEVICES=4``); prints one ``RESULTS`` JSON line (see ``spmd_cases.run_checks``).

Few, larger programs: each check compiles one or two partitioned programs with several outputs.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.sharding import NamedSharding, SingleDeviceSharding

from spmd_cases import run_checks

P = ts.P
RNG = np.random.default_rng(7)


def _mesh() -> ts.sharding.Mesh:
    return ts.make_mesh((2, 2), ("dp", "mp"))


def _ns(*spec: Any) -> NamedSharding:
    return NamedSharding(_mesh(), P(*spec))


# Every way to lay a rank-2 array over a 2x2 mesh (and a 4-device 1-D mesh in both axis orders).
SPECS = [(), ("dp",), (None, "mp"), ("dp", "mp"), ("mp", "dp"), (("dp", "mp"),), (None, ("mp", "dp")), ("mp",)]


def check_every_layout_round_trips() -> None:
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    for spec in SPECS:
        s = _ns(*spec)
        a = ts.device_put(x, s)
        assert a.sharding == s and a.is_sharded and a.devices() == _mesh().device_list, spec
        np.testing.assert_array_equal(np.asarray(a), x, err_msg=str(spec))
        shards = a.addressable_shards
        assert [sh.device for sh in shards] == list(_mesh().device_list)
        for sh in shards:
            assert sh.data.device == sh.device and sh.data.shape == s.shard_shape(x.shape)
            np.testing.assert_array_equal(np.asarray(sh.data), x[sh.index], err_msg=str(spec))
        copies = 4 // int(np.prod([t for t in s.tiles(2)]))
        assert sorted(sh.replica_id for sh in shards) == sorted(list(range(copies)) * (4 // copies)), spec
        assert s.is_fully_replicated == (copies == 4)
        b = ts.make_array_from_callback(x.shape, s, lambda index: x[index])
        c = ts.make_array_from_single_device_arrays(x.shape, s, [sh.data for sh in reversed(shards)])
        for made in (b, c):
            assert made.sharding == s
            np.testing.assert_array_equal(np.asarray(made), x, err_msg=str(spec))
    flat = ts.make_mesh((4,), ("d",))
    v = np.arange(8, dtype=np.int32)
    a = ts.device_put(v, NamedSharding(flat, P("d")))
    assert a.sharding.devices_indices_map((8,))[flat.device_list[3]] == (slice(6, 8),)
    np.testing.assert_array_equal(np.asarray(a), v)
    three = ts.make_mesh((1, 2, 2), ("a", "b", "c"))
    y = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    a3 = ts.device_put(y, NamedSharding(three, P("c", ("a", "b"))))
    np.testing.assert_array_equal(np.asarray(a3), y)
    half = ts.device_put(RNG.standard_normal((4, 4)).astype(ts.bf16), _ns("dp"))  # bf16 reads through DLPack
    assert np.asarray(half).dtype == ts.bf16


def check_eager_ops_and_gathering() -> None:
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    a = ts.device_put(x, _ns("dp", "mp"))
    y = tnp.exp(a) + 1.0  # eager ops on sharded arrays run partitioned, results stay sharded
    assert y.is_sharded and isinstance(y.sharding, NamedSharding)
    np.testing.assert_allclose(np.asarray(y), np.exp(x) + 1, rtol=1e-6)
    one = ts.device_put(a, ts.devices()[2])  # to one device: gathered
    assert not one.is_sharded and one.sharding == SingleDeviceSharding(ts.devices()[2])
    np.testing.assert_array_equal(np.asarray(one), x)
    pinned = ts.program(lambda v: v * 2, device=ts.devices()[1])(a)  # a program pinned to a device gathers
    assert pinned.device == ts.devices()[1]
    np.testing.assert_array_equal(np.asarray(pinned), x * 2)
    resharded = ts.device_put(a, _ns(None, "dp"))
    np.testing.assert_array_equal(np.asarray(resharded), x)
    assert ts.device_put(a, _ns("dp", "mp")) is a  # already laid out so: no copy
    assert copy.copy(a).sharding == a.sharding and a[1:].shape == (3, 8) and float(a[1, 2]) == x[1, 2]
    by_pmap = ts.pmap(lambda v: v + 1)(np.arange(8, dtype=np.float32).reshape(4, 2))
    assert isinstance(by_pmap.sharding, NamedSharding) and by_pmap.sharding.shard_shape((4, 2)) == (1, 2)
    np.testing.assert_array_equal(np.asarray(by_pmap.addressable_shards[3].data), [[7.0, 8.0]])


def check_layout_errors() -> None:
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="dimension 0 of shape \\(3, 4\\) \\(size 3\\) does not divide into 2"):
        ts.device_put(x, _ns("dp"))
    with pytest.raises(ValueError, match="splits 3 dimensions, but the array has rank 2"):
        ts.device_put(x, _ns(None, None, "dp"))
    with pytest.raises(ValueError, match="callback gave shape \\(3, 2\\)"):
        ts.make_array_from_callback((4, 4), _ns(None, "mp"), lambda index: np.zeros((3, 2), np.float32))
    parts = ts.device_put(np.zeros((4, 4), np.float32), _ns("dp", "mp")).addressable_shards
    with pytest.raises(ValueError, match="no array for device"):
        ts.make_array_from_single_device_arrays((4, 4), _ns("dp", "mp"), [p.data for p in parts[:3]])
    with pytest.raises(ValueError, match="is f32\\[2, 2\\], expected f32\\[4, 2\\]"):
        ts.make_array_from_single_device_arrays((8, 4), _ns("dp", "mp"), [p.data for p in parts])
    with pytest.raises(ValueError, match="second on that device"):
        ts.make_array_from_single_device_arrays((4, 4), _ns("dp", "mp"), [parts[0].data] * 4)


def check_partitioned_programs_match_numpy() -> None:
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    b = RNG.standard_normal((16, 12)).astype(np.float32)
    A, B = ts.device_put(a, _ns("dp", None)), ts.device_put(b, _ns(None, "mp"))

    @ts.program
    def many(x: Any, y: Any) -> Any:
        return x @ y, tnp.sum(x, axis=0), tnp.max(x), tnp.tanh(x) * 2 - x, tnp.mean(x @ y, axis=1)

    outs = many(A, B)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = [a64 @ b64, a64.sum(0), a64.max(), np.tanh(a64) * 2 - a64, (a64 @ b64).mean(1)]
    for k, (got, ref) in enumerate(zip(outs, want)):
        assert isinstance(got.sharding, NamedSharding) and got.sharding.mesh == _mesh(), k
        np.testing.assert_allclose(np.asarray(got), ref, rtol=2e-5, atol=2e-5, err_msg=str(k))
    assert outs[0].sharding.spec == P("dp", "mp") and outs[3].sharding.spec == P("dp")  # XLA propagated these
    assert outs[0].is_sharded and not outs[2].shape
    text = next(iter(many._partitioned.values())).executable.hlo_modules()[0].to_string()
    assert "all-reduce" in text  # the sums over the split dimension exchange partial results
    again = many(A, B)  # the cached executable, no gathering: still split
    np.testing.assert_array_equal(np.asarray(again[0]), np.asarray(outs[0]))
    assert len(many._partitioned) == 1
    many(ts.device_put(a, _ns("mp", None)), B)  # other shardings: another executable
    assert len(many._partitioned) == 2
    single = many(a, b)  # host data, no shardings: the ordinary one-device program
    assert not single[0].is_sharded
    np.testing.assert_allclose(np.asarray(single[0]), np.asarray(outs[0]), rtol=1e-5, atol=1e-5)


def check_in_and_out_shardings() -> None:
    a = RNG.standard_normal((8, 4)).astype(np.float32)
    f = ts.program(lambda x, y: (x * y, x.T), in_shardings=_ns("dp"), out_shardings=(_ns(None, "mp"), None))
    prod, tr = f(a, ts.device_put(a))  # host and single-device arguments are laid out by in_shardings
    assert prod.sharding == _ns(None, "mp") and isinstance(tr.sharding, NamedSharding)
    np.testing.assert_allclose(np.asarray(prod), a * a, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(tr), a.T)
    g = ts.program(lambda d: d["w"] + d["b"], in_shardings=({"w": _ns("dp"), "b": None},), out_shardings=_ns())
    out = g({"w": a, "b": np.ones(4, np.float32)})
    assert out.sharding == _ns() and out.is_fully_replicated
    np.testing.assert_allclose(np.asarray(out), a + 1)
    with pytest.raises(ValueError, match="in_shardings"):
        g(a)
    with pytest.raises(TypeError, match="in_shardings must be a pytree"):
        ts.program(lambda x: x, in_shardings=P("dp"))
    other = NamedSharding(ts.make_mesh((2,), ("d",)), P("d"))
    with pytest.raises(ValueError, match="on different devices"):
        ts.program(lambda x, y: x + y)(ts.device_put(a, _ns("dp")), ts.device_put(a, other))


def check_train_step_matches_one_device() -> None:
    """A data- and model-parallel MLP step (batch over "dp", hidden units over "mp") against the same program
    on one device."""
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    y = RNG.standard_normal((16, 2)).astype(np.float32)
    params = {"w1": RNG.standard_normal((8, 32)).astype(np.float32) * 0.3, "b1": np.zeros(32, np.float32),
              "w2": RNG.standard_normal((32, 2)).astype(np.float32) * 0.3}

    def loss(p: Any, xb: Any, yb: Any) -> Any:
        h = tnp.tanh(xb @ p["w1"] + p["b1"])
        return tnp.mean((h @ p["w2"] - yb) ** 2)

    @ts.program
    def step(p: Any, xb: Any, yb: Any) -> Any:
        value, grads = ts.value_and_grad(loss)(p, xb, yb)
        return value, ts.tree_map(lambda w, g: w - 0.1 * g, p, grads)

    layout = {"w1": _ns(None, "mp"), "b1": _ns("mp"), "w2": _ns("mp", None)}
    sharded = {k: ts.device_put(v, layout[k]) for k, v in params.items()}
    xs, ys = ts.device_put(x, _ns("dp")), ts.device_put(y, _ns("dp"))
    plain = {k: ts.device_put(v) for k, v in params.items()}
    for _ in range(3):
        value, sharded = step(sharded, xs, ys)
        ref_value, plain = step(plain, x, y)
        np.testing.assert_allclose(float(value), float(ref_value), rtol=1e-5)
    for k in params:
        assert sharded[k].sharding == layout[k], (k, sharded[k].sharding)  # the layout survives the update
        np.testing.assert_allclose(np.asarray(sharded[k]), np.asarray(plain[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    assert len(step._partitioned) == 1  # results fed back take the same executable


def check_sharding_constraints_lay_values_out() -> None:
    """with_sharding_constraint in a partitioned program: XLA's @Sharding custom call, through grad and vmap."""
    x = RNG.standard_normal((8, 4)).astype(np.float32)
    X = ts.device_put(x, _ns("dp"))

    def f(v: Any) -> Any:
        h = ts.lax.with_sharding_constraint(tnp.sin(v) * 3.0, _ns(None, "mp"))
        return tnp.sum(h * v)

    @ts.program
    def many(v: Any) -> Any:
        moved = ts.lax.with_sharding_constraint(v * 2.0, _ns("mp", "dp"))
        batched = ts.vmap(lambda row: ts.lax.with_sharding_constraint(row * row, _ns("mp")))(v)
        return moved, ts.grad(f)(v), batched

    moved, grad, batched = many(X)
    assert moved.sharding == _ns("mp", "dp")  # the constrained value's layout reaches the result
    np.testing.assert_allclose(np.asarray(moved), x * 2)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(grad), 3 * np.sin(x64) + 3 * x64 * np.cos(x64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(batched), x * x, rtol=1e-6)
    staged = many.stage(x)
    assert "stablehlo.custom_call" not in staged.stablehlo()  # on one device the constraint lowers to nothing
    [partitioned] = many._partitioned.values()
    module = partitioned.module_text
    assert module.count('call_target_name = "Sharding"') == 4  # moved, the grad's primal and cotangent, batched
    assert '{mhlo.sharding = "{devices=[2,2]0,2,1,3}"}' in module
    assert 'backend_config = "unspecified_dims=[0]"' in module
    eager = ts.lax.with_sharding_constraint({"a": x}, _ns("dp", "mp"))  # concrete arrays: laid out now
    assert eager["a"].sharding == _ns("dp", "mp")


def check_never_imports_jax() -> None:
    assert "jax" not in sys.modules, "NamedSharding or a partitioned program imported jax"


if __name__ == "__main__":
    run_checks(globals())
