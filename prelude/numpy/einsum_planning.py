"""``einsum_path``: NumPy's contraction order for an ``einsum``, computed from the operands' shapes alone.

It is NumPy's own planner (``numpy.einsum_path``) on zero-stride stand-ins of the operands' shapes, so staged
tensors, device arrays and NumPy arrays all work and no data moves. ``tnp.einsum`` itself accepts ``optimize`` and
contracts left to right, leaving the schedule to XLA: the path says what NumPy would do (and what a hand-split
einsum could do), not what ``tnp.einsum`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import _named, describe
from .einsum import _from_sublists
from .names import shape

__all__ = ["einsum_path"]


def einsum_path(subscripts: Any, *operands: Any, optimize: bool | str | list[Any] = "greedy"
                ) -> tuple[list[Any], str]:
    """The contraction path (``['einsum_path', (0, 1), ...]``) and NumPy's printed report of its costs, for
    ``einsum(subscripts, *operands)`` (or the sublist form); ``optimize`` is NumPy's (``"greedy"``,
    ``"optimal"``, True, False or an explicit path)."""
    if not isinstance(subscripts, str):
        subscripts, *operands = _from_sublists((subscripts, *operands))  # type: ignore[assignment]
    stand_ins = [np.broadcast_to(np.zeros((), np.float32), shape(x)) for x in operands]
    try:
        path, report = np.einsum_path(subscripts, *stand_ins, optimize=optimize)
    except (TypeError, ValueError) as exc:
        shapes = ", ".join(describe(x) for x in operands)
        raise _named(type(exc)(f"{exc} (subscripts {subscripts!r}, operands {shapes})"), "einsum_path") from None
    return list(path), str(report)
