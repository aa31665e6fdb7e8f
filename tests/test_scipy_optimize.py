"""ts.scipy.optimize.minimize (JAX's BFGS and L-BFGS with its strong-Wolfe line search) against SciPy's BFGS and
L-BFGS-B (Rosenbrock in 2 and 5 dimensions, a logistic-regression loss), a quadratic's exact minimizer (a float64
solve) and jax (iteration and evaluation counts); eager and staged (one while_loop), vmap against a loop, errors.

Deliberate differences from JAX (see the module docstring): the zoom's bracket width is compared unsigned (JAX's
signed test fails every search whose bracket is entered high end first, jax-ml/jax#16236: JAX stops with status 3
on Rosenbrock where SciPy and tensorstage converge), ``tol`` sets ``gtol``, ``x0`` must be real, unknown options
are an error.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
import scipy.optimize

import tensorstage as ts
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

minimize: Any = ts.scipy.optimize.minimize
LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
RNG = np.random.default_rng(3)
STARTS = RNG.uniform(-1.5, 1.5, (3, 2))
X0_5 = RNG.uniform(-1.5, 1.5, 5)
_M = RNG.normal(size=(6, 6))
A = _M @ _M.T + 6 * np.eye(6)
B = RNG.normal(size=6)
FEATURES = RNG.normal(size=(40, 3))
LABELS = (RNG.uniform(size=40) < 1 / (1 + np.exp(-FEATURES @ np.array([1.0, -2.0, 0.5])))).astype(np.float64)
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax not installed")


def rosen(x: Any, xp: Any = tnp) -> Any:
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x: Any, a: Any, b: Any) -> Any:
    return 0.5 * x @ (a @ x) - b @ x


def logistic(w: Any, x: Any, y: Any, xp: Any = tnp) -> Any:
    z = x @ w
    return xp.mean(xp.logaddexp(0.0, z) - y * z) + 0.01 * xp.sum(w * w)


@ts.program
def solve_all(starts: Any, x0_5: Any, a: Any, b: Any, x: Any, y: Any) -> Any:
    return (
        ts.vmap(lambda s: minimize(rosen, s, method="BFGS"))(starts),
        minimize(quadratic, tnp.zeros_like(b), (a, b), method="bfgs"),
        minimize(rosen, x0_5, method=LBFGS),
        minimize(logistic, tnp.zeros(3, tnp.float64), (x, y), method=LBFGS, options={"maxcor": 5}),
    )


def results() -> Any:
    return solve_all(STARTS, X0_5, A, B, FEATURES, LABELS)


def test_against_scipy_and_exact_minimizers() -> None:
    ros2, quad, ros5, logit = results()
    assert ros2.x.shape == (3, 2) and ros2.nit.dtype == np.int32 and ros2.success.dtype == np.bool_
    for i, start in enumerate(STARTS):
        ref = scipy.optimize.minimize(scipy.optimize.rosen, start, method="BFGS", jac=scipy.optimize.rosen_der)
        assert ref.success and bool(ros2.success[i]) and int(ros2.status[i]) == 0
        np.testing.assert_allclose(np.asarray(ros2.x[i]), ref.x, atol=1e-6)
        assert int(ros2.nit[i]) <= 2 * ref.nit and float(ros2.fun[i]) < 1e-12  # SciPy tries MINPACK's search first
    np.testing.assert_allclose(np.asarray(quad.x), np.linalg.solve(A, B), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(quad.jac), A @ np.asarray(quad.x) - B, atol=1e-12)
    assert bool(quad.success) and int(quad.nit) <= 12
    np.testing.assert_allclose(np.asarray(quad.hess_inv), np.linalg.inv(A), atol=1e-10)
    # L-BFGS stops once the decrease falls below ftol (status 4, which JAX counts as no success).
    ref = scipy.optimize.minimize(scipy.optimize.rosen, X0_5, method="L-BFGS-B", jac=scipy.optimize.rosen_der)
    assert int(ros5.status) in (0, 4) and ros5.hess_inv is None
    np.testing.assert_allclose(np.asarray(ros5.x), ref.x, atol=1e-4)
    ref = scipy.optimize.minimize(logistic, np.zeros(3), args=(FEATURES, LABELS, np), method="BFGS", tol=1e-10)
    np.testing.assert_allclose(np.asarray(logit.x), ref.x, atol=1e-4)
    np.testing.assert_allclose(float(logit.fun), ref.fun, rtol=1e-9)


def test_staged_as_one_loop_and_vmap_matches_a_loop() -> None:
    staged = ts.program(lambda s: minimize(rosen, s, method="BFGS")).stage(STARTS[0])
    assert [e.primitive.name for e in staged.graph.eqns].count("while") == 1
    ros2 = results()[0]
    for i, start in enumerate(STARTS):  # on concrete arrays: staged, compiled (once) and run
        single = minimize(rosen, list(start), method="BFGS", tol=1e-5)  # a list, and tol as gtol (its default)
        np.testing.assert_allclose(np.asarray(single.x), np.asarray(ros2.x[i]), rtol=1e-13)
        assert int(single.nit) == int(ros2.nit[i]) and int(single.nfev) == int(ros2.nfev[i])


@needs_jax
def test_matches_jax() -> None:
    import jax
    import jax.numpy as jnp
    from jax.scipy.optimize import minimize as jax_minimize

    def both(a: Any, b: Any, x: Any, y: Any) -> Any:
        return (jax_minimize(quadratic, jnp.zeros(6), (a, b), method="BFGS"),
                jax_minimize(lambda w: logistic(w, x, y, jnp), jnp.zeros(3), method=LBFGS, options={"maxcor": 5}))

    with jax.enable_x64(True):
        want = jax.jit(both)(A, B, FEATURES, LABELS)
    _, quad, _, logit = results()
    for got, ref in zip((quad, logit), want):
        np.testing.assert_allclose(np.asarray(got.x), np.asarray(ref.x), rtol=1e-12, atol=1e-14)
        assert (int(got.nit), int(got.nfev), int(got.njev), int(got.status)) == (
            int(ref.nit), int(ref.nfev), int(ref.njev), int(ref.status))


def test_errors() -> None:
    x = ts.Spec((3,), np.float64)
    cases = [
        (lambda v: minimize(rosen, v, method="Nelder-Mead"), [x], ValueError, ["minimize", "'Nelder-Mead'", "BFGS"]),
        (lambda v: minimize(lambda u: u * 2, v, method="BFGS"), [x], ts.ShapeError,
         ["minimize", "fun (<lambda>)", "scalar", "f64[3]"]),
        (lambda v: minimize(rosen, v[None], method="BFGS"), [x], ts.ShapeError, ["minimize", "x0", "1-D", "f64[1, 3]"]),
        (lambda v: minimize(rosen, v.astype(np.int32), method="BFGS"), [x], ts.DTypeError, ["minimize", "i32[3]"]),
        (lambda v: minimize(lambda u: rosen(u).astype(np.float32), v, method="BFGS"), [x], ts.DTypeError,
         ["minimize", "x0's dtype", "f32[]"]),
        (lambda v: minimize(rosen, v, method="BFGS", options={"maxcor": 3}), [x], TypeError,
         ["minimize", "'maxcor'", "gtol"]),
        (lambda v: minimize(quadratic, v, [np.eye(3), v], method="BFGS"), [x], TypeError, ["minimize", "tuple"]),
    ]
    check_staging_errors(cases, "test_scipy_optimize.py")
