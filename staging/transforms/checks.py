"""Keeping rule results honest: a tangent or cotangent must have its primal's type, dim names included."""

from __future__ import annotations

from ..errors import TransformError
from ..ir import Aval
from ..primitives import structural as S
from ..zeros import MaybeZero, Zero


def conform(what: str, value: MaybeZero, aval: Aval) -> MaybeZero:
    """``value`` with exactly ``aval``'s type.

    Rules may lose dim names (a reduction followed by a broadcast, say); the gradient must still have the
    argument's type, so names are restored with a free reshape. A wrong shape or dtype is a bug in the rule
    and is reported naming it, instead of surfacing later as a confusing error in another equation.
    """
    if value.aval == aval:
        return value
    if value.aval.same_layout(aval):
        return Zero(aval) if isinstance(value, Zero) else S.reshape(value, aval.shape, aval.dims)
    raise TransformError(f"{what} produced {value.aval} for a value of type {aval}", what)
