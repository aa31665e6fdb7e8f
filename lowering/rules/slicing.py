"""StableHLO for iota, slice, reverse, dynamic_slice, dynamic_update_slice, concatenate and pad."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import slicing as SL
from ..emit import Emitter, Value, i64_array, lowers


@lowers(SL.iota_p)
def _iota(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimension: int, **params: Any) -> list[Value]:
    return em.op("stablehlo.iota", [], outs, f"iota_dimension = {dimension} : i64")


@lowers(SL.slice_p)
def _slice(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, start_indices: Any, limit_indices: Any, strides: Any
) -> list[Value]:
    props = (
        f"start_indices = {i64_array(start_indices)}, limit_indices = {i64_array(limit_indices)}, "
        f"strides = {i64_array(strides)}"
    )
    return em.op("stablehlo.slice", args, outs, props)


@lowers(SL.rev_p)
def _rev(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimensions: Any) -> list[Value]:
    return em.op("stablehlo.reverse", args, outs, f"dimensions = {i64_array(dimensions)}")


@lowers(SL.dynamic_slice_p)
def _dynamic_slice(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, slice_sizes: Any) -> list[Value]:
    return em.op("stablehlo.dynamic_slice", args, outs, f"slice_sizes = {i64_array(slice_sizes)}")


@lowers(SL.dynamic_update_slice_p)
def _dynamic_update_slice(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
    return em.op("stablehlo.dynamic_update_slice", args, outs)


@lowers(SL.concatenate_p)
def _concatenate(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, dimension: int) -> list[Value]:
    return em.op("stablehlo.concatenate", args, outs, f"dimension = {dimension} : i64")


@lowers(SL.pad_p)
def _pad(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, padding_config: Any) -> list[Value]:
    lows, highs, interiors = zip(*padding_config) if padding_config else ((), (), ())
    props = (
        f"edge_padding_low = {i64_array(lows)}, edge_padding_high = {i64_array(highs)}, "
        f"interior_padding = {i64_array(interiors)}"
    )
    return em.op("stablehlo.pad", args, outs, props)
