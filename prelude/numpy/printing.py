"""Printing: ``array_repr``, ``array_str`` and NumPy's print options (``printoptions``, ``get_printoptions``,
``set_printoptions``), on the host.

Device arrays print through NumPy, so NumPy's print options are tensorstage's (they are the same functions):
``with tnp.printoptions(precision=3): print(x)``. ``array_repr`` of a device array is its ``repr``
(``Array([...], dtype=f32)``) with the given options; of anything else, NumPy's. A staged value has no digits to
print while staging (a ``ConcretizationError``); ``repr`` of it shows its type (``Traced<f32[3]>``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...array import Array
from ...staging import dtypes as _dt
from .host_io import host_value

__all__ = ["array_repr", "array_str", "get_printoptions", "printoptions", "set_printoptions"]

printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """The text ``repr`` gives (NumPy's for host data), with NumPy's formatting arguments."""
    host = host_value("array_repr", arr)
    if not isinstance(arr, Array):
        return np.array_repr(np.asarray(host), max_line_width, precision, suppress_small)
    body = np.array2string(host, max_line_width, precision, suppress_small, separator=", ", prefix="Array(")
    if not host.size and host.shape != (0,):  # "[]" alone would hide the shape, as in ``Array.__repr__``
        body += f", shape={host.shape}"
    return f"Array({body}, dtype={_dt.short_name(host.dtype)})"


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """The text ``str`` gives: the elements without the type (NumPy's ``array_str``)."""
    host = host_value("array_str", a)
    return np.array_str(np.asarray(host), max_line_width, precision, suppress_small)
