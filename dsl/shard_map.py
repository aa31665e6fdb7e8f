"""``shard_map``: run a function once per device of a ``Mesh``, each on its block of the arguments (SPMD).

``shard_map(f, mesh=mesh, in_specs=..., out_specs=...)`` cuts every argument into blocks by its
``PartitionSpec`` (a dimension split over mesh axes ``("i", "j")`` is cut into ``size_i * size_j`` blocks, the
first name the most significant; a mesh axis the spec does not name gets copies), stages ``f`` once on the block
types with every mesh axis name bound, and compiles ONE replica-style SPMD program for the mesh's devices (the
device at mesh position p runs replica ``p``'s row-major index). Collectives over a mesh axis act along that axis
only: on a 2x2 mesh ``("i", "j")``, ``psum(x, "i")`` sums the two devices that share a ``"j"`` coordinate, and
``psum(x, ("i", "j"))`` all four. Results are put together from the blocks by ``out_specs`` the same way.

Replication check (``check_vma=True``, jax's name; ``check_rep`` is accepted as an alias): a mesh axis missing
from an output's spec declares every device along it to hold the same value. Staging computes which mesh axes
each value varies over (an argument: the axes its in_spec names; ``axis_index``: its axis; ``psum``/``pmean``/
``pmax``/``pmin``/``all_gather`` remove their axis; ``psum_scatter``/``all_to_all``/``ppermute`` add theirs; any
other op: the union of its operands'; ``cond``: its branches' results and the index's axes; ``scan`` and
``while_loop``: their bodies' results, carried to a fixed point (and a ``while`` predicate's axes); any other op
holding nested graphs: its operands' axes and everything its graphs can add, a conservative bound) and refuses an output
declared equal along an axis it varies over, naming the output, its spec, the axes and the line that made it.
With ``check_vma=False`` nothing is checked and the block of the first device along each omitted axis is taken.

Where results live: an output split along its first dimension over every mesh axis (of size > 1) in mesh
order, as ``P("i")`` on a 1-D mesh or ``P(("i", "j"))`` on a 2-D one, is one ``ts.Array`` split over the mesh
devices (as a pmap result); a checked fully replicated output (``P()``) is one ``ts.Array`` replicated on them.
Passed back to a shard_map over the same mesh with the same kind of spec, both are used without a copy. Other
layouts (``P("i", "j")``, ``P(None, "i")``, partially replicated outputs, and every replicated output when
``check_vma=False``) are assembled through the host onto the default device, and arguments in other layouts are
copied from the host each call.

Deliberate differences from jax: (1) ``ts.grad`` inside ``f`` differentiates each device's function on its own
(per-device gradients, as ``pmap`` and as jax with ``check_vma=False``); jax with ``check_vma=True`` returns the
gradient with respect to an argument that does not vary over an axis already summed over that axis. (2) Layouts
our ``Array`` cannot hold are gathered onto the default device (see above). (3) No ``axis_names=`` subset (every
mesh axis is manual), no ``Mesh`` context, and the function takes positional arguments only. (4)
Differentiating or staging through a shard_map from outside (``ts.grad(shard_map(...))``, a call inside
``ts.program``) is refused with a ``TransformError``, as for ``pmap``. (5) The replication check is conservative
through ops with nested graphs other than cond/scan/while (custom_jvp/custom_vjp calls, checkpoint): a ``psum``
inside those does not make their result replicated. (6) Mesh axes of size 1 are never reported.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import ExitStack
from typing import Any, NamedTuple, overload

import numpy as np

from . import pytree
from .array import Array, as_host_array, device_put
from .batching import _leaf_paths, _param_names
from .lowering import runtime as single, spmd as runtime
from .sharding import Mesh, PartitionSpec
from .spmd import _fast_key, staging_refused
from .staging import dtypes as _dt
from .staging.axes import axis_frame
from .staging.builder import is_staging
from .staging.errors import ShapeError, TransformError
from .staging.ir import Aval, Graph, SourceLoc, Var
from .staging.source import user_location
from .staging.transforms.varying_axes import varying_axes
from .staging.typecheck import typecheck
from .tensor import Tensor
from .trace import trace_flat

_CACHE_SIZE = 64

Parts = tuple[tuple[str, ...], ...]  # per dimension, the mesh axes splitting it (every dimension listed)


@overload
def shard_map(
    f: Callable[..., Any], /, *, mesh: Mesh, in_specs: Any, out_specs: Any, check_vma: bool = True,
    check_rep: bool | None = None,
) -> ShardMapped: ...


@overload
def shard_map(
    f: None = None, /, *, mesh: Mesh, in_specs: Any, out_specs: Any, check_vma: bool = True,
    check_rep: bool | None = None,
) -> Callable[[Callable[..., Any]], ShardMapped]: ...


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    mesh: Mesh,
    in_specs: Any,
    out_specs: Any,
    check_vma: bool = True,
    check_rep: bool | None = None,
) -> ShardMapped | Callable[[Callable[..., Any]], ShardMapped]:
    """Run ``f`` on every device of ``mesh``, on its blocks of the arguments (see the module docstring).

    ``in_specs``: a ``PartitionSpec`` per argument (a pytree prefix of the argument tuple: one spec for all, a
    tuple of one per argument, or nested). ``out_specs``: a prefix of ``f``'s result. ``check_vma``: refuse
    outputs declared replicated over a mesh axis they vary over (``check_rep`` is jax's older name for it).
    Without ``f``, a decorator.
    """
    if f is None:
        return lambda g: shard_map(g, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_vma,
                                   check_rep=check_rep)
    if not callable(f):
        raise TypeError(f"shard_map() needs a callable, got {type(f).__name__}")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map(): mesh must be a ts.sharding.Mesh (ts.make_mesh(...)), got {mesh!r}")
    check = check_vma if check_rep is None else check_rep
    return ShardMapped(f, mesh, in_specs, out_specs, bool(check))


class _Out(NamedTuple):
    """How one result comes back: ``kind`` 'tiled' (one Array split along axis 0 over the mesh), 'replicated'
    (one Array replicated over it) or 'assemble' (blocks put together through the host)."""

    kind: str
    parts: Parts
    aval: Aval  # the global result's
    handler: Any


class _Executable(NamedTuple):
    """One compiled SPMD program for one argument signature."""

    graph: Graph
    text: str
    executable: Any
    in_kinds: list[str]  # per argument leaf: its _layout
    in_parts: list[Parts]
    outs: list[_Out]
    out_tree: pytree.TreeDef


def _layout(parts: Parts, mesh: Mesh) -> str:
    """'replicated' when no mesh axis of size > 1 splits the value, 'tiled' when those axes all split the first
    dimension in mesh order (block k is then replica k's: our Array's split-along-axis-0 layout), else 'blocks'."""
    size = mesh.shape
    big = [n for n in mesh.axis_names if size[n] > 1]
    used = [[n for n in part if size[n] > 1] for part in parts]
    if not any(used):
        return "replicated"
    if used[0] == big and not any(used[1:]):
        return "tiled"
    return "blocks"


def _to_blocks(host: np.ndarray[Any, Any], parts: Parts, mesh: Mesh) -> np.ndarray[Any, Any]:
    """``host`` cut into the block of every replica, stacked in replica order: (n, *block)."""
    size = mesh.shape
    shape: list[int] = []
    labels: list[str | int] = []
    for d, (dim, part) in enumerate(zip(host.shape, parts)):
        for name in part:
            shape.append(size[name])
            labels.append(name)
        shape.append(dim // math.prod(size[n] for n in part))
        labels.append(d)
    block = tuple(s for s, label in zip(shape, labels) if isinstance(label, int))
    missing = [n for n in mesh.axis_names if n not in labels]  # replicated along these: broadcast
    x = host.reshape(*shape, *[1] * len(missing))
    labels += missing
    x = np.transpose(x, [labels.index(n) for n in mesh.axis_names] + [labels.index(d) for d in range(host.ndim)])
    x = np.broadcast_to(x, (*mesh.axis_sizes, *block))
    return np.ascontiguousarray(x).reshape(mesh.size, *block)


def _from_blocks(
    blocks: np.ndarray[Any, Any], parts: Parts, mesh: Mesh, shape: tuple[int, ...]
) -> np.ndarray[Any, Any]:
    """The global value of ``shape`` from every replica's block (n, *block): blocks placed by ``parts``, the
    first device's along each mesh axis ``parts`` does not name."""
    used = {n for part in parts for n in part}
    x = blocks.reshape(*mesh.axis_sizes, *blocks.shape[1:])
    x = x[tuple(slice(None) if n in used else 0 for n in mesh.axis_names)]
    labels: list[str | int] = [n for n in mesh.axis_names if n in used] + list(range(len(shape)))
    order: list[int] = []
    for d, part in enumerate(parts):  # each dimension: the mesh axes splitting it (major), then its block
        order += [labels.index(name) for name in part] + [labels.index(d)]
    return np.transpose(x, order).reshape(shape)


# ------------------------------------------------------------------------------------- replication check


def _spec_text(parts: Parts) -> str:
    entries = [repr(p[0]) if len(p) == 1 else repr(p) if p else "None" for p in parts]
    while entries and entries[-1] == "None":
        entries.pop()
    return f"P({', '.join(entries)})"


def _check_replication(
    graph: Graph, in_parts: list[Parts], out_parts: list[Parts], out_paths: list[str], mesh: Mesh,
    loc: SourceLoc | None,
) -> None:
    mesh_axes = frozenset(mesh.axis_names)
    in_axes = [frozenset(n for part in parts for n in part) for parts in in_parts]
    varying, made_by = varying_axes(graph, in_axes, mesh_axes)
    for axes, parts, path, out in zip(varying, out_parts, out_paths, graph.outputs):
        declared = {n for part in parts for n in part}
        wrong = [n for n in mesh.axis_names if n in axes and n not in declared and mesh.shape[n] > 1]
        if not wrong:
            continue
        eqn = made_by.get(out) if isinstance(out, Var) else None
        made = f" (made by `{eqn.primitive.name}` at {eqn.loc})" if eqn is not None and eqn.loc else ""
        names = ", ".join(repr(n) for n in wrong)
        raise TransformError(
            f"[shard_map] {path} has out_specs {_spec_text(parts)}, which declares it equal on every device along "
            f"mesh {'axis' if len(wrong) == 1 else 'axes'} {names}, but it varies over mesh axes "
            f"{tuple(n for n in mesh.axis_names if n in axes)}"
            f"{made}. Reduce it over {names} (ts.psum, ts.pmean, ts.all_gather), name the axis in its out_spec, "
            "or pass check_vma=False to take the first device's block along it",
            None,
            loc,
        )


# -------------------------------------------------------------------------------------------- the callable


class ShardMapped:
    """The result of ``shard_map(f, ...)``: call it on concrete arrays; ``stablehlo(*args)`` shows the module."""

    def __init__(self, f: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any, check_vma: bool) -> None:
        self.f = f
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.check_vma = check_vma
        self.name = f"shard_map({getattr(f, 'name', None) or getattr(f, '__name__', 'function')})"
        self._xla = tuple(d.xla for d in mesh.device_list)
        self._groups = runtime.mesh_groups(mesh.axis_names, mesh.axis_sizes)
        self._cache: OrderedDict[Hashable, _Executable] = OrderedDict()
        self._seen: dict[Hashable, _Executable] = {}  # argument layouts that passed every check

    def __repr__(self) -> str:
        return f"<{self.name} over {self.mesh!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_staging():
            raise staging_refused("shard_map", self.name, "differentiate inside the function instead")
        if kwargs:
            raise TypeError(f"{self.name} takes positional arguments only (in_specs match the argument tuple), "
                            f"got keyword arguments {sorted(kwargs)}")
        leaves, treedef = pytree.flatten((args, {}))
        key = _fast_key(treedef, leaves)
        compiled = self._seen.get(key) if key is not None else None
        if compiled is None:
            compiled = self._compiled(args, leaves, treedef, user_location())
            if key is not None:
                if len(self._seen) >= _CACHE_SIZE:
                    self._seen.clear()
                self._seen[key] = compiled
        buffers = [self._put(x, kind, parts) for x, kind, parts in zip(leaves, compiled.in_kinds, compiled.in_parts)]
        outs = runtime.run(compiled.executable, buffers, [o.handler for o in compiled.outs])
        blocks = compiled.graph.out_avals
        results = [self._result(buffer, out, block) for buffer, out, block in zip(outs, compiled.outs, blocks)]
        return pytree.unflatten(compiled.out_tree, results)

    def stablehlo(self, *args: Any) -> str:
        """The SPMD StableHLO module compiled for these arguments."""
        leaves, treedef = pytree.flatten((args, {}))
        return self._compiled(args, leaves, treedef, user_location()).text

    # --------------------------------------------------------------------------------------- running
    def _put(self, leaf: Any, kind: str, parts: Parts) -> Any:
        xla = self._xla
        if isinstance(leaf, Array):
            sharding = leaf.buffer._sharding
            if kind == "tiled" and runtime.is_tiled_over(leaf.buffer, xla, leaf.ndim):
                return leaf.buffer  # an earlier result split over this mesh the same way: no copy
            if kind == "replicated" and len(xla) > 1 and sharding == single.replicated_sharding(xla):
                return leaf.buffer
            host = leaf.numpy()
        else:
            host = as_host_array(leaf)
        if kind == "replicated":
            return runtime.put_replicated(host, xla)
        if kind == "tiled":
            return runtime.put_sharded(host.reshape(len(xla), -1, *host.shape[1:]) if host.size else
                                       _to_blocks(host, parts, self.mesh), xla)
        return runtime.put_sharded(_to_blocks(host, parts, self.mesh), xla)

    def _result(self, buffer: Any, out: _Out, block: Aval) -> Array[Any]:
        if out.kind != "assemble":
            return Array(buffer, out.aval)
        blocks = runtime.gather(buffer, (len(self._xla), *block.shape), block.dtype)
        return device_put(_from_blocks(blocks, out.parts, self.mesh, out.aval.shape))

    # ------------------------------------------------------------------------------------- arguments
    def _parts(self, spec: Any, ndim: int, what: str, spec_where: str, loc: SourceLoc | None) -> Parts:
        """``spec`` checked against the mesh and the value's rank, one entry per dimension."""
        if not isinstance(spec, PartitionSpec):
            raise TransformError(f"[shard_map] {spec_where} for {what} must be a PartitionSpec (ts.P(...)), got "
                                 f"{spec!r}", None, loc)
        parts = spec.normalized()
        if len(spec) > ndim:
            raise TransformError(f"[shard_map] {spec_where} {spec!r} has {len(spec)} entries but {what} has rank "
                                 f"{ndim}", None, loc)
        names = [n for part in parts for n in part]
        for n in names:
            if n not in self.mesh.shape:
                raise TransformError(f"[shard_map] {spec_where} {spec!r} for {what} names axis {n!r}, which the mesh "
                                     f"does not have (its axes: {self.mesh.axis_names})", None, loc)
        if len(set(names)) != len(names):
            raise TransformError(f"[shard_map] {spec_where} {spec!r} for {what} names a mesh axis twice", None, loc)
        return parts + ((),) * (ndim - len(parts))

    def _leaf_specs(self, args: tuple[Any, ...], loc: SourceLoc | None) -> list[Any]:
        spec_leaves, spec_def = pytree.flatten(self.in_specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
        if isinstance(self.in_specs, PartitionSpec):
            return [self.in_specs] * len(pytree.leaves(args))
        try:
            subtrees = pytree.flatten_up_to(spec_def, args, "in_specs: the arguments")
        except ValueError as err:
            raise TransformError(f"[shard_map] in_specs must be a prefix of the argument tuple: {err}", None,
                                 loc) from None
        out: list[Any] = []
        for spec, sub in zip(spec_leaves, subtrees):
            out += [spec] * len(pytree.leaves(sub))
        return out

    def _block_aval(self, leaf: Any, parts: Parts, what: str, loc: SourceLoc | None) -> Aval:
        shape, dtype = np.shape(leaf), (leaf.aval.dtype if isinstance(leaf, Array) else as_host_array(leaf).dtype)
        dims = list(leaf.aval.dims) if isinstance(leaf, Array) else [None] * len(shape)
        block = []
        for d, (size, part) in enumerate(zip(shape, parts)):
            count = math.prod(self.mesh.shape[n] for n in part)
            if size % count:
                raise ShapeError(
                    f"{what} has shape {tuple(shape)}: dimension {d} (size {size}) is split over mesh axes "
                    f"{part} of total size {count}, which does not divide it", "shard_map", loc)
            block.append(size // count)
            if count > 1:
                dims[d] = None  # a block's size differs from the named dim's
        return Aval(tuple(block), _dt.canonical(dtype), dims)

    # ---------------------------------------------------------------------------------------- compiling
    def _compiled(self, args: tuple[Any, ...], leaves: list[Any], treedef: pytree.TreeDef,
                  loc: SourceLoc | None) -> _Executable:
        paths = _leaf_paths(treedef, _param_names(self.f))
        specs = self._leaf_specs(args, loc)
        in_parts: list[Parts] = []
        avals: list[Aval | None] = []
        for leaf, spec, path in zip(leaves, specs, paths):
            if isinstance(leaf, Tensor) and not isinstance(leaf, Array):
                raise TransformError(f"[shard_map] {path} is a staged value; shard_map runs on concrete arrays",
                                     None, loc)
            if not (isinstance(leaf, (Array, np.ndarray, np.generic)) or type(leaf) in (int, float, bool, complex)):
                raise TransformError(f"[shard_map] {path} is a {type(leaf).__name__}, not an array; shard_map "
                                     "arguments must be arrays", None, loc)
            parts = self._parts(spec, len(np.shape(leaf)), path, "in_specs", loc)
            in_parts.append(parts)
            avals.append(self._block_aval(leaf, parts, path, loc))
        weak = [type(x) in (int, float, bool, complex) for x in leaves]
        key = (treedef, tuple(avals), tuple(in_parts), tuple(weak))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        with ExitStack() as frames:
            for name, size in self.mesh.shape.items():
                frames.enter_context(axis_frame(name, size, "shard_map"))
            traced = trace_flat(self.f, treedef, leaves, [True] * len(leaves), avals, weak)
        typecheck(traced.graph)
        out_parts, out_paths = self._out_parts(traced.graph, traced.out_tree, loc)
        if self.check_vma:
            _check_replication(traced.graph, in_parts, out_parts, out_paths, self.mesh, loc)
        platform = self.mesh.device_list[0].platform
        text, callbacks = runtime.module_text(traced.graph, self.name, len(self._xla), platform, self._groups)
        executable = runtime.compile_replicated(text, list(self._xla), callbacks)
        outs = [self._out(parts, out.aval) for parts, out in zip(out_parts, traced.graph.outputs)]
        kinds = [_layout(parts, self.mesh) for parts in in_parts]
        compiled = _Executable(traced.graph, text, executable, kinds, in_parts, outs, traced.out_tree)
        self._cache[key] = compiled
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
            self._seen.clear()  # it may name the evicted executable
        return compiled

    def _out_parts(
        self, graph: Graph, out_tree: pytree.TreeDef, loc: SourceLoc | None
    ) -> tuple[list[Parts], list[str]]:
        paths = _leaf_paths(out_tree, [], root="output")
        if isinstance(self.out_specs, PartitionSpec):
            specs = [self.out_specs] * out_tree.num_leaves
        else:
            spec_leaves, spec_def = pytree.flatten(self.out_specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
            skeleton = pytree.unflatten(out_tree, [object() for _ in range(out_tree.num_leaves)])
            try:
                subtrees = pytree.flatten_up_to(spec_def, skeleton, "out_specs: the result")
            except ValueError as err:
                raise TransformError(f"[shard_map] out_specs must be a prefix of the result's structure: {err}",
                                     None, loc) from None
            specs = [s for s, sub in zip(spec_leaves, subtrees) for _ in range(len(pytree.leaves(sub)))]
        parts = [self._parts(s, out.aval.ndim, p, "out_specs", loc) for s, out, p in zip(specs, graph.outputs, paths)]
        return parts, paths

    def _out(self, parts: Parts, block: Aval) -> _Out:
        size = self.mesh.shape
        shape = tuple(b * math.prod(size[n] for n in part) for b, part in zip(block.shape, parts))
        dims = tuple(None if part else name for name, part in zip(block.dims, parts))
        aval = Aval(shape, block.dtype, dims)
        kind = _layout(parts, self.mesh)
        xla = self._xla
        if kind == "tiled":
            sharding = single.tiled_sharding(xla, len(shape))
        elif kind == "replicated" and self.check_vma and len(xla) > 1:
            sharding = single.replicated_sharding(xla)
        else:  # every device's block as one (n, *block) array, put together through the host
            kind, shape, sharding = "assemble", (len(xla), *block.shape), single.tiled_sharding(xla, block.ndim + 1)
        return _Out(kind, parts, aval, runtime.output_handler(shape, block.dtype, sharding))


__all__ = ["ShardMapped", "shard_map", "varying_axes"]
