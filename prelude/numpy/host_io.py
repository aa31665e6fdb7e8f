"""Arrays from and to the host: NumPy's ``load``, ``save``, ``savez``, ``frombuffer``, ``fromfile``, ``fromiter``,
``fromstring`` and ``from_dlpack``, through NumPy.

Readers give a device array (``ts.Array``, on the default device) of the dtype NumPy read; a dtype tensorstage
lacks (object, strings, datetime64, longdouble...) is refused with the list of supported ones. ``dtype=`` takes any
dtype spelling (``tnp.float32``, ``"int8"``, ``np.float64``); ``float``, ``int`` and ``complex`` mean tensorstage's
defaults f32, i32 and c64 (NumPy: f64, i64, c128), so ``frombuffer(b)`` reads 4-byte floats, as ``jnp.frombuffer``
does. NumPy stores bfloat16 as 2-byte void (``|V2``): ``load`` reads that back as bfloat16, as JAX does.

Writers take device arrays, NumPy arrays and anything NumPy takes; a staged value while staging is a
``ConcretizationError`` (its value does not exist yet: return it from the program and save the result).

``from_dlpack`` goes through ``numpy.from_dlpack``: the producer must be on the CPU, and the data are copied to
the default device (jaxlib's zero-copy DLPack import is not reachable without importing jax).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO, Any

import numpy as np
from typing_extensions import Unpack

from ...array import Array, asarray
from ...staging import dtypes as _dt
from ...staging.errors import ConcretizationError
from ...staging.source import user_location
from ...tensor import Tensor
from ._core import _named
from .names import _dtype_of

__all__ = ["from_dlpack", "frombuffer", "fromfile", "fromiter", "fromstring", "load", "save", "savez"]

AnyArray = Array[Any, Unpack[tuple[Any, ...]]]
FileLike = str | os.PathLike[str] | IO[bytes]

_VOID2 = np.dtype("V2")


def host_value(op_name: str, x: Any) -> Any:
    """``x`` as host data (a device array read back; anything else as it is); a staged value is an error."""
    if isinstance(x, Array):
        return x.numpy()
    if isinstance(x, Tensor):
        raise ConcretizationError(
            f"needs the value of a staged {x.aval}, which does not exist while staging; return it from the program "
            "and pass the result", op_name, user_location(),
        )
    return x


def _device_array(op_name: str, host: np.ndarray[Any, Any]) -> AnyArray:
    try:
        return asarray(host)
    except (TypeError, ValueError) as exc:
        raise _named(exc, op_name) from None


def _read_dtype(op_name: str, dtype: Any) -> np.dtype[Any]:
    """The dtype to read (byte order included), refused before reading if tensorstage lacks it."""
    try:
        read = _dtype_of(dtype)
        _dt.canonical(read)
    except (TypeError, ValueError) as exc:
        raise _named(exc, op_name) from None
    return read


# ---------------------------------------------------------------------------------------------- files


def save(file: FileLike, arr: Any) -> None:
    """Write ``arr`` to a ``.npy`` file (NumPy's ``save``; the ``.npy`` suffix is added to a path without one)."""
    np.save(file, np.asarray(host_value("save", arr)), allow_pickle=False)


def savez(file: FileLike, *args: Any, **kwds: Any) -> None:
    """Write several arrays to an uncompressed ``.npz`` file (NumPy's ``savez``: positional arrays are named
    ``arr_0``, ``arr_1``, ...; keyword ones by their keyword)."""
    positional = [np.asarray(host_value("savez", a)) for a in args]
    named = {k: np.asarray(host_value("savez", v)) for k, v in kwds.items()}
    np.savez(file, *positional, allow_pickle=False, **named)


def load(file: FileLike, *, mmap_mode: str | None = None) -> AnyArray | dict[str, AnyArray]:
    """Read a ``.npy`` file as a device array, or a ``.npz`` file as a dict of them by name (read at once, the
    file closed). Pickled objects are refused (``allow_pickle=False``, NumPy's default)."""
    loaded = np.load(file, mmap_mode=mmap_mode, allow_pickle=False)  # type: ignore[arg-type]
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            return {name: _loaded_array(loaded[name]) for name in loaded.files}
    return _loaded_array(loaded)


def _loaded_array(host: np.ndarray[Any, Any]) -> AnyArray:
    if host.dtype == _VOID2:  # how NumPy writes bfloat16
        host = host.view(_dt.bfloat16)
    return _device_array("load", np.asarray(host))


def fromfile(file: FileLike, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0) -> AnyArray:
    """Read ``count`` (-1: all) values of ``dtype`` from a binary file (``sep=""``) or a text one, skipping
    ``offset`` bytes first (NumPy's ``fromfile``)."""
    read_dtype = _read_dtype("fromfile", dtype)
    host = np.fromfile(file, dtype=read_dtype, count=count, sep=sep, offset=offset)
    return _device_array("fromfile", host)


# ---------------------------------------------------------------------------------------------- buffers


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> AnyArray:
    """The bytes of ``buffer`` (anything with the buffer protocol) read as ``count`` (-1: all) values of
    ``dtype`` from byte ``offset`` (NumPy's ``frombuffer``; the data are copied to the device)."""
    read_dtype = _read_dtype("frombuffer", dtype)
    try:
        host = np.frombuffer(buffer, dtype=read_dtype, count=count, offset=offset)
    except (TypeError, ValueError) as exc:
        raise _named(exc, "frombuffer") from None
    return _device_array("frombuffer", host)


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> AnyArray:
    """Numbers in ``string`` separated by ``sep`` (required, as in JAX: NumPy 2 removed the binary mode; use
    ``frombuffer`` for bytes) as an array of ``dtype``."""
    if not sep:
        raise _named(ValueError("sep must be a separator such as ' ' or ','; for binary data use frombuffer"),
                     "fromstring")
    read_dtype = _read_dtype("fromstring", dtype)
    try:
        host = np.fromstring(string, dtype=read_dtype, count=count, sep=sep)
    except (TypeError, ValueError) as exc:
        raise _named(exc, "fromstring") from None
    return _device_array("fromstring", host)


def fromiter(iter: Iterable[Any], dtype: Any, count: int = -1) -> AnyArray:  # noqa: A002 - NumPy's name
    """A 1-D array of the values ``iter`` yields (the first ``count`` of them; -1: all), of ``dtype`` (NumPy's
    ``fromiter``; values are read on the host)."""
    read_dtype = _read_dtype("fromiter", dtype)
    try:
        host = np.fromiter(iter, dtype=read_dtype, count=count)
    except (TypeError, ValueError) as exc:
        raise _named(exc, "fromiter") from None
    return _device_array("fromiter", host)


def from_dlpack(x: Any, /, *, copy: bool | None = None) -> AnyArray:
    """An array from a DLPack producer on the CPU (an object with ``__dlpack__``), copied to the default device
    through ``numpy.from_dlpack`` (see the module docstring); a device array is returned as it is. ``copy=False``
    is refused for other producers: the copy cannot be avoided."""
    if isinstance(x, Array):
        return x  # already one (immutable: sharing it is a copy in all but cost)
    if copy is False:
        raise _named(ValueError("copy=False: the data are always copied (through the host)"), "from_dlpack")
    if not hasattr(x, "__dlpack__"):
        raise _named(TypeError(f"cannot import {type(x).__name__}: it is not a DLPack producer (no __dlpack__); use "
                               "tnp.asarray"), "from_dlpack")
    try:
        host = np.from_dlpack(x)
    except (TypeError, ValueError, RuntimeError, BufferError) as exc:
        raise _named(TypeError(f"cannot import {type(x).__name__} through NumPy's DLPack: {exc}"),
                     "from_dlpack") from None
    return _device_array("from_dlpack", np.array(host))
