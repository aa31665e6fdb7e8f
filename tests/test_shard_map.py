"""shard_map, Mesh and PartitionSpec.

- In this process (one CPU device): specs and meshes, a one-device mesh end to end, and every error that needs no
  second device.
- On four CPU devices in ONE subprocess (``tests/shard_map_cases.py`` with ``TENSORSTAGE_CPU_DEVICES=4``): a 1-D
  mesh against pmap and NumPy, every collective on a 2x2 mesh (over one axis, both, and tuples), the replica
  groups in the module, P(None, "j") and replicated inputs, a data-parallel train step against float64 NumPy
  (replicated results fed back with no host copy), sharded results staying on the devices, grad/vmap/scan/cond
  inside, the replication check (check_vma / check_rep), indivisible shapes, and jax.shard_map as the oracle
  (when jax is installed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.sharding import Mesh, PartitionSpec
from tensorstage.staging.errors import TransformError

import shard_map_cases
import spmd_cases

P = ts.P


def _mesh1() -> Mesh:
    return ts.make_mesh((1, 1), ("i", "j"))


# ------------------------------------------------------------------------------------- specs and meshes


def test_partition_spec_entries_and_equality() -> None:
    spec = P("i", None, ("j", "k"))
    assert len(spec) == 3 and spec[0] == "i" and spec[1] is None and spec[2] == ("j", "k")
    assert list(spec) == ["i", None, ("j", "k")]
    assert P("i", None) == P("i") and P(()) == P() and hash(P("i", None)) == hash(P("i"))
    assert P("i") != P("j") and spec.axes() == ("i", "j", "k")
    assert repr(P("i", None)) == "PartitionSpec('i', None)"
    assert ts.P is PartitionSpec
    with pytest.raises(TypeError, match="PartitionSpec entries must be None, a mesh axis name or a tuple"):
        P(0)


def test_mesh_and_make_mesh() -> None:
    mesh = _mesh1()
    assert mesh.shape == {"i": 1, "j": 1} and mesh.axis_names == ("i", "j") and mesh.size == 1
    default = ts.default_device()  # make_mesh's devices are the default platform's, as in jax
    assert mesh.devices.shape == (1, 1) and mesh.device_list == (default,)
    assert mesh == Mesh(np.array([default]).reshape(1, 1), ("i", "j")) and "'i': 1" in repr(mesh)
    assert ts.make_mesh((1,), ("d",), devices=ts.devices()[:1]).axis_names == ("d",)
    with pytest.raises(ValueError, match="2 dimensions .* but 1 axis names"):
        Mesh(np.array(ts.devices()[:1]).reshape(1, 1), ("i",))
    with pytest.raises(ValueError, match="distinct strings"):
        Mesh(np.array(ts.devices()[:1]).reshape(1, 1), ("i", "i"))
    with pytest.raises(TypeError, match="ts.Device objects"):
        Mesh(np.array(["cpu:0"]), ("i",))
    with pytest.raises(ValueError, match="appears twice"):
        Mesh([ts.devices()[0], ts.devices()[0]], ("i",))
    with pytest.raises(ValueError, match="needs 2 devices, got 1"):
        ts.make_mesh((2,), ("i",), devices=ts.devices()[:1])
    with pytest.raises(ValueError, match=rf"needs 64 devices, but only \d+ {default.platform} device") as info:
        ts.make_mesh((64,), ("i",))
    assert ("TENSORSTAGE_CPU_DEVICES=64" in str(info.value)) == (default.platform == "cpu")


# ------------------------------------------------------------------------------ a one-device mesh, here


def test_one_device_mesh_runs_with_grad_inside() -> None:
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(3), rng.standard_normal((4, 3))

    @ts.shard_map(mesh=_mesh1(), in_specs=(P(), P(("i", "j"))), out_specs=(P(), P("i")))
    def f(w: Any, x: Any) -> Any:
        g = ts.grad(lambda v: tnp.sum(tnp.tanh(x @ v) ** 2))(w)
        return ts.pmean(g, ("i", "j")), x * ts.psum(1.0, "i") + ts.axis_index("j").astype(x.dtype)

    g, y = f(w, x)
    t = np.tanh(x @ w)
    np.testing.assert_allclose(np.asarray(g), x.T @ (2 * t * (1 - t**2)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(y), x, rtol=1e-12)
    assert ts.shard_map(lambda a: a, mesh=_mesh1(), in_specs=P(), out_specs=P()).stablehlo(x).count("func.func") == 1


def test_spec_errors() -> None:
    mesh, x = _mesh1(), np.ones((2, 2), np.float32)
    cases: list[tuple[Any, Any, str]] = [
        (P("k"), P(), "names axis 'k', which the mesh does not have"),
        (P("i", "j", None), P(), "has 3 entries but argument a has rank 2"),
        (P(("i", "i")), P(), "names a mesh axis twice"),
        ((P(), P()), P(), "in_specs must be a prefix of the argument tuple"),
        ("i", P(), "must be a PartitionSpec"),
        (P(), P(None, None, "i"), "has 3 entries but output has rank 2"),
        (P(), [P()], "out_specs must be a prefix of the result's structure"),
    ]
    for in_specs, out_specs, message in cases:
        with pytest.raises(TransformError, match=message) as err:
            ts.shard_map(lambda a: a, mesh=mesh, in_specs=in_specs, out_specs=out_specs)(x)
        assert "test_shard_map.py" in str(err.value)


def test_argument_and_call_errors() -> None:
    mesh, x = _mesh1(), np.ones((2, 2), np.float32)
    identity = ts.shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=P())
    with pytest.raises(TransformError, match="argument a is a str, not an array"):
        identity("text")
    with pytest.raises(TypeError, match="positional arguments only"):
        identity(a=x)
    with pytest.raises(TransformError, match="called while a program is being staged"):
        ts.grad(lambda v: tnp.sum(identity(v)))(x)
    with pytest.raises(TransformError, match="called while a program is being staged"):
        ts.program(lambda v: identity(v))(x)
    with pytest.raises(TypeError, match="mesh must be a ts.sharding.Mesh"):
        ts.shard_map(lambda a: a, mesh="mesh", in_specs=P(), out_specs=P())  # type: ignore[call-overload]
    with pytest.raises(TransformError, match="ts.shard_map over a mesh with an axis 'z'"):
        identity_psum = ts.shard_map(lambda a: ts.psum(a, "z"), mesh=mesh, in_specs=P(), out_specs=P())
        identity_psum(x)


# ------------------------------------------------------------------------------- four devices, subprocess


test_on_four_cpu_devices = spmd_cases.device_checks(shard_map_cases)
