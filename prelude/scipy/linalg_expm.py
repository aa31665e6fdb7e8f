"""``ts.scipy.linalg.expm``: the matrix exponential by scaling and squaring with a Padé approximant (Higham 2005,
as ``jax.scipy.linalg.expm`` and SciPy).

Per matrix, ``s = max(0, ceil(log2(‖A‖₁ / θ)))`` halvings bring the 1-norm under the Padé approximant's bound
``θ``; ``exp(A) = r(A / 2ˢ)^(2ˢ)``, ``r = q⁻¹p``. The count is a staged value: the squarings run as a fixed loop of
``max_squarings`` steps, each kept only for matrices that still need it (a select, as JAX's scan of conds), so
a batch of matrices with different norms squares each its own number of times, and a matrix that needs more than
``max_squarings`` becomes NaN (as JAX). Derivatives follow by composition (the count is locally constant).

Deliberate difference: one Padé degree per precision, the largest JAX and SciPy use (13 for f64 and c128,
θ = 5.37; 7 for f32 and c64, θ = 3.93), where they switch to lower degrees for small norms; the lower degrees
save products, the accuracy is the same.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ...control_flow import fori_loop
from ...custom_derivatives import stop_gradient
from ...dtypes import DType
from ...staging import dtypes as _dt
from ...staging.primitives import decompositions as D
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ..numpy import abs as _abs
from ..numpy import ceil, exp2, log2, maximum, where
from ..numpy._core import op, wrap
from ..numpy.linalg_decompositions import square_operand

DT = TypeVar("DT", bound=DType)
N = TypeVar("N")
Batch = TypeVarTuple("Batch")

# Padé coefficients b_0..b_m of exp (Higham 2005, Table 2.3) and the 1-norm bound θ_m under which they are exact
# to working precision (f64: θ_13; f32: θ_7).
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_PADE7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)
_THETA = {np.dtype(np.float64): (_PADE13, 5.371920351148152), np.dtype(np.float32): (_PADE7, 3.925724783138660)}


def _pade(a: Any, b: tuple[float, ...]) -> tuple[Any, Any]:
    """``(u, v)``: the odd and even parts of the Padé numerator, ``p = v + u``, ``q = v - u``."""
    eye = _identity(a)
    a2 = a @ a
    if len(b) == 14:  # degree 13: Higham's evaluation with A², A⁴, A⁶ only
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        return u, v
    powers = [eye, a2]
    while len(powers) < len(b) // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum((b[2 * k + 1] * p for k, p in enumerate(powers)), start=0 * eye)
    v = sum((b[2 * k] * p for k, p in enumerate(powers)), start=0 * eye)
    return u, v


def _identity(a: Any) -> Any:
    """Identity matrices of ``a``'s type."""
    x = a.atom
    return wrap(D.diag_matrix(S.full_like(D.diagonal(x), 1), x.aval))


@op
def expm(
    A: Tensor[DT, Unpack[Batch], N, N], *, upper_triangular: bool = False, max_squarings: int = 16  # noqa: N803
) -> Tensor[DT, Unpack[Batch], N, N]:
    """``exp(A)`` of every square matrix (f32, f64, c64 or c128; leading axes are batch axes).
    ``upper_triangular``: ``A`` is upper triangular (the Padé solve is then a triangular one). NaNs for a matrix whose 1-norm needs more than
    ``max_squarings`` halvings (or that holds NaNs or infinities)."""
    a: Any = wrap(square_operand("expm", A, complex_ok=True))
    precision = _dt.real_dtype(a.aval.dtype)  # c64 takes f32's degree, c128 f64's (as JAX)
    if precision not in _THETA:
        raise TypeError(f"expm: supports f32, f64, c64 and c128 matrices, got {a.aval}; convert it with .astype(f32)")
    if not isinstance(max_squarings, int) or isinstance(max_squarings, bool) or max_squarings < 0:
        raise ValueError(f"expm: max_squarings must be a non-negative int, got {max_squarings!r}")
    b, theta = _THETA[precision]
    norm: Any = stop_gradient(_abs(a).sum(axis=-2).max(axis=-1))  # ‖A‖₁ per matrix: locally constant count
    count = maximum(ceil(log2(norm / theta)), 0)
    scaled = a / exp2(count).astype(a.dtype)[..., None, None]
    u, v = _pade(scaled, b)
    if upper_triangular:
        r = wrap(D.triangular_solve((v - u).atom, (v + u).atom, left_side=True, lower=False, transpose_a=False))
    else:
        r = wrap(D.solve((v - u).atom, (v + u).atom))
    needed = count[..., None, None]

    def square(i: Any, x: Any) -> Any:
        return where(i.astype(needed.dtype) < needed, x @ x, x)

    r = fori_loop(0, max_squarings, square, r)
    return where(needed > max_squarings, np.nan, r)
