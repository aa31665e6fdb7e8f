"""Complex linear algebra: factorizations of c64 matrices keep c64, while the eigenvalues of a Hermitian matrix
(eigh, eigvalsh) and slogdet's log|det| are real f32 (slogdet's sign stays c64)."""

from __future__ import annotations

import tensorstage as ts
from tensorstage import Dim, Tensor, c64, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class N(Dim): ...


DIMS = dict(Batch=2, N=3)


@ts.program
def spectra(a: Tensor[c64, Batch, N, N]) -> Tensor[f32, Batch]:
    h: Tensor[c64, Batch, N, N] = a @ tnp.conj(tnp.swapaxes(a, -1, -2))
    w: Tensor[f32, Batch, N] = tnp.linalg.eigvalsh(h)
    values, vectors = tnp.linalg.eigh(h, UPLO="U")
    low: Tensor[c64, Batch, N, N] = tnp.linalg.cholesky(h)
    sign, logdet = tnp.linalg.slogdet(h)
    unit: Tensor[c64, Batch] = sign
    log_abs: Tensor[f32, Batch] = logdet
    det: Tensor[c64, Batch] = tnp.linalg.det(h)
    inverse: Tensor[c64, Batch, N, N] = tnp.linalg.inv(h)
    solved: Tensor[c64, Batch, N, N] = tnp.linalg.solve_triangular(low, h, lower=True, trans="C")
    spectrum: Tensor[f32, Batch, N] = values
    sizes: Tensor[f32, Batch] = tnp.sum(tnp.abs(vectors), axis=(1, 2))
    return (tnp.sum(w + spectrum, axis=1) + log_abs + tnp.abs(unit) + tnp.abs(det) + sizes
            + tnp.sum(tnp.abs(inverse + solved), axis=(1, 2)))
