"""``ts.custom_batching``: functions with their own batching rule (JAX's ``jax.custom_batching``).

``f = custom_vmap(fun)`` behaves as ``fun`` except under ``vmap``, where ``@f.def_vmap`` gives the rule
``rule(axis_size, in_batched, *args) -> (out, out_batched)``: ``in_batched`` has one entry per argument (a bool per
leaf, in the argument's structure), batched arguments carry the batch axis first, and ``out_batched`` says which
results are batched (one bool for all, or one per result leaf). The rule is checked when vmap runs it: a result
must have the batched or unbatched type it claims, named with the rule's line. ``jvp`` (and ``jacfwd``) of ``f``
differentiates ``fun``, and ``vmap`` of that batches by the JVP of the rule, as in JAX. Reverse mode raises, as in
JAX: decorate the custom_vmap function with ``ts.custom_vjp`` to differentiate it in reverse.

``sequential_vmap(fun)``: batches by calling ``fun`` once per batch member (``ts.lax.map``), for functions that
do not batch.

Deliberate differences from JAX: positional arguments only; a custom_vmap function that closes over a value vmap
batches is an error (pass it as an argument, so that its rule sees it batched), as is differentiating a value it
closes over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

from . import pytree
from .lax import map as lax_map
from .program import Program
from .staging.builder import building, is_staging
from .staging.errors import TransformError
from .staging.ir import Atom, Graph, SourceLoc, Var
from .staging.primitives import custom_vmap as CV
from .staging.primitives import structural as S
from .staging.source import user_location
from .staging.transforms.jvp import jvp_emit
from .staging.zeros import MaybeZero, Zero
from .subgraph import function_name, stage_subgraph
from .trace import WeakTraced, to_atom, wrap

__all__ = ["custom_vmap", "sequential_vmap"]

P = ParamSpec("P")
R = TypeVar("R")
Rule = Callable[..., tuple[Any, Any]]


class custom_vmap(Generic[P, R]):  # noqa: N801 - JAX's name
    """``fun`` with a batching rule of its own (``def_vmap``)."""

    def __init__(self, fun: Callable[P, R]) -> None:
        self.fun = fun
        self.name = function_name(fun)
        self.vmap_rule: Rule | None = None
        self._program = Program(self._staged, name=self.name, check_annotations=False)

    def def_vmap(self, vmap_rule: Rule) -> Rule:
        """Set the batching rule: ``vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)``."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError(f"custom_vmap function {self.name} takes positional arguments only")
        if is_staging():
            return self._staged(*args)  # type: ignore[no-any-return]
        return self._program(*args)  # type: ignore[no-any-return]

    def _staged(self, *args: Any) -> Any:
        loc = user_location()
        sub = stage_subgraph(self.fun, args, {}, tuple(range(len(args))), precise_floats=True)
        leaves, treedef = pytree.flatten((tuple(args), {}))
        rule = _UserRule(self, treedef, leaves, sub.dynamic, sub.out_tree, loc)
        n = sub.num_leaf_inputs
        return sub.outputs(CV.custom_vmap_call(sub.atoms[:n], sub.atoms[n:], sub.graph, rule))


class _Rule:
    """What every rule object offers the primitive: its name, line and forward-mode derivative."""

    name: str
    loc: SourceLoc | None

    def __call__(self, axis_size: int, in_batched: Sequence[bool], args: Sequence[Atom]) -> tuple[
        list[Atom], list[bool]
    ]:
        raise NotImplementedError

    def jvp(self, wants: Sequence[bool], nonzero: Sequence[bool]) -> CV.VmapRule:
        return _JvpRule(self, tuple(wants), tuple(nonzero))


class _UserRule(_Rule):
    """The user's rule on staged values, called with atoms: its arguments rebuilt in their structure (static
    leaves as they were passed), its results flattened and checked against the function's."""

    def __init__(self, owner: custom_vmap[Any, Any], treedef: pytree.TreeDef, leaves: list[Any],
                 dynamic: Sequence[bool], out_tree: pytree.TreeDef, loc: SourceLoc | None) -> None:
        self.owner, self.treedef, self.leaves, self.dynamic, self.out_tree = owner, treedef, leaves, dynamic, out_tree
        self.name = f"custom_vmap rule of {owner.name}"
        self.loc = loc

    def __call__(self, axis_size: int, in_batched: Sequence[bool], args: Sequence[Atom]) -> tuple[
        list[Atom], list[bool]
    ]:
        user_rule = self.owner.vmap_rule
        if user_rule is None:
            raise TransformError(f"{self.owner.name} is a custom_vmap function without a rule: define one with "
                                 "@f.def_vmap", "custom_vmap", self.loc)
        values, flags = iter(args), iter(in_batched)
        flag_leaves = [next(flags) if d else False for d in self.dynamic]
        # Python numbers (and weakly typed scalars) passed to the function stay weakly typed for the rule.
        call_leaves = [
            wrap(next(values), weak=not batched and _is_weak(leaf)) if d else leaf
            for leaf, d, batched in zip(self.leaves, self.dynamic, flag_leaves)
        ]
        call_args = pytree.unflatten(self.treedef, call_leaves)[0]
        batched_args = pytree.unflatten(self.treedef, flag_leaves)[0]
        result = user_rule(axis_size, list(batched_args), *call_args)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TransformError(f"{self.name} must return a pair (out, out_batched)", "custom_vmap", self.loc)
        out, out_batched = result
        out_leaves, tree = pytree.flatten(out)
        if tree != self.out_tree:
            raise TransformError(f"{self.name} returned a value structured {tree}; the function returns "
                                 f"{self.out_tree}", "custom_vmap", self.loc)
        return [to_atom(leaf) for leaf in out_leaves], self._flags(out_batched)

    def _flags(self, out_batched: Any) -> list[bool]:
        if isinstance(out_batched, bool):
            return [out_batched] * self.out_tree.num_leaves
        flags, tree = pytree.flatten(out_batched)
        if tree != self.out_tree or not all(isinstance(f, bool) for f in flags):
            raise TransformError(f"{self.name}: out_batched must be a bool or bools structured as the result "
                                 f"{self.out_tree}, got {out_batched!r:.80}", "custom_vmap", self.loc)
        return flags


def _is_weak(leaf: Any) -> bool:
    return type(leaf) in (bool, int, float) or isinstance(leaf, WeakTraced)


class _JvpRule(_Rule):
    """The batching rule of ``jvp_graph(fun, wants)`` (without its zero tangents): the JVP of ``base`` at the
    arguments, with each argument batched where its tangent is (and the other way round)."""

    def __init__(self, base: _Rule, wants: tuple[bool, ...], nonzero: tuple[bool, ...]) -> None:
        self.base, self.wants, self.nonzero = base, wants, nonzero
        self.name, self.loc = base.name, base.loc

    def __call__(self, axis_size: int, in_batched: Sequence[bool], args: Sequence[Atom]) -> tuple[
        list[Atom], list[bool]
    ]:
        n = len(self.wants)
        primals, primal_batched = list(args[:n]), list(in_batched[:n])
        given, given_batched = iter(args[n:]), iter(in_batched[n:])
        tangents: list[MaybeZero] = []
        for i, want in enumerate(self.wants):
            if not want:
                tangents.append(Zero(primals[i].aval))
                continue
            tangent, tangent_batched = next(given), next(given_batched)
            if tangent_batched and not primal_batched[i]:
                primals[i], primal_batched[i] = _stacked(primals[i], axis_size), True
            elif primal_batched[i] and not tangent_batched:
                tangent = _stacked(tangent, axis_size)
            tangents.append(tangent)
        with building() as builder:
            inputs = [Var(p.aval) for p in primals]
            outs, out_batched = self.base(axis_size, primal_batched, inputs)
        graph: Graph = builder.graph(inputs, outs)
        outs, touts = jvp_emit(graph, primals, tangents)
        results, flags = list(outs), list(out_batched)
        for out, out_tangent, keep, batched in zip(outs, touts, self.nonzero, out_batched):
            if keep:
                value = S.zeros(out.aval) if isinstance(out_tangent, Zero) else out_tangent
                results.append(value)
                flags.append(value.aval.ndim > out.aval.ndim - (1 if batched else 0))
        return results, flags


def _stacked(x: Atom, size: int) -> Atom:
    aval = x.aval
    return S.broadcast_in_dim(x, (size, *aval.shape), tuple(range(1, aval.ndim + 1)), (None, *aval.dims))


def sequential_vmap(fun: Callable[P, R]) -> custom_vmap[P, R]:
    """``fun`` batched by calling it once per batch member (a ``ts.lax.map`` over the batched arguments)."""
    f = custom_vmap(fun)
    plain: Callable[..., Any] = fun

    def one_at_a_time(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, bool]:
        leaves, treedef = pytree.flatten(args)
        flags = pytree.flatten(tuple(in_batched))[0]
        batched = [leaf for leaf, b in zip(leaves, flags) if b]

        def member(values: Any) -> Any:
            it = iter(values)
            return plain(*pytree.unflatten(treedef, [next(it) if b else leaf for leaf, b in zip(leaves, flags)]))

        return lax_map(member, tuple(batched)), True

    f.def_vmap(one_at_a_time)
    return f
