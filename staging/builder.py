"""Recording equations: the active builder, ``bind``, and emitting a whole graph into the active builder."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .errors import StagingError
from .ir import Atom, Aval, Equation, Graph, SourceLoc, Var
from .primitive import Primitive
from .source import user_location


class Builder:
    """Collects equations. ``loc`` pins the source location while a transform replays an existing graph."""

    __slots__ = ("eqns", "loc")

    def __init__(self) -> None:
        self.eqns: list[Equation] = []
        self.loc: SourceLoc | None = None

    def graph(self, inputs: Sequence[Var], outputs: Sequence[Atom]) -> Graph:
        return Graph(inputs, self.eqns, outputs)


_STACK: list[Builder] = []


def is_staging() -> bool:
    return bool(_STACK)


def current() -> Builder:
    if not _STACK:
        raise RuntimeError("no active staging context: primitives are bound only while a program is staged")
    return _STACK[-1]


@contextmanager
def building(builder: Builder | None = None) -> Iterator[Builder]:
    b = builder if builder is not None else Builder()
    _STACK.append(b)
    try:
        yield b
    finally:
        _STACK.pop()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while staging or lowering a graph.

    Both allocate thousands of long-lived objects (variables, equations, op texts) and free almost nothing, so
    every automatic collection on the way only re-traverses them (~5% of staging time). Collection resumes,
    and catches up on its own, as soon as the outermost caller leaves; nested uses leave the state alone.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def located(loc: SourceLoc | None) -> Iterator[None]:
    """Attribute every equation emitted inside to ``loc`` (used by transforms replaying user equations)."""
    b = current()
    saved = b.loc
    b.loc = loc if loc is not None else saved
    try:
        yield
    finally:
        b.loc = saved


def current_loc() -> SourceLoc | None:
    if _STACK and _STACK[-1].loc is not None:
        return _STACK[-1].loc
    return user_location()


def abstract_eval(primitive: Primitive, avals: Sequence[Aval], params: dict[str, Any]) -> tuple[Aval, ...]:
    rule = primitive.shape
    if rule is None:
        raise NotImplementedError(f"primitive {primitive.name} has no shape rule")
    out = rule(*avals, **params)
    return out if primitive.multiple_results else (out,)  # type: ignore[return-value]


def bind(primitive: Primitive, *inputs: Atom, **params: Any) -> Any:
    """Append one equation to the active builder; returns its output Var (or a tuple for multi-result prims)."""
    if not _STACK:
        current()  # raises the explanatory error
    builder = _STACK[-1]
    loc = builder.loc
    if loc is None:
        loc = user_location()
    rule = primitive.shape
    if rule is None:
        raise NotImplementedError(f"primitive {primitive.name} has no shape rule")
    try:  # abstract_eval, inlined: this runs per equation (one and two operands without building a list)
        n = len(inputs)
        if n == 2:
            # A plain call without params (elementwise ops, most equations): no keyword unpacking.
            out = rule(inputs[0].aval, inputs[1].aval, **params) if params else rule(inputs[0].aval, inputs[1].aval)
        elif n == 1:
            out = rule(inputs[0].aval, **params)
        else:
            out = rule(*[a.aval for a in inputs], **params)
    except StagingError as err:
        raise err.located(primitive.name, loc) from None
    if primitive.multiple_results:
        outs = tuple([Var(a) for a in out])  # type: ignore[union-attr]
        builder.eqns.append(Equation(primitive, inputs, outs, params, loc))
        return outs
    var = _blank(Var)  # ``Var(out)`` without a Python-level ``__init__`` call (once per equation staged)
    var.aval = out  # type: ignore[assignment]
    builder.eqns.append(Equation(primitive, inputs, (var,), params, loc))
    return var


_blank = object.__new__  # an instance without running its ``__init__``; its slots are set right after


def same_types(inputs: Sequence[Atom], old: Sequence[Atom]) -> bool:
    """Whether operands ``inputs`` have the types of ``old``, one by one (a shape rule then gives what it gave)."""
    if len(inputs) != len(old):
        return False
    for new_atom, old_atom in zip(inputs, old):
        new_aval, old_aval = new_atom.aval, old_atom.aval
        if new_aval is not old_aval and new_aval._key != old_aval._key:
            return False
    return True


def rebind(eqn: Equation, inputs: Sequence[Atom]) -> Any:
    """``bind(eqn.primitive, *inputs, **eqn.params)``; when the operands have ``eqn``'s own input types, the shape
    rule would give ``eqn``'s output types again, so they are reused instead of recomputed (transforms replaying
    a graph call this once per equation)."""
    if same_types(inputs, eqn.inputs):
        if not _STACK:
            current()
        builder = _STACK[-1]
        loc = builder.loc if builder.loc is not None else user_location()
        if eqn.primitive.multiple_results:
            outs = tuple([Var(v.aval) for v in eqn.outputs])
            builder.eqns.append(Equation(eqn.primitive, tuple(inputs), outs, eqn.params, loc))
            return outs
        var = Var(eqn.outputs[0].aval)
        builder.eqns.append(Equation(eqn.primitive, tuple(inputs), (var,), eqn.params, loc))
        return var
    return bind(eqn.primitive, *inputs, **eqn.params)


def inline(graph: Graph, args: Sequence[Atom]) -> tuple[Atom, ...]:
    """Emit ``graph``'s equations into the active builder with its inputs replaced by ``args``."""
    env: dict[Atom, Atom] = dict(zip(graph.inputs, args, strict=True))  # atoms hash by identity
    for var, arg in env.items():  # equations are copied, not re-typed: a mismatch here would reach XLA
        if not arg.aval.same_layout(var.aval):
            raise TypeError(
                f"internal error: inlining a graph that takes {var.aval} with an argument of type {arg.aval}"
            )
    builder = current()
    append = builder.eqns.append
    get = env.get
    for eqn in graph.eqns:
        ins = tuple(map(get, eqn.inputs, eqn.inputs))  # a literal reads as itself
        outs = tuple([Var(v.aval) for v in eqn.outputs])
        append(Equation(eqn.primitive, ins, outs, eqn.params, eqn.loc))
        env.update(zip(eqn.outputs, outs))
    return tuple(env.get(a, a) for a in graph.outputs)
