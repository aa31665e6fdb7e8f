"""More of ``jax.lax``: ``fft`` (with ``FftType``), ``mulhi``, ``index_take``, ``scatter_apply``, ``ragged_dot`` and
``ragged_dot_general`` (with ``RaggedDotDimensionNumbers``), ``conv_general_dilated_local``, ``rng_bit_generator``
(with ``RandomAlgorithm``), ``platform_dependent``, ``composite``, ``dtype``, ``empty``, ``shape_as_value``,
``stage``, and the type names of the settings ``ts.lax`` functions accept (``Precision``, ``PrecisionLike``,
``DotAlgorithm``, ``DotAlgorithmPreset``, ``DotDimensionNumbers``, ``ConvGeneralDilatedDimensionNumbers``).

Deliberate differences from jax.lax:
- ``precision=`` (a ``Precision``, a pair of them, a ``DotAlgorithm`` or ``DotAlgorithmPreset``) is advisory:
  ``ts.lax``'s products always run at the operands' full precision (never below what was asked).
- ``ragged_dot`` and ``ragged_dot_general`` are JAX's dense formulation (each group's rows masked out of a
  ``[g, ...]`` copy of the ragged operand, one ``dot_general``): exact, differentiable in ``lhs`` and ``rhs`` and
  batchable, at ``g`` times a plain product's work and memory. ``group_sizes`` must have shape ``[g]`` (JAX
  also takes sizes per batch/outer row); ``group_offset`` is refused (JAX's own implementations refuse it too).
- ``scatter_apply`` applies ``func`` once per element and per index that hits it (duplicates apply it again, as
  in XLA), in a ``while_loop``: forward-differentiable only (JAX's has no derivative at all).
- ``rng_bit_generator`` takes JAX's ``u32[4]`` key and gives ``u8``/``u32`` bits (tensorstage has no ``u16``/``u64``
  arrays). Under ``vmap`` each key of the batch draws its own bits (JAX draws the whole batch from the first key).
- ``platform_dependent`` picks its branch when staged, for the default platform (``TENSORSTAGE_DEFAULT_DEVICE``:
  ``'cpu'``; ``'gpu'`` picks the ``cuda`` branch, else ``rocm``): a program compiled for another device keeps that
  choice. JAX picks when lowering.
- ``composite`` calls its decomposition (the staged program is that decomposition; no ``stablehlo.composite``).
- ``empty`` gives zeros; ``stage`` gives its operand as a tensor (outside staging: an Array).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar, Union

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from ... import pytree
from ...batching import vmap
from ...control_flow import while_loop
from ...dtypes import DType, to_numpy, u32
from ...staging import dtypes as _dt
from ...staging.primitives import elementwise as E
from ...staging.primitives import fft as F
from ...staging.primitives import rng_bits as RB
from ...tensor import Tensor
from ...transfers import default_backend
from .. import numpy as tnp
from ..numpy._core import as_tensor, describe, dtype_error, op, shape_error, wrap
from ._operands import checked_axes, dtype_argument, strict_atoms
from .convolution_more import ConvDimensionNumbers, conv_dimension_numbers, conv_general_dilated_patches
from .elementwise import shift_right_arithmetic, shift_right_logical
from .gather_scatter import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter_add
from .reductions import DimensionNumbers, cumsum, dot_general, reduce_max
from .structural import broadcast_in_dim, broadcasted_iota, convert_element_type, full, reshape, select

__all__ = [
    "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "FftType",
    "Precision", "PrecisionLike", "RaggedDotDimensionNumbers", "RandomAlgorithm", "composite",
    "conv_general_dilated_local", "dtype", "empty", "fft", "index_take", "mulhi", "platform_dependent",
    "ragged_dot", "ragged_dot_general", "rng_bit_generator", "scatter_apply", "shape_as_value", "stage",
]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")
T = TypeVar("T")

# ------------------------------------------------------------------------------------------ setting types


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


# ------------------------------------------------------------------------------------------------- fft


def _fft_type(value: FftType | str) -> FftType:
    if isinstance(value, FftType):
        return value
    if isinstance(value, str) and value.upper() in FftType.__members__ and value in (value.upper(), value.lower()):
        return FftType[value.upper()]
    raise TypeError(f"lax.fft: unknown FFT type {value!r}; use a lax.FftType or one of 'fft', 'ifft', 'rfft', 'irfft'")


def _fft_operand(x: Any, kind: FftType) -> Any:
    """``x`` in the dtype ``kind`` transforms, converted as JAX does (real to complex; integers to the default)."""
    t = as_tensor(x)
    dtype = t.aval.dtype
    if kind is FftType.RFFT:
        if _dt.is_complex(dtype):
            raise dtype_error("fft", f"lax.fft: RFFT takes real operands, got {t.aval}")
        target = dtype if _dt.is_float(dtype) else _dt.DEFAULT_FLOAT
    else:
        target = _dt.complex_dtype(dtype) or _dt.DEFAULT_COMPLEX  # a complex dtype is its own
    return t if target == dtype else wrap(E.convert(t.atom, target))


@op
def fft(x: AnyTensor, fft_type: FftType | str, fft_lengths: Sequence[int]) -> AnyTensor:
    """XLA's FFT of the trailing ``len(fft_lengths)`` axes (1 to 3): FFT, IFFT (scaled by 1/n), RFFT (real in,
    ``n // 2 + 1`` frequencies out) or IRFFT (back to ``fft_lengths[-1]`` real values)."""
    kind = _fft_type(fft_type)
    t = _fft_operand(x, kind)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    if not lengths:
        return t  # type: ignore[no-any-return]
    return wrap(F.fft(t.atom, kind.name, lengths))


# ----------------------------------------------------------------------------------------------- mulhi


@op
def mulhi(x: Tensor[DT, Unpack[S]], y: Tensor[DT, Unpack[S]] | int) -> Tensor[DT, Unpack[S]]:
    """The high half of each integer product: the top N bits of the 2N-bit ``x * y`` (signed or unsigned)."""
    a, b = strict_atoms("mulhi", x, y)
    dtype = a.aval.dtype
    if not _dt.is_integer(dtype):
        raise dtype_error("mulhi", f"lax.mulhi needs integer operands, got {a.aval} and {b.aval}")
    if a.aval.shape and b.aval.shape and a.aval.shape != b.aval.shape:
        raise shape_error("mulhi", f"lax.mulhi requires operands of one shape (or rank 0), got {a.aval} and {b.aval}")
    bits = dtype.itemsize * 8
    if bits == 64:
        return _mulhi64(wrap(a), wrap(b), _dt.is_signed(dtype))  # type: ignore[no-any-return]
    # Narrower: the exact product fits 64 bits (wrapped as i64 for u32: its logical shift still reads it right).
    wide = np.dtype(np.int64)
    product = convert_element_type(wrap(a), wide) * convert_element_type(wrap(b), wide)
    shift = shift_right_arithmetic if _dt.is_signed(dtype) else shift_right_logical
    return convert_element_type(shift(product, bits), dtype)


def _mulhi64(x: Any, y: Any, signed: bool) -> Any:
    """The high 64 bits of the 128-bit product from four 32x32-bit partial products (i64 holds the u64 bits:
    products and sums wrap alike, and the shifts are logical)."""
    mask = 0xFFFFFFFF
    x_lo, x_hi = x & mask, shift_right_logical(x, 32)
    y_lo, y_hi = y & mask, shift_right_logical(y, 32)
    lo_lo, lo_hi, hi_lo = x_lo * y_lo, x_lo * y_hi, x_hi * y_lo
    cross = (lo_hi & mask) + (hi_lo & mask) + shift_right_logical(lo_lo, 32)
    high = (x_hi * y_hi + shift_right_logical(lo_hi, 32) + shift_right_logical(hi_lo, 32)
            + shift_right_logical(cross, 32))
    if signed:  # the unsigned product less y for a negative x and x for a negative y (mod 2^64)
        high = high + shift_right_arithmetic(x, 63) * y + shift_right_arithmetic(y, 63) * x
    return high


# ------------------------------------------------------------------------------------- gathers, scatters


@op
def index_take(src: Tensor[DT, Unpack[tuple[Any, ...]]], idxs: Sequence[AnyTensor],
               axes: Sequence[int]) -> Tensor[DT, Unpack[tuple[Any, ...]]]:
    """``src`` at one index per axis of ``axes`` for each row (``idxs`` one 1-d index array per axis, wrapped
    modulo the axis size): shape ``(rows, *remaining axes)``."""
    x = as_tensor(src)
    axes_t = checked_axes("index_take", axes, x.ndim)
    if len(idxs) != len(axes_t) or not axes_t:
        raise shape_error("index_take", f"lax.index_take needs one index array per axis of {axes_t}, got {len(idxs)}")
    columns = [as_tensor(i) for i in idxs]
    if any(c.ndim != 1 or not _dt.is_integer(c.dtype) for c in columns):
        raise dtype_error("index_take", f"lax.index_take needs 1-d integer index arrays, got "
                                        f"{', '.join(describe(c) for c in columns)}")
    sizes = tnp.asarray(np.array([x.shape[a] for a in axes_t]), dtype=columns[0].dtype)
    indices = tnp.stack(columns, axis=1) % sizes
    slice_sizes = tuple(1 if a in axes_t else n for a, n in enumerate(x.shape))
    dims = GatherDimensionNumbers(offset_dims=tuple(range(1, x.ndim - len(axes_t) + 1)),
                                  collapsed_slice_dims=axes_t, start_index_map=axes_t)
    return gather(x, indices, dims, slice_sizes)


def scatter_apply(operand: Tensor[DT, Unpack[S]], scatter_indices: AnyTensor, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Tensor[DT, Unpack[S]]:
    """``operand`` with ``func`` (a function of one element) applied to the elements the windows of
    ``update_shape`` at ``scatter_indices`` cover, once per window covering each (JAX's ``lax.scatter_apply``:
    ``update_shape`` is the shape the updates of a ``lax.scatter`` with these indices would have)."""
    return _scatter_apply(operand, scatter_indices, func, dimension_numbers, tuple(update_shape),  # type: ignore[no-any-return]
                          GatherScatterMode.from_any(mode))


@op
def _scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                   dimension_numbers: ScatterDimensionNumbers, update_shape: tuple[int, ...],
                   mode: GatherScatterMode) -> Any:
    x = as_tensor(operand)
    hits = scatter_add(tnp.zeros(x.shape, dtype=np.int32), scatter_indices,
                       tnp.ones(update_shape, dtype=np.int32), dimension_numbers, mode=mode)
    per_element = vmap(func)  # func sees one element, as XLA's update computation does

    def applied(v: Any) -> Any:
        out = as_tensor(per_element(reshape(v, (math.prod(x.shape),))))
        if out.dtype != x.dtype or out.ndim != 1:
            raise dtype_error("scatter_apply", f"lax.scatter_apply: func must map a {x.dtype} element to one "
                                               f"{x.dtype} element, got {out.aval} for {x.aval}'s elements")
        return reshape(out, tuple(x.shape))

    def body(carry: Any) -> Any:
        i, v = carry
        return i + 1, select(hits > i, applied(v), v)

    most = reduce_max(hits, tuple(range(x.ndim)))  # the most-hit element's count (empty: the lowest int)
    _, out = while_loop(lambda carry: carry[0] < most, body, (tnp.asarray(0, dtype=np.int32), x))
    return out


# ------------------------------------------------------------------------------------------ ragged dots


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """``ragged_dot_general``'s axes: ``dot_general``'s dimension numbers, the one ragged axis of ``lhs`` and the
    group axis of ``rhs`` (one when the ragged axis is a free one, none otherwise)."""

    dot_dimension_numbers: DimensionNumbers
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __post_init__(self) -> None:
        (lc, rc), (lb, rb) = self.dot_dimension_numbers
        object.__setattr__(self, "dot_dimension_numbers", ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(int(d) for d in self.lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(int(d) for d in self.rhs_group_dimensions))


_BASIC_RAGGED = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def _group_masked(x: Any, group_sizes: Any, axis: int) -> Any:
    """``x`` repeated along a new leading group axis, copy ``j`` zero outside group ``j``'s span of ``axis``
    (groups consecutive from 0; positions past the last group are zero in every copy)."""
    g = group_sizes.shape[0]
    shape = (g, *x.shape)
    ends = cumsum(group_sizes)
    position = broadcasted_iota(group_sizes.dtype, shape, axis + 1)
    inside = ((broadcast_in_dim(ends - group_sizes, shape, (0,)) <= position)
              & (position < broadcast_in_dim(ends, shape, (0,))))
    copies = broadcast_in_dim(x, shape, tuple(range(1, x.ndim + 1)))
    return select(inside, copies, tnp.zeros_like(copies))


def _ragged_operands(lhs: Any, rhs: Any, group_sizes: Any, group_offset: Any) -> tuple[Any, Any, Any]:
    if group_offset is not None:
        raise NotImplementedError("lax.ragged_dot: group_offset is not supported (JAX's implementations refuse it too)")
    a, b, gs = as_tensor(lhs), as_tensor(rhs), as_tensor(group_sizes)
    if gs.ndim != 1 or not _dt.is_integer(gs.dtype):
        raise dtype_error("ragged_dot", f"lax.ragged_dot: group_sizes must be a 1-d integer array [g], got {gs.aval}")
    return a, b, gs


def _ragged_mode(lhs_ndim: int, dn: RaggedDotDimensionNumbers) -> tuple[str, int]:
    (lc, _), (lb, _) = dn.dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ValueError(f"lax.ragged_dot_general: needs one lhs ragged dimension, got {dn.lhs_ragged_dimensions}")
    (ragged,) = checked_axes("ragged_dot_general", dn.lhs_ragged_dimensions, lhs_ndim)
    mode = "batch" if ragged in lb else "contracting" if ragged in lc else "noncontracting"
    wanted = 1 if mode == "noncontracting" else 0
    if len(dn.rhs_group_dimensions) != wanted:
        raise ValueError(f"lax.ragged_dot_general: a {mode} ragged dimension needs {wanted} rhs group dimension(s), "
                         f"got {dn.rhs_group_dimensions}")
    return mode, ragged


def _check_groups(name: str, gs: Any, size: int, what: str) -> None:
    if gs.shape[0] != size:
        raise shape_error(name, f"lax.{name}: group_sizes {gs.aval} must have one size per group ({what}: {size})")


@op
def ragged_dot_general(lhs: AnyTensor, rhs: AnyTensor, group_sizes: AnyTensor,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers, precision: PrecisionLike = None,
                       preferred_element_type: Any = None, group_offset: AnyTensor | None = None) -> AnyTensor:
    """A ``dot_general`` whose ``lhs`` ragged axis is cut into consecutive groups of ``group_sizes``: a free
    ragged axis takes group ``j``'s rows against ``rhs``'s group ``j``; a contracting one gives one product per
    group (a new leading axis of size ``g``); a batch one is a plain ``dot_general``."""
    a, b, gs = _ragged_operands(lhs, rhs, group_sizes, group_offset)
    dn = ragged_dot_dimension_numbers
    mode, ragged = _ragged_mode(a.ndim, dn)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    def shift(dims: Sequence[int]) -> tuple[int, ...]:  # the axes of an operand given a leading group axis
        return tuple(d + 1 for d in dims)

    def product(x: Any, y: Any, numbers: DimensionNumbers) -> AnyTensor:
        return dot_general(x, y, numbers, precision=precision, preferred_element_type=preferred_element_type)

    if mode == "batch":
        return product(a, b, dn.dot_dimension_numbers)
    if mode == "noncontracting":
        (group_axis,) = checked_axes("ragged_dot_general", dn.rhs_group_dimensions, b.ndim)
        _check_groups("ragged_dot_general", gs, b.shape[group_axis], f"rhs axis {group_axis}")
        return product(_group_masked(a, gs, ragged), b, ((shift(lc) + (0,), tuple(rc) + (group_axis,)),
                                                         (shift(lb), tuple(rb))))
    rhs_ragged = tuple(rc)[tuple(lc).index(ragged)]
    return product(_group_masked(a, gs, ragged), _group_masked(b, gs, rhs_ragged),
                   ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb))))


@op
def ragged_dot(lhs: AnyTensor, rhs: AnyTensor, group_sizes: AnyTensor, precision: PrecisionLike = None,
               preferred_element_type: Any = None, group_offset: AnyTensor | None = None) -> AnyTensor:
    """Grouped matrix product (mixture of experts): ``lhs`` ``[m, k]``'s rows in consecutive groups of
    ``group_sizes`` ``[g]``, group ``j``'s rows times ``rhs[j]`` (``rhs`` ``[g, k, n]``) -> ``[m, n]``; rows past
    the last group are zero."""
    a, b, _ = _ragged_operands(lhs, rhs, group_sizes, group_offset)
    if a.ndim != 2 or b.ndim != 3:
        raise shape_error("ragged_dot", f"lax.ragged_dot needs lhs [m, k] and rhs [g, k, n], got {a.aval} and {b.aval}")
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_RAGGED, precision, preferred_element_type)


# ------------------------------------------------------------------------------------------ convolution


@op
def conv_general_dilated_local(
    lhs: AnyTensor, rhs: AnyTensor, window_strides: Sequence[int], padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int], lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None, dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    precision: PrecisionLike = None,
) -> AnyTensor:
    """A locally connected (unshared) convolution: a kernel per output position. ``rhs`` has, in the layout of
    ``dimension_numbers``' kernel spec, the output features ``O``, ``I = in_features * prod(filter_shape)`` and
    the output's spatial sizes (JAX's ``lax.conv_general_dilated_local``)."""
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers)
    x, k = as_tensor(lhs), as_tensor(rhs)
    dims = conv_dimension_numbers(x.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_batch = list(dims.out_spec[2:])
    rhs_batch = [dims.rhs_spec[2:][i] for i in sorted(range(len(lhs_batch)), key=lambda j: lhs_batch[j])]
    p = as_tensor(patches)
    if k.ndim != p.ndim:
        raise shape_error("conv_general_dilated_local", f"lax.conv_general_dilated_local: the kernel {k.aval} must "
                                                        f"have the patches' rank, {p.aval}")
    dn = (((dims.out_spec[1],), (dims.rhs_spec[1],)), (tuple(sorted(lhs_batch)), tuple(rhs_batch)))
    out = dot_general(patches, k, dn, precision=precision)
    return tnp.moveaxis(out, (-2, -1), (dims.out_spec[0], dims.out_spec[1]))


# ---------------------------------------------------------------------------------------- random bits


@op
def rng_bit_generator(key: Tensor[u32, Any], shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT) -> tuple[Tensor[u32, Any], AnyTensor]:
    """XLA's stateless bit generator: ``(new_key, bits)``, ``bits`` of ``shape`` uniformly random in ``dtype``
    (``u8`` or ``u32``) from ``key`` (``u32[4]``, as JAX's) by ``algorithm`` (XLA's THREE_FRY or PHILOX;
    ``RNG_DEFAULT`` lets the platform choose). Integer results: no derivative."""
    k = as_tensor(key)
    bits_dtype = dtype_argument("rng_bit_generator", dtype)
    sizes = tuple(operator.index(n) for n in ((shape,) if isinstance(shape, int) else shape))
    try:
        method = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"lax.rng_bit_generator: algorithm must be a lax.RandomAlgorithm, got {algorithm!r}") from None
    new_key, bits = RB.rng_bit_generator(k.atom, sizes, bits_dtype, method.name)
    return wrap(new_key), wrap(bits)


# ----------------------------------------------------------------------------------------- staging tools


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def platform_dependent(*args: Any, default: Callable[..., T] | None = None, **per_platform: Callable[..., T]) -> T:
    """``per_platform[platform](*args)`` for the platform the program is staged for (the default one:
    ``TENSORSTAGE_DEFAULT_DEVICE``; a GPU is ``cuda``, or ``rocm`` when only that branch is given), else
    ``default(*args)``."""
    for name, branch in per_platform.items():
        if name == "gpu":
            raise ValueError("lax.platform_dependent: use 'cuda' or 'rocm' for a GPU branch (as JAX), not 'gpu'")
        if name not in _PLATFORMS:
            raise ValueError(f"lax.platform_dependent: unknown platform {name!r}; expected one of {_PLATFORMS}")
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the {name!r} branch must be a callable")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable")
    names = ("cuda", "rocm") if default_backend() == "gpu" else (default_backend(),)
    chosen = next((per_platform[n] for n in names if n in per_platform), default)
    if chosen is None:
        raise ValueError(f"lax.platform_dependent: no branch for platform {names[0]!r} and no default "
                         f"(branches: {sorted(per_platform)})")
    return chosen(*args)


def composite(decomposition: Callable[..., T], name: str, version: int = 0) -> Callable[..., T]:
    """``decomposition`` as JAX's composite op ``name``: here it is simply called (keyword arguments are its
    static attributes and must not be staged tensors, as in JAX)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"lax.composite: name must be a non-empty string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args: Any, **attributes: Any) -> T:
        staged = [k for k, v in attributes.items() if any(isinstance(leaf, Tensor) for leaf in pytree.leaves(v))]
        if staged:
            raise TypeError(f"lax.composite {name!r}: attributes {staged} hold tensors; attributes are static "
                            "(pass NumPy arrays, or pass the tensors as positional arguments)")
        return decomposition(*args, **attributes)

    return call


_PYTHON_SCALARS: dict[type, np.dtype[Any]] = {
    bool: _dt.BOOL, int: _dt.DEFAULT_INT, float: _dt.DEFAULT_FLOAT, complex: _dt.DEFAULT_COMPLEX,
}


def dtype(x: Any) -> np.dtype[Any]:
    """The dtype of a value (an array, a tensor, a Python or NumPy scalar) or of a dtype-like (``ts.f32``,
    ``np.float32``, ``'float32'``, ``float``), as the ``np.dtype`` it gives ``ts`` arrays."""
    if x is None:
        raise ValueError("lax.dtype: None has no dtype")
    if type(x) in _PYTHON_SCALARS:
        return _PYTHON_SCALARS[type(x)]
    held = getattr(x, "dtype", None)
    if held is not None and not isinstance(x, type):
        return to_numpy(held)
    try:
        return to_numpy(x)
    except (TypeError, ValueError):
        raise TypeError(f"lax.dtype: {x!r} is neither an array nor a dtype") from None


def empty(shape: int | Sequence[int], dtype: Any, *, out_sharding: Any = None) -> AnyTensor:
    """An array of ``shape`` and ``dtype`` whose values are not to be relied on (zeros here)."""
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    return full(sizes, 0, dtype_argument("empty", dtype))


def shape_as_value(shape: Sequence[int]) -> np.ndarray[Any, np.dtype[Any]]:
    """``shape`` as a 1-d signed integer array (int32, or int64 for sizes beyond it), as JAX's for static shapes."""
    sizes = [operator.index(n) for n in shape]
    wide = any(n > np.iinfo(np.int32).max for n in sizes)
    return np.asarray(sizes, dtype=np.int64 if wide else np.int32)


def stage(x: Any, /) -> AnyTensor:
    """``x`` (an array, NumPy array or Python scalar) as a tensor of the program being staged (outside staging:
    an Array), unchanged in value."""
    return _staged(x)


@op
def _staged(x: Any) -> AnyTensor:
    return as_tensor(x)
