"""Device meshes and partition specs for ``ts.shard_map``: ``Mesh``, ``make_mesh``, ``PartitionSpec`` (``ts.P``).

A ``Mesh`` arranges devices in an n-dimensional grid with one name per grid axis. A ``PartitionSpec`` says, per
array dimension, which mesh axes split it: ``None`` (not split), one axis name, or a tuple of names (split over
their product, the first name the most significant); dimensions past the spec's length are not split, and a mesh
axis a spec does not name holds the array replicated (inputs) or declared equal (outputs).

Deliberate differences from jax: ``make_mesh`` takes the first ``prod(axis_shapes)`` devices when ``devices`` is
not given (jax requires the shape to use every device) and has no ``axis_types``; ``PartitionSpec`` has no
``UNCONSTRAINED`` entries; ``Mesh`` is not a context manager (pass ``mesh=`` to ``shard_map``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .array import Device, default_platform, devices as list_devices
from .staging.source import user_location

SpecEntry: TypeAlias = "str | tuple[str, ...] | None"


class PartitionSpec:
    """How an array is split over a mesh: one entry per leading dimension, each None, a mesh axis name, or a
    tuple of names. ``P("i", None)``, ``P(("i", "j"))``, ``P()`` (every dimension whole: replicated)."""

    __slots__ = ("_parts",)

    def __init__(self, *partitions: SpecEntry) -> None:
        self._parts = tuple(_entry(p) for p in partitions)

    def __len__(self) -> int:
        return len(self._parts)

    def __iter__(self) -> Iterator[SpecEntry]:
        return iter(self._parts)

    def __getitem__(self, index: int) -> SpecEntry:
        return self._parts[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PartitionSpec):
            return self.normalized() == other.normalized()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.normalized())

    def __repr__(self) -> str:
        return f"PartitionSpec({', '.join(repr(p) for p in self._parts)})"

    def normalized(self) -> tuple[tuple[str, ...], ...]:
        """Each entry as a tuple of axis names (``None`` -> ``()``), trailing unsplit entries dropped."""
        parts = [() if p is None else (p,) if isinstance(p, str) else p for p in self._parts]
        while parts and not parts[-1]:
            parts.pop()
        return tuple(parts)

    def axes(self) -> tuple[str, ...]:
        """Every mesh axis the spec names, in the order written."""
        return tuple(name for part in self.normalized() for name in part)


def _entry(part: Any) -> SpecEntry:
    if part is None or isinstance(part, str):
        return part
    if isinstance(part, (tuple, list)) and all(isinstance(p, str) for p in part):
        return tuple(part) if part else None
    raise TypeError(f"PartitionSpec entries must be None, a mesh axis name or a tuple of names, got {part!r}\n"
                    f"  at {user_location()}")


class Mesh:
    """Devices in a grid with named axes: ``Mesh(np.array(ts.devices()[:4]).reshape(2, 2), ("i", "j"))``.
    The device at grid position p runs replica ``p``'s row-major index (its place in ``devices.flat``)."""

    __slots__ = ("devices", "axis_names", "_flat")

    def __init__(self, devices: np.ndarray[Any, Any] | Sequence[Any], axis_names: str | Sequence[str]) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.asarray(devices, dtype=object)
        if grid.ndim != len(names):
            raise ValueError(f"Mesh: devices has {grid.ndim} dimensions {grid.shape} but {len(names)} axis names "
                             f"{names} were given; give one name per dimension")
        if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis names must be distinct strings, got {names}")
        if grid.size == 0:
            raise ValueError(f"Mesh: devices is empty (shape {grid.shape})")
        flat = tuple(grid.flat)
        for d in flat:
            if not isinstance(d, Device):
                raise TypeError(f"Mesh: devices must hold ts.Device objects (from ts.devices()), got {d!r}")
        if len(set(flat)) != len(flat):
            raise ValueError(f"Mesh: a device appears twice ({', '.join(map(str, flat))}); each needs its own place")
        if len({d.platform for d in flat}) != 1:
            raise ValueError(f"Mesh: devices mix platforms ({', '.join(map(str, flat))})")
        grid.flags.writeable = False
        self.devices = grid
        self.axis_names = names
        self._flat = flat

    @property
    def shape(self) -> dict[str, int]:
        """Axis name -> size, in axis order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.devices.shape)

    @property
    def size(self) -> int:
        return len(self._flat)

    @property
    def device_list(self) -> tuple[Device, ...]:
        """The devices in replica order (``devices.flat``)."""
        return self._flat

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mesh):
            return self.axis_names == other.axis_names and self.devices.shape == other.devices.shape and \
                self._flat == other._flat
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.axis_names, self.devices.shape, self._flat))

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({{{axes}}}, devices={[str(d) for d in self._flat]})"


def make_mesh(
    axis_shapes: Sequence[int], axis_names: Sequence[str], *, devices: Sequence[Device] | None = None
) -> Mesh:
    """A mesh of shape ``axis_shapes``: ``devices`` in row-major order (default: the first
    ``prod(axis_shapes)`` devices of the default platform)."""
    shape = tuple(int(s) for s in axis_shapes)
    if any(s < 1 for s in shape):
        raise ValueError(f"make_mesh: axis sizes must be positive, got {shape}")
    count = math.prod(shape)
    if devices is None:
        platform = default_platform()
        available = list_devices(platform)
        if count > len(available):
            more = (f"; set TENSORSTAGE_CPU_DEVICES={count} (or more) in the environment before tensorstage first "
                    "runs anything" if platform == "cpu" else "")
            raise ValueError(f"make_mesh: a mesh of shape {shape} needs {count} devices, but only "
                             f"{len(available)} {platform} device(s) are available{more}")
        chosen = list(available[:count])
    else:
        chosen = list(devices)
        if len(chosen) != count:
            raise ValueError(f"make_mesh: a mesh of shape {shape} needs {count} devices, got {len(chosen)}")
    grid = np.empty(count, dtype=object)
    grid[:] = chosen
    return Mesh(grid.reshape(shape), tuple(axis_names))


P = PartitionSpec

_NAMED = ("NamedSharding", "Shard", "Sharding", "SingleDeviceSharding")
if TYPE_CHECKING:
    from .named_sharding import NamedSharding, Shard, Sharding, SingleDeviceSharding


def __getattr__(name: str) -> Any:
    """The shardings of ``named_sharding.py``, which builds on Mesh and PartitionSpec (so imports this module)."""
    if name in _NAMED:
        from . import named_sharding

        return getattr(named_sharding, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Mesh", "NamedSharding", "P", "PartitionSpec", "Shard", "Sharding", "SingleDeviceSharding", "make_mesh"]
