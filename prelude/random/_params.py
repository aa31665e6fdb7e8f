"""What the parameterized samplers share: picking the result dtype, resolving ``shape=None`` from the parameters,
broadcasting parameters to the sample shape, drawing open-interval uniforms, and a ``log Γ`` for rejection tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ...dtypes import to_numpy
from ...staging import dtypes as _dt
from ...staging.ir import DimName
from ...tensor import Tensor, Traced
from ..numpy import any as any_, broadcast_to, log, logical_and, logical_not
from ..numpy._core import ShapeLike, as_tensor, atom, describe, dtype_error, parse_shape, shape_error, wrap
from ._distributions import _uniform
from ._keys import Key

Shape = tuple[tuple[int, ...], tuple[DimName, ...]]


def float_dtypes(op_name: str, dtype: Any, *params: Any) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """``(result dtype, working dtype)``: ``dtype``, else the first tensor parameter's, else f32; half-precision
    results are computed in f32. Tensor parameters must already have the result dtype (no implicit casts)."""
    # NumPy data is typed like a tensor (a staged program holds it as a constant, not a Tensor).
    tensors = [p for p in params if isinstance(p, (Tensor, np.ndarray, np.generic))]
    if dtype is None:
        first = np.dtype(tensors[0].dtype) if tensors else None
        target = first if first is not None and _dt.is_float(first) else _dt.DEFAULT_FLOAT
    else:
        target = to_numpy(dtype)
    if not _dt.is_float(target):
        raise dtype_error(op_name, f"{op_name} draws floating-point values; got dtype {_dt.short_name(target)}")
    for p in tensors:
        if np.dtype(p.dtype) != target:
            raise dtype_error(
                op_name, f"parameters must be {_dt.short_name(target)} (the result dtype), got {describe(p)}"
            )
    return target, (target if target.itemsize >= 4 else np.dtype(np.float32))


def sample_shape(op_name: str, shape: ShapeLike | None, *params: Any, core: int = 0) -> Shape:
    """The sample shape: ``shape``, or (None) the parameters' broadcast shape (each parameter's last ``core`` axes
    excluded). An explicit shape must be one every parameter broadcasts to."""
    shapes = [tuple(np.shape(p) if not isinstance(p, Tensor) else p.aval.shape) for p in params]
    batch = [s[: len(s) - core] for s in shapes]
    try:
        implied = tuple(np.broadcast_shapes(*batch))
    except ValueError:
        raise shape_error(
            op_name, "parameters do not broadcast together: " + ", ".join(describe(p) for p in params)
        ) from None
    if shape is None:
        return implied, (None,) * len(implied)
    sizes, names = parse_shape(op_name, shape)
    for p, b in zip(params, batch):
        ok = len(b) <= len(sizes) and all(n in (1, m) for n, m in zip(b[::-1], sizes[::-1]))
        if not ok:
            raise shape_error(op_name, f"parameter {describe(p)} does not broadcast to the sample shape {sizes}")
    return sizes, names


def param(value: Any, work: np.dtype[Any], sizes: Sequence[int], core: Sequence[int] = ()) -> Any:
    """A parameter in the working dtype, broadcast to ``(*sizes, *core)``."""
    typed = isinstance(value, (Tensor, np.ndarray, np.generic))
    t = as_tensor(value).astype(work) if typed else wrap(atom(value, work))
    full = (*sizes, *core)
    return t if t.aval.shape == full else as_tensor(broadcast_to(t, full))


def open_uniform(op_name: str, key: Key, sizes: tuple[int, ...], work: np.dtype[Any]) -> Traced[Any]:
    """Uniform floats in ``(0, 1)``: the smallest normal float stands in for 0, so logs stay finite."""
    tiny = float(ml_dtypes.finfo(work).tiny)  # type: ignore[no-untyped-call]  # np.finfo has no bf16
    return as_tensor(_uniform(op_name, key, sizes, work, tiny, 1.0))


_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))


def log_gamma(x: Any) -> Any:
    """``log Γ(x)`` for ``x >= 1`` (absolute error below 1e-9): Stirling's series at ``x + 8``, shifted back
    by the recurrence ``Γ(x + 1) = x Γ(x)``."""
    y = x + 8.0
    inv = 1.0 / y
    inv2 = inv * inv
    series = inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 / 1260))
    stirling = (y - 0.5) * log(y) - y + _HALF_LOG_2PI + series
    shift = log(x)
    for i in range(1, 8):
        shift = shift + log(x + float(i))
    return as_tensor(stirling - shift)


def until_done(limit: int) -> Any:
    """The condition of a bounded rejection loop whose carry is ``(rounds, draws, done, key)``: some element is
    still rejected and fewer than ``limit`` rounds ran."""

    def more(carry: Any) -> Any:
        rounds, _, done, _ = carry
        return logical_and(rounds < limit, any_(logical_not(done)))

    return more
