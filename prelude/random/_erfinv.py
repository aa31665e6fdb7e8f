"""The inverse error function, for turning uniform draws into normal ones.

Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011): one
polynomial in ``w = -log(1 - x**2)`` for the central region and one in ``sqrt(w)`` for the tails; relative error
below 4e-7 on (-1, 1), which is below float32 resolution. Both branches are evaluated and one is selected, as
usual for branch-free code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import Unpack

from ...tensor import Tensor
from ..numpy import full_like, log, sqrt, where

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]

_CENTRAL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
)
_TAIL = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
)


def _horner(coefficients: Sequence[float], w: AnyTensor) -> AnyTensor:
    p = full_like(w, coefficients[0])
    for c in coefficients[1:]:
        p = p * w + c
    return p


def erfinv(x: AnyTensor) -> AnyTensor:
    """``erfinv(x)`` for float ``x`` in (-1, 1)."""
    w = -log((1.0 - x) * (1.0 + x))
    central = _horner(_CENTRAL, w - 2.5)
    tail = _horner(_TAIL, sqrt(w) - 3.0)
    return where(w < 5.0, central, tail) * x
