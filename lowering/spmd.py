"""Running one replica-style SPMD executable on several devices: compile, shard inputs, gather outputs.

Verified on jaxlib 0.10.2 (CPU, several devices): a module with ``mhlo.num_replicas = n`` compiled with
``CompileOptions.num_replicas = n`` for a DeviceList of n devices; each argument is one global array with one
shard per device (in device-list order); each result comes back as one global array. Results are read back
shard by shard with ``reorder_shards`` (putting device k first, no copy) and DLPack, which never makes jaxlib
build single-device arrays (that path imports jax when it is installed).

CPU collectives must not be launched back to back (XLA's CPU rendezvous can abort the process), so ``run``
holds a lock and waits for the results before it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from jaxlib import _jax  # type: ignore[attr-defined]  # a compiled module without stubs
from jaxlib import xla_client as xc

from ..staging import dtypes
from . import backend, runtime

_LAUNCH = threading.Lock()


def compile_replicated(text: str, devices: Sequence[Any]) -> Any:
    """Compile a ``num_replicas = len(devices)`` module; replica r runs on ``devices[r]``."""
    options = xc.CompileOptions()
    options.num_replicas = len(devices)
    ids = np.asarray([[d.id] for d in devices], dtype=np.int32)
    options.device_assignment = xc.DeviceAssignment.create(ids)
    return backend.compile_module(text, devices, options)


@cache
def _tiled(devices: tuple[Any, ...], rank: int) -> Any:
    """Global arrays of shape (n, *per_device): one leading unit slice per device."""
    return xc.GSPMDSharding(xc.DeviceList(devices), xc.HloSharding.iota_tile([len(devices)] + [1] * rank))


@cache
def _replicated(devices: tuple[Any, ...]) -> Any:
    return xc.GSPMDSharding(xc.DeviceList(devices), xc.HloSharding.replicate())


def put_sharded(host: np.ndarray[Any, Any], devices: tuple[Any, ...]) -> Any:
    """``host`` of shape (n, *s): slice k goes to devices[k]."""
    data = runtime.contiguous(host)
    aval = runtime.buffer_aval(data.shape, data.dtype)
    shards = [data[k : k + 1] for k in range(len(devices))]
    return xc.batched_device_put(aval, _tiled(devices, data.ndim - 1), shards, list(devices), True, True,
                                 xc.HostBufferSemantics.ZERO_COPY, True)


def put_replicated(host: np.ndarray[Any, Any], devices: tuple[Any, ...]) -> Any:
    data = runtime.contiguous(host)
    aval = runtime.buffer_aval(data.shape, data.dtype)
    return xc.batched_device_put(aval, _replicated(devices), [data] * len(devices), list(devices), True, True,
                                 xc.HostBufferSemantics.ZERO_COPY, True)


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


class _Capsule:
    """Hands a DLPack capsule to ``np.from_dlpack``."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


@cache
def _device_first(devices: tuple[Any, ...], k: int, rank: int) -> Any:
    order = devices[k:] + devices[:k]
    return _tiled(order, rank)


def gather(array: Any, shape: tuple[int, ...], dtype: np.dtype[Any], devices: tuple[Any, ...]) -> np.ndarray[Any, Any]:
    """The (n, *shape) host value of a global result, one device's shard after another."""
    if dtype == dtypes.bfloat16 or devices[0].platform != "cpu":
        raise NotImplementedError("pmap results are read back through DLPack on CPU; bf16 results are not supported")
    out = np.empty((len(devices), *shape), dtype)
    for k in range(len(devices)):
        shard = _jax.reorder_shards(array, _device_first(devices, k, len(shape)), _jax.ArrayCopySemantics.REUSE_INPUT)
        out[k] = np.from_dlpack(_Capsule(_jax.buffer_to_dlpack_managed_tensor(shard))).reshape(shape)
    return out


def run(
    executable: Any, buffers: Sequence[Any], handlers: Sequence[Any],
    out_avals: Sequence[tuple[tuple[int, ...], np.dtype[Any]]], devices: tuple[Any, ...],
) -> list[np.ndarray[Any, Any]]:
    """Execute on every device, wait, and return each result as a host array of shape (n, *per_device)."""
    with _LAUNCH:
        results = executable.execute_sharded(list(buffers))
        if not handlers:
            results.consume_token().block_until_ready()
            return []
        outs = results.consume_with_handlers(list(handlers))
        for out in outs:
            out.block_until_ready()
    return [gather(out, shape, dtype, devices) for out, (shape, dtype) in zip(outs, out_avals)]
