"""Complex numbers' own primitives: real, imag, conj, complex (two floats into one complex number); and the
derivative rules of abs and sign for complex operands (elementwise.py defines those primitives).

Derivatives follow JAX's convention: a complex value is a pair of reals, a tangent is complex-linear in the
primal's tangent where the function is holomorphic, and reverse mode transposes the linear map under the real
pairing ``<a, b> = Re(sum(a * b))`` (no conjugation). So a holomorphic rule's cotangent is ``ct * f'(z)``, the
same expression as its tangent, and ``grad`` of a real function of ``z`` is the conjugate of ``df/dx + i df/dy``:
``grad(|z|²)(3+4j) == 6-8j``, as in JAX. One deliberate difference: JAX gives complex ``sign`` no derivative;
here it has that of ``z / |z|``, 0 at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import check_dtype, elementwise_result
from ..zeros import MaybeZero, Zero, is_zero
from . import elementwise as E
from . import structural as S

COMPLEX: frozenset[np.dtype[Any]] = dtypes.COMPLEX


def _part_shape(name: str) -> Any:
    def rule(x: Aval) -> Aval:
        check_dtype(name, x, COMPLEX, "complex")
        return x.with_dtype(dtypes.real_dtype(x.dtype))

    return rule


def _linear(prim: Primitive, transpose: Any) -> None:
    """Rules of a linear unary primitive: its tangent is itself applied to the tangent; ``transpose(ct, x)`` is
    its cotangent rule."""

    def jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
        (t,) = tangents
        return (Zero(outs[0].aval) if isinstance(t, Zero) else bind(prim, t),)

    def vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool]) -> Any:
        (ct,) = cts
        x = primals[0]
        return (Zero(x.aval) if is_zero(ct) or not wants[0] else transpose(ct, x),)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)
    prim.def_batch(E.batch_elementwise(prim))


real_p = Primitive("real")
real_p.def_shape(_part_shape("real"))
imag_p = Primitive("imag")
imag_p.def_shape(_part_shape("imag"))
conj_p = Primitive("conj")


@conj_p.def_shape
def _conj_shape(x: Aval) -> Aval:
    check_dtype("conj", x, COMPLEX, "complex")
    return x


complex_p = Primitive("complex")


@complex_p.def_shape
def _complex_shape(re: Aval, im: Aval) -> Aval:
    for part in (re, im):
        if dtypes.complex_dtype(part.dtype) is None or dtypes.is_complex(part.dtype):
            raise DTypeError(f"expects f32 or f64 parts, got {re} and {im}", "complex")
    if re.dtype != im.dtype:
        raise DTypeError(f"parts {re} and {im} have different dtypes", "complex")
    out = elementwise_result("complex", (re, im))
    return out.with_dtype(dtypes.complex_dtype(re.dtype))  # type: ignore[arg-type]


def real(x: Atom) -> Atom:
    return bind(real_p, x)  # type: ignore[no-any-return]


def imag(x: Atom) -> Atom:
    return bind(imag_p, x)  # type: ignore[no-any-return]


def conj(x: Atom) -> Atom:
    return bind(conj_p, x)  # type: ignore[no-any-return]


def complex(re: Atom, im: Atom) -> Atom:  # noqa: A001 - the primitive's name
    return bind(complex_p, re, im)  # type: ignore[no-any-return]


def as_complex(x: Atom, dtype: np.dtype[Any]) -> Atom:
    """A real ``x`` as the complex ``dtype`` with a zero imaginary part (an exact widening, unlike a float's
    conversion to a narrower complex)."""
    return E.convert(x, dtype)


# real(t): its transpose puts a real cotangent on the real axis; imag(t) = Re(-i t), so the cotangent is -i ct.
_linear(real_p, lambda ct, x: as_complex(ct, x.aval.dtype))
_linear(imag_p, lambda ct, x: complex(S.full_like(ct, 0), E.neg(ct)))
_linear(conj_p, lambda ct, x: conj(ct))


@complex_p.def_jvp
def _complex_jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom]) -> Any:
    out = outs[0]
    t_re, t_im = tangents
    if is_zero(t_re) and is_zero(t_im):
        return (Zero(out.aval),)
    zero = S.full_like(out.aval.with_dtype(dtypes.real_dtype(out.aval.dtype)), 0)
    re = zero if is_zero(t_re) else E._as_shaped(t_re, out)  # type: ignore[arg-type]
    im = zero if is_zero(t_im) else E._as_shaped(t_im, out)  # type: ignore[arg-type]
    return (complex(re, im),)


@complex_p.def_vjp
def _complex_vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Any, wants: Sequence[bool]) -> Any:
    """Re(ct (t_re + i t_im)) = Re(ct) t_re - Im(ct) t_im."""
    (ct,) = cts
    re, im = primals
    if isinstance(ct, Zero):
        return (Zero(re.aval), Zero(im.aval))
    return (
        E._unbroadcast_scalar(real(ct), re) if wants[0] else Zero(re.aval),
        E._unbroadcast_scalar(E.neg(imag(ct)), im) if wants[1] else Zero(im.aval),
    )


complex_p.def_batch(E.batch_elementwise(complex_p))


# ------------------------------------------------------------------------------------ abs and sign of complex


def _safe(magnitude: Atom) -> Atom:
    """``|z|`` with 1 where it is 0, a divisor whose quotient the callers discard there (a NaN would still reach
    second derivatives through the discarded branch)."""
    return E.select(E.eq(magnitude, E.scalar(0, magnitude)), S.full_like(magnitude, 1), magnitude)


def unit_phase(z: Atom, magnitude: Atom) -> Atom:
    """``z / |z|``, and 0 at 0 (the direction in which |z| grows; JAX's subgradient there)."""
    return E.select(E.eq(z, E.scalar(0, z)), S.full_like(z, 0), E.div(z, as_complex(_safe(magnitude), z.aval.dtype)))


def abs_jvp(z: Atom, t: Atom, magnitude: Atom) -> Atom:
    """d|z| = Re(conj(z / |z|) dz)."""
    return real(E.mul(conj(unit_phase(z, magnitude)), t))


def abs_vjp(z: Atom, ct: Atom, magnitude: Atom) -> Atom:
    """The transpose of ``t -> Re(conj(u) t)`` under ``Re(a b)``: ``ct conj(u)``."""
    return E.mul(as_complex(ct, z.aval.dtype), conj(unit_phase(z, magnitude)))


def _turn(u: Atom, across: Atom) -> Atom:
    """``i u across``, for a real ``across``: a step of length ``across`` along the unit circle at ``u``."""
    return E.mul(u, complex(S.full_like(across, 0), across))


def sign_jvp(z: Atom, t: Atom, u: Atom) -> Atom:
    """d(z/|z|) = (dz - u Re(conj(u) dz)) / |z| = i u Im(conj(u) dz) / |z| for ``u = sign(z)``: only the part of
    dz across the ray through z turns the phase. 0 at z = 0, where u is 0."""
    return _turn(u, E.div(imag(E.mul(conj(u), t)), _safe(E.abs(z))))


def sign_vjp(z: Atom, ct: Atom, u: Atom) -> Atom:
    """The transpose of ``t -> i u Im(conj(u) t) / |z|`` under ``Re(a b)``: ``i conj(u) Im(u ct) / |z|``."""
    return _turn(conj(u), E.div(imag(E.mul(u, ct)), _safe(E.abs(z))))
