"""StableHLO for fft."""

from __future__ import annotations

from collections.abc import Sequence

from ...staging.ir import Aval
from ...staging.primitives import fft as F
from ..emit import Emitter, Value, i64_array, lowers


@lowers(F.fft_p)
def _fft(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, fft_type: str,
         fft_length: tuple[int, ...]) -> list[Value]:
    props = f"fft_type = #stablehlo<fft_type {fft_type}>, fft_length = {i64_array(fft_length)}"
    return em.op("stablehlo.fft", args, outs, props)
