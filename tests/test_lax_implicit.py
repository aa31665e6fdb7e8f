"""lax.custom_linear_solve and lax.custom_root in every mode: values, jvp / linearize / jacfwd, grad / vjp / jacrev,
and their nestings (hessian = jacfwd of jacrev, jacrev of jacfwd, grad of grad, jacfwd of jacfwd), vmap of grad and
grad of vmap, against jax.lax (float64, where installed), closed forms and central finite differences; pytree
unknowns, has_aux, symmetric and complex systems; and the errors.

The solvers are never differentiated: they run in while_loops (which reverse mode refuses) or read their matrix
through stop_gradient (which would zero any derivative taken through them), so every derivative checked here is
the implicit one.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from directional_grads import EPS, assert_grads_match_finite_differences


def _jax() -> Any:
    """The jax module (the oracle; compare within ``jax.enable_x64(True)``), or None where it is not installed."""
    try:
        import jax
    except ImportError:
        return None
    return jax


def _close(got: Any, want: Any, tol: float = 1e-10) -> None:
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _leaves(tree: Any) -> list[Any]:
    return ts.tree.leaves(tree)


def _problems(t: Any, xp: Any, lax: Any) -> SimpleNamespace:
    """The systems, written once for tensorstage (``ts, tnp, ts.lax``) and jax (``jax, jnp, jax.lax``)."""

    def linear(a: Any, b: Any) -> Any:
        """``(a + 4I)⁻¹ b``; the solvers read the matrix through stop_gradient."""
        m = a + 4 * xp.eye(3, dtype=a.dtype)
        fixed = lax.stop_gradient(m)
        return lax.custom_linear_solve(lambda v: m @ v, b, lambda mv, r: xp.linalg.solve(fixed, r),
                                       lambda vm, r: xp.linalg.solve(fixed.T, r))

    def newton(f: Any, x0: Any) -> Any:
        """Elementwise Newton (f's Jacobian is diagonal) in a while_loop."""
        def step(state: Any) -> Any:
            i, x = state
            return i + 1, x - f(x) / t.grad(lambda y: xp.sum(f(y)))(x)
        return lax.while_loop(lambda s: s[0] < 40, step, (0, x0))[1]

    def cube(c: Any) -> Any:
        """``y`` with ``y³ + y = c``, elementwise."""
        return lax.custom_root(lambda y: y ** 3 + y - c, xp.zeros_like(c), newton,
                               lambda g, r: r / g(xp.ones_like(r)))

    def cramer(c1: Any, c2: Any, y: Any) -> Any:
        """``z`` with ``z_u c1 + z_v c2 = y``: 2×2 systems, one per element."""
        det = c1["u"] * c2["v"] - c2["u"] * c1["v"]
        return {"u": (y["u"] * c2["v"] - c2["u"] * y["v"]) / det, "v": (c1["u"] * y["v"] - y["u"] * c1["v"]) / det}

    def columns(g: Any, like: Any) -> tuple[Any, Any]:
        one, zero = xp.ones_like(like), xp.zeros_like(like)
        return g({"u": one, "v": zero}), g({"u": zero, "v": one})

    def pair(p: Any, q: Any) -> Any:
        """``(z, iterations)`` with ``u³ + v = p``, ``v³ - u = -q`` (a Jacobian of determinant 9u²v² + 1)."""
        def f(z: Any) -> Any:
            return {"u": z["u"] ** 3 + z["v"] - p, "v": z["v"] ** 3 - z["u"] + q}

        def solve(f: Any, z0: Any) -> Any:
            def step(state: Any) -> Any:
                i, z = state
                dz = cramer(*columns(lambda v: t.jvp(f, (z,), (v,))[1], p), f(z))
                return i + 1, {"u": z["u"] - dz["u"], "v": z["v"] - dz["v"]}
            return lax.while_loop(lambda s: s[0] < 40, step, (0.0, z0))[::-1]  # a float count: jax refuses int aux

        guess = {"u": xp.zeros_like(p), "v": xp.zeros_like(p)}
        return lax.custom_root(f, guess, solve, lambda g, y: cramer(*columns(g, p), y), has_aux=True)

    def linear_loss(a: Any, b: Any) -> Any:
        return xp.sum(xp.sin(linear(a, b)) * b)

    def cube_loss(c: Any) -> Any:
        return xp.sum(cube(c) ** 2 * c)

    def pair_loss(pq: Any) -> Any:
        z, _ = pair(pq[0], pq[1])
        return xp.sum(z["u"] * z["v"] + z["u"] ** 2 * pq[0])

    return SimpleNamespace(linear=linear, cube=cube, pair=pair, linear_loss=linear_loss, cube_loss=cube_loss,
                           pair_loss=pair_loss)


TS = _problems(ts, tnp, ts.lax)


def _every_mode(t: Any, p: SimpleNamespace, a: Any, b: Any, c: Any, pq: Any, da: Any, db: Any,
                batch: Any) -> dict[str, Any]:
    """Values and derivatives in every mode and nesting, by name, the same for either library."""
    lin_a = lambda a: p.linear_loss(a, b)  # noqa: E731
    lin_b = lambda b: p.linear_loss(a, b)  # noqa: E731
    return {
        "linear": p.linear(a, b), "cube": p.cube(c), "pair": p.pair(pq[0], pq[1]),
        "jvp linear": t.jvp(p.linear, (a, b), (da, db))[1], "jvp cube": t.jvp(p.cube, (c,), (c,))[1],
        "jvp pair": t.jvp(lambda pq: p.pair(pq[0], pq[1])[0], (pq,), (pq * 0.5,))[1],
        "linearize cube": t.linearize(p.cube, c)[1](c + 1),
        "grad linear": t.grad(p.linear_loss, argnums=(0, 1))(a, b), "grad cube": t.grad(p.cube_loss)(c),
        "grad pair": t.grad(p.pair_loss)(pq), "vjp linear": t.vjp(p.linear, a, b)[1](db),
        "hessian linear": t.hessian(lin_a)(a), "jacrev jacfwd linear": t.jacrev(t.jacfwd(lin_b))(b),
        "hessian cube": t.hessian(p.cube_loss)(c), "jacrev jacrev cube": t.jacrev(t.jacrev(p.cube_loss))(c),
        "jacfwd jacfwd cube": t.jacfwd(t.jacfwd(p.cube_loss))(c), "hessian pair": t.hessian(p.pair_loss)(pq),
        "vmap grad linear": t.vmap(t.grad(lin_b))(batch[0]),
        "grad vmap linear": t.grad(lambda bs: t.vmap(lin_b)(bs).sum())(batch[0]),
        "loop grad linear": [t.grad(lin_b)(row) for row in batch[0]],
        "vmap grad matrices": t.vmap(t.grad(p.linear_loss), in_axes=(0, None))(batch, b),
        "loop grad matrices": [t.grad(p.linear_loss)(m, b) for m in batch],
        "vmap grad cube": t.vmap(t.grad(p.cube_loss))(pq),
        "grad vmap cube": t.grad(lambda cs: t.vmap(p.cube_loss)(cs).sum())(pq),
    }


def test_every_mode_matches_jax_closed_forms_and_loops(rng: np.random.Generator) -> None:
    a, da = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    b, db, c = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(4)
    pq, batch = rng.standard_normal((2, 4)), rng.standard_normal((2, 3, 3))
    args = (a, b, c, pq, da, db, batch)
    got = ts.program(lambda *xs: _every_mode(ts, TS, *xs))(*args)
    x, y, (z, iterations) = np.asarray(got["linear"]), np.asarray(got["cube"]), got["pair"]
    _close(x, np.linalg.solve(a + 4 * np.eye(3), b), 1e-12)
    _close(y ** 3 + y, c, 1e-12)
    u, v = np.asarray(z["u"]), np.asarray(z["v"])
    _close([u ** 3 + v, v ** 3 - u], [pq[0], -pq[1]], 1e-12)
    assert float(iterations) == 40  # the auxiliary output comes through
    _close(got["jvp linear"], np.linalg.solve(a + 4 * np.eye(3), db - da @ x))  # ẋ = A⁻¹(ḃ - Ȧ x)
    slope = 1 / (3 * y ** 2 + 1)  # y' and y'' of y³ + y = c
    curvature = -6 * y * slope ** 3
    _close(got["jvp cube"], slope * c)
    _close(got["linearize cube"], slope * (c + 1))
    _close(got["hessian cube"], np.diag(2 * slope ** 2 * c + 2 * y * curvature * c + 4 * y * slope))  # of y² c
    _close(got["jacrev jacrev cube"], got["hessian cube"])
    _close(got["jacfwd jacfwd cube"], got["hessian cube"])
    _close(got["vmap grad linear"], np.array(got["loop grad linear"]))
    _close(got["grad vmap linear"], got["vmap grad linear"])
    _close(got["vmap grad matrices"], np.array(got["loop grad matrices"]))
    _close(got["grad vmap cube"], got["vmap grad cube"])
    jax = _jax()
    if jax is None:
        return
    import jax.numpy as jnp

    with jax.enable_x64(True):
        want = jax.jit(lambda *xs: _every_mode(jax, _problems(jax, jnp, jax.lax), *xs))(*args)
        for name in want:
            _close(got[name], want[name], 1e-9)


def test_gradients_and_hessians_match_finite_differences(rng: np.random.Generator) -> None:
    assert_grads_match_finite_differences([
        lambda x: TS.linear(x[:3], x[3]),
        lambda x: TS.cube(x[0]),
        lambda x: TS.pair(x[0], x[1])[0]["u"] * TS.pair(x[2], x[3])[0]["v"],
    ], rng, shape=(4, 3))
    # hessian along t against central differences of the gradient
    c, t = rng.standard_normal(5), rng.standard_normal(5)

    @ts.program
    def run(c: Any, t: Any) -> Any:
        g = ts.grad(TS.cube_loss)
        return ts.hessian(TS.cube_loss)(c) @ t, g(c + EPS * t), g(c - EPS * t)

    hvp, plus, minus = run(c, t)
    _close(hvp, (np.asarray(plus) - np.asarray(minus)) / (2 * EPS), 1e-6)


def _symmetric_aux(s: Any, b: Any) -> Any:
    """A pytree right-hand side, solved with an auxiliary output, transposed by ``solve`` itself (symmetric)."""
    return ts.lax.custom_linear_solve(lambda v: {"u": s @ v["u"]}, {"u": b},
                                      lambda mv, r: ({"u": tnp.linalg.solve(s, r["u"])}, tnp.sum(mv(r)["u"])),
                                      symmetric=True, has_aux=True)


def _complex_linear(xp: Any, lax: Any, m: Any, b: Any) -> Any:
    return lax.custom_linear_solve(lambda v: m @ v, b, lambda mv, r: xp.linalg.solve(m, r),
                                   lambda vm, r: xp.linalg.solve(m.T, r))


def test_complex_symmetric_pytree_aux_and_shared_operands(rng: np.random.Generator) -> None:
    def cnormal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    m, dm, b, db, ct = cnormal(3, 3) + 4 * np.eye(3), cnormal(3, 3), cnormal(3), cnormal(3), cnormal(3)
    s = rng.standard_normal((3, 3))
    s = s @ s.T + np.eye(3)
    bs = rng.standard_normal((5, 3))
    linear = lambda m, b: _complex_linear(tnp, ts.lax, m, b)  # noqa: E731

    @ts.program
    def run(m: Any, dm: Any, b: Any, db: Any, ct: Any, s: Any, bs: Any) -> Any:
        (x, aux), (x_dot, aux_dot) = ts.jvp(lambda b: _symmetric_aux(s, b), (bs[0],), (bs[1],))
        grads = ts.grad(lambda s, b: tnp.sum(_symmetric_aux(s, b)[0]["u"] ** 3), argnums=(0, 1))(s, bs[0])
        return (linear(m, b), ts.jvp(linear, (m, b), (dm, db))[1], ts.vjp(linear, m, b)[1](ct),
                x, aux, x_dot, aux_dot, grads)

    x_c, x_c_dot, (m_ct, b_ct), x, aux, x_dot, aux_dot, (gs, gb) = run(m, dm, b, db, ct, s, bs)
    want = np.linalg.solve(m, b)
    _close(x_c, want, 1e-12)
    _close(x_c_dot, np.linalg.solve(m, db - dm @ want))
    lam = np.linalg.solve(m.T, ct)  # the transpose, not the adjoint: JAX's convention
    _close(b_ct, lam)
    _close(m_ct, -np.outer(lam, want))
    _close(x["u"], np.linalg.solve(s, bs[0]), 1e-12)
    _close(aux, np.sum(s @ bs[0]), 1e-12)
    _close(x_dot["u"], np.linalg.solve(s, bs[1]))
    _close(aux_dot, 0)  # an auxiliary output has no derivative
    xs = np.linalg.solve(s, bs[0])
    lam_s = np.linalg.solve(s, 3 * xs ** 2)
    _close(gb, lam_s)
    _close(gs, -np.outer(lam_s, xs))
    if (jax := _jax()) is not None:
        import jax.numpy as jnp

        with jax.enable_x64(True):
            j_linear = lambda m, b: _complex_linear(jnp, jax.lax, m, b)  # noqa: E731
            _close(x_c_dot, jax.jvp(j_linear, (m, b), (dm, db))[1])
            _close([m_ct, b_ct], jax.vjp(j_linear, m, b)[1](ct))
    # vmap over right-hand sides leaves the shared matrix unbatched, in the solve and in its transpose
    per_example = ts.program(lambda s, bs: ts.vmap(ts.grad(lambda b: tnp.sum(_symmetric_aux(s, b)[0]["u"] ** 3)))(bs))
    solves = [e for e in per_example.stage(s, bs).graph.eqns if e.primitive.name == "linear_solve"]
    assert len(solves) == 2 and all(v.aval.shape == (3, 3) for e in solves for v in e.inputs[1:])
    _close(per_example(s, bs), np.array([np.linalg.solve(s, 3 * np.linalg.solve(s, r) ** 2) for r in bs]))


def test_eager_float32_and_linearize(rng: np.random.Generator) -> None:
    c = rng.standard_normal(4).astype(np.float32)
    y = TS.cube(c)  # eager
    assert np.asarray(y).dtype == np.float32
    _close(np.asarray(y) ** 3 + np.asarray(y), c, 1e-5)
    y_out, f_jvp = ts.linearize(TS.cube, c)
    _close(f_jvp(np.ones_like(c)), 1 / (3 * np.asarray(y_out) ** 2 + 1), 1e-5)
    _close(ts.grad(TS.cube_loss)(c), ts.jacfwd(TS.cube_loss)(c), 1e-5)
    # A Python scalar guess or right-hand side takes the precision of f or matvec (JAX's docstring: y / g(1.0)).
    for k in (np.float32(2.0), np.float64(2.0)):
        root = ts.lax.custom_root(lambda x: x * x - k, 1.0, lambda f, x0: tnp.sqrt(k), lambda g, y: y / g(1.0))
        solved = ts.lax.custom_linear_solve(lambda v: k * v, 1.0, lambda mv, r: r / k)
        assert np.asarray(root).dtype == np.asarray(solved).dtype == k.dtype
        _close([root, solved], [np.sqrt(2.0), 0.5], 1e-6)

    def only_solver(s: Any) -> Any:  # exact at s = 3, where its own derivative in s is 1
        return ts.lax.custom_linear_solve(lambda v: 2 * v, np.float64(1), lambda mv, r: r / 2 + (s - 3),
                                          symmetric=True)

    # what only the solver reads gets no derivative (as in JAX): the equation, matvec, does not involve it
    three = np.float64(3)
    assert (float(only_solver(three)), float(ts.grad(only_solver)(three))) == (0.5, 0.0)


def _while_tangent_solve(c: Any) -> Any:
    """The cube root, its tangent_solve a while_loop: forward mode works, reverse mode cannot transpose it (JAX
    neither)."""
    def tangent_solve(g: Any, r: Any) -> Any:
        return ts.lax.while_loop(lambda s: s[0] < 1, lambda s: (s[0] + 1, r / g(tnp.ones_like(r))), (0, r))[1]

    return ts.lax.custom_root(lambda y: y ** 3 + y - c, tnp.zeros_like(c), lambda f, g: TS.cube(c), tangent_solve)


def test_errors() -> None:
    b = np.arange(3.0)
    twice = lambda v: 2 * v  # noqa: E731
    halve = lambda mv, r: r / 2  # noqa: E731
    no_transpose = lambda b: tnp.sum(ts.lax.custom_linear_solve(twice, b, halve) ** 2)  # noqa: E731
    _close(ts.jvp(no_transpose, (b,), (b,))[1], np.sum(b ** 2) / 2)  # forward mode needs no transpose_solve
    for reverse in (ts.grad, ts.hessian):
        with pytest.raises(TypeError, match="custom_linear_solve: reverse-mode differentiation .* needs "
                           "transpose_solve \\(or symmetric=True\\)"):
            reverse(no_transpose)(b)
    c = np.linspace(-1, 1, 3)
    _close(ts.jvp(_while_tangent_solve, (c,), (np.ones(3),))[1], 1 / (3 * np.asarray(TS.cube(c)) ** 2 + 1))
    with pytest.raises(ts.TransformError, match="while_loop"):
        ts.grad(lambda c: tnp.sum(_while_tangent_solve(c)))(c)
    spec = ts.Spec((3,), np.float64)
    cases = [
        (lambda b: ts.lax.custom_linear_solve(twice, b, lambda mv, r: r[:2]), [spec], ts.ShapeError,
         ["lax.custom_linear_solve", "solve returned f64[2] where f64[3] was expected"]),
        (lambda b: ts.lax.custom_linear_solve(lambda v: (v, v), b, halve), [spec], ts.ShapeError,
         ["matvec returned structure"]),
        (lambda b: ts.lax.custom_linear_solve(twice, b, halve, halve, has_aux=True), [spec], ts.ShapeError,
         ["solve must return a pair (solution, aux) with has_aux=True"]),
        (lambda b: ts.lax.custom_linear_solve(twice, b, halve, lambda vm, r: r.astype(np.float32)), [spec],
         ts.ShapeError, ["transpose_solve returned f32[3] where f64[3] was expected"]),
        (lambda c: ts.lax.custom_root(lambda y: [y], c, lambda f, g: g, halve), [spec], ts.ShapeError,
         ["lax.custom_root", "f returned structure"]),
        (lambda c: ts.lax.custom_root(twice, c, lambda f, g: g.sum(), halve), [spec], ts.ShapeError,
         ["solve returned f64[] where f64[3] was expected"]),
        (lambda c: ts.lax.custom_root(twice, c, lambda f, g: g, lambda g, y: y[:1]), [spec], ts.ShapeError,
         ["tangent_solve returned f64[1] where f64[3] was expected"]),
    ]
    from staging_errors import check_staging_errors

    check_staging_errors(cases, "test_lax_implicit.py")
