"""BFGS and L-BFGS as JAX writes them (``jax._src.scipy.optimize.bfgs`` / ``_lbfgs``): one ``while_loop`` over
iterations, each a strong-Wolfe line search (``_optimize_line_search``) and a quasi-Newton update.

BFGS is Algorithm 6.1 of Nocedal and Wright (1999), keeping the dense inverse Hessian estimate; L-BFGS is their
Algorithm 7.5 (the two-loop recursion over the last ``maxcor`` steps, kept newest last in fixed-size buffers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...autodiff import value_and_grad
from ...control_flow import fori_loop, while_loop
from .. import numpy as tnp
from ..numpy.linalg_norms import norm as _vector_norm
from ._optimize_line_search import LineSearchResults, line_search

Value = Any  # a staged tensor
Objective = Callable[[Value], Value]


class Outcome(NamedTuple):
    """What ``minimize`` reports, method-independent."""

    converged: Value
    failed: Value
    status: Value
    x_k: Value
    f_k: Value
    g_k: Value
    hess_inv: Value | None
    nfev: Value
    ngev: Value
    k: Value


class _Iterate(NamedTuple):
    """What both methods carry: where they are and what it took to get there."""

    converged: Value
    failed: Value
    k: Value
    nfev: Value
    ngev: Value
    x_k: Value
    f_k: Value
    g_k: Value


class _BFGS(NamedTuple):
    at: _Iterate
    h_k: Value
    old_old_fval: Value
    ls_status: Value


class _LBFGS(NamedTuple):
    at: _Iterate
    s_history: Value
    y_history: Value
    rho_history: Value
    gamma: Value
    status: Value


def _int(n: int) -> Value:
    return tnp.asarray(np.int32(n))


def _norm(g: Value, order: float) -> Value:
    return _vector_norm(g, ord=order)


def _first(fun: Objective, x0: Value, converged: Value) -> _Iterate:
    f_0, g_0 = value_and_grad(fun)(x0)
    return _Iterate(converged(g_0), tnp.asarray(False), _int(0), _int(1), _int(1), x0, f_0, g_0)


def _advanced(at: _Iterate, ls: LineSearchResults, s_k: Value, converged: Value, failed: Value) -> _Iterate:
    """The iterate after a step ``s_k`` that ``ls`` found."""
    return _Iterate(converged, failed, at.k + 1, at.nfev + ls.nfev, at.ngev + ls.ngev, at.x_k + s_k, ls.f_k, ls.g_k)


def _outcome(at: _Iterate, status: Value, hess_inv: Value | None) -> Outcome:
    return Outcome(at.converged, at.failed, status, at.x_k, at.f_k, at.g_k, hess_inv, at.nfev, at.ngev, at.k)


def minimize_bfgs(fun: Objective, x0: Value, maxiter: int | None = None, norm: float = math.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> Outcome:
    """BFGS from ``x0`` until ``|grad|_norm < gtol`` or ``maxiter`` iterations (default ``200 * n``)."""
    iterations = 200 * x0.shape[0] if maxiter is None else maxiter
    first = _first(fun, x0, lambda g: _norm(g, norm) < gtol)
    init = _BFGS(first, tnp.eye(x0.shape[0], dtype=x0.dtype), first.f_k + _vector_norm(first.g_k) / 2, _int(0))

    def body(state: _BFGS) -> _BFGS:
        at = state.at
        p_k = -(state.h_k @ at.g_k)
        ls = line_search(fun, at.x_k, p_k, at.f_k, state.old_old_fval, at.g_k, maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        h_k = _bfgs_update(state.h_k, s_k, ls.g_k - at.g_k)
        return _BFGS(_advanced(at, ls, s_k, _norm(ls.g_k, norm) < gtol, ls.failed), h_k, at.f_k, ls.status)

    state = while_loop(lambda s: ~s.at.converged & ~s.at.failed & (s.at.k < iterations), body, init)
    at = state.at
    status = tnp.where(at.converged, _int(0), tnp.where(
        at.k == iterations, _int(1), tnp.where(at.failed, 2 + state.ls_status, _int(-1))))
    return _outcome(at, status, state.h_k)


def _bfgs_update(h: Value, s: Value, y: Value) -> Value:
    """``(I - ρ s yᵀ) H (I - ρ y sᵀ) + ρ s sᵀ`` with ``ρ = 1 / yᵀs``; ``H`` unchanged where ``ρ`` is not finite."""
    rho = 1.0 / tnp.dot(y, s)
    w = tnp.eye(h.shape[0], dtype=h.dtype) - rho * tnp.outer(s, y)
    updated = w @ h @ w.T + rho * tnp.outer(s, s)
    return tnp.where(tnp.isfinite(rho), updated, h)


def minimize_lbfgs(fun: Objective, x0: Value, maxiter: float | None = None, norm: float = math.inf, maxcor: int = 10,
                   ftol: float = 2.220446049250313e-09, gtol: float = 1e-5, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> Outcome:
    """L-BFGS from ``x0`` with a history of ``maxcor`` steps, until ``|grad|_norm < gtol`` or it stops: after
    ``maxiter`` iterations (default ``200 * n`` when no limit is given), ``maxfun`` evaluations, ``maxgrad``
    gradients, a decrease below ``ftol`` or a failed line search (``status`` 1 to 5)."""
    d, dtype = x0.shape[0], x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = 200 * d
    first = _first(fun, x0, lambda g: tnp.asarray(False))  # JAX tests convergence after the first step only
    init = _LBFGS(first, tnp.zeros((maxcor, d), dtype), tnp.zeros((maxcor, d), dtype), tnp.zeros((maxcor,), dtype),
                  tnp.ones((), dtype), _int(0))

    def body(state: _LBFGS) -> _LBFGS:
        at = state.at
        p_k = _two_loop_recursion(state)
        ls = line_search(fun, at.x_k, p_k, at.f_k, None, at.g_k, maxiter=maxls)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - at.g_k
        rho_inv = tnp.dot(y_k, s_k)
        # The later reasons win, as in JAX: a failed line search over the limits, over a stalled decrease.
        status = tnp.where(at.f_k - ls.f_k < ftol, _int(4), _int(0))
        for limit, count, code in ((maxgrad, at.ngev, 3), (maxfun, at.nfev, 2), (maxiter, at.k, 1)):
            if limit is not None and not math.isinf(limit):  # JAX's "no limit"
                status = tnp.where(count >= limit, _int(code), status)
        status = tnp.where(ls.failed, _int(5), status)
        converged = _norm(ls.g_k, norm) < gtol
        return _LBFGS(_advanced(at, ls, s_k, converged, (status > 0) & ~converged), _pushed(state.s_history, s_k),
                      _pushed(state.y_history, y_k), _pushed(state.rho_history, 1.0 / rho_inv),
                      rho_inv / tnp.dot(y_k, y_k), tnp.where(converged, _int(0), status))

    state = while_loop(lambda s: ~s.at.converged & ~s.at.failed, body, init)
    return _outcome(state.at, state.status, None)


def _pushed(history: Value, new: Value) -> Value:
    """``history`` with its oldest entry (the first) dropped and ``new`` appended."""
    return tnp.concatenate([history[1:], new[None]])


def _two_loop_recursion(state: _LBFGS) -> Value:
    """``-H g``, with ``H`` the L-BFGS inverse Hessian estimate from the stored steps (scaled by ``gamma``)."""
    size = state.rho_history.shape[0]
    stored = tnp.minimum(state.at.k, size)

    def newest_first(j: Value, carry: tuple[Value, Value]) -> tuple[Value, Value]:
        q, alphas = carry
        i = size - 1 - j
        alpha = state.rho_history[i] * tnp.dot(state.s_history[i], q)
        return q - alpha * state.y_history[i], alphas.at[i].set(alpha)

    q, alphas = fori_loop(0, stored, newest_first, (-state.at.g_k, tnp.zeros_like(state.rho_history)))

    def oldest_first(j: Value, q: Value) -> Value:
        i = size - stored + j
        beta = state.rho_history[i] * tnp.dot(state.y_history[i], q)
        return q + (alphas[i] - beta) * state.s_history[i]

    return fori_loop(0, stored, oldest_first, state.gamma * q)
