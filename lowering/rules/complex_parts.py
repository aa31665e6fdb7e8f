"""StableHLO for real, imag, conj and complex."""

from __future__ import annotations

from collections.abc import Sequence

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import complex_parts as C
from ..emit import Emitter, Value, lowers
from .elementwise import widen


@lowers(C.real_p)
def _real(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    return em.op("stablehlo.real", args, outs)


@lowers(C.imag_p)
def _imag(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    return em.op("stablehlo.imag", args, outs)


@lowers(C.complex_p)
def _complex(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    shape = outs[0].shape
    return em.op("stablehlo.complex", [widen(em, a, shape) for a in args], outs)


@lowers(C.conj_p)
def _conj(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    """StableHLO has no conjugate: real(x) - i imag(x)."""
    (x,) = args
    part = x.aval.with_dtype(dtypes.real_dtype(x.aval.dtype))
    re = em.op("stablehlo.real", [x], [part])[0]
    im = em.op("stablehlo.imag", [x], [part])[0]
    minus_im = em.op("stablehlo.negate", [im], [part])[0]
    return em.op("stablehlo.complex", [re, minus_im], outs)
