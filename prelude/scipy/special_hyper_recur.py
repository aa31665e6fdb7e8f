"""Kummer's function where its series cancel (``a < 0 < b``, ``z > 0``; ``x < 0 < b < a`` maps there by Kummer's
transformation): the three-term recurrence in ``b`` (DLMF 13.3.2),
``b (b - 1) M(a, b - 1, z) = b (b - 1 + z) M(a, b, z) - z (b - a) M(a, b + 1, z)``, run downwards from ``b + N``
and ``b + N + 1``, where the series is well conditioned (its cancellation, about ``exp(2 |a| z / b)``, is below
``2^8``). ``M(a, ., z)`` is the recurrence's minimal solution as ``b`` grows (it tends to 1; the other solution
grows like ``Gamma(b) z^-b``), so the downward direction damps the other solution's share of the rounding errors.

Beside zeros of ``M`` along the way (``a`` near a negative integer and large ``z`` above all) errors can grow all
the same, by more than the local estimates (each step's rounding against its larger value, the last step's
cancellation) show; so the recurrence is run twice, from ``N`` and from ``N + N/8 + 3`` (other starts, other
roundings), and 32 times their difference joins the error estimate. Measured on 32000 points of ``a in (-50, 0), b
in (0, 50), z in (0, 100)``, a fifth with ``a`` within 1e-5 to 1e-15 of an integer: every value below the module's
``2^-36`` had an error below ``1.1e-11``; with 16 times the difference some did not (in a NumPy model of the loop).
The loop has a static length (``N <= 2048``: ``|a| z`` up to about 5600 reaches the start's bound; beyond, the
start cancels more and the error estimate says so). The partial derivatives come from forward mode through the loop
(a ``custom_jvp``), so reverse mode keeps no residuals per step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff import jvp
from ...control_flow import fori_loop
from ...custom_derivatives import custom_jvp, stop_gradient
from .. import numpy as tnp
from .special import AnyTensor

_START_CANCELLATION = 2.0 ** 8
_MOST_STEPS = 2048
# Extra steps above where the start's cancellation reaches its bound (measured: with |a|, b < 10, z < 30 the NaN
# share falls from 11 % to 0.2 %: each step down damps the other solution's share of the start's rounding).
_MARGIN = 16.0
# The second run starts N / 8 + 3 steps higher; the loop covers both.
_CHECK_SHARE = 8
_LOOP_STEPS = _MOST_STEPS + _MOST_STEPS // _CHECK_SHARE + 4
# 32 times the two runs' difference joins the error estimate: with 16, errors above 2^-36 got through (docstring)
_CHECK_FACTOR = 32.0

_Four = tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]  # loop carries
_Six = tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor, AnyTensor, AnyTensor]


def series_error(total: AnyTensor, size: AnyTensor, last: AnyTensor, terms: int) -> AnyTensor:
    """The relative error bound of a series sum: rounding amplified by cancellation (``size = sum |t_k|``), and
    truncation (``last``: the last term)."""
    magnitude = tnp.abs(total)
    eps = float(np.finfo(total.dtype).eps)
    return eps * 16 * size / magnitude + tnp.abs(last) * terms / magnitude


def _series_pair(a: AnyTensor, b: AnyTensor, z: AnyTensor, terms: int) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``M(a, b, z)``, ``M(a, b + 1, z) / M(a, b, z)`` and the relative error bound of that pair, by the series."""

    def body(i: Any, carry: _Six) -> _Six:
        term0, term1, total0, total1, size0, size1 = carry
        k = i.astype(z.dtype)
        common = (a + k) * z / (k + 1)
        term0, term1 = term0 * common / (b + k), term1 * common / (b + 1 + k)
        return (term0, term1, total0 + term0, total1 + term1,
                size0 + tnp.abs(term0), size1 + tnp.abs(term1))

    one = tnp.ones_like(z)
    last0, last1, total0, total1, size0, size1 = fori_loop(0, terms, body, (one, one, one, one, one, one))
    errors = series_error(total0, size0, last0, terms) + series_error(total1, size1, last1, terms)
    return total0, total1 / total0, stop_gradient(errors)


def _recur_down(a: AnyTensor, b: AnyTensor, z: AnyTensor, steps: AnyTensor, terms: int) -> tuple[AnyTensor, AnyTensor]:
    """``M(a, b, z)`` from ``M(a, b + steps, z)`` and ``M(a, b + steps + 1, z)`` (``steps <= _LOOP_STEPS``,
    elementwise), and its relative error estimate: the start's, plus each step's rounding relative to the larger of
    its two newest values, times how much smaller the last one is (cancellation at the end)."""
    top = b + steps
    start, ratio, start_error = _series_pair(a, top, z, terms)
    eps = float(np.finfo(z.dtype).eps)

    def body(i: Any, carry: _Four) -> _Four:
        here, up, rounding, last = carry
        active = i.astype(z.dtype) < steps
        at = top - i.astype(z.dtype)  # here = M(a, at, z) (over M(a, top, z))
        forward, backward, scale = at * (at - 1 + z), z * (at - a), at * (at - 1)
        low = (forward * here - backward * up) / scale
        size = stop_gradient((tnp.abs(forward * here) + tnp.abs(backward * up)) / scale)
        larger = stop_gradient(tnp.maximum(tnp.abs(low), tnp.abs(here)))
        rounding = tnp.where(active, rounding + 2 * eps * size / larger, rounding)
        last = tnp.where(active, larger / stop_gradient(tnp.abs(low)), last)
        return tnp.where(active, low, here), tnp.where(active, here, up), rounding, last

    one = tnp.ones_like(z)
    here, _, rounding, last = fori_loop(0, _LOOP_STEPS, body, (one, ratio, start_error, one))
    return start * here, (rounding * last + start_error + eps)


def _recurrence(a: AnyTensor, b: AnyTensor, z: AnyTensor, terms: int) -> tuple[AnyTensor, AnyTensor]:
    """``M(a, b, z)`` and its relative error estimate from two runs of the recurrence (stacked on a new axis)."""
    # N: where the series' cancellation exp(2 |a| z / (b + N)) reaches the bound; the check run starts ~N/8 higher
    needed = stop_gradient(tnp.ceil(2 * tnp.abs(a) * z / math.log(_START_CANCELLATION) - b))
    steps = tnp.clip(needed + _MARGIN, 1.0, float(_MOST_STEPS))
    check = tnp.minimum(steps + tnp.ceil(steps / _CHECK_SHARE) + 3, float(_LOOP_STEPS))
    values, errors = _recur_down(tnp.stack([a, a]), tnp.stack([b, b]), tnp.stack([z, z]), tnp.stack([steps, check]),
                                 terms)
    value = values[0]
    difference = stop_gradient(tnp.abs(value - values[1]) / tnp.abs(value))
    return value, tnp.maximum(errors[0], _CHECK_FACTOR * difference)


def _recurrence_jvp(terms: int, primals: Any, tangents: Any) -> Any:
    """The partial derivatives by forward mode through the loop (on three stacked copies, one per operand), so
    that reverse mode transposes only ``sum_i partial_i tangent_i``: no residuals for each of the loop's steps."""
    rows = [tnp.stack([t, t, t]) for t in primals]
    units = [tnp.stack([tnp.ones_like(t) if i == j else tnp.zeros_like(t) for j in range(3)])
             for i, t in enumerate(primals)]

    def run(*operands: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
        return _recurrence(operands[0], operands[1], operands[2], terms)

    (values, errors), (partials, _) = jvp(run, tuple(rows), tuple(units))
    tangent = sum((partials[i] * t for i, t in enumerate(tangents)), start=tnp.zeros_like(values[0]))
    return (values[0], errors[0]), (tangent, tnp.zeros_like(errors[0]))


_recurrence_custom = custom_jvp(_recurrence, nondiff_argnums=(3,))
_recurrence_custom.defjvp(_recurrence_jvp)


def hyp1f1_b_recurrence(a: AnyTensor, b: AnyTensor, z: AnyTensor, terms: int) -> tuple[AnyTensor, AnyTensor]:
    """``M(a, b, z)`` for ``a < 0 < b``, ``0 < z <= 500`` (values up to ``exp(z)`` times a power stay finite) and
    its relative error estimate; ``terms``: the series' length at the start. Differentiable in ``a``, ``b``, ``z``."""
    return _recurrence_custom(a, b, z, terms)
