"""Sorting, cumulative, math, NaN-aware and matrix functions keep the shapes and dtypes the checker can see."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class Feature(Dim): ...


DIMS = dict(Batch=4, Feature=3)


@ts.program
def ranked(x: Tensor[f32, Batch, Feature]) -> Tensor[i32, Batch, Feature]:
    ordered: Tensor[f32, Batch, Feature] = tnp.sort(x, axis=0)
    running: Tensor[f32, Batch, Feature] = tnp.cumsum(ordered, axis=0)
    smooth: Tensor[f32, Batch, Feature] = tnp.arcsinh(running) + tnp.flip(x, axis=1) + tnp.roll(x, 1, axis=0)
    return tnp.argsort(smooth, axis=-1)


@ts.program
def summaries(x: Tensor[f32, Batch, Feature], m: Tensor[f32, Feature, Feature]) -> Tensor[f32, Feature]:
    square: Tensor[f32, Feature, Feature] = tnp.tril(m) + tnp.triu(m, 1).T
    per_feature: Tensor[f32, Feature] = tnp.nanmean(x, axis=Batch) + tnp.median(x, axis=0)
    return per_feature @ square + tnp.trace(m)


@ts.program
def packed(codes: Tensor[i32, Batch, Feature], shifts: Tensor[i32, Feature]) -> Tensor[i32, Batch, Feature]:
    high: Tensor[i32, Batch, Feature] = codes << shifts
    low: Tensor[i32, Batch, Feature] = (codes >> 2) & tnp.right_shift(codes, 1)
    quotient, rest = divmod(codes, 7)
    return high + low + quotient + rest + (1 << shifts) + tnp.left_shift(codes, shifts)


@ts.program
def averages(counts: Tensor[i32, Batch, Feature], x: Tensor[f32, Batch, Feature]) -> Tensor[f64, Feature]:
    per_feature: Tensor[f32, Feature] = tnp.mean(counts, axis=Batch, dtype=f32)
    precise: Tensor[f64, Feature] = x.mean(axis=0, dtype=f64)
    whole: Tensor[f64] = counts.mean(dtype=f64) + tnp.std(x, ddof=1, dtype=f64)
    unbiased: Tensor[f32, Feature] = x.var(axis=Batch, ddof=1) + x.std(0, False, 1)
    spread: Tensor[f64, Batch] = counts.std(axis=1, ddof=1, dtype=f64)
    return precise + per_feature.astype(f64) + whole + unbiased.astype(f64) + spread.sum()
