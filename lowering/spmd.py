"""Running one replica-style SPMD executable on several devices: compile, shard inputs, gather outputs.

Verified on jaxlib 0.10.2 (CPU, several devices): a module with ``mhlo.num_replicas = n`` compiled with
``CompileOptions.num_replicas = n`` for a DeviceList of n devices; each argument is one global array with one
shard per device (in device-list order); each result comes back as one global array. Results stay on the
devices: ``runtime.gather`` reads one back when the host needs it, shard by shard with
``reorder_shards`` (putting device k first, no copy) and DLPack, which never makes jaxlib build single-device
arrays (that path imports jax when it is installed).

CPU collectives must not be launched back to back (XLA's CPU rendezvous can abort the process), so ``run``
holds a lock and waits for the results before it returns.

Axis environment: a collective names one mapped axis; its lowering needs that axis's replica groups (the sets of
replicas that exchange values). ``pmap`` has one axis spanning every replica (the default, no environment);
``shard_map`` over a mesh lowers with ``axis_groups(mesh_groups(...))`` in effect, so ``psum`` over ``"i"`` on a
2x2 mesh all-reduces within each pair of replicas that share the ``"j"`` coordinate.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from jaxlib import _jax  # type: ignore[attr-defined]  # a compiled module without stubs
from jaxlib import xla_client as xc

from . import backend, emit, runtime

_LAUNCH = threading.Lock()

Groups = tuple[tuple[int, ...], ...]  # replica ids, one tuple per group of replicas that exchange values
_AXIS_GROUPS: ContextVar[Mapping[str, Groups] | None] = ContextVar("tensorstage_axis_groups", default=None)


def mesh_groups(axis_names: Sequence[str], axis_sizes: Sequence[int]) -> dict[str, Groups]:
    """Per mesh axis, its replica groups: the replica id of the device at mesh position p is p's row-major index
    (its place in ``mesh.devices.flat``), and a group holds the replicas that differ only along that axis, in
    the order of their coordinate along it."""
    ids = np.arange(int(np.prod(axis_sizes, dtype=np.int64))).reshape(tuple(axis_sizes))
    out: dict[str, Groups] = {}
    for k, name in enumerate(axis_names):
        rows = np.moveaxis(ids, k, -1).reshape(-1, axis_sizes[k])
        out[name] = tuple(tuple(int(v) for v in row) for row in rows)
    return out


@contextmanager
def axis_groups(groups: Mapping[str, Groups]) -> Iterator[None]:
    """Lower collectives with these replica groups per axis name (see the module docstring)."""
    token = _AXIS_GROUPS.set(groups)
    try:
        yield
    finally:
        _AXIS_GROUPS.reset(token)


def groups_of(axis_name: str, axis_size: int) -> Groups:
    """The replica groups of a collective over ``axis_name``: every replica, in one group, outside
    ``axis_groups`` (pmap's one axis)."""
    env = _AXIS_GROUPS.get()
    if env is None:
        return (tuple(range(axis_size)),)
    groups = env.get(axis_name)
    if groups is None or len(groups[0]) != axis_size:
        raise ValueError(f"a collective over axis {axis_name!r} (size {axis_size}) was lowered in a module whose "
                         f"axes are {', '.join(repr(k) for k in env)}; it has no replica groups")
    return groups


def module_text(
    graph: Any, name: str, num_replicas: int, platform: str, groups: Mapping[str, Groups] | None = None
) -> tuple[str, list[Any]]:
    """``emit.module_text_and_callbacks`` for a ``num_replicas`` SPMD module, with ``groups`` (None: pmap's one
    axis over every replica) in effect while the collectives lower."""
    if groups is None:
        return emit.module_text_and_callbacks(graph, name, num_replicas=num_replicas, platform=platform)
    with axis_groups(groups):
        return emit.module_text_and_callbacks(graph, name, num_replicas=num_replicas, platform=platform)


def compile_replicated(text: str, devices: Sequence[Any], host_callbacks: Sequence[Any] = ()) -> Any:
    """Compile a ``num_replicas = len(devices)`` module; replica r runs on ``devices[r]`` (``host_callbacks``: as
    ``backend.compile_module``'s)."""
    options = xc.CompileOptions()
    options.num_replicas = len(devices)
    ids = np.asarray([[d.id] for d in devices], dtype=np.int32)
    options.device_assignment = xc.DeviceAssignment.create(ids)
    return backend.compile_module(text, devices, options, host_callbacks)


def _tiled(devices: tuple[Any, ...], rank: int) -> Any:
    """Global arrays of shape (n, *per_device), per_device of rank ``rank``: one leading unit slice per device."""
    return runtime.tiled_sharding(devices, rank + 1)


def is_tiled_over(buffer: Any, devices: tuple[Any, ...], ndim: int) -> bool:
    """Whether ``buffer`` (of global rank ``ndim``) is split along axis 0 over exactly ``devices``, in order: the
    layout of pmap results, which a pmap over the same devices takes as it is."""
    sharding = buffer._sharding
    expected = runtime.tiled_sharding(devices, ndim)
    return sharding is expected or bool(sharding == expected)


def put_sharded(host: np.ndarray[Any, Any], devices: tuple[Any, ...]) -> Any:
    """``host`` of shape (n, *s): slice k goes to devices[k]."""
    data = runtime.contiguous(host)
    aval = runtime.buffer_aval(data.shape, data.dtype)
    shards = [data[k : k + 1] for k in range(len(devices))]
    if data.size == 0:  # views of an empty array make jaxlib 0.10.2 raise bad_function_call: give each its own
        shards = [np.empty((1, *data.shape[1:]), data.dtype) for _ in devices]
    return xc.batched_device_put(aval, _tiled(devices, data.ndim - 1), shards, list(devices), True, True,
                                 xc.HostBufferSemantics.ZERO_COPY, True)


def put_replicated(host: np.ndarray[Any, Any], devices: tuple[Any, ...]) -> Any:
    data = runtime.contiguous(host)
    aval = runtime.buffer_aval(data.shape, data.dtype)
    return xc.batched_device_put(aval, runtime.replicated_sharding(devices), [data] * len(devices), list(devices),
                                 True, True, xc.HostBufferSemantics.ZERO_COPY, True)


def output_handlers(out_avals: Sequence[tuple[tuple[int, ...], np.dtype[Any]]], devices: tuple[Any, ...]) -> list[Any]:
    """One handler per result: a global (n, *per_device) array tiled over ``devices``."""
    return [output_handler((len(devices), *shape), dtype, _tiled(devices, len(shape))) for shape, dtype in out_avals]


def output_handler(shape: tuple[int, ...], dtype: np.dtype[Any], sharding: Any) -> Any:
    """A handler making a result one global array of ``shape`` with ``sharding`` (each device's result is its
    shard, of the same bytes)."""
    aval = runtime.buffer_aval(shape, dtype)
    if runtime._NEEDS_SKIP_CHECKS:
        return _jax.array_result_handler(aval, sharding, True, _skip_checks=True)
    return _jax.array_result_handler(aval, sharding, True)


def run(executable: Any, buffers: Sequence[Any], handlers: Sequence[Any]) -> list[Any]:
    """Execute on every device, wait, and return each result as one global (n, *per_device) device array split
    over the devices (``output_handlers``); nothing is copied to the host."""
    with _LAUNCH:
        results = executable.execute_sharded(list(buffers))
        if not handlers:
            results.consume_token().block_until_ready()
            return []
        outs: list[Any] = results.consume_with_handlers(list(handlers))
        for out in outs:
            out.block_until_ready()
    return outs


def gather(array: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value of a result of global ``shape`` (n, *per_device), one device's shard after another."""
    return runtime.gather(array, shape, dtype)


def first_shard(array: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value of device 0's result (per-device ``shape``), without reading the other devices'."""
    return runtime.first_shard(array, shape, dtype)
