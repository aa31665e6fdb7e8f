"""tnp.linalg on complex matrices: the SVD's singular values, norms, condition numbers and lstsq's residuals have the
real dtype of the parts (f32 for c64); factors, pseudo-inverses and solutions keep the complex dtype."""

from __future__ import annotations

from typing import Any

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, f32, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Rows(Dim): ...
class Cols(Dim): ...


DIMS = dict(Batch=2, Rows=4, Cols=3)


@ts.program
def spectrum(a: Tensor[c64, Batch, Rows, Cols]) -> Tensor[f32, Batch, Any]:
    u, s, vh = tnp.linalg.svd(a, full_matrices=False)
    left: Tensor[c64, Batch, Rows, Any] = u
    right: Tensor[c64, Batch, Any, Cols] = vh
    values: Tensor[f32, Batch, Any] = tnp.linalg.svdvals(a)
    only: Tensor[f32, Batch, Any] = tnp.linalg.svd(a, compute_uv=False)
    inverse: Tensor[c64, Batch, Cols, Rows] = tnp.linalg.pinv(a)
    rank: Tensor[i32, Any] = tnp.linalg.matrix_rank(a)
    condition: Tensor[f32, Batch] = tnp.linalg.cond(a)
    size: Tensor[f32, Any] = tnp.linalg.norm(a, "fro", axis=(1, 2)) + tnp.linalg.matrix_norm(a, ord=2)
    size = size + tnp.linalg.vector_norm(a, axis=-1).sum() + rank.astype(f32)
    energy = tnp.abs(left).sum() + tnp.abs(right).sum() + tnp.abs(inverse).sum()
    return s + values + only + (condition + size + energy)[:, None]


@ts.program
def least_squares(a: Tensor[c64, Rows, Cols], b: Tensor[c64, Rows]) -> Tensor[f32, Any]:
    x, residuals, rank, s = tnp.linalg.lstsq(a, b)
    res: Tensor[f32, Any] = residuals
    values: Tensor[f32, Any] = s
    return values + tnp.abs(x).sum() + res.sum() + rank.astype(f32)
