"""Solves differentiated implicitly: ``linear_solve`` (``lax.custom_linear_solve``) and ``root_solve``
(``lax.custom_root``).

Each carries the user's solver as a subgraph and runs it as given; no transform ever walks into it. Derivatives
come from the equation the solution satisfies, through the other subgraphs. Every subgraph reads the same
trailing ``consts`` (the union of what the user's functions close over), so a const reaches the derivative only
through the function that defines the equation, as in JAX: what only the solver reads gets none.

- ``linear_solve``: inputs ``(*b, *consts)``; ``matvec(x, *consts) -> A x``, ``solve(b, *consts) -> (x, *aux)``
  and ``transposed``: ``(vecmat, transpose_solve)`` (the same for ``Aᵀ``), or ``()`` when the user gave no
  ``transpose_solve``. JVP: ``ẋ = A⁻¹ (ḃ - Ȧ x)``, by this primitive again; VJP: ``λ = A⁻ᵀ x̄`` by this primitive
  with the roles transposed (``b̄ = λ``, ``consts̄ = -(∂(A x)/∂consts)ᵀ λ``). Both emit ``linear_solve`` again, so
  derivatives of any order and mode stay implicit.
- ``root_solve``: inputs ``(*guess, *consts)``; ``f(x, *consts) -> r`` with ``r = 0`` at the root,
  ``solve(guess, *consts) -> (x, *aux)`` and ``tangent_solve(x, y, *consts) -> d`` solving ``∂f/∂x(x) d = y``.
  JVP: ``ẋ = -tangent_solve(x, ∂f/∂consts · consts̄)``, JAX's rule; VJP: its transpose, tangent_solve's VJP in
  ``y`` (so, as in JAX, reverse mode needs a tangent_solve that is reverse-differentiable in ``y``). The
  solution ``x`` in both rules is this equation's output, so higher derivatives differentiate it implicitly too.

Auxiliary outputs have zero derivative and the initial guess none, as in JAX. Batching grows one batched flag
per vector leaf until every subgraph agrees (unbatched operands such as a shared matrix stay unbatched).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..builder import bind, inline
from ..errors import ShapeError, TransformError
from ..ir import Atom, Aval, DimName, Graph
from ..primitive import Primitive
from ..shapes import describe
from ..source import user_location
from ..zeros import MaybeZero, Zero
from . import elementwise as E
from . import structural as S
from .subgraph_edits import batch_size_and_name, carry_fixpoint, check_inputs, def_nested_axis_rules, to_front

# ------------------------------------------------------------------------------------------------ helpers


def _check_outputs(op: str, what: str, got: Sequence[Aval], want: Sequence[Aval]) -> None:
    if len(got) < len(want) or any(not g.same_layout(w) for g, w in zip(got, want)):
        raise ShapeError(f"{what} returns ({describe(got)}), expected ({describe(want)}) first", op)


def _neg(t: MaybeZero) -> MaybeZero:
    return t if isinstance(t, Zero) else E.neg(t)


def _all_zero(ts: Sequence[MaybeZero]) -> bool:
    return all(isinstance(t, Zero) for t in ts)


def _front(flags: Sequence[bool]) -> list[int | None]:
    return [0 if f else None for f in flags]


def _batched_outputs(graph: Graph, in_dims: Sequence[int | None], size: int, name: DimName) -> list[bool]:
    from ..transforms.batching import batch_graph

    return [d is not None for d in batch_graph(graph, in_dims, size, name)[1]]


def _batched(graph: Graph, in_dims: Sequence[int | None], lead: Sequence[bool], size: int, name: DimName) -> Graph:
    """``graph`` batched along ``in_dims``, its leading outputs batched at axis 0 as ``lead`` says (the vectors
    every subgraph agrees on) and the rest (auxiliary outputs) at 0 when they depend on the batch."""
    from ..transforms.batching import batch_graph

    rest = _batched_outputs(graph, in_dims, size, name)[len(lead):]
    return batch_graph(graph, in_dims, size, name, _front([*lead, *rest]))[0]


def _vector_fixpoint(
    start: Sequence[bool], graphs: Sequence[tuple[Graph, Callable[[list[bool]], list[bool]], slice]],
    c_dims: Sequence[int | None], size: int, name: DimName,
) -> list[bool]:
    """Grow the batched flags of the vector leaves until no subgraph batches one more: each entry is (graph, the
    flags of its vector inputs from the current flags, where its vector outputs land in the flags)."""

    def step(flags: list[bool]) -> list[bool]:
        grown = list(flags)
        for graph, inputs, lands in graphs:
            outs = _batched_outputs(graph, [*_front(inputs(flags)), *c_dims], size, name)
            grown[lands] = [a or b for a, b in zip(grown[lands], outs)]
        return grown

    return carry_fixpoint(list(start), step)


# ------------------------------------------------------------------------------------------- linear_solve

linear_solve_p = Primitive("linear_solve", multiple_results=True)


@linear_solve_p.def_shape
def _linear_solve_shape(*avals: Aval, matvec: Graph, solve: Graph, transposed: tuple[Graph, ...]) -> Any:
    op = "linear_solve"
    n = len(matvec.outputs)
    if len(transposed) not in (0, 2):
        raise ShapeError(f"transposed holds (vecmat, transpose_solve) or nothing, got {len(transposed)} graphs", op)
    for what, graph in zip(("matvec", "solve", "vecmat", "transpose_solve"), (matvec, solve, *transposed)):
        check_inputs(op, what, graph, avals)
        _check_outputs(op, what, graph.out_avals, avals[:n])
    return solve.out_avals


def linear_solve(
    b: Sequence[Atom], consts: Sequence[Atom], *, matvec: Graph, solve: Graph, transposed: tuple[Graph, ...]
) -> list[Atom]:
    """``solve(b, *consts)``: the ``x`` with ``matvec(x, *consts) = b`` (then the solver's auxiliary outputs)."""
    return list(bind(linear_solve_p, *b, *consts, matvec=matvec, solve=solve, transposed=transposed))


@linear_solve_p.def_jvp
def _linear_solve_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, matvec: Graph, solve: Graph,
    transposed: tuple[Graph, ...],
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_emit

    n = len(matvec.outputs)
    consts, x = primals[n:], outs[:n]
    rhs = list(tangents[:n])
    if not _all_zero(tangents[n:]):  # A x = b: Ȧ x + A ẋ = ḃ
        _, a_dot_x = jvp_emit(matvec, [*x, *consts], [*(Zero(v.aval) for v in x), *tangents[n:]])
        rhs = [E.add_tangents(r, _neg(t)) for r, t in zip(rhs, a_dot_x)]
    aux = [Zero(o.aval) for o in outs[n:]]
    if _all_zero(rhs):
        return [*(Zero(v.aval) for v in x), *aux]
    x_dot = linear_solve([S.instantiate(r) for r in rhs], consts, matvec=matvec, solve=solve, transposed=transposed)
    return [*x_dot[:n], *aux]


@linear_solve_p.def_vjp
def _linear_solve_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, matvec: Graph,
    solve: Graph, transposed: tuple[Graph, ...],
) -> list[MaybeZero | None]:
    from ..transforms.vjp import vjp_emit

    n = len(matvec.outputs)
    consts = primals[n:]
    none: list[MaybeZero | None] = [None] * len(primals)
    if not any(wants) or _all_zero(cts[:n]):  # auxiliary outputs have no derivative
        return none
    if not transposed:
        raise TransformError(
            "lax.custom_linear_solve: reverse-mode differentiation (grad, vjp, jacrev) needs transpose_solve (or "
            "symmetric=True)",
            "grad",
            user_location(),
        )
    vecmat, transpose_solve = transposed
    lam = linear_solve(
        [S.instantiate(c) for c in cts[:n]], consts, matvec=vecmat, solve=transpose_solve, transposed=(matvec, solve)
    )[:n]
    const_cts: list[MaybeZero | None] = [None] * len(consts)
    if any(wants[n:]):  # consts̄ = -(∂(A x)/∂consts)ᵀ λ
        _, in_cts = vjp_emit(matvec, [*outs[:n], *consts], [E.neg(v) for v in lam], [False] * n + list(wants[n:]))
        const_cts = list(in_cts[n:])
    return [*lam, *const_cts]


@linear_solve_p.def_batch
def _linear_solve_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, matvec: Graph,
    solve: Graph, transposed: tuple[Graph, ...],
) -> tuple[list[Atom], list[int | None]]:
    size, name = batch_size_and_name(args, dims, walked_size)
    n = len(matvec.outputs)
    c_dims = dims[n:]
    graphs = (matvec, solve, *transposed)
    lands = slice(0, n)  # b and x have one type: one flag per leaf serves both
    vec = _vector_fixpoint(
        [d is not None for d in dims[:n]], [(g, list, lands) for g in graphs], c_dims, size, name
    )
    new = [_batched(g, [*_front(vec), *c_dims], vec, size, name) for g in graphs]
    b = [to_front(a, d, f, size, name) for a, d, f in zip(args[:n], dims[:n], vec)]
    outs = linear_solve(b, args[n:], matvec=new[0], solve=new[1], transposed=tuple(new[2:]))
    aux = _batched_outputs(solve, [*_front(vec), *c_dims], size, name)[n:]
    return outs, _front([*vec, *aux])


def_nested_axis_rules(linear_solve_p, "matvec", "solve", "transposed")


# --------------------------------------------------------------------------------------------- root_solve

root_solve_p = Primitive("root_solve", multiple_results=True)


@root_solve_p.def_shape
def _root_solve_shape(*avals: Aval, f: Graph, solve: Graph, tangent_solve: Graph) -> Any:
    op = "root_solve"
    n = len(tangent_solve.outputs)
    guess, consts = avals[:n], avals[n:]
    check_inputs(op, "f", f, avals)
    check_inputs(op, "solve", solve, avals)
    check_inputs(op, "tangent_solve", tangent_solve, [*guess, *f.out_avals, *consts])
    _check_outputs(op, "solve", solve.out_avals, guess)
    _check_outputs(op, "tangent_solve", tangent_solve.out_avals, guess)
    return solve.out_avals


def root_solve(
    guess: Sequence[Atom], consts: Sequence[Atom], *, f: Graph, solve: Graph, tangent_solve: Graph
) -> list[Atom]:
    """``solve(guess, *consts)``: an ``x`` with ``f(x, *consts) = 0`` (then the solver's auxiliary outputs)."""
    return list(bind(root_solve_p, *guess, *consts, f=f, solve=solve, tangent_solve=tangent_solve))


@root_solve_p.def_jvp
def _root_solve_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, f: Graph, solve: Graph,
    tangent_solve: Graph,
) -> list[MaybeZero]:
    from ..transforms.jvp import jvp_emit

    n = len(tangent_solve.outputs)
    consts, x = primals[n:], outs[:n]
    zeros: list[MaybeZero] = [Zero(o.aval) for o in outs]
    if _all_zero(tangents[n:]):  # the guess has no derivative
        return zeros
    # f(x(c), c) = 0: ∂f/∂x ẋ = -∂f/∂c ċ
    _, rhs = jvp_emit(f, [*x, *consts], [*(Zero(v.aval) for v in x), *tangents[n:]])
    if _all_zero(rhs):
        return zeros
    d = inline(tangent_solve, [*x, *(S.instantiate(r) for r in rhs), *consts])
    return [*(E.neg(v) for v in d), *zeros[n:]]


@root_solve_p.def_vjp
def _root_solve_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *, f: Graph,
    solve: Graph, tangent_solve: Graph,
) -> list[MaybeZero | None]:
    from ..transforms.vjp import vjp_emit

    n, m = len(tangent_solve.outputs), len(f.outputs)
    consts, x = primals[n:], outs[:n]
    none: list[MaybeZero | None] = [None] * len(primals)
    if not any(wants[n:]) or _all_zero(cts[:n]):
        return none
    # The JVP's transpose: μ = tangent_solve(x, ·)ᵀ x̄, then c̄ = -(∂f/∂c)ᵀ μ.
    y = [S.zeros(a) for a in f.out_avals]  # tangent_solve is linear in y: transposed at any y
    _, ts_cts = vjp_emit(
        tangent_solve, [*x, *y, *consts], list(cts[:n]), [False] * n + [True] * m + [False] * len(consts)
    )
    mu = ts_cts[n : n + m]
    if _all_zero(mu):
        return none
    _, f_cts = vjp_emit(f, [*x, *consts], [_neg(u) for u in mu], [False] * n + list(wants[n:]))
    return [*none[:n], *f_cts[n:]]


@root_solve_p.def_batch
def _root_solve_batch(
    args: Sequence[Atom], dims: Sequence[int | None], walked_size: int | None = None, *, f: Graph, solve: Graph,
    tangent_solve: Graph,
) -> tuple[list[Atom], list[int | None]]:
    size, name = batch_size_and_name(args, dims, walked_size)
    n, m = len(tangent_solve.outputs), len(f.outputs)
    c_dims = dims[n:]
    xs, rs = slice(0, n), slice(n, n + m)  # flags: the solution's leaves, then f's

    def x_of(flags: list[bool]) -> list[bool]:
        return flags[xs]

    flags = _vector_fixpoint(
        [d is not None for d in dims[:n]] + [False] * m,
        [(solve, x_of, xs), (f, x_of, rs), (tangent_solve, lambda fl: fl[: n + m], xs)],
        c_dims, size, name,
    )
    x_dims = _front(flags[xs])
    new_solve = _batched(solve, [*x_dims, *c_dims], flags[xs], size, name)
    new_f = _batched(f, [*x_dims, *c_dims], flags[rs], size, name)
    new_ts = _batched(tangent_solve, [*_front(flags[: n + m]), *c_dims], flags[xs], size, name)
    guess = [to_front(a, d, fl, size, name) for a, d, fl in zip(args[:n], dims[:n], flags[xs])]
    outs = root_solve(guess, args[n:], f=new_f, solve=new_solve, tangent_solve=new_ts)
    aux = _batched_outputs(solve, [*x_dims, *c_dims], size, name)[n:]
    return outs, _front([*flags[xs], *aux])


def_nested_axis_rules(root_solve_p, "f", "solve", "tangent_solve")
