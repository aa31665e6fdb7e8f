"""Transform compositions over control flow: every base function (cond, switch, while_loop, fori_loop with static
and staged bounds, scan forward / reverse / nested / with length=, pytree, int and bool carries, custom_jvp,
custom_vjp and checkpoint inside them, closures over staged values) goes through those of jacfwd, jacrev, hessian,
jacfwd-of-jacfwd, jvp, linearize, vjp, vmap of grad / jacfwd with in_axes and out_axes, grad of vmap, vmap of vmap
and grad of checkpoint that apply to it, in one compiled program per base function. Unbatched results are checked
against central finite differences in f64, batched ones against the unbatched ones column by column, and the
deepest compositions against jax when it is installed. Then regressions and the quality of error messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

HERE = os.path.basename(__file__)
W = np.array([0.3, -0.7, 1.1])


class NS:
    """The library a base function is written against: tensorstage, or jax as the oracle."""

    def __init__(self, jax_mod: Any = None) -> None:
        self.is_ts = jax_mod is None
        if self.is_ts:
            self.m: Any = ts
            self.n: Any = tnp
            self.lax: Any = ts
            self.stop: Callable[[Any], Any] = ts.stop_gradient
        else:
            self.m, self.n, self.lax = jax_mod, jax_mod.numpy, jax_mod.lax
            self.stop = jax_mod.lax.stop_gradient
        self.cj, self.cv = _custom_jvp(self), _custom_vjp(self)


def _custom_jvp(S: NS) -> Any:
    n = S.n
    f = S.m.custom_jvp(lambda x, k: n.sin(x) * x * k)

    @f.defjvp
    def rule(p: Any, t: Any) -> Any:
        (x, k), (tx, _) = p, t
        return f(x, k), (n.cos(x) * x + n.sin(x)) * k * tx

    return f


def _custom_vjp(S: NS) -> Any:
    n = S.n
    f = S.m.custom_vjp(lambda x, w: n.tanh(x) * w)
    f.defvjp(
        lambda x, w: (f(x, w), (x, w)),
        lambda r, g: ((1 - n.tanh(r[0]) ** 2) * r[1] * g, n.tanh(r[0]) * g),
    )
    return f


# Base functions R^3 -> R^3, each with whether reverse mode applies ("fwd": forward only; "rev": reverse only).
def f_cond(S: NS, x: Any) -> Any:
    n = S.n
    w = n.sin(x) * W  # a closed-over staged value
    return S.lax.cond(n.sum(x) > 0, lambda a: n.sin(a) * w, lambda a: a * a * n.sum(w), x)


def f_switch(S: NS, x: Any) -> Any:
    n = S.n
    i = (x[0] > 0).astype(np.int32) + (x[1] > 0).astype(np.int32) * 2  # 0..3: 3 is clamped to the last branch
    return S.lax.switch(i, [lambda a: n.sin(a) * x[2], lambda a: a**3, lambda a: n.exp(a) * 0.5], x)


def f_while(S: NS, x: Any) -> Any:
    n = S.n

    def body(c: Any) -> Any:
        k, v = c
        return k + 1, n.sin(v) * 1.2 + x * 0.1

    return S.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def f_while_data(S: NS, x: Any) -> Any:
    n = S.n
    body = lambda c: (c[0] + 1.0, c[1] * 1.3 + 0.05)  # noqa: E731
    done = lambda c: (n.sum(n.abs(c[1])) < 6.0) & (c[0] < 20.0)  # noqa: E731
    return S.lax.while_loop(done, body, (np.float64(0.0), x))[1] * x


def f_fori_static(S: NS, x: Any) -> Any:
    n = S.n
    return S.lax.fori_loop(1, 4, lambda i, v: n.sin(v) * i.astype(v.dtype) * 0.5 + v * x, x)


def f_fori_staged(S: NS, x: Any) -> Any:
    k = (x[0] > 0).astype(np.int32) + 2
    return S.lax.fori_loop(0, k, lambda i, v: S.n.tanh(v) + x * 0.3, x)


def _scan(S: NS, x: Any, reverse: bool) -> Any:
    n = S.n
    xs = n.stack([x, x * 2, n.cos(x), x[::-1]])

    def step(c: Any, a: Any) -> Any:
        (h, s), k, flag = c
        h2 = n.tanh(h * a + s) * (k + 1).astype(h.dtype)
        h2 = n.where(flag, h2, S.cj(h2, 0.5))
        return ((h2, s + n.sum(h2) * 0.1), k + 1, n.logical_not(flag)), {"y": h2 * a, "z": n.sum(h2)}

    ((h, s), _, _), ys = S.lax.scan(step, ((x, np.float64(0.0)), np.int32(0), np.bool_(True)), xs, reverse=reverse)
    return h * s + n.sum(ys["y"], axis=0) + ys["z"][1]


def f_scan(S: NS, x: Any) -> Any:
    return _scan(S, x, True)


def f_scan_nested(S: NS, x: Any) -> Any:
    n, lax = S.n, S.lax
    layer = S.m.checkpoint(lambda h, w: n.tanh(h * w + n.sin(h)))
    inner = lambda c, b: (layer(c, b), c)  # noqa: E731
    outer = lambda c, b: (lax.scan(inner, c, n.stack([b, b * b]), reverse=True)[0] * 0.5, None)  # noqa: E731
    c, ys = lax.scan(lambda c, _: (n.sin(c) * x + c * 0.5, c), x, None, length=2)
    return lax.scan(outer, c + ys[1], n.stack([x, n.cos(x)]))[0]


def f_custom_vjp(S: NS, x: Any) -> Any:
    return S.lax.cond(x[1] > 0, lambda a: S.cv(a, x[::-1]), lambda a: a * 2.0, x)


BASES: dict[str, tuple[Callable[[NS, Any], Any], str]] = {
    "cond": (f_cond, "both"), "switch": (f_switch, "both"), "while": (f_while, "fwd"),
    "while_data": (f_while_data, "fwd"), "fori_static": (f_fori_static, "both"), "fori_staged": (f_fori_staged, "fwd"),
    "scan": (f_scan, "both"), "scan_nested": (f_scan_nested, "both"),
    "custom_vjp": (f_custom_vjp, "rev"),
}


def transforms(
    S: NS, base: Callable[[NS, Any], Any], mode: str, keys: tuple[str, ...] | None = None
) -> Callable[..., dict[str, Any]]:
    """Every composition of ``base`` that its mode allows (or those of them named in ``keys``), as one function
    of (x, t, X, X3)."""
    m, n = S.m, S.n
    f = lambda x: base(S, x)  # noqa: E731
    g = lambda x: n.sum(f(x) ** 2) * 0.5  # noqa: E731

    def run(x: Any, t: Any, X: Any, X3: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"f": f(x), "vmapvmap": m.vmap(m.vmap(f), in_axes=1, out_axes=2)(X3)}
        if mode != "rev":
            out["jacfwd"] = m.jacfwd(f)(x)
            if mode == "fwd":  # forward-over-forward second derivatives where hessian (reverse inside) cannot go
                out["jfjf"] = m.jacfwd(m.jacfwd(g))(x)
            out["jvp"] = m.jvp(f, (x,), (t,))[1]
            if mode == "fwd":  # (the batched reverse-mode compositions below stand for these where they apply)
                y, lin = m.linearize(f, x)
                out["linearize"] = lin(t)
                out["vjacfwd"] = m.vmap(m.jacfwd(f), in_axes=1)(X)
        if mode != "fwd":
            out["jacrev"] = m.jacrev(f)(x)
            y, back = m.vjp(f, x)
            out["vjp"] = back(t)[0]
            out["vgrad"] = m.vmap(m.grad(g), in_axes=1, out_axes=1)(X)
            out["gradv"] = m.grad(lambda X: n.sum(m.vmap(f, in_axes=1)(X) ** 2))(X)
            out["grad_ck"] = m.grad(lambda x: n.sum(m.checkpoint(f)(x) ** 2) * 0.5)(x)
        if mode == "both":
            out["hessian"] = m.hessian(g)(x)
        return out if keys is None else {k: v for k, v in out.items() if k in keys}

    return run


def inputs(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((3, 2)), rng.standard_normal((2, 2, 3))


_RESULTS: dict[str, dict[str, np.ndarray]] = {}  # tensorstage's results by base, shared by the tests below
_PROGRAMS: dict[str, Any] = {}


def program(name: str) -> Any:
    if name not in _PROGRAMS:
        base, mode = BASES[name]
        _PROGRAMS[name] = ts.program(transforms(NS(), base, mode))
    return _PROGRAMS[name]


def results(name: str) -> dict[str, np.ndarray]:
    if name not in _RESULTS:
        _RESULTS[name] = {k: np.asarray(v) for k, v in program(name)(*inputs(7)).items()}
    return _RESULTS[name]


def fd_jacobian(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", list(BASES))
def test_compositions_match_finite_differences(name: str) -> None:
    base, mode = BASES[name]
    x, t, X, X3 = inputs(7)
    r = results(name)
    prog = program(name)
    f = lambda v: np.asarray(prog(v, t, X, X3)["f"])  # noqa: E731  (one compiled program, many runs)
    J = fd_jacobian(f, x)
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)  # noqa: E731
    assert r["f"].shape == (3,) and r["f"].dtype == np.float64
    for key in ("jacfwd", "jacrev"):
        if key in r:
            close(r[key], J)
    if "jvp" in r:
        close(r["jvp"], J @ t)
    if "linearize" in r:
        close(r["linearize"], J @ t)
    if "vjp" in r:
        close(r["vjp"], J.T @ t)
        close(r["grad_ck"], J.T @ r["f"])
    second = r.get("hessian", r.get("jfjf"))
    if second is not None:  # the Hessian of sum(f**2)/2 is the Jacobian of J^T f
        grad_g = lambda v: fd_jacobian(f, v).T @ f(v)  # noqa: E731
        np.testing.assert_allclose(second, fd_jacobian(grad_g, x, 1e-4), rtol=1e-4, atol=1e-5)
    # Batched results against the unbatched ones, column by column.
    for k in range(X.shape[1]):
        col = {key: np.asarray(v) for key, v in prog(X[:, k], t, X, X3).items()}
        if "vjacfwd" in r:
            close(r["vjacfwd"][k], col["jacfwd"])
        if "vgrad" in r:
            close(r["vgrad"][:, k], col["jacrev"].T @ col["f"])
            close(r["gradv"][:, k], 2 * col["jacrev"].T @ col["f"])
    for i in range(X3.shape[0]):
        for j in range(X3.shape[1]):
            close(r["vmapvmap"][i, :, j], f(X3[i, j]))


# jax compiles these compositions slowly: it checks the deepest ones (the finite differences check them all).
JAX_KEYS = ("vmapvmap", "jfjf", "hessian", "vgrad", "vjacfwd", "vjp")


@pytest.mark.parametrize("name", ["while_data", "scan", "custom_vjp"])
def test_compositions_match_jax(name: str) -> None:
    jax = pytest.importorskip("jax")
    base, mode = BASES[name]
    with jax.enable_x64(True):  # scoped: other tests compare with jax's f32 defaults
        expected = jax.jit(transforms(NS(jax), base, mode, JAX_KEYS))(*inputs(7))
        expected = {key: np.asarray(value) for key, value in expected.items()}
    got = results(name)
    assert set(expected) == set(got) & set(JAX_KEYS)
    for key, value in expected.items():
        ref = np.asarray(value)
        assert got[key].shape == ref.shape and got[key].dtype == ref.dtype, key
        np.testing.assert_allclose(got[key], ref, rtol=1e-9, atol=1e-11, err_msg=f"{name}: {key}")


# ---------------------------------------------------------------------------------------------- regressions


def test_custom_jvp_python_scalar_argument_stays_weak() -> None:
    """A Python scalar argument of a custom_jvp function is weakly typed in its rule too (it used to be staged
    as an f32 tensor there, so ``cos(x) * k * tx`` with f64 x failed under grad)."""
    cj = NS().cj
    x = np.random.default_rng(1).standard_normal((2, 3))
    expected = (np.cos(x) * x + np.sin(x)) * 0.5
    np.testing.assert_allclose(ts.vmap(ts.grad(lambda v: tnp.sum(cj(v, 0.5))))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(ts.jvp(lambda v: cj(v, 0.5), (x[0],), (x[1],))[1], expected[0] * x[1], rtol=1e-12)
    y32 = ts.grad(lambda v: tnp.sum(cj(v, 0.5)))(x[0].astype(np.float32))
    assert y32.dtype == np.float32


def test_custom_vjp_python_scalar_residual_stays_weak() -> None:
    """A Python scalar argument saved as a residual of a custom_vjp is weakly typed in bwd too (it used to be an
    f32 tensor there, so ``cos(x) * k * g`` with f64 x failed under grad)."""
    cv = ts.custom_vjp(lambda v, k: tnp.sin(v) * k)
    cv.defvjp(lambda v, k: (tnp.sin(v) * k, (tnp.cos(v), k)), lambda r, g: (r[0] * r[1] * g, None))
    x = np.random.default_rng(3).standard_normal((2, 3))
    np.testing.assert_allclose(ts.vmap(ts.grad(lambda v: tnp.sum(cv(v, 1.5))))(x), np.cos(x) * 1.5, rtol=1e-12)


def test_stop_gradient_in_loops_under_grad_and_vmap() -> None:
    # c1 = stop(x) * x, c2 = stop(c1) * c1: the derivative sees d c2 = c1 * x dx = x**3 dx.
    f = lambda v: tnp.sum(ts.fori_loop(0, 2, lambda i, c: ts.stop_gradient(c) * c, v))  # noqa: E731
    x = np.random.default_rng(4).standard_normal((2, 3))
    np.testing.assert_allclose(ts.vmap(ts.grad(f))(x), x**3, rtol=1e-12)
    # The gradient x**3 is a product of stopped values (as in JAX), so nothing flows into a second derivative.
    np.testing.assert_array_equal(ts.hessian(f)(x[0]), np.zeros((3, 3)))
    np.testing.assert_allclose(ts.jvp(f, (x[0],), (x[1],))[1], np.sum(x[0] ** 3 * x[1]), rtol=1e-12)


def test_scan_accepts_unroll() -> None:
    xs = np.arange(6.0)
    c, ys = ts.scan(lambda c, x: (c + x, c * x), 0.0, xs, unroll=2)
    assert float(c) == 15.0
    np.testing.assert_allclose(ys, np.cumsum(np.r_[0.0, xs[:-1]]) * xs)
    with pytest.raises(TypeError, match="unroll"):
        ts.scan(lambda c, x: (c, x), 0.0, xs, unroll=0)


# ----------------------------------------------------------------------------------------------- messages


def _raises(fn: Callable[[], Any], *pieces: str) -> str:
    with pytest.raises(TypeError) as info:
        fn()
    text = str(info.value)
    for piece in (*pieces, HERE):
        assert piece in text, (piece, text)
    return text


class N(ts.Dim): ...


class M(ts.Dim): ...


def test_error_messages_name_the_transform_types_and_line() -> None:
    @ts.program
    def mismatched(a: ts.Tensor[ts.f32, N, M], b: ts.Tensor[ts.f32, M, N]) -> Any:
        return ts.vmap(lambda x, y: x * y)(a, b)

    _raises(lambda: mismatched.stage(N=3, M=4), "vmap", "f32[N=3, M=4]", "f32[M=4, N=3]", "different sizes")
    x = np.ones(3, np.float32)
    _raises(lambda: ts.vmap(lambda a, b: a, in_axes=(0, 0, 0))(x, (x,)), "vmap", "3 entries", "f32[3], a tuple")
    _raises(lambda: ts.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": x}), "vmap", "in_axes[0]", "prefix")
    _raises(lambda: ts.grad(lambda v: v * 2)(x), "grad", "scalar", "f32[3]")
    text = _raises(
        lambda: ts.grad(lambda v: tnp.sum(ts.while_loop(lambda c: c[0] < 3, lambda c: c * 2, v)))(x),
        "while_loop", "reverse-mode", "fori_loop",
    )
    assert re.search(rf"{HERE}:\d+", text)
    k = np.int32(2)
    _raises(lambda: ts.grad(lambda v, k: tnp.sum(ts.fori_loop(0, k, lambda i, c: c * 2, v)))(x, k), "while_loop")
    _raises(lambda: ts.linearize(tnp.sin, x)[1](x[:2]), "linearize", "f32[2]", "f32[3]")
    _raises(lambda: ts.jacrev(lambda v: ts.while_loop(lambda c: c[0] < 3, lambda c: c * 2, v))(x), "reverse-mode")
    cv = ts.custom_vjp(lambda v: tnp.sin(v))
    cv.defvjp(lambda v: (tnp.sin(v), tnp.cos(v)), lambda r, g: (r * g,))
    _raises(lambda: ts.jvp(cv, (x,), (x,)), "custom_vjp", "forward mode")
    _raises(lambda: ts.scan(lambda c, a: (c[:2], c), x, np.ones((2, 3), np.float32)), "scan", "f32[3] -> f32[2]")


def test_fori_loop_with_numpy_bounds_is_reverse_differentiable() -> None:
    """Concrete NumPy bounds (a 0-d array, as ``np.array(3)`` or a value read from data) fix the trip count as
    Python ints do, so the loop is a scan that grad goes through (it used to be a while_loop that grad rejected)."""
    x = np.random.default_rng(2).standard_normal(3)
    grad = ts.grad(lambda v: tnp.sum(ts.fori_loop(np.array(1), np.int64(4), lambda i, c: c * tnp.sin(c), v)))(x)

    def loop(v: np.ndarray) -> float:
        for _ in range(3):
            v = v * np.sin(v)
        return float(v.sum())

    np.testing.assert_allclose(grad, fd_jacobian(lambda v: np.array(loop(v)), x), rtol=1e-6)
