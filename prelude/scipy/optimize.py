"""``tensorstage.scipy.optimize``: JAX's ``jax.scipy.optimize`` — ``minimize`` with ``method="BFGS"`` or
``"l-bfgs-experimental-do-not-rely-on-this"``, returning ``OptimizeResults``.

Both methods are JAX's algorithms step for step (``_optimize_bfgs``): a ``while_loop`` of strong-Wolfe line
searches (JAX's, itself loops) and quasi-Newton updates, with the gradient from ``value_and_grad``. Inside a
program the whole minimization is one staged loop; on concrete arrays it is staged, compiled and run; under
``vmap`` (over ``x0`` or ``args``) the loop runs until every member has stopped, each member's state frozen once
its own condition ends. ``OptimizeResults`` is a NamedTuple, so a pytree. The line search is private, as in JAX.

Options (``options=``): BFGS takes ``maxiter`` (default ``200 * n``), ``norm`` (of the gradient, for the
convergence test; default inf), ``gtol`` (default 1e-5) and ``line_search_maxiter`` (10); L-BFGS takes
``maxiter``, ``norm``, ``maxcor`` (10), ``ftol``, ``gtol``, ``maxfun``, ``maxgrad`` and ``maxls`` (20).

Deliberate differences from JAX:
- The line search's zoom compares the bracket's width unsigned. JAX compares ``a_hi - a_lo`` signed, so every
  zoom entered with its high end below its low end fails at once (jax-ml/jax#16236): JAX's BFGS stops with status
  3 on Rosenbrock from most starts, where SciPy and tensorstage converge. Where no zoom meets such a bracket the
  iterates, counts and statuses are JAX's.
- ``tol`` sets ``gtol`` where ``options`` does not, as in SciPy (JAX ignores ``tol``).
- ``x0`` must be a 1-D real float tensor (JAX's L-BFGS also takes complex ``x0``), and ``fun`` must return a real
  scalar of ``x0``'s dtype (tensorstage does not promote); unknown options are a ``TypeError`` naming them.
- Like JAX, ``minimize`` has no derivative of its own (differentiating it differentiates through the loop:
  forward mode only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from ...dtypes import DType, bool_, i32
from ...program import Program
from ...signature import Spec
from ...staging import dtypes as _dt
from ...staging.builder import is_staging
from ...staging.source import user_location
from ...subgraph import function_name, stage_subgraph
from ...tensor import Tensor
from ..numpy._core import as_tensor, describe, dtype_error, shape_error
from ._optimize_bfgs import Outcome, minimize_bfgs, minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")

_METHODS: dict[str, tuple[Callable[..., Outcome], frozenset[str]]] = {
    "bfgs": (minimize_bfgs, frozenset({"maxiter", "norm", "gtol", "line_search_maxiter"})),
    "l-bfgs-experimental-do-not-rely-on-this": (
        minimize_lbfgs, frozenset({"maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls"})),
}


class OptimizeResults(NamedTuple, Generic[DT, N]):
    """The result of ``minimize``. ``status``: 0 converged; BFGS: 1 ``maxiter`` reached, 2 + the line search's
    status when it failed (3: zoom failed, 5: too many line search iterations), -1 otherwise; L-BFGS: 1 ``maxiter``,
    2 ``maxfun``, 3 ``maxgrad``, 4 decrease below ``ftol``, 5 line search failed. ``hess_inv`` (BFGS only) is the
    final inverse Hessian estimate; ``nfev`` / ``njev`` count evaluations of ``fun`` and of its gradient."""

    x: Tensor[DT, N]
    success: Tensor[bool_]
    status: Tensor[i32]
    fun: Tensor[DT]
    jac: Tensor[DT, N]
    hess_inv: Tensor[DT, N, N] | None
    nfev: Tensor[i32]
    njev: Tensor[i32]
    nit: Tensor[i32]


def minimize(fun: Callable[..., Tensor[DT]], x0: Tensor[DT, N], args: tuple[Any, ...] = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None) -> OptimizeResults[DT, N]:
    """A local minimum of ``fun(x, *args)`` (a real scalar) from the 1-D starting point ``x0``, by ``method``
    (``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"``, any case), as ``jax.scipy.optimize.minimize``."""
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__} {args!r}\n  at {user_location()}")
    if not isinstance(method, str) or method.lower() not in _METHODS:
        known = ", ".join(repr(m) for m in ("BFGS", "l-bfgs-experimental-do-not-rely-on-this"))
        raise ValueError(f"minimize: method {method!r} not recognized; use one of {known}\n  at {user_location()}")
    solver, accepted = _METHODS[method.lower()]
    settings = dict(options or {})
    unknown = sorted(set(settings) - accepted)
    if unknown:
        raise TypeError(f"minimize: method {method!r} takes no option {', '.join(map(repr, unknown))}; its options "
                        f"are {', '.join(sorted(accepted))}\n  at {user_location()}")
    if tol is not None:
        settings.setdefault("gtol", tol)
    if not is_staging():  # on concrete arrays: staged, compiled and run as one program
        x0 = np.asarray(x0) if isinstance(x0, (list, tuple)) else x0
        program = Program(lambda x, a: minimize(fun, x, a, method=method, tol=tol, options=options), name="minimize")
        return program(x0, args)
    x = _start(x0)
    objective = _objective(fun, x, args)
    out = solver(objective, x, **settings)
    return OptimizeResults(x=out.x_k, success=out.converged & ~out.failed, status=out.status, fun=out.f_k,
                           jac=out.g_k, hess_inv=out.hess_inv, nfev=out.nfev, njev=out.ngev, nit=out.k)


def _start(x0: Any) -> Any:
    """``x0`` as a 1-D real float tensor, as JAX requires."""
    x = as_tensor(x0)
    if x.aval.ndim != 1:
        raise shape_error("minimize", f"x0 must be 1-D (shape (n,)), got {describe(x)}; flatten it and reshape "
                                      "inside fun")
    if not _dt.is_float(x.aval.dtype):
        raise dtype_error("minimize", f"x0 must be a real float tensor, got {describe(x)}")
    return x


def _objective(fun: Callable[..., Any], x: Any, args: tuple[Any, ...]) -> Callable[[Any], Any]:
    """``fun`` with ``args`` bound, after checking (staged once on ``x``'s type) that it returns a real scalar of
    ``x``'s dtype."""

    def objective(v: Any) -> Any:
        return fun(v, *args)

    sub = stage_subgraph(objective, [Spec(x.aval.shape, x.aval.dtype, x.aval.dims)], {})
    name = function_name(fun)
    avals = sub.graph.out_avals
    if len(avals) != 1 or sub.out_tree.kind != "leaf" or avals[0].ndim != 0:
        got = ", ".join(map(str, avals)) if sub.out_tree.kind == "leaf" else repr(sub.out_tree)
        raise shape_error("minimize", f"fun ({name}) must return a scalar, got {got} for x of type {x.aval}")
    if avals[0].dtype != x.aval.dtype:
        raise dtype_error("minimize", f"fun ({name}) must return a scalar of x0's dtype, got {avals[0]} for x of "
                                      f"type {x.aval}")
    return objective

