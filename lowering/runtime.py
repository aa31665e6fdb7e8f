"""Device buffers: host -> device transfer, execution and device -> host transfer, without jax.

Uses the path JAXLIB.md verified on both jaxlib versions: ``batched_device_put`` with a GSPMDSharding,
``execute_sharded(...).consume_with_handlers(...)``. jaxlib validates nothing about avals, so callers check
arguments before they reach ``execute``.
"""

from __future__ import annotations

import os
import sys
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
    aval = buffer.aval
    return xc.batched_device_put(
        aval, single_device_sharding(device), [buffer], [device], True, True,
        xc.HostBufferSemantics.ZERO_COPY, True,
    )


def to_host(buffer: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """A read-only host view or copy of a single-device buffer, correct for every dtype and platform."""
    if buffer.platform() == "cpu" and dtype != dtypes.bfloat16:
        out = np.asarray(buffer)
        if out.dtype == dtype:
            return out
    host, _ = buffer._single_device_array_to_np_array_did_copy()
    return np.asarray(host)


def execute(executable: Any, buffers: Sequence[Any], handlers: Sequence[Any]) -> list[Any]:
    return executable.execute_sharded(buffers).consume_with_handlers(handlers)  # type: ignore[no-any-return]
