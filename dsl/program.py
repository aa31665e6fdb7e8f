"""``Program`` (a typed Python function) -> ``Staged`` (its graph) -> ``Compiled`` (an XLA executable).

Calling a Program directly stages, compiles and caches by argument signature; the explicit
``stage(...).compile(...)`` path is for ahead-of-time use and inspection.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, overload

import numpy as np

from . import pytree
from .dispatch import Unsupported, call_key, hashable_static_key
from .array import Array, Device, as_host_array, devices
from .lowering import backend, emit, runtime
from .signature import (
    DimBinder,
    Spec,
    TensorSpec,
    aligned_specs,
    build_from_specs,
    function_annotations,
)
from .staging import dtypes as _dt
from .staging.builder import _STACK as _STAGING
from .staging.errors import DTypeError, ShapeError
from .staging.ir import Aval, Graph, SourceLoc, shared_aval
from .staging.source import user_location
from .staging.typecheck import typecheck
from .tensor import Tensor
from .trace import WEAK_FLOAT_AVAL, IntRange, TracedFunction, trace_flat

P = ParamSpec("P")
R = TypeVar("R")

_DEFAULT_CACHE_SIZE = int(os.environ.get("TENSORSTAGE_PROGRAM_CACHE", "256"))
_KEPT_REASONS = 100  # recompile reasons a Program keeps (the most recent)
_VALIDATED_KEYS = 64  # argument layouts a Compiled remembers as checked (dim names can make several per program)


# --------------------------------------------------------------------------------------------- arguments


def _is_dynamic(leaf: object, scalars_dynamic: bool) -> bool:
    if isinstance(leaf, (Tensor, np.ndarray, np.generic, Spec)):
        return True
    return scalars_dynamic and type(leaf) in (float, int, bool)


def _leaf_aval(leaf: Any) -> Aval:
    if isinstance(leaf, (Tensor, Spec)):
        return leaf.aval
    if isinstance(leaf, (np.ndarray, np.generic)):
        return Aval(leaf.shape, _dt.canonical(leaf.dtype))
    if type(leaf) is float:  # passed as float64, staged weakly typed: ``a + s`` keeps all of s for an f64 ``a``
        return WEAK_FLOAT_AVAL
    host = as_host_array(leaf)  # Python int or bool: default dtype, weakly typed
    return Aval((), host.dtype)



# Leaf types that are dynamic and carry their own aval (``_is_dynamic`` and ``_leaf_aval`` say so, with more calls).
_TYPED_LEAVES: frozenset[type] = frozenset({Spec, Array})


def _static_key(leaf: Any) -> Hashable:
    return hashable_static_key(leaf, "static argument")


class Signature:
    """How a call's flattened arguments split into static values (part of the key) and typed inputs."""

    __slots__ = ("treedef", "dynamic", "statics", "avals", "weak", "key")

    def __init__(self, treedef: pytree.TreeDef, leaves: Sequence[Any], scalars_dynamic: bool) -> None:
        self.treedef = treedef
        dynamic: list[bool] = []
        statics: list[Any] = []
        avals: list[Aval | None] = []
        weak: list[bool] = []
        layouts: list[tuple[tuple[int, ...], np.dtype[Any]]] = []
        for x in leaves:  # one pass: this runs per leaf of every staged or dispatched call
            kind = type(x)
            if kind in _TYPED_LEAVES or _is_dynamic(x, scalars_dynamic):
                aval = x.aval if kind in _TYPED_LEAVES else _leaf_aval(x)
                dynamic.append(True)
                statics.append(None)
                avals.append(aval)
                weak.append(kind in (float, int, bool))
                layouts.append((aval.shape, aval.dtype))
            else:
                dynamic.append(False)
                statics.append(x)
                avals.append(None)
                weak.append(False)
        self.dynamic = tuple(dynamic)
        self.statics = tuple(statics)
        self.avals = tuple(avals)
        self.weak = tuple(weak)
        # After every aval: a leaf with no type is reported before an unhashable static argument.
        static_keys = tuple(_static_key(x) for x, d in zip(leaves, dynamic) if not d)
        # ``dynamic`` too: ``op(1.0, x)`` and ``op(x, 1.0)`` have equal statics and layouts, in other positions.
        self.key = (treedef, self.dynamic, static_keys, tuple(layouts), self.weak)


# ------------------------------------------------------------------------------------------------ Program


class Program(Generic[P, R]):
    """A typed Python function that can be staged to a graph, compiled with XLA, and called."""

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        static_argnums: Sequence[int] = (),
        donate_argnums: Sequence[int] = (),
        device: str = "cpu",
        cache_size: int = _DEFAULT_CACHE_SIZE,
        scalars_dynamic: bool = True,
        check_annotations: bool = True,
        compiler_options: backend.CompilerOptions | None = None,
    ) -> None:
        self.fn = fn
        self.compiler_options = dict(compiler_options) if compiler_options else None
        self.name: str = name or str(getattr(fn, "__name__", "program"))
        self.static_argnums = tuple(static_argnums)
        self.donate_argnums = tuple(donate_argnums)
        self.device = device
        self.scalars_dynamic = scalars_dynamic
        # Library ops are generic over every shape; their annotations are for mypy, not for dim binding.
        self.check_annotations = check_annotations
        self._cache: OrderedDict[Hashable, Compiled[P, R]] = OrderedDict()
        self._cache_size = cache_size
        # Fast-path keys (see dispatch.py) of calls already validated against a cached Compiled.
        self._dispatch: dict[Hashable, Compiled[P, R]] = {}
        self._static_set = frozenset(self.static_argnums)
        self.recompile_reasons: list[str] = []
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<Program {self.name}>"

    # ------------------------------------------------------------------------------- the convenient path
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if _STAGING:
            return self.fn(*args, **kwargs)  # a program called inside another program inlines
        if not kwargs and not self._static_set:  # the commonest call, all positional Arrays, inlined
            parts: list[Hashable] = [len(args)]
            buffers = []
            for arg in args:
                if type(arg) is not Array:
                    break
                parts.append(arg._aval)
                buffers.append(arg.buffer)
            else:
                compiled = self._dispatch.get(tuple(parts))
                if compiled is not None:
                    return compiled.run_buffers(buffers, args)  # type: ignore[no-any-return]
        try:
            key, dynamic = call_key(args, kwargs, self._static_set, self.scalars_dynamic)
            compiled = self._dispatch.get(key)
        except (Unsupported, TypeError):  # TypeError: an unhashable static; the general path explains it
            return self._call_general(args, kwargs, None)
        if compiled is None:
            return self._call_general(args, kwargs, key)
        return compiled.run(dynamic)  # type: ignore[no-any-return]

    def _call_general(self, args: tuple[Any, ...], kwargs: dict[str, Any], key: Hashable | None) -> R:
        """Flatten, look up (or stage and compile) by signature, validate every argument, run."""
        leaves, treedef = pytree.flatten((self._mark_static(args), kwargs))
        try:
            signature = Signature(treedef, leaves, self.scalars_dynamic)
        except (TypeError, ValueError) as exc:  # an unsupported dtype, an unhashable static, an int out of range
            raise type(exc)(f"{self.name}: {exc}") from None
        compiled = self._cache.get(signature.key)
        if compiled is None:
            compiled = self._compile_for(signature, leaves)
        else:
            self._cache.move_to_end(signature.key)
        out = compiled.call_flat(leaves)  # raises before running if an argument does not fit
        if key is not None:
            if len(self._dispatch) >= 4 * self._cache_size:
                self._dispatch.clear()  # many keys per signature (e.g. dim names): start over, stay bounded
            self._dispatch[key] = compiled
        return out  # type: ignore[no-any-return]

    def _mark_static(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if not self.static_argnums:
            return args
        return tuple(_Static(a) if i in self.static_argnums else a for i, a in enumerate(args))

    def _compile_for(self, signature: Signature, leaves: Sequence[Any]) -> Compiled[P, R]:
        if self._cache:
            self.recompile_reasons.append(self._explain_miss(signature))
            if len(self.recompile_reasons) > _KEPT_REASONS:
                del self.recompile_reasons[:-_KEPT_REASONS]  # the latest reasons; memory stays bounded
        staged = self._stage_signature(signature, leaves, user_location())
        compiled = staged.compile(device=self.device, compiler_options=self.compiler_options)
        self._cache[signature.key] = compiled
        compiled._used[0] = True  # never evict the program being added
        self._evict()
        return compiled

    def _evict(self) -> None:
        """Drop least recently used programs beyond the bound (fast-path calls mark theirs used: CLOCK)."""
        evicted = []
        while len(self._cache) > self._cache_size:
            key, oldest = next(iter(self._cache.items()))
            if oldest._used[0]:
                oldest._used[0] = False  # used since the last sweep: a second chance
                self._cache.move_to_end(key)
                continue
            del self._cache[key]
            evicted.append(oldest)
        if evicted:
            self._dispatch = {k: c for k, c in self._dispatch.items() if all(c is not e for e in evicted)}

    def _explain_miss(self, signature: Signature) -> str:
        treedef, dynamic, statics, avals, _ = signature.key
        for key in self._cache:
            old_tree: Any
            old_dynamic: Any
            old_statics: Any
            old_avals: Any
            old_tree, old_dynamic, old_statics, old_avals, _ = key  # type: ignore[misc]
            if old_tree != treedef:
                return f"argument structure changed: {old_tree!r} -> {treedef!r}"
            if old_dynamic != dynamic:
                return "static arguments moved: arrays and static values are in other positions"
            if old_statics != statics:
                return f"static arguments changed: {old_statics!r} -> {statics!r}"
            if old_avals != avals:
                changes = [
                    f"{_dt.short_name(a[1])}{list(a[0])} -> {_dt.short_name(b[1])}{list(b[0])}"
                    for a, b in zip(old_avals, avals)
                    if a != b
                ]
                return "argument types changed: " + ", ".join(changes)
        return "new signature"

    # -------------------------------------------------------------------------------- the explicit path
    def stage(self, *examples: Any, **dims: int) -> Staged[P, R]:
        """Stage for example arguments (arrays, ``ts.Spec``s, pytrees) or, without examples, dim sizes by name."""
        loc = user_location()
        annotations = function_annotations(self.fn)  # read once: inspecting the signature and hints is slow
        names, trees, _ = annotations
        args: list[Any] = list(examples)
        if len(args) < len(names):
            binder = DimBinder(dims, loc)
            for name in names[len(args):]:
                tree = trees.get(name)
                if tree is None:
                    raise TypeError(f"stage(): parameter {name!r} has no Tensor annotation; pass an example for it")
                args.append(build_from_specs(tree, lambda spec, where: Spec(*_spec_shape(binder, spec, where)), name))
        leaves, treedef = pytree.flatten((self._mark_static(tuple(args)), {}))
        signature = Signature(treedef, leaves, self.scalars_dynamic)
        return self._stage_signature(signature, leaves, loc, dims, annotations)

    def _stage_signature(
        self,
        signature: Signature,
        leaves: Sequence[Any],
        loc: SourceLoc | None,
        dims: dict[str, int] | None = None,
        annotations: tuple[list[str], dict[str, Any], Any] | None = None,
    ) -> Staged[P, R]:
        """Stage for ``signature``; ``annotations``: ``function_annotations(self.fn)`` when the caller has it."""
        if not self.check_annotations:
            annotations = ([], {}, None)
        elif annotations is None:
            annotations = function_annotations(self.fn)
        names, trees, return_tree = annotations
        binder = DimBinder(dims or {}, loc)
        specs: list[TensorSpec | None] = []
        if any(tree is not None for tree in trees.values()):  # else no leaf has an annotation to check or name
            args, _ = pytree.unflatten(signature.treedef, leaves)
            for i, arg in enumerate(args):
                name = names[i] if i < len(names) else f"arg{i}"
                tree = trees.get(name)
                if isinstance(tree, TensorSpec) and not _is_dynamic(arg, True):
                    at = f"\n  at {loc}" if loc is not None else ""
                    raise TypeError(
                        f"{self.name}: argument {name} is annotated {tree.describe()} but got "
                        f"{type(arg).__name__} {arg!r:.60}{at}"
                    )
                specs.extend(aligned_specs(tree, arg))
        specs.extend([None] * (len(leaves) - len(specs)))
        avals = list(signature.avals)
        where: list[str] | None = None  # leaf names, for annotated leaves' dim bindings and messages only
        # Equal input types become one Aval object (avals are immutable; ``shared_aval``: the one of earlier
        # programs too), so the comparisons of every equation staged from them (memoized shape rules, same-type
        # fast paths) succeed on identity.
        same: dict[tuple[Any, ...], Aval] = {}
        for i, aval in enumerate(avals):
            if aval is not None:
                spec = specs[i]
                if spec is None:
                    typed = aval.anonymous()
                else:
                    if where is None:
                        where = _leaf_names(signature.treedef, names)
                    typed = binder.aval_from_example(spec, aval, f"argument {where[i]}")
                shared = same.get(typed._key)
                if shared is None:
                    shared = same[typed._key] = shared_aval(typed)
                avals[i] = shared
        traced = trace_flat(_unwrap_static(self.fn), signature.treedef, leaves, signature.dynamic, avals, signature.weak)
        if traced.closure:
            raise ShapeError(
                f"{self.name} reads a staged value from another program that is being staged; pass it as an argument",
                "stage",
                loc,
            )
        if return_tree is not None:
            _check_return(traced, return_tree, binder, self.fn)
        return Staged(self, traced, signature, tuple(avals))


class _Static:
    """Wraps a static argument so it is one pytree leaf (its value keys the cache)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(_static_key(self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and _static_key(other.value) == _static_key(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


def _unwrap_static(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*(a.value if isinstance(a, _Static) else a for a in args), **kwargs)

    return call


def _spec_shape(binder: DimBinder, spec: TensorSpec, where: str) -> tuple[tuple[int, ...], Any, Any]:
    aval = binder.aval_from_spec(spec, where)
    return aval.shape, aval.dtype, aval.dims


def _leaf_names(treedef: pytree.TreeDef, names: Sequence[str]) -> list[str]:
    """Human names of each leaf of ``(args, kwargs)``: ``x``, ``params.w``, ``batch[0]``."""
    args_def, kwargs_def = treedef.children
    out: list[str] = []
    for i, child in enumerate(args_def.children):
        out += pytree.leaf_paths(child, names[i] if i < len(names) else f"arg{i}")
    for key, child in zip(kwargs_def.aux, kwargs_def.children):  # type: ignore[call-overload]
        out += pytree.leaf_paths(child, str(key))
    return out


def _check_return(traced: TracedFunction, tree: Any, binder: DimBinder, fn: Callable[..., Any]) -> None:
    out_values = pytree.unflatten(traced.out_tree, traced.graph.outputs[: traced.out_tree.num_leaves])
    specs = aligned_specs(tree, out_values)
    for i, (atom, spec) in enumerate(zip(traced.graph.outputs, specs)):
        if spec is None:
            continue
        where = "the result" if len(specs) == 1 else f"result {i}"
        producer = next((e for e in traced.graph.eqns if atom in e.outputs), None)
        loc = producer.loc if producer is not None else _def_loc(fn)
        try:
            got = binder.aval_from_example(spec, atom.aval, where)
        except (ShapeError, DTypeError) as err:
            raise type(err)(
                f"{where} is {atom.aval}, but the return annotation says {spec.describe()}", "return", loc
            ) from None
        mismatched = [
            f"axis {axis} is {had} but the annotation says {want}"
            for axis, (had, want) in enumerate(zip(atom.aval.dims, got.dims))
            if had is not None and want is not None and had != want
        ]
        if mismatched:
            raise ShapeError(
                f"{where} is {atom.aval}, but the return annotation says {spec.describe()}: " + "; ".join(mismatched),
                "return",
                loc,
            )


def _def_loc(fn: Callable[..., Any]) -> SourceLoc | None:
    code = getattr(fn, "__code__", None)
    return SourceLoc(code.co_filename, code.co_firstlineno) if code is not None else None


@overload
def program(fn: Callable[P, R], /) -> Program[P, R]: ...
@overload
def program(
    *,
    static_argnums: Sequence[int] = (),
    donate_argnums: Sequence[int] = (),
    device: str = "cpu",
    name: str | None = None,
    compiler_options: backend.CompilerOptions | None = None,
) -> Callable[[Callable[P, R]], Program[P, R]]: ...
def program(
    fn: Callable[P, R] | None = None,
    /,
    *,
    static_argnums: Sequence[int] = (),
    donate_argnums: Sequence[int] = (),
    device: str = "cpu",
    name: str | None = None,
    compiler_options: backend.CompilerOptions | None = None,
) -> Program[P, R] | Callable[[Callable[P, R]], Program[P, R]]:
    """Make a typed Python function a Program (use as ``@ts.program`` or ``@ts.program(donate_argnums=...)``).

    ``compiler_options`` are XLA debug options for every compile of this program, named as in ``XLA_FLAGS``
    without the dashes (``{"xla_cpu_experimental_ynn_fusion_type": ""}``, say); see ``Staged.compile``."""

    def make(f: Callable[P, R]) -> Program[P, R]:
        return Program(
            f, static_argnums=static_argnums, donate_argnums=donate_argnums, device=device, name=name,
            compiler_options=compiler_options,
        )

    return make(fn) if fn is not None else make


# ------------------------------------------------------------------------------------------------- Staged


class Staged(Generic[P, R]):
    """A staged program: its typed graph and signature. Print it, typecheck it, lower it, compile it."""

    def __init__(self, program: Program[P, R], traced: TracedFunction, signature: Signature, avals: tuple[Any, ...]):
        self.program = program
        self.graph: Graph = traced.graph
        self.out_tree = traced.out_tree
        self.signature = signature
        self.in_avals: tuple[Aval, ...] = tuple(a for a in avals if a is not None)
        # Per dynamic leaf: the values a Python int argument must take not to wrap in the arrays it meets.
        self.int_ranges = traced.int_ranges
        self._module_text: dict[str, str] = {}  # by platform

    @property
    def out_avals(self) -> tuple[Aval, ...]:
        return self.graph.out_avals

    def __str__(self) -> str:
        return str(self.graph)

    def __repr__(self) -> str:
        ins = ", ".join(str(a) for a in self.in_avals)
        outs = ", ".join(str(a) for a in self.out_avals)
        return f"<Staged {self.program.name}({ins}) -> ({outs}), {len(self.graph.eqns)} equations>"

    def typecheck(self) -> None:
        typecheck(self.graph)

    def stablehlo(self, platform: str = "cpu") -> str:
        """The StableHLO module text for ``platform`` (lowered once per platform: the graph is immutable)."""
        text = self._module_text.get(platform)
        if text is None:
            try:
                text = emit.module_text(self.graph, self.program.name, self._donated_inputs(), platform=platform)
            except ValueError as exc:  # an array too big for XLA
                raise ValueError(f"{self.program.name}: {exc}") from None
            self._module_text[platform] = text
        return text

    def _donated_inputs(self) -> tuple[int, ...]:
        if not self.program.donate_argnums:
            return ()
        args_def = self.signature.treedef.children[0]
        donated: list[int] = []
        position = 0
        leaf = 0
        for i, child in enumerate(args_def.children):
            for _ in range(child.num_leaves):
                if self.signature.dynamic[leaf]:
                    if i in self.program.donate_argnums:
                        donated.append(position)
                    position += 1
                leaf += 1
        return tuple(donated)

    def compile(
        self, device: str | Device = "cpu", compiler_options: backend.CompilerOptions | None = None
    ) -> Compiled[P, R]:
        """An XLA executable for ``device``. ``compiler_options`` override XLA's debug options for this compile
        (names as in ``XLA_FLAGS`` without the dashes; part of the disk cache's key): for instance
        ``{"xla_cpu_experimental_ynn_fusion_type": ""}`` leaves CPU matmuls to XLA's own kernels, whose first run
        is several times quicker than YNNPACK's (one runtime built per matmul) at some cost in steady-state speed
        (BENCHMARKS.md). Names or values XLA refuses raise a ValueError."""
        if not isinstance(device, (str, Device)):
            raise TypeError(f"compile(): device must be a platform name such as 'cpu' or a ts.Device, got {device!r}")
        target = devices(device)[0] if isinstance(device, str) else device
        text = self.stablehlo(target.platform)
        options = backend.compile_options(compiler_options)
        executable, from_disk = backend.compile_module_cached(text, [target.xla], options)
        compiled = Compiled(self, executable, target, text)
        compiled.from_disk_cache = from_disk
        return compiled


# ----------------------------------------------------------------------------------------------- Compiled


class Compiled(Generic[P, R]):
    """An XLA executable with its signature; calling it validates every argument before anything runs."""

    def __init__(self, staged: Staged[P, R], executable: Any, device: Device, module_text: str) -> None:
        self.staged = staged
        self.executable = executable
        self.device = device
        self.module_text = module_text
        self.in_avals = staged.in_avals
        self.out_avals = staged.out_avals
        self._out_tree = staged.out_tree
        self._signature = staged.signature
        self._dynamic = staged.signature.dynamic
        self._expected = staged.signature.avals
        in_layouts = tuple((a.dtype, a.shape) for a in self.in_avals)
        self._handlers = [runtime.result_handler(a.shape, a.dtype, device.xla) for a in self.out_avals]
        self._execute = executable.execute_sharded
        self._validated: set[Hashable] = set()  # fast-path keys (dispatch.py) of calls that passed the checks
        # Set by every run; the owning Program's cache eviction reads and clears it (a list: see _runner).
        self._used = [False]
        self.from_disk_cache = False  # True when the executable was deserialized from the persistent cache
        # Executes on already-validated dynamic leaves; ``call_flat`` is the checked entry point.
        # ``run_buffers``: the same on the buffers of Arrays the caller already found to be plain Arrays.
        self.run, self.run_buffers = _runner(
            self._execute, self._handlers, self.out_avals, self._out_tree, in_layouts, device.xla, self._used,
            staged.int_ranges,
        )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        program = self.staged.program
        try:
            key: Hashable | None
            key, dynamic = call_key(args, kwargs, program._static_set, program.scalars_dynamic)
            if key in self._validated:
                return self.run(dynamic)  # type: ignore[no-any-return]
        except (Unsupported, TypeError):
            key = None
        out = self._call_checked(args, kwargs)
        if key is not None and len(self._validated) < _VALIDATED_KEYS:
            self._validated.add(key)  # this exact argument layout passed every check: skip them next time
        return out

    def _call_checked(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
        leaves, treedef = pytree.flatten((self.staged.program._mark_static(args), kwargs))
        if treedef != self._signature.treedef:
            raise TypeError(
                f"{self.staged.program.name}: argument structure {treedef!r} does not match the compiled "
                f"signature {self._signature.treedef!r}"
            )
        for leaf, static, dyn in zip(leaves, self._signature.statics, self._dynamic):
            if not dyn and _static_key(leaf) != _static_key(static):
                raise TypeError(f"{self.staged.program.name}: static argument {leaf!r} differs from {static!r}")
        return self.call_flat(leaves)  # type: ignore[no-any-return]

    def call_flat(self, leaves: Sequence[Any]) -> Any:
        """Run on all flattened leaves (static ones are skipped) after checking every dynamic one."""
        return self.run(self._checked(leaves))

    def _checked(self, leaves: Sequence[Any]) -> list[Any]:
        """The dynamic leaves, each checked against its expected shape and dtype (jaxlib checks only sizes)."""
        dynamic = []
        for index, (leaf, expected) in enumerate(zip(leaves, self._expected)):
            if expected is None:
                continue
            kind = type(leaf)
            if kind is Array or isinstance(leaf, Array):
                aval = leaf.aval
                if aval is not expected and (aval.shape != expected.shape or aval.dtype != expected.dtype):
                    self._mismatch(index, aval, expected)
            elif kind is np.ndarray or isinstance(leaf, (np.ndarray, np.generic)):
                if leaf.shape != expected.shape or (
                    leaf.dtype != expected.dtype and leaf.dtype.newbyteorder("=") != expected.dtype  # big-endian
                ):
                    self._mismatch(index, Aval(leaf.shape, np.dtype(leaf.dtype)), expected)
            elif kind in (float, int, bool) and self._signature.weak[index]:
                if kind is float and not _dt.is_float(expected.dtype):
                    self._mismatch(index, _leaf_aval(leaf), expected)
            elif isinstance(leaf, Tensor):
                raise TypeError(
                    f"{self.staged.program.name}: argument {index} is a staged value; call it inside staging"
                )
            else:
                raise TypeError(
                    f"{self.staged.program.name}: argument {index} must be an array, got {type(leaf).__name__}"
                )
            dynamic.append(leaf)
        return dynamic

    def _mismatch(self, index: int, got: Aval, expected: Aval) -> None:
        names, _, _ = function_annotations(self.staged.program.fn)
        where = _leaf_names(self._signature.treedef, names)[index]
        raise TypeError(
            f"{self.staged.program.name}: argument {where} expected {expected}, got {got.anonymous()} "
            "(compiled programs never convert arguments; stage again for new shapes or dtypes)"
        )

    # ------------------------------------------------------------------------------------ introspection
    def as_text(self) -> str:
        """The optimized HLO XLA produced."""
        return str(self.executable.hlo_modules()[0].to_string())

    def cost_analysis(self) -> dict[str, float]:
        return dict(self.executable.cost_analysis())

    def memory_analysis(self) -> Any:
        return self.executable.get_compiled_memory_stats()

    def __repr__(self) -> str:
        ins = ", ".join(str(a) for a in self.in_avals)
        outs = ", ".join(str(a) for a in self.out_avals)
        return f"<Compiled {self.staged.program.name}({ins}) -> ({outs}) on {self.device}>"


def _runner(
    execute: Callable[[list[Any]], Any],
    handlers: list[Any],
    out_avals: tuple[Aval, ...],
    out_tree: pytree.TreeDef,
    in_layouts: tuple[tuple[np.dtype[Any], tuple[int, ...]], ...],
    device: Any,
    used: list[bool],
    int_ranges: Sequence[IntRange | None],
) -> tuple[Callable[[Sequence[Any]], Any], Callable[[list[Any], Sequence[Any]], Any]]:
    """The per-call work of a Compiled as closures over everything it needs (no attribute lookups, and no
    reference back to the Compiled, so dropping a Compiled frees its executable at once): ``run(dynamic)`` on
    the validated dynamic leaves, and ``run_buffers(buffers, arrays)`` on the buffers of ``arrays``, all plain
    Arrays (their buffers go in as they are when on this device, else ``run`` moves them)."""
    sharding = runtime.single_device_sharding(device)
    devices = [device]
    put = runtime.put_contiguous
    in_buffer_avals = [runtime.buffer_aval(shape, dtype) for dtype, shape in in_layouts]
    single_out = out_tree == pytree.LEAF
    out_aval = out_avals[0] if single_out else None
    flat_tuple_out = out_tree.kind == "tuple" and all(c == pytree.LEAF for c in out_tree.children)
    new_array = Array

    ranges = list(int_ranges) or [None] * len(in_buffer_avals)

    def transfer(leaf: Any, aval: runtime.BufferAval, allowed: IntRange | None) -> Any:
        if type(leaf) is np.ndarray:  # the caller's memory itself is the source of the one copy
            return put(runtime.contiguous(leaf), aval, sharding, devices)
        if isinstance(leaf, Array):
            buffer = leaf.buffer
            if buffer._sharding is sharding:
                return buffer
            held = buffer._sharding._internal_device_list
            if len(held) != 1:  # split over several devices (a pmap result): never handed to this executable
                return put(runtime.contiguous(leaf.numpy()), aval, sharding, devices)
            if held[0] == device:
                return buffer
            return runtime.device_copy(buffer, device)
        if allowed is not None and type(leaf) is int:
            allowed.check(leaf, "argument")
        try:
            host = runtime.contiguous(np.asarray(leaf, dtype=aval.dtype))  # scalars take their (checked) dtype
        except OverflowError:
            raise ValueError(
                f"Python integer argument {leaf} does not fit {_dt.short_name(aval.dtype)} (Python ints passed to "
                "programs are i32); pass a NumPy scalar or array of a wider dtype"
            ) from None
        return put(host, aval, sharding, devices)

    def run(dynamic: Sequence[Any]) -> Any:
        buffers = []
        for leaf in dynamic:
            if type(leaf) is new_array and (buffer := leaf.buffer)._sharding is sharding:
                buffers.append(buffer)
            else:  # host data, or arrays on another device
                buffers = [transfer(*item) for item in zip(dynamic, in_buffer_avals, ranges, strict=True)]
                break
        return execute_buffers(buffers)

    def run_buffers(buffers: list[Any], arrays: Sequence[Any]) -> Any:
        for buffer in buffers:
            if buffer._sharding is not sharding:  # on another device, or split over several
                return run(arrays)
        return execute_buffers(buffers)

    def execute_buffers(buffers: list[Any]) -> Any:
        used[0] = True
        try:
            outs = execute(buffers).consume_with_handlers(handlers)
        except Exception as exc:  # XLA's own error type; explained when the cause is the caller's
            _explain_execute_error(exc, buffers)
            raise
        if out_aval is not None:
            return new_array(outs[0], out_aval)
        arrays: list[Array[Any]] = [new_array(buf, aval) for buf, aval in zip(outs, out_avals)]
        if flat_tuple_out:
            return tuple(arrays)
        return pytree.unflatten(out_tree, arrays)

    return run, run_buffers


def _explain_execute_error(exc: Exception, buffers: Sequence[Any]) -> None:
    """Raise a clear error for inputs XLA refuses after validation: deleted or donated arrays, and one array
    passed twice where one use is donated."""
    for index, buffer in enumerate(buffers):
        if buffer.is_deleted():
            raise ValueError(
                f"argument {index} was deleted or donated to an earlier call (donate_argnums); it has no value any more"
            ) from None
    if "donated" in str(exc):
        raise ValueError(
            "an array donated to this call (donate_argnums) is also passed as another argument; pass a copy"
        ) from None
