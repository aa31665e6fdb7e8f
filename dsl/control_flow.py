"""Structured control flow over pytrees: ``cond``, ``switch``, ``while_loop``, ``fori_loop`` and ``scan``.

Each function stages its Python callables to subgraphs on the operands' types (closing over outer staged values,
which become explicit consts of the primitive) and binds one ``cond`` / ``while`` / ``scan`` equation. Called
on concrete arrays outside staging, the whole construct is staged, compiled and cached like any program (the
callables are static: define them once to reuse the compiled program).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from . import pytree
from .array import Array
from .dtypes import bool_, i32
from .program import Program
from .staging import dtypes as _dt
from .staging.builder import is_staging
from .staging.errors import DTypeError, ShapeError
from .staging.ir import Atom, Aval, Graph, Literal, Var, literal
from .staging.primitives import control_flow as CF
from .staging.primitives import elementwise as E
from .staging.primitives.subgraph_edits import join_types
from .staging.shapes import describe
from .staging.source import user_location
from .tensor import Tensor, Traced
from .trace import IntRange, TracedFunction, WeakTraced, to_atom, trace_flat, weak_float_atom, weak_input, wrap

C = TypeVar("C")  # a loop carry: any pytree of tensors
R = TypeVar("R")  # what the branches of a cond return
Scalar = Tensor[Any]  # a Python scalar carry is staged as a rank-0 tensor (so the body sees and returns one)

# ---------------------------------------------------------------------------------------------- staging


def _leaf_atom(op: str, leaf: Any) -> tuple[Atom, bool]:
    """A tensor-like leaf as an atom, and whether it is a weakly typed Python scalar."""
    if isinstance(leaf, WeakTraced):
        return leaf.most_precise, True
    if isinstance(leaf, Traced):
        return leaf.atom, False
    if isinstance(leaf, (Array, np.ndarray, np.generic)):
        atom = to_atom(leaf)
        if isinstance(atom, Literal):
            atom = Literal(atom.value, Aval(atom.aval.shape, _dt.canonical(atom.aval.dtype)))
        return atom, False
    if type(leaf) is float:
        return weak_float_atom(leaf), True
    if type(leaf) in (bool, int):
        return to_atom(leaf), True
    raise TypeError(f"{op}: a {type(leaf).__name__} leaf is not a tensor; operands and carries are pytrees of tensors")


def _flatten(op: str, tree: Any) -> tuple[list[Atom], list[bool], pytree.TreeDef]:
    leaves, treedef = pytree.flatten(tree)
    pairs = [_leaf_atom(op, x) for x in leaves]
    return [a for a, _ in pairs], [w for _, w in pairs], treedef


def _stage(
    fn: Callable[..., Any], args: tuple[Any, ...], avals: Sequence[Aval], weak: Sequence[bool], loop: bool = False
) -> TracedFunction:
    """Stage ``fn(*args)`` with every leaf of ``args`` an input of the given type.

    ``loop``: a loop body, whose leading inputs and outputs are the carry: a weak carry returned as it is stays at
    full precision (a Python float threaded through the loop keeps its float64 digits)."""
    leaves, treedef = pytree.flatten((args, {}))
    return trace_flat(fn, treedef, leaves, [True] * len(leaves), avals, weak, weak if loop else False)


def _consts_first(traced: TracedFunction, n_leaves: int) -> tuple[Graph, list[Atom]]:
    """The traced graph with its closed-over values moved to the front (the primitives take consts first)."""
    g = traced.graph
    return Graph([*g.inputs[n_leaves:], *g.inputs[:n_leaves]], g.eqns, g.outputs), list(traced.closure)


def _types(avals: Sequence[Aval]) -> str:
    return "(" + describe(avals) + ")"


def _outputs(atoms: Sequence[Atom], tree: pytree.TreeDef, weak: Sequence[bool] = ()) -> Any:
    """The results as staged values; ``weak``: per leading result, whether it is a weakly typed scalar."""
    leaves = [weak_input(a) if i < len(weak) and weak[i] else wrap(a) for i, a in enumerate(atoms)]
    return pytree.unflatten(tree, leaves)


def _eager(fn: Callable[..., Any], name: str) -> Program[..., Any]:
    return Program(fn, scalars_dynamic=False, check_annotations=False, name=name)


# ------------------------------------------------------------------------------------------ cond / switch


def cond(pred: Tensor[bool_] | bool, true_fn: Callable[..., R], false_fn: Callable[..., R], *operands: Any) -> R:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; only the chosen branch runs.

    Both branches must return the same pytree of tensors with the same types."""
    if not is_staging():
        return _COND(pred, true_fn, false_fn, operands)  # type: ignore[no-any-return]
    index = _scalar_atom("cond", pred)
    if index.aval.dtype != _dt.BOOL or index.aval.ndim != 0:
        raise DTypeError(
            f"the predicate must be a bool scalar, got {index.aval}; compare explicitly (e.g. x > 0) or use "
            "ts.switch for an integer index",
            "cond",
            user_location(),
        )
    # Checked in the order the user wrote them; bound as (false, true), the order a bool index selects.
    out: R = _branches("cond", index, [true_fn, false_fn], ["true_fn", "false_fn"], operands, bind_reversed=True)
    return out


def switch(index: Tensor[Any] | int, branches: Sequence[Callable[..., R]], *operands: Any) -> R:
    """``branches[index](*operands)``; the index is clamped to the valid range, as in ``jax.lax.switch``."""
    if not is_staging():
        return _SWITCH(index, tuple(branches), operands)  # type: ignore[no-any-return]
    fns = list(branches)
    if not fns:
        raise ShapeError("needs at least one branch", "switch", user_location())
    atom = _scalar_atom("switch", index)
    if atom.aval.ndim != 0 or not _dt.is_integer(atom.aval.dtype):
        raise DTypeError(f"the index must be an integer scalar, got {atom.aval}", "switch", user_location())
    if len(fns) == 1:
        return fns[0](*operands)
    i32_ = _dt.DEFAULT_INT
    index32 = E.clamp(literal(0, i32_), E.convert(atom, i32_), literal(len(fns) - 1, i32_))
    names = [f"branch {i}" for i in range(len(fns))]
    return _branches("switch", index32, fns, names, operands)  # type: ignore[no-any-return]


def _scalar_atom(op: str, x: Any) -> Atom:
    if isinstance(x, (Traced, Array, np.ndarray, np.generic, bool, int)):
        return _leaf_atom(op, x)[0]
    raise DTypeError(f"expected an integer or bool scalar (or a tensor of one), got {x!r}", op, user_location())


def _branches(
    op: str, index: Atom, fns: Sequence[Callable[..., Any]], names: Sequence[str], operands: Any,
    bind_reversed: bool = False,
) -> Any:
    atoms, weak, _ = _flatten(op, tuple(operands))
    avals = [a.aval for a in atoms]
    traced = [_stage(fn, tuple(operands), avals, weak) for fn in fns]
    for t in traced:
        t.pass_ranges_to(pytree.leaves(tuple(operands)))
    first = traced[0]
    for name, t in zip(names[1:], traced[1:]):
        if t.out_tree != first.out_tree or not _joinable(first.graph.out_avals, t.graph.out_avals):
            raise ShapeError(
                f"branches return different types: {names[0]} returns {_describe_out(first)} but {name} returns "
                f"{_describe_out(t)}",
                op,
                user_location(),
            )
    # Every branch takes the union of the values any branch closed over (unused ones are ignored).
    closure: dict[int, Var] = {}
    for t in traced:
        for v in t.closure:
            closure.setdefault(id(v), v)
    graphs = []
    n = len(atoms)
    for t in traced:
        own = {id(v): g for v, g in zip(t.closure, t.graph.inputs[n:])}
        extra = [own.get(key, Var(v.aval)) for key, v in closure.items()]
        graphs.append(Graph([*t.graph.inputs[:n], *extra], t.graph.eqns, t.graph.outputs))
    outs = CF.cond(index, [*atoms, *closure.values()], graphs[::-1] if bind_reversed else graphs)
    return _outputs(outs, first.out_tree)


def _joinable(a: Sequence[Aval], b: Sequence[Aval]) -> bool:
    try:
        join_types("", "", a, b)
    except ShapeError:
        return False
    return True


def _describe_out(t: TracedFunction) -> str:
    avals = t.graph.out_avals
    if t.out_tree.kind == "leaf":
        return str(avals[0])
    return f"{t.out_tree!r} of {_types(avals)}"


# ------------------------------------------------------------------------------------------------ loops


@overload
def while_loop(
    cond_fn: Callable[[Scalar], Tensor[bool_] | bool], body_fn: Callable[[Scalar], Scalar], init: float
) -> Scalar: ...
@overload
def while_loop(cond_fn: Callable[[C], Tensor[bool_] | bool], body_fn: Callable[[C], C], init: C) -> C: ...
def while_loop(cond_fn: Callable[[Any], Any], body_fn: Callable[[Any], Any], init: Any) -> Any:
    """Repeat ``carry = body_fn(carry)`` while ``cond_fn(carry)``; the carry keeps its type.

    Forward-differentiable; for reverse mode use ``fori_loop`` with static bounds or ``scan``."""
    if not is_staging():
        return _WHILE(cond_fn, body_fn, init)
    carry, weak, tree = _flatten("while_loop", init)
    stage_body: Stager = lambda avals, w: _stage(body_fn, (init,), avals, w, loop=True)  # noqa: E731
    body_t, avals = _stage_loop(stage_body, [a.aval for a in carry], weak)
    body_t.pass_ranges_to(pytree.leaves((init,)))
    carry = _settled_carry("while_loop", pytree.leaves((init,)), carry, avals)
    cond_t = _stage(cond_fn, (init,), avals, weak)
    cond_t.pass_ranges_to(pytree.leaves((init,)))
    pred = cond_t.graph.out_avals
    if len(pred) != 1 or pred[0].ndim != 0 or pred[0].dtype != _dt.BOOL:
        raise DTypeError(f"cond_fn must return a bool scalar, got {_types(pred)}", "while_loop", user_location())
    _check_carry("while_loop", "body_fn", tree, avals, body_t.out_tree, body_t.graph.out_avals)
    cond_graph, cond_consts = _consts_first(cond_t, len(carry))
    body_graph, body_consts = _consts_first(body_t, len(carry))
    outs = CF.while_loop(cond_consts, body_consts, carry, cond_graph, body_graph)
    return _outputs(outs, tree, _still_weak(weak, body_t))


Stager = Callable[[list[Aval], Sequence[bool]], TracedFunction]


def _stage_loop(stage: Stager, avals: list[Aval], weak: Sequence[bool]) -> tuple[TracedFunction, list[Aval]]:
    """Stage a loop body whose carry leaves come first among its inputs and outputs.

    A carry leaf that starts as a Python scalar has no dtype of its own (weak typing): it takes the dtype the
    body gives it, so ``scan(f, 0.0, xs_f64)`` carries f64. Operators do not propagate weakness, so when the
    default float fails to stage, the other float dtypes are tried (as strong types, since a weak operand
    meeting a Python scalar falls back to the default float) before the first error is reported."""
    try:
        return _settle(stage, avals, weak, weak)
    except DTypeError as first:
        weak_floats = [w and _dt.is_float(a.dtype) for a, w in zip(avals, weak)]
        if not any(weak_floats):
            raise
        for dtype in sorted(_dt.FLOATS - {_dt.DEFAULT_FLOAT}, key=lambda d: -d.itemsize):
            try:
                candidate = [a.with_dtype(dtype) if f else a for a, f in zip(avals, weak_floats)]
                strong = [w and not f for w, f in zip(weak, weak_floats)]
                return _settle(stage, candidate, strong, weak)
            except DTypeError:
                continue
        raise first


def _settle(
    stage: Stager, avals: list[Aval], weak_inputs: Sequence[bool], weak: Sequence[bool]
) -> tuple[TracedFunction, list[Aval]]:
    """Restage until every weak carry leaf has the dtype the body returns for it."""
    for _ in range(len(avals) + 1):
        traced = stage(avals, weak_inputs)
        outs = traced.graph.out_avals
        settled = [
            a.with_dtype(o.dtype) if w and o.shape == a.shape and o.dtype != a.dtype else a
            for a, o, w in zip(avals, outs, weak)
        ]
        settled += avals[len(settled) :]
        if settled == avals:
            break
        avals = settled
    return traced, avals


def _settled_carry(op: str, leaves: Sequence[Any], carry: Sequence[Atom], avals: Sequence[Aval]) -> list[Atom]:
    """The initial carry converted to the types the loop settled on; a Python int converted to a narrower integer
    dtype must fit it (it would wrap): checked now for a constant, at call time for a program argument."""
    settled = []
    for leaf, c, aval in zip(leaves, carry, avals):
        narrowing = c.aval.dtype != aval.dtype and _dt.is_integer(c.aval.dtype) and _dt.is_integer(aval.dtype)
        if narrowing and isinstance(leaf, WeakTraced):
            settled.append(leaf.as_dtype(aval.dtype, op))
            continue
        if narrowing and type(leaf) is int:
            IntRange.of(aval.dtype, op).check(leaf, "value")
        settled.append(E.convert(c, aval.dtype))
    return settled


def _still_weak(weak: Sequence[bool], body: TracedFunction) -> list[bool]:
    """Per carry leaf: a Python scalar the body passes through unchanged, so the loop's result is weak too."""
    return [w and o for w, o in zip(weak, body.weak_outputs)]


def _check_carry(
    op: str, who: str, tree: pytree.TreeDef, before: Sequence[Aval], out_tree: pytree.TreeDef, after: Sequence[Aval]
) -> None:
    if out_tree != tree:
        raise ShapeError(
            f"{who} must return the carry's structure {tree!r}, but returns {out_tree!r}", op, user_location()
        )
    if not _joinable(before, after):
        changed = [f"leaf {i}: {a} -> {b}" for i, (a, b) in enumerate(zip(before, after)) if not _joinable([a], [b])]
        raise ShapeError(
            f"{who} changes the carry type from {_types(before)} to {_types(after)} ({'; '.join(changed)}); a loop "
            "carry must keep its shape, dtype and dim names (give the initial value the type the body produces)",
            op,
            user_location(),
        )


@overload
def fori_loop(
    lower: int | Tensor[Any], upper: int | Tensor[Any], body_fn: Callable[[Tensor[i32], Scalar], Scalar], init: float
) -> Scalar: ...
@overload
def fori_loop(
    lower: int | Tensor[Any], upper: int | Tensor[Any], body_fn: Callable[[Tensor[i32], C], C], init: C
) -> C: ...
def fori_loop(lower: Any, upper: Any, body_fn: Callable[[Any, Any], Any], init: Any) -> Any:
    """``for i in range(lower, upper): carry = body_fn(i, carry)``.

    With concrete integer bounds (Python or NumPy ints, 0-d integer NumPy arrays) the trip count is static and the
    loop is a ``scan`` (reverse-differentiable); with staged bounds it is a ``while_loop``."""
    static = all(_static_bound(b) for b in (lower, upper))
    if static:
        lower, upper = int(lower), int(upper)
    if not is_staging():
        return _FORI(lower, upper, body_fn, init)
    if static:
        lo, hi = int(lower), int(upper)

        def step(carry: tuple[Any, C], _: None) -> tuple[tuple[Any, C], None]:
            i, c = carry
            return (i + 1, body_fn(i, c)), None

        (_, out), _ = scan(step, (wrap(literal(lo, _dt.DEFAULT_INT)), init), None, length=max(hi - lo, 0))
        return out
    lo_atom, hi_atom = _scalar_atom("fori_loop", lower), _scalar_atom("fori_loop", upper)
    for b in (lo_atom, hi_atom):
        if b.aval.ndim != 0 or not _dt.is_integer(b.aval.dtype):
            raise DTypeError(f"loop bounds must be integer scalars, got {b.aval}", "fori_loop", user_location())
    dtype = hi_atom.aval.dtype if not isinstance(upper, int) else lo_atom.aval.dtype
    lo_t, hi_t = wrap(E.convert(lo_atom, dtype)), wrap(E.convert(hi_atom, dtype))

    def body(carry: tuple[Any, Any, C]) -> tuple[Any, Any, C]:
        i, hi, c = carry
        return i + 1, hi, body_fn(i, c)

    _, _, result = while_loop(lambda c: c[0] < c[1], body, (lo_t, hi_t, init))
    return result


def _static_bound(b: Any) -> bool:
    """Whether a loop bound is concrete, so the trip count is known while staging (as JAX reads concrete bounds)."""
    if isinstance(b, (bool, np.bool_)):
        return False
    if isinstance(b, np.ndarray):
        return b.ndim == 0 and np.issubdtype(b.dtype, np.integer)
    return isinstance(b, (int, np.integer))


@overload
def scan(
    f: Callable[[Scalar, Any], tuple[Scalar, Any]], init: float, xs: Any, length: int | None = None,
    reverse: bool = False, unroll: int | bool = 1,
) -> tuple[Scalar, Any]: ...
@overload
def scan(
    f: Callable[[C, Any], tuple[C, Any]], init: C, xs: Any, length: int | None = None, reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[C, Any]: ...
def scan(
    f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, length: int | None = None, reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` for each ``x`` along the leading axis of ``xs``; returns the last carry and the
    stacked ``y``s. ``xs`` may be None (or an empty pytree) when ``length`` is given; ``reverse`` runs from the end.
    ``unroll`` (JAX's loop-unrolling hint) is checked and accepted for compatibility but does not unroll: the
    results are the same, and XLA schedules the rolled loop.
    """
    if not (isinstance(unroll, bool) or (isinstance(unroll, (int, np.integer)) and unroll >= 1)):
        raise TypeError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    if not is_staging():
        return _SCAN(f, init, xs, length, reverse)  # type: ignore[no-any-return]
    carry, c_weak, c_tree = _flatten("scan", init)
    x_atoms, _, x_tree = _flatten("scan", xs)
    n = _scan_length(x_atoms, length)
    x_avals = [CF.unstacked(x.aval) for x in x_atoms]
    weak = c_weak + [False] * len(x_atoms)
    in_avals = [a.aval for a in carry] + x_avals
    traced, avals = _stage_loop(lambda avals, w: _stage(f, (init, xs), avals, w, loop=True), in_avals, weak)
    traced.pass_ranges_to(pytree.leaves((init, xs)))
    carry = _settled_carry("scan", pytree.leaves(init), carry, avals)
    outs = traced.graph.out_avals
    out_tree = traced.out_tree
    if out_tree.kind != "tuple" or len(out_tree.children) != 2:
        raise ShapeError(f"f must return a pair (carry, y), got {out_tree!r}", "scan", user_location())
    carry_tree, y_tree = out_tree.children
    _check_carry("scan", "f", c_tree, avals[: len(carry)], carry_tree, outs[: len(carry)])
    body, consts = _consts_first(traced, len(avals))
    results = CF.scan(consts, carry, x_atoms, body, n, bool(reverse))
    return _outputs(results[: len(carry)], c_tree, _still_weak(c_weak, traced)), _outputs(results[len(carry) :], y_tree)


def _scan_length(xs: Sequence[Atom], length: int | None) -> int:
    sizes = []
    for x in xs:
        if x.aval.ndim == 0:
            raise ShapeError(
                f"every operand in xs needs a leading axis to scan over, got {x.aval}", "scan", user_location()
            )
        sizes.append(x.aval.shape[0])
    if length is not None:
        sizes.append(int(length))
    if not sizes:
        raise ShapeError("nothing to scan over: pass xs or length=", "scan", user_location())
    if len(set(sizes)) != 1:
        what = ", ".join(str(x.aval) for x in xs) + (f" and length={length}" if length is not None else "")
        raise ShapeError(f"the operands in xs disagree on the length: {what}", "scan", user_location())
    return sizes[0]


# Eager forms: the whole construct as one cached program (callables and Python scalars are static).
_COND = _eager(lambda p, t, f, ops: cond(p, t, f, *ops), "cond")
_SWITCH = _eager(lambda i, bs, ops: switch(i, bs, *ops), "switch")
_WHILE = _eager(lambda c, b, init: while_loop(c, b, init), "while_loop")
_FORI = _eager(lambda lo, hi, b, init: fori_loop(lo, hi, b, init), "fori_loop")
_SCAN = _eager(lambda f, init, xs, n, rev: scan(f, init, xs, n, rev), "scan")

__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]
