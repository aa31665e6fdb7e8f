"""StableHLO for broadcast_in_dim, reshape and transpose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import structural as S
from ..emit import PROPS_OPS, Emitter, Value, cached_i64_array, i64_array, lowers


@lowers(S.broadcast_in_dim_p)
def _broadcast(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, shape: Any, broadcast_dimensions: Any, names: Any
) -> list[Value]:
    return em.op("stablehlo.broadcast_in_dim", args, outs, f"broadcast_dimensions = {i64_array(broadcast_dimensions)}")


def _broadcast_props(params: Any) -> str | None:
    """``_broadcast``'s props when the dimensions' text is already made (else the rule runs)."""
    text = cached_i64_array(params["broadcast_dimensions"])
    return None if text is None else "broadcast_dimensions = " + text


PROPS_OPS[S.broadcast_in_dim_p] = ("stablehlo.broadcast_in_dim", _broadcast_props)


@lowers(S.reshape_p)
def _reshape(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], **params: Any) -> list[Value]:
    return em.op("stablehlo.reshape", args, outs)


@lowers(S.transpose_p)
def _transpose(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, permutation: Any) -> list[Value]:
    return em.op("stablehlo.transpose", args, outs, f"permutation = {i64_array(permutation)}")
