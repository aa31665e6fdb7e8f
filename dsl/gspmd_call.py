"""Programs over NamedShardings: one GSPMD executable that XLA partitions over the mesh's devices.

A Program call goes here (from ``Program._call_general``) when the program was given ``in_shardings`` or
``out_shardings``, or when an argument is an Array laid out over several devices by a ``NamedSharding``
(``ts.device_put(x, NamedSharding(mesh, spec))``). The module carries ``mhlo.sharding`` on each parameter (the
argument's sharding, or ``in_shardings``'; unconstrained host data and single-device Arrays are replicated) and
on the results ``out_shardings`` fixes; ``num_partitions`` is the mesh size, and XLA propagates the other
results' shardings, read back from the executable and reported as NamedShardings over the arguments' mesh.
Results stay on the devices. The executables are cached per Program by argument signature, input shardings and
the staging switches (``contexts.stage_key()``).

Deliberate differences from ``jax.jit``: arguments whose sharding differs from ``in_shardings`` (or whose mesh
lists the devices in another order) are resharded through the host rather than refused; ``in_shardings`` apply
to positional arguments (keyword arguments are unconstrained); a program with a fixed ``device`` never
partitions (its Arrays are gathered to that device, as pmap results are); host callbacks are not supported in
partitioned programs; ``Program.stage(...).compile()`` (the explicit path) compiles for one device. GSPMD, not
Shardy, and on CPU each call waits for its results (``lowering/gspmd.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from jaxlib import xla_client as xc

from . import contexts, pytree, transfer_guards
from .array import Array, Device
from .call_signature import Signature
from .lowering import gspmd, spmd
from .named_sharding import NamedSharding, Sharding, SingleDeviceSharding, from_layout, with_sharding
from .sharding import Mesh
from .staging.ir import Aval
from .staging.source import user_location

if TYPE_CHECKING:
    from .program import Program

_CACHE_LIMIT = 64  # partitioned executables a Program keeps (oldest dropped first)


def _is_sharding_leaf(x: Any) -> bool:
    return x is None or isinstance(x, Sharding)


def check_shardings(value: Any, what: str) -> Any:
    """``in_shardings``/``out_shardings`` as given, after checking every leaf is a Sharding or None."""
    if value is None:
        return None
    for leaf in pytree.leaves(value, is_leaf=_is_sharding_leaf):
        if not _is_sharding_leaf(leaf):
            raise TypeError(f"{what} must be a pytree (prefix) of ts.NamedSharding / None, got {leaf!r:.80}")
    return value


def broadcast_shardings(prefix: Any, tree: Any, what: str) -> list[Sharding | None]:
    """One sharding (or None) per leaf of ``tree``, from ``prefix``, a pytree prefix of it."""
    leaves, treedef = pytree.flatten(prefix, is_leaf=_is_sharding_leaf)
    out: list[Sharding | None] = []
    for sharding, subtree in zip(leaves, pytree.flatten_up_to(treedef, tree, what)):
        out.extend([sharding] * len(pytree.leaves(subtree)))
    return out


def partitioned(program: Program[Any, Any], leaves: Sequence[Any]) -> bool:
    """Whether a call with these flattened leaves runs as a GSPMD program."""
    if program.device is not None:
        return False
    if program.in_shardings is not None or program.out_shardings is not None:
        return True
    return any(type(x) is Array and getattr(x, "_named", None) is not None and x.is_sharded for x in leaves)


class _Partitioned:
    """One GSPMD executable of a Program with everything a call needs."""

    def __init__(self, executable: Any, module_text: str, devices: tuple[Device, ...], in_xla: list[Any],
                 out_avals: Sequence[Aval], out_named: list[NamedSharding], out_xla: list[Any],
                 out_tree: pytree.TreeDef) -> None:
        self.executable = executable
        self.module_text = module_text  # the StableHLO given to XLA, with its mhlo.sharding annotations
        self.devices = devices
        self.in_xla = in_xla
        self.out_avals = list(out_avals)
        self.out_named = out_named
        self.out_tree = out_tree
        self.handlers = gspmd.handlers([(a.shape, a.dtype) for a in out_avals], out_xla)

    def __call__(self, dynamic: Sequence[Any], avals: Sequence[Aval]) -> Any:
        buffers = [_buffer(x, aval, xla) for x, aval, xla in zip(dynamic, avals, self.in_xla)]
        outs = spmd.run(self.executable, buffers, self.handlers)  # waits for the results: the CPU deadlock rule
        arrays = [with_sharding(b, a, s) for b, a, s in zip(outs, self.out_avals, self.out_named)]
        return pytree.unflatten(self.out_tree, arrays)


def _buffer(x: Any, aval: Aval, xla: Any) -> Any:
    """``x`` as a global array laid out by ``xla``: as it is when it already is, else through the host."""
    if isinstance(x, Array):
        x._check_alive()
        if gspmd.same_sharding(x.buffer._sharding, xla):
            return x.buffer
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("device_to_device", f"{aval} argument to a partitioned program")
        host = x._host_value()
    else:
        if transfer_guards.ACTIVE[0]:
            transfer_guards.check("host_to_device", f"{aval} argument to a partitioned program")
        host = np.asarray(x, dtype=aval.dtype)
    return gspmd.put(host, xla)


def call(program: Program[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any], signature: Signature,
         leaves: Sequence[Any]) -> Any:
    """Run ``program`` partitioned over the mesh of its shardings (see the module docstring)."""
    marked_args, _ = program._mark_static(args, kwargs)
    targets = _input_targets(program, marked_args, leaves)
    dynamic = [x for x, d in zip(leaves, signature.dynamic) if d]
    avals = [a for a in signature.avals if a is not None]
    in_targets = [t for t, d in zip(targets, signature.dynamic) if d]
    key = (signature.key, tuple(in_targets), contexts.stage_key())
    cache: dict[Hashable, _Partitioned] = program._partitioned
    compiled = cache.get(key)
    if compiled is None:
        compiled = _compile(program, signature, leaves, in_targets, avals)
        if len(cache) >= _CACHE_LIMIT:
            del cache[next(iter(cache))]
        cache[key] = compiled
    return compiled(dynamic, avals)


def _input_targets(program: Program[Any, Any], args: tuple[Any, ...], leaves: Sequence[Any]) -> list[Sharding | None]:
    """Per leaf: ``in_shardings``' entry, else a sharded Array's own NamedSharding, else None (unconstrained)."""
    given: list[Sharding | None] = [None] * len(leaves)
    if program.in_shardings is not None:
        what = f"{program.name}: in_shardings"
        given[: len(pytree.leaves(args))] = broadcast_shardings(program.in_shardings, args, what)
    out: list[Sharding | None] = []
    for x, sharding in zip(leaves, given):
        if sharding is None and type(x) is Array and x.is_sharded:
            sharding = getattr(x, "_named", None)
        out.append(sharding)
    return out


def _reference_mesh(program: Program[Any, Any], shardings: Sequence[Sharding | None]) -> Mesh:
    """The mesh the program is partitioned over: the first NamedSharding's among the inputs' and outputs'."""
    out_given = pytree.leaves(program.out_shardings, is_leaf=_is_sharding_leaf) if program.out_shardings else []
    for s in [*shardings, *out_given]:
        if isinstance(s, NamedSharding):
            return s.mesh
    raise ValueError(f"{program.name}: in_shardings/out_shardings name no NamedSharding, so no mesh to partition "
                     f"over\n  at {user_location()}")


def _check_devices(program: Program[Any, Any], mesh: Mesh, shardings: Sequence[Sharding | None]) -> None:
    for s in shardings:
        if isinstance(s, SingleDeviceSharding) or (s is not None and s.device_set != set(mesh.device_list)):
            raise ValueError(
                f"{program.name}: arguments or shardings are on different devices: {s!r} and the mesh {mesh!r}; "
                f"a partitioned program runs on one mesh's devices (ts.device_put them onto it)\n"
                f"  at {user_location()}"
            )


def _compile(program: Program[Any, Any], signature: Signature, leaves: Sequence[Any],
             in_targets: list[Sharding | None], avals: list[Aval]) -> _Partitioned:
    out_given_tree = program.out_shardings
    mesh = _reference_mesh(program, in_targets)
    _check_devices(program, mesh, in_targets)
    devices = mesh.device_list
    staged = program._stage_signature(signature, leaves, user_location())
    platform = devices[0].platform
    with gspmd.partitioning(devices):  # sharding constraints lower to @Sharding custom calls
        text = staged.stablehlo(platform)
    if staged._host_callbacks.get(platform):
        raise NotImplementedError(f"{program.name}: host callbacks are not supported in programs partitioned over "
                                  "a mesh (NamedSharding arguments)")
    out_avals = staged.out_avals
    out_targets: list[Sharding | None] = [None] * len(out_avals)
    if out_given_tree is not None:
        shape_tree = pytree.unflatten(staged.out_tree, list(range(len(out_avals))))
        out_targets = broadcast_shardings(out_given_tree, shape_tree, f"{program.name}: out_shardings")
    _check_devices(program, mesh, out_targets)
    in_texts = [_text(t, a.ndim, devices) for t, a in zip(in_targets, avals)]
    out_texts = [None if t is None else _text(t, a.ndim, devices) for t, a in zip(out_targets, out_avals)]
    module = gspmd.annotate(text, mesh.size, in_texts, out_texts)
    xla_devices = [d.xla for d in devices]
    executable = gspmd.compile_partitioned(module, xla_devices, [t is None for t in out_texts])
    out_xla = gspmd.output_shardings(executable, xla_devices, len(out_avals))
    in_xla = [xc.GSPMDSharding(xc.DeviceList(tuple(xla_devices)), gspmd.hlo_sharding(t))
              for t in in_texts]
    out_named = [t if isinstance(t, NamedSharding) else from_layout(x, a.ndim, mesh)
                 for t, x, a in zip(out_targets, out_xla, out_avals)]
    return _Partitioned(executable, module, devices, in_xla, out_avals, out_named, out_xla, staged.out_tree)


def _text(target: Sharding | None, ndim: int, devices: tuple[Device, ...]) -> str:
    """The ``mhlo.sharding`` of an input (None, unconstrained: replicated, as jax places uncommitted data)."""
    if target is None:
        return "{replicated}"
    assert isinstance(target, NamedSharding)  # _check_devices refused the others
    return target.hlo_text(ndim, devices)


__all__ = ["broadcast_shardings", "call", "check_shardings", "partitioned"]
