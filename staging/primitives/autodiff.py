"""Primitives that steer differentiation: ``stop_gradient`` and calls with user-defined derivative rules.

``custom_jvp_call`` and ``custom_vjp_call`` carry the user's function and rules as subgraphs in their params.
Each subgraph reads its own closed-over outer values, which trail the call's inputs (``consts``); those values
are treated as constants by differentiation, as in JAX's ``custom_jvp``/``custom_vjp``.

- ``custom_jvp_call``: inputs ``(*args, *fun_consts, *rule_consts)``; ``rule`` maps ``(*args, *tangents,
  *rule_consts)`` to ``(*outs, *tangent_outs)``. Reverse mode transposes the rule: since it is linear in the
  tangents, the VJP of the rule with respect to its tangent inputs is the transpose.
- ``custom_vjp_call``: inputs ``(*args, *fun_consts, *fwd_consts, *bwd_consts)``; ``fwd`` maps ``(*args,
  *fwd_consts)`` to ``(*outs, *residuals)`` and ``bwd`` maps ``(*residuals, *out_cts, *bwd_consts)`` to one
  cotangent per arg. Forward mode is not defined for it (as in JAX): use ``custom_jvp`` for that.

Either may carry a ``Restager`` (param ``restage``): rules staged again when a transform needs them, for the
pattern of perturbed inputs (and, for ``bwd``, of nonzero output cotangents) that the transform knows. Custom
functions defined with ``symbolic_zeros`` use it, and so does a ``custom_vjp`` function called inside its own
rules: staging its rules there at once would never end (the odeint adjoint solves with odeint), so that call
carries no ``fwd``/``bwd`` graphs (``()``) and stages them only when it is itself differentiated, as JAX does.
A restaged graph has the eager graph's signature (its consts are the call's); where it cannot (its rules close
over staged values the call does not pass), the restager gives None and the eager rules are used, or with none
the function itself is differentiated.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeAlias

from ..builder import bind, inline
from ..errors import ShapeError, TransformError
from ..ir import Atom, Aval, Graph
from ..primitive import Primitive
from ..source import user_location
from ..zeros import MaybeZero, Zero, has_tangent
from . import structural as S
from .subgraph_edits import batch_size_and_name, def_nested_axis_rules, nonzero, split

# ------------------------------------------------------------------------------------------ stop_gradient

# Not differentiable: its outputs are inactive, so reverse mode never enters the (possibly non-reversible, e.g.
# while_loop) computations that only feed it.
stop_gradient_p = Primitive("stop_gradient", differentiable=False)


@stop_gradient_p.def_shape
def _stop_gradient_shape(x: Aval) -> Aval:
    return x


def stop_gradient(x: Atom) -> Atom:
    return bind(stop_gradient_p, x)  # type: ignore[no-any-return]


@stop_gradient_p.def_jvp
def _stop_gradient_jvp(primals: Sequence[Atom], tangents: Any, outs: Sequence[Atom]) -> Any:
    return (Zero(outs[0].aval),)


@stop_gradient_p.def_vjp
def _stop_gradient_vjp(cts: Any, primals: Sequence[Atom], outs: Any, wants: Any) -> Any:
    return (Zero(primals[0].aval),)


@stop_gradient_p.def_batch
def _stop_gradient_batch(args: Sequence[Atom], dims: Sequence[int | None]) -> Any:
    return stop_gradient(args[0]), dims[0]


# ------------------------------------------------------------------------------------------ no_derivative

no_derivative_p = Primitive("no_derivative")


@no_derivative_p.def_shape
def _no_derivative_shape(x: Aval, *, reason: str) -> Aval:
    return x


def no_derivative(x: Atom, reason: str) -> Atom:
    """``x`` unchanged; differentiating through it raises a TransformError saying ``reason`` (a value whose true
    derivative the library does not compute, where any number it could give would be silently wrong)."""
    return bind(no_derivative_p, x, reason=reason)  # type: ignore[no-any-return]


@no_derivative_p.def_jvp
def _no_derivative_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, reason: str) -> Any:
    if not isinstance(tangents[0], Zero):
        raise TransformError(reason, "jvp", user_location())
    return (Zero(outs[0].aval),)


@no_derivative_p.def_vjp
def _no_derivative_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Any, *, reason: str) -> Any:
    if wants[0] and not isinstance(cts[0], Zero):
        raise TransformError(reason, "grad", user_location())
    return (Zero(primals[0].aval),)


@no_derivative_p.def_batch
def _no_derivative_batch(args: Sequence[Atom], dims: Sequence[int | None], *, reason: str) -> Any:
    return no_derivative(args[0], reason), dims[0]


# ------------------------------------------------------------------------------------------------ helpers


def _check_inputs(name: str, avals: Sequence[Aval], graph: Graph, offset: int = 0) -> None:
    for i, (got, want) in enumerate(zip(avals, graph.in_avals[offset:])):
        if not got.same_layout(want):
            raise ShapeError(f"input {i} is {got}, but the function was staged for {want}", name)


def _no_differentiated_consts(kind: str, name: str, flags: Sequence[bool]) -> None:
    """Closed-over values are constants to a custom rule; differentiating through one would be silently wrong."""
    if any(flags):
        raise TransformError(
            f"{kind} function {name} closes over a value that is being differentiated; pass it as an argument",
            kind,
            user_location(),
        )


def _batch_all(args: Sequence[Atom], dims: Sequence[int | None], size: int | None) -> tuple[list[Atom], int]:
    """Every input batched at axis 0 (unbatched ones broadcast), so each subgraph batches uniformly. ``size``: the
    walked axis (from ``axis_batch``), or None to read it off a batched input."""
    from ..transforms.batching import move_batch_axis

    size, _ = batch_size_and_name(args, dims, size)
    return [move_batch_axis(a, d, 0, size) for a, d in zip(args, dims)], size


def _batched(graph: Graph, size: int) -> Graph:
    from ..transforms.batching import batch_graph

    batched, _ = batch_graph(graph, [0] * len(graph.inputs), size, out_dims=[0] * len(graph.outputs))
    return batched


def _maybe_batched(graph: Graph | tuple[()], size: int) -> Graph | tuple[()]:
    """A rule's graph batched; ``()`` (a rule staged only on use) stays so."""
    return _batched(graph, size) if isinstance(graph, Graph) else graph


# A restaged rule: its graph and which of its outputs are symbolic zeros (a ``custom_jvp`` rule's tangents).
Restaged: TypeAlias = tuple[Graph, tuple[bool, ...]]


class Restager:
    """Rules staged on demand, per key (the perturbed pattern, and a tag saying which rule), memoized. Not a
    graph: passes that walk nested graphs see only the eager ones."""

    __slots__ = ("_stage", "_memo")

    def __init__(self, stage: Callable[[tuple[Hashable, ...]], Restaged | None]) -> None:
        self._stage = stage
        self._memo: dict[tuple[Hashable, ...], Restaged | None] = {}

    def __call__(self, *key: Hashable) -> Restaged | None:
        if key not in self._memo:
            self._memo[key] = self._stage(key)
        return self._memo[key]

    def map(self, edit: Callable[[Graph], Graph]) -> Restager:
        """The same rules with ``edit`` applied to each graph once staged (batching a call keeps them lazy)."""

        def stage(key: tuple[Hashable, ...]) -> Restaged | None:
            found = self(*key)
            return None if found is None else (edit(found[0]), found[1])

        return Restager(stage)

    def __repr__(self) -> str:
        return "<staged on use>"


def _restaged_map(restage: Restager | None, edit: Callable[[Graph], Graph]) -> Restager | None:
    return None if restage is None else restage.map(edit)


# ------------------------------------------------------------------------------------------ custom_jvp_call

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


@custom_jvp_call_p.def_shape
def _custom_jvp_shape(
    *avals: Aval, fun: Graph, rule: Graph, num_args: int, num_fun_consts: int, name: str, restage: Restager | None
) -> Any:
    args, fun_consts, _ = split(avals, num_args, num_fun_consts)
    _check_inputs(f"custom_jvp {name}", [*args, *fun_consts], fun)
    return fun.out_avals


def custom_jvp_call(
    args: Sequence[Atom], fun_consts: Sequence[Atom], rule_consts: Sequence[Atom], *, fun: Graph, rule: Graph, name: str,
    restage: Restager | None = None,
) -> list[Atom]:
    """``restage(*perturbed)``: the rule staged for that pattern of perturbed args (``symbolic_zeros``)."""
    out = bind(
        custom_jvp_call_p, *args, *fun_consts, *rule_consts,
        fun=fun, rule=rule, num_args=len(args), num_fun_consts=len(fun_consts), name=name, restage=restage,
    )
    return list(out)


@custom_jvp_call_p.def_jvp
def _custom_jvp_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, fun: Graph, rule: Graph,
    num_args: int, num_fun_consts: int, name: str, restage: Restager | None,
) -> Any:
    args, _, rule_consts = split(primals, num_args, num_fun_consts)
    _no_differentiated_consts("custom_jvp", name, [not isinstance(t, Zero) for t in tangents[num_args:]])
    graph, zero_outs = _jvp_rule(rule, restage, nonzero(tangents[:num_args], args))
    # A restaged rule does not read the tangents it was given as symbolic zeros: their zeros are dead code.
    arg_tangents = [S.instantiate(t) for t in tangents[:num_args]]
    results = inline(graph, [*args, *arg_tangents, *rule_consts])
    return [Zero(o.aval) if z else t for o, t, z in zip(outs, results[len(outs):], zero_outs)]


def _jvp_rule(rule: Graph, restage: Restager | None, perturbed: Sequence[bool]) -> Restaged:
    """The rule for this pattern of perturbed args, and which of its tangent outputs are symbolic zeros."""
    found = None if restage is None else restage(*perturbed)
    return found if found is not None else (rule, (False,) * (len(rule.outputs) // 2))


@custom_jvp_call_p.def_vjp
def _custom_jvp_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, fun: Graph,
    rule: Graph, num_args: int, num_fun_consts: int, name: str, restage: Restager | None,
) -> Any:
    from ..transforms.vjp import vjp_emit

    args, fun_consts, rule_consts = split(primals, num_args, num_fun_consts)
    _no_differentiated_consts("custom_jvp", name, wants[num_args:])
    rule = _jvp_rule(rule, restage, [w and has_tangent(a.aval) for w, a in zip(wants, args)])[0]
    # The rule is linear in its tangents: its VJP with respect to them (at any tangent, zeros here) is the
    # transpose. Forward work on the zero tangents is dead and removed by DCE.
    zeros = [S.zeros(a.aval) for a in args]
    rule_wants = [False] * num_args + list(wants[:num_args]) + [False] * len(rule_consts)
    out_cts: list[MaybeZero] = [Zero(o.aval) for o in outs] + list(cts)
    _, in_cts = vjp_emit(rule, [*args, *zeros, *rule_consts], out_cts, rule_wants)
    tangent_cts = in_cts[num_args : 2 * num_args]
    return [*tangent_cts, *([None] * (len(fun_consts) + len(rule_consts)))]


@custom_jvp_call_p.def_batch
def _custom_jvp_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, fun: Graph, rule: Graph,
    num_args: int, num_fun_consts: int, name: str, restage: Restager | None,
) -> Any:
    ins, size = _batch_all(args, dims, walked_size)
    xs, fun_consts, rule_consts = split(ins, num_args, num_fun_consts)
    outs = custom_jvp_call(
        xs, fun_consts, rule_consts, fun=_batched(fun, size), rule=_batched(rule, size), name=name,
        restage=_restaged_map(restage, lambda g: _batched(g, size)),
    )
    return outs, [0] * len(outs)


def_nested_axis_rules(custom_jvp_call_p, "fun", "rule")


# ------------------------------------------------------------------------------------------ custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


@custom_vjp_call_p.def_shape
def _custom_vjp_shape(
    *avals: Aval, fun: Graph, fwd: Graph | tuple[()], bwd: Graph | tuple[()], num_args: int,
    consts: tuple[int, int, int], name: str, restage: Restager | None,
) -> Any:
    args, fun_consts, _, _, _ = split(avals, num_args, *consts)
    _check_inputs(f"custom_vjp {name}", [*args, *fun_consts], fun)
    return fun.out_avals


def custom_vjp_call(
    args: Sequence[Atom], consts: tuple[Sequence[Atom], Sequence[Atom], Sequence[Atom]], *, fun: Graph,
    fwd: Graph | tuple[()], bwd: Graph | tuple[()], name: str, restage: Restager | None = None,
) -> list[Atom]:
    """``fwd``/``bwd``: ``()`` for rules only ``restage`` stages: ``restage("fwd", perturbed)`` and
    ``restage("bwd", perturbed, nonzero_cts)``."""
    counts = (len(consts[0]), len(consts[1]), len(consts[2]))
    out = bind(
        custom_vjp_call_p, *args, *consts[0], *consts[1], *consts[2],
        fun=fun, fwd=fwd, bwd=bwd, num_args=len(args), consts=counts, name=name, restage=restage,
    )
    return list(out)


@custom_vjp_call_p.def_jvp
def _custom_vjp_jvp(primals: Any, tangents: Any, outs: Any, *, name: str, **params: Any) -> Any:
    raise TransformError(
        f"{name} is a custom_vjp function, which defines reverse mode only; forward mode (jvp, jacfwd, hessian) "
        "needs a custom_jvp rule",
        "jvp",
        user_location(),
    )


def _custom_vjp_forward(
    ins: Sequence[Atom], wants: Sequence[bool], *, fun: Graph, fwd: Graph | tuple[()], bwd: Graph | tuple[()],
    num_args: int, consts: tuple[int, int, int], name: str, restage: Restager | None,
) -> tuple[list[Atom], Any]:
    """Run ``fwd`` once for both the outputs and the residuals; the backward closure runs ``bwd``."""
    args, fun_consts, fwd_consts, bwd_consts = split(ins, num_args, *consts)[:4]
    _no_differentiated_consts("custom_vjp", name, wants[num_args:])
    perturbed = tuple(w and has_tangent(a.aval) for w, a in zip(wants, args))
    found = None if restage is None else restage("fwd", perturbed)
    fwd_graph = found[0] if found is not None else fwd
    if not isinstance(fwd_graph, Graph):  # rules that cannot be staged here: differentiate the function
        return _through_function(fun, [*args, *fun_consts], wants[:num_args], sum(consts[1:]))
    results = inline(fwd_graph, [*args, *fwd_consts])
    n_out = len(fun.outputs)
    outs, residuals = list(results[:n_out]), list(results[n_out:])

    def backward(cts: Sequence[MaybeZero], wants: Sequence[bool]) -> list[MaybeZero | None]:
        bwd_graph = bwd
        if found is not None and restage is not None:
            bwd_found = restage("bwd", perturbed, tuple(not isinstance(c, Zero) for c in cts))
            assert bwd_found is not None, "a custom_vjp bwd staged on use where its fwd was"
            bwd_graph = bwd_found[0]
        assert isinstance(bwd_graph, Graph)
        arg_cts = inline(bwd_graph, [*residuals, *(S.instantiate(c) for c in cts), *bwd_consts])
        return [*arg_cts, *([None] * sum(consts))]

    return outs, backward


def _through_function(
    fun: Graph, ins: Sequence[Atom], wants: Sequence[bool], num_rule_consts: int
) -> tuple[list[Atom], Any]:
    """Reverse mode through the function itself (its rules staged on use closed over values the call lacks)."""
    from ..transforms.vjp import vjp_emit

    outs = list(inline(fun, ins))
    fun_wants = [*wants, *([False] * (len(ins) - len(wants)))]

    def backward(cts: Sequence[MaybeZero], _: Sequence[bool]) -> list[MaybeZero | None]:
        in_cts = vjp_emit(fun, ins, cts, fun_wants)[1]
        return [*in_cts[: len(wants)], *([None] * (len(ins) - len(wants) + num_rule_consts))]

    return outs, backward


@custom_vjp_call_p.def_vjp
def _custom_vjp_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool], **params: Any) -> Any:
    _, backward = _custom_vjp_forward(primals, wants, **params)
    return backward(cts, wants)


@custom_vjp_call_p.def_batch
def _custom_vjp_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, fun: Graph,
    fwd: Graph | tuple[()], bwd: Graph | tuple[()], num_args: int, consts: tuple[int, int, int], name: str,
    restage: Restager | None,
) -> Any:
    ins, size = _batch_all(args, dims, walked_size)
    xs, fun_consts, fwd_consts, bwd_consts, _ = split(ins, num_args, *consts)
    outs = custom_vjp_call(
        xs, (fun_consts, fwd_consts, bwd_consts),
        fun=_batched(fun, size), fwd=_maybe_batched(fwd, size), bwd=_maybe_batched(bwd, size), name=name,
        restage=_restaged_map(restage, lambda g: _batched(g, size)),
    )
    return outs, [0] * len(outs)


def_nested_axis_rules(custom_vjp_call_p, "fun", "fwd", "bwd")
custom_vjp_call_p.def_vjp_forward(_custom_vjp_forward)
