"""``tnp.linalg.eig`` and ``eigvals``: eigenvalues and right eigenvectors of general (non-symmetric) square matrices.

Results are always complex, as JAX's: c64 for f32 and c64 input, c128 for f64 and c128. (NumPy returns real
arrays when every eigenvalue is real, a type that depends on the values.) Eigenvalues come in LAPACK's order,
not sorted; each eigenvector (a column) has unit 2-norm and its largest-magnitude component real, as LAPACK and
NumPy normalize them. The only implementation is LAPACK's ``geev`` on CPU: on other platforms (and on CPU with
LAPACK disabled) lowering raises. Eigenvalues are differentiable (forward and reverse mode, for distinct
eigenvalues); eigenvectors are not, as in JAX. See ``staging/primitives/eig.py``.
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeVar, overload

from typing_extensions import TypeVarTuple, Unpack

from ...dtypes import c64, c128, f32, f64
from ...staging import dtypes as _dt
from ...staging.ir import Atom
from ...staging.primitives import eig as EG
from ...tensor import Tensor
from ._core import as_tensor, describe, dtype_error, op, shape_error, wrap

N = TypeVar("N")
CT = TypeVar("CT", c64, c128)
Batch = TypeVarTuple("Batch")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


class EigResult(NamedTuple, Generic[CT]):
    """NumPy 2's result of ``eig``: eigenvalues ``(..., N)`` and eigenvectors in the columns of ``(..., N, N)``."""

    eigenvalues: Tensor[CT, Unpack[tuple[Any, ...]]]
    eigenvectors: Tensor[CT, Unpack[tuple[Any, ...]]]


def _square_matrices(name: str, a: Any) -> Atom:
    """A f32/f64/c64/c128 batch of square matrices, or an error naming ``name`` and the operand."""
    t = as_tensor(a)
    if t.aval.dtype not in EG.LAPACK_DTYPES:
        kind = "a floating-point or complex" if not _dt.is_inexact(t.aval.dtype) else "an f32, f64, c64 or c128"
        raise dtype_error(name, f"{name} needs {kind} operand, got {describe(t)}; convert it with .astype(f32)")
    if t.aval.ndim < 2 or t.aval.shape[-1] != t.aval.shape[-2]:
        raise shape_error(name, f"{name} needs square matrices in the last two axes, got {describe(t)}")
    return t.atom


@overload
def eig(a: Tensor[f32, Unpack[Batch], N, N] | Tensor[c64, Unpack[Batch], N, N]) -> EigResult[c64]: ...
@overload
def eig(a: Tensor[f64, Unpack[Batch], N, N] | Tensor[c128, Unpack[Batch], N, N]) -> EigResult[c128]: ...
@overload
def eig(a: AnyTensor) -> EigResult[Any]: ...
@op
def eig(a: Any) -> Any:
    """``(eigenvalues, eigenvectors)`` with ``a @ eigenvectors = eigenvectors * eigenvalues[..., None, :]``;
    complex whatever the input (as JAX), in LAPACK's order, each eigenvector of unit norm with its
    largest-magnitude component real."""
    w, vr = EG.eig(_square_matrices("eig", a), compute_left=False, compute_right=True)
    return EigResult(wrap(w), wrap(vr))


@overload
def eigvals(
    a: Tensor[f32, Unpack[Batch], N, N] | Tensor[c64, Unpack[Batch], N, N]
) -> Tensor[c64, Unpack[Batch], N]: ...
@overload
def eigvals(
    a: Tensor[f64, Unpack[Batch], N, N] | Tensor[c128, Unpack[Batch], N, N]
) -> Tensor[c128, Unpack[Batch], N]: ...
@overload
def eigvals(a: AnyTensor) -> AnyTensor: ...
@op
def eigvals(a: Any) -> Any:
    """The eigenvalues of general square matrices, complex whatever the input (as JAX), in LAPACK's order."""
    (w,) = EG.eig(_square_matrices("eigvals", a), compute_left=False, compute_right=False)
    return wrap(w)


__all__ = ["EigResult", "eig", "eigvals"]
