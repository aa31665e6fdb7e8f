"""The type names of the settings ``ts.lax`` functions accept, under JAX's names: ``Precision``, ``PrecisionLike``,
``DotAlgorithm``, ``DotAlgorithmPreset``, ``DotDimensionNumbers``, ``ConvGeneralDilatedDimensionNumbers``,
``FftType`` and ``RandomAlgorithm``.

Deliberate difference from jax.lax: a product's ``precision=`` (a ``Precision``, a pair of them, a ``DotAlgorithm``
or ``DotAlgorithmPreset``) is advisory: ``ts.lax``'s products always run at the operands' full precision (never
below what was asked); a convolution's ``Precision`` reaches XLA (see ``convolution.py``).
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Union

from .convolution_more import ConvDimensionNumbers
from .reductions import DimensionNumbers

__all__ = [
    "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "FftType",
    "Precision", "PrecisionLike", "RandomAlgorithm",
]


class Precision(enum.Enum):
    """JAX's precision of a product on accelerators (advisory here: products run at full precision)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_NAMES.get(value) if value is None or isinstance(value, str) else None

    def __str__(self) -> str:
        return self.name


_PRECISION_NAMES: dict[str | None, Precision] = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH, "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT, None: Precision.DEFAULT,
}


class DotAlgorithm(NamedTuple):
    """JAX's description of a product's algorithm: operand and accumulation types (advisory here)."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """JAX's named product algorithms (advisory here)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm,
                      DotAlgorithmPreset]
DotDimensionNumbers = DimensionNumbers
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class FftType(enum.IntEnum):
    """Which transform ``lax.fft`` computes."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


class RandomAlgorithm(enum.IntEnum):
    """``rng_bit_generator``'s algorithm (XLA's: ``RNG_DEFAULT`` is the platform's choice)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name
