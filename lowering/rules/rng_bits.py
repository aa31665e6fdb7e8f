"""StableHLO for rng_bit_generator: the ``u32[4]`` key is XLA's ``u64[2]`` state reinterpreted (reshaped to
``u32[2, 2]`` and bitcast), as JAX lowers it, so equal keys give JAX's bits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...staging.ir import Aval
from ...staging.primitives import rng_bits as RB
from ..emit import Emitter, Value, lowers, tensor_type

_STATE_TYPE = "tensor<2xui64>"  # XLA's state, which a u32[4] key carries bit for bit
_PAIRS = Aval((2, 2), np.dtype(np.uint32), (None, None))
_ALGORITHM = {"RNG_DEFAULT": "DEFAULT", "RNG_THREE_FRY": "THREE_FRY", "RNG_PHILOX": "PHILOX"}


def _line(em: Emitter, text: str) -> str:
    name = em.fresh()
    em.lines.append(f"{em.indent}{name} = {text} {em.loc}")
    return name


@lowers(RB.rng_bit_generator_p)
def _rng_bit_generator(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, shape: tuple[int, ...],
                       dtype: np.dtype[np.generic], algorithm: str) -> list[Value]:
    (key,) = args
    key_aval, bits_aval = outs
    pairs = em.op("stablehlo.reshape", [key], [_PAIRS])[0]
    state = _line(em, f'"stablehlo.bitcast_convert"({pairs.name}) : ({pairs.type}) -> {_STATE_TYPE}')
    bits_type = tensor_type(bits_aval)
    props = f"rng_algorithm = #stablehlo<rng_algorithm {_ALGORITHM[algorithm]}>"
    both = em.fresh()
    em.lines.append(f'{em.indent}{both}:2 = "stablehlo.rng_bit_generator"({state}) <{{{props}}}> : ({_STATE_TYPE}) '
                    f"-> ({_STATE_TYPE}, {bits_type}) {em.loc}")
    new_pairs = _line(em, f'"stablehlo.bitcast_convert"({both}#0) : ({_STATE_TYPE}) -> {pairs.type}')
    new_key = em.op("stablehlo.reshape", [Value(new_pairs, _PAIRS, pairs.type)], [key_aval])[0]
    return [new_key, Value(f"{both}#1", bits_aval, bits_type)]
