"""StableHLO for ``eig``: LAPACK's ``geev`` on CPU (jaxlib's typed-FFI kernel ``lapack_{s,d,c,z}geev_ffi``, batched
over leading axes), with NaNs in every output of a matrix whose ``info`` is nonzero (QR iterations that did not
converge).

The kernel takes column-major matrices and ``compute_left``/``compute_right`` as one-character modes ('V' or
'N'). Real kernels return the eigenvalues as real and imaginary parts and the eigenvectors already complex
(jaxlib unpacks LAPACK's shared storage of conjugate pairs), normalized as LAPACK does: unit 2-norm, largest
component real. XLA has no expansion of the non-symmetric eigenproblem, so there is no other lowering: other
platforms, and CPU without the kernels, get an error naming the op, the platform and the user's line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval
from ...staging.primitives import eig as EG
from .. import lapack
from ..emit import Emitter, Value, layout, lowers, tensor_type
from .decompositions import nan_where_failed
from .elementwise import widen


def _geev(em: Emitter, target: str, a: Value, results: Sequence[Aval], left: bool, right: bool) -> list[Value]:
    """The kernel's custom call: matrices (operand and eigenvectors) column major, vectors row major."""
    matrix_rank = a.aval.ndim
    layouts = [layout(r.ndim, r.ndim == matrix_rank) for r in results]
    props = (
        f'api_version = 1 : i32, backend_config = "", call_target_name = "{target}", '
        f"operand_layouts = [{layout(a.aval.ndim, True)}], result_layouts = [{', '.join(layouts)}]"
    )
    modes = f"compute_left = {ord('V' if left else 'N')} : ui8, compute_right = {ord('V' if right else 'N')} : ui8"
    types = [tensor_type(r) for r in results]
    base = em.fresh()
    em.lines.append(
        f'{em.indent}{base}:{len(results)} = "stablehlo.custom_call"({a.name}) <{{{props}}}> '
        f"{{mhlo.backend_config = {{{modes}}}}} : ({a.type}) -> ({', '.join(types)}) {em.loc}"
    )
    return [Value(f"{base}#{i}", r, t) for i, (r, t) in enumerate(zip(results, types))]


def _unavailable(em: Emitter, a: Aval) -> EG.EigUnavailableError:
    if em.platform != "cpu":
        why = (f"has no lowering on {em.platform}: its only implementation is LAPACK's geev on CPU (XLA has no "
               "non-symmetric eigensolver); compute it on a CPU device")
    elif not lapack.enabled():
        why = "needs LAPACK's geev on CPU, which is disabled (TENSORSTAGE_LAPACK=0 or lapack.set_enabled(False))"
    else:
        why = "needs LAPACK's geev on CPU, which is unavailable here (it needs SciPy and jaxlib's LAPACK kernels)"
    return EG.EigUnavailableError(f"eig of {a} {why}", "eig", em.source)


@lowers(EG.eig_p)
def _eig(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, compute_left: bool, compute_right: bool
) -> list[Value]:
    (a,) = args
    target = lapack.target("geev", a.aval.dtype, em.platform)
    if target is None:
        raise _unavailable(em, a.aval)
    w_aval = outs[0]
    vectors = Aval(a.aval.shape, w_aval.dtype)
    if a.aval.shape[-1] == 0:  # nothing to decompose (the kernel needs a leading dimension of at least 1)
        return [widen(em, em.scalar(0, o.dtype), o.shape) for o in outs]
    info = Aval(a.aval.shape[:-2], np.dtype(np.int32))
    real = not dtypes.is_complex(a.aval.dtype)
    values = [Aval(w_aval.shape, a.aval.dtype)] * 2 if real else [w_aval]
    *w_parts, vl, vr, status = _geev(em, target, a, [*values, vectors, vectors, info], compute_left, compute_right)
    w = em.op("stablehlo.complex", w_parts, [w_aval])[0] if real else w_parts[0]
    results = [w, *([vl] if compute_left else []), *([vr] if compute_right else [])]
    return [nan_where_failed(em, status, x) for x in results]
