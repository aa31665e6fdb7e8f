"""Arrays laid out by an HloSharding over several devices, and GSPMD executables that XLA partitions itself.

Buffer level only (``dsl/named_sharding.py`` builds the shardings from a mesh and a PartitionSpec,
``dsl/gspmd_call.py`` runs programs):

- ``put``: host data to one global array, each device given its block (``batched_device_put`` with an
  ``xc.GSPMDSharding``; the blocks are copies, never views of the caller's memory).
- ``gather``: the host value of a global array of any HloSharding (tiled, partially replicated, uneven blocks
  padded by XLA), one device's block at a time through ``reorder_shards`` (putting device k first, no copy) and
  DLPack: it never makes jaxlib build single-device arrays (which imports jax when installed: JAXLIB.md §1.4).
- ``annotate`` / ``compile_partitioned``: a module whose parameters carry ``mhlo.sharding`` attributes, compiled
  with ``num_partitions`` = the number of devices and ``use_spmd_partitioning``; XLA propagates the shardings of
  the results left unconstrained (``allow_spmd_sharding_propagation_to_output``), read back with
  ``get_output_shardings()``. Callers run it with ``spmd.run``, which waits for the results.

Deliberate differences from jax: GSPMD, not Shardy (jaxlib 0.10.2 needs ``use_shardy_partitioner`` for ``sdy``
modules and GSPMD works on every supported jaxlib); on CPU each launch of a partitioned program waits for its
results before the call returns (back-to-back collective launches can abort XLA's CPU rendezvous: JAXLIB.md §2),
as ``lowering/spmd.py`` does for pmap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from jaxlib import _jax  # type: ignore[attr-defined]  # a compiled module without stubs
from jaxlib import xla_client as xc

from . import backend, runtime
from .spmd import output_handler

Index = tuple[slice, ...]


def hlo_sharding(text: str) -> Any:
    return xc.HloSharding.from_string(text)


def tile_text(tiles: Sequence[int], assignment: Sequence[int], replicated_last: bool) -> str:
    """The HloSharding text of an array tiled ``tiles`` (per dimension, then the replication count when
    ``replicated_last``) whose tiles go to the device-list positions ``assignment`` (row-major over tiles)."""
    if math.prod(tiles) == 1 or (replicated_last and math.prod(tiles[:-1]) == 1):
        return "{replicated}"
    dims = ",".join(str(t) for t in tiles)
    ids = ",".join(str(i) for i in assignment)
    return f"{{devices=[{dims}]{ids}{' last_tile_dim_replicate' if replicated_last else ''}}}"


def same_sharding(a: Any, b: Any) -> bool:
    """Whether two ``xc.GSPMDSharding``s lay arrays out alike (jaxlib's own ``==`` compares objects)."""
    return a is b or (
        a._internal_device_list == b._internal_device_list and a._hlo_sharding == b._hlo_sharding
    )


def tile_grid(sharding: Any, ndim: int) -> tuple[np.ndarray[Any, Any], int]:
    """``(grid, copies)``: per tile of a rank-``ndim`` array (shape: tiles per dimension), the device-list
    positions holding it, along a last axis of length ``copies`` (partial replication)."""
    hlo = sharding._hlo_sharding
    count = len(sharding._internal_device_list)
    if hlo.is_replicated() or not ndim:
        return np.arange(count).reshape((1,) * ndim + (count,)), count
    dims = list(hlo.tile_assignment_dimensions())
    devices = np.asarray(hlo.tile_assignment_devices(), dtype=np.int64).reshape(dims)
    if len(dims) == ndim:
        return devices[..., None], 1
    if len(dims) != ndim + 1 or not hlo.replicate_on_last_tile_dim():
        raise NotImplementedError(f"arrays with sharding {hlo} (rank {ndim}) are not supported")
    return devices, dims[-1]


def device_indices(sharding: Any, shape: tuple[int, ...]) -> list[Index]:
    """Per device-list position, the block of a ``shape`` array it holds (slices; blocks of a dimension that
    does not divide evenly are ``ceil(n / tiles)`` long, the last ones short or empty, as XLA pads them)."""
    grid, _ = tile_grid(sharding, len(shape))
    out: list[Index] = [()] * len(sharding._internal_device_list)
    for tile in np.ndindex(*grid.shape[:-1]):
        index = tuple(_block(n, t, i) for n, t, i in zip(shape, grid.shape, tile))
        for position in grid[tile]:
            out[int(position)] = index
    return out


def _block(n: int, tiles: int, i: int) -> slice:
    if tiles == 1:
        return slice(None)
    size = -(-n // tiles)
    return slice(min(i * size, n), min((i + 1) * size, n))


def put(host: np.ndarray[Any, Any], sharding: Any) -> Any:
    """``host`` as one global array laid out by ``sharding`` (an ``xc.GSPMDSharding``); blocks are copies."""
    data = runtime.contiguous(host)
    aval = runtime.buffer_aval(data.shape, data.dtype)
    devices = list(sharding._internal_device_list)
    blocks = [np.array(data[index], copy=True) for index in device_indices(sharding, data.shape)]
    return xc.batched_device_put(aval, sharding, blocks, devices, True, True, xc.HostBufferSemantics.ZERO_COPY, True)


def assemble(shape: tuple[int, ...], dtype: np.dtype[Any], sharding: Any, buffers: Sequence[Any]) -> Any:
    """One global array from single-device buffers, one per device of ``sharding`` in its device-list order
    (no copy)."""
    aval = runtime.buffer_aval(shape, dtype)
    if runtime._NEEDS_SKIP_CHECKS:
        return xc.ArrayImpl(aval, sharding, list(buffers), True, _skip_checks=True)
    return xc.ArrayImpl(aval, sharding, list(buffers), True)


def block_to_host(buffer: Any, position: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The block of a global array of ``shape`` held by its device-list position ``position``, padded as the
    device stores it where a dimension does not divide evenly (a pmap result's blocks drop axis 0: reshaped)."""
    grid, _ = tile_grid(buffer._sharding, len(shape))
    padded = tuple(-(-n // t) for n, t in zip(shape, grid.shape))
    return shard_to_host(buffer, position, dtype).reshape(padded)


def shard_to_host(buffer: Any, position: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The block of ``buffer`` held by its device-list position ``position``, as that device stores it."""
    if position == 0:
        return runtime._first_shard_to_host(buffer, dtype)
    sharding = buffer._sharding
    devices = tuple(sharding._internal_device_list)
    if runtime._REORDER is None:  # a jaxlib without reorder_shards: per-shard arrays (an import attempt each)
        return runtime.to_host(buffer._arrays[position], dtype)
    rotated = xc.GSPMDSharding(xc.DeviceList(devices[position:] + devices[:position]), sharding._hlo_sharding)
    return runtime._first_shard_to_host(runtime._REORDER(buffer, rotated, _jax.ArrayCopySemantics.REUSE_INPUT), dtype)


def gather(buffer: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The host value (read-only) of a global array of ``shape`` with any tiled or replicated sharding."""
    sharding = buffer._sharding
    grid, _ = tile_grid(sharding, len(shape))
    out = np.empty(shape, dtype)
    for tile in np.ndindex(*grid.shape[:-1]):
        index = tuple(_block(n, t, i) for n, t, i in zip(shape, grid.shape, tile))
        target = out[index]
        if target.size:  # blocks past the end of an unevenly split dimension hold only XLA's padding
            block = block_to_host(buffer, int(grid[tile][0]), shape, dtype)
            out[index] = block[tuple(slice(0, n) for n in target.shape)]
    out.flags.writeable = False
    return out


# ------------------------------------------------------------------------------------ partitioned programs

# While a partitioned module is being emitted: its devices, in partition order (sharding_constraint reads them).
PARTITION_DEVICES: ContextVar[tuple[Any, ...] | None] = ContextVar("tensorstage_partition_devices", default=None)


@contextmanager
def partitioning(devices: tuple[Any, ...]) -> Iterator[None]:
    """Emit modules partitioned over ``devices`` (``ts.Device``s) while in effect."""
    token = PARTITION_DEVICES.set(devices)
    try:
        yield
    finally:
        PARTITION_DEVICES.reset(token)


def constraint_text(sharding: Any, ndim: int, devices: tuple[Any, ...]) -> str:
    """The ``mhlo.sharding`` of a sharding constraint in a module partitioned over ``devices``."""
    if set(sharding.mesh.device_list) != set(devices):
        raise ValueError(f"with_sharding_constraint: {sharding!r} is over other devices than the program, which runs "
                         f"on {', '.join(str(d) for d in devices)}")
    return str(sharding.hlo_text(ndim, devices))


_TENSOR = r"(?:tensor<(?:[^<>]|<[^<>]*>)*>|!stablehlo\.token)"
_ARG = re.compile(rf"(%arg(\d+): {_TENSOR})( \{{([^}}]*)\}})?")


def annotate(module: str, num_partitions: int, in_texts: Sequence[str | None], out_texts: Sequence[str | None]) -> str:
    """``module`` (``emit``'s text, one replica) as a ``num_partitions``-way GSPMD module: ``mhlo.sharding`` on
    each parameter and result whose text is given (None: left to XLA's propagation)."""
    lines = module.split("\n")
    main = next(k for k, line in enumerate(lines) if line.lstrip().startswith("func.func public @main("))
    signature = lines[main]
    header = "\n".join(lines[:main]).replace(
        "mhlo.num_partitions = 1 : i32", f"mhlo.num_partitions = {num_partitions} : i32", 1
    )
    body = "\n".join(lines[main + 1 :])

    def arg(match: re.Match[str]) -> str:
        text = in_texts[int(match.group(2))]
        attrs = [match.group(4)] if match.group(4) else []
        if text is not None:
            attrs.append(f'mhlo.sharding = "{text}"')
        return match.group(1) + (f" {{{', '.join(attrs)}}}" if attrs else "")

    params, arrow, results = signature.partition(") -> (")
    params = _ARG.sub(arg, params)
    types = re.findall(_TENSOR, results)
    annotated = [t if s is None else f'{t} {{mhlo.sharding = "{s}"}}' for t, s in zip(types, out_texts)]
    results = results[: results.index(types[0])] + ", ".join(annotated) + ") {" if types else results
    return "\n".join([header, params + arrow + results, body])


def compile_partitioned(text: str, devices: Sequence[Any], propagate: Sequence[bool]) -> Any:
    """Compile a GSPMD module for ``devices`` (partition p runs on ``devices[p]``); the shardings of the results
    ``propagate`` marks are XLA's choice (the others keep the module's ``mhlo.sharding``, which XLA would
    otherwise override)."""
    options = xc.CompileOptions()
    options.num_partitions = len(devices)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.allow_spmd_sharding_propagation_to_output = list(propagate) or [False]
    ids = np.asarray([[d.id for d in devices]], dtype=np.int32)
    options.device_assignment = xc.DeviceAssignment.create(ids)
    return backend.compile_module(text, devices, options)


def output_shardings(executable: Any, devices: Sequence[Any], count: int) -> list[Any]:
    """The executable's result shardings as ``xc.GSPMDSharding``s over ``devices``."""
    device_list = xc.DeviceList(tuple(devices))
    ops = executable.get_output_shardings()
    if ops is None or len(ops) != count:
        return [xc.GSPMDSharding(device_list, xc.HloSharding.replicate()) for _ in range(count)]
    return [xc.GSPMDSharding(device_list, xc.HloSharding.from_proto(op)) for op in ops]


def handlers(out_avals: Sequence[tuple[tuple[int, ...], np.dtype[Any]]], shardings: Sequence[Any]) -> list[Any]:
    return [output_handler(shape, dtype, sharding) for (shape, dtype), sharding in zip(out_avals, shardings)]
