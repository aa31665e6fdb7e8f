"""User-defined derivatives: ``custom_jvp`` (``.defjvp(rule)``), ``custom_vjp`` (``.defvjp(fwd, bwd)``) and
``stop_gradient``.

Calling a decorated function stages the function and its rules into subgraphs right away, checks that the rules
return values of the right types (naming the rule and both types at the caller's line), and binds one call
primitive carrying them. Differentiation transforms then use the rules; everything else (lowering, vmap)
uses the function itself.

``custom_vjp`` rules that call their own function (``fwd`` returning ``f(x)``, ``odeint``'s adjoint solving with
``odeint``) get the custom function there too, with its rules staged only when that inner call is differentiated
(staging them at once would never end): so ``grad`` of ``grad`` uses the rules at every order, as in JAX.

``symbolic_zeros`` (JAX's API: ``f.defjvp(rule, symbolic_zeros=True)``, ``f.defvjp(fwd, bwd,
symbolic_zeros=True)``): a ``custom_jvp`` rule is given a ``SymbolicZero`` (``.aval``, ``.shape``, ``.dtype``,
``.ndim``) for each tangent leaf whose input is not differentiated, and may return one for a zero tangent output;
a ``custom_vjp`` ``fwd`` is given a ``CustomVJPPrimal`` (``.value``, ``.perturbed``) per argument leaf, and
``bwd`` a ``SymbolicZero`` per output cotangent that is zero; ``bwd`` may return ``None`` or a ``SymbolicZero``
for a zero cotangent. ``SymbolicZero`` is the transforms' own symbolic zero (``staging.zeros.Zero``), and
``zero_from_primal`` / ``custom_vjp_primal_tree_values`` are JAX's helpers.

Deliberate differences from JAX:
- Rules are staged at the call with every float input perturbed (so that their types are checked at the
  caller's line), and with ``symbolic_zeros`` once more per pattern a transform meets: a rule's Python side
  effects run that many times.
- A rule staged on use that reads a staged value from outside the call (a closure over a traced value of an
  enclosing function) reads the value the call was made with, when the call's own rules read it too; where a rule
  staged only on use (a call in its own rules) reads one, that inner call is differentiated through the function
  itself. ``ts.closure_convert`` (JAX's) is the way out there too: pass such values as arguments.
- Integer inputs' tangents are ``SymbolicZero`` of the input's own type (JAX's: ``float0``).
- A ``custom_jvp`` function called in its own rule is the function itself there (JAX nests its rule): the rules
  of this library's special functions are written for that, their formulas cancelling far out where the
  function's own derivative does not (``wofz``'s second derivative at |z| ~ 1e3).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

from . import pytree
from .program import Program
from .staging import dtypes as _dt
from .staging.builder import is_staging
from .staging.errors import ShapeError, TransformError
from .staging.ir import Atom, Aval, Graph, SourceLoc, Var
from .staging.primitives import autodiff as A
from .staging.primitives import elementwise as E
from .staging.source import user_location
from .staging.zeros import Zero
from .signature import Spec
from .subgraph import Subgraph, function_name, is_tensor_leaf, stage_subgraph
from .tensor import Traced
from .trace import WeakTraced, wrap

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def stop_gradient(x: T) -> T:
    """``x`` unchanged, but derivatives do not flow through it (applies leafwise to a pytree)."""

    def leaf(v: Any) -> Any:
        if isinstance(v, Traced):
            return wrap(A.stop_gradient(v.atom))
        return v  # concrete values have no derivative to stop

    return pytree.tree_map(leaf, x)  # type: ignore[no-any-return]


def _call_program(fn: Callable[..., Any], name: str) -> Program[..., Any]:
    return Program(fn, name=name, check_annotations=False)


def _check_types(rule: str, what: str, got: Sequence[Aval], want: Sequence[Aval], loc: SourceLoc | None) -> None:
    if len(got) != len(want):
        raise ShapeError(f"{rule} returned {len(got)} {what} for {len(want)} expected", rule, loc)
    for i, (g, w) in enumerate(zip(got, want)):
        if not g.same_layout(w):
            where = f"{what} {i}" if len(want) > 1 else what
            raise ShapeError(f"{rule} returned {g} for {where}, expected {w}", rule, loc)


def _arg_atoms(sub: Subgraph) -> list[Atom]:
    return list(sub.atoms[: sub.num_leaf_inputs])


def _consts(sub: Subgraph) -> list[Atom]:
    return list(sub.atoms[sub.num_leaf_inputs :])


def _leaf_avals(sub: Subgraph) -> list[Aval]:
    return [v.aval for v in sub.graph.inputs[: sub.num_leaf_inputs]]


class _CustomDerivative(Generic[P, R]):
    """What ``custom_jvp`` and ``custom_vjp`` share: the call (staged, or compiled and cached outside staging)
    and staging the function itself with its non-differentiable arguments split off."""

    kind = "custom derivative"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int]) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.name = function_name(fun)
        self._program = _call_program(self._staged, self.name)
        # Set while staging this function's rules: a call of it there (rules often call the function itself) is
        # the function itself (custom_jvp) or bound with its rules staged only on use (custom_vjp).
        self._staging_rules = False

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError(f"{self.kind} function {self.name} takes positional arguments only")
        if is_staging():
            return self._staged(*args)  # type: ignore[no-any-return]
        return self._program(*args)  # type: ignore[no-any-return]

    def _staged(self, *all_args: Any) -> Any:
        raise NotImplementedError

    def _stage_function(
        self, all_args: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], Callable[[Sequence[Any]], list[Any]], Subgraph]:
        """``(nondiff args, differentiable args, merge, the function staged on the differentiable ones)``."""
        nondiff, args, merged = _split_nondiff(self.name, all_args, self.nondiff_argnums)
        plain: Callable[..., Any] = self.fun
        fun = stage_subgraph(lambda *xs: plain(*merged(xs)), args, {}, tuple(range(len(args))), precise_floats=True)
        return nondiff, args, merged, fun


class custom_jvp(_CustomDerivative[P, R]):  # noqa: N801 - JAX's name
    """A function with a user-defined forward-mode rule: ``rule(primals, tangents) -> (out, tangent_out)``.

    Reverse mode transposes the rule (it must be linear in the tangents, as derivatives are).
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        self.rule: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        super().__init__(fun, nondiff_argnums)

    def defjvp(self, rule: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """``symbolic_zeros``: the rule is given a ``SymbolicZero`` for each tangent leaf whose input is not
        differentiated, and may return one for a tangent output that is zero (staged per such pattern)."""
        self.rule = rule
        self.symbolic_zeros = symbolic_zeros
        return rule

    def _staged(self, *all_args: Any) -> Any:
        nondiff, args, _, fun = self._stage_function(all_args)
        if self.rule is None:
            return fun.outputs(_inline_plain(fun))
        if self._staging_rules:
            # Called in its own rule (``primal_out = f(x)``): the function itself, which the rule's derivative
            # differentiates. Rules written for that (special functions whose rule formulas cancel where the
            # function's own derivative does not) would lose accuracy in JAX's nesting.
            return fun.outputs(_inline_plain(fun))
        rule = _JVPRule(self, nondiff, args, fun)
        staged, _ = rule.stage(rule.eager)
        rule.consts = _consts(staged)
        outs = A.custom_jvp_call(
            _arg_atoms(fun), _consts(fun), rule.consts, fun=fun.graph, rule=staged.graph, name=self.name,
            restage=A.Restager(rule.restage) if self.symbolic_zeros else None,
        )
        return fun.outputs(outs)


class _JVPRule:
    """A ``custom_jvp`` function's rule staged for one call, per pattern of perturbed arguments: at the call, or
    on use (``restage``)."""

    def __init__(self, fn: custom_jvp[Any, Any], nondiff: tuple[Any, ...], args: tuple[Any, ...], fun: Subgraph) -> None:
        assert fn.rule is not None
        self.fn, self.nondiff, self.fun = fn, nondiff, fun
        self.loc = user_location()
        self.name = f"custom_jvp rule {function_name(fn.rule)}"
        arg_avals = _leaf_avals(fun)
        self.abstract = _abstract_args(args, arg_avals)
        self.eager = tuple(_dt.is_inexact(a.dtype) for a in arg_avals)
        self.consts: list[Atom] = []  # the eager rule's, which restaged ones read

    def restage(self, key: tuple[Hashable, ...]) -> A.Restaged | None:
        sub, zero_outs = self.stage(key)  # type: ignore[arg-type] # the key is the perturbed pattern
        graph = _with_consts(sub, self.consts)
        return None if graph is None else (graph, zero_outs)

    def stage(self, perturbed: Sequence[bool]) -> tuple[Subgraph, tuple[bool, ...]]:
        rule_fn, nondiff, name, loc, fun = self.fn.rule, self.nondiff, self.name, self.loc, self.fun
        assert rule_fn is not None
        symbolic = self.fn.symbolic_zeros
        zero_outs: list[bool] = []

        def rule_flat(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            if symbolic:
                tangents = _symbolic_leaves(tangents, perturbed)
            result = rule_fn(*nondiff, primals, tangents)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TransformError(f"{name} must return a pair (out, tangent_out)", name, loc)
            if not symbolic:
                return result
            tangent_out, zeros = _dense_leaves(result[1])
            zero_outs.extend(zeros)
            return result[0], tangent_out

        with _rules_staging(self.fn):
            rule = stage_subgraph(rule_flat, [self.abstract, self.abstract], {}, (0, 1), precise_floats=True)
        out_tree = rule.out_tree
        if out_tree.kind != "tuple" or out_tree.children[0] != fun.out_tree or out_tree.children[1] != fun.out_tree:
            raise ShapeError(
                f"{name} returned structure {out_tree!r}; expected (out, tangent_out) each shaped like "
                f"{fun.out_tree!r}",
                name,
                loc,
            )
        n_out = len(fun.graph.outputs)
        _check_types(name, "output", rule.graph.out_avals[:n_out], fun.graph.out_avals, loc)
        _check_types(name, "tangent", rule.graph.out_avals[n_out:], fun.graph.out_avals, loc)
        return rule, tuple(zero_outs) if symbolic else (False,) * n_out


class custom_vjp(_CustomDerivative[P, R]):  # noqa: N801 - JAX's name
    """A function with a user-defined reverse-mode rule.

    ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct) -> tuple`` with one cotangent per argument
    (in its structure; None for an argument with no cotangent).
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        super().__init__(fun, nondiff_argnums)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False) -> None:
        """``symbolic_zeros``: ``fwd`` is given a ``CustomVJPPrimal`` (``.value``, ``.perturbed``) for each
        argument leaf, and ``bwd`` a ``SymbolicZero`` for each output cotangent that is zero (staged per such
        pattern)."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def _staged(self, *all_args: Any) -> Any:
        nondiff, args, merged, fun = self._stage_function(all_args)
        if self.fwd is None or self.bwd is None:
            return fun.outputs(_inline_plain(fun))
        rules = _VJPRules(self, nondiff, args, merged, fun)
        if self._staging_rules:  # called in its own rules: staged once this call is differentiated, as in JAX
            outs = A.custom_vjp_call(
                _arg_atoms(fun), (_consts(fun), (), ()), fun=fun.graph, fwd=(), bwd=(), name=self.name,
                restage=A.Restager(rules.restage),
            )
            return fun.outputs(outs)
        eager = tuple(_dt.is_inexact(a.dtype) for a in rules.arg_avals)
        fwd = rules.fwd(eager)
        bwd = rules.bwd(eager, (True,) * len(fun.graph.outputs))
        rules.consts = (_consts(fwd), _consts(bwd))
        outs = A.custom_vjp_call(
            _arg_atoms(fun), (_consts(fun), _consts(fwd), _consts(bwd)),
            fun=fun.graph, fwd=fwd.graph, bwd=bwd.graph, name=self.name,
            restage=A.Restager(rules.restage) if self.symbolic_zeros else None,
        )
        return fun.outputs(outs)


class _VJPRules:
    """A ``custom_vjp`` function's ``fwd`` and ``bwd`` staged for one call, per pattern of perturbed arguments
    (and of nonzero output cotangents): at the call, or on use (``restage``)."""

    def __init__(self, fn: custom_vjp[Any, Any], nondiff: tuple[Any, ...], args: tuple[Any, ...],
                 merged: Callable[[Sequence[Any]], list[Any]], fun: Subgraph) -> None:
        assert fn.fwd is not None and fn.bwd is not None
        self.fn, self.nondiff, self.args, self.merged, self.fun = fn, nondiff, args, merged, fun
        self.loc = user_location()
        self.fwd_name = f"custom_vjp fwd {function_name(fn.fwd)}"
        self.bwd_name = f"custom_vjp bwd {function_name(fn.bwd)}"
        self.arg_avals = _leaf_avals(fun)
        # The eager rules' consts, which restaged ones read (a call in the function's own rules has none).
        self.consts: tuple[list[Atom], list[Atom]] = ([], [])
        self._fwds: dict[tuple[bool, ...], Subgraph] = {}
        self._bwds: dict[tuple[tuple[bool, ...], tuple[bool, ...]], Subgraph] = {}

    def restage(self, key: tuple[Hashable, ...]) -> A.Restaged | None:
        symbolic = self.fn.symbolic_zeros
        perturbed: tuple[bool, ...] = key[1] if symbolic else ()  # type: ignore[assignment]
        if key[0] == "fwd":
            graph = _with_consts(self.fwd(perturbed), self.consts[0])
            # Staged whole here, the bwd a call in its own rules gets must be stageable too.
            if graph is not None and not symbolic and self.restage(("bwd",)) is None:
                return None
        else:
            nonzero: tuple[bool, ...] = key[2] if symbolic else ()  # type: ignore[assignment]
            graph = _with_consts(self.bwd(perturbed, nonzero), self.consts[1])
            if graph is None and symbolic:
                raise TransformError(
                    f"{self.bwd_name} reads staged values it did not read when {self.fn.name} was called; pass "
                    "them as arguments", self.bwd_name, self.loc)
        return None if graph is None else (graph, ())

    def fwd(self, perturbed: tuple[bool, ...]) -> Subgraph:
        if perturbed in self._fwds:
            return self._fwds[perturbed]
        fun, loc, fwd_fn, merged = self.fun, self.loc, self.fn.fwd, self.merged
        assert fwd_fn is not None
        symbolic = self.fn.symbolic_zeros

        def fwd_flat(*xs: Any) -> Any:
            given = merged(_primal_records(xs, perturbed) if symbolic else xs)
            return fwd_fn(*given)

        with _rules_staging(self.fn):
            fwd = stage_subgraph(fwd_flat, self.args, {}, tuple(range(len(self.args))), precise_floats=True)
        tree = fwd.out_tree
        if tree.kind != "tuple" or len(tree.children) != 2 or tree.children[0] != fun.out_tree:
            raise ShapeError(
                f"{self.fwd_name} returned structure {tree!r}; expected (out, residuals) with out shaped like "
                f"{fun.out_tree!r}",
                self.fwd_name,
                loc,
            )
        _check_types(self.fwd_name, "output", fwd.graph.out_avals[: len(fun.graph.outputs)], fun.graph.out_avals, loc)
        self._fwds[perturbed] = fwd
        return fwd

    def bwd(self, perturbed: tuple[bool, ...], nonzero: tuple[bool, ...]) -> Subgraph:
        if (perturbed, nonzero) not in self._bwds:
            self._bwds[perturbed, nonzero] = self._stage_bwd(perturbed, nonzero)
        return self._bwds[perturbed, nonzero]

    def _stage_bwd(self, perturbed: tuple[bool, ...], nonzero: tuple[bool, ...]) -> Subgraph:
        fwd, fun, args, loc, bwd_name = self.fwd(perturbed), self.fun, self.args, self.loc, self.bwd_name
        n_out = len(fun.graph.outputs)
        res_tree = fwd.out_tree.children[1]
        res_avals = fwd.graph.out_avals[n_out:]
        bwd_fn, nondiff, arg_avals = self.fn.bwd, self.nondiff, self.arg_avals
        assert bwd_fn is not None
        symbolic = self.fn.symbolic_zeros

        def bwd_flat(*leaves: Any) -> Any:
            res = pytree.unflatten(res_tree, leaves[: len(res_avals)])
            ct_leaves = leaves[len(res_avals) :]
            ct = pytree.unflatten(fun.out_tree, _symbolic_leaves(ct_leaves, nonzero) if symbolic else ct_leaves)
            cts = bwd_fn(*nondiff, res, ct)
            if not isinstance(cts, tuple) or len(cts) != len(args):
                got = f"a tuple of {len(cts)}" if isinstance(cts, tuple) else _kind(cts)
                raise ShapeError(
                    f"{bwd_name} must return a tuple with one cotangent per differentiable argument ({len(args)}), "
                    f"got {got}",
                    bwd_name,
                    loc,
                )
            avals = iter(arg_avals)
            return [leaf for i, c in enumerate(cts) for leaf in _cotangent_leaves(c, args[i], avals, i, bwd_name, loc)]

        # A residual that is a Python scalar argument passed through stays weakly typed in bwd, as in the function.
        weak_inputs = _weak_inputs(args, fwd)
        res_outs = fwd.graph.outputs[n_out:]
        placeholders = [weak_inputs.get(id(r), _placeholder(r.aval)) for r in res_outs]
        placeholders += [_placeholder(a) for a in fun.graph.out_avals]
        with _rules_staging(self.fn):
            bwd = stage_subgraph(bwd_flat, placeholders, {}, tuple(range(len(placeholders))), precise_floats=True)
        _check_types(bwd_name, "cotangent", bwd.graph.out_avals, arg_avals, loc)
        return bwd


@dataclass(slots=True)
class CustomVJPPrimal:
    """What a ``custom_vjp`` fwd defined with ``symbolic_zeros`` gets per argument leaf: the ``value`` and whether
    it is ``perturbed`` (differentiated)."""

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """``tree`` with each ``CustomVJPPrimal`` leaf replaced by its value."""

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"custom_vjp_primal_tree_values: unexpected leaf type {type(leaf).__name__}")
        return leaf.value

    return pytree.tree_map(value, tree)


SymbolicZero = Zero  # the zero tangents and cotangents the transforms carry, as rules see them


def zero_from_primal(value: Any, symbolic_zeros: bool = False) -> Any:
    """A zero tangent per leaf of ``value``: a ``SymbolicZero``, or with ``symbolic_zeros=False`` an array."""
    from .staging.primitives import structural as S

    def zero(x: Any) -> Any:
        aval = x.aval if isinstance(x, Traced) else _host_aval(np.asarray(x))
        return Zero(aval) if symbolic_zeros else wrap(S.zeros(aval))

    return pytree.tree_map(zero, value)


def _host_aval(host: np.ndarray[Any, Any]) -> Aval:
    return Aval(host.shape, _dt.canonical(host.dtype))


def _symbolic_leaves(tree: Any, keep: Sequence[bool]) -> Any:
    """``tree`` with its i-th tensor leaf replaced by a ``SymbolicZero`` where ``keep[i]`` is False."""
    flags = iter(keep)
    return pytree.tree_map(lambda x: x if not isinstance(x, Traced) or next(flags) else Zero(x.aval), tree)


def _primal_records(xs: Any, perturbed: Sequence[bool]) -> Any:
    flags = iter(perturbed)
    return pytree.tree_map(lambda x: CustomVJPPrimal(x, next(flags)) if isinstance(x, Traced) else x, xs)


def _dense_leaves(tree: Any) -> tuple[Any, list[bool]]:
    """``tree`` with each ``SymbolicZero`` (or None) leaf made an array of zeros, and which leaves were."""
    from .staging.primitives import structural as S

    leaves, treedef = pytree.flatten(tree)
    zeros = [isinstance(x, Zero) for x in leaves]
    dense = [wrap(S.zeros(x.aval)) if z else x for x, z in zip(leaves, zeros)]
    return pytree.unflatten(treedef, dense), zeros


def _with_consts(sub: Subgraph, consts: Sequence[Atom]) -> Graph | None:
    """``sub``'s graph reading ``consts`` (the eager rule's closed-over values, in order) after its leaf inputs, or
    None where it reads a staged value outside them (the call could not pass it)."""
    index = {c: i for i, c in enumerate(consts)}
    read = sub.atoms[sub.num_leaf_inputs :]
    if any(c not in index for c in read):
        return None
    inputs = [Var(c.aval) for c in consts]
    for c, var in zip(read, sub.graph.inputs[sub.num_leaf_inputs :]):
        inputs[index[c]] = var
    return Graph([*sub.graph.inputs[: sub.num_leaf_inputs], *inputs], sub.graph.eqns, sub.graph.outputs)


@contextmanager
def _rules_staging(fn: _CustomDerivative[Any, Any]) -> Iterator[None]:
    saved = fn._staging_rules
    fn._staging_rules = True
    try:
        yield
    finally:
        fn._staging_rules = saved


def _split_nondiff(
    name: str, args: Sequence[Any], nondiff_argnums: Sequence[int]
) -> tuple[tuple[Any, ...], tuple[Any, ...], Callable[[Sequence[Any]], list[Any]]]:
    """``(nondiff args, differentiable args, merge)`` where ``merge(diff)`` restores the original order."""
    if any(not -len(args) <= n < len(args) for n in nondiff_argnums):
        raise TypeError(f"{name}: nondiff_argnums {tuple(nondiff_argnums)} out of range for {len(args)} arguments")
    skip = {n % len(args) for n in nondiff_argnums} if args else set()
    nondiff = tuple(args[i] for i in sorted(skip))
    diff = tuple(a for i, a in enumerate(args) if i not in skip)

    def merge(values: Sequence[Any]) -> list[Any]:
        it_diff, it_nondiff = iter(values), iter(nondiff)
        return [next(it_nondiff) if i in skip else next(it_diff) for i in range(len(args))]

    return nondiff, diff, merge


def _weak_inputs(args: Sequence[Any], sub: Subgraph) -> dict[int, Any]:
    """The graph inputs of ``sub`` staged from weakly typed leaves of ``args`` (by id), each with its leaf."""
    dynamic = [x for x in pytree.leaves(tuple(args)) if is_tensor_leaf(x) or type(x) in (float, int, bool)]
    weak = [type(x) in (float, int, bool) or isinstance(x, WeakTraced) for x in dynamic]
    return {id(v): x for v, x, w in zip(sub.graph.inputs, dynamic, weak) if w}


def _placeholder(aval: Aval) -> Spec:
    """An abstract argument of type ``aval`` for staging a rule (it becomes a graph input of that type)."""
    return Spec(aval.shape, aval.dtype, aval.dims)


def _abstract_args(args: Sequence[Any], avals: Sequence[Aval]) -> tuple[Any, ...]:
    """``args`` with each tensor leaf (in order) replaced by a placeholder of the matching type."""
    leaves, tree = pytree.flatten(tuple(args))
    it = iter(avals)
    swapped = []
    for x in leaves:
        if is_tensor_leaf(x) or type(x) in (float, int, bool):
            aval = next(it)
            # Python scalars stay weakly typed in the rule, as in the function (``sin(x) * y`` with y=2.0 and x f64).
            weak = type(x) in (float, int, bool) or isinstance(x, WeakTraced)
            swapped.append(x if weak else _placeholder(aval))
        else:
            swapped.append(x)
    return pytree.unflatten(tree, swapped)  # type: ignore[no-any-return]


def _cotangent_leaves(
    ct: Any, arg: Any, avals: Iterator[Aval], index: int, rule: str, loc: SourceLoc | None
) -> list[Any]:
    """The cotangent leaves for ``arg``'s tensor leaves (whose types ``avals`` yields, in order); ``None`` means
    zeros of those types."""
    from .staging.primitives import structural as S

    arg_leaves, arg_tree = pytree.flatten(arg)
    dynamic = [is_tensor_leaf(x) or type(x) in (float, int, bool) for x in arg_leaves]
    own = [next(avals) for d in dynamic if d]
    if ct is None or isinstance(ct, Zero):
        return [wrap(S.zeros(aval)) for aval in own]
    ct_leaves, ct_tree = pytree.flatten(ct)
    if ct_tree != arg_tree:
        raise ShapeError(
            f"{rule} returned a cotangent of structure {ct_tree!r} for argument {index}, whose structure is "
            f"{arg_tree!r}",
            rule,
            loc,
        )
    given = [c for c, d in zip(ct_leaves, dynamic) if d]
    given = [wrap(S.zeros(aval)) if isinstance(c, Zero) else c for c, aval in zip(given, own)]
    weak = [type(x) is float or isinstance(x, WeakTraced) for x, d in zip(arg_leaves, dynamic) if d]
    return [_weak_cotangent(c, aval) if w else c for c, w, aval in zip(given, weak, own)]


def _weak_cotangent(ct: Any, aval: Aval) -> Any:
    """The cotangent of a Python float argument is weakly typed too: a float scalar of any precision becomes the
    argument's type (float64 here, where the rule may well compute it in float32)."""
    if isinstance(ct, Traced) and ct.aval.ndim == 0 and ct.aval.dtype != aval.dtype and _dt.is_float(ct.aval.dtype):
        return wrap(E.convert(ct.atom, aval.dtype))
    return ct


def _kind(x: object) -> str:
    return f"a tensor {x.aval}" if isinstance(x, Traced) else f"a {type(x).__name__}"


def _inline_plain(sub: Subgraph) -> list[Atom]:
    from .staging.builder import inline

    return list(inline(sub.graph, sub.atoms))
