"""Results the plugin once got wrong (found by tests/test_fuzz_plugin.py); each annotation is what staging gives."""

from __future__ import annotations

from typing import Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Seq(Dim): ...
class Feat(Dim): ...
class Heads(Dim, size=2): ...
class Unit(Dim, size=1): ...


DIMS = dict(Batch=2, Seq=3, Feat=5)


@ts.program
def regressions(
    v: Tensor[f32, Feat], w: Tensor[f32, Feat, Seq, Batch], u: Tensor[f32, Literal[1], Heads],
    y: Tensor[f32, Seq, Unit], z: Tensor[f32, Literal[4]],
) -> Tensor[f32, Feat]:
    swapped: Tensor[f32, Feat] = v.swapaxes(0, -1)  # an axis with itself, as in NumPy (was "repeated axis")
    merged: Tensor[f32, Literal[15], Batch] = w.reshape(15, Batch)  # merges Feat, Seq (was "not the same elements")
    expanded: Tensor[f32, Literal[1], Feat, Literal[1]] = tnp.expand_dims(v, (0, -1))  # was "internal: not an int"
    carried: Tensor[f32, Heads] = u.reshape(2)  # the one axis of size > 1 keeps its dim, as at staging
    stretched: Tensor[f32, Seq, Literal[4]] = tnp.einsum("ab,b->ab", y, z)  # einsum stretches a size-1 axis
    return v + 0.0 * (swapped + merged[0, 0] + expanded[0, :, 0] + carried[0] + stretched[0, 0])
