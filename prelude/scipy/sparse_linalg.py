"""``tensorstage.scipy.sparse.linalg``: JAX's ``jax.scipy.sparse.linalg`` — the Krylov solvers ``cg`` (Hermitian
positive definite ``A``), ``gmres`` and ``bicgstab`` (general ``A``), each returning ``(x, info)``.

``A`` (and the preconditioner ``M``) is a square matrix or a function computing ``A(x)`` (or any object with
``@``); ``b`` and ``x0`` are any pytree of arrays, ``A`` mapping that pytree's type to itself. The iterations are
JAX's, step for step (``jax._src.scipy.sparse.linalg``): one ``while_loop`` (gmres: restarts, each an Arnoldi
process of ``restart`` steps with JAX's twice-iterated classical Gram-Schmidt; ``solve_method="incremental"``
triangularizes it with Givens rotations as it goes and stops a restart early, ``"batched"`` runs the whole process
and then solves the least squares problem). Convergence is ``norm(residual) <= max(tol * norm(b), atol)`` (SciPy's
non-legacy rule). ``cg`` and ``bicgstab`` return ``info=None``; ``gmres`` returns ``info``, an int32 scalar: -1
where the solution holds a NaN, else 0, as JAX does.

Each solver runs inside ``lax.custom_linear_solve``, so derivatives are implicit (another solve with the transposed
operator, ``cg`` on real data treating ``A`` as symmetric), flow through ``b`` and the values ``A`` closes over (or
the matrix ``A``), never through ``x0`` or ``M``, and are exact only as far as both solves converge; ``vmap`` runs
the loop until every member has converged. On concrete arrays the whole solve is staged, compiled and run as one
program.

``tol``, ``atol`` and ``maxiter`` may be staged scalars (as in JAX: they only enter the stopping rule), so one
compiled solver serves many tolerances; ``restart`` and ``solve_method`` are settings.

Deliberate differences from JAX:
- Leaves of ``b`` and ``x0`` must agree in dtype, leaf for leaf (a ``DTypeError``; JAX promotes ``x0``), and
  ``A`` and ``M`` must return ``b``'s structure, shapes and dtypes (a ``ShapeError`` naming the solver, raised
  before the solve is staged).
- Leaves of different dtypes in one ``b`` are allowed: the scalars the solvers combine (inner products, norms,
  step sizes) are computed in the dtypes' promotion, and each leaf's update is cast back to its own dtype.
- ``gmres(solve_method="batched")`` solves each restart's least squares problem by Givens rotations of the
  Hessenberg matrix once the Arnoldi process is done (as ``"incremental"`` does during it), where JAX solves the
  normal equations by Cholesky: the same solution to rounding (more accurate where the Krylov basis is
  ill-conditioned), and XLA takes seconds to compile a Cholesky or LU on CPU.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from ... import pytree
from ...array import Array
from ...control_flow import fori_loop, while_loop
from ...dtypes import i32
from ...program import Program
from ...signature import Spec
from ...staging import dtypes as _dt
from ...staging.builder import is_staging
from ...staging.errors import DTypeError, ShapeError
from ...staging.source import user_location
from ...subgraph import function_name, stage_subgraph
from ...tensor import Tensor
from ...tree_util import tree_leaves, tree_map, tree_structure
from .. import numpy as tnp
from ..lax.implicit import custom_linear_solve
from ..lax.reductions import dot_general
from ..lax.settings import Precision
from ..numpy._core import as_tensor
from ..tree_flatten import promote_jax
from .linalg import solve_triangular

__all__ = ["bicgstab", "cg", "gmres"]

X = TypeVar("X")
Value = Any  # a staged tensor
Tree = Any  # a pytree of staged tensors, the type of b
Operator = Callable[[Tree], Tree]
Solver = Callable[..., Tree]
Scalar = float | Tensor[Any]  # a tolerance: a Python number or a staged scalar (JAX's may be traced too)
Count = int | Tensor[Any]  # an iteration bound, likewise


class SupportsMatmul(Protocol):
    """A matrix-like operator: ``A @ x`` (a tensor, a NumPy array, a user's linear operator class)."""

    def __matmul__(self, x: Any, /) -> Any: ...


LinearOperator = Callable[[X], X] | SupportsMatmul  # A or M: a function of b's pytree type, or a matrix


# ------------------------------------------------------------------------------------------------ pytree algebra


def _dot_general(a: Value, x: Value, contract: tuple[int, int]) -> Value:
    return dot_general(a, x, (((contract[0],), (contract[1],)), ((), ())), precision=Precision.HIGHEST)


def _matvec(a: Value, x: Value) -> Value:
    """``jnp.dot(a, x)`` at the highest precision (a matrix operator; GPUs otherwise round f32 products)."""
    return _dot_general(a, x, (1, 0 if x.aval.ndim == 1 else x.aval.ndim - 2))


def _vdot(x: Value, y: Value) -> Value:
    """``vdot(x, y)``: the conjugate of ``x`` times ``y``, summed, at the highest precision."""
    return _dot_general(tnp.ravel(tnp.conj(x)), tnp.ravel(y), (0, 0))


def _scalar_dtype(tree: Tree) -> np.dtype[Any]:
    """The promotion of the tree's leaf dtypes: the dtype its inner products and step sizes are computed in."""
    return functools.reduce(promote_jax, [leaf.aval.dtype for leaf in tree_leaves(tree)])


def _sum_as(values: list[Value], dtype: np.dtype[Any]) -> Value:
    total = values[0].astype(dtype)
    for value in values[1:]:
        total = total + value.astype(dtype)
    return total


def _vdot_tree(x: Tree, y: Tree) -> Value:
    return _sum_as(tree_leaves(tree_map(_vdot, x, y)), _scalar_dtype(x))


def _vdot_real_part(x: Value, y: Value) -> Value:
    """The real part of ``vdot(x, y)`` (of ``zᴴ M z`` with ``M`` Hermitian: real), as a real float."""
    if not _dt.is_complex(x.aval.dtype) and not _dt.is_complex(y.aval.dtype):
        return _vdot(x, y)
    return _vdot(tnp.real(x), tnp.real(y)) + _vdot(tnp.imag(x), tnp.imag(y))


def _vdot_real_tree(x: Tree, y: Tree) -> Value:
    return _sum_as(tree_leaves(tree_map(_vdot_real_part, x, y)), _real(_scalar_dtype(x)))


def _real_part(x: Value) -> Value:
    return tnp.real(x)  # (a function of its own: mypy crashes inferring tnp.real's overloads inside a conditional)


def _real(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return _dt.real_dtype(dtype)


def _norm(x: Tree) -> Value:
    return tnp.sqrt(_vdot_real_tree(x, x))


def _scale(scalar: Value, tree: Tree) -> Tree:
    """``scalar * tree``, each leaf keeping its dtype."""
    return tree_map(lambda leaf: (scalar * leaf.astype(scalar.aval.dtype)).astype(leaf.aval.dtype), tree)


def _add(x: Tree, y: Tree) -> Tree:
    return tree_map(lambda a, b: a + b, x, y)


def _sub(x: Tree, y: Tree) -> Tree:
    return tree_map(lambda a, b: a - b, x, y)


def _select(pred: Value, on_true: Tree, on_false: Tree) -> Tree:
    return tree_map(lambda a, b: tnp.where(pred, a, b), on_true, on_false)


def _int(n: int) -> Value:
    return tnp.asarray(np.int32(n))


def _identity(x: Tree) -> Tree:
    return x


# ------------------------------------------------------------------------------------------------ cg, bicgstab


def _cg_solve(A: Operator, b: Tree, x0: Tree, *, maxiter: Count, tol: Scalar, atol: Scalar, M: Operator) -> Tree:
    """Preconditioned conjugate gradients (Wikipedia's form, as JAX)."""
    atol2 = tnp.maximum(tol**2 * _vdot_real_tree(b, b), atol**2)
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _scalar_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond_fun(value: tuple[Any, ...]) -> Value:
        _, r, gamma, _, k = value
        rs = _real_part(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _scale(alpha, p))
        r_ = _sub(r, _scale(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        p_ = _add(z_, _scale(gamma_ / gamma, p))
        return x_, r_, gamma_, p_, k + 1

    return while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, _int(0)))[0]


def _bicgstab_solve(A: Operator, b: Tree, x0: Tree, *, maxiter: Count, tol: Scalar, atol: Scalar,
                    M: Operator) -> Tree:
    """Preconditioned BiCGSTAB (Wikipedia's form, as JAX); ``k`` turns negative on a breakdown, ending the loop."""
    atol2 = tnp.maximum(tol**2 * _vdot_real_tree(b, b), atol**2)

    def cond_fun(value: tuple[Any, ...]) -> Value:
        k = value[-1]
        return (_vdot_real_tree(value[1], value[1]) > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _scale(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_half = _add(x, _scale(alpha_, phat))
        x_ = _select(exit_early, x_half, _add(x_half, _scale(omega_, shat)))
        r_ = _select(exit_early, s, _sub(s, _scale(omega_, t)))
        k_ = tnp.where((omega_ == 0) | (alpha_ == 0), _int(-11), k + 1)
        k_ = tnp.where(rho_ == 0, _int(-10), k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    one = tnp.ones((), dtype=_scalar_dtype(b))
    return while_loop(cond_fun, body_fun, (x0, r0, r0, one, one, one, r0, r0, _int(0)))[0]


# ------------------------------------------------------------------------------------------------ gmres


def _safe_normalize(x: Tree, thresh: Value | None = None) -> tuple[Tree, Value]:
    """``x / norm(x)`` and ``norm(x)``, both zero where the norm is at most ``thresh`` (default: the dtype's eps)."""
    norm = _norm(x)
    dtype = _scalar_dtype(x)
    limit = tnp.asarray(tnp.finfo(norm.aval.dtype).eps, dtype=norm.aval.dtype) if thresh is None else thresh
    use_norm = norm > tnp.real(tnp.asarray(limit).astype(dtype))
    norm_cast = norm.astype(dtype)
    normalized = tree_map(lambda y: tnp.where(use_norm, y / norm_cast.astype(y.aval.dtype), tnp.zeros_like(y)), x)
    return normalized, tnp.where(use_norm, norm, tnp.zeros_like(norm))


def _project_on_columns(Q: Tree, v: Tree) -> Value:
    """``Qᴴ v``: each leaf's Krylov basis (its columns on the last axis) against ``v``."""
    def project(basis: Value, y: Value) -> Value:
        flat = tnp.reshape(tnp.conj(basis), (-1, basis.aval.shape[-1]))
        return _dot_general(flat, tnp.ravel(y), (0, 0))

    return _sum_as(tree_leaves(tree_map(project, Q, v)), _scalar_dtype(v))


def _combine_columns(Q: Tree, h: Value) -> Tree:
    """``Q h`` for each leaf's basis."""
    return tree_map(lambda basis: _dot_general(basis, h.astype(basis.aval.dtype), (basis.aval.ndim - 1, 0)), Q)


def _iterative_classical_gram_schmidt(Q: Tree, x: Tree, xnorm: Value, max_iterations: int = 2) -> tuple[Tree, Value]:
    """``x`` made orthogonal to ``Q``'s orthonormal columns, and its overlaps with them; classical Gram-Schmidt
    repeated while the remainder shrinks below ``1/√2`` of ``x`` ("twice is enough"), at most ``max_iterations``
    times, as JAX."""
    r = tnp.zeros(tree_leaves(Q)[0].aval.shape[-1], dtype=_scalar_dtype(Q))
    root2 = math.sqrt(2.0)  # a Python float: it takes the dtype of what it divides

    def body_function(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, _combine_columns(Q, h))
        _, qnorm = _safe_normalize(q)
        # JAX's inner loop recomputes the norm only while k < max_iterations - 1
        qnorm_scaled = tnp.where(k < max_iterations - 1, qnorm / root2, qnorm_scaled)
        return k + 1, q, r + h, qnorm_scaled

    def cond_function(carry: tuple[Any, ...]) -> Value:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return (k < max_iterations - 1) & (rnorm < qnorm_scaled)

    carry = body_function((_int(0), x, r, xnorm / root2))
    _, q, r, _ = while_loop(cond_function, body_function, carry)
    return q, r


def _column(V: Tree, k: Value) -> Tree:
    return tree_map(lambda basis: basis[..., k], V)


def _kth_arnoldi_iteration(k: Value, A: Operator, M: Operator, V: Tree, H: Value) -> tuple[Tree, Value, Value]:
    """One Arnoldi step: ``M(A(V[:, k]))`` orthonormalized against ``V`` into ``V[:, k + 1]``, its overlaps into
    row ``k`` of ``H``; a vector below ``eps * norm`` is an invariant subspace (a breakdown), kept as zero."""
    dtype = _scalar_dtype(V)
    eps = tnp.finfo(dtype).eps
    v = M(A(_column(V, k)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda basis, y: basis.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    return V, H.at[k, :].set(h), v_norm_1 == 0


def _rotate_vectors(H: Value, i: Value, cs: Value, sn: Value) -> Value:
    x1, y1 = H[i], H[i + 1]
    H = H.at[i].set(tnp.conj(cs) * x1 - tnp.conj(sn) * y1)
    return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens_rotation(a: Value, b: Value) -> tuple[Value, Value]:
    b_zero = tnp.abs(b) == 0
    a_lt_b = tnp.abs(a) < tnp.abs(b)
    t = -tnp.where(a_lt_b, a, b) / tnp.where(a_lt_b, b, a)
    r = (1 / tnp.sqrt(1 + tnp.abs(t) ** 2)).astype(t.aval.dtype)
    one, zero = tnp.ones_like(t), tnp.zeros_like(t)
    cs = tnp.where(b_zero, one, tnp.where(a_lt_b, r * t, r))
    sn = tnp.where(b_zero, zero, tnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row: Value, givens: Value, k: Value) -> tuple[Value, Value]:
    """``H_row`` through the ``k`` rotations so far, then the new rotation that zeroes its element ``k + 1``."""
    R_row = fori_loop(_int(0), k, lambda i, row: _rotate_vectors(row, i, givens[i, 0], givens[i, 1]), H_row)
    cs, sn = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, 0].set(cs).at[k, 1].set(sn)
    return _rotate_vectors(R_row, k, cs, sn), givens


def _krylov_basis(unit_residual: Tree, restart: int) -> Tree:
    """Each leaf with a new last axis of ``restart + 1`` columns, the first the unit residual."""
    return tree_map(lambda x: tnp.pad(x[..., None], ((0, 0),) * x.aval.ndim + ((0, restart),)), unit_residual)


Restart = Callable[[Operator, Tree, Tree, Tree, Value, Value, int, Operator], tuple[Tree, Tree, Value]]


def _restarted(A: Operator, b: Tree, x0: Tree, V: Tree, y: Value, M: Operator) -> tuple[Tree, Tree, Value]:
    """The restart's solution ``x0 + V y`` and its preconditioned residual, normalized."""
    x = _add(x0, _combine_columns(tree_map(lambda basis: basis[..., :-1], V), y))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A: Operator, b: Tree, x0: Tree, unit_residual: Tree, residual_norm: Value, ptol: Value,
                       restart: int, M: Operator) -> tuple[Tree, Tree, Value]:
    """One restart, its QR factorization built by Givens rotations during the Arnoldi process (Saad), stopping
    early once the residual estimate is below ``ptol``."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _scalar_dtype(b)
    R = tnp.eye(restart, restart + 1, dtype=dtype)  # not singular where the loop stops early
    givens = tnp.zeros((restart, 2), dtype=dtype)
    beta_vec = tnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry: tuple[Any, ...]) -> Value:
        k, err = carry[:2]
        return (k < restart) & (err > ptol)

    def arnoldi_qr_step(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, givens[k, 0], givens[k, 1])
        return k + 1, tnp.abs(beta_vec[k + 1]), V, R, beta_vec, givens

    _, _, V, R, beta_vec, _ = while_loop(loop_cond, arnoldi_qr_step,
                                         (_int(0), residual_norm, V, R, beta_vec, givens))
    y = solve_triangular(tnp.transpose(R[:, :-1]), beta_vec[:-1])
    return _restarted(A, b, x0, V, y, M)


def _hessenberg_lstsq(H: Value, beta_vec: Value, restart: int) -> Value:
    """The ``y`` minimizing ``|Hᵀ y - beta_vec|`` for the upper Hessenberg ``Hᵀ``, by Givens rotations and a
    triangular solve. (JAX solves the normal equations by Cholesky: the same ``y`` to rounding, where XLA takes
    seconds to compile a Cholesky or LU on CPU.)"""
    def rotate_row(k: Value, carry: tuple[Value, Value, Value]) -> tuple[Value, Value, Value]:
        R, givens, beta = carry
        R_row, givens = _apply_givens_rotations(R[k, :], givens, k)
        return R.at[k, :].set(R_row), givens, _rotate_vectors(beta, k, givens[k, 0], givens[k, 1])

    start = (H, tnp.zeros((restart, 2), dtype=H.aval.dtype), beta_vec)
    R, _, beta = fori_loop(_int(0), _int(restart), rotate_row, start)
    return solve_triangular(tnp.transpose(R[:, :-1]), beta[:-1])


def _gmres_batched(A: Operator, b: Tree, x0: Tree, unit_residual: Tree, residual_norm: Value, ptol: Value,
                   restart: int, M: Operator) -> tuple[Tree, Tree, Value]:
    """One restart: the full Arnoldi process (unless it breaks down), then its least squares problem solved once
    (``_hessenberg_lstsq``)."""
    del ptol
    V = _krylov_basis(unit_residual, restart)
    dtype = _scalar_dtype(b)

    def loop_cond(carry: tuple[Any, ...]) -> Value:
        _, _, breakdown, k = carry
        return (k < restart) & ~breakdown

    def arnoldi_process(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    H = tnp.eye(restart, restart + 1, dtype=dtype)
    V, H, _, _ = while_loop(loop_cond, arnoldi_process, (V, H, tnp.asarray(False), _int(0)))
    beta_vec = tnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    y = _hessenberg_lstsq(H, beta_vec, restart)
    return _restarted(A, b, x0, V, y, M)


def _gmres_solve(A: Operator, b: Tree, x0: Tree, *, atol: Value, ptol: Value, restart: int, maxiter: Count,
                 M: Operator, gmres_func: Restart) -> Tree:
    """Restarts of ``gmres_func`` until the preconditioned residual is at most ``atol`` or ``maxiter`` restarts."""
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond_fun(value: tuple[Any, ...]) -> Value:
        _, k, _, residual_norm = value
        return (k < maxiter) & (residual_norm > atol)

    def body_fun(value: tuple[Any, ...]) -> tuple[Any, ...]:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    return while_loop(cond_fun, body_fun, (x0, _int(0), unit_residual, residual_norm))[0]


# ------------------------------------------------------------------------------------------------ checking


def _operator(op: str, role: str, f: Any) -> Operator:
    """``f`` as a function: itself, a square matrix's product, or ``f @ x``."""
    if callable(f):
        return f  # type: ignore[no-any-return]
    if isinstance(f, (np.ndarray, Array, Tensor)):
        matrix = as_tensor(f)
        if matrix.aval.ndim != 2 or matrix.aval.shape[0] != matrix.aval.shape[1]:
            raise ValueError(f"{op}: linear operator {role} must be a square matrix, but has shape "
                             f"{matrix.aval.shape}\n  at {user_location()}")
        return functools.partial(_matvec, matrix)
    if hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"{op}: linear operator {role} must be a square matrix, but has shape {tuple(shape)}"
                             f"\n  at {user_location()}")
        return lambda x: f @ x
    raise TypeError(f"{op}: linear operator {role} must be either a function or a matrix, got {type(f).__name__} "
                    f"{f!r}\n  at {user_location()}")


def _check_start(op: str, b: Tree, x0: Tree) -> None:
    """``x0`` has ``b``'s structure, shapes (ValueError, as JAX) and dtypes."""
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{op}: x0 and b must have matching tree structure: {tree_structure(x0)} vs "
                         f"{tree_structure(b)}\n  at {user_location()}")
    got, want = [x.aval for x in tree_leaves(x0)], [x.aval for x in tree_leaves(b)]
    if [a.shape for a in got] != [a.shape for a in want]:
        raise ValueError(f"{op}: arrays in x0 and b must have matching shapes: {[a.shape for a in got]} vs "
                         f"{[a.shape for a in want]}\n  at {user_location()}")
    if [a.dtype for a in got] != [a.dtype for a in want]:
        raise DTypeError(f"x0 and b must have matching dtypes, leaf for leaf: {', '.join(map(str, got))} vs "
                         f"{', '.join(map(str, want))}", op, user_location())


def _check_operator(op: str, role: str, f: Operator, b: Tree) -> None:
    """``f`` maps ``b``'s type to itself (staged once on placeholders, so a mistake is named here)."""
    leaves, structure = pytree.flatten(b)
    sub = stage_subgraph(f, [pytree.unflatten(structure, [Spec(x.aval.shape, x.aval.dtype) for x in leaves])], {})
    got = sub.graph.out_avals
    if sub.out_tree != structure or any(g.shape != x.aval.shape or g.dtype != x.aval.dtype
                                        for g, x in zip(got, leaves)):
        raise ShapeError(f"the linear operator {role} ({function_name(f)}) must return b's structure, shapes and "
                         f"dtypes ({', '.join(str(x.aval) for x in leaves)}), got {sub.out_tree!r}: "
                         f"{', '.join(map(str, got))}", op, user_location())


def _inputs(op: str, A: Any, b: Any, x0: Any, M: Any) -> tuple[Operator, Tree, Tree, Operator]:
    """The operators as functions and ``b``, ``x0`` as trees of tensors (zeros where ``x0`` is None), checked."""
    b = tree_map(as_tensor, b)
    if not tree_leaves(b):
        raise ValueError(f"{op}: b must hold at least one array, got {b!r}\n  at {user_location()}")
    bad = [leaf.aval.dtype for leaf in tree_leaves(b) if not _dt.is_inexact(leaf.aval.dtype)]
    if bad:
        raise DTypeError(f"b must hold float or complex arrays, got {', '.join(map(str, bad))}", op, user_location())
    x0 = tree_map(tnp.zeros_like, b) if x0 is None else tree_map(as_tensor, x0)
    _check_start(op, b, x0)
    matvec = _operator(op, "A", A)
    _check_operator(op, "A", matvec, b)
    preconditioner = _identity if M is None else _operator(op, "M", M)
    if M is not None:
        _check_operator(op, "M", preconditioner, b)
    return matvec, b, x0, preconditioner


def _is_matrix(f: Any) -> bool:
    return isinstance(f, (np.ndarray, Array))


def _eagerly(solver: Callable[..., Any], A: Any, b: Any, x0: Any, M: Any, **settings: Any) -> Any:
    """``solver`` on concrete arrays: staged, compiled and run as one program, matrices passed as its arguments."""
    def staged(a: Any, rhs: Any, start: Any, m: Any) -> Any:
        return solver(a if _is_matrix(A) else A, rhs, start, M=m if _is_matrix(M) else M, **settings)

    args = (A if _is_matrix(A) else None, b, x0, M if _is_matrix(M) else None)
    return Program(staged, name=getattr(solver, "__name__", "solve"))(*args)


def _size(b: Tree) -> int:
    return sum(int(np.prod(leaf.aval.shape)) for leaf in tree_leaves(b))


def _isolve(op: str, method: Solver, A: Any, b: Any, x0: Any, tol: Scalar, atol: Scalar, maxiter: Count | None,
            M: Any, check_symmetric: bool) -> Tree:
    matvec, b, x0, preconditioner = _inputs(op, A, b, x0, M)
    limit = 10 * _size(b) if maxiter is None else maxiter  # SciPy's default
    isolve_solve = functools.partial(method, x0=x0, tol=tol, atol=atol, maxiter=limit, M=preconditioner)
    # real positive definite operators are symmetric: the transposed solve is the same solve
    symmetric = check_symmetric and not any(_dt.is_complex(leaf.aval.dtype) for leaf in tree_leaves(b))
    return custom_linear_solve(matvec, b, solve=isolve_solve, transpose_solve=isolve_solve, symmetric=symmetric)


# ------------------------------------------------------------------------------------------------ public


def cg(A: LinearOperator[X], b: X, x0: X | None = None, *, tol: Scalar = 1e-5, atol: Scalar = 0.0,
       maxiter: Count | None = None, M: LinearOperator[X] | None = None) -> tuple[X, None]:
    """The solution ``x`` of ``A x = b`` for Hermitian positive definite ``A`` by (preconditioned) conjugate
    gradients, and ``None`` (``jax.scipy.sparse.linalg.cg``). ``A`` and the preconditioner ``M`` (approximating
    ``A⁻¹``) are square matrices or functions; ``b``, ``x0`` pytrees of arrays; at most ``maxiter`` iterations
    (default ``10 * size(b)``) until ``norm(r) <= max(tol * norm(b), atol)``."""
    if not is_staging():
        return _eagerly(cg, A, b, x0, M, tol=tol, atol=atol, maxiter=maxiter)  # type: ignore[no-any-return]
    x = _isolve("scipy.sparse.linalg.cg", _cg_solve, A, b, x0, tol, atol, maxiter, M, check_symmetric=True)
    return x, None


def bicgstab(A: LinearOperator[X], b: X, x0: X | None = None, *, tol: Scalar = 1e-5, atol: Scalar = 0.0,
             maxiter: Count | None = None, M: LinearOperator[X] | None = None) -> tuple[X, None]:
    """The solution ``x`` of ``A x = b`` for a general ``A`` by (preconditioned) BiCGSTAB, and ``None``
    (``jax.scipy.sparse.linalg.bicgstab``); arguments as ``cg``. A breakdown ends the iteration where it is."""
    if not is_staging():
        return _eagerly(bicgstab, A, b, x0, M, tol=tol, atol=atol, maxiter=maxiter)  # type: ignore[no-any-return]
    x = _isolve("scipy.sparse.linalg.bicgstab", _bicgstab_solve, A, b, x0, tol, atol, maxiter, M,
                check_symmetric=False)
    return x, None


_RESTARTS: dict[str, Restart] = {"incremental": _gmres_incremental, "batched": _gmres_batched}


def gmres(A: LinearOperator[X], b: X, x0: X | None = None, *, tol: Scalar = 1e-5, atol: Scalar = 0.0,
          restart: int = 20, maxiter: Count | None = None, M: LinearOperator[X] | None = None,
          solve_method: Literal["incremental", "batched"] = "batched") -> tuple[X, Tensor[i32]]:
    """The solution ``x`` of ``A x = b`` for a general ``A`` by restarted GMRES, and ``info`` (int32: -1 where
    ``x`` holds a NaN, else 0) (``jax.scipy.sparse.linalg.gmres``). Each restart builds a Krylov space of
    dimension ``restart`` (at most ``size(b)``); ``maxiter`` bounds the restarts (default ``10 * size(b)``);
    ``solve_method`` is ``"batched"`` (a least squares solve per restart) or ``"incremental"`` (Givens rotations
    during the Arnoldi process, stopping a restart early)."""
    op = "scipy.sparse.linalg.gmres"
    if solve_method not in _RESTARTS:
        raise ValueError(f"{op}: invalid solve_method {solve_method!r}, must be either 'incremental' or 'batched'"
                         f"\n  at {user_location()}")
    if not is_staging():
        return _eagerly(gmres, A, b, x0, M, tol=tol, atol=atol, restart=restart,  # type: ignore[no-any-return]
                        maxiter=maxiter, solve_method=solve_method)
    matvec, rhs, start, preconditioner = _inputs(op, A, b, x0, M)
    size = _size(rhs)
    b_norm = _norm(rhs)
    atol_ = tnp.maximum(tol * b_norm, atol)
    ptol = _norm(preconditioner(rhs)) * tnp.minimum(1.0, atol_ / b_norm)
    gmres_solve = functools.partial(_gmres_solve, x0=start, atol=atol_, ptol=ptol, restart=min(restart, size),
                                    maxiter=10 * size if maxiter is None else maxiter, M=preconditioner,
                                    gmres_func=_RESTARTS[solve_method])
    x = custom_linear_solve(matvec, rhs, solve=gmres_solve, transpose_solve=gmres_solve)
    info = tnp.where(tnp.isnan(_norm(x)), _int(-1), _int(0))
    return x, info
