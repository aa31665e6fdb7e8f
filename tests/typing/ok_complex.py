"""Complex tensors: Python complex scalars widen f32 to c64, parts and moduli have the parts' float dtype, and
tnp.fft maps f32 or c64 signals to c64 spectra."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Time(Dim): ...


DIMS = dict(Batch=2, Time=8)


@ts.program
def spectral_energy(x: Tensor[f32, Batch, Time], phase: Tensor[f32, Batch, Time]) -> Tensor[f32, Batch, Time]:
    rotated: Tensor[c64, Batch, Time] = tnp.fft.fft(x) * tnp.exp(phase * 1j)
    energy: Tensor[f32, Batch, Time] = abs(rotated) ** 2
    parts: Tensor[f32, Batch, Time] = rotated.real * rotated.imag + tnp.real(rotated.conj())
    shifted: Tensor[c64, Batch, Time] = tnp.multiply(x, 2j) + tnp.add(1j, rotated) - tnp.power(rotated, 2)
    parts = parts + tnp.abs(tnp.subtract(shifted, tnp.true_divide(rotated, 1 + 1j)))
    return energy + parts + tnp.angle(rotated)
