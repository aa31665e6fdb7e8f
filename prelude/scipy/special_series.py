"""More of ``tensorstage.scipy.special`` (imported into it): the scaled complementary error function and the
exponential integrals, built from elementwise operations as fixed-length continued fractions and series (loops
with static trip counts: scans, so every transform, reverse mode included, goes through them). f16 and bf16 are
computed in f32.

- ``erfcx(x) = exp(x²) erfc(x)``: ``exp(x²) erfc(x)`` below 3 (``x²`` split into an exactly squared head and a
  small tail, so the large exponent loses no digits), Laplace's continued fraction (30 terms) from 3 up.
- ``exp1(x) = E1(x)``: the power series (``-γ - log x + sum``) up to 1, the continued fraction (``exp(-x) / (x + 1 -
  1/(x + 3 - 4/(x + 5 - ...)))``, 100 terms) above; NaN below 0 and inf at 0, as SciPy's real ``exp1``.
- ``expi(x) = Ei(x)``: ``-E1(-x)`` below 0, the series ``γ + log x + sum x^k/(k k!)`` (130 terms) up to 40 and the
  asymptotic series ``exp(x)/x sum k!/x^k`` (40 terms) above (in f32: 82 terms up to 24, 24 terms above); -inf at 0.

Maximum relative error against SciPy (float64), measured on 2e5 points per range (f32: subnormal inputs excluded,
XLA on CPU flushes them to zero):

============  ===============================  ==========  ==========
function      range                            f64         f32
============  ===============================  ==========  ==========
erfcx         [-5, 1e300]                      2.2e-15     7.5e-7
erfcx         [-26, -5]                        5.7e-14 (*) 1.1e-7
exp1          [1e-300, 720]                    1.8e-15     6.4e-7
expi          [-720, -1e-300]                  1.8e-15     6.4e-7
expi          [1e-300, 720], |x - x0| > 1e-2   2.8e-14 (*) 2.6e-6
============  ===============================  ==========  ==========

(*) SciPy's own error (checked against 50-digit references, where ours is within 3 ulps): its ``erfcx(x < -5)``
rounds ``x²`` inside ``exp``, its ``expi`` is off by 2.8e-14 just above 40.

Deliberate differences:

- ``expi`` has one zero, at ``x0 = 0.3725`` (``γ + log x + sum`` cancels there); within 1e-2 of it its error is
  absolute (4e-16 in f64, 1.5e-7 in f32), not relative, as JAX's same series.
- ``expi(x)`` is finite up to 716 where it is (``exp(x) / x`` taken as two halves); SciPy's is inf from 709.8.
- Gradients are those of the expansions (within 1e-12 of the closed forms); like JAX, where the value overflows
  (``erfcx(x < -26.6)``) the gradient is NaN or inf.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...control_flow import fori_loop
from ...shape_typing import FloatUnary
from ..numpy._core import float_operand, op
from .. import numpy as tnp
from .special import AnyTensor, erfc

__all__ = ["erfcx", "exp1", "expi"]

_EULER_GAMMA = 0.5772156649015329
_ERFCX_SWITCH = 3.0  # Laplace's fraction needs <= 30 terms for 1 ulp from here up
_EXP1_SWITCH = 1.0
# Where Ei's asymptotic series takes over, by dtype, also its number of terms: its smallest term, k!/x^k at k = x,
# is ~exp(-x), below eps from here up.
_EXPI_SWITCH = {np.dtype(np.float64): 40, np.dtype(np.float32): 24}


def _tensor_unary(name: str, fn: Callable[[AnyTensor], AnyTensor]) -> FloatUnary:
    """A public unary function from ``fn(tensor) -> tensor``, computing f16/bf16 in f32."""

    def public(x: Any) -> AnyTensor:
        t = float_operand(name, x)
        if t.dtype.itemsize >= 4:
            return fn(t)
        return fn(t.astype(np.float32)).astype(t.dtype)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = fn.__doc__
    return op(public)


def _clamp_below(x: AnyTensor, use: AnyTensor, fill: float) -> AnyTensor:
    """``x`` where ``use``, ``fill`` elsewhere: keeps the branch a select discards finite, so its zero cotangent
    does not turn into NaN through an overflowed or singular intermediate."""
    return tnp.where(use, x, fill)


# ----------------------------------------------------------------------------------------------- erfcx


def _exp_square(x: AnyTensor) -> AnyTensor:
    """``exp(x²)`` with ``x = head + tail``, ``head`` holding half the mantissa so ``head²`` is exact."""
    split = 2.0 ** (27 if x.dtype == np.float64 else 12) + 1.0
    scaled = x * split
    head = scaled - (scaled - x)
    tail = x - head
    big = tnp.exp(head * head)
    # Not exp(head²) * exp(tail (head + x)): XLA folds that product back into exp(x²), rounding x² again.
    return tnp.where(tnp.isinf(big), big, big + big * tnp.expm1(tail * (head + x)))  # not inf - inf


def _backward(terms: int, step: Callable[[AnyTensor, AnyTensor], AnyTensor], init: AnyTensor) -> AnyTensor:
    """``init`` through ``step(k, value)`` for k = terms, ..., 1 (k as a float tensor): a continued fraction
    evaluated from its tail, as one loop (a scan: reverse-differentiable, and a small graph to stage)."""

    def body(i: Any, value: AnyTensor) -> AnyTensor:
        return step((terms - i).astype(value.dtype), value)

    result: AnyTensor = fori_loop(0, terms, body, init)
    return result


def _laplace_fraction(x: AnyTensor) -> AnyTensor:
    """``erfcx(x)`` for ``x >= 3``: ``1 / (sqrt(pi) (x + (1/2) / (x + (2/2) / (x + ...))))``, evaluated backward."""
    denominator = _backward(30, lambda k, d: x + (k / 2) / d, x)
    return 1.0 / (math.sqrt(math.pi) * denominator)


def _erfcx(x: AnyTensor) -> AnyTensor:
    """The scaled complementary error function ``exp(x²) erfc(x)``; inf at -inf, 0 at inf."""
    large = x >= _ERFCX_SWITCH
    minus_inf = x == -math.inf  # where the head/tail split is inf - inf
    small_x = _clamp_below(x, ~(large | minus_inf), 0.0)
    direct = tnp.where(minus_inf, math.inf, _exp_square(small_x) * erfc(small_x))
    return tnp.where(large, _laplace_fraction(_clamp_below(x, large, _ERFCX_SWITCH)), direct)


# --------------------------------------------------------------------------------------- exponential integrals


def _power_sum(x: AnyTensor, terms: int) -> AnyTensor:
    """``sum_{k=1..terms} x^k / (k k!)``, the series part of both E1 (at ``-x``) and Ei."""
    def body(i: Any, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        k = i.astype(x.dtype)
        term = carry[0] * x / k
        return term, carry[1] + term / k

    _, total = fori_loop(2, terms + 1, body, (x, x))
    return total


def _e1_fraction(x: AnyTensor) -> AnyTensor:
    """``E1(x)`` for ``x >= 1``: ``exp(-x) / (x + 1 - 1²/(x + 3 - 2²/(x + 5 - ...)))``, evaluated backward."""
    terms = 100  # 1 ulp at x = 1 (40 terms leave 2e-10 there)
    denominator = _backward(terms, lambda k, d: x + (2 * k - 1) - (k * k) / d, x + (2 * terms + 1))
    return tnp.exp(-x) / denominator


def _e1_positive(x: AnyTensor) -> AnyTensor:
    """``E1(x)`` for ``x > 0``, branch by branch on clamped inputs; inf at 0, 0 at inf."""
    large = x >= _EXP1_SWITCH
    small_x = _clamp_below(x, ~large, 0.5)
    series = -_EULER_GAMMA - tnp.log(small_x) - _power_sum(-small_x, 24)
    return tnp.where(large, _e1_fraction(_clamp_below(x, large, _EXP1_SWITCH)), series)


def _edge(x: AnyTensor, at_zero: float) -> AnyTensor:
    """``at_zero`` at ±0, NaN elsewhere (below the domain, and NaN itself), in ``x``'s dtype."""
    return tnp.where(x == 0, tnp.full_like(x, at_zero), tnp.full_like(x, math.nan))


def _exp1(x: AnyTensor) -> AnyTensor:
    """The exponential integral ``E1(x) = int_1^inf exp(-x t) / t dt`` for real ``x``: inf at 0, NaN below 0."""
    positive = x > 0
    value = _e1_positive(_clamp_below(x, positive, 1.0))
    return tnp.where(positive, value, _edge(x, math.inf))


def _ei_asymptotic(x: AnyTensor) -> AnyTensor:
    """``Ei(x)`` for ``x >= n``: ``exp(x) / x sum_{k=0..n} k! / x^k`` (n = 40, 24 in f32)."""
    def body(i: Any, carry: tuple[AnyTensor, AnyTensor]) -> tuple[AnyTensor, AnyTensor]:
        term = carry[0] * i.astype(x.dtype) / x
        return term, carry[1] + term

    one = tnp.ones_like(x)
    _, total = fori_loop(1, _EXPI_SWITCH[x.dtype] + 1, body, (one, one))
    half = tnp.exp(x / 2)  # exp(x) / x as two halves: finite up to where Ei overflows, no rounded x - log x
    return tnp.where(x == math.inf, math.inf, half * (half / x) * total)  # not inf / inf


def _ei_positive(x: AnyTensor) -> AnyTensor:
    """``Ei(x)`` for ``x > 0``: the power series below the switch, the asymptotic series from it up."""
    switch = _EXPI_SWITCH[x.dtype]
    large = x >= switch
    small_x = _clamp_below(x, ~large, 1.0)
    series = _EULER_GAMMA + tnp.log(small_x) + _power_sum(small_x, 3 * switch + 10)
    return tnp.where(large, _ei_asymptotic(_clamp_below(x, large, switch)), series)


def _expi(x: AnyTensor) -> AnyTensor:
    """The exponential integral ``Ei(x) = -PV int_{-x}^inf exp(-t) / t dt``: ``-E1(-x)`` below 0, -inf at 0."""
    positive = x > 0
    negative = x < 0
    above = _ei_positive(_clamp_below(x, positive, 1.0))
    below = -_e1_positive(_clamp_below(-x, negative, 1.0))
    return tnp.where(positive, above, tnp.where(negative, below, _edge(x, -math.inf)))


erfcx = _tensor_unary("erfcx", _erfcx)
exp1 = _tensor_unary("exp1", _exp1)
expi = _tensor_unary("expi", _expi)
