"""Host callbacks keep static types: a pure_callback whose result_shape_dtypes is a tensor of the program returns
that tensor's type; debug.print and debug.callback return None."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import tensorstage as ts
from tensorstage import Dim, Tensor, f32


class Batch(Dim): ...
class Feature(Dim): ...


DIMS = dict(Batch=3, Feature=4)


def host_tanh(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.tanh(v)


def host_check(v: npt.NDArray[np.float32]) -> None:
    assert np.all(np.abs(v) <= 1)


@ts.program
def squashed(x: Tensor[f32, Batch, Feature]) -> Tensor[f32, Batch, Feature]:
    ts.debug.print("mean {m}", m=x.mean())
    y: Tensor[f32, Batch, Feature] = ts.pure_callback(host_tanh, x, x)
    ts.debug.callback(host_check, y)
    return y * 2.0
