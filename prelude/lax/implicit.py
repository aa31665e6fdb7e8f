"""``lax.custom_root`` and ``lax.custom_linear_solve``: solutions differentiated implicitly (JAX's semantics).

The solver runs as given and is never differentiated; the solution's derivative comes from the implicit function
theorem. For ``custom_root``, ``f(x*, θ) = 0`` gives ``θ̄ = -(∂f/∂θ)ᵀ λ`` with ``(∂f/∂x)ᵀ λ = x̄``, ``λ`` found
by ``tangent_solve`` applied to the transposed linear map (as JAX's reverse mode does). For
``custom_linear_solve``, ``A(θ) x = b`` gives ``b̄ = λ = A⁻ᵀ x̄`` (``transpose_solve``, or ``solve`` when
``symmetric``) and ``θ̄ = -(∂(A x)/∂θ)ᵀ λ``. ``θ`` are the staged values ``f`` / ``matvec`` close over: they are
made explicit arguments (closure conversion) so derivatives reach them.

Deliberate difference from JAX: reverse mode only (``ts.grad``, ``ts.vjp``); forward mode (``ts.jvp``) through
these raises, as it does through any ``ts.custom_vjp`` function. The initial guess gets a zero cotangent, and an
auxiliary output (``has_aux``) none, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ... import pytree
from ...autodiff import vjp
from ...program import Program
from ...custom_derivatives import custom_vjp, stop_gradient
from ...signature import Spec
from ...staging.builder import inline, is_staging
from ...subgraph import stage_subgraph
from ...trace import wrap
from ...tree_util import tree_map
from ..numpy._core import as_tensor

__all__ = ["custom_linear_solve", "custom_root"]

X = TypeVar("X")
Closed = Callable[[Any, list[Any]], Any]


def _closure_converted(fn: Callable[[Any], Any], example: Any) -> tuple[Closed, list[Any], Any]:
    """``fn`` as ``g(x, consts)`` with the staged values it closes over as explicit ``consts``, and placeholders
    shaped like its result (``example`` may hold placeholders: ``ts.Spec``)."""
    sub = stage_subgraph(fn, [example], {})
    consts = [wrap(a) for a in sub.atoms[sub.num_leaf_inputs:]]

    def closed(x: Any, values: list[Any]) -> Any:
        leaves = [as_tensor(v).atom for v in pytree.flatten(x)[0]]
        return sub.outputs(inline(sub.graph, [*leaves, *(as_tensor(v).atom for v in values)]))

    result = pytree.unflatten(sub.out_tree, [Spec(a.shape, a.dtype, a.dims) for a in sub.graph.out_avals])
    return closed, consts, result


def _implicit(residual: Closed, params: list[Any], solve: Callable[[list[Any]], Any],
              adjoint_solve: Callable[[Callable[[Any], Any], Any], Any], has_aux: bool, name: str) -> Any:
    """``solve(params)`` (a solution ``x``, or ``(x, aux)``) with ``residual(x, params) = 0`` differentiated
    implicitly: ``params̄ = -(∂residual/∂params)ᵀ λ`` where ``adjoint_solve`` gives
    ``(∂residual/∂x)ᵀ λ = x̄``.

    What the solvers close over gets no derivative (JAX ignores its tangents too); ``custom_vjp`` refuses closed-
    over values that are differentiated, so both solvers are closure-converted and their values passed frozen."""

    def pull_back(inputs: tuple[Any, list[Any], Any]) -> Any:
        x, values, ct = inputs
        _, transposed = vjp(lambda y: residual(y, values), x)
        lam = adjoint_solve(lambda v: transposed(v)[0], ct[0] if has_aux else ct)
        _, pullback = vjp(lambda p: residual(x, p), values)
        return pullback(tree_map(lambda t: -t, lam))[0]

    run, run_frozen, out = _closure_converted(solve, params)
    back, back_frozen, _ = _closure_converted(pull_back, (out[0] if has_aux else out, params, out))
    n_run = len(run_frozen)

    def solution_fn(values: list[Any], fixed: list[Any]) -> Any:
        return run(values, fixed[:n_run])

    solution_fn.__name__ = name  # errors (forward mode) name the lax function
    solution = custom_vjp(solution_fn)

    def forward(values: list[Any], fixed: list[Any]) -> tuple[Any, tuple[Any, list[Any], list[Any]]]:
        out = run(values, fixed[:n_run])
        return out, (out[0] if has_aux else out, values, fixed[n_run:])

    def backward(res: tuple[Any, list[Any], list[Any]], ct: Any) -> tuple[list[Any], None]:
        x, values, fixed = res
        return back((x, values, ct), fixed), None

    solution.defvjp(forward, backward)
    return solution(params, stop_gradient([*run_frozen, *back_frozen]))


def custom_root(f: Callable[[X], X], initial_guess: X, solve: Callable[[Callable[[X], X], X], Any],
                tangent_solve: Callable[[Callable[[X], X], X], X], has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly (JAX's ``lax.custom_root``):
    ``tangent_solve(g, y)`` must solve the linear ``g(x) = y`` (it gets ``∂f/∂x``'s transpose in reverse mode)."""
    if not is_staging():  # eager: staged once for this call
        return Program(lambda x: custom_root(f, x, solve, tangent_solve, has_aux), name="custom_root")(initial_guess)
    guess = tree_map(as_tensor, initial_guess)
    f_closed, consts, _ = _closure_converted(f, guess)
    fixed_guess = stop_gradient(guess)

    def run(values: list[Any]) -> Any:
        return solve(lambda x: f_closed(x, values), fixed_guess)

    return _implicit(f_closed, consts, run, tangent_solve, has_aux, "lax.custom_root")


def custom_linear_solve(matvec: Callable[[X], X], b: X, solve: Callable[[Callable[[X], X], X], Any],
                        transpose_solve: Callable[[Callable[[X], X], X], X] | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, the ``x`` with ``matvec(x) = b``, differentiated implicitly (JAX's
    ``lax.custom_linear_solve``): through ``b`` and the values ``matvec`` closes over. Reverse mode needs
    ``transpose_solve(vecmat, x̄)`` (or ``symmetric=True``, which uses ``solve``)."""
    if not is_staging():  # eager: staged once for this call
        return Program(lambda r: custom_linear_solve(matvec, r, solve, transpose_solve, symmetric, has_aux),
                       name="custom_linear_solve")(b)
    rhs = tree_map(as_tensor, b)
    matvec_closed, consts, _ = _closure_converted(matvec, rhs)

    def residual(x: Any, values: list[Any]) -> Any:
        return tree_map(lambda ax, bi: ax - bi, matvec_closed(x, values[1:]), values[0])

    def run(values: list[Any]) -> Any:
        return solve(lambda x: matvec_closed(x, values[1:]), values[0])

    def adjoint(vecmat: Callable[[Any], Any], ct: Any) -> Any:
        solver = solve if transpose_solve is None and symmetric else transpose_solve
        if solver is None:
            raise TypeError("lax.custom_linear_solve: reverse-mode differentiation needs transpose_solve (or "
                            "symmetric=True)")
        result: Any = solver(vecmat, ct)
        return result[0] if has_aux else result  # the auxiliary output has no part in the derivative

    return _implicit(residual, [rhs, *consts], run, adjoint, has_aux, "lax.custom_linear_solve")
