"""``pmap``: run a function on several devices at once, one slice of the mapped axis per device (SPMD).

``pmap(f, axis_name="i")`` stages ``f`` once on per-device types (the mapped axis removed) with ``"i"`` bound, so
collectives (``psum(x, "i")``, ...) become primitives in the graph; lowers that graph to ONE StableHLO module with
``num_replicas = n``; compiles it for n devices; puts slice k of every mapped argument on device k (unmapped
arguments are replicated); runs every replica; and returns each result with the device axis at ``out_axes``.

CPU devices: tensorstage's CPU client has ``TENSORSTAGE_CPU_DEVICES`` devices (default 1), read when it is
first created, so set it before tensorstage runs anything (``TENSORSTAGE_CPU_DEVICES=8 python train.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .array import Array, Device, as_host_array, device_put, devices as list_devices
from .batching import _broadcast_prefix, _leaf_paths, _out_targets, _param_names
from .collectives import AxisName, axis_name_of
from .dispatch import hashable_static_key
from .lowering import emit, spmd as runtime
from .staging import dtypes as _dt
from .staging.axes import axis_frame
from .staging.builder import is_staging
from .staging.errors import TransformError
from .staging.ir import Aval, Graph, SourceLoc
from .staging.source import user_location
from .staging.typecheck import typecheck
from .tensor import Tensor
from .trace import trace_flat

_CACHE_SIZE = 64


def pmap(
    f: Callable[..., Any],
    axis_name: AxisName | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    devices: Sequence[Device] | None = None,
) -> Pmapped:
    """Map ``f`` over axis ``in_axes`` of its arguments, one slice per device, as one SPMD program.

    ``in_axes``: an int or None (replicate), or a tuple with one pytree prefix of those per positional argument
    (keyword arguments are mapped along 0). ``out_axes``: a pytree prefix of ints (where the device axis goes)
    or None (the result of device 0, for values every device agrees on). ``devices``: the devices to run on
    (default: the first n CPU devices, n the mapped axis size).
    """
    if not callable(f):
        raise TypeError(f"pmap() needs a callable, got {type(f).__name__}")
    name = axis_name_of(axis_name) if axis_name is not None else None
    return Pmapped(f, name, in_axes, out_axes, tuple(devices) if devices is not None else None)


class _Executable:
    """One compiled SPMD program for one argument signature."""

    __slots__ = ("graph", "text", "executable", "devices", "handlers", "out_avals", "out_tree", "targets")

    def __init__(self, graph: Graph, text: str, executable: Any, devices: tuple[Device, ...], out_tree: Any,
                 targets: list[int | None]) -> None:
        self.graph = graph
        self.text = text
        self.executable = executable
        self.devices = devices
        self.out_avals = [(a.shape, a.dtype) for a in graph.out_avals]
        self.handlers = runtime.output_handlers(self.out_avals, tuple(d.xla for d in devices))
        self.out_tree = out_tree
        self.targets = targets


class Pmapped:
    """The result of ``pmap(f, ...)``: call it on concrete arrays; ``stablehlo(*args)`` shows the module."""

    def __init__(
        self, f: Callable[..., Any], axis_name: str | None, in_axes: Any, out_axes: Any,
        devices: tuple[Device, ...] | None,
    ) -> None:
        self.f = f
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.devices = devices
        self.name = f"pmap({getattr(f, 'name', None) or getattr(f, '__name__', 'function')})"
        self._cache: OrderedDict[Hashable, _Executable] = OrderedDict()

    def __repr__(self) -> str:
        return f"<{self.name} over axis {self.axis_name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        loc = user_location()
        if is_staging():
            raise TransformError(
                f"[pmap] {self.name} was called while a program is being staged; pmap runs on concrete arrays "
                "only (inside a staged program, use vmap(f, axis_name=...) for the same collectives)",
                None,
                loc,
            )
        leaves, treedef = pytree.flatten((args, kwargs))
        axes, dynamic, hosts = self._arguments(args, kwargs, leaves, treedef, loc)
        devs = self._devices(leaves, axes, treedef, loc)
        compiled = self._compiled(treedef, leaves, axes, dynamic, hosts, devs, loc)
        xla = tuple(d.xla for d in devs)
        buffers = [
            runtime.put_sharded(np.moveaxis(h, a, 0), xla) if a is not None else runtime.put_replicated(h, xla)
            for h, a, d in zip(hosts, axes, dynamic) if d and h is not None
        ]
        outs = runtime.run(compiled.executable, buffers, compiled.handlers, compiled.out_avals, xla)
        results = [
            device_put(np.moveaxis(o, 0, t) if t is not None else o[0]) for o, t in zip(outs, compiled.targets)
        ]
        return pytree.unflatten(compiled.out_tree, results)

    def stablehlo(self, *args: Any, **kwargs: Any) -> str:
        """The SPMD StableHLO module compiled for these arguments."""
        loc = user_location()
        leaves, treedef = pytree.flatten((args, kwargs))
        axes, dynamic, hosts = self._arguments(args, kwargs, leaves, treedef, loc)
        devs = self._devices(leaves, axes, treedef, loc)
        return self._compiled(treedef, leaves, axes, dynamic, hosts, devs, loc).text

    # ------------------------------------------------------------------------------------------ arguments
    def _where(self, treedef: pytree.TreeDef) -> list[str]:
        return _leaf_paths(treedef, _param_names(self.f))

    def _arguments(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Any], treedef: pytree.TreeDef,
        loc: SourceLoc | None,
    ) -> tuple[list[int | None], list[bool], list[np.ndarray[Any, Any] | None]]:
        """Per leaf: the mapped axis (None: replicated), whether it is an array input, and its host value."""
        where = self._where(treedef)
        specs = self._in_specs(args, kwargs, loc)
        axes: list[int | None] = []
        dynamic: list[bool] = []
        hosts: list[np.ndarray[Any, Any] | None] = []
        for leaf, spec, path in zip(leaves, specs, where):
            is_array = isinstance(leaf, (Tensor, np.ndarray, np.generic)) or type(leaf) in (int, float, bool)
            if not is_array:
                if spec is not None:
                    raise TransformError(
                        f"[pmap] {path} is a {type(leaf).__name__}, not an array, so it cannot be mapped; give it "
                        "in_axes None",
                        None,
                        loc,
                    )
                axes.append(None)
                dynamic.append(False)
                hosts.append(None)
                continue
            if isinstance(leaf, Tensor) and not isinstance(leaf, Array):
                raise TransformError(f"[pmap] {path} is a staged value; pmap runs on concrete arrays", None, loc)
            host = leaf.numpy() if isinstance(leaf, Array) else as_host_array(leaf)
            if spec is not None:
                if not isinstance(spec, int) or isinstance(spec, bool):
                    raise TypeError(f"pmap(): in_axes entries must be ints or None, got {spec!r}")
                if not -host.ndim <= spec < host.ndim:
                    raise TransformError(
                        f"[pmap] in_axes {spec} is out of range for {path}, which has shape {host.shape}", None, loc
                    )
                spec %= host.ndim
            axes.append(spec)
            dynamic.append(True)
            hosts.append(host)
        return axes, dynamic, hosts

    def _in_specs(self, args: tuple[Any, ...], kwargs: dict[str, Any], loc: SourceLoc | None) -> list[Any]:
        kw_specs = [0] * len(pytree.leaves(kwargs))
        if not isinstance(self.in_axes, (tuple, list)):
            return [self.in_axes] * len(pytree.leaves(args)) + kw_specs
        if len(self.in_axes) != len(args):
            raise TransformError(
                f"[pmap] in_axes has {len(self.in_axes)} entries but {self.name} was called with {len(args)} "
                "positional arguments",
                None,
                loc,
            )
        specs: list[Any] = []
        for i, (prefix, arg) in enumerate(zip(self.in_axes, args)):
            specs += _broadcast_prefix(prefix, arg, f"in_axes[{i}]", f"argument {i}", loc)
        return specs + kw_specs

    def _devices(
        self, leaves: list[Any], axes: list[int | None], treedef: pytree.TreeDef, loc: SourceLoc | None
    ) -> tuple[Device, ...]:
        where = self._where(treedef)
        sizes = [(w, np.shape(x)[a], a) for x, a, w in zip(leaves, axes, where) if a is not None]
        if not sizes:
            if self.devices is None:
                raise TransformError(
                    "[pmap] no argument is mapped (every in_axes is None), so the number of devices is unknown; "
                    "map an argument or pass devices=",
                    None,
                    loc,
                )
            return self.devices
        first, size, axis = sizes[0]
        for other, n, a in sizes[1:]:
            if n != size:
                raise TransformError(
                    f"[pmap] mapped axes have different sizes: {first} has size {size} along axis {axis} but "
                    f"{other} has size {n} along axis {a}",
                    None,
                    loc,
                )
        if self.devices is not None:
            if len(self.devices) != size:
                raise TransformError(
                    f"[pmap] {first} has size {size} along its mapped axis {axis}, but pmap was given "
                    f"{len(self.devices)} devices; the mapped axis size must equal the device count",
                    None,
                    loc,
                )
            return self.devices
        available = list_devices("cpu")
        if size > len(available):
            raise TransformError(
                f"[pmap] {first} has size {size} along its mapped axis {axis}, so pmap needs {size} devices, but "
                f"only {len(available)} CPU device{'s are' if len(available) != 1 else ' is'} available. Set "
                f"TENSORSTAGE_CPU_DEVICES={size} (or more) in the environment before tensorstage first runs "
                f"anything, e.g. `TENSORSTAGE_CPU_DEVICES={size} python script.py`",
                None,
                loc,
            )
        return tuple(available[:size])

    # ---------------------------------------------------------------------------------------- compiling
    def _compiled(
        self, treedef: pytree.TreeDef, leaves: list[Any], axes: list[int | None], dynamic: list[bool],
        hosts: list[np.ndarray[Any, Any] | None], devs: tuple[Device, ...], loc: SourceLoc | None,
    ) -> _Executable:
        avals: list[Aval | None] = []
        for leaf, host, axis in zip(leaves, hosts, axes):
            if host is None:
                avals.append(None)
                continue
            dims = leaf.aval.dims if isinstance(leaf, Array) else (None,) * host.ndim
            keep = [i for i in range(host.ndim) if i != axis]
            avals.append(Aval(tuple(host.shape[i] for i in keep), _dt.canonical(host.dtype), [dims[i] for i in keep]))
        weak = [d and type(x) in (int, float, bool) for x, d in zip(leaves, dynamic)]
        statics = tuple(hashable_static_key(x, "pmap(): non-array argument") for x, d in zip(leaves, dynamic) if not d)
        key = (treedef, statics, tuple(avals), tuple(axes), tuple(weak), tuple(d.id for d in devs))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        with axis_frame(self.axis_name, len(devs), "pmap"):
            traced = trace_flat(self.f, treedef, leaves, dynamic, avals, weak)
        typecheck(traced.graph)
        out_paths = _leaf_paths(traced.out_tree, [], root="output")
        targets: list[int | None] = []
        for target, out, path in zip(_out_targets(self.out_axes, traced.out_tree, loc), traced.graph.outputs, out_paths):
            rank = out.aval.ndim + 1
            if target is not None and not (isinstance(target, int) and -rank <= target < rank):
                raise TransformError(f"[pmap] out_axes {target!r} is out of range for {path} ({out.aval})", None, loc)
            targets.append(None if target is None else target % rank)
        text = emit.module_text(traced.graph, self.name, num_replicas=len(devs))
        executable = runtime.compile_replicated(text, [d.xla for d in devs])
        compiled = _Executable(traced.graph, text, executable, devs, traced.out_tree, targets)
        self._cache[key] = compiled
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return compiled


__all__ = ["Pmapped", "pmap"]
