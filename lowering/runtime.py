"""Device buffers: host -> device transfer, execution and device -> host transfer, without jax.

Uses the path JAXLIB.md verified on both jaxlib versions: ``batched_device_put`` with a GSPMDSharding,
``execute_sharded(...).consume_with_handlers(...)``. jaxlib validates nothing about avals, so callers check
arguments before they reach ``execute``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections import deque
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

import numpy as np
from jaxlib import _jax  # type: ignore[attr-defined]  # a compiled module without stubs
from jaxlib import xla_client as xc

from ..staging import dtypes

_NEEDS_SKIP_CHECKS = "_skip_checks" in (getattr(_jax.array_result_handler, "__doc__", "") or "")


def _stop_traceback_capture() -> None:
    """jaxlib records a Python traceback with every execution; without jax in the process (0.10.2) that leaks
    one 56-byte object per call (~0.5 MB per 10,000 calls, measured by benchmarks/memory.py) and costs time.
    We never read those tracebacks, so capture is switched off unless jax (which may read them) is already
    loaded or ``TENSORSTAGE_JAXLIB_TRACEBACKS=1`` asks to keep them."""
    if "jax" in sys.modules or os.environ.get("TENSORSTAGE_JAXLIB_TRACEBACKS") == "1":
        return
    setter = getattr(_jax, "set_tracebacks_enabled", None)
    if setter is not None:
        setter(False)


_stop_traceback_capture()


# Tokens of runs whose host callbacks may still be running: dispatch does not wait for a run, so its unordered
# callbacks can run after the call returns. ``effects_barrier`` waits for them all. Bounded: past the bound the
# oldest run is waited for first (long finished, in practice).
_PENDING_EFFECTS: deque[Any] = deque()
_PENDING_LIMIT = 256


def track_effects(token: Any) -> None:
    """Remember the token of a run that calls back to the host, for ``effects_barrier``."""
    if len(_PENDING_EFFECTS) >= _PENDING_LIMIT:
        _PENDING_EFFECTS.popleft().block_until_ready()
    _PENDING_EFFECTS.append(token)


def effects_barrier() -> None:
    """Wait until every run dispatched so far that calls back to the host has finished (its callbacks ran)."""
    while _PENDING_EFFECTS:
        _PENDING_EFFECTS.popleft().block_until_ready()


class BufferAval(tuple[tuple[int, ...], np.dtype[Any]]):
    """The aval jaxlib's C++ reads: ``shape``, ``dtype`` (an np.dtype) and ``weak_type``; hashable."""

    __slots__ = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self[0]

    @property
    def dtype(self) -> np.dtype[Any]:
        return self[1]

    @property
    def weak_type(self) -> bool:
        return False


@lru_cache(maxsize=4096)  # one per distinct shape a process transfers: bounded, so varying shapes cannot grow it
def buffer_aval(shape: tuple[int, ...], dtype: np.dtype[Any]) -> BufferAval:
    return BufferAval((shape, dtype))


@cache
def single_device_sharding(device: Any) -> Any:
    return xc.GSPMDSharding(xc.DeviceList((device,)), xc.HloSharding.replicate())


def result_handler(shape: tuple[int, ...], dtype: np.dtype[Any], device: Any) -> Any:
    aval = buffer_aval(shape, dtype)
    sharding = single_device_sharding(device)
    if _NEEDS_SKIP_CHECKS:
        return _jax.array_result_handler(aval, sharding, True, _skip_checks=True)
    return _jax.array_result_handler(aval, sharding, True)


def device_put(host: np.ndarray[Any, Any], device: Any) -> Any:
    """Copy a host array to ``device``. Always copies: a zero-copy alias would see later host mutations."""
    data = contiguous(host)
    return put_contiguous(data, buffer_aval(data.shape, data.dtype), single_device_sharding(device), [device])


def contiguous(host: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``host`` itself when C-contiguous in native byte order (no host-side copy), else such a copy of it."""
    if not host.dtype.isnative:  # devices read native-order bytes: a big-endian array is converted, not misread
        return np.ascontiguousarray(host, dtype=host.dtype.newbyteorder("="))
    return host if host.flags.c_contiguous else np.ascontiguousarray(host)  # ascontiguousarray makes 0-d 1-d


_ZERO_COPY = xc.HostBufferSemantics.ZERO_COPY


def put_contiguous(data: np.ndarray[Any, Any], aval: BufferAval, sharding: Any, devices: list[Any]) -> Any:
    """The one host->device copy of C-contiguous ``data`` with ``aval``'s shape and dtype (callers checked).

    ``force_copy=True``: the device buffer never aliases the caller's memory (jaxlib aliases 64-byte aligned
    arrays, and dispatch is asynchronous, so a later host write could race the computation).
    """
    return xc.batched_device_put(aval, sharding, [data], devices, True, True, _ZERO_COPY, True)


def device_copy(buffer: Any, device: Any) -> Any:
    """``buffer`` copied to ``device``; between platforms (separate clients, which jaxlib cannot copy between
    without jax) through the host."""
    if buffer.platform() != device.platform:
        return device_put(to_host(buffer, buffer.aval.dtype), device)
    aval = buffer.aval
    return xc.batched_device_put(
        aval, single_device_sharding(device), [buffer], [device], True, True,
        xc.HostBufferSemantics.ZERO_COPY, True,
    )


def to_host(buffer: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """A read-only host view or copy of a buffer, correct for every dtype and platform; a buffer sharded over
    several devices (see ``gather``) is assembled from its shards."""
    if buffer.platform() == "cpu" and dtype != dtypes.bfloat16:
        out = np.asarray(buffer)  # a multi-device buffer gives a 0-d object array here, and falls through
        if out.dtype == dtype:
            return out
    if len(buffer._sharding._internal_device_list) > 1:
        return gather(buffer, tuple(buffer.aval.shape), dtype)
    return _first_shard_to_host(buffer, dtype)


def is_single_device(buffer: Any) -> bool:
    return len(buffer._sharding._internal_device_list) == 1


def is_replicated(buffer: Any) -> bool:
    """Whether each device of ``buffer`` holds the whole array."""
    return bool(buffer._sharding._hlo_sharding.is_replicated())


@cache
def tiled_sharding(devices: tuple[Any, ...], ndim: int) -> Any:
    """Global arrays of rank ``ndim`` split along axis 0 into one block per device, in ``devices`` order."""
    return xc.GSPMDSharding(xc.DeviceList(devices), xc.HloSharding.iota_tile([len(devices)] + [1] * (ndim - 1)))


@cache
def replicated_sharding(devices: tuple[Any, ...]) -> Any:
    return xc.GSPMDSharding(xc.DeviceList(devices), xc.HloSharding.replicate())


class _Capsule:
    """Hands a DLPack capsule to ``np.from_dlpack``."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


_REORDER = getattr(_jax, "reorder_shards", None)


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # the head of DLPack's DLManagedTensor (dlpack.h, unversioned)
    _fields_ = [
        ("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DL_UINT, _DL_BFLOAT = 1, 4


def _bf16_dlpack_as_uint16(capsule: Any) -> Any:
    """NumPy's DLPack import refuses bf16: relabel the (not yet consumed) tensor as uint16 of the same bits."""
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if (tensor.dtype.code, tensor.dtype.bits) != (_DL_BFLOAT, 16):
        raise TypeError(f"expected a bf16 DLPack tensor, got type code {tensor.dtype.code}/{tensor.dtype.bits}")
    tensor.dtype.code = _DL_UINT
    return capsule


def _first_shard_to_host(buffer: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value of the shard of ``buffer`` on its device list's first device. On CPU this reads it through
    DLPack, which never builds a single-device array (that imports jax when installed: see JAXLIB.md)."""
    if buffer.platform() == "cpu":
        buffer.block_until_ready()
        try:
            capsule = _jax.buffer_to_dlpack_managed_tensor(buffer)
            if dtype == dtypes.bfloat16:
                out = np.from_dlpack(_Capsule(_bf16_dlpack_as_uint16(capsule))).view(dtype)
            else:
                out = np.from_dlpack(_Capsule(capsule))
        except (RuntimeError, TypeError, BufferError, ValueError):  # e.g. a layout DLPack cannot describe
            pass
        else:
            out.flags.writeable = False  # a view of the device buffer, which is immutable
            return out
    host, _ = buffer._single_device_array_to_np_array_did_copy()  # other platforms: the general (slower) path
    return np.asarray(host)


def first_shard(buffer: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value (read-only; a view of device memory on CPU) of the block of ``buffer`` on its first
    device, reshaped to ``shape``."""
    return _first_shard_to_host(buffer, dtype).reshape(shape)


def _shard_to_host(buffer: Any, devices: tuple[Any, ...], k: int, ndim: int, dtype: np.dtype[Any]) -> Any:
    if k == 0:
        return _first_shard_to_host(buffer, dtype)
    if _REORDER is None:  # a jaxlib without reorder_shards: per-shard arrays (they cost an import attempt each)
        return to_host(buffer._arrays[k], dtype)
    first = tiled_sharding(devices[k:] + devices[:k], ndim)  # device k's block first: a view, no copy
    return _first_shard_to_host(_REORDER(buffer, first, _jax.ArrayCopySemantics.REUSE_INPUT), dtype)


def gather(buffer: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value (read-only) of a global buffer of ``shape`` that is either replicated or split along axis
    0 over its devices (``tiled_sharding``): one device's block after another, no jax import on CPU for
    standard dtypes."""
    devices = tuple(buffer._sharding._internal_device_list)
    sharding = buffer._sharding
    if len(devices) == 1 or sharding == replicated_sharding(devices):
        out = np.array(_first_shard_to_host(buffer, dtype), copy=True).reshape(shape)
    elif shape and shape[0] % len(devices) == 0 and sharding == tiled_sharding(devices, len(shape)):
        out = np.empty(shape, dtype)
        block = shape[0] // len(devices)
        for k in range(len(devices)):
            out[k * block : (k + 1) * block] = _shard_to_host(buffer, devices, k, len(shape), dtype).reshape(
                (block, *shape[1:])
            )
    else:
        raise NotImplementedError(f"reading back a buffer with sharding {sharding!r} is not supported")
    out.flags.writeable = False
    return out


def execute(executable: Any, buffers: Sequence[Any], handlers: Sequence[Any]) -> list[Any]:
    return executable.execute_sharded(buffers).consume_with_handlers(handlers)  # type: ignore[no-any-return]
