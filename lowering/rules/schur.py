"""Lowering of the Schur and Hessenberg primitives (``staging/primitives/schur.py``): LAPACK's ``gees`` and
``gehrd`` on CPU (jaxlib's typed-FFI kernels ``lapack_{s,d,c,z}{gees,gehrd}_ffi``, batched over leading axes),
with NaNs in every output of a matrix whose ``info`` is nonzero.

``lowering/lapack.py`` registers both where jaxlib has them (its ``OPTIONAL_KERNELS``). ``hessenberg``'s ``q`` is the product of ``gehrd``'s reflectors, formed by XLA's
``ProductOfElementaryHouseholderReflectors`` (LAPACK's ``orghr`` is not among jaxlib's kernels): reflector ``i``
starts at row ``i + 1``, so the packed matrix shifted one row down and one column right, with a zero tau in front,
is in ``geqrf``'s layout, whose product is ``q``. XLA has no Schur or Hessenberg expansion, so other platforms, and
CPU without the kernels, get an error naming the op, the platform and the user's line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import schur as SC
from .. import lapack
from ..emit import Emitter, Value, lowers
from .decompositions import lapack_call, nan_where_failed, sliced, zero_padded
from .elementwise import compare, widen

def _target(em: Emitter, kernel: str, op: str, a: Aval) -> str:
    """The registered kernel for ``a``'s dtype, or the error saying why there is none here."""
    name = lapack.target(kernel, a.dtype, em.platform)  # None: not CPU, disabled, or the kernels missing
    if name is None:
        raise _unavailable(em, op, kernel, a)
    return name


def _unavailable(em: Emitter, op: str, kernel: str, a: Aval) -> SC.SchurUnavailableError:
    if em.platform != "cpu":
        why = (f"has no lowering on {em.platform}: its only implementation is LAPACK's {kernel} on CPU (XLA has "
               "none); compute it on a CPU device")
    elif not lapack.enabled():
        why = f"needs LAPACK's {kernel} on CPU, which is disabled (TENSORSTAGE_LAPACK=0 or lapack.set_enabled(False))"
    else:
        why = (f"needs LAPACK's {kernel} on CPU, which is unavailable here (it needs SciPy and jaxlib's LAPACK "
               f"kernels, {kernel} among them)")
    return SC.SchurUnavailableError(f"{op} of {a} {why}", op, em.source)


def _empty(em: Emitter, outs: Sequence[Aval]) -> list[Value]:
    """Outputs of 0x0 matrices (the kernels need a leading dimension of at least 1)."""
    return [widen(em, em.scalar(0, o.dtype), o.shape) for o in outs]


@lowers(SC.schur_p)
def _schur(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, compute_vectors: bool) -> list[Value]:
    (a,) = args
    target = _target(em, "gees", "schur", a.aval)
    if a.aval.shape[-1] == 0:
        return _empty(em, outs)
    batch = a.aval.shape[:-2]
    info = Aval(batch, np.dtype(np.int32))
    values = Aval(a.aval.shape[:-1], a.aval.dtype)
    parts = [values, values] if not dtypes.is_complex(a.aval.dtype) else [values]  # real: wr and wi
    results = [a.aval, a.aval, *parts, info, info]  # t, z, eigenvalues, sdim (sorted count, unused), info
    majors = [True, True, True, *([False] * (len(results) - 2))]
    t, z, *_, status = lapack_call(
        em, target, [a], results, majors=majors, mode="V" if compute_vectors else "N", sort="N"
    )
    return [nan_where_failed(em, status, x) for x in (t, z)[: len(outs)]]


@lowers(SC.hessenberg_p)
def _hessenberg(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, compute_q: bool) -> list[Value]:
    (a,) = args
    target = _target(em, "gehrd", "hessenberg", a.aval)
    *batch, n, _ = a.aval.shape
    if n == 0:
        return _empty(em, outs)
    results = [a.aval, Aval((*batch, n - 1), a.aval.dtype), Aval(tuple(batch), np.dtype(np.int32))]
    packed, taus, status = lapack_call(em, target, [a], results, majors=[True, True, False, False],
                                       ints={"high": n, "low": 1})
    h = nan_where_failed(em, status, _upper_hessenberg(em, packed))
    if not compute_q:
        return [h]
    return [h, nan_where_failed(em, status, _q(em, packed, taus))]


def _upper_hessenberg(em: Emitter, x: Value) -> Value:
    """``x`` with zeros below its first subdiagonal (where ``gehrd`` keeps the reflectors)."""
    n = x.aval.ndim
    index = Aval(x.aval.shape, dtypes.DEFAULT_INT)
    rows = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 2} : i64")[0]
    cols = em.op("stablehlo.iota", [], [index], f"iota_dimension = {n - 1} : i64")[0]
    one = widen(em, em.scalar(1, index.dtype), index.shape)
    keep = compare(em, rows, em.op("stablehlo.add", [cols, one], [index])[0], "LE")
    return em.op("stablehlo.select", [keep, x, widen(em, em.scalar(0, x.aval.dtype), x.aval.shape)], [x.aval])[0]


def _q(em: Emitter, packed: Value, taus: Value) -> Value:
    """The product of ``gehrd``'s reflectors (see the module docstring)."""
    *batch, n, _ = packed.aval.shape
    k = len(batch)
    below = sliced(em, packed, [0] * k + [1, 0], [*batch, n, n - 1])
    reflectors = zero_padded(em, below, [0] * k + [1, 1], [0] * (k + 2))
    shifted: Any = zero_padded(em, taus, [0] * k + [1], [0] * (k + 1))
    return em.op(
        "stablehlo.custom_call", [reflectors, shifted], [packed.aval],
        'call_target_name = "ProductOfElementaryHouseholderReflectors"',
    )[0]
