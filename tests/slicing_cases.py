"""Registry cases for the slicing and gather/scatter primitives (merged into ``primitive_cases.CASES``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from primitive_cases import CASES, Case, normal, operands
from tensorstage.staging.primitives.gather_scatter import GatherDims, ScatterDims

I32 = np.dtype(np.int32)
FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int32")


def _with_ints(shapes: list[tuple[int, ...]], ints: list[np.ndarray]) -> Any:
    """Operands of the case dtype followed by fixed integer operands (indices)."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        base = operands(*shapes)(rng, dtype)
        return base + [np.asarray(i, dtype=np.int32) for i in ints]

    return make


def _scatter_operands(shape: tuple[int, ...], indices: Any, update_shape: tuple[int, ...]) -> Any:
    """(operand, indices, updates), in the scatter primitive's order."""

    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        x, u = operands(shape, update_shape)(rng, dtype)
        return [x, np.asarray(indices, dtype=np.int32), u]

    return make


def _clamped(starts: Any, sizes: Any, shape: Any) -> list[int]:
    return [int(min(max(int(s), 0), n - k)) for s, k, n in zip(starts, sizes, shape)]


def _dynamic_slice_ref(x: np.ndarray, *starts: Any, slice_sizes: Any) -> np.ndarray:
    lo = _clamped(starts, slice_sizes, x.shape)
    return x[tuple(slice(a, a + k) for a, k in zip(lo, slice_sizes))]


def _dus_ref(x: np.ndarray, u: np.ndarray, *starts: Any) -> np.ndarray:
    lo = _clamped(starts, u.shape, x.shape)
    out = x.copy()
    out[tuple(slice(a, a + k) for a, k in zip(lo, u.shape))] = u
    return out


def _pad_ref(x: np.ndarray, value: np.ndarray, *, padding_config: Any) -> np.ndarray:
    out = x
    for axis, (lo, hi, interior) in enumerate(padding_config):
        n = out.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = size
        spread = np.full(shape, value, dtype=out.dtype)
        index = [slice(None)] * out.ndim
        index[axis] = slice(0, size, interior + 1)
        spread[tuple(index)] = out
        before = np.full([*shape[:axis], max(lo, 0), *shape[axis + 1:]], value, dtype=out.dtype)
        after = np.full([*shape[:axis], max(hi, 0), *shape[axis + 1:]], value, dtype=out.dtype)
        out = np.concatenate([before, spread, after], axis=axis)
        crop = [slice(None)] * out.ndim
        crop[axis] = slice(max(-lo, 0), out.shape[axis] - max(-hi, 0))
        out = out[tuple(crop)]
    return out


ROWS = GatherDims(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)
# Per-row column windows of width 2: operand (B=3, 6), indices (3, 1) paired with the batch axis.
BATCHED = GatherDims(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,), index_vector_dim=1,
                     operand_batching_dims=(0,), start_indices_batching_dims=(0,))
INTO_ROWS = ScatterDims(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                        index_vector_dim=1)
POINTS = ScatterDims(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1),
                     index_vector_dim=1)


def _scatter_rows_ref(x: np.ndarray, idx: np.ndarray, u: np.ndarray, *, combiner: str, **_: Any) -> np.ndarray:
    out = x.copy()
    ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}
    if combiner == "set":
        out[idx[:, 0]] = u
    else:
        ufunc[combiner].at(out, idx[:, 0], u)
    return out


def _scatter_points_ref(x: np.ndarray, idx: np.ndarray, u: np.ndarray, **_: Any) -> np.ndarray:
    out = x.copy()
    for (i, j), v in zip(idx, u):
        if 0 <= i < x.shape[0] and 0 <= j < x.shape[1]:  # out-of-range updates are dropped
            out[i, j] += v
    return out


def _batched_gather_ref(x: np.ndarray, idx: np.ndarray, **_: Any) -> np.ndarray:
    starts = np.clip(idx[:, 0], 0, x.shape[1] - 2)
    return np.stack([x[b, s:s + 2] for b, s in enumerate(starts)])


SLICING_CASES: dict[str, list[Case]] = {
    "iota": [Case(lambda rng, dtype: [], lambda **p: np.broadcast_to(np.arange(4), (3, 4)),
                  {"shape": (3, 4), "dimension": 1, "dtype": I32, "names": (None, None)}, dtypes=("int32",))],
    "slice": [Case(normal(5, 6), lambda x, **p: x[1:4, 0:6:2],
                   {"start_indices": (1, 0), "limit_indices": (4, 6), "strides": (1, 2)}, dtypes=NUMERIC)],
    "rev": [Case(normal(3, 4), lambda x, dimensions: np.flip(x, dimensions), {"dimensions": (0, 1)}, dtypes=NUMERIC)],
    "dynamic_slice": [
        Case(_with_ints([(5, 4)], [1, 2]), _dynamic_slice_ref, {"slice_sizes": (2, 2)}, dtypes=NUMERIC),
        Case(_with_ints([(5, 4)], [9, -3]), _dynamic_slice_ref, {"slice_sizes": (2, 3)}, label="clamped"),
    ],
    "dynamic_update_slice": [
        Case(_with_ints([(5, 4), (2, 3)], [2, 1]), _dus_ref, dtypes=NUMERIC),
        Case(_with_ints([(5, 4), (2, 3)], [7, -1]), _dus_ref, label="clamped"),
    ],
    "concatenate": [Case(operands((2, 3), (4, 3), (1, 3)), lambda *xs, dimension: np.concatenate(xs, dimension),
                         {"dimension": 0}, dtypes=NUMERIC)],
    "pad": [Case(operands((3, 4), ()), _pad_ref, {"padding_config": ((1, 2, 1), (0, -1, 0))}, dtypes=NUMERIC),
            Case(operands((2, 3), ()), _pad_ref, {"padding_config": ((-1, 1, 2), (2, 0, 0))}, label="crop")],
    "gather": [
        Case(_with_ints([(5, 4)], [[[3], [0], [3]]]), lambda x, idx, **p: x[idx[:, 0]],
             {"dimension_numbers": ROWS, "slice_sizes": (1, 4)}, dtypes=NUMERIC, label="rows"),
        Case(_with_ints([(5, 4)], [[[7], [-2]]]), lambda x, idx, **p: x[np.clip(idx[:, 0], 0, 4)],
             {"dimension_numbers": ROWS, "slice_sizes": (1, 4)}, label="clamped"),
        Case(_with_ints([(3, 6)], [[[1], [5], [0]]]), _batched_gather_ref,
             {"dimension_numbers": BATCHED, "slice_sizes": (1, 2)}, label="batching dims"),
    ],
    "scatter": [
        *(Case(_scatter_operands((5, 4), [[3], [0], [3]], (3, 4)), _scatter_rows_ref,
               {"dimension_numbers": INTO_ROWS, "combiner": c}, dtypes=NUMERIC, label=f"{c} duplicates")
          for c in ("add", "mul", "min", "max")),
        Case(_scatter_operands((5, 4), [[3], [0], [1]], (3, 4)), _scatter_rows_ref,
             {"dimension_numbers": INTO_ROWS, "combiner": "set"}, dtypes=NUMERIC, label="set"),
        Case(_scatter_operands((3, 4), [[0, 1], [2, 3], [0, 1], [5, 0]], (4,)), _scatter_points_ref,
             {"dimension_numbers": POINTS, "combiner": "add"}, label="points, one dropped"),
    ],
}

CASES.update(SLICING_CASES)
