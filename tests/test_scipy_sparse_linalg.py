"""tensorstage.scipy.sparse.linalg (cg, gmres, bicgstab) against NumPy's dense solve and SciPy's solvers in f64 on
seeded well-conditioned systems (matrices and functions, pytree right-hand sides, preconditioners, maxiter),
their implicit derivatives (finite differences; jax where installed), vmap against a loop, and their refusals.
Each solver is compiled once with ``maxiter`` and ``tol`` as arguments (they may be traced, as in JAX), so one
executable serves converged solves and iterates stopped early; compiles are this file's cost."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import tensorstage as ts
import tensorstage.scipy.sparse.linalg as tsl
from tensorstage import numpy as tnp
from tensorstage.scipy.sparse.linalg import bicgstab, cg, gmres

N = 8
RESTART = 3
NAMES = ("cg", "bicgstab", "gmres", "gmres_incremental")


def _solver(module: Any, name: str) -> Any:
    """``module``'s solver for ``name`` (restart 3 for gmres), as ``(a, b, x0, m, maxiter, tol) -> (x, info)``."""
    if name.startswith("gmres"):
        method = "incremental" if name.endswith("incremental") else "batched"
        return lambda a, b, x0, m, maxiter, tol: module.gmres(a, b, x0, tol=tol, maxiter=maxiter, M=m,
                                                              restart=RESTART, solve_method=method)
    return lambda a, b, x0, m, maxiter, tol: getattr(module, name)(a, b, x0, tol=tol, maxiter=maxiter, M=m)


SOLVE = {name: ts.program(_solver(tsl, name)) for name in NAMES}  # compiled once each, shared by the tests


def _system(rng: np.random.Generator, name: str) -> dict[str, np.ndarray]:
    """A well-conditioned system: symmetric positive definite for cg, nonsymmetric otherwise; a Jacobi
    preconditioner."""
    q = rng.standard_normal((N, N))
    a = q @ q.T + N * np.eye(N) if name == "cg" else q + 2 * np.sqrt(N) * np.eye(N)
    return {"a": a, "b": rng.standard_normal(N), "x0": rng.standard_normal(N), "m": np.diag(1 / np.diag(a))}


def _run(name: str, s: dict[str, np.ndarray], maxiter: int, tol: float) -> np.ndarray:
    x, info = SOLVE[name](s["a"], s["b"], s["x0"], s["m"], np.int32(maxiter), np.float64(tol))
    assert info is None if name in ("cg", "bicgstab") else (info.dtype == np.int32 and int(info) == 0)
    return np.asarray(x)


@pytest.mark.parametrize("name", NAMES)
def test_solutions_match_numpy_and_iterates_match_scipy(name: str, rng: np.random.Generator) -> None:
    s = _system(rng, name)
    np.testing.assert_allclose(_run(name, s, 100, 1e-12), np.linalg.solve(s["a"], s["b"]), rtol=1e-10, atol=1e-10)
    stopped = _run(name, s, 2, 1e-5)  # two iterations (restarts): SciPy's iterate
    assert not np.allclose(stopped, np.linalg.solve(s["a"], s["b"]), atol=1e-6)
    method = getattr(ssl, name.split("_")[0])
    kw = {"restart": RESTART} if name.startswith("gmres") else {}
    if name.startswith("gmres"):
        # SciPy's gmres counts its preconditioned residual differently (right preconditioning): compare without M
        s = dict(s, m=np.eye(N))
        stopped = _run(name, s, 2, 1e-5)
        want = method(s["a"], s["b"], s["x0"], maxiter=2, rtol=1e-5, **kw)[0]
    else:
        want = method(s["a"], s["b"], s["x0"], maxiter=2, rtol=1e-5, M=s["m"], **kw)[0]
    np.testing.assert_allclose(stopped, want, rtol=1e-9, atol=1e-11)


def test_iterates_match_jax_step_for_step(rng: np.random.Generator) -> None:
    """(gmres's iterates equal JAX's too, to 1e-15, but JAX takes 8 s to compile its two gmres.)"""
    jax = pytest.importorskip("jax")
    import jax.scipy.sparse.linalg as jsl

    for name in ("cg", "bicgstab"):
        s = _system(rng, name)
        with jax.enable_x64(True):
            want = _solver(jsl, name)(s["a"], s["b"], s["x0"], s["m"], 2, 1e-5)[0]
        np.testing.assert_allclose(_run(name, s, 2, 1e-5), np.asarray(want), rtol=1e-12, atol=1e-13, err_msg=name)


def _tree_operator(a: Any) -> Any:
    """``a`` acting on the pytree {"head": (2,), "tail": (2, 3)} (a vector of 8 split in two leaves)."""
    def matvec(t: Any) -> Any:
        w = a @ tnp.concatenate([t["head"], tnp.reshape(t["tail"], (-1,))])
        return {"head": w[:2], "tail": tnp.reshape(w[2:], (2, 3))}

    return matvec


def test_pytrees_functions_complex_and_single_precision(rng: np.random.Generator) -> None:
    s = _system(rng, "cg")
    g = _system(rng, "gmres")
    z = g["a"] + 1j * rng.standard_normal((N, N))
    h = s["a"] + 1j * (lambda m: m - m.T)(rng.standard_normal((N, N)))  # Hermitian positive definite
    zb = s["b"] + 1j * rng.standard_normal(N)

    @ts.program
    def solve_all(spd: Any, gen: Any, b: Any, z: Any, h: Any, zb: Any) -> Any:
        tree = {"head": b[:2], "tail": tnp.reshape(b[2:], (2, 3))}
        return {
            "cg_tree": cg(_tree_operator(spd), tree, tol=1e-12, M=lambda t: t)[0],
            "bicgstab_tree": bicgstab(_tree_operator(gen), tree, tol=1e-12)[0],
            "cg_hermitian": cg(h, zb, tol=1e-12)[0],
            "bicgstab_complex": bicgstab(z, zb, tol=1e-12)[0],
            "cg_f32": cg(spd.astype(tnp.float32), b.astype(tnp.float32), tol=1e-6)[0],
        }

    got = solve_all(s["a"], g["a"], s["b"], z, h, zb)
    assert got["cg_tree"]["tail"].shape == (2, 3) and got["cg_f32"].dtype == np.float32
    want = {"cg_tree": np.linalg.solve(s["a"], s["b"]), "bicgstab_tree": np.linalg.solve(g["a"], s["b"]),
            "cg_hermitian": np.linalg.solve(h, zb),
            "bicgstab_complex": np.linalg.solve(z, zb), "cg_f32": np.linalg.solve(s["a"], s["b"])}
    for name, reference in want.items():
        result = got[name]
        if isinstance(result, dict):
            result = np.concatenate([np.ravel(result["head"]), np.ravel(result["tail"])])
        tol = 1e-4 if name == "cg_f32" else 1e-10
        np.testing.assert_allclose(np.asarray(result), reference, rtol=tol, atol=tol, err_msg=name)
    # on concrete arrays: staged and run as one program; info None as JAX
    x, none = cg(s["a"], s["b"], tol=1e-12)
    assert none is None
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(s["a"], s["b"]), rtol=1e-10, atol=1e-10)


def _loss(module: Any, name: str, np_: Any) -> Any:
    """A scalar function of (matrix, b) through the solver (a function closing over the matrix)."""
    weights = np.arange(1.0, N + 1)
    solve = _solver(module, name)
    return lambda a, b: np_.sum(np_.sin(solve(lambda v: a @ v, b, None, None, 100, 1e-13)[0]) * weights)


def test_gradients_match_finite_differences_and_jax(rng: np.random.Generator) -> None:
    """Implicit derivatives with respect to the operator's matrix and ``b`` (cg: symmetric perturbations of a
    symmetric matrix, the derivative it defines, as JAX). gmres differentiates through the same implicit rule as
    bicgstab (its transposed solve is gmres on the transposed operator); its compile is left to the other tests."""
    names = ("cg", "bicgstab")
    systems = {name: _system(rng, name) for name in names}
    grads = ts.program(lambda mats, b: {k: ts.grad(_loss(tsl, k, tnp), argnums=(0, 1))(mats[k], b) for k in names})(
        {k: s["a"] for k, s in systems.items()}, systems["cg"]["b"])
    b = systems["cg"]["b"]

    def dense(a: np.ndarray, rhs: np.ndarray) -> float:
        return float(np.sum(np.sin(np.linalg.solve(a, rhs)) * np.arange(1.0, N + 1)))

    eps = 1e-6
    for k in names:
        a = systems[k]["a"]
        ga, gb = (np.asarray(g) for g in grads[k])
        da, db = rng.standard_normal((N, N)), rng.standard_normal(N)
        if k == "cg":
            da = da + da.T
        numeric = (dense(a + eps * da, b + eps * db) - dense(a - eps * da, b - eps * db)) / (2 * eps)
        assert np.sum(ga * da) + gb @ db == pytest.approx(numeric, rel=1e-6, abs=1e-8), k
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import jax.scipy.sparse.linalg as jsl

    with jax.enable_x64(True):
        for k in names:
            want = jax.grad(_loss(jsl, k, jnp), argnums=(0, 1))(systems[k]["a"], b)
            for g, w in zip(grads[k], want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10, err_msg=k)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    """Batched right-hand sides: each member iterates until its own convergence (the loop runs until all have)."""
    names = ("cg", "bicgstab")  # (gmres batches too: its compile is this file's longest)
    systems = {name: _system(rng, name) for name in names}
    rhs = rng.standard_normal((3, N)) * np.array([[1.0], [1e-3], [1e2]])

    @ts.program
    def batched(rhs: Any, mats: Any) -> Any:
        return {k: ts.vmap(lambda v, k=k: _solver(tsl, k)(mats[k], v, None, None, 100, 1e-12)[0])(rhs) for k in names}

    got = batched(rhs, {k: s["a"] for k, s in systems.items()})
    for k in names:
        want = np.stack([np.linalg.solve(systems[k]["a"], v) for v in rhs])
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-9, atol=1e-12, err_msg=k)


def test_refusals() -> None:
    a, b = ts.Spec((4, 4), np.float64), ts.Spec((4,), np.float64)
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda m, v: cg(m[:3], v), ValueError, "square matrix"),
        (lambda m, v: cg(m, v, x0=(v,)), ValueError, "matching tree structure"),
        (lambda m, v: bicgstab(m, v, x0=v[:2]), ValueError, "matching shapes"),
        (lambda m, v: gmres(m, v, x0=v.astype(tnp.float32)), ts.DTypeError, "matching dtypes"),
        (lambda m, v: gmres(lambda x: x[:2], v), ts.ShapeError, "must return b's structure"),
        (lambda m, v: cg(m, v, M=lambda x: (x, x)), ts.ShapeError, "linear operator M"),
        (lambda m, v: gmres(m, v, solve_method="qr"), ValueError, "invalid solve_method 'qr'"),
        (lambda m, v: cg(m, v.astype(tnp.int32)), ts.DTypeError, "float or complex"),
        (lambda m, v: cg("A", v), TypeError, "function or a matrix"),
    ]
    for fn, kind, text in cases:
        with pytest.raises(kind) as info:
            ts.program(fn).stage(a, b)
        assert text in str(info.value) and "test_scipy_sparse_linalg.py:" in str(info.value), str(info.value)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_single_precision_stages_in_its_dtype(dtype: Any) -> None:
    """Every solver and its derivative stage in single precision (nothing compiled: dtype mistakes are staging
    errors)."""
    a, b = ts.Spec((5, 5), dtype), ts.Spec((5,), dtype)
    for name in NAMES:
        solve = _solver(tsl, name)
        spec = ts.eval_shape(lambda m, v: (solve(m, v, None, m, None, 1e-5)[0],
                                           ts.vjp(lambda w: solve(m, w, None, None, 7, 1e-5)[0], v)[1](v)[0]), a, b)
        assert [s.dtype for s in spec] == [np.dtype(dtype)] * 2 and spec[0].shape == (5,), name
