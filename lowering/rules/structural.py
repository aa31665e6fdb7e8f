"""StableHLO for broadcast_in_dim, reshape and transpose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import structural as S
from ..emit import Emitter, Value, i64_array, lowers


@lowers(S.broadcast_in_dim_p)
def _broadcast(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, shape: Any, broadcast_dimensions: Any, names: Any
) -> list[Value]:
    return em.op("stablehlo.broadcast_in_dim", args, outs, f"broadcast_dimensions = {i64_array(broadcast_dimensions)}")


@lowers(S.reshape_p)
def _reshape(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], **params: Any) -> list[Value]:
    return em.op("stablehlo.reshape", args, outs)


@lowers(S.transpose_p)
def _transpose(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, permutation: Any) -> list[Value]:
    return em.op("stablehlo.transpose", args, outs, f"permutation = {i64_array(permutation)}")
