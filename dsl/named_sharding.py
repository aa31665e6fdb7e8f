"""Shardings as in ``jax.sharding``: ``NamedSharding(mesh, spec)``, ``SingleDeviceSharding(device)``, and the
Arrays they lay out (``ts.device_put(x, sharding)``, ``make_array_from_callback``,
``make_array_from_single_device_arrays``, ``x.sharding``, ``x.addressable_shards``).

An Array laid out by a NamedSharding is ONE global jaxlib array whose ``xc.GSPMDSharding`` is built from the mesh
and the spec (no jax import): dimension d of the array is split over the product of the mesh axes spec[d] names
(the first the most significant), and the mesh axes the spec does not name hold copies (partial replication).
Reading it back (``np.asarray``) assembles the blocks on the host; programs given such Arrays compile one GSPMD
executable (``dsl/gspmd_call.py``); eager ops and programs pinned to one device read them through the host.

Deliberate differences from jax: no ``memory_kind``, ``AxisType`` or abstract meshes; ``device_put`` and the
``make_array_*`` functions require every split dimension to divide evenly (as jax) while results of programs may
be split unevenly by XLA (their blocks are then padded on the devices, as in jax); a result whose layout no
PartitionSpec over the arguments' mesh describes gets a NamedSharding over a mesh of its own (the tile grid,
axes named ``"t0"``, ``"t1"``, ... and ``"r"`` for copies); ``addressable_shards[k].data`` is a copy made
through the host (jaxlib's per-shard arrays would import jax: JAXLIB.md §1.4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

import attrs
import numpy as np
from jaxlib import xla_client as xc
from typing_extensions import Unpack

from . import transfer_guards
from .array import Array, Device, _wrap_device, as_host_array, device_put as _device_put_one
from .lowering import gspmd, runtime
from .sharding import Mesh, PartitionSpec
from .staging import dtypes as _dt
from .staging.ir import Aval
from .staging.source import user_location

Index = tuple[slice, ...]
AnyArray = Array[Any, Unpack[tuple[Any, ...]]]


class Sharding:
    """How an array is laid out over devices (the base of ``NamedSharding`` and ``SingleDeviceSharding``)."""

    __slots__ = ()

    @property
    def device_set(self) -> set[Device]:
        return set(self._device_list())

    @property
    def addressable_devices(self) -> set[Device]:
        """Every device of the sharding (this process addresses them all: one host)."""
        return self.device_set

    @property
    def num_devices(self) -> int:
        return len(self._device_list())

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError

    def _device_list(self) -> tuple[Device, ...]:
        raise NotImplementedError

    def _xla(self, ndim: int) -> Any:
        """The ``xc.GSPMDSharding`` of a rank-``ndim`` array."""
        raise NotImplementedError

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        """Each device's block of an array of ``global_shape`` (``slice(None)`` for undivided dimensions)."""
        shape = tuple(global_shape)
        indices = gspmd.device_indices(self._xla(len(shape)), shape)
        return dict(zip(self._device_list(), indices))

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        return self.devices_indices_map(global_shape)

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of each device's block; raises ValueError where a split dimension does not divide evenly."""
        return tuple(global_shape)

    def _device_put(self, x: Any) -> AnyArray:
        return put(x, self)


@attrs.frozen(repr=False)
class SingleDeviceSharding(Sharding):
    """The whole array on one device (the sharding of every ordinary Array)."""

    device: Device

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.device, Device):
            raise TypeError(f"SingleDeviceSharding: expected a ts.Device, got {self.device!r}")

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device})"

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def _device_list(self) -> tuple[Device, ...]:
        return (self.device,)

    def _xla(self, ndim: int) -> Any:
        return runtime.single_device_sharding(self.device.xla)

    def _device_put(self, x: Any) -> AnyArray:
        return _device_put_one(x, self.device)


class NamedSharding(Sharding):
    """An array split over a ``Mesh`` by a ``PartitionSpec``: ``NamedSharding(mesh, P("dp", None))`` splits
    dimension 0 over mesh axis ``"dp"`` and holds copies along the other axes."""

    __slots__ = ("mesh", "spec", "_parts", "_by_rank")

    def __init__(self, mesh: Mesh, spec: PartitionSpec) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a ts.sharding.Mesh, got {mesh!r:.80}\n  at {user_location()}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec (ts.P(...)), got {spec!r:.80}\n"
                            f"  at {user_location()}")
        used = spec.axes()
        for name in used:
            if name not in mesh.axis_names:
                raise ValueError(f"NamedSharding: {spec} names axis {name!r}, which mesh {mesh} does not have\n"
                                 f"  at {user_location()}")
        if len(set(used)) != len(used):
            raise ValueError(f"NamedSharding: {spec} uses a mesh axis twice\n  at {user_location()}")
        self.mesh = mesh
        self.spec = spec
        self._parts = spec.normalized()
        self._by_rank: dict[int, Any] = {}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NamedSharding):
            return self.mesh == other.mesh and self._parts == other._parts
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.mesh, self._parts))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[name] == 1 for name in self.spec.axes())

    def _device_list(self) -> tuple[Device, ...]:
        return self.mesh.device_list

    def tiles(self, ndim: int) -> tuple[int, ...]:
        """How many blocks each of a rank-``ndim`` array's dimensions is split into."""
        self._check_rank(ndim)
        sizes = self.mesh.shape
        parts = self._parts + ((),) * (ndim - len(self._parts))
        return tuple(math.prod(sizes[name] for name in part) for part in parts)

    def _check_rank(self, ndim: int) -> None:
        if len(self._parts) > ndim:
            raise ValueError(f"{self!r} splits {len(self._parts)} dimensions, but the array has rank {ndim}")

    def with_unsplit_dim(self, d: int) -> NamedSharding:
        """This sharding for an array with a new dimension at ``d``, not split (vmap's batch dimension)."""
        parts: list[Any] = [p or None for p in self._parts]
        parts += [None] * (d - len(parts))
        parts.insert(d, None)
        return NamedSharding(self.mesh, PartitionSpec(*parts))

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = tuple(global_shape)
        tiles = self.tiles(len(shape))
        for d, (n, t) in enumerate(zip(shape, tiles)):
            if n % t:
                raise ValueError(f"{self!r}: dimension {d} of shape {shape} (size {n}) does not divide into {t} "
                                 f"blocks over mesh axes {self._parts[d]}")
        return tuple(n // t for n, t in zip(shape, tiles))

    def hlo_text(self, ndim: int, devices: Sequence[Device] | None = None) -> str:
        """The HloSharding text (``mhlo.sharding``) of a rank-``ndim`` array; tile ids index ``devices`` (the same
        devices as the mesh's in another order; default ``mesh.device_list``)."""
        tiles = self.tiles(ndim)
        names = list(self.mesh.axis_names)
        used = [names.index(name) for part in self._parts for name in part]
        rest = [k for k in range(len(names)) if k not in used]
        copies = math.prod(self.mesh.axis_sizes[k] for k in rest)
        ids = np.arange(self.mesh.size).reshape(self.mesh.axis_sizes).transpose(used + rest).ravel()
        if devices is not None and tuple(devices) != self.mesh.device_list:
            where = {d: k for k, d in enumerate(devices)}
            ids = np.asarray([where[d] for d in self.mesh.device_list])[ids]
        return gspmd.tile_text(tiles + ((copies,) if copies > 1 else ()), [int(i) for i in ids], copies > 1)

    def _xla(self, ndim: int) -> Any:
        cached = self._by_rank.get(ndim)
        if cached is None:
            cached = self._xla_over(ndim, self.mesh.device_list)
            self._by_rank[ndim] = cached
        return cached

    def _xla_over(self, ndim: int, devices: Sequence[Device]) -> Any:
        """The ``xc.GSPMDSharding`` of a rank-``ndim`` array over ``devices`` (the mesh's, in that order)."""
        device_list = xc.DeviceList(tuple(d.xla for d in devices))
        return xc.GSPMDSharding(device_list, gspmd.hlo_sharding(self.hlo_text(ndim, devices)))


@attrs.frozen
class Shard:
    """One device's block of an Array: ``index`` (slices of the global array) and ``data`` (an Array on
    ``device``); ``replica_id`` numbers the copies of a replicated block."""

    device: Device
    index: Index
    replica_id: int
    data: AnyArray


# --------------------------------------------------------------------------------------------- the Arrays


def with_sharding(buffer: Any, aval: Aval, sharding: Sharding) -> AnyArray:
    """An Array of ``buffer`` that reports ``sharding`` (and so runs in GSPMD programs when it spans devices)."""
    out: AnyArray = Array(buffer, aval)
    out._named = sharding
    return out


def sharding_of(x: AnyArray) -> Sharding:
    """``x.sharding``: the NamedSharding it was made with, else its device's, else one read from its layout."""
    named = getattr(x, "_named", None)
    if named is not None:
        return named  # type: ignore[no-any-return]
    if runtime.is_single_device(x.buffer):
        return SingleDeviceSharding(x.device)
    return own_mesh_sharding(x.buffer._sharding, x.ndim)


def put(x: Any, sharding: Sharding) -> AnyArray:
    """``ts.device_put(x, sharding)``: host data or an Array laid out by ``sharding``."""
    if isinstance(x, Array):
        x._check_alive()
        target = sharding._xla(x.ndim)
        if gspmd.same_sharding(x.buffer._sharding, target):
            return x if getattr(x, "_named", None) == sharding else with_sharding(x.buffer, x.aval, sharding)
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("device_to_device", f"{x.aval} to {sharding}", explicit=True)
        host = x._host_value()
    else:
        host = as_host_array(x)
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("host_to_device", f"{Aval(host.shape, host.dtype)} to {sharding}", explicit=True)
    sharding.shard_shape(host.shape)  # the split dimensions must divide evenly
    aval = Aval(host.shape, host.dtype)
    return with_sharding(gspmd.put(host, sharding._xla(host.ndim)), aval, sharding)


def addressable_shards(x: AnyArray) -> list[Shard]:
    """Each device's block of ``x``, in the order of its sharding's devices."""
    x._check_alive()
    sharding = sharding_of(x)
    devices = sharding._device_list()
    if len(devices) == 1:
        return [Shard(devices[0], tuple(slice(None) for _ in x.shape), 0, x)]
    indices = gspmd.device_indices(x.buffer._sharding, x.shape)
    copies: dict[tuple[tuple[int, int], ...], int] = {}
    shards = []
    for k, (device, index) in enumerate(zip(devices, indices)):
        bounds = tuple(s.indices(n)[:2] for s, n in zip(index, x.shape))
        replica = copies[bounds] = copies.get(bounds, -1) + 1
        valid = tuple(slice(0, stop - start) for start, stop in bounds)  # XLA pads uneven blocks
        block = np.array(gspmd.block_to_host(x.buffer, k, x.shape, x.dtype)[valid])
        shards.append(Shard(device, index, replica, _device_put_one(block, device)))
    return shards


def make_array_from_callback(
    shape: Sequence[int], sharding: Sharding, data_callback: Callable[[Index], Any]
) -> AnyArray:
    """An Array of ``shape`` laid out by ``sharding`` whose block on each device is ``data_callback(index)``
    (called once per device with that device's slices of the global array)."""
    global_shape = _checked_shape(shape, "make_array_from_callback")
    block_shape = sharding.shard_shape(global_shape)
    xla = sharding._xla(len(global_shape))
    blocks: list[np.ndarray[Any, Any]] = []
    for index in gspmd.device_indices(xla, global_shape):
        value = data_callback(index)
        block = value._host_value() if isinstance(value, Array) else as_host_array(value)
        if block.shape != block_shape:
            raise ValueError(f"make_array_from_callback: the callback gave shape {block.shape} for index {index}, "
                             f"expected the block shape {block_shape} of {global_shape} under {sharding!r}")
        if blocks and block.dtype != blocks[0].dtype:
            raise TypeError(f"make_array_from_callback: the callback gave dtypes {_dt.short_name(blocks[0].dtype)} "
                            f"and {_dt.short_name(block.dtype)}; every block needs the same dtype")
        blocks.append(block)
    host_dtype = blocks[0].dtype if blocks else np.dtype(np.float32)
    return _from_blocks(global_shape, host_dtype, sharding, blocks)


def _from_blocks(
    shape: tuple[int, ...], dtype: np.dtype[Any], sharding: Sharding, blocks: list[np.ndarray[Any, Any]]
) -> AnyArray:
    aval = Aval(shape, dtype)
    if transfer_guards.ACTIVE[0]:
        transfer_guards.check("host_to_device", f"{aval} to {sharding}", explicit=True)
    xla = sharding._xla(len(shape))
    copies = [np.array(runtime.contiguous(b), copy=True) for b in blocks]
    devices = list(xla._internal_device_list)
    buffer = xc.batched_device_put(runtime.buffer_aval(shape, dtype), xla, copies, devices, True, True,
                                         xc.HostBufferSemantics.ZERO_COPY, True)
    return with_sharding(buffer, aval, sharding)


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Sharding, arrays: Sequence[AnyArray]
) -> AnyArray:
    """An Array of ``shape`` laid out by ``sharding`` from one single-device Array per device of the sharding
    (each that device's block, in any order); no copy."""
    global_shape = _checked_shape(shape, "make_array_from_single_device_arrays")
    block_shape = sharding.shard_shape(global_shape)
    devices = sharding._device_list()
    by_device: dict[Device, AnyArray] = {}
    for a in arrays:
        if not isinstance(a, Array) or a.is_sharded:
            raise TypeError(f"make_array_from_single_device_arrays: expected single-device ts.Arrays, got {a!r:.80}")
        a._check_alive()
        if a.device in by_device or a.device not in devices:
            raise ValueError(f"make_array_from_single_device_arrays: array on {a.device} is "
                             + ("the second on that device" if a.device in by_device else f"not on {sharding!r}"))
        by_device[a.device] = a
    if len(by_device) != len(devices):
        missing = ", ".join(str(d) for d in devices if d not in by_device)
        raise ValueError(f"make_array_from_single_device_arrays: no array for device(s) {missing} of {sharding!r}")
    first = by_device[devices[0]]
    for d in devices:
        a = by_device[d]
        if a.shape != block_shape or a.dtype != first.dtype:
            raise ValueError(f"make_array_from_single_device_arrays: the array on {d} is "
                             f"{_dt.short_name(a.dtype)}{list(a.shape)}, expected "
                             f"{_dt.short_name(first.dtype)}{list(block_shape)} (the block of {global_shape})")
    dtype = np.dtype(first.dtype)
    buffer = gspmd.assemble(global_shape, dtype, sharding._xla(len(global_shape)),
                            [by_device[d].buffer for d in devices])
    return with_sharding(buffer, Aval(global_shape, dtype), sharding)


def _checked_shape(shape: Sequence[int], what: str) -> tuple[int, ...]:
    try:
        out = tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be a sequence of ints, got {shape!r:.80}") from None
    if any(n < 0 for n in out):
        raise ValueError(f"{what}: negative dimension in shape {out}")
    return out


# ------------------------------------------------------------------------- shardings read back from layouts


def from_layout(xla: Any, ndim: int, mesh: Mesh | None) -> NamedSharding:
    """The NamedSharding of a layout (an ``xc.GSPMDSharding`` over ``mesh.device_list``, e.g. a program's
    result): a PartitionSpec over ``mesh`` where one describes it, else one over the layout's own mesh."""
    if mesh is not None:
        for spec in _candidate_specs(xla, ndim, mesh):
            candidate = NamedSharding(mesh, spec)
            if gspmd.same_sharding(candidate._xla(ndim), xla):
                candidate._by_rank[ndim] = xla
                return candidate
    return own_mesh_sharding(xla, ndim)


def _candidate_specs(xla: Any, ndim: int, mesh: Mesh) -> list[PartitionSpec]:
    """Specs over ``mesh`` whose tile counts match the layout's: the mesh axes (those longer than 1) in each
    order, taken greedily dimension by dimension; the layout's device order decides which one matches."""
    grid, copies = gspmd.tile_grid(xla, ndim)
    tiles = grid.shape[:-1]
    axes = [name for name, size in mesh.shape.items() if size > 1]
    sizes = mesh.shape
    out = []
    for order in permutations(axes):
        parts: list[tuple[str, ...]] = []
        rest = list(order)
        for t in tiles:
            part: list[str] = []
            while math.prod(sizes[a] for a in part) < t and rest:
                part.append(rest.pop(0))
            parts.append(tuple(part))
        if all(math.prod(sizes[a] for a in p) == t for p, t in zip(parts, tiles)) and \
                math.prod(sizes[a] for a in rest) == copies:
            entries: list[str | tuple[str, ...] | None] = [p[0] if len(p) == 1 else (p or None) for p in parts]
            while entries and entries[-1] is None:
                entries.pop()
            out.append(PartitionSpec(*entries))
    return out


def own_mesh_sharding(xla: Any, ndim: int) -> NamedSharding:
    """A NamedSharding reproducing ``xla``'s layout over a mesh shaped like its tile grid."""
    grid, copies = gspmd.tile_grid(xla, ndim)
    devices = [_wrap_device(d) for d in xla._internal_device_list]
    names = [f"t{d}" for d in range(ndim)] + ["r"]
    cells = np.empty(grid.size, dtype=object)
    cells[:] = [devices[int(p)] for p in grid.ravel()]
    mesh = Mesh(cells.reshape(grid.shape), names)
    spec = PartitionSpec(*[f"t{d}" if grid.shape[d] > 1 else None for d in range(ndim)])
    return NamedSharding(mesh, spec)
