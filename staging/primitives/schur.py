"""Schur and Hessenberg decompositions over the last two axes (leading axes are batch axes).

``schur``: ``a = z t zᴴ`` with ``z`` unitary and ``t`` upper triangular (complex input) or quasi upper triangular
(real input: LAPACK's real Schur form, with 2x2 blocks on the diagonal for complex conjugate eigenvalue pairs).
Outputs ``t``, then ``z`` when ``compute_vectors``. ``hessenberg``: ``a = q h qᴴ`` with ``h`` zero below its first
subdiagonal; outputs ``h``, then ``q`` when ``compute_q``. Both keep the operand's dtype (f32, f64, c64, c128).

Neither is differentiated (as JAX, whose primitives have no derivative rules): both decompositions are not
unique (the ordering of the eigenvalues, the phases of the vectors), so their derivative depends on LAPACK's
choices. A nonzero tangent or cotangent raises a TransformError naming the op; ``schur``'s consumers that are
unique functions of the matrix (``sqrtm``, ``funm``, ``solve_sylvester``) inherit that.

The only lowering is LAPACK's ``gees`` / ``gehrd`` on CPU (``lowering/rules/schur.py``); XLA has no expansion, so
other platforms, and CPU without SciPy or with LAPACK disabled, raise :class:`SchurUnavailableError` when lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..builder import bind
from ..errors import DTypeError, ShapeError, StagingError, TransformError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import unify_axis
from ..zeros import MaybeZero, Zero, is_zero
from .eig import LAPACK_DTYPES
from .slicing import with_batch

schur_p = Primitive("schur", multiple_results=True)
hessenberg_p = Primitive("hessenberg", multiple_results=True)


class SchurUnavailableError(StagingError, NotImplementedError):
    """``schur`` or ``hessenberg`` cannot be lowered here: their only implementation is LAPACK on CPU."""


def _square_outputs(op: str, a: Aval, flag_name: str, flag: bool) -> tuple[Aval, ...]:
    """The checks both primitives share; ``a``'s aval (its square axes under one name), once or twice."""
    if a.dtype not in LAPACK_DTYPES:
        raise DTypeError(f"supports f32, f64, c64 and c128 (LAPACK), got {a}; convert it with .astype(f32)", op)
    if not isinstance(flag, bool):
        raise TypeError(f"{op}: {flag_name} must be a bool, got {flag!r}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"expects square matrices in the last two axes, got {a}", op)
    name = unify_axis(op, (a, a), (a.ndim - 2, a.ndim - 1))
    out = Aval(a.shape, a.dtype, (*a.dims[:-2], name, name))
    return (out, out) if flag else (out,)


@schur_p.def_shape
def _schur_shape(a: Aval, *, compute_vectors: bool) -> tuple[Aval, ...]:
    return _square_outputs("schur", a, "compute_vectors", compute_vectors)


@hessenberg_p.def_shape
def _hessenberg_shape(a: Aval, *, compute_q: bool) -> tuple[Aval, ...]:
    return _square_outputs("hessenberg", a, "compute_q", compute_q)


def schur(a: Atom, compute_vectors: bool = True) -> tuple[Atom, ...]:
    """``(t, [z])``: the Schur form (real for real ``a``) and the Schur vectors if asked."""
    return tuple(bind(schur_p, a, compute_vectors=compute_vectors))


def hessenberg(a: Atom, compute_q: bool = True) -> tuple[Atom, ...]:
    """``(h, [q])``: the upper Hessenberg form and the unitary ``q`` if asked."""
    return tuple(bind(hessenberg_p, a, compute_q=compute_q))


def _not_differentiable(op: str) -> TransformError:
    return TransformError(
        f"{op} has no derivative (as in JAX): the decomposition is not unique (eigenvalue order, the vectors' "
        "phases), so its derivative would depend on LAPACK's choices",
        op,
    )


def _def_rules(prim: Primitive, bind_again: Any) -> None:
    """JVP and VJP (zero in, zero out; anything else raises) and the batching rule (batch axis first)."""

    @prim.def_jvp
    def _jvp(primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **_: Any) -> Any:
        if not is_zero(tangents[0]):
            raise _not_differentiable(prim.name)
        return tuple(Zero(o.aval) for o in outs)

    @prim.def_vjp
    def _vjp(cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool],
             **_: Any) -> Any:
        if wants[0] and not all(is_zero(c) for c in cts):
            raise _not_differentiable(prim.name)
        return (Zero(primals[0].aval),)

    @prim.def_batch
    def _batch(args: Sequence[Atom], dims: Sequence[int | None], **params: Any) -> Any:
        (a,), (d,) = args, dims
        outs = bind_again(with_batch(a, d, 0, a.aval.shape[d] if d is not None else 1), *params.values())
        return outs, tuple(0 for _ in outs)


_def_rules(schur_p, schur)
_def_rules(hessenberg_p, hessenberg)
