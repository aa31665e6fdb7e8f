"""jax.numpy's last names: sort_complex gives the complex dtype holding its input exactly, put and place keep
their operand's type, and the dtype aliases are tensorstage's dtype classes."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, c128, f32, f64, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Time(Dim): ...


DIMS = dict(Batch=2, Time=8)


@ts.program
def sorted_spectrum(x: Tensor[f32, Batch, Time], idx: Tensor[i32, Time]) -> Tensor[c64, Batch, Time]:
    spectrum: Tensor[c64, Batch, Time] = tnp.sort_complex(tnp.fft.fft(x))
    wide: Tensor[c128, Batch, Time] = tnp.sort_complex(x.astype(tnp.double))
    counts: Tensor[c128, Time] = tnp.sort_complex(idx)
    updated: Tensor[f32, Batch, Time] = tnp.put(x, idx, 0.0, mode="clip", inplace=False)
    masked: Tensor[f32, Batch, Time] = tnp.place(updated, updated > 0, 1.0, inplace=False)
    narrow: Tensor[c64, Batch, Time] = tnp.sort_complex(masked)
    real: Tensor[f64, Batch, Time] = wide.real + counts.real
    return spectrum + narrow + real.astype(tnp.csingle)
