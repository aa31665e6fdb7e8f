"""The non-symmetric eigenproblem: ``a v_j = w_j v_j`` over the last two axes (leading axes are batch axes).

One primitive, ``eig``, with params ``compute_left`` and ``compute_right``. Its outputs are ``w``, then the left
eigenvectors ``vl`` (``vl_jᴴ a = w_j vl_jᴴ``) if asked, then the right ones ``vr`` if asked, as columns. Results
are always complex (c64 for f32 and c64 input, c128 for f64 and c128), as in JAX; NumPy returns real arrays when
every eigenvalue happens to be real, which a static result type cannot do. Eigenvalues come in LAPACK's order
(unsorted; a real matrix's complex pairs are adjacent, positive imaginary part first). Each eigenvector has unit
2-norm and its largest-magnitude component real, as LAPACK's ``geev`` normalizes them.

Derivatives: eigenvalues in forward and reverse mode (first order), for distinct eigenvalues, from both
eigenvector sets: ``dw_j = vl_jᴴ dA vr_j / (vl_jᴴ vr_j)`` (``diag(V⁻¹ dA V)`` without an inverse), and the
cotangent ``Ā = conj(VL) diag(w̄ / (vl_jᴴ vr_j)) VRᵀ`` (its real part for a real ``a``), under the pairing
``Re(Σ x y)`` of ``complex_parts.py``. Eigenvectors are not differentiated (as JAX by default: their derivative
depends on the normalization and is valid only under assumptions that cannot be checked here); asking for it
raises a TransformError.

The only lowering is LAPACK's ``geev`` on CPU (``lowering/rules/eig.py``); XLA has no expansion, so other
platforms, and CPU without SciPy or with LAPACK disabled, raise :class:`EigUnavailableError` when lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind
from ..errors import DTypeError, ShapeError, StagingError, TransformError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..shapes import unify_axis
from ..zeros import MaybeZero, Zero, is_zero
from . import complex_parts as C
from . import elementwise as E
from . import reductions as R
from . import structural as S
from .decompositions import mm, mT
from .slicing import with_batch

eig_p = Primitive("eig", multiple_results=True)
LAPACK_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


class EigUnavailableError(StagingError, NotImplementedError):
    """``eig`` cannot be lowered here: its only implementation is LAPACK's ``geev`` on CPU."""


@eig_p.def_shape
def _eig_shape(a: Aval, *, compute_left: bool, compute_right: bool) -> tuple[Aval, ...]:
    op = "eig"
    if a.dtype not in LAPACK_DTYPES:
        raise DTypeError(f"supports f32, f64, c64 and c128 (LAPACK's geev), got {a}; convert it with .astype(f32)", op)
    if not isinstance(compute_left, bool) or not isinstance(compute_right, bool):
        raise TypeError(f"eig: compute_left and compute_right must be bools, got {compute_left!r}, {compute_right!r}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"expects square matrices in the last two axes, got {a}", op)
    name = unify_axis(op, (a, a), (a.ndim - 2, a.ndim - 1))
    out_dtype = dtypes.complex_dtype(a.dtype) if not dtypes.is_complex(a.dtype) else a.dtype
    assert out_dtype is not None
    names = a.dims[:-2]
    w = Aval(a.shape[:-1], out_dtype, (*names, name))
    vectors = Aval(a.shape, out_dtype, (*names, name, name))
    return (w, *([vectors] * (int(compute_left) + int(compute_right))))


def eig(a: Atom, compute_left: bool = False, compute_right: bool = True) -> tuple[Atom, ...]:
    """``(w, [vl], [vr])``: eigenvalues, then the left and right eigenvectors (columns) that were asked for."""
    return tuple(bind(eig_p, a, compute_left=compute_left, compute_right=compute_right))


def _no_vector_derivatives() -> TransformError:
    return TransformError(
        "derivatives of non-symmetric eigenvectors are not supported (they depend on the eigenvectors' "
        "normalization and hold only for distinct eigenvalues, which cannot be checked); the eigenvalues "
        "(tnp.linalg.eigvals) differentiate once (their derivative is built from the eigenvectors)",
        "eig",
    )


def _spectral_parts(a: Atom) -> tuple[Atom, Atom, Atom, Atom]:
    """``(w, vl, vr, vl_jᴴ vr_j)`` of ``a``."""
    w, vl, vr = eig(a, compute_left=True, compute_right=True)
    return w, vl, vr, R.reduce_sum(E.mul(C.conj(vl), vr), (vr.aval.ndim - 2,))


def _as_complex(x: Atom, dtype: np.dtype[Any]) -> Atom:
    return x if x.aval.dtype == dtype else C.as_complex(x, dtype)


@eig_p.def_jvp
def _eig_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], *, compute_left: bool,
    compute_right: bool,
) -> Any:
    (a,), (t,) = primals, tangents
    if is_zero(t):
        return tuple(Zero(o.aval) for o in outs)
    if compute_left or compute_right:
        raise _no_vector_derivatives()
    _, vl, vr, overlap = _spectral_parts(a)
    da = _as_complex(t, vr.aval.dtype)  # type: ignore[arg-type]
    projected = R.reduce_sum(E.mul(C.conj(vl), mm(da, vr)), (vr.aval.ndim - 2,))  # vl_jᴴ dA vr_j
    return (E.div(projected, overlap),)


@eig_p.def_vjp
def _eig_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], *,
    compute_left: bool, compute_right: bool,
) -> Any:
    (a,) = primals
    if not wants[0] or all(is_zero(c) for c in cts):
        return (Zero(a.aval),)
    if any(not is_zero(c) for c in cts[1:]):
        raise _no_vector_derivatives()
    ct_w: Atom = cts[0]  # type: ignore[assignment]
    _, vl, vr, overlap = _spectral_parts(a)
    scale = E.div(ct_w, overlap)
    n = vr.aval.ndim
    scaled_left = E.mul(C.conj(vl), S.broadcast_in_dim(scale, vl.aval.shape, (*range(n - 2), n - 1), vl.aval.dims))
    abar = mm(scaled_left, mT(vr))
    return (abar if dtypes.is_complex(a.aval.dtype) else C.real(abar),)


@eig_p.def_batch
def _eig_batch(args: Sequence[Atom], dims: Sequence[int | None], *, compute_left: bool, compute_right: bool) -> Any:
    (a,), (d,) = args, dims
    outs = eig(with_batch(a, d, 0, a.aval.shape[d] if d is not None else 1), compute_left, compute_right)
    return outs, tuple(0 for _ in outs)
