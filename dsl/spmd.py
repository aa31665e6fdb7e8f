"""``pmap``: run a function on several devices at once, one slice of the mapped axis per device (SPMD).

``pmap(f, axis_name="i")`` stages ``f`` once on per-device types (the mapped axis removed) with ``"i"`` bound, so
collectives (``psum(x, "i")``, ...) become primitives in the graph; lowers that graph to ONE StableHLO module with
``num_replicas = n``; compiles it for n devices; puts slice k of every mapped argument on device k (unmapped
arguments are replicated); runs every replica; and returns each result with the device axis at ``out_axes``.

Results stay on the devices: with the device axis first (``out_axes=0``, the default) a result is ONE ``Array``
of shape (n, *per_device) split along axis 0 over the n devices (device k holds block k), never copied to the
host; passed back to a pmap over the same devices with ``in_axes=0`` it is used as it is, so a loop
``params = step(params, batch)`` moves no parameters through the host. Results with another ``out_axes`` are
assembled through the host onto the default device (``None``: device 0's block only), and other arguments (host
data, single-device arrays, other in_axes, replicated ones) are copied from the host each call.

CPU devices: tensorstage's CPU client has ``TENSORSTAGE_CPU_DEVICES`` devices (default 1), read when it is
first created, so set it before tensorstage runs anything (``TENSORSTAGE_CPU_DEVICES=8 python train.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from . import pytree
from .array import Array, Device, as_host_array, default_platform, device_put, devices as list_devices
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

_Value = np.ndarray[Any, Any] | Array[Any, Unpack[tuple[Any, ...]]]  # an array argument: kept on device if an Array


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
    (default: the first n devices of the default platform, n the mapped axis size).

    Results with out_axes 0 stay on the devices as one Array split over them (``x.devices()``), and such an
    Array passed back with in_axes 0 (same devices) is used without a copy. Other out_axes are gathered through
    the host onto the default device, and None reads device 0's block through the host (a copy per call).
    """
    if not callable(f):
        raise TypeError(f"pmap() needs a callable, got {type(f).__name__}")
    name = axis_name_of(axis_name) if axis_name is not None else None
    return Pmapped(f, name, in_axes, out_axes, _checked_devices(devices))


def _checked_devices(devices: Sequence[Device] | None) -> tuple[Device, ...] | None:
    """``devices`` as a tuple, refused up front when XLA could not build a device assignment from it."""
    if devices is None:
        return None
    given = tuple(devices)
    if not given:
        raise ValueError("pmap(): devices= is empty; give at least one device (e.g. ts.devices()[:n])")
    for d in given:
        if not isinstance(d, Device):
            raise TypeError(f"pmap(): devices= must hold ts.Device objects (from ts.devices()), got {d!r}")
    if len(set(given)) != len(given):
        raise ValueError(f"pmap(): devices= names a device twice ({', '.join(map(str, given))}); each replica "
                         "needs a device of its own")
    if len({d.platform for d in given}) != 1:
        raise ValueError(f"pmap(): devices= mixes platforms ({', '.join(map(str, given))})")
    return given


def _as_pmap_error(err: TransformError) -> TransformError:
    """An in_axes/out_axes error from the shared vmap helpers, relabelled with the transform the user called."""
    if err.bare_message.startswith("[vmap]"):
        err.bare_message = "[pmap]" + err.bare_message[len("[vmap]"):]
        err.args = (err._compose(),)
    return err


def _fast_key(treedef: pytree.TreeDef, leaves: list[Any]) -> Hashable | None:
    """The structure, shapes, dtypes and dim names of arguments that are all Arrays or NumPy arrays (these decide
    everything ``Pmapped._arguments``/``_devices``/``_compiled`` derive), or None for any other leaf."""
    parts: list[Hashable] = [treedef]
    for x in leaves:
        kind = type(x)
        if kind is Array:
            parts.append(x._aval)
        elif kind is np.ndarray:
            parts.append((x.shape, x.dtype))
        else:
            return None
    return tuple(parts)


def staging_refused(transform: str, name: str, hint: str) -> TransformError:
    """The error for an SPMD callable called while a program is being staged (in ts.program, under ts.grad...):
    it runs on concrete arrays only."""
    return TransformError(
        f"[{transform}] {name} was called while a program is being staged; {transform} runs on concrete arrays "
        f"only ({hint})",
        None,
        user_location(),
    )


class _Lazy:
    """A string computed when first formatted (readable argument names cost an ``inspect.signature``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make

    def __str__(self) -> str:
        return self.make()


class _Executable:
    """One compiled SPMD program for one argument signature."""

    __slots__ = (
        "graph", "text", "executable", "devices", "xla", "handlers", "out_avals", "global_avals", "out_tree", "targets"
    )

    def __init__(self, graph: Graph, text: str, executable: Any, devices: tuple[Device, ...], out_tree: Any,
                 targets: list[int | None]) -> None:
        self.graph = graph
        self.text = text
        self.executable = executable
        self.devices = devices
        self.xla = tuple(d.xla for d in devices)
        self.out_avals = [(a.shape, a.dtype) for a in graph.out_avals]
        # results with the device axis first are returned as they come: (n, *per_device), split over the devices
        self.global_avals = [Aval((len(devices), *a.shape), a.dtype, (None, *a.dims)) for a in graph.out_avals]
        self.handlers = runtime.output_handlers(self.out_avals, self.xla)
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
        # argument layouts (see _fast_key) that passed every check -> their executable and mapped axes
        self._seen: dict[Hashable, tuple[_Executable, list[int | None]]] = {}

    def __repr__(self) -> str:
        return f"<{self.name} over axis {self.axis_name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_staging():
            raise staging_refused("pmap", self.name, "inside a staged program, use vmap(f, axis_name=...) for the same "
                                  "collectives")
        leaves, treedef = pytree.flatten((args, kwargs))
        # fast path: arguments that are all Arrays / NumPy arrays with a layout seen before (checked then)
        key: Hashable | None = _fast_key(treedef, leaves)
        hit = self._seen.get(key) if key is not None else None
        if hit is not None:
            compiled, axes = hit
            values: list[_Value | None] = [x if type(x) is Array else as_host_array(x) for x in leaves]
        else:
            loc = user_location()
            axes, dynamic, values = self._arguments(args, kwargs, leaves, treedef, loc)
            devs = self._devices(leaves, axes, treedef, loc)
            compiled = self._compiled(treedef, leaves, axes, dynamic, values, devs, loc)
            if key is not None:
                if len(self._seen) >= _CACHE_SIZE:
                    self._seen.clear()
                self._seen[key] = (compiled, axes)
        xla = compiled.xla
        buffers: list[Any] = []
        for value, axis in zip(values, axes):
            if value is None:
                continue
            if isinstance(value, Array):
                if axis == 0 and runtime.is_tiled_over(value.buffer, xla, value.ndim):
                    buffers.append(value.buffer)  # an earlier pmap's result on these devices: no copy
                    continue
                value = value.numpy()
            buffers.append(
                runtime.put_sharded(np.moveaxis(value, axis, 0), xla) if axis is not None
                else runtime.put_replicated(value, xla)
            )
        outs = runtime.run(compiled.executable, buffers, compiled.handlers)
        results: list[Array[Any]] = []
        for out, target, aval in zip(outs, compiled.targets, compiled.global_avals):
            if target == 0:
                results.append(Array(out, aval))
                continue
            if target is None:  # device 0's value (every device agrees on it): one block through the host
                results.append(device_put(runtime.first_shard(out, aval.shape[1:], aval.dtype)))
                continue
            host = runtime.gather(out, aval.shape, aval.dtype)  # another out_axes: through the host
            results.append(device_put(np.moveaxis(host, 0, target)))
        return pytree.unflatten(compiled.out_tree, results)

    def stablehlo(self, *args: Any, **kwargs: Any) -> str:
        """The SPMD StableHLO module compiled for these arguments."""
        loc = user_location()
        leaves, treedef = pytree.flatten((args, kwargs))
        axes, dynamic, values = self._arguments(args, kwargs, leaves, treedef, loc)
        devs = self._devices(leaves, axes, treedef, loc)
        return self._compiled(treedef, leaves, axes, dynamic, values, devs, loc).text

    # ------------------------------------------------------------------------------------------ arguments
    def _where(self, treedef: pytree.TreeDef) -> list[str]:
        return _leaf_paths(treedef, _param_names(self.f))

    def _arguments(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Any], treedef: pytree.TreeDef,
        loc: SourceLoc | None,
    ) -> tuple[list[int | None], list[bool], list[_Value | None]]:
        """Per leaf: the mapped axis (None: replicated), whether it is an array input, and its value (an Array as
        it is, anything else as a host array)."""
        specs = self._in_specs(args, kwargs, loc)
        axes: list[int | None] = []
        dynamic: list[bool] = []
        hosts: list[_Value | None] = []

        def path() -> str:  # the leaf's readable name, for errors only (inspect.signature is slow)
            return self._where(treedef)[len(axes)]

        for leaf, spec in zip(leaves, specs):
            is_array = isinstance(leaf, (Tensor, np.ndarray, np.generic)) or type(leaf) in (int, float, bool)
            if not is_array:
                if spec is not None:
                    raise TransformError(
                        f"[pmap] {path()} is a {type(leaf).__name__}, not an array, so it cannot be mapped; give it "
                        "in_axes None",
                        None,
                        loc,
                    )
                axes.append(None)
                dynamic.append(False)
                hosts.append(None)
                continue
            if isinstance(leaf, Tensor) and not isinstance(leaf, Array):
                raise TransformError(f"[pmap] {path()} is a staged value; pmap runs on concrete arrays", None, loc)
            host: _Value = leaf if isinstance(leaf, Array) else as_host_array(leaf)
            if spec is not None:
                if not isinstance(spec, int) or isinstance(spec, bool):
                    raise TypeError(f"pmap(): in_axes entries must be ints or None, got {spec!r}")
                if not -host.ndim <= spec < host.ndim:
                    raise TransformError(
                        f"[pmap] in_axes {spec} is out of range for {path()}, which has shape {host.shape}", None, loc
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
        try:
            for i, (prefix, arg) in enumerate(zip(self.in_axes, args)):
                specs += _broadcast_prefix(prefix, arg, f"in_axes[{i}]", f"argument {i}", loc)
        except TransformError as err:
            raise _as_pmap_error(err) from None
        return specs + kw_specs

    def _devices(
        self, leaves: list[Any], axes: list[int | None], treedef: pytree.TreeDef, loc: SourceLoc | None
    ) -> tuple[Device, ...]:
        sizes = [(i, np.shape(x)[a], a) for i, (x, a) in enumerate(zip(leaves, axes)) if a is not None]
        if not sizes:
            if self.devices is None:
                raise TransformError(
                    "[pmap] no argument is mapped (every in_axes is None), so the number of devices is unknown; "
                    "map an argument or pass devices=",
                    None,
                    loc,
                )
            return self.devices
        index, size, axis = sizes[0]
        first = _Lazy(lambda: self._where(treedef)[index])  # leaf names, for errors only
        if size == 0:
            raise TransformError(
                f"[pmap] {first} has size 0 along its mapped axis {axis}: pmap needs at least one device", None, loc
            )
        for other, n, a in sizes[1:]:
            if n != size:
                raise TransformError(
                    f"[pmap] mapped axes have different sizes: {first} has size {size} along axis {axis} but "
                    f"{self._where(treedef)[other]} has size {n} along axis {a}",
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
        platform = default_platform()
        available = list_devices(platform)
        if size > len(available):
            kind, more = platform, ""
            if platform == "cpu":  # more CPU devices are a setting away
                kind, more = "CPU", (
                    f". Set TENSORSTAGE_CPU_DEVICES={size} (or more) in the environment before tensorstage first "
                    f"runs anything, e.g. `TENSORSTAGE_CPU_DEVICES={size} python script.py`"
                )
            raise TransformError(
                f"[pmap] {first} has size {size} along its mapped axis {axis}, so pmap needs {size} devices, but "
                f"only {len(available)} {kind} device{'s are' if len(available) != 1 else ' is'} available{more}",
                None,
                loc,
            )
        return tuple(available[:size])

    # ---------------------------------------------------------------------------------------- compiling
    def _compiled(
        self, treedef: pytree.TreeDef, leaves: list[Any], axes: list[int | None], dynamic: list[bool],
        hosts: list[_Value | None], devs: tuple[Device, ...], loc: SourceLoc | None,
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
        try:
            out_targets = _out_targets(self.out_axes, traced.out_tree, loc)
        except TransformError as err:
            raise _as_pmap_error(err) from None
        for target, out, path in zip(out_targets, traced.graph.outputs, out_paths):
            rank = out.aval.ndim + 1
            if target is not None and not (isinstance(target, int) and -rank <= target < rank):
                raise TransformError(f"[pmap] out_axes {target!r} is out of range for {path} ({out.aval})", None, loc)
            targets.append(None if target is None else target % rank)
        text, callbacks = emit.module_text_and_callbacks(
            traced.graph, self.name, num_replicas=len(devs), platform=devs[0].platform
        )
        executable = runtime.compile_replicated(text, [d.xla for d in devs], callbacks)
        compiled = _Executable(traced.graph, text, executable, devs, traced.out_tree, targets)
        self._cache[key] = compiled
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
            self._seen.clear()  # it may name the evicted executable
        return compiled


__all__ = ["Pmapped", "pmap"]
