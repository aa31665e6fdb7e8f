"""Complex matrices in ts.scipy.linalg and ts.lax.linalg: factorizations and solves of c64 matrices keep c64,
while the eigenvalues of a Hermitian matrix (scipy.linalg.eigh, lax.linalg.eigh), singular values and lu's
permutation matrix are real f32."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class N(Dim): ...


DIMS = dict(Batch=2, N=3)


@ts.program
def hermitian_parts(a: Tensor[c64, Batch, N, N]) -> Tensor[f32, Batch]:
    h: Tensor[c64, Batch, N, N] = a @ tnp.conj(tnp.swapaxes(a, -1, -2))
    upper: Tensor[c64, Batch, N, N] = ts.scipy.linalg.cholesky(h)
    factor, lower = ts.scipy.linalg.cho_factor(h, lower=True)
    solved: Tensor[c64, Batch, N, N] = ts.scipy.linalg.cho_solve((factor, lower), h)
    positive: Tensor[c64, Batch, N, N] = ts.scipy.linalg.solve(h, h, assume_a="pos")
    values, vectors = ts.scipy.linalg.eigh(h)
    spectrum: Tensor[f32, Batch, N] = values
    only: Tensor[f32, Batch, N] = ts.scipy.linalg.eigh(h, eigvals_only=True)
    lax_vectors, lax_values = ts.lax.linalg.eigh(h)
    lax_spectrum: Tensor[f32, Batch, N] = tnp.sum(tnp.abs(lax_vectors), axis=1) + tnp.sum(lax_values)
    low: Tensor[c64, Batch, N, N] = ts.lax.linalg.cholesky(h)
    back: Tensor[c64, Batch, N, N] = ts.lax.linalg.triangular_solve(low, h, left_side=True, lower=True,
                                                                     transpose_a=True, conjugate_a=True)
    exp: Tensor[c64, Batch, N, N] = ts.scipy.linalg.expm(h / 10)
    permutation, _, _ = ts.scipy.linalg.lu(h)
    rows: Tensor[f32, Batch, N, N] = permutation
    singular: Tensor[f32, Batch] = tnp.sum(ts.scipy.linalg.svd(h, compute_uv=False), axis=-1)
    extra: Tensor[f32, Batch] = tnp.sum(tnp.sum(rows, axis=-1), axis=-1) + singular
    matrices = upper + solved + positive + vectors + back + exp
    return tnp.sum(spectrum + only + lax_spectrum, axis=1) + tnp.sum(tnp.abs(matrices), axis=(1, 2)) + extra
