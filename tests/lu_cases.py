"""Registry cases for the lu primitives (staging/primitives/lu.py), merged into ``primitive_cases.CASES``."""

from __future__ import annotations

import numpy as np

from primitive_cases import CASES, Case, normal


def lu_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lu, pivots, permutation)`` by textbook partial pivoting in float64 / complex128 (the first row of largest
    ``|Re| + |Im|``, as LAPACK's ``i?amax``), batched over leading axes; independent of LAPACK."""
    *batch, m, n = a.shape
    k = min(m, n)
    packed = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64).reshape(int(np.prod(batch)), m, n)
    pivots = np.zeros((packed.shape[0], k), np.int32)
    perms = np.tile(np.arange(m, dtype=np.int32), (packed.shape[0], 1))
    for x, piv, perm in zip(packed, pivots, perms):
        for j in range(k):
            p = j + int(np.argmax(np.abs(x[j:, j].real) + np.abs(x[j:, j].imag)))  # LAPACK's i?amax
            piv[j] = p
            x[[j, p]] = x[[p, j]]
            perm[[j, p]] = perm[[p, j]]
            if x[j, j] != 0:
                x[j + 1:, j] /= x[j, j]
            x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    return packed.reshape(a.shape), pivots.reshape(*batch, k), perms.reshape(*batch, m)


def _singular(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:  # type: ignore[type-arg]
    """A 4x4 matrix whose first column is zero: the first pivot is an exact 0, kept (no row moves, nothing is
    divided), and the factorization goes on with the rest."""
    a = rng.standard_normal((4, 4))
    a[:, 0] = 0
    return [a.astype(dtype)]


LU_CASES: dict[str, list[Case]] = {
    "lu": [
        Case(normal(4, 4), lu_reference, label="square"),
        Case(normal(5, 3), lu_reference, label="tall"),
        Case(normal(3, 5), lu_reference, label="wide"),
        Case(normal(2, 3, 3), lu_reference, label="batched"),
        # float32 only: that keeps it out of test_autodiff (U is singular: no derivative there)
        Case(_singular, lu_reference, dtypes=("float32",), label="singular"),
        Case(normal(2, 4, 3), lu_reference, dtypes=("complex64", "complex128"), label="complex batched"),
    ],
}

CASES.update(LU_CASES)
