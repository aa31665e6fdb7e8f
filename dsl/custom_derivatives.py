"""User-defined derivatives: ``custom_jvp`` (``.defjvp(rule)``), ``custom_vjp`` (``.defvjp(fwd, bwd)``) and
``stop_gradient``.

Calling a decorated function stages the function and its rules into subgraphs right away, checks that the rules
return values of the right types (naming the rule and both types at the caller's line), and binds one call
primitive carrying them. Differentiation transforms then use the rules; everything else (lowering, vmap)
uses the function itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, ParamSpec, TypeVar

from . import pytree
from .program import Program
from .staging import dtypes as _dt
from .staging.builder import is_staging
from .staging.errors import ShapeError, TransformError
from .staging.ir import Atom, Aval, SourceLoc
from .staging.primitives import autodiff as A
from .staging.primitives import elementwise as E
from .staging.source import user_location
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
        self._staging_rules = False  # rules often call the function itself; inside them it is the plain function

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
        super().__init__(fun, nondiff_argnums)

    def defjvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.rule = rule
        return rule

    def _staged(self, *all_args: Any) -> Any:
        loc = user_location()
        nondiff, args, _, fun = self._stage_function(all_args)
        if self.rule is None or self._staging_rules:
            return fun.outputs(_inline_plain(fun))
        rule_name = f"custom_jvp rule {function_name(self.rule)}"
        rule_fn = self.rule
        arg_avals = _leaf_avals(fun)

        def rule_flat(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            result = rule_fn(*nondiff, primals, tangents)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TransformError(f"{rule_name} must return a pair (out, tangent_out)", rule_name, loc)
            return result

        abstract = _abstract_args(args, arg_avals)
        with _rules_staging(self):
            rule = stage_subgraph(rule_flat, [abstract, abstract], {}, (0, 1), precise_floats=True)
        out_tree = rule.out_tree
        if out_tree.kind != "tuple" or out_tree.children[0] != fun.out_tree or out_tree.children[1] != fun.out_tree:
            raise ShapeError(
                f"{rule_name} returned structure {out_tree!r}; expected (out, tangent_out) each shaped like "
                f"{fun.out_tree!r}",
                rule_name,
                loc,
            )
        n_out = len(fun.graph.outputs)
        _check_types(rule_name, "output", rule.graph.out_avals[:n_out], fun.graph.out_avals, loc)
        _check_types(rule_name, "tangent", rule.graph.out_avals[n_out:], fun.graph.out_avals, loc)
        rule_consts = _consts(rule)
        outs = A.custom_jvp_call(
            _arg_atoms(fun), _consts(fun), rule_consts,
            fun=fun.graph, rule=rule.graph, name=self.name,
        )
        return fun.outputs(outs)


class custom_vjp(_CustomDerivative[P, R]):  # noqa: N801 - JAX's name
    """A function with a user-defined reverse-mode rule.

    ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct) -> tuple`` with one cotangent per argument
    (in its structure; None for an argument with no cotangent).
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        super().__init__(fun, nondiff_argnums)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def _staged(self, *all_args: Any) -> Any:
        loc = user_location()
        nondiff, args, merged, fun = self._stage_function(all_args)
        if self.fwd is None or self.bwd is None or self._staging_rules:
            return fun.outputs(_inline_plain(fun))
        fwd_name = f"custom_vjp fwd {function_name(self.fwd)}"
        bwd_name = f"custom_vjp bwd {function_name(self.bwd)}"
        with _rules_staging(self):
            fwd_fn = self.fwd
            fwd = stage_subgraph(
                lambda *xs: fwd_fn(*merged(xs)), args, {}, tuple(range(len(args))), precise_floats=True
            )
        tree = fwd.out_tree
        if tree.kind != "tuple" or len(tree.children) != 2 or tree.children[0] != fun.out_tree:
            raise ShapeError(
                f"{fwd_name} returned structure {tree!r}; expected (out, residuals) with out shaped like "
                f"{fun.out_tree!r}",
                fwd_name,
                loc,
            )
        n_out = len(fun.graph.outputs)
        _check_types(fwd_name, "output", fwd.graph.out_avals[:n_out], fun.graph.out_avals, loc)
        res_tree = tree.children[1]
        res_avals = fwd.graph.out_avals[n_out:]
        bwd_fn = self.bwd
        arg_avals = _leaf_avals(fun)

        def bwd_flat(*leaves: Any) -> Any:
            res = pytree.unflatten(res_tree, leaves[: len(res_avals)])
            ct = pytree.unflatten(fun.out_tree, leaves[len(res_avals) :])
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
        with _rules_staging(self):
            bwd = stage_subgraph(bwd_flat, placeholders, {}, tuple(range(len(placeholders))), precise_floats=True)
        _check_types(bwd_name, "cotangent", bwd.graph.out_avals, arg_avals, loc)
        outs = A.custom_vjp_call(
            _arg_atoms(fun), (_consts(fun), _consts(fwd), _consts(bwd)),
            fun=fun.graph, fwd=fwd.graph, bwd=bwd.graph, name=self.name,
        )
        return fun.outputs(outs)


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
    if ct is None:
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
