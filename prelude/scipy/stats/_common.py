"""Shared pieces of the distributions: operand checks, SciPy's NaN conventions and the public signatures.

Every function takes floating-point tensors or Python numbers, broadcast together as ``tensorstage.numpy`` does
(dtypes never change: an f32 ``x`` with an f64 ``loc`` is a DTypeError), and returns a tensor of their dtype. As
SciPy's, a NaN operand, an invalid parameter (``scale <= 0``, a shape parameter out of its range) or a probability
outside [0, 1] given to a quantile gives NaN: every function ends in ``defined``, so a support test (``x >= 0``)
cannot turn a NaN into -inf or 0.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Protocol, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ....dtypes import Floating
from ....staging import dtypes as _dt
from ....tensor import Tensor
from ...numpy import _core

FT = TypeVar("FT", bound=Floating)
S = TypeVarTuple("S")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Operand = AnyTensor | int | float
Param = Tensor[FT, Unpack[S]] | Tensor[FT] | int | float


def floats(name: str, *operands: Any) -> list[AnyTensor]:
    """The operands broadcast to one floating-point dtype and shape, as tensors."""
    atoms = _core.elementwise_operands(name, *operands)
    if not _dt.is_float(atoms[0].aval.dtype):
        described = ", ".join(str(a.aval) for a in atoms)
        raise _core.dtype_error(name, f"{name} needs floating-point operands, got {described}; convert with .astype(f32)")
    return [_core.wrap(a) for a in atoms]


def defined(out: AnyTensor, x: AnyTensor, valid: AnyTensor | None = None) -> AnyTensor:
    """``out`` where ``x`` is not NaN and the parameters are ``valid``, NaN elsewhere. Write ``valid`` as the
    parameters' range (``a > 0``), so that a NaN parameter fails it too."""
    from ... import numpy as tnp

    ok = x == x  # noqa: PLR0124 - false exactly at NaN
    return tnp.where(ok if valid is None else ok & valid, out, math.nan)


def probability(p: AnyTensor) -> AnyTensor:
    """Whether ``p`` is in [0, 1] (false at NaN)."""
    return (p >= 0) & (p <= 1)


def positive(*params: AnyTensor) -> AnyTensor:
    """Whether every parameter is > 0 (false at NaN): SciPy's default range of shape parameters."""
    out = params[0] > 0
    for p in params[1:]:
        out = out & (p > 0)
    return out


def standardized(name: str, x: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor]:
    """``((x - loc) / scale, scale)``, the operands checked and broadcast together; the first is NaN where ``scale``
    is not positive (an invalid distribution), so ``defined(out, z)`` covers both conventions."""
    from ... import numpy as tnp

    x, loc, scale = floats(name, x, loc, scale)
    return tnp.where(scale > 0, (x - loc) / scale, math.nan), scale


def shape_standardized(name: str, x: Any, a: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``standardized`` with one shape parameter ``a`` > 0: ``((x - loc) / scale, a, scale)``, the first NaN
    unless ``a > 0`` and ``scale > 0``."""
    from ... import numpy as tnp

    x, a, loc, scale = floats(name, x, a, loc, scale)
    z, scale = standardized(name, x, loc, scale)
    return tnp.where(positive(a), z, math.nan), a, scale


def quantile(name: str, standard: Callable[..., AnyTensor], q: Any, loc: Any, scale: Any, *shape: Any,
             upper: bool = False) -> AnyTensor:
    """``loc + scale standard(q, *shape)`` (``loc - ...`` for ``upper``, an ``isf`` of a symmetric distribution):
    NaN for ``q`` outside [0, 1], ``scale <= 0`` or a shape parameter ``<= 0``. ``standard`` sees a valid ``q``
    everywhere (0.5 off the domain), so no NaN of the unused branch reaches a gradient."""
    from ... import numpy as tnp

    q, loc, scale, *params = floats(name, q, loc, scale, *shape)
    valid = probability(q) & positive(scale, *params)
    z = standard(tnp.where(valid, q, 0.5), *params)
    return defined(loc - scale * z if upper else loc + scale * z, q, valid)


class LocScale(Protocol):
    """``f(x, loc=0, scale=1)``: ``x``'s type out when the parameters are scalars or of ``x``'s type."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0, scale: Param[FT, Unpack[S]] = 1
                 ) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Shape1LocScale(Protocol):
    """``f(x, a, loc=0, scale=1)`` with one shape parameter (``t``'s ``df``, ``gamma``'s ``a``, ``chi2``'s ``df``)."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], a: Param[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0,
                 scale: Param[FT, Unpack[S]] = 1) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Shape2LocScale(Protocol):
    """``f(x, a, b, loc=0, scale=1)`` (``beta``)."""

    @overload
    def __call__(self, x: Tensor[FT, Unpack[S]], a: Param[FT, Unpack[S]], b: Param[FT, Unpack[S]],
                 loc: Param[FT, Unpack[S]] = 0, scale: Param[FT, Unpack[S]] = 1) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1) -> AnyTensor: ...


class Discrete(Protocol):
    """``f(k, p, loc=0)`` (``poisson``'s ``mu``, ``bernoulli``'s ``p``)."""

    @overload
    def __call__(self, k: Tensor[Any, Unpack[S]], p: Tensor[FT, Unpack[S]], loc: Param[FT, Unpack[S]] = 0
                 ) -> Tensor[FT, Unpack[S]]: ...
    @overload
    def __call__(self, k: Operand, p: Operand, loc: Operand = 0) -> AnyTensor: ...


def as_loc_scale(fn: Any) -> LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_shape1(fn: Any) -> Shape1LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_shape2(fn: Any) -> Shape2LocScale:
    return _core.op(fn)  # type: ignore[no-any-return]


def as_discrete(fn: Any) -> Discrete:
    return _core.op(fn)  # type: ignore[no-any-return]


def counts(name: str, k: Any, like: Any) -> Any:
    """A discrete distribution's ``k``: integer tensors (counts) are converted to the parameter's float dtype."""
    from ... import numpy as tnp

    if isinstance(k, Tensor) and not _dt.is_float(k.aval.dtype) and isinstance(like, Tensor) and _dt.is_float(like.aval.dtype):
        return tnp.asarray(k).astype(like.aval.dtype)
    return k
