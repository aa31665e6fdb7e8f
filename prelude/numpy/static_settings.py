"""Settings an op needs as Python values while it stages (a size, an offset, a degree, an axis): one check, so
every op refuses a staged tensor and a non-integer in the same words."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ...array import Array, as_host_array
from ...staging import dtypes as _dt
from ...staging.errors import ConcretizationError
from ...staging.source import user_location
from ...tensor import Tensor
from ._core import _named, describe


def static_int(
    op_name: str, value: Any, what: str, why: str = "it fixes the result's shape", *, located: bool = False
) -> int:
    """``value`` as a Python int: an int, a NumPy integer, or a 0-d integer array whose value is known now (a
    host array, or a device ``Array``, as NumPy's ``operator.index`` and JAX's concrete values allow).

    A staged tensor (inside ``ts.program``, ``vmap``, ``grad``, or an array the op itself staged) is a
    ``ConcretizationError`` saying ``why`` the op needs the value; bools, floats and other objects are a
    ``TypeError`` named after the op. The ``TypeError`` follows the convention of plain errors raised under an
    op: the op's wrapper (or ``selection._entry``) adds the user's line, so a caller under neither (a plain
    public function, or one that runs user code, whose own errors such a wrapper would rename) passes
    ``located=True``.
    """
    if isinstance(value, Array) and value.ndim == 0 and _dt.is_integer(value.aval.dtype):
        return int(as_host_array(value))
    if isinstance(value, Tensor) and not isinstance(value, Array):
        raise ConcretizationError(
            f"{what} must be a static Python int ({why}), got a staged tensor {describe(value)}; pass a Python "
            "int (int(a) reads a concrete array a)",
            op_name,
            user_location(),
        )
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    error = TypeError(f"{op_name}: {what} must be an int, got {describe(value)}")
    raise _named(error, op_name) if located else error
