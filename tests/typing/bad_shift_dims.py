from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, i32


class Batch(Dim): ...
class Lanes(Dim): ...
class Bits(Dim): ...


DIMS = dict(Batch=4, Lanes=3, Bits=3)  # Lanes == Bits: only the names tell them apart


@ts.program
def pack(codes: Tensor[i32, Batch, Lanes], shifts: Tensor[i32, Bits]) -> Tensor[i32, Batch, Lanes]:
    return codes << shifts  # error: shape
