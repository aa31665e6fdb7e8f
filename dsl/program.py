"""``Program``: a typed Python function that stages to a ``Staged`` graph and compiles to a ``Compiled``
executable (``staged.py``).

Calling a Program directly stages, compiles and caches by argument signature; the explicit
``stage(...).compile(...)`` path is for ahead-of-time use and inspection.
"""

from __future__ import annotations

import functools
import inspect
import os
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, overload

from . import contexts, gspmd_call, pytree
from .array import Array, Device, as_device, default_device
from .call_signature import Signature, StaticArgument, is_dynamic, leaf_names
from .dispatch import Unsupported, call_key
from .lowering import backend, lapack, runtime
from .signature import (
    DimBinder,
    Spec,
    TensorSpec,
    aligned_specs,
    build_from_specs,
    function_annotations,
)
from .staged import ELSEWHERE, Compiled, Staged
from .staging import dtypes as _dt
from .staging.builder import _STACK as _STAGING
from .staging.errors import DTypeError, ShapeError
from .staging.ir import Aval, SourceLoc, shared_aval
from .staging.source import user_location
from .trace import TracedFunction, trace_flat

P = ParamSpec("P")
R = TypeVar("R")
_CacheKey = tuple[Hashable, Device, Hashable]  # (signature key, device, ``contexts.stage_key()``)

_DEFAULT_CACHE_SIZE = int(os.environ.get("TENSORSTAGE_PROGRAM_CACHE", "256"))
_KEPT_REASONS = 100  # recompile reasons a Program keeps (the most recent)
_PROGRAMS: weakref.WeakSet[Program[Any, Any]] = weakref.WeakSet()  # every live Program, library ops included


def _forget_fast_paths() -> None:
    """A switch in ``contexts`` changed: every call must pass ``_call_general`` again, which reads the switches
    (kept off the fast path, which reads none of them)."""
    for program in list(_PROGRAMS):
        program._dispatch = {}


def _lapack_choice_changed() -> None:
    """``lapack.set_enabled`` changed how linear algebra lowers: no Program may keep running an executable whose
    lowering made that choice."""
    reason = "lapack.set_enabled changed how linear algebra lowers"
    for program in list(_PROGRAMS):
        program._drop(lambda compiled: compiled.lapack_dependent, reason)


class Program(Generic[P, R]):
    """A typed Python function that can be staged to a graph, compiled with XLA, and called."""

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        static_argnums: Sequence[int] = (),
        donate_argnums: Sequence[int] = (),
        device: str | Device | None = None,
        cache_size: int = _DEFAULT_CACHE_SIZE,
        static_argnames: str | Iterable[str] = (),
        scalars_dynamic: bool = True,
        check_annotations: bool = True,
        compiler_options: backend.CompilerOptions | None = None,
        in_shardings: Any = None,
        out_shardings: Any = None,
    ) -> None:
        self.fn = fn
        # Pytree prefixes of ts.NamedSharding / None: calls then run partitioned over the mesh (gspmd_call.py).
        self.in_shardings = gspmd_call.check_shardings(in_shardings, "in_shardings")
        self.out_shardings = gspmd_call.check_shardings(out_shardings, "out_shardings")
        self._partitioned: dict[Hashable, Any] = {}  # gspmd_call's executables, by signature and shardings
        self.compiler_options = dict(compiler_options) if compiler_options else None
        self.name: str = name or str(getattr(fn, "__name__", "program"))
        if not callable(fn):
            raise TypeError(f"program: expected a function, got {type(fn).__name__} {fn!r:.60}")
        # The signature is read once, and only for these options (reading it is slow; programs are made per op).
        params = _parameters(fn) if static_argnums or donate_argnums or static_argnames else None
        self.static_argnums, self.static_argnames = _static_arguments(
            fn, params, _normalized_argnums(fn, params, static_argnums, "static_argnums"), static_argnames
        )
        self.donate_argnums = _normalized_argnums(fn, params, donate_argnums, "donate_argnums")
        if set(self.static_argnums) & set(self.donate_argnums):
            raise ValueError(f"{self.name}: an argument cannot be both static and donated: "
                             f"static_argnums={tuple(static_argnums)}, donate_argnums={tuple(donate_argnums)}")
        if device is not None and not isinstance(device, (str, Device)):
            raise TypeError(f"{self.name}: device must be a platform name such as 'gpu', a ts.Device or None, "
                            f"got {device!r}")
        # None: run where the arguments are (see _placement); a platform name is resolved at the first compile.
        self.device = device
        self.scalars_dynamic = scalars_dynamic
        # Library ops are generic over every shape; their annotations are for mypy, not for dim binding.
        self.check_annotations = check_annotations
        # By (signature key, device, ``contexts.stage_key()``): one program can run on several devices.
        self._cache: OrderedDict[_CacheKey, Compiled[P, R]] = OrderedDict()
        self._cache_size = cache_size
        # Fast-path keys (see dispatch.py) of calls already validated against a cached Compiled.
        self._dispatch: dict[Hashable, Compiled[P, R]] = {}
        self._static_set = frozenset(self.static_argnums)
        self.recompile_reasons: list[str] = []
        self._cleared_because: str | None = None  # the next compile's reason after clear_cache
        self.runs_eagerly_without_jit = False  # ``ts.disable_jit`` runs it op by op (``ts.program`` sets it)
        functools.update_wrapper(self, fn)
        _PROGRAMS.add(self)

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
                key = tuple(parts)
                compiled = self._dispatch.get(key)
                if compiled is not None:
                    out = compiled.dispatch_buffers(buffers, args)
                    if out is not ELSEWHERE:
                        return out  # type: ignore[no-any-return]
                    return self._call_general(args, kwargs, key)  # arguments on another device
        try:
            key, dynamic = call_key(args, kwargs, self._static_set, self.scalars_dynamic, self.static_argnames)
            compiled = self._dispatch.get(key)
        except (Unsupported, TypeError):  # TypeError: an unhashable static; the general path explains it
            return self._call_general(args, kwargs, None)
        if compiled is None:
            return self._call_general(args, kwargs, key)
        out = compiled.dispatch(dynamic)
        if out is ELSEWHERE:
            return self._call_general(args, kwargs, key)
        return out  # type: ignore[no-any-return]

    def _call_general(self, args: tuple[Any, ...], kwargs: dict[str, Any], key: Hashable | None) -> R:
        """Flatten, look up (or stage and compile) by signature, validate every argument, run."""
        if contexts.DISABLE_JIT[0] and self.runs_eagerly_without_jit:
            return self.fn(*args, **kwargs)  # nothing remembered in ``_dispatch``: every call comes here
        leaves, treedef = pytree.flatten(self._mark_static(args, kwargs))
        try:
            signature = Signature(treedef, leaves, self.scalars_dynamic)
        except (TypeError, ValueError) as exc:  # an unsupported dtype, an unhashable static, an int out of range
            raise type(exc)(f"{self.name}: {exc}") from None
        if gspmd_call.partitioned(self, leaves):  # NamedSharding arguments, or in/out_shardings given
            return gspmd_call.call(self, args, kwargs, signature, leaves)  # type: ignore[no-any-return]
        cache_key = (signature.key, self._placement(leaves), contexts.stage_key())
        compiled = self._cache.get(cache_key)
        if compiled is None:
            compiled = self._compile_for(signature, leaves, cache_key)
        else:
            self._cache.move_to_end(cache_key)
        out = compiled.call_flat(leaves)  # raises before running if an argument does not fit
        if key is not None:
            if len(self._dispatch) >= 4 * self._cache_size:
                self._dispatch.clear()  # many keys per signature (e.g. dim names): start over, stay bounded
            self._dispatch[key] = compiled
        return out  # type: ignore[no-any-return]

    def _mark_static(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(args, kwargs)`` with the static ones wrapped, so each is one leaf whose value keys the cache."""
        if self.static_argnums:
            args = tuple(StaticArgument(a) if i in self.static_argnums else a for i, a in enumerate(args))
        if self.static_argnames and kwargs:
            kwargs = {k: StaticArgument(v) if k in self.static_argnames else v for k, v in kwargs.items()}
        return args, kwargs

    def _placement(self, leaves: Sequence[Any]) -> Device:
        """The device a call runs on: the program's own if it has one, else that of its Arrays that are not on
        the default device (all on one device), else the default device. Arrays on the default device move, as
        JAX moves uncommitted arrays; Arrays on two other devices are an error (moving one would be a silent
        cross-device copy on every call)."""
        if self.device is not None:
            return as_device(self.device)
        default = default_device()
        chosen: Device | None = None
        for leaf in leaves:
            if isinstance(leaf, Array) and runtime.is_single_device(leaf.buffer):
                where = leaf.device
                if where != default and where != chosen:
                    if chosen is not None:
                        raise ValueError(
                            f"{self.name}: arguments are on several devices ({chosen} and {where}); move them to "
                            f"one with ts.device_put(x, device), or give the program a device"
                        )
                    chosen = where
        return chosen if chosen is not None else default

    def clear_cache(self, reason: str = "cache cleared") -> None:
        """Drop every executable and remembered call: the next call stages and compiles again, and
        ``recompile_reasons`` records ``reason`` for it."""
        self._drop(lambda compiled: True, reason)

    def _drop(self, which: Callable[[Compiled[P, R]], bool], reason: str) -> None:
        """Drop the executables ``which`` picks (and the calls remembered for them); the next compile's reason is
        ``reason``."""
        self._partitioned.clear()  # few, and cheap to rebuild: dropped whatever ``which`` picks
        dropped = [key for key, compiled in self._cache.items() if which(compiled)]
        if not dropped:
            return
        for key in dropped:
            del self._cache[key]
        kept = set(map(id, self._cache.values()))
        self._dispatch = {key: c for key, c in self._dispatch.items() if id(c) in kept}
        self._cleared_because = reason

    def _compile_for(
        self, signature: Signature, leaves: Sequence[Any], cache_key: _CacheKey
    ) -> Compiled[P, R]:
        if self._cleared_because is not None:
            self.recompile_reasons.append(self._cleared_because)
            self._cleared_because = None
        elif self._cache:
            self.recompile_reasons.append(self._explain_miss(cache_key))
            if len(self.recompile_reasons) > _KEPT_REASONS:
                del self.recompile_reasons[:-_KEPT_REASONS]  # the latest reasons; memory stays bounded
        staged = self._stage_signature(signature, leaves, user_location())
        compiled = staged.compile(device=cache_key[1], compiler_options=self.compiler_options)
        if self.device is None:
            compiled.follow_arguments()
        self._cache[cache_key] = compiled
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

    def _explain_miss(self, cache_key: _CacheKey) -> str:
        signature_key, device, setting = cache_key
        treedef: Any
        dynamic: Any
        statics: Any
        avals: Any
        treedef, dynamic, statics, avals, _ = signature_key  # type: ignore[misc]
        for key, old_device, old_setting in self._cache:
            if key == signature_key and old_device == device:
                return f"default_matmul_precision changed: {old_setting} -> {setting}"
        for key, old_device, _ in self._cache:
            if key == signature_key:
                return f"arguments on another device: {old_device} -> {device}"
        for key, _, _ in self._cache:
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
                changed = [f"{_shown(a)} -> {_shown(b)}" for a, b in zip(old_statics, statics) if a != b]
                return "static arguments changed: " + ", ".join(changed)
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
                    if _has_default(self.fn, name):
                        break  # it and the parameters after it keep their defaults
                    raise TypeError(f"stage(): parameter {name!r} has no Tensor annotation; pass an example for it")
                args.append(build_from_specs(tree, lambda spec, where: Spec(*_spec_shape(binder, spec, where)), name))
        leaves, treedef = pytree.flatten(self._mark_static(tuple(args), {}))
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
                if isinstance(tree, TensorSpec) and not is_dynamic(arg, True):
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
                        where = leaf_names(signature.treedef, names)
                    typed = binder.aval_from_example(spec, aval, f"argument {where[i]}")
                shared = same.get(typed._key)
                if shared is None:
                    shared = same[typed._key] = shared_aval(typed)
                avals[i] = shared
        traced = trace_flat(
            _unwrap_static(self.fn), signature.treedef, leaves, signature.dynamic, avals, signature.weak
        )
        if traced.closure:
            raise ShapeError(
                f"{self.name} reads a staged value from another program that is being staged; pass it as an argument",
                "stage",
                loc,
            )
        if return_tree is not None:
            _check_return(traced, return_tree, binder, self.fn)
        return Staged(self, traced, signature, tuple(avals))


def _normalized_argnums(
    fn: Callable[..., Any], params: list[inspect.Parameter] | None, argnums: Sequence[int] | int, what: str
) -> tuple[int, ...]:
    """``argnums`` as non-negative positions, checked against ``fn``'s positional parameters where it has a fixed
    number of them (``-1`` is the last one; a position past the end is an error, as in JAX). A function taking
    ``*args`` accepts any non-negative position."""
    if isinstance(argnums, int):
        argnums = (argnums,)
    if not argnums:
        return ()
    if not all(type(i) is int for i in argnums):
        raise TypeError(f"{what} must be a sequence of ints, got {argnums!r}")
    positional = _positional_count(params)
    out = []
    for i in argnums:
        if positional is not None and not -positional <= i < positional:
            raise ValueError(f"{what}={tuple(argnums)}: {_name(fn)} takes {positional} positional arguments")
        if i < 0:
            if positional is None:
                raise ValueError(
                    f"{what}={tuple(argnums)}: a negative position needs a function with a fixed number of "
                    f"positional parameters; {_name(fn)} takes *args"
                )
            i += positional
        out.append(i)
    return tuple(sorted(set(out)))


def _static_arguments(
    fn: Callable[..., Any], params: list[inspect.Parameter] | None, argnums: tuple[int, ...],
    argnames: str | Iterable[str],
) -> tuple[tuple[int, ...], frozenset[str]]:
    """The static positions and names, each completed from the other as in JAX: a parameter named in
    ``static_argnames`` is static when passed by position too, and one at a ``static_argnums`` position when
    passed by name. A name ``fn`` does not have (and no ``**kwargs`` would take) is an error."""
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"static_argnames must be strings, got {argnames!r}")
    if params is None or (not names and not argnums):
        return argnums, frozenset(names)
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        unknown = [n for n in names if n not in by_keyword]
        if unknown:
            raise ValueError(f"static_argnames={names}: {_name(fn)} has no keyword parameter {unknown[0]!r}")
    positions = set(argnums) | {positional.index(n) for n in names if n in positional}
    named = set(names) | {positional[i] for i in argnums if i < len(positional) and positional[i] in by_keyword}
    return tuple(sorted(positions)), frozenset(named)


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter] | None:
    """``fn``'s parameters, or None where Python cannot read its signature."""
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def _positional_count(params: list[inspect.Parameter] | None) -> int | None:
    """How many positional parameters there are, or None for ``*args`` (or a signature Python cannot read)."""
    if params is None:
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _name(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__name__", "the function"))


def _shown(key: Any) -> str:
    """A static argument's value as the user wrote it, from its ``static_key`` (``(type, value)`` pairs)."""
    if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], type)):
        return repr(key)
    kind, value = key
    if kind is float:
        return repr(float.fromhex(value))
    if issubclass(kind, tuple) and isinstance(value, tuple):
        inner = ", ".join(_shown(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _unwrap_static(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(
            *(a.value if isinstance(a, StaticArgument) else a for a in args),
            **{k: v.value if isinstance(v, StaticArgument) else v for k, v in kwargs.items()},
        )

    return call


def _spec_shape(binder: DimBinder, spec: TensorSpec, where: str) -> tuple[tuple[int, ...], Any, Any]:
    aval = binder.aval_from_spec(spec, where)
    return aval.shape, aval.dtype, aval.dims


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


def _has_default(fn: Callable[..., Any], name: str) -> bool:
    parameter = inspect.signature(fn).parameters.get(name)
    return parameter is not None and parameter.default is not inspect.Parameter.empty


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
    device: str | Device | None = None,
    name: str | None = None,
    compiler_options: backend.CompilerOptions | None = None,
    static_argnames: str | Iterable[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Callable[[Callable[P, R]], Program[P, R]]: ...
def program(
    fn: Callable[P, R] | None = None,
    /,
    *,
    static_argnums: Sequence[int] = (),
    donate_argnums: Sequence[int] = (),
    device: str | Device | None = None,
    name: str | None = None,
    compiler_options: backend.CompilerOptions | None = None,
    static_argnames: str | Iterable[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Program[P, R] | Callable[[Callable[P, R]], Program[P, R]]:
    """Make a typed Python function a Program (use as ``@ts.program`` or ``@ts.program(donate_argnums=...)``).

    ``static_argnums`` / ``static_argnames``: arguments that are Python values, not arrays (a new value stages and
    compiles again); each completes the other, as in JAX. Non-array leaves other than numbers are static anyway.

    ``device``: where every call runs (``'cpu'``, ``'gpu'`` or a ``ts.Device``; arguments elsewhere are moved).
    By default a call runs where its Arrays are, as in JAX: on the device of those not on the default device
    (``TENSORSTAGE_DEFAULT_DEVICE``, ``'cpu'`` unless set), else on the default device; results stay there.

    ``compiler_options`` are XLA debug options for every compile of this program, named as in ``XLA_FLAGS``
    without the dashes (``{"xla_cpu_experimental_ynn_fusion_type": ""}``, say); see ``Staged.compile``.

    ``in_shardings`` / ``out_shardings``: as in ``jax.jit``, pytree prefixes of the positional arguments / the
    result with ``ts.NamedSharding`` leaves (None: unconstrained). Given these, or Arrays laid out by a
    NamedSharding, a call runs as one program partitioned over the mesh (GSPMD, ``gspmd_call.py``)."""

    def make(f: Callable[P, R]) -> Program[P, R]:
        made = Program(
            f, static_argnums=static_argnums, donate_argnums=donate_argnums, device=device, name=name,
            compiler_options=compiler_options, static_argnames=static_argnames, in_shardings=in_shardings,
            out_shardings=out_shardings,
        )
        made.runs_eagerly_without_jit = True
        return made

    return make(fn) if fn is not None else make


lapack.on_change(_lapack_choice_changed)
contexts.on_change(_forget_fast_paths)
