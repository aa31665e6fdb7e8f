"""NamedSharding, SingleDeviceSharding and partitioned (GSPMD) programs.

- In this process (one CPU device): the sharding objects (equality, hash, repr, shard shapes, index maps, the
  HloSharding text per spec), a one-device mesh end to end, ``x.sharding`` of ordinary Arrays, and the errors.
- On four CPU devices in ONE subprocess (``tests/named_sharding_cases.py``): every layout over a 2x2 mesh round
  trips (device_put, np.asarray, addressable_shards, make_array_from_callback / _single_device_arrays), eager ops
  and pinned programs on sharded Arrays, pmap results' shardings, partitioned programs (matmul, reductions over a
  split dimension, in/out_shardings, the cache key) against float64 NumPy, and a data/model-parallel train step
  against the same program on one device.
"""

from __future__ import annotations


import numpy as np
import pytest

import tensorstage as ts
from tensorstage.sharding import Mesh, NamedSharding, SingleDeviceSharding

import named_sharding_cases
import spmd_cases

P = ts.P


def _mesh1() -> Mesh:
    return ts.make_mesh((1, 1), ("dp", "mp"))


def test_exports_match_jax_names() -> None:
    assert ts.NamedSharding is ts.sharding.NamedSharding is NamedSharding
    assert ts.sharding.SingleDeviceSharding is SingleDeviceSharding and ts.Shard is ts.sharding.Shard
    assert issubclass(NamedSharding, ts.sharding.Sharding) and issubclass(SingleDeviceSharding, ts.sharding.Sharding)
    assert callable(ts.make_array_from_callback) and callable(ts.make_array_from_single_device_arrays)


def test_named_sharding_object() -> None:
    mesh = _mesh1()
    s = NamedSharding(mesh, P("dp", None))
    assert s.mesh is mesh and s.spec == P("dp") and s == NamedSharding(mesh, P("dp"))
    assert hash(s) == hash(NamedSharding(mesh, P("dp"))) and s != NamedSharding(mesh, P("mp"))
    assert repr(s).startswith("NamedSharding(mesh=Mesh({'dp': 1, 'mp': 1}") and "PartitionSpec('dp', None)" in repr(s)
    assert s.shard_shape((4, 6)) == (4, 6) and s.is_fully_replicated and s.num_devices == 1
    assert s.addressable_devices == {ts.default_device()} == s.device_set
    assert s.devices_indices_map((4, 6)) == {ts.default_device(): (slice(None), slice(None))}
    single = SingleDeviceSharding(ts.default_device())
    assert single == SingleDeviceSharding(ts.default_device()) and repr(single) == "SingleDeviceSharding(device=cpu:0)"
    assert single.shard_shape((3,)) == (3,) and single.is_fully_replicated


def test_hlo_text_follows_the_mesh_order() -> None:
    """The tile assignment of each spec over a 2x2 mesh (no devices needed to build the text)."""
    grid = np.empty(4, dtype=object)
    grid[:] = [ts.default_device()] * 4
    mesh = object.__new__(Mesh)  # a 2x2 mesh of one device repeated: only its shape and names matter here
    object.__setattr__(mesh, "devices", grid.reshape(2, 2))
    object.__setattr__(mesh, "axis_names", ("dp", "mp"))
    object.__setattr__(mesh, "_flat", tuple(grid))
    cases = {
        (): "{replicated}",
        ("dp",): "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        (None, "mp"): "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}",
        ("dp", "mp"): "{devices=[2,2]0,1,2,3}",
        ("mp", "dp"): "{devices=[2,2]0,2,1,3}",
        (("mp", "dp"),): "{devices=[4,1]0,2,1,3}",
    }
    for spec, text in cases.items():
        assert NamedSharding(mesh, P(*spec)).hlo_text(2) == text, spec
    with pytest.raises(ValueError, match="does not divide into 2 blocks"):
        NamedSharding(mesh, P("dp")).shard_shape((3, 4))


def test_one_device_mesh_end_to_end() -> None:
    s = NamedSharding(_mesh1(), P("dp"))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = ts.device_put(x, s)
    assert a.sharding == s and not a.is_sharded
    np.testing.assert_array_equal(np.asarray(a), x)
    [shard] = a.addressable_shards
    assert shard.index == (slice(None), slice(None)) and shard.replica_id == 0
    b = ts.make_array_from_callback(x.shape, s, lambda index: x[index])
    np.testing.assert_array_equal(np.asarray(b), x)
    f = ts.program(lambda u, v: u @ v.T, in_shardings=s, out_shardings=NamedSharding(_mesh1(), P()))
    out = f(a, x)
    assert out.sharding == NamedSharding(_mesh1(), P())
    np.testing.assert_allclose(np.asarray(out), x @ x.T, rtol=1e-6)
    plain = ts.device_put(x)
    assert plain.sharding == SingleDeviceSharding(ts.default_device())
    assert ts.device_put(x, SingleDeviceSharding(ts.default_device())).sharding == plain.sharding


def test_errors() -> None:
    mesh = _mesh1()
    with pytest.raises(ValueError, match="names axis 'z', which mesh"):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="uses a mesh axis twice"):
        NamedSharding(mesh, P("dp", "dp"))
    with pytest.raises(TypeError, match="spec must be a PartitionSpec"):
        NamedSharding(mesh, ("dp",))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mesh must be a ts.sharding.Mesh"):
        NamedSharding("mesh", P())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="device must be a ts.Device, a platform name or a ts.sharding.Sharding"):
        ts.device_put(np.zeros(2), 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="in_shardings must be a pytree"):
        ts.program(lambda x: x, in_shardings=(P(),))
    with pytest.raises(ValueError, match="no mesh to partition over"):
        ts.program(lambda x: x, in_shardings=SingleDeviceSharding(ts.default_device()))(np.zeros(2))


def test_with_sharding_constraint_on_one_device() -> None:
    s = NamedSharding(_mesh1(), P("dp", "mp"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    @ts.program
    def f(v: ts.Tensor) -> ts.Tensor:
        return ts.lax.with_sharding_constraint(v * 2, s) + ts.lax.with_sharding_constraint(v, None)

    np.testing.assert_array_equal(np.asarray(f(x)), 3 * x)
    staged = f.stage(x)
    assert "sharding_constraint" in str(staged.graph)
    for platform in ("cpu", "gpu"):  # one device: the constraint lowers to nothing, on every platform
        assert "custom_call" not in staged.stablehlo(platform)
    grads = ts.grad(lambda v: ts.numpy.sum(ts.lax.with_sharding_constraint(v, s) ** 2))(x)
    np.testing.assert_allclose(np.asarray(grads), 2 * x)
    assert ts.lax.with_sharding_constraint(x, s).sharding == s  # concrete data: laid out now
    with pytest.raises(TypeError, match="must be ts.NamedSharding\(mesh, spec\) or None"):
        ts.lax.with_sharding_constraint(x, P("dp"))
    with pytest.raises(ts.ShapeError, match="splits 2 dimensions, but the array has rank 1"):
        ts.program(lambda v: ts.lax.with_sharding_constraint(v, s))(np.zeros(3, np.float32))


# ------------------------------------------------------------------------------- four devices, subprocess


test_on_four_cpu_devices = spmd_cases.device_checks(named_sharding_cases)
