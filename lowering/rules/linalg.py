"""StableHLO for dot_general, and the precision every f32 matrix product asks for."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging.ir import Aval
from ...staging.primitives import linalg as L
from ..emit import CPU_ONLY_PROPS, PROPS_OPS, Emitter, Value, int_list, lowers, remember

_HIGHEST = ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]"


_SINGLE = frozenset((np.dtype(np.float32), np.dtype(np.complex64)))  # (c64 products are f32 products on GPUs)


def precision_props(em: Emitter, dtype: np.dtype[Any]) -> str:
    """The precision attribute of an f32 (or c64) dot or convolution: full f32 unless
    ``TENSORSTAGE_MATMUL_PRECISION=default``.

    XLA's default precision lets GPUs round f32 operands to TF32 (a 10-bit mantissa: relative errors near 1e-3,
    which NumPy, PyTorch's default and our tests call wrong); CPUs compute f32 exactly either way, so their
    modules carry no attribute."""
    if em.platform == "cpu" or dtype not in _SINGLE:
        return ""
    choice = os.environ.get("TENSORSTAGE_MATMUL_PRECISION", "highest").lower()
    if choice == "highest":
        return _HIGHEST
    if choice == "default":
        return ""
    raise ValueError(f"TENSORSTAGE_MATMUL_PRECISION={choice!r}: use 'highest' (full f32) or 'default' (XLA's: TF32 "
                     "on recent NVIDIA GPUs)")


_PROPS_TEXT: dict[Any, str] = {}  # dimension-numbers text by (contracting, batch); bounded


@lowers(L.dot_general_p)
def _dot_general(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, contracting: Any, batch: Any) -> list[Value]:
    try:
        props = _PROPS_TEXT.get((contracting, batch))
    except TypeError:  # axes given as lists
        props = None
    if props is None:
        (lhs_c, rhs_c), (lhs_b, rhs_b) = contracting, batch
        numbers = (
            f"#stablehlo.dot<lhs_batching_dimensions = {int_list(lhs_b)}, rhs_batching_dimensions = {int_list(rhs_b)}, "
            f"lhs_contracting_dimensions = {int_list(lhs_c)}, rhs_contracting_dimensions = {int_list(rhs_c)}>"
        )
        props = f"dot_dimension_numbers = {numbers}"
        try:
            remember(_PROPS_TEXT, (contracting, batch), props, limit=4096)
        except TypeError:  # axes given as lists: not kept
            pass
    if em.platform != "cpu":
        props += precision_props(em, args[0].aval.dtype)
    return em.op("stablehlo.dot_general", args, outs, props)


def _cached_props(params: Any) -> str | None:
    """The dimension-numbers text of a ``dot_general`` equation's params when already made (else the rule runs)."""
    try:
        return _PROPS_TEXT.get((params["contracting"], params["batch"]))
    except TypeError:  # axes given as lists
        return None


PROPS_OPS[L.dot_general_p] = ("stablehlo.dot_general", _cached_props)
CPU_ONLY_PROPS.add(L.dot_general_p)
