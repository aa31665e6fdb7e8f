"""``Staged`` (a program's typed graph for one signature) and ``Compiled`` (its XLA executable): lowering,
compiling and the checked, then fast, call path."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

import numpy as np

from . import debug_values, pytree, transfer_guards
from .array import Array, Device, as_device, default_device
from .call_signature import Signature, leaf_aval, leaf_names, static_key
from .dispatch import Unsupported, call_key
from .lowering import backend, emit, lapack, runtime
from .signature import function_annotations
from .staging import dtypes as _dt
from .staging.ir import Aval, Graph
from .staging.typecheck import typecheck
from .tensor import Tensor
from .trace import IntRange, TracedFunction

if TYPE_CHECKING:
    from .program import Program

P = ParamSpec("P")
R = TypeVar("R")

ELSEWHERE: Any = object()  # what a Compiled following its arguments returns for arguments on another device
_VALIDATED_KEYS = 64  # argument layouts a Compiled remembers as checked (dim names can make several per program)


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
        self._host_callbacks: dict[str, list[Any]] = {}  # by platform: the Python callbacks its module calls
        self.lapack_dependent: set[str] = set()  # platforms whose module text followed lapack.set_enabled's choice

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
            asked = lapack.times_asked()
            try:
                text, callbacks = emit.module_text_and_callbacks(
                    self.graph, self.program.name, self._donated_inputs(), platform=platform
                )
            except ValueError as exc:  # an array too big for XLA
                raise ValueError(f"{self.program.name}: {exc}") from None
            self._module_text[platform] = text
            self._host_callbacks[platform] = callbacks
            if lapack.times_asked() != asked:
                self.lapack_dependent.add(platform)
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
        self, device: str | Device | None = None, compiler_options: backend.CompilerOptions | None = None
    ) -> Compiled[P, R]:
        """An XLA executable for ``device`` (a platform name, its first device; default: ``ts.default_device()``);
        arguments on other devices are moved to it at each call. ``compiler_options`` override XLA's debug options
        for this compile (names as in ``XLA_FLAGS`` without the dashes; part of the disk cache's key): for instance
        ``{"xla_cpu_experimental_ynn_fusion_type": ""}`` leaves CPU matmuls to XLA's own kernels, whose first run
        is several times quicker than YNNPACK's (one runtime built per matmul) at some cost in steady-state speed
        (BENCHMARKS.md). Names or values XLA refuses raise a ValueError."""
        if device is not None and not isinstance(device, (str, Device)):
            raise TypeError(f"compile(): device must be a platform name such as 'cpu' or a ts.Device, got {device!r}")
        target = default_device() if device is None else as_device(device)
        text = self.stablehlo(target.platform)
        options = backend.compile_options(compiler_options)
        callbacks = self._host_callbacks[target.platform]
        executable, from_disk = backend.compile_module_cached(text, [target.xla], options, callbacks)
        compiled = Compiled(self, executable, target, text)
        compiled.from_disk_cache = from_disk
        compiled.lapack_dependent = target.platform in self.lapack_dependent
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
        callbacks = staged._host_callbacks.get(device.platform, [])
        self._execute = _raising_callback_failures(executable.execute_sharded, callbacks, device.platform)
        self._validated: set[Hashable] = set()  # fast-path keys (dispatch.py) of calls that passed the checks
        # Set by every run; the owning Program's cache eviction reads and clears it (a list: see _runner).
        self._used = [False]
        self.from_disk_cache = False  # True when the executable was deserialized from the persistent cache
        self.lapack_dependent = False  # True when its lowering chose between LAPACK and XLA's expansions
        # Executes on already-validated dynamic leaves; ``call_flat`` is the checked entry point.
        # ``run_buffers``: the same on the buffers of Arrays the caller already found to be plain Arrays.
        self.run, self.run_buffers, self._run_here, self._run_buffers_here = _runner(
            self._execute, self._handlers, self.out_avals, self._out_tree, in_layouts, device.xla, self._used,
            staged.int_ranges, debug_values.checker(staged, device),
        )
        # What a Program's fast paths call: these move arguments from other devices, or, once
        # ``follow_arguments()`` is called, return ELSEWHERE for them (the Program compiles for their device).
        self.dispatch, self.dispatch_buffers = self.run, self.run_buffers

    def follow_arguments(self) -> None:
        """Make ``dispatch``/``dispatch_buffers`` return ELSEWHERE, not move, for Arrays on other devices."""
        self.dispatch, self.dispatch_buffers = self._run_here, self._run_buffers_here

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        program = self.staged.program
        try:
            key: Hashable | None
            key, dynamic = call_key(args, kwargs, program._static_set, program.scalars_dynamic, program.static_argnames)
            if key in self._validated:
                return self.run(dynamic)  # type: ignore[no-any-return]
        except (Unsupported, TypeError):
            key = None
        out = self._call_checked(args, kwargs)
        if key is not None and len(self._validated) < _VALIDATED_KEYS:
            self._validated.add(key)  # this exact argument layout passed every check: skip them next time
        return out

    def _call_checked(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
        leaves, treedef = pytree.flatten(self.staged.program._mark_static(args, kwargs))
        if treedef != self._signature.treedef:
            raise TypeError(
                f"{self.staged.program.name}: argument structure {treedef!r} does not match the compiled "
                f"signature {self._signature.treedef!r}"
            )
        for leaf, static, dyn in zip(leaves, self._signature.statics, self._dynamic):
            if not dyn and static_key(leaf) != static_key(static):
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
                    self._mismatch(index, leaf_aval(leaf), expected)
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
        where = leaf_names(self._signature.treedef, names)[index]
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


_Run = Callable[[Sequence[Any]], Any]
_RunBuffers = Callable[[list[Any], Sequence[Any]], Any]


def _raising_callback_failures(execute: Callable[..., Any], callbacks: Sequence[Any], platform: str) -> Any:
    """``execute``, raising a host callback's own exception where XLA reports its failure as a runtime error. A
    program with ordered callbacks runs to completion before the call returns, so the ordered callbacks of
    successive calls (of it or of another such program) run in the order of the calls; other runs are left to
    ``effects_barrier``. On a GPU every run with callbacks is waited for: XLA:GPU would report a callback's
    failure only when the results are read, as its own error without the callback's exception."""
    if not callbacks:
        return execute
    waits = platform != "cpu" or any(callback.ordered for callback in callbacks)

    def raise_failure() -> None:
        for callback in callbacks:
            failure = callback.take_failure()
            if failure is not None:
                raise failure from None

    def run(buffers: list[Any]) -> Any:
        try:
            results = execute(buffers, with_tokens=True)
            if waits:
                results.consume_token().block_until_ready()
            else:
                runtime.track_effects(results.consume_token())
        except Exception:
            raise_failure()
            raise
        if waits:
            raise_failure()
        return results

    return run


def _runner(
    execute: Callable[[list[Any]], Any],
    handlers: list[Any],
    out_avals: tuple[Aval, ...],
    out_tree: pytree.TreeDef,
    in_layouts: tuple[tuple[np.dtype[Any], tuple[int, ...]], ...],
    device: Any,
    used: list[bool],
    int_ranges: Sequence[IntRange | None],
    check_values: Callable[[list[Any], Sequence[Any]], None],
) -> tuple[_Run, _RunBuffers, _Run, _RunBuffers]:
    """The per-call work of a Compiled as closures over everything it needs (no attribute lookups, and no
    reference back to the Compiled, so dropping a Compiled frees its executable at once): ``run(dynamic)`` on
    the validated dynamic leaves, and ``run_buffers(buffers, arrays)`` on the buffers of ``arrays``, all plain
    Arrays (their buffers go in as they are when on this device, else ``run`` moves them); then the same two
    returning ELSEWHERE, instead of moving them, when some Array is on another device. While ``debug_nans`` or
    ``debug_infs`` is on, ``check_values`` reads every run's results (``debug_values``)."""
    sharding = runtime.single_device_sharding(device)
    checking = debug_values.ACTIVE
    devices = [device]
    put = runtime.put_contiguous
    in_buffer_avals = [runtime.buffer_aval(shape, dtype) for dtype, shape in in_layouts]
    single_out = out_tree == pytree.LEAF
    out_aval = out_avals[0] if single_out else None
    flat_tuple_out = out_tree.kind == "tuple" and all(c == pytree.LEAF for c in out_tree.children)
    new_array = Array
    guarding = transfer_guards.ACTIVE

    ranges = list(int_ranges) or [None] * len(in_buffer_avals)

    def guard(direction: str, aval: runtime.BufferAval) -> None:
        """The transfer guard's check of an argument's implicit copy (only where one is being made)."""
        shape, dtype = aval.shape, aval.dtype
        transfer_guards.check(direction, f"{_dt.short_name(dtype)}{list(shape)} argument to {device}")

    def transfer(leaf: Any, aval: runtime.BufferAval, allowed: IntRange | None) -> Any:
        if type(leaf) is np.ndarray:  # the caller's memory itself is the source of the one copy
            if guarding[0]:
                guard("host_to_device", aval)
            return put(runtime.contiguous(leaf), aval, sharding, devices)
        if isinstance(leaf, Array):
            buffer = leaf.buffer
            if buffer._sharding is sharding:
                return buffer
            held = buffer._sharding._internal_device_list
            if len(held) == 1 and held[0] == device:
                return buffer
            if guarding[0]:
                guard("device_to_device", aval)
            if len(held) != 1:  # split over several devices (a pmap result): never handed to this executable
                return put(runtime.contiguous(leaf._host_value()), aval, sharding, devices)
            return runtime.device_copy(buffer, device)
        if guarding[0]:
            guard("host_to_device", aval)
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

    def elsewhere(buffer: Any) -> bool:
        if buffer._sharding is sharding:
            return False
        held = buffer._sharding._internal_device_list
        return len(held) != 1 or held[0] != device

    def run_here(dynamic: Sequence[Any]) -> Any:
        buffers = []
        for leaf, aval, allowed in zip(dynamic, in_buffer_avals, ranges):
            if type(leaf) is np.ndarray:  # host data goes to this device
                if guarding[0]:
                    guard("host_to_device", aval)
                buffers.append(put(runtime.contiguous(leaf), aval, sharding, devices))
            elif isinstance(leaf, Array):
                buffer = leaf.buffer
                if buffer._sharding is not sharding and elsewhere(buffer):
                    return ELSEWHERE  # Arrays elsewhere choose their own device
                buffers.append(buffer)
            else:
                buffers.append(transfer(leaf, aval, allowed))
        return execute_buffers(buffers)

    def run_buffers_here(buffers: list[Any], arrays: Sequence[Any]) -> Any:
        for buffer in buffers:
            if buffer._sharding is not sharding:
                return ELSEWHERE if any(elsewhere(b) for b in buffers) else run(arrays)
        return execute_buffers(buffers)

    def execute_buffers(buffers: list[Any]) -> Any:
        used[0] = True
        try:
            outs = execute(buffers).consume_with_handlers(handlers)
        except Exception as exc:  # XLA's own error type; explained when the cause is the caller's
            _explain_execute_error(exc, buffers)
            raise
        if out_aval is not None:
            result: Array[Any] = new_array(outs[0], out_aval)
            if checking[0]:
                check_values(buffers, [result])
            return result
        arrays: list[Array[Any]] = [new_array(buf, aval) for buf, aval in zip(outs, out_avals)]
        if checking[0]:
            check_values(buffers, arrays)
        if flat_tuple_out:
            return tuple(arrays)
        return pytree.unflatten(out_tree, arrays)

    return run, run_buffers, run_here, run_buffers_here


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
