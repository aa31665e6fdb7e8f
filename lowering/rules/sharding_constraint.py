"""StableHLO for sharding_constraint: ``stablehlo.custom_call @Sharding`` carrying ``mhlo.sharding`` in a module
partitioned over a mesh (``gspmd.partitioning``), the operand itself elsewhere (one device: nothing to lay out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.ir import Aval
from ...staging.primitives import sharding_constraint as C
from .. import gspmd
from ..emit import Emitter, Value, lowers


@lowers(C.sharding_constraint_p)
def _sharding_constraint(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, sharding: Any, unconstrained: tuple[int, ...]
) -> list[Value]:
    devices = gspmd.PARTITION_DEVICES.get()
    if devices is None:
        return list(args)
    text = gspmd.constraint_text(sharding, outs[0].ndim, devices)
    config = f"unspecified_dims=[{','.join(str(d) for d in unconstrained)}]" if unconstrained else ""
    props = f'call_target_name = "Sharding", backend_config = "{config}", has_side_effect = false'
    out = em.op("stablehlo.custom_call", args, outs, props)
    # mhlo.sharding is a discardable attribute: it goes in the attribute dictionary after the properties.
    em.lines[-1] = em.lines[-1].replace("}> : (", f'}}> {{mhlo.sharding = "{text}"}} : (', 1)
    return out
