"""The strong-Wolfe line search that ``minimize`` steps with: JAX's ``line_search`` (private in JAX too).

Algorithms 3.5 (bracketing) and 3.6 (zoom) of Nocedal and Wright, *Numerical Optimization* (1999), as JAX writes
them: every branch is computed and the state updated with ``where`` (no ``cond``), the bracketing phase and the
zoom are ``while_loop``s, so a search is one staged loop nest that batches under ``vmap``. Deliberate difference:
the zoom's bracket width is compared unsigned (see ``optimize``'s docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ...autodiff import value_and_grad
from ...control_flow import while_loop
from .. import numpy as tnp

Value = Any  # a staged tensor (the loop carries hold scalars and (N,) vectors of one float dtype)
Evaluate = Callable[[Value], tuple[Value, Value, Value]]  # step -> (phi, dphi, gradient)

_ZOOM_MAXITER = 30  # JAX's: more than SciPy's 10, since its float32 searches need more
_DELTA_CUBIC = 0.2  # a cubic (quadratic) step must land this fraction of the bracket away from its ends
_DELTA_QUAD = 0.1


class LineSearchResults(NamedTuple):
    """``failed``: the strong Wolfe conditions were not met; ``a_k``: the step; ``f_k``, ``g_k``: the value and
    gradient there; ``status``: 0 passed, 1 zoom failed, 3 too many iterations."""

    failed: Value
    nit: Value
    nfev: Value
    ngev: Value
    k: Value
    a_k: Value
    f_k: Value
    g_k: Value
    status: Value


class _Zoom(NamedTuple):
    done: Value
    failed: Value
    j: Value
    a_lo: Value
    phi_lo: Value
    dphi_lo: Value
    a_hi: Value
    phi_hi: Value
    dphi_hi: Value
    a_rec: Value
    phi_rec: Value
    a_star: Value
    phi_star: Value
    dphi_star: Value
    g_star: Value
    nfev: Value
    ngev: Value


class _Search(NamedTuple):
    done: Value
    failed: Value
    i: Value
    a_i1: Value
    phi_i1: Value
    dphi_i1: Value
    nfev: Value
    ngev: Value
    a_star: Value
    phi_star: Value
    dphi_star: Value
    g_star: Value


def _replace_where(pred: Value, state: Any, **new: Value) -> Any:
    """``state`` with the fields ``new`` names taken from ``new`` where ``pred`` holds."""
    return state._replace(**{k: tnp.where(pred, v, getattr(state, k)) for k, v in new.items()})


def _int(n: int) -> Value:
    return tnp.asarray(np.int32(n))


def _cubicmin(a: Value, fa: Value, fpa: Value, b: Value, fb: Value, c: Value, fc: Value) -> Value:
    """The minimizer of the cubic through ``(a, fa)`` with slope ``fpa`` there, ``(b, fb)`` and ``(c, fc)``
    (NaN where there is none: the caller's bounds check then rejects it)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc**2 * rb - db**2 * rc) / denom
    big_b = (-(dc**3) * rb + db**3 * rc) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + tnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a: Value, fa: Value, fpa: Value, b: Value, fb: Value) -> Value:
    """The minimizer of the parabola through ``(a, fa)`` with slope ``fpa`` there and ``(b, fb)``."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db**2)
    return a - fpa / (2.0 * curvature)


def _zoom_trial(state: _Zoom) -> Value:
    """The next trial step inside the bracket: cubic interpolation, else quadratic, else bisection."""
    dalpha = state.a_hi - state.a_lo
    lo, hi = tnp.minimum(state.a_hi, state.a_lo), tnp.maximum(state.a_hi, state.a_lo)
    cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi, state.a_rec, state.phi_rec)
    use_cubic = (state.j > 0) & (cubic > lo + _DELTA_CUBIC * dalpha) & (cubic < hi - _DELTA_CUBIC * dalpha)
    quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
    use_quad = ~use_cubic & (quad > lo + _DELTA_QUAD * dalpha) & (quad < hi - _DELTA_QUAD * dalpha)
    return tnp.where(use_cubic, cubic, tnp.where(use_quad, quad, (state.a_lo + state.a_hi) / 2.0))


def _zoom(evaluate: Evaluate, wolfe_one: Callable[[Value, Value], Value], wolfe_two: Callable[[Value], Value],
          lo: Sequence[Value], hi: Sequence[Value], g_0: Value, pass_through: Value) -> _Zoom:
    """Algorithm 3.6: shrink the bracket ``[lo, hi]`` (each ``(a, phi, dphi)``) until a step meets both Wolfe
    conditions. ``pass_through`` skips the loop (both zooms are staged; at most one is wanted)."""
    (a_lo, phi_lo, dphi_lo), (a_hi, phi_hi, dphi_hi) = lo, hi
    # Below this bracket width the search stops: the Wolfe conditions unmet, the minimization stops too.
    threshold = 1e-5 if np.dtype(a_lo.dtype).itemsize < 8 else 1e-10

    def body(state: _Zoom) -> _Zoom:
        # The bracket's width, unsigned: JAX compares the signed ``a_hi - a_lo``, which fails every zoom entered
        # with ``a_hi < a_lo`` (jax-ml/jax#16236).
        state = state._replace(failed=state.failed | (tnp.abs(state.a_hi - state.a_lo) <= threshold))
        a_j = _zoom_trial(state)
        phi_j, dphi_j, g_j = evaluate(a_j)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        state = _replace_where(hi_to_j, state, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi,
                               phi_rec=state.phi_hi)
        state = _replace_where(star_to_j, state, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        state = state._replace(done=state.done | star_to_j)
        state = _replace_where(hi_to_lo, state, a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                               a_rec=state.a_hi, phi_rec=state.phi_hi)
        state = _replace_where(lo_to_j & ~hi_to_lo, state, a_rec=state.a_lo, phi_rec=state.phi_lo)
        state = _replace_where(lo_to_j, state, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        return state._replace(j=state.j + 1, failed=state.failed | (state.j + 1 >= _ZOOM_MAXITER))

    false = tnp.asarray(False)
    init = _Zoom(false, false, _int(0), a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi, (a_lo + a_hi) / 2.0,
                 (phi_lo + phi_hi) / 2.0, tnp.ones_like(a_lo), phi_lo, dphi_lo, g_0, _int(0), _int(0))
    return while_loop(lambda s: ~s.done & ~pass_through & ~s.failed, body, init)


def line_search(f: Callable[[Value], Value], xk: Value, pk: Value, old_fval: Value, old_old_fval: Value | None,
                gfk: Value, c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20) -> LineSearchResults:
    """A step ``a`` along the descent direction ``pk`` from ``xk`` (where ``f`` is ``old_fval`` with gradient
    ``gfk``) meeting the strong Wolfe conditions with constants ``c1``, ``c2``. ``old_old_fval`` (the value one
    step earlier) sets the first trial step, as in SciPy."""
    dtype = xk.dtype

    def evaluate(t: Value) -> tuple[Value, Value, Value]:
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, tnp.dot(g, pk), g

    phi_0, dphi_0 = old_fval, tnp.dot(gfk, pk)
    one = tnp.ones((), dtype)
    if old_old_fval is None:
        start = one
    else:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = tnp.where(candidate > 1, one, candidate)

    def wolfe_one(a_i: Value, phi_i: Value) -> Value:  # the sufficient-decrease condition, negated
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i: Value) -> Value:  # the strong curvature condition
        return tnp.abs(dphi_i) <= -c2 * dphi_0

    def body(state: _Search) -> _Search:
        # Unlike the book, the next trial is chosen at the top of the loop; with no upper bound it doubles.
        a_i = tnp.where(state.i == 1, start, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = evaluate(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        to_i = wolfe_two(dphi_i) & ~to_zoom1
        to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~to_i
        # JAX stages two zooms, (previous, current) and (current, previous), each skipped unless wanted; at most
        # one is, so one zoom on the bracket ordered by the case does the same with half the loops to compile.
        previous, current = (state.a_i1, state.phi_i1, state.dphi_i1), (a_i, phi_i, dphi_i)
        lo = tuple(tnp.where(to_zoom1, p, c) for p, c in zip(previous, current))
        hi = tuple(tnp.where(to_zoom1, c, p) for p, c in zip(previous, current))
        zooming = to_zoom1 | to_zoom2
        zoom = _zoom(evaluate, wolfe_one, wolfe_two, lo, hi, gfk, ~zooming)
        state = state._replace(nfev=state.nfev + zoom.nfev, ngev=state.ngev + zoom.ngev)
        state = _replace_where(zooming, state, a_star=zoom.a_star, phi_star=zoom.phi_star, dphi_star=zoom.dphi_star,
                               g_star=zoom.g_star)
        state = state._replace(done=state.done | zooming, failed=state.failed | (zooming & zoom.failed))
        state = _replace_where(to_i, state, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)
        return state._replace(done=state.done | to_i, i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    false = tnp.asarray(False)
    zero = tnp.zeros((), dtype)
    init = _Search(false, false, _int(1), zero, phi_0, dphi_0, _int(0), _int(0), zero, phi_0, dphi_0, gfk)
    state = while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, init)
    status = tnp.where(state.failed, _int(1), tnp.where(state.i > maxiter, _int(3), _int(0)))
    return LineSearchResults(failed=state.failed | ~state.done, nit=state.i - 1, nfev=state.nfev, ngev=state.ngev,
                             k=state.i, a_k=_floored_step(state.a_star), f_k=state.phi_star, g_k=state.g_star,
                             status=status)


def _floored_step(alpha: Value) -> Value:
    """Below 64 bits a step under 1e-8 leaves the optimizer stuck with a zero direction: it is raised to 1e-8
    (JAX's floor)."""
    if np.dtype(alpha.dtype).itemsize >= 8:
        return alpha
    return tnp.where(tnp.abs(alpha) < 1e-8, tnp.sign(alpha) * 1e-8, alpha)
