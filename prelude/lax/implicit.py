"""``lax.custom_root`` and ``lax.custom_linear_solve``: solutions differentiated implicitly (JAX's semantics).

The solver runs as given and is never differentiated; the solution's derivative comes from the implicit function
theorem, in forward and reverse mode, to any order and under vmap. For ``custom_linear_solve``, ``A(θ) x = b``
gives ``ẋ = A⁻¹ (ḃ - Ȧ x)`` (``solve`` again) and ``b̄ = λ = A⁻ᵀ x̄`` (``transpose_solve``, or ``solve`` when
``symmetric``), ``θ̄ = -(∂(A x)/∂θ)ᵀ λ``. For ``custom_root``, ``f(x*, θ) = 0`` gives
``ẋ = -tangent_solve(∂f/∂x, ∂f/∂θ θ̇)``; reverse mode transposes that, so (as in JAX) it needs a
``tangent_solve`` that is reverse-differentiable in its right-hand side (``lambda g, y: y / g(1.0)``, a dense
solve, or ``custom_linear_solve``; not a ``while_loop``). ``θ`` are the staged values ``f`` / ``matvec`` close
over: only through those do derivatives flow (what the solvers alone close over gets none, as in JAX). The
initial guess has no derivative and an auxiliary output (``has_aux``) a zero one, as in JAX. Both are
primitives (``linear_solve``, ``root_solve`` in ``staging/primitives/linear_solve.py``) whose rules emit
themselves again, so ``hessian``, ``jacrev(jacfwd)``, grad of grad and vmap of either stay implicit.

A Python scalar ``initial_guess`` or ``b`` takes the dtype ``f`` or ``matvec`` returns for it, as a loop carry
does (``custom_root(f, 1.0, ...)`` solves in ``f``'s precision).

Deliberate difference from JAX: ``custom_root`` requires ``solve`` to return the type of ``initial_guess``, leaf
for leaf (JAX checks only the structure).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ... import pytree
from ...autodiff import jvp, vjp
from ...program import Program
from ...signature import Spec
from ...staging.builder import is_staging
from ...staging import dtypes as _dt
from ...staging.errors import DTypeError, ShapeError
from ...staging.ir import Atom, Graph, Var
from ...staging.primitives import linear_solve as L
from ...staging.source import user_location
from ...subgraph import Subgraph, stage_subgraph
from ...trace import WeakTraced, wrap
from ...tree_util import tree_map
from .. import numpy as tnp
from ..numpy._core import as_tensor

__all__ = ["custom_linear_solve", "custom_root"]

X = TypeVar("X")


def _placeholders(tree: Any) -> Any:
    """``tree`` with each tensor leaf replaced by an abstract value of its type (a subgraph input)."""
    return tree_map(lambda v: Spec(v.aval.shape, v.aval.dtype, v.aval.dims), tree)


def _staged(op: str, what: str, fn: Callable[..., Any], args: Sequence[Any], like: Any, has_aux: bool) -> Subgraph:
    """``fn(*args)`` staged, checked to return values of ``like``'s structure and types (then an auxiliary value
    with ``has_aux``)."""
    sub = stage_subgraph(fn, args, {})
    leaves, tree = pytree.flatten(like)
    out_tree = sub.out_tree
    result = out_tree.children[0] if has_aux and out_tree.kind == "tuple" and len(out_tree.children) == 2 else out_tree
    if has_aux and result is out_tree:
        raise ShapeError(f"{what} must return a pair (solution, aux) with has_aux=True, got {out_tree!r}", op,
                         user_location())
    if result != tree:
        raise ShapeError(f"{what} returned structure {result!r}, expected {tree!r}", op, user_location())
    for got, want in zip(sub.graph.out_avals, leaves):
        if not got.same_layout(want.aval):
            raise ShapeError(f"{what} returned {got} where {want.aval} was expected", op, user_location())
    return sub


def _shared_consts(subs: Sequence[Subgraph]) -> tuple[list[Graph], list[Atom]]:
    """The subgraphs taking their own leaf inputs, then every value any of them closes over (in one order, each
    once), and those values: the primitives feed every subgraph the same trailing consts."""
    consts: dict[Atom, None] = {}
    for sub in subs:
        consts.update(dict.fromkeys(sub.atoms[sub.num_leaf_inputs :]))
    graphs = []
    for sub in subs:
        own = dict(zip(sub.atoms[sub.num_leaf_inputs :], sub.graph.inputs[sub.num_leaf_inputs :]))
        extra = [own[c] if c in own else Var(c.aval) for c in consts]  # values it does not read: unused inputs
        graphs.append(Graph([*sub.graph.inputs[: sub.num_leaf_inputs], *extra], sub.graph.eqns, sub.graph.outputs))
    return graphs, list(consts)


def _settled(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` as tensors, where a Python scalar leaf (weakly typed) takes the dtype ``fn`` returns for it, as a
    loop carry does: ``custom_root(f, 1.0, ...)`` solves in the precision of ``f``. Operators do not keep a scalar
    weak, so where the default float fails to stage the wider ones are tried, as for a carry."""
    leaves, structure = pytree.flatten(tree)
    scalars = [type(x) in (float, int) or isinstance(x, WeakTraced) for x in leaves]
    if not any(scalars):
        return tree_map(as_tensor, tree)
    for dtype in (None, *sorted(_dt.FLOATS - {_dt.DEFAULT_FLOAT}, key=lambda d: -d.itemsize)):
        tried = leaves if dtype is None else [_as_dtype(x, dtype) if s else x for x, s in zip(leaves, scalars)]
        try:
            sub = stage_subgraph(fn, [pytree.unflatten(structure, tried)], {}, (0,), precise_floats=True)
        except DTypeError:
            continue
        if sub.out_tree == structure:
            tried = [_as_dtype(x, a.dtype) if s else x for x, s, a in zip(leaves, scalars, sub.graph.out_avals)]
        return tree_map(as_tensor, pytree.unflatten(structure, tried))
    return tree_map(as_tensor, tree)  # staging it again reports the error


def _as_dtype(scalar: Any, dtype: np.dtype[Any]) -> Any:
    """A Python scalar (or one passed to a program) as a tensor of ``dtype``, from its most precise value."""
    return wrap(scalar.as_dtype(dtype)) if isinstance(scalar, WeakTraced) else tnp.asarray(scalar, dtype=dtype)


def _leaf_atoms(tree: Any) -> list[Atom]:
    return [leaf.atom for leaf in pytree.leaves(tree)]


def custom_root(f: Callable[[X], X], initial_guess: X, solve: Callable[[Callable[[X], X], X], Any],
                tangent_solve: Callable[[Callable[[X], X], X], X], has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (JAX's ``lax.custom_root``):
    ``tangent_solve(g, y)`` must solve the linear ``g(x) = y`` for ``g`` the linearization of ``f`` at the root."""
    if not is_staging():  # eager: staged once for this call
        return Program(lambda x: custom_root(f, x, solve, tangent_solve, has_aux), name="custom_root")(initial_guess)
    op = "lax.custom_root"
    guess = _settled(f, initial_guess)
    space = _placeholders(guess)
    f_sub = stage_subgraph(f, [space], {})
    if f_sub.out_tree != pytree.structure(guess):
        raise ShapeError(f"f returned structure {f_sub.out_tree!r}, expected that of initial_guess, "
                         f"{pytree.structure(guess)!r}", op, user_location())
    values = pytree.unflatten(f_sub.out_tree, [Spec(a.shape, a.dtype, a.dims) for a in f_sub.graph.out_avals])

    def linearized_solve(x: Any, y: Any) -> Any:
        return tangent_solve(lambda v: jvp(f, (x,), (v,))[1], y)

    subs = [
        f_sub,
        _staged(op, "solve", lambda g: solve(f, g), [space], guess, has_aux),
        _staged(op, "tangent_solve", linearized_solve, [space, values], guess, False),
    ]
    (f_graph, solve_graph, ts_graph), consts = _shared_consts(subs)
    outs = L.root_solve(_leaf_atoms(guess), consts, f=f_graph, solve=solve_graph, tangent_solve=ts_graph)
    return subs[1].outputs(outs)


def _transposed(matvec: Callable[[X], X]) -> Callable[[X], X]:
    """``matvec``'s transpose (its VJP: ``matvec`` is linear, so taken at zero)."""

    def vecmat(ct: X) -> X:
        return vjp(matvec, tree_map(tnp.zeros_like, ct))[1](ct)[0]  # type: ignore[no-any-return]

    return vecmat


def custom_linear_solve(matvec: Callable[[X], X], b: X, solve: Callable[[Callable[[X], X], X], Any],
                        transpose_solve: Callable[[Callable[[X], X], X], X] | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, the ``x`` with ``matvec(x) = b``, differentiated implicitly (JAX's
    ``lax.custom_linear_solve``): through ``b`` and the values ``matvec`` closes over. Reverse mode needs
    ``transpose_solve(vecmat, x̄)`` (or ``symmetric=True``, which uses ``solve``)."""
    if not is_staging():  # eager: staged once for this call
        return Program(lambda r: custom_linear_solve(matvec, r, solve, transpose_solve, symmetric, has_aux),
                       name="custom_linear_solve")(b)
    op = "lax.custom_linear_solve"
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    rhs = _settled(matvec, b)
    space = [_placeholders(rhs)]
    subs = [_staged(op, "matvec", matvec, space, rhs, False),
            _staged(op, "solve", lambda r: solve(matvec, r), space, rhs, has_aux)]
    if transpose_solve is solve and symmetric:  # Aᵀ = A, solved by solve: the same subgraphs serve
        subs += subs
    elif transpose_solve is not None:
        vecmat = matvec if symmetric else _transposed(matvec)
        transposer = transpose_solve
        subs += [subs[0] if symmetric else _staged(op, "the transpose of matvec", vecmat, space, rhs, False),
                 _staged(op, "transpose_solve", lambda r: transposer(vecmat, r), space, rhs, has_aux)]
    graphs, consts = _shared_consts(subs)
    outs = L.linear_solve(_leaf_atoms(rhs), consts, matvec=graphs[0], solve=graphs[1], transposed=tuple(graphs[2:]))
    return subs[1].outputs(outs)
