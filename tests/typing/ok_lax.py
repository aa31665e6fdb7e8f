"""ts.lax keeps dtypes and dims where JAX's lax keeps them: elementwise functions, select, clamp, rev and
dynamic_update_slice return their operand's type; comparisons give bool; argmax's index dtype is its argument."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, bool_, f32, i32
from tensorstage import lax


class Batch(Dim): ...
class Feature(Dim): ...


DIMS = dict(Batch=4, Feature=6)


@ts.program
def strict_step(x: Tensor[f32, Batch, Feature], bias: Tensor[f32], i: Tensor[i32]) -> Tensor[f32, Batch, Feature]:
    y: Tensor[f32, Batch, Feature] = lax.add(lax.exp(lax.neg(x)), bias)
    y = lax.max(lax.mul(y, 2.0), lax.logistic(x))
    positive: Tensor[bool_, Batch, Feature] = lax.gt(y, 0.0)
    y = lax.select(positive, y, lax.tanh(y))
    y = lax.clamp(-1.0, y, 1.0)
    y = lax.rev(y, (0,))
    window = lax.dynamic_slice(y, (i, 0), (2, 6))
    y = lax.dynamic_update_slice(y, lax.mul(window, 0.5), (i, 0))
    first: Tensor[i32, Batch] = lax.argmax(y, 1, i32)
    summed = lax.cumsum(y, axis=1, reverse=True)
    return lax.add(summed, lax.convert_element_type(lax.broadcast_in_dim(first, (4, 6), (0,)), f32))


@ts.program
def solves(a: Tensor[f32, Feature, Feature], b: Tensor[f32, Feature, Batch], d: Tensor[f32, Feature]) -> Tensor[f32, Feature, Batch]:
    """lax.linalg's solves keep the right-hand side's type; reduce_precision keeps its operand's."""
    x: Tensor[f32, Feature, Batch] = lax.linalg.triangular_solve(a, b, left_side=True, lower=True)
    y: Tensor[f32, Feature, Batch] = lax.linalg.tridiagonal_solve(d, lax.add(lax.abs(d), 8.0), d, b)
    rounded: Tensor[f32, Feature, Batch] = lax.reduce_precision(y, 8, 7)
    return lax.add(lax.tanh(x), rounded)
