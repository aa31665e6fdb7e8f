"""StableHLO for ``svd``: LAPACK's divide-and-conquer ``gesdd`` on CPU (jaxlib's typed-FFI kernel, batched over
leading axes), with NaNs in every output of a matrix whose ``info`` is nonzero.

XLA has no SVD expander, and no fallback is implemented: lowering ``svd`` for another platform, or on CPU without
the LAPACK kernels (SciPy missing, or ``TENSORSTAGE_LAPACK=0``), raises a ``NotImplementedError`` naming the op,
the platform and how to enable LAPACK, rather than computing a less accurate answer silently.

After the kernel, the singular vectors get their deterministic signs (see ``staging/primitives/svd.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging.ir import Aval
from ...staging.primitives import svd as SV
from .. import lapack
from ..emit import Emitter, Value, i64_array, lowers
from .decompositions import apply_signs, lapack_call, leading_slice, masked_triangle, nan_where_failed, vector_signs
from .elementwise import compare, widen


def _missing_lapack(platform: str) -> NotImplementedError:
    if platform != "cpu":
        where = f"on platform {platform!r}: XLA has no SVD expander and tensorstage has no fallback for it"
    elif not lapack.enabled():
        where = "on CPU with LAPACK disabled (TENSORSTAGE_LAPACK=0 or lapack.set_enabled(False))"
    else:
        where = "on CPU without jaxlib's LAPACK kernels (they bind to SciPy's LAPACK: is SciPy installed?)"
    return NotImplementedError(
        f"svd (tnp.linalg.svd, svdvals, pinv, lstsq, matrix_rank, cond) cannot be lowered {where}. "
        "SVD is lowered only through LAPACK's gesdd on CPU: install SciPy (`pip install scipy`, or the "
        "'tensorstage[lapack]' extra), leave TENSORSTAGE_LAPACK unset, and compile for the CPU device."
    )


def _canonical(em: Emitter, u: Value, vh: Value, k: int) -> tuple[Value, Value]:
    """``u`` with each column's largest-magnitude component positive, and the first ``k`` rows of ``vh`` flipped
    to match; rows of ``vh`` beyond ``k`` (complete ``vh`` of a wide matrix) get the rule on their own."""
    u_signs = vector_signs(em, u, -2)
    batch = u.aval.shape[:-2]
    cols, rows = u.aval.shape[-1], vh.aval.shape[-2]
    paired = u_signs if cols == k else leading_slice(em, u_signs, (*batch, k))
    if rows > k:
        own = vector_signs(em, vh, -1)
        rest_aval = Aval((*batch, rows - k), vh.aval.dtype)
        nb = len(batch)
        props = (
            f"start_indices = {i64_array([0] * nb + [k])}, limit_indices = {i64_array([*batch, rows])}, "
            f"strides = {i64_array([1] * (nb + 1))}"
        )
        rest = em.op("stablehlo.slice", [own], [rest_aval], props)[0]
        paired = em.op(
            "stablehlo.concatenate", [paired, rest], [Aval((*batch, rows), vh.aval.dtype)], f"dimension = {nb} : i64"
        )[0]
    return apply_signs(em, u, u_signs, -2), apply_signs(em, vh, paired, -1)


def _identity(em: Emitter, aval: Aval) -> Value:
    ones = widen(em, em.scalar(1, aval.dtype), aval.shape)
    return masked_triangle(em, ones, "EQ")


@lowers(SV.svd_p)
def _svd(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, full_matrices: bool, compute_uv: bool
) -> list[Value]:
    (a,) = args
    *batch, m, n = a.aval.shape
    k = min(m, n)
    dtype = a.aval.dtype
    if compute_uv:
        u_aval, s_aval, vh_aval = outs
    else:
        (s_aval,) = outs
        u_aval = Aval((*batch, m, k), dtype)
        vh_aval = Aval((*batch, k, n), dtype)
    if k == 0:  # nothing to factor: empty singular values, identity (or empty) singular vectors
        s = widen(em, em.scalar(0, dtype), s_aval.shape)
        if not compute_uv:
            return [s]
        return [_identity(em, u_aval), s, _identity(em, vh_aval)]
    target = lapack.target("gesdd", dtype, em.platform)
    if target is None:
        raise _missing_lapack(em.platform)
    info = Aval(tuple(batch), np.dtype(np.int32))
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    _, s, u, vh, status = lapack_call(
        em, target, [a], [a.aval, s_aval, u_aval, vh_aval, info], column_major=True, mode=mode
    )
    s = nan_where_failed(em, status, s)
    if not compute_uv:
        return [s]
    u, vh = _canonical(em, nan_where_failed(em, status, u), nan_where_failed(em, status, vh), k)
    return [u, s, vh]

