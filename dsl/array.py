"""Concrete arrays on a device, and the devices themselves.

An ``Array`` is an immutable ``Tensor`` backed by a device buffer. Work is dispatched asynchronously: a result
may still be computing; ``block_until_ready()`` waits, and host conversion (``np.asarray``) waits implicitly.

The buffer is usually on one device. A ``pmap`` result is one buffer split along axis 0 over the pmap's devices
(device k holds block k): it reads back whole (``numpy()``), ``devices()`` lists its devices, ``.device`` raises,
a later pmap over the same devices takes it as it is, and a single-device program or ``device_put`` gets a
copy assembled through the host.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Self

import attrs
import numpy as np
from typing_extensions import Unpack

from . import transfer_guards
from .dtypes import DType, to_numpy
from .lowering import backend, gspmd, runtime
from .staging import dtypes as _dt
from .staging.ir import Aval
from .tensor import DT, Shape, Tensor

if TYPE_CHECKING:
    from .named_sharding import Sharding


@attrs.frozen
class Device:
    """One XLA device (``platform`` is ``'cpu'`` or ``'gpu'``)."""

    platform: str
    id: int
    xla: Any = attrs.field(eq=False, repr=False, hash=False)

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"


@cache
def _wrap_device(xla_device: Any) -> Device:
    platform = "gpu" if xla_device.platform in ("cuda", "gpu", "rocm") else xla_device.platform
    return Device(platform, xla_device.id, xla_device)


def devices(platform: str = "cpu") -> list[Device]:
    """The devices of a platform (``'cpu'`` or ``'gpu'``); raises if the platform has none here."""
    return [_wrap_device(d) for d in backend.client_for(platform).devices()]


def default_platform() -> str:
    """``TENSORSTAGE_DEFAULT_DEVICE`` (``'cpu'`` or ``'gpu'``), ``'cpu'`` when unset: where host data goes."""
    return os.environ.get("TENSORSTAGE_DEFAULT_DEVICE", "cpu") or "cpu"


def default_device() -> Device:
    """The first device of the default platform (``TENSORSTAGE_DEFAULT_DEVICE``, ``'cpu'`` when unset): where
    host data, creation ops and programs called without Arrays run."""
    platform = default_platform()
    try:
        return _first_device(platform)
    except ValueError:
        raise ValueError(
            f"TENSORSTAGE_DEFAULT_DEVICE={platform!r} is not a platform; use 'cpu' or 'gpu'"
        ) from None


def as_device(device: str | Device) -> Device:
    """``device`` itself, or a platform name's first device."""
    return _first_device(device) if isinstance(device, str) else device


@cache
def _first_device(platform: str) -> Device:
    return devices(platform)[0]


class Array(Tensor[DT, Unpack[Shape]]):
    """An immutable array on a device. Item assignment raises; use ``x.at[idx].set(v)``."""

    __slots__ = ("buffer", "_aval", "_named")
    _named: Any  # the Sharding it was laid out by (named_sharding.py); unset for ordinary arrays

    def __init__(self, buffer: Any, aval: Aval) -> None:
        self.buffer = buffer
        self._aval = aval

    @property
    def aval(self) -> Aval:
        return self._aval

    @property
    def device(self) -> Device:
        """The device holding this array; raises ``ValueError`` for an array sharded over several devices (a
        ``pmap`` result: see ``devices()``)."""
        held = self.buffer._sharding._internal_device_list
        if len(held) != 1:
            raise ValueError(
                f"this array is sharded over {len(held)} devices ({', '.join(str(d) for d in self.devices())}), "
                "so it has no single device; use .devices(), or ts.device_put(x, device) to copy it to one"
            )
        return _wrap_device(held[0])

    def devices(self) -> tuple[Device, ...]:
        """The devices holding this array, in shard order: one for an ordinary array; for a ``pmap`` result, the
        pmap's devices, device k holding block k of axis 0."""
        return tuple(_wrap_device(d) for d in self.buffer._sharding._internal_device_list)

    @property
    def is_sharded(self) -> bool:
        """Whether the array lives on several devices (a ``pmap`` or ``shard_map`` result: split along axis 0 over
        them, or replicated on each; ``is_fully_replicated`` tells which)."""
        return not runtime.is_single_device(self.buffer)

    @property
    def sharding(self) -> Any:
        """How the array is laid out: the ``NamedSharding`` it was made with, else ``SingleDeviceSharding`` for
        an ordinary array (``ts.sharding``)."""
        from .named_sharding import sharding_of  # imports this module

        return sharding_of(self)

    @property
    def addressable_shards(self) -> list[Any]:
        """Each device's block: ``Shard``s with ``.device``, ``.index`` (slices) and ``.data`` (an Array)."""
        from .named_sharding import addressable_shards

        return addressable_shards(self)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holding the array holds all of it (a single-device array does)."""
        return runtime.is_single_device(self.buffer) or runtime.is_replicated(self.buffer)

    @property
    def itemsize(self) -> int:
        return int(self._aval.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return int(self._aval.dtype.itemsize) * self.size

    def block_until_ready(self) -> Self:
        self._check_alive()
        self.buffer.block_until_ready()
        return self

    def is_ready(self) -> bool:
        self._check_alive()
        return bool(self.buffer.is_ready())

    def is_deleted(self) -> bool:
        return bool(self.buffer.is_deleted())

    def delete(self) -> None:
        self.buffer.delete()

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host, so a later read (``np.asarray``) waits less. Nothing to do on CPU,
        where reads are views of the buffer, nor for an array on several devices (read shard by shard)."""
        self._check_alive()
        if self.buffer.platform() != "cpu" and runtime.is_single_device(self.buffer):
            self.buffer._copy_single_device_array_to_host_async()  # jaxlib keeps the copy for the read

    def _check_alive(self) -> None:
        if self.buffer.is_deleted():  # jaxlib's own error would not say why (donate_argnums)
            raise RuntimeError("this array was deleted or donated to a computation; it has no value any more")

    def numpy(self) -> np.ndarray[Any, Any]:
        """The value as a read-only host array (waits for the computation); an explicit transfer, as
        ``ts.device_get``."""
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("device_to_host", self._aval, explicit=True)
        return self._host_value()

    def _implicit_numpy(self) -> np.ndarray[Any, Any]:
        """``numpy()`` for NumPy's and Python's conversions: an implicit transfer (``ts.transfer_guard``)."""
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("device_to_host", self._aval)
        return self._host_value()

    def _host_value(self) -> np.ndarray[Any, Any]:
        """The host value, unguarded: for reads the library makes on a transfer already checked."""
        self._check_alive()
        if runtime.is_single_device(self.buffer):
            host = runtime.to_host(self.buffer, self._aval.dtype)
        else:  # any layout over several devices (pmap, shard_map, NamedSharding), block by block
            host = gspmd.gather(self.buffer, self._aval.shape, self._aval.dtype)
        if host.shape != self._aval.shape:  # a one-device pmap result: its buffer holds the per-device shape
            return host.reshape(self._aval.shape)
        return host

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """NumPy's protocol: a read-only view where NumPy allows one (the device value cannot be written through
        it), else a writable copy; ``copy=False`` with another ``dtype`` raises as NumPy 2 does."""
        host = self._implicit_numpy()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise ValueError(
                    f"cannot convert a {_dt.short_name(host.dtype)} array to {np.dtype(dtype)} without a copy "
                    "(copy=False)"
                )
            return host.astype(dtype)
        if copy:
            return host.copy()
        return host

    def item(self, *index: Any) -> Any:
        """The element at ``index`` (none: the only element) as a Python scalar, as ``numpy.ndarray.item``."""
        return self._implicit_numpy().item(*index)

    def tolist(self) -> Any:
        return self._implicit_numpy().tolist()

    def __bool__(self) -> bool:
        return bool(self._implicit_numpy())

    def __int__(self) -> int:
        return int(self._implicit_numpy())

    def __float__(self) -> float:
        return float(self._implicit_numpy())

    def __complex__(self) -> complex:
        return complex(self._implicit_numpy())

    def __index__(self) -> int:
        if not _dt.is_integer(self._aval.dtype) or self._aval.ndim:
            raise TypeError(f"only integer scalar arrays can be used as an index, got {self._aval}")
        return int(self._implicit_numpy())

    def __iter__(self) -> Iterator[Array[DT, Any]]:
        if not self._aval.shape:
            raise TypeError("iteration over a rank-0 array")
        for i in range(self._aval.shape[0]):
            yield self[i]  # type: ignore[misc]

    def __repr__(self) -> str:
        body = np.array2string(self._implicit_numpy(), separator=", ", prefix="Array(")
        if not self.size and self._aval.shape != (0,):  # "[]" alone would hide the shape, as NumPy's repr knows
            body += f", shape={self._aval.shape}"
        return f"Array({body}, dtype={_dt.short_name(self._aval.dtype)})"

    def __str__(self) -> str:
        return str(self._implicit_numpy())

    def __format__(self, spec: str) -> str:
        """As NumPy: a rank-0 array formats as its scalar (``f"{loss:.3f}"``); others take only an empty spec."""
        return format(self._implicit_numpy()[()] if not self._aval.ndim else self._implicit_numpy(), spec)

    def __reduce__(self) -> Any:  # pickles the value; unpickling puts it on the default device
        return (asarray, (np.array(self._implicit_numpy()),))

    def __copy__(self) -> Array[DT, Unpack[Shape]]:
        """A new buffer on the same device (so deleting or donating one leaves the other)."""
        self._check_alive()
        if self.is_sharded:  # a pmap result: shares its immutable buffer, which keeps the sharding
            copied: Array[DT, Unpack[Shape]] = Array(self.buffer, self._aval)
        else:
            copied = Array(runtime.device_copy(self.buffer, self.buffer._sharding._internal_device_list[0]), self._aval)
        named = getattr(self, "_named", None)
        if named is not None:  # the NamedSharding it was laid out by
            copied._named = named
        return copied

    def __deepcopy__(self, memo: dict[int, Any]) -> Array[DT, Unpack[Shape]]:
        return self.__copy__()


def device_put(
    x: Any, device: Device | str | Sharding | None = None
) -> Array[Any, Unpack[tuple[Any, ...]]]:
    """Place host data (or an Array) on ``device`` (default: ``default_device()``). An array sharded over several
    devices (a ``pmap`` result) is gathered into one array on ``device``. ``device`` may be a sharding
    (``ts.NamedSharding(mesh, spec)``): the array is then laid out over its devices."""
    if device is not None and not isinstance(device, (str, Device)):
        if hasattr(device, "_device_put"):  # a ts.sharding.Sharding (named_sharding.py)
            return device._device_put(x)
        raise TypeError(f"device_put: device must be a ts.Device, a platform name or a ts.sharding.Sharding, "
                        f"got {device!r}")
    target = as_device(device) if device is not None else default_device()
    if isinstance(x, Array):
        x._check_alive()
        single = runtime.is_single_device(x.buffer)
        if single and x.device == target:
            return x
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("device_to_device", f"{x.aval} to {target}", explicit=True)
        if not single:  # sharded (a pmap result): assembled through the host
            return Array(runtime.device_put(x._host_value(), target.xla), x.aval)
        return Array(runtime.device_copy(x.buffer, target.xla), x.aval)
    return _put_host(as_host_array(x), target, explicit=True)


def _put_host(host: np.ndarray[Any, Any], target: Device, explicit: bool) -> Array[Any, Unpack[tuple[Any, ...]]]:
    """``host`` copied to ``target``, an explicit or implicit transfer as the transfer guard sees it."""
    aval = Aval(host.shape, host.dtype)
    if transfer_guards.ACTIVE[0]:
        transfer_guards.check("host_to_device", f"{aval} to {target}", explicit=explicit)
    return Array(runtime.device_put(host, target.xla), aval)


def as_host_array(x: Any, dtype: Any = None) -> np.ndarray[Any, Any]:
    """Host data with a supported dtype; Python floats/ints/complexes default to f32/i32/c64 as in JAX."""
    if dtype is not None:
        return np.asarray(x, dtype=to_numpy(dtype))
    if isinstance(x, np.generic):  # NumPy scalars keep their dtype (np.float64 is also a Python float)
        return as_host_array(np.asarray(x))
    if isinstance(x, bool):
        return np.asarray(x, dtype=np.bool_)
    if isinstance(x, int):
        if not -(2**31) <= x < 2**31:
            raise ValueError(f"Python integer {x} does not fit the default integer dtype i32; pass a dtype")
        return np.asarray(x, dtype=_dt.DEFAULT_INT)
    if isinstance(x, float):
        return np.asarray(x, dtype=_dt.DEFAULT_FLOAT)
    if isinstance(x, complex):
        return np.asarray(x, dtype=_dt.DEFAULT_COMPLEX)
    try:
        host = np.asarray(x)
    except ValueError as exc:  # a ragged nested list
        raise ValueError(f"asarray: cannot make an array of {type(x).__name__} {x!r:.80}: {exc}") from None
    if hasattr(x, "dtype"):  # arrays (NumPy's, ours, others') keep their dtype
        pass
    elif host.dtype == np.float64:
        host = host.astype(_dt.DEFAULT_FLOAT)  # nested Python lists of floats, as jnp.asarray does
    elif host.dtype == np.complex128:
        host = host.astype(_dt.DEFAULT_COMPLEX)
    elif host.dtype in (np.int64, np.uint64):
        if host.size and not (-(2**31) <= host.min() and host.max() < 2**31):
            raise ValueError("Python integers out of the default integer dtype i32's range; pass a dtype")
        host = host.astype(_dt.DEFAULT_INT)
    native = _dt.canonical(host.dtype)
    return host if host.dtype == native else host.astype(native)  # big-endian data, in native byte order


def asarray(x: Any, dtype: type[DType] | Any = None) -> Array[Any, Unpack[tuple[Any, ...]]]:
    """Host data as an Array on the default device (no copy for an Array of the right dtype)."""
    if isinstance(x, Array):
        if dtype is None:
            return x
        target = to_numpy(dtype)  # converted on its device, not through the host (which would move it to the CPU)
        return x if x.dtype == target else x.astype(target)  # type: ignore[return-value]
    return _put_host(as_host_array(x, dtype), default_device(), explicit=False)  # implicit, as jnp.asarray
