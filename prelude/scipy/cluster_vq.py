"""``tensorstage.scipy.cluster.vq``: JAX's ``jax.scipy.cluster.vq`` — ``vq``, the nearest code of a code book for
each observation (Euclidean distance), and that distance.

Integer inputs are converted to the default float dtype, and the two inputs promoted to a common float dtype, as
JAX's ``promote_dtypes_inexact`` does. Ties go to the first code (``argmin``), as SciPy and JAX. ``check_finite``
is accepted and ignored, as in JAX: NaN observations get code 0 and a NaN distance (NumPy's argmin).
"""

from __future__ import annotations

from typing import Any

from ...staging import dtypes as _dt
from ...staging.source import user_location
from ...tensor import Tensor
from .. import numpy as tnp
from ..numpy._core import as_tensor, op
from ..tree_flatten import promote_jax

__all__ = ["vq"]


def _inexact(x: Any) -> Any:
    t = as_tensor(x)
    return t if _dt.is_inexact(t.aval.dtype) else t.astype(_dt.DEFAULT_FLOAT)


@op
def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Tensor[Any, Any], Tensor[Any, Any]]:
    """For each observation (a row of ``obs``, shape ``(M, N)``, or an entry of a 1-D ``obs``), the index of the
    closest code in ``code_book`` (``(K, N)`` or 1-D) and its Euclidean distance (``jax.scipy.cluster.vq.vq``)."""
    del check_finite  # as JAX: the result is computed either way
    obs_arr, cb_arr = _inexact(obs), _inexact(code_book)
    common = promote_jax(obs_arr.aval.dtype, cb_arr.aval.dtype)
    obs_arr, cb_arr = obs_arr.astype(common), cb_arr.astype(common)
    if obs_arr.aval.ndim != cb_arr.aval.ndim:
        raise ValueError(f"vq: Observation and code_book should have the same rank, got shapes {obs_arr.aval.shape} "
                         f"and {cb_arr.aval.shape}\n  at {user_location()}")
    if obs_arr.aval.ndim == 1:
        obs_arr, cb_arr = obs_arr[:, None], cb_arr[:, None]
    if obs_arr.aval.ndim != 2:
        raise ValueError(f"vq: ndim different than 1 or 2 are not supported, got shapes {obs_arr.aval.shape} and "
                         f"{cb_arr.aval.shape}\n  at {user_location()}")
    if obs_arr.aval.shape[1] != cb_arr.aval.shape[1]:
        raise ValueError(f"vq: observations and codes must have the same number of features, got shapes "
                         f"{obs_arr.aval.shape} and {cb_arr.aval.shape}\n  at {user_location()}")
    diff = obs_arr[:, None, :] - cb_arr[None, :, :]
    squared: Any = tnp.real(diff * tnp.conj(diff))  # |diff|², real for complex inputs too
    dist = tnp.sqrt(tnp.sum(squared, axis=-1))
    code = tnp.argmin(dist, axis=-1)
    return code, tnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
