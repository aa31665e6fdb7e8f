"""Running one replica-style SPMD executable on several devices: compile, shard inputs, gather outputs.

Verified on jaxlib 0.10.2 (CPU, several devices): a module with ``mhlo.num_replicas = n`` compiled with
``CompileOptions.num_replicas = n`` for a DeviceList of n devices; each argument is one global array with one
shard per device (in device-list order); each result comes back as one global array. Results stay on the
devices: ``runtime.gather`` reads one back when the host needs it, shard by shard with
``reorder_shards`` (putting device k first, no copy) and DLPack, which never makes jaxlib build single-device
arrays (that path imports jax when it is installed).

CPU collectives must not be launched back to back (XLA's CPU rendezvous can abort the process), so ``run``
holds a lock and waits for the results before it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax  # type: ignore[attr-defined]  # a compiled module without stubs
from jaxlib import xla_client as xc

from . import backend, runtime

_LAUNCH = threading.Lock()


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
    handlers = []
    for shape, dtype in out_avals:
        aval = runtime.buffer_aval((len(devices), *shape), dtype)
        sharding = _tiled(devices, len(shape))
        if runtime._NEEDS_SKIP_CHECKS:
            handlers.append(_jax.array_result_handler(aval, sharding, True, _skip_checks=True))
        else:
            handlers.append(_jax.array_result_handler(aval, sharding, True))
    return handlers


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
