"""ts.scipy.linalg keeps the dims the checker can see: factors of square matrices, solves, expm, eigh."""

from __future__ import annotations

from typing import Any

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, f32, i32
from tensorstage.scipy import linalg as sla


class Batch(Dim): ...
class Rows(Dim): ...
class Cols(Dim): ...
class Rhs(Dim): ...


DIMS = dict(Batch=2, Rows=4, Cols=3, Rhs=2)


@ts.program
def lu_parts(a: Tensor[f32, Batch, Rows, Cols]) -> Tensor[f32, Batch, Rows, Cols]:
    p, low, up = sla.lu(a)
    perm: Tensor[f32, Batch, Rows, Rows] = p
    packed, piv = sla.lu_factor(a)
    pivots: Tensor[i32, Batch, Any] = piv
    pl, up2 = sla.lu(a, permute_l=True)
    return packed + perm @ low @ up + pl @ up2 + 0 * pivots.sum().astype(f32)


@ts.program
def solves(
    a: Tensor[f32, Batch, Rows, Rows], b: Tensor[f32, Batch, Rows, Rhs]
) -> Tensor[f32, Batch, Rows, Rhs]:
    spd = a @ a.mT + 4.0
    x1: Tensor[f32, Batch, Rows, Rhs] = sla.lu_solve(sla.lu_factor(a), b)
    x2: Tensor[f32, Batch, Rows, Rhs] = sla.cho_solve(sla.cho_factor(spd), b)
    x3: Tensor[f32, Batch, Rows, Rhs] = sla.solve_triangular(a, b, lower=True)
    x4: Tensor[f32, Batch, Rows, Rhs] = sla.solve(spd, b, assume_a="pos")
    return x1 + x2 + x3 + x4


@ts.program
def matrix_functions(a: Tensor[f32, Rows, Rows]) -> Tensor[f32, Rows, Rows]:
    e: Tensor[f32, Rows, Rows] = sla.expm(0.1 * a)
    w, v = sla.eigh(a + a.T)
    values: Tensor[f32, Rows] = sla.eigh(a + a.T, eigvals_only=True)
    upper: Tensor[f32, Rows, Rows] = sla.cholesky(a @ a.T + 4.0)
    inverse: Tensor[f32, Rows, Rows] = sla.inv(e)
    return e + v * (w + values) + upper + inverse + sla.det(a)


@ts.program
def more_functions(a: Tensor[f32, Rows, Rows], e: Tensor[f32, Rows, Rows]) -> Tensor[f32, Rows, Rows]:
    value, frechet = sla.expm_frechet(a, e)
    only: Tensor[f32, Rows, Rows] = sla.expm_frechet(a, e, compute_expm=False)
    h: Tensor[f32, Rows, Rows] = sla.hessenberg(a)
    h2, q = sla.hessenberg(a, calc_q=True)
    q_form: Tensor[f32, Rows, Rows] = q
    t: Tensor[f32, Rows, Rows] = sla.schur(a)[0]
    z: Tensor[f32, Rows, Rows] = sla.schur(a)[1]
    u, p = sla.polar(a)
    fiedler: Tensor[f32, Rows, Rows] = sla.fiedler(a[0])
    return value + frechet + only + h + h2 + q_form + fiedler + 0 * (u.sum() + p.sum() + t.sum() + z.sum())


@ts.program
def schur_functions(
    a: Tensor[f32, Rows, Rows], b: Tensor[f32, Cols, Cols], c: Tensor[f32, Rows, Cols]
) -> Tensor[f32, Rows, Cols]:
    x: Tensor[f32, Rows, Cols] = sla.solve_sylvester(a, b, c)
    w: Tensor[f32, Any] = sla.eigh_tridiagonal(a[0], a[1, 1:], eigvals_only=True)
    root: Tensor[c64, Rows, Rows] = sla.sqrtm(a + 4.0 * ts.numpy.eye(4))
    exp: Tensor[c64, Rows, Rows] = sla.funm(a, lambda v: v * 2)
    comp: Tensor[f32, Any, Any] = sla.companion(a[0])
    others = comp.sum() + sla.pascal(3).sum()
    return x + 0 * (w.sum() + root.real.sum() + exp.real.sum() + others)
