"""StableHLO for dot_general, and the precision every f32 matrix product asks for."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging.ir import Aval
from ...staging.primitives import linalg as L
from ..emit import CPU_ONLY_PROPS, PROPS_OPS, Emitter, Value, int_list, lowers, remember

_SINGLE = frozenset((np.dtype(np.float32), np.dtype(np.complex64)))  # (c64 products are f32 products on GPUs)


def precision_props(em: Emitter, dtype: np.dtype[Any], precision: str | None = None) -> str:
    """The precision attribute of a dot or convolution: ``precision`` (its equation's, from
    ``ts.default_matmul_precision``) on every platform where given; else, for f32 (or c64), full f32 unless
    ``TENSORSTAGE_MATMUL_PRECISION=default``.

    XLA's default precision lets GPUs round f32 operands to TF32 (a 10-bit mantissa: relative errors near 1e-3,
    which NumPy, PyTorch's default and our tests call wrong); CPUs compute f32 exactly either way, so their
    modules carry no attribute unless the program asked for one."""
    if precision is not None:
        return _precision_text(precision)
    if em.platform == "cpu" or dtype not in _SINGLE:
        return ""
    choice = os.environ.get("TENSORSTAGE_MATMUL_PRECISION", "highest").lower()
    if choice == "highest":
        return _precision_text("HIGHEST")
    if choice == "default":
        return ""
    raise ValueError(f"TENSORSTAGE_MATMUL_PRECISION={choice!r}: use 'highest' (full f32) or 'default' (XLA's: TF32 "
                     "on recent NVIDIA GPUs)")


@functools.cache
def _precision_text(precision: str) -> str:
    one = f"#stablehlo<precision {precision}>"
    return f", precision_config = [{one}, {one}]"


_PROPS_TEXT: dict[Any, str] = {}  # dimension-numbers text by (contracting, batch); bounded


@lowers(L.dot_general_p)
def _dot_general(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, contracting: Any, batch: Any,
    precision: str | None = None,
) -> list[Value]:
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
    if em.platform != "cpu" or precision is not None:
        props += precision_props(em, args[0].aval.dtype, precision)
    return em.op("stablehlo.dot_general", args, outs, props)


def _cached_props(params: Any) -> str | None:
    """The dimension-numbers text of a ``dot_general`` equation's params when already made (else the rule runs:
    always for a dot with a precision)."""
    if "precision" in params:
        return None
    try:
        return _PROPS_TEXT.get((params["contracting"], params["batch"]))
    except TypeError:  # axes given as lists
        return None


PROPS_OPS[L.dot_general_p] = ("stablehlo.dot_general", _cached_props)
CPU_ONLY_PROPS.add(L.dot_general_p)
