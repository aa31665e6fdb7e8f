"""Complex tensors: Python complex scalars widen f32 to c64, parts and moduli have the parts' float dtype,
tnp.fft maps f32 or c64 signals to c64 spectra, and grad(holomorphic=True) of a complex scalar function has its
argument's type."""

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


def cubic(z: Tensor[c64, Time]) -> Tensor[c64]:
    return tnp.sum(z**3 + tnp.exp(z))


@ts.program
def holomorphic_step(z: Tensor[c64, Time]) -> Tensor[c64, Time]:
    slope: Tensor[c64, Time] = ts.grad(cubic, holomorphic=True)(z)
    value, same = ts.value_and_grad(cubic, holomorphic=True)(z)
    unit: Tensor[c64, Time] = tnp.sign(z)
    return z - 0.1 * slope + 0.0 * same * value + unit
