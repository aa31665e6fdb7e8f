"""Graph -> StableHLO module text.

Text emission in the generic op form (``"stablehlo.add"(%a, %b) : (...) -> ...``) is ~0.3 µs per op and
parses identically on every jaxlib we support. Every op carries its equation's source location, so XLA's HLO
metadata and verifier errors point at user code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from ..staging import bounded, dtypes
from ..staging.bounded import K, V
from ..staging.builder import gc_paused
from ..staging.ir import Atom, Aval, Equation, Graph, Literal, SourceLoc, scalar_aval
from ..staging.primitive import Primitive
from ..staging.source import ScopedLoc


class Value(NamedTuple):
    name: str
    aval: Aval
    type: str  # ``tensor_type(aval)``, computed once when the value is made: operands reuse it


# ``Value(name, aval, type)`` without the Python-level ``__new__`` NamedTuple generates: one C call (per op).
_new_value: Callable[[tuple[str, Aval, str]], Value] = functools.partial(tuple.__new__, Value)
# A Value's fields as a plain tuple: what ``graph_body`` keeps for the results it writes itself (most equations),
# read by position there; made a Value only where one leaves it (operands of a rule, the body's results).
ValueFields = tuple[str, Aval, str]
_NAME: Final = 0
_AVAL: Final = 1
_TYPE: Final = 2


def _as_value(fields: ValueFields) -> Value:
    return fields if type(fields) is Value else _new_value(fields)

LoweringRule = Callable[..., Sequence[Value]]
LOWERINGS: dict[Primitive, LoweringRule] = {}
# Primitives of one result whose lowering broadcasts every rank-0 operand to the result's shape (the elementwise
# family): a rank-0 literal operand of theirs is emitted as one splat constant of that shape instead of a scalar
# constant and a ``broadcast_in_dim`` (XLA reads both alike; the module is shorter).
SPLAT_SCALAR_OPERANDS: set[Primitive] = set()
# Elementwise primitives whose lowering, when every operand already has the result's shape, is exactly
# ``em.op(name, operands, results)``: the op's name. ``graph_body`` writes those lines itself (most equations).
PLAIN_OPS: dict[Primitive, str] = {}
# Primitives of one or two operands and one result whose lowering is exactly ``em.op(name, operands, results, props)``,
# with ``props`` a function of the equation's params alone: the op's name and that function, which returns None
# when it has no text at hand (the rule then runs). ``graph_body`` writes those lines itself (``dot_general``,
# ``broadcast_in_dim``).
PROPS_OPS: dict[Primitive, tuple[str, Callable[[Any], str | None]]] = {}
# ``PROPS_OPS`` entries that hold only on CPU (elsewhere the text also depends on the platform: dot precision).
CPU_ONLY_PROPS: set[Primitive] = set()


@functools.cache
def _portable_props_ops() -> dict[Primitive, tuple[str, Callable[[Any], str | None]]]:
    return {prim: entry for prim, entry in PROPS_OPS.items() if prim not in CPU_ONLY_PROPS}


def lowers(*primitives: Primitive) -> Callable[[LoweringRule], LoweringRule]:
    def register(rule: LoweringRule) -> LoweringRule:
        for prim in primitives:
            if prim in LOWERINGS:
                raise ValueError(f"lowering for {prim.name} registered twice")
            LOWERINGS[prim] = rule
        return rule

    return register


# Texts reused across ops and modules; bounded so thousands of distinct compiles cannot grow them forever.
_TEXT_CACHE_LIMIT = 8192
_TYPE_TEXT: dict[tuple[tuple[int, ...], np.dtype[Any]], str] = {}
_LOC_TEXT: dict[SourceLoc, str] = {}
_I64_TEXT: dict[tuple[int, ...], str] = {}
# ``value = dense<...>`` texts of small constants (scalars: literals, reduction inits) by shape, dtype and bytes.
_SMALL_CONSTANT = 16
_CONSTANT_TEXT: dict[tuple[tuple[int, ...], np.dtype[Any], bytes], str] = {}
# ``value = dense<X> : tensor<...>`` texts of splat constants by full shape, dtype and the one element's bytes.
_SPLAT_TEXT: dict[tuple[tuple[int, ...], np.dtype[Any], bytes], str] = {}

def remember(cache: dict[K, V], key: K, value: V, limit: int = _TEXT_CACHE_LIMIT) -> V:
    """``bounded.remember`` with the lowering text caches' bound."""
    return bounded.remember(cache, key, value, limit)


# The type of the token that orders effects (ordered host callbacks): ops take the token they come after and
# return the one the next ordered op takes. A marker aval (no array has a negative extent, so no cached type text
# is ever found for it): ``tensor_type`` gives its type, so ops, regions and loop states may carry it as a value.
TOKEN: Final = Aval((-1,), dtypes.BOOL)
TOKEN_TYPE: Final = "!stablehlo.token"


def layout(rank: int, column_major: bool = False) -> str:
    """A custom call's operand or result layout (minor-to-major dimension order): row major, or column-major
    matrices (the last two axes) in row-major batches. Without one, XLA may pick any layout for the call's
    operands (XLA:GPU does, for transposed values)."""
    if not rank:
        return "dense<> : tensor<0xindex>"
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if column_major else range(rank - 1, -1, -1)
    return f"dense<[{', '.join(str(d) for d in order)}]> : tensor<{rank}xindex>"


def tensor_type(aval: Aval) -> str:
    key = (aval.shape, aval.dtype)
    text = _TYPE_TEXT.get(key)
    if text is None:
        if aval is TOKEN:
            return TOKEN_TYPE
        element = dtypes.mlir_name(aval.dtype)
        extent = aval.dtype.itemsize
        for n in aval.shape:
            extent *= n if n > 0 else 1
        if extent >= 2**62 or min(aval.shape, default=0) < 0:  # XLA aborts the process on these
            raise ValueError(f"array of shape {aval.shape} and dtype {dtypes.short_name(aval.dtype)} is too big")
        if aval.shape:
            text = "tensor<" + "x".join([str(n) for n in aval.shape]) + f"x{element}>"
        else:
            text = f"tensor<{element}>"
        remember(_TYPE_TEXT, key, text)
    return text


def i64_array(values: Sequence[int]) -> str:
    # Params are mostly tuples (hashable, a handful of distinct ones per graph): their text is cached.
    text = _I64_TEXT.get(values) if type(values) is tuple else None
    if text is None:
        text = "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if len(values) else "") + ">"
        if type(values) is tuple:
            remember(_I64_TEXT, values, text)
    return text


def cached_i64_array(values: Any) -> str | None:
    """``i64_array(values)`` when its text is already cached (``values`` a tuple), else None."""
    return _I64_TEXT.get(values) if type(values) is tuple else None


def int_list(values: Sequence[int]) -> str:
    """``[1, 2]``: the axis lists inside ``#stablehlo.dot<...>``, ``gather<...>`` and ``scatter<...>``."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _loc_text(loc: SourceLoc | None) -> str:
    if loc is None:
        return "loc(unknown)"
    text = _LOC_TEXT.get(loc)
    if text is None:
        text = f'"{_escaped(loc.file)}":{loc.line}:0'
        if isinstance(loc, ScopedLoc):  # a name location around the line: XLA's op_name metadata (JAX's name stack)
            text = f'"{_escaped(loc.scope)}"({text})'
        text = remember(_LOC_TEXT, loc, f"loc({text})")
    return text


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def dense_attr(array: np.ndarray[Any, Any], aval: Aval, ttype: str | None = None) -> str:
    """A ``dense<...>`` attribute; hex for numbers (exact for every float incl. nan/inf), words for bools.
    ``ttype``: the attribute's type when it is not ``aval``'s (a rank-0 ``array`` splat over that type)."""
    if ttype is None:
        ttype = tensor_type(aval)
    if aval.dtype == dtypes.BOOL:
        flat = array.reshape(-1)
        if not flat.size:
            return f"dense<false> : {ttype}"  # nested [] would spell a shape of its own: (0,) not (0, 0)
        if (flat == flat[0]).all():
            return f"dense<{'true' if flat[0] else 'false'}> : {ttype}"
        body = _nested_bools(array)
        return f"dense<{body}> : {ttype}"
    data = np.ascontiguousarray(array, dtype=aval.dtype)
    flat = data.reshape(-1)
    if flat.size > 1 and (flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8)).all():
        data = flat[:1]  # splat: one element's bytes
    return f'dense<"0x{data.tobytes().hex().upper()}"> : {ttype}'


def _nested_bools(array: np.ndarray[Any, Any]) -> str:
    if array.ndim == 0:
        return "true" if array else "false"
    return "[" + ", ".join(_nested_bools(a) for a in array) + "]"


_SCALAR_BROADCAST = "broadcast_dimensions = array<i64>"


class Emitter:
    """Accumulates the body of one function; nested regions share the SSA counter."""

    def __init__(
        self, counter: list[int] | None = None, indent: str = "    ", platform: str = "cpu",
        host_callbacks: list[Any] | None = None, functions: dict[object, tuple[str, str]] | None = None,
    ) -> None:
        self.lines: list[str] = []
        # The module's functions besides ``@main`` (shared with nested regions), by the key a rule gave: each is
        # ``(symbol, text)``, emitted once after ``@main`` however often it is called.
        self.functions: dict[object, tuple[str, str]] = functions if functions is not None else {}
        # The module's Python callbacks (shared with nested regions): a callback op names its index here, and
        # the list goes to the compiler with the module.
        self.host_callbacks: list[Any] = host_callbacks if host_callbacks is not None else []
        self.platform = platform  # the platform compiled for: lowering rules may pick kernels by it
        self.counter = counter if counter is not None else [0]
        self.indent = indent
        self.loc = _loc_text(None)
        self.source: SourceLoc | None = None  # the user's line of the equation being lowered, for rules' errors
        # Small constants already emitted in this block, by their ``value = dense<...> : type`` text: later uses
        # read the first instead of a copy of their own. XLA folds equal constants into one anyway; the module is
        # shorter to write and to parse (one splat of a learning rate per parameter shape, not one per parameter).
        self.constants: dict[str, Value] = {}
        # The ordering token of the ordered effects emitted so far in this block (``ordering_token``); a region
        # holding ordered effects gets the enclosing one from the rule that emits it (as a loop state or a
        # captured value) and hands its last one back as a result.
        self.token: Value | None = None
        self.nested = False  # a region's block: its token comes from its rule, never made here

    def ordering_token(self) -> Value:
        """The token the next ordered effect comes after; the function's first one is made here."""
        if self.token is None:
            if self.nested:
                raise RuntimeError("internal error: a region holding ordered effects was emitted without a token")
            self.token = self.op("stablehlo.after_all", [], [TOKEN])[0]
        return self.token

    def fresh(self) -> str:
        self.counter[0] += 1
        return f"%{self.counter[0]}"

    def module_function(self, key: object, text: Callable[[str], str]) -> str:
        """The symbol of the module-level function ``key`` names, whose text ``text(symbol)`` writes (asked for
        once per module: later calls with the same key get the same function)."""
        found = self.functions.get(key)
        if found is None:
            symbol = f"tensorstage_function_{len(self.functions)}"
            found = self.functions[key] = (symbol, text(symbol))
        return found[0]

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        results: Sequence[Aval],
        props: str = "",
        regions: Sequence[str] = (),
    ) -> list[Value]:
        """Emit one op in generic form; ``props`` is the inside of ``<{...}>``."""
        # Runs once per emitted op: operand texts are carried by the values, result types come from the cache,
        # and the common shapes (one result; up to two operands) are written by one f-string each.
        n = len(operands)
        tail = f" <{{{props}}}>" if props else ""
        if regions:
            tail += " (" + ", ".join(regions) + ")"
        if len(results) == 1:
            counter = self.counter
            counter[0] += 1
            head = f"%{counter[0]}"
            result = results[0]
            result_type = _TYPE_TEXT.get((result.shape, result.dtype)) or tensor_type(result)
            if n == 2:
                a, b = operands
                line = (
                    f'{self.indent}{head} = "{name}"({a.name}, {b.name}){tail} : '
                    f"({a.type}, {b.type}) -> {result_type} {self.loc}"
                )
            elif n == 1:
                a = operands[0]
                line = f'{self.indent}{head} = "{name}"({a.name}){tail} : ({a.type}) -> {result_type} {self.loc}'
            elif n == 0:  # constants
                line = f'{self.indent}{head} = "{name}"(){tail} : () -> {result_type} {self.loc}'
            else:
                operand_names = ", ".join([v.name for v in operands])
                operand_types = ", ".join([v.type for v in operands])
                line = (
                    f'{self.indent}{head} = "{name}"({operand_names}){tail} : '
                    f"({operand_types}) -> {result_type} {self.loc}"
                )
            self.lines.append(line)
            return [_new_value((head, result, result_type))]
        operand_names = ", ".join([v.name for v in operands])
        operand_types = ", ".join([v.type for v in operands])
        counter = self.counter
        result_texts = [tensor_type(a) for a in results]
        if results:
            counter[0] += 1
            base = f"%{counter[0]}"
            lhs = f"{base}:{len(results)} = "
            values = [Value(f"{base}#{i}", a, t) for i, (a, t) in enumerate(zip(results, result_texts))]
        else:
            lhs = ""
            values = []
        self.lines.append(
            f'{self.indent}{lhs}"{name}"({operand_names}){tail} : '
            f"({operand_types}) -> ({', '.join(result_texts)}) {self.loc}"
        )
        return values

    def constant(self, array: np.ndarray[Any, Any], aval: Aval) -> Value:
        if array.size > _SMALL_CONSTANT:
            return self.op("stablehlo.constant", [], [aval], f"value = {dense_attr(array, aval)}")[0]
        # Keyed by the exact bytes (after conversion to the aval's dtype), so equal keys give equal text.
        data = array if array.dtype is aval.dtype else np.asarray(array, dtype=aval.dtype)
        key = (aval.shape, aval.dtype, data.tobytes())
        props = _CONSTANT_TEXT.get(key)
        if props is None:
            props = remember(_CONSTANT_TEXT, key, f"value = {dense_attr(data, aval)}")
        return self.shared_constant(props, aval)

    def shared_constant(self, props: str, aval: Aval) -> Value:
        """The constant of type ``aval`` whose props are ``props`` (a ``value = dense<...> : type`` text): emitted
        at its first use in this block, read again after."""
        value = self.constants.get(props)
        if value is None:
            value = self.constants[props] = self.op("stablehlo.constant", (), (aval,), props)[0]
        return value

    def scalar(self, value: float | int | bool, dtype: np.dtype[Any]) -> Value:
        return self.constant(np.asarray(value, dtype=dtype), scalar_aval(dtype))

    def splat(self, scalar: np.ndarray[Any, Any], aval: Aval) -> Value:
        """The rank-0 ``scalar`` broadcast to ``aval`` (of the scalar's dtype): one splat constant, or a scalar
        constant and a ``broadcast_in_dim`` where ``aval`` has no elements."""
        shape = aval.shape
        if not shape or 0 in shape:
            value = self.constant(scalar, scalar_aval(aval.dtype))
            if not shape:
                return value
            return self.op("stablehlo.broadcast_in_dim", (value,), (aval,), _SCALAR_BROADCAST)[0]
        data = scalar if scalar.dtype is aval.dtype else np.asarray(scalar, dtype=aval.dtype)
        key = (shape, aval.dtype, data.tobytes())
        props = _SPLAT_TEXT.get(key)
        if props is None:
            props = remember(_SPLAT_TEXT, key, f"value = {dense_attr(data, scalar_aval(aval.dtype), tensor_type(aval))}")
        return self.shared_constant(props, aval)

    def region(self, arg_avals: Sequence[Aval], body: Callable[[Emitter, list[Value]], Sequence[Value]]) -> str:
        inner = Emitter(self.counter, self.indent + "    ", self.platform, self.host_callbacks, self.functions)
        inner.loc, inner.source, inner.nested = self.loc, self.source, True
        args = [Value(inner.fresh(), a, tensor_type(a)) for a in arg_avals]
        results = body(inner, args)
        inner.op("stablehlo.return", results, [])
        header = ", ".join(f"{v.name}: {v.type}" for v in args)
        return "{\n" + f"{self.indent}  ^bb0({header}):\n" + "\n".join(inner.lines) + f"\n{self.indent}}}"

    def binary_region(self, op_name: str, scalar: Aval) -> str:
        """``region([scalar, scalar], lambda r, a: r.op(op_name, a, [scalar]))``, written out directly: every
        reduction carries one, and this text is all that call would emit."""
        t = _TYPE_TEXT.get((scalar.shape, scalar.dtype)) or tensor_type(scalar)
        n = self.counter[0]
        self.counter[0] = n + 3
        indent, loc = self.indent, self.loc
        return (
            f"{{\n{indent}  ^bb0(%{n + 1}: {t}, %{n + 2}: {t}):\n"
            f'{indent}    %{n + 3} = "{op_name}"(%{n + 1}, %{n + 2}) : ({t}, {t}) -> {t} {loc}\n'
            f'{indent}    "stablehlo.return"(%{n + 3}) : ({t}) -> () {loc}\n{indent}}}'
        )

    def graph_body(self, graph: Graph, args: Sequence[Value]) -> list[Value]:
        """Emit a graph's equations inline (used for the entry function and nested graphs in regions)."""
        env: dict[Atom, ValueFields] = dict(zip(graph.inputs, args, strict=True))  # atoms hash by identity
        get = env.get
        saved, saved_source = self.loc, self.source
        lowerings = LOWERINGS
        splats = SPLAT_SCALAR_OPERANDS
        plain_ops = PLAIN_OPS
        props_ops = PROPS_OPS if self.platform == "cpu" else _portable_props_ops()
        counter = self.counter
        append = self.lines.append
        indent = self.indent
        types = _TYPE_TEXT
        locs = _LOC_TEXT
        # (literal, result shape) -> its constant
        literal_operands: dict[tuple[Atom, tuple[int, ...]], ValueFields] = {}
        last_loc: object = graph  # no equation's location: the first equation sets ``self.loc``
        here = saved  # ``self.loc``, read per line
        for eqn in graph.eqns:
            loc = eqn.loc
            if loc is not last_loc:  # consecutive equations mostly share one user line
                last_loc = loc
                here = self.loc = (locs.get(loc) if loc is not None else None) or _loc_text(loc)
                self.source = loc
            inputs = eqn.inputs
            outputs = eqn.outputs
            # Operands without a per-operand type test: a literal (never in ``env``) reads as None and becomes a
            # constant. Most equations have one result and one or two operands: those are read one by one.
            n = len(inputs)
            ins: Sequence[ValueFields | None]
            if len(outputs) == 1 and 0 < n <= 2:
                a = get(inputs[0])
                b = get(inputs[-1])  # ``a`` again for one operand
                if a is None or b is None:
                    shape = outputs[0].aval.shape
                    if shape and eqn.primitive in splats:  # (``_with_constants``, inlined for one or two operands)
                        if a is None:
                            a = literal_operands.get((inputs[0], shape)) or self._splat_operand(
                                inputs[0], shape, env, literal_operands
                            )
                        if b is None:
                            b = literal_operands.get((inputs[-1], shape)) or self._splat_operand(
                                inputs[-1], shape, env, literal_operands
                            )
                    else:
                        constants = self._with_constants(eqn, [a, b] if n == 2 else [a], env, literal_operands)
                        a, b = constants[0], constants[-1]
                # Ops whose whole text follows from the op name, the params and the operands' types are written
                # out here (``self.op(name, ins, (aval,), props)`` inlined): plain elementwise ops whose operands
                # already have the result's shape, and ``PROPS_OPS`` (dot_general, broadcast_in_dim, ...).
                aval = outputs[0].aval
                props: str | None = None
                name = plain_ops.get(eqn.primitive)
                if name is not None:
                    if a[_AVAL].shape != aval.shape or b[_AVAL].shape != aval.shape:
                        name = None
                else:
                    direct = props_ops.get(eqn.primitive)
                    if direct is not None:
                        props = direct[1](eqn.params)
                        if props is not None:
                            name = direct[0]
                if name is not None:
                    counter[0] += 1
                    head = f"%{counter[0]}"
                    if a[_AVAL] is aval:  # elementwise results mostly are (shape rules)
                        result_type = a[_TYPE]
                    else:
                        result_type = types.get((aval.shape, aval.dtype)) or tensor_type(aval)
                    attributes = f" <{{{props}}}>" if props is not None else ""
                    if n == 2:
                        append(
                            f'{indent}{head} = "{name}"({a[_NAME]}, {b[_NAME]}){attributes} : '
                            f"({a[_TYPE]}, {b[_TYPE]}) -> {result_type} {here}"
                        )
                    else:
                        append(
                            f'{indent}{head} = "{name}"({a[_NAME]}){attributes} : ({a[_TYPE]}) -> {result_type} {here}'
                        )
                    env[outputs[0]] = (head, aval, result_type)
                    continue
                ins = [a, b] if n == 2 else [a]
            else:
                ins = list(map(get, inputs))
                if None in ins:
                    ins = self._with_constants(eqn, ins, env, literal_operands)
            ins = [_as_value(v) for v in ins]  # type: ignore[arg-type]  # rules read fields by name
            rule = lowerings.get(eqn.primitive)
            if rule is None:
                raise NotImplementedError(f"primitive {eqn.primitive.name} has no lowering rule")
            if len(outputs) == 1:
                outs = rule(self, ins, (outputs[0].aval,), **eqn.params)
                if len(outs) == 1:
                    env[outputs[0]] = outs[0]
                    continue
            else:
                outs = rule(self, ins, tuple([v.aval for v in outputs]), **eqn.params)
            for var, val in zip(outputs, outs, strict=True):
                env[var] = val
        self.loc, self.source = saved, saved_source
        return [_as_value(get(a) or self.atom(a, env)) for a in graph.outputs]  # a literal as a constant

    def _with_constants(
        self,
        eqn: Equation,
        ins: Sequence[ValueFields | None],
        env: dict[Atom, ValueFields],
        literal_operands: dict[tuple[Atom, tuple[int, ...]], ValueFields],
    ) -> list[ValueFields]:
        """``eqn``'s operands ``ins`` (None for literals) with its literals as constants (``shared_constant``:
        emitted at its first use in this block, located at that line)."""
        outputs = eqn.outputs
        if eqn.primitive in SPLAT_SCALAR_OPERANDS and len(outputs) == 1 and outputs[0].aval.shape:
            shape = outputs[0].aval.shape
            return [
                v if v is not None else self._splat_operand(a, shape, env, literal_operands)
                for v, a in zip(ins, eqn.inputs)
            ]
        return [v if v is not None else self.atom(a, env) for v, a in zip(ins, eqn.inputs)]

    def _splat_operand(
        self,
        atom: Atom,
        shape: tuple[int, ...],
        env: dict[Atom, ValueFields],
        literal_operands: dict[tuple[Atom, tuple[int, ...]], ValueFields],
    ) -> ValueFields:
        """The literal operand ``atom`` of an equation of ``SPLAT_SCALAR_OPERANDS`` whose result has ``shape``, as
        a constant made once per body. Literals of Python numbers are shared objects: the literal and the result's
        shape name the operand's constant without reading its bytes."""
        key = (atom, shape)
        value = literal_operands.get(key)
        if value is None:
            value = literal_operands[key] = self._splat_literal(atom, shape, env)
        return value

    def _splat_literal(self, atom: Atom, shape: tuple[int, ...], env: dict[Atom, ValueFields]) -> ValueFields:
        """A literal operand of an equation of ``SPLAT_SCALAR_OPERANDS`` whose result has ``shape`` (not rank 0):
        a rank-0 literal becomes a splat constant of that shape."""
        if isinstance(atom, Literal) and not atom.aval.shape:
            return self.splat(atom.value, Aval(shape, atom.aval.dtype))
        return self.atom(atom, env)

    def atom(self, atom: Atom, env: dict[Atom, ValueFields]) -> ValueFields:
        if isinstance(atom, Literal):
            return self.constant(atom.value, atom.aval)
        return env[atom]


def module_text(
    graph: Graph, name: str = "tensorstage", donated: Sequence[int] = (), num_replicas: int = 1,
    platform: str = "cpu",
) -> str:
    """The StableHLO module for ``graph`` with a public ``@main`` taking the graph inputs in order
    (``num_replicas`` > 1: one SPMD replica per device, as ``pmap`` compiles it), for ``platform`` ('cpu' or
    'gpu': some rules call that platform's kernels, e.g. LAPACK on CPU)."""
    return module_text_and_callbacks(graph, name, donated, num_replicas, platform)[0]


def module_text_and_callbacks(
    graph: Graph, name: str = "tensorstage", donated: Sequence[int] = (), num_replicas: int = 1,
    platform: str = "cpu",
) -> tuple[str, list[Any]]:
    """``module_text(...)`` and the Python callbacks its callback ops call, by index: the compiler needs both."""
    with gc_paused():
        return _module_text(graph, name, donated, num_replicas, platform)


def _module_text(
    graph: Graph, name: str, donated: Sequence[int], num_replicas: int, platform: str
) -> tuple[str, list[Any]]:
    emitter = Emitter(platform=platform)
    args = [_new_value((f"%arg{i}", v.aval, tensor_type(v.aval))) for i, v in enumerate(graph.inputs)]
    outs = emitter.graph_body(graph, args)
    if num_replicas > 1 and emitter.token is not None:  # each device would order only its own callbacks
        first = next(c for c in emitter.host_callbacks if c.ordered)
        raise NotImplementedError(
            f"{first.name}: ordered callbacks are not supported in programs that run on several devices (pmap, "
            "shard_map)"
            + (f"\n  at {first.loc}" if first.loc is not None else "")
        )
    emitter.loc = _loc_text(None)
    emitter.op("func.return", outs, [])
    donated_set = set(donated)
    aliases = _donation_aliases(graph, donated_set)
    params = ", ".join(
        [
            f"{a.name}: {a.type}" + (f" {{tf.aliasing_output = {aliases[i]} : i32}}" if i in aliases else "")
            for i, a in enumerate(args)
        ]
        if aliases
        else [f"{a.name}: {a.type}" for a in args]
    )
    results = ", ".join([tensor_type(a.aval) for a in graph.outputs])
    safe_name = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "tensorstage"
    header = (
        f"module @{safe_name} attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {num_replicas} : i32}} {{\n"
        f"  func.func public @main({params}) -> ({results}) {{"
    )
    functions = [text for _, text in emitter.functions.values()]
    # One join builds the whole text: each concatenation of a large module would copy (and fault in) it again.
    return "\n".join([header, *emitter.lines, "  }", *functions, "}\n"]), emitter.host_callbacks


def _donation_aliases(graph: Graph, donated: set[int]) -> dict[int, int]:
    """Pair each donated input with an unclaimed output of the same type (XLA then updates it in place)."""
    aliases: dict[int, int] = {}
    claimed: set[int] = set()
    for i in sorted(donated):
        aval = graph.inputs[i].aval
        for j, out in enumerate(graph.out_avals):
            if j not in claimed and out.same_layout(aval):
                aliases[i] = j
                claimed.add(j)
                break
    return aliases
