"""Structured control flow: cond / switch / while_loop / fori_loop / scan, their printing, errors, and every
transform (jvp, grad, vmap) against NumPy loops and finite differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64
from tensorstage import numpy as tnp
from tensorstage.staging.ir import Graph
from tensorstage.staging.typecheck import typecheck


class N(Dim): ...
class M(Dim): ...


def deep_typecheck(graph: Graph) -> None:
    """Typecheck a graph and every graph nested in its equations' params."""
    typecheck(graph)
    for eqn in graph.eqns:
        for value in eqn.params.values():
            for g in value if isinstance(value, tuple) else (value,):
                if isinstance(g, Graph):
                    deep_typecheck(g)


def numeric_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ------------------------------------------------------------------------------------------------ forward


def test_cond_eager_and_staged(rng: np.random.Generator) -> None:
    x = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(ts.cond(True, lambda a: a * 2, lambda a: a - 1, x), x * 2, rtol=1e-6)

    @ts.program
    def f(x: Tensor[f32, N]) -> Tensor[f32, N]:
        return ts.cond(x.sum() > 0, lambda a: tnp.sin(a), lambda a: a * a, x)

    for sign in (1.0, -1.0):
        v = sign * np.abs(x)
        expected = np.sin(v) if v.sum() > 0 else v * v
        np.testing.assert_allclose(f(v), expected, rtol=1e-5)


def test_cond_pytrees_and_closure(rng: np.random.Generator) -> None:
    x = rng.standard_normal(3).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)

    @ts.program
    def f(x: Tensor[f32, N], w: Tensor[f32, N], p: Tensor[Any]) -> Any:
        # true_fn closes over w; false_fn does not: both still see one operand list.
        with_w = lambda d: {"a": d["x"] * w, "b": d["x"].sum()}  # noqa: E731
        without = lambda d: {"a": d["x"], "b": 0.0 * d["x"].sum()}  # noqa: E731
        return ts.cond(p, with_w, without, {"x": x})

    out = f(x, w, np.bool_(True))
    np.testing.assert_allclose(out["a"], x * w, rtol=1e-6)
    np.testing.assert_allclose(out["b"], x.sum(), rtol=1e-5)
    out = f(x, w, np.bool_(False))
    np.testing.assert_allclose(out["a"], x, rtol=1e-6)


def test_switch_clamps_the_index(rng: np.random.Generator) -> None:
    x = rng.standard_normal(3).astype(np.float32)
    branches = [lambda a: a, lambda a: a + 1, lambda a: a * 10]

    @ts.program
    def f(i: Tensor[Any], x: Tensor[f32, N]) -> Tensor[f32, N]:
        return ts.switch(i, branches, x)

    for i, expected in ((-3, x), (0, x), (1, x + 1), (2, x * 10), (7, x * 10)):
        np.testing.assert_allclose(f(np.int32(i), x), expected, rtol=1e-6)


def test_while_loop_matches_python_loop() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)

    def reference(x: np.ndarray) -> tuple[int, np.ndarray]:
        i, c = 0, x.copy()
        while c.sum() < 100:
            i, c = i + 1, c * 1.5 + 1
        return i, c

    i, c = ts.while_loop(lambda s: s[1].sum() < 100.0, lambda s: (s[0] + 1, s[1] * 1.5 + 1.0), (0, x))
    ri, rc = reference(x)
    assert int(np.asarray(i)) == ri
    np.testing.assert_allclose(c, rc, rtol=1e-5)


def test_fori_loop_static_is_scan_and_dynamic_is_while() -> None:
    x = np.array([0.5, 1.0], np.float32)

    def body(i: Any, c: Any) -> Any:
        return c * 2.0 + i.astype(f32)

    expected = x.copy()
    for i in range(2, 6):
        expected = expected * 2 + i

    @ts.program
    def static(x: Tensor[f32, N]) -> Tensor[f32, N]:
        return ts.fori_loop(2, 6, body, x)

    @ts.program
    def dynamic(x: Tensor[f32, N], lo: Any, hi: Any) -> Tensor[f32, N]:
        return ts.fori_loop(lo, hi, body, x)

    assert "scan[" in str(static.stage(x)) and "while[" not in str(static.stage(x))
    assert "while[" in str(dynamic.stage(x, np.int32(2), np.int32(6)))
    np.testing.assert_allclose(static(x), expected, rtol=1e-6)
    np.testing.assert_allclose(dynamic(x, np.int32(2), np.int32(6)), expected, rtol=1e-6)
    np.testing.assert_allclose(ts.fori_loop(3, 3, body, x), x)  # empty range: the carry passes through


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_numpy_loop(rng: np.random.Generator, reverse: bool) -> None:
    xs = {"a": rng.standard_normal((5, 3)).astype(np.float32), "b": rng.standard_normal(5).astype(np.float32)}
    h0 = rng.standard_normal(3).astype(np.float32)

    def step(h: Any, x: Any) -> Any:
        h = tnp.tanh(h * x["b"] + x["a"])
        return h, (h.sum(), h * 2.0)

    carry, (sums, doubled) = ts.scan(step, h0, xs, reverse=reverse)
    h, ref_sums, ref_doubled = h0.astype(np.float64), [0.0] * 5, [None] * 5
    for t in (reversed(range(5)) if reverse else range(5)):
        h = np.tanh(h * xs["b"][t] + xs["a"][t])
        ref_sums[t], ref_doubled[t] = h.sum(), h * 2
    np.testing.assert_allclose(carry, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(doubled, np.stack(ref_doubled), rtol=1e-5, atol=1e-6)  # type: ignore[arg-type]


def test_scan_without_xs_and_named_stack() -> None:
    @ts.program
    def powers(x: Tensor[f32, N]) -> Any:
        return ts.scan(lambda c, _: (c * x, c), tnp.ones_like(x), None, length=4)

    staged = powers.stage(N=2)
    deep_typecheck(staged.graph)
    assert staged.out_avals[1].shape == (4, 2) and staged.out_avals[1].dims == (None, "N")
    x = np.array([2.0, 3.0], np.float32)
    last, ys = powers(x)
    np.testing.assert_allclose(ys, np.stack([x**k for k in range(4)]), rtol=1e-6)
    np.testing.assert_allclose(last, x**4, rtol=1e-6)


def test_nested_graphs_print() -> None:
    @ts.program
    def f(x: Tensor[f32, N]) -> Tensor[f32, N]:
        def body(c: Any, xt: Any) -> Any:
            return ts.cond(xt > 0, lambda v: v * xt, lambda v: v - xt, c), None

        return ts.scan(body, x, x)[0]

    staged = f.stage(N=3)
    deep_typecheck(staged.graph)
    text = str(staged)
    assert "scan[body=" in text and "cond[branches=(" in text
    assert "num_consts=0 num_carry=1 length=3 reverse=False" in text
    assert text.count("{ lambda") == 4  # the program, the scan body and the two branches
    assert "test_control_flow.py:" in text
    module = staged.stablehlo()
    assert "stablehlo.while" in module and "stablehlo.if" in module and "stablehlo.dynamic_slice" in module


# ------------------------------------------------------------------------------------------------- errors


def test_cond_branch_types_must_agree() -> None:
    @ts.program
    def f(x: Tensor[f32, N]) -> Any:
        return ts.cond(x.sum() > 0, lambda a: a, lambda a: a.sum(), x)

    with pytest.raises(ts.ShapeError, match=r"true_fn returns f32\[N=3\] but false_fn returns f32\[\]") as err:
        f.stage(N=3)
    assert "test_control_flow.py:" in str(err.value)

    @ts.program
    def g(x: Tensor[f32, N], y: Tensor[f32, M]) -> Any:
        return ts.cond(x.sum() > 0, lambda: x, lambda: y)

    with pytest.raises(ts.ShapeError, match=r"true_fn returns f32\[N=3\] but false_fn returns f32\[M=3\]"):
        g.stage(N=3, M=3)


def test_loop_carry_type_must_not_change() -> None:
    @ts.program
    def f(x: Tensor[f32, N]) -> Any:
        return ts.while_loop(lambda c: c.sum() < 10.0, lambda c: c.astype(f64), x)

    with pytest.raises(ts.ShapeError, match=r"changes the carry type from \(f32\[N=3\]\) to \(f64\[N=3\]\)") as err:
        f.stage(N=3)
    assert "test_control_flow.py:" in str(err.value)

    @ts.program
    def g(x: Tensor[f32, N]) -> Any:
        return ts.scan(lambda c, xt: (c[:1], xt), x, x)

    with pytest.raises(ts.ShapeError, match=r"f32\[N=3\] -> f32\[1\]"):
        g.stage(N=3)


def test_predicates_and_lengths_are_checked() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(ts.DTypeError, match=r"predicate must be a bool scalar, got f32\[3\]"):
        ts.cond(x, lambda a: a, lambda a: a, x)
    with pytest.raises(ts.DTypeError, match="cond_fn must return a bool scalar"):
        ts.while_loop(lambda c: c, lambda c: c, x)
    with pytest.raises(ts.ShapeError, match=r"scan: the operands in xs disagree on the length: f32\[3\], f32\[4\]"):
        ts.scan(lambda c, xt: (c, xt), 0.0, (x, np.ones(4, np.float32)))
    with pytest.raises(ts.ShapeError, match="pass xs or length="):
        ts.scan(lambda c, xt: (c, xt), 0.0, None)


def test_python_if_on_a_staged_value_points_to_cond() -> None:
    @ts.program
    def f(x: Tensor[f32, N]) -> Any:
        return x if x.sum() > 0 else -x

    with pytest.raises(ts.ConcretizationError, match="ts.cond"):
        f.stage(N=2)


def test_grad_of_while_loop_suggests_fori_loop_or_scan() -> None:
    def f(x: Any) -> Any:
        return ts.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, x).sum()

    with pytest.raises(ts.TransformError, match="fori_loop with static .* or ts.scan") as err:
        ts.grad(f)(np.ones(2, np.float32))
    assert "test_control_flow.py:" in str(err.value)


# ----------------------------------------------------------------------------------------------- autodiff


@pytest.mark.parametrize("saved_residuals", [True, False])
def test_grad_of_cond_matches_finite_differences(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, saved_residuals: bool
) -> None:
    from tensorstage.staging.primitives.control_flow import cond_p

    if not saved_residuals:  # the plain VJP rule: the chosen branch recomputes its forward pass
        monkeypatch.setattr(cond_p, "vjp_forward", None)
    x = rng.standard_normal(3)

    def f(x: Any) -> Any:
        return ts.cond(x[0] > 0, lambda a: (tnp.sin(a) * a).sum(), lambda a: (a * a * a).sum(), x)

    def ref(x: np.ndarray) -> float:
        return float((np.sin(x) * x).sum() if x[0] > 0 else (x**3).sum())

    for v in (np.abs(x), -np.abs(x)):
        np.testing.assert_allclose(ts.grad(f)(v), numeric_grad(ref, v), rtol=1e-6)
        t = rng.standard_normal(3)
        _, tangent = ts.jvp(f, (v,), (t,))
        np.testing.assert_allclose(tangent, numeric_grad(ref, v) @ t, rtol=1e-6)


def test_grad_of_switch_with_closure(rng: np.random.Generator) -> None:
    x, w = rng.standard_normal(3), rng.standard_normal(3)

    def f(x: Any, w: Any, i: Any) -> Any:
        return ts.switch(i, [lambda a: (a * w).sum(), lambda a: tnp.exp(a).sum(), lambda a: (w * w).sum()], x)

    g = ts.grad(f, argnums=(0, 1))
    for i, (gx, gw) in enumerate([(w, x), (np.exp(x), 0 * w), (0 * x, 2 * w)]):
        got = g(x, w, np.int32(i))
        np.testing.assert_allclose(got[0], gx, rtol=1e-6)
        np.testing.assert_allclose(got[1], gw, rtol=1e-6)


def _rnn(params: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = tnp.tanh(h * params["a"] + x * params["b"])
        return h, h * h

    h, ys = ts.scan(step, params["h0"], xs)
    return h.sum() + ys.sum()


def _rnn_np(a: np.ndarray, b: np.ndarray, h0: np.ndarray, xs: np.ndarray) -> float:
    h, total = h0, 0.0
    for x in xs:
        h = np.tanh(h * a + x * b)
        total += (h * h).sum()
    return float(h.sum() + total)


def test_grad_of_scan_matches_finite_differences(rng: np.random.Generator) -> None:
    a, b, h0 = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    xs = rng.standard_normal((4, 3))
    params = {"a": a, "b": b, "h0": h0}
    grads, gxs = ts.grad(_rnn, argnums=(0, 1))(params, xs)
    np.testing.assert_allclose(grads["a"], numeric_grad(lambda v: _rnn_np(v, b, h0, xs), a), rtol=1e-5)
    np.testing.assert_allclose(grads["b"], numeric_grad(lambda v: _rnn_np(a, v, h0, xs), b), rtol=1e-5)
    np.testing.assert_allclose(grads["h0"], numeric_grad(lambda v: _rnn_np(a, b, v, xs), h0), rtol=1e-5)
    np.testing.assert_allclose(gxs, numeric_grad(lambda v: _rnn_np(a, b, h0, v), xs), rtol=1e-5)


def test_grad_of_scan_graph_has_one_forward_and_one_reverse_scan(rng: np.random.Generator) -> None:
    params = {k: rng.standard_normal(3) for k in ("a", "b", "h0")}
    staged = ts.grad(_rnn).stage(params, rng.standard_normal((4, 3)))
    deep_typecheck(staged.graph)
    scans = [e for e in staged.graph.eqns if e.primitive.name == "scan"]
    assert [e.params["reverse"] for e in scans] == [False, True]


def test_grad_of_static_fori_loop_and_second_derivative() -> None:
    x = np.array([1.0, 2.0, 3.0])

    def f(x: Any) -> Any:  # c_{k+1} = c_k * x + 1, three times: x^4 + x^2 + x + 1
        return ts.fori_loop(0, 3, lambda i, c: c * x + 1.0, x).sum()

    np.testing.assert_allclose(ts.grad(f)(x), 4 * x**3 + 2 * x + 1, rtol=1e-12)
    second = ts.grad(lambda v: ts.grad(f)(v).sum())(x)
    np.testing.assert_allclose(second, 12 * x**2 + 2, rtol=1e-12)


def test_jvp_of_while_loop(rng: np.random.Generator) -> None:
    x, t = rng.uniform(1, 2, 3), rng.standard_normal(3)

    def f(x: Any) -> Any:
        return ts.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, tnp.sin(c[1]) * x), (0, x))[1]

    def ref(x: np.ndarray) -> np.ndarray:
        c = x
        for _ in range(3):
            c = np.sin(c) * x
        return c

    value, tangent = ts.jvp(f, (x,), (t,))
    np.testing.assert_allclose(value, ref(x), rtol=1e-12)
    eps = 1e-6
    np.testing.assert_allclose(tangent, (ref(x + eps * t) - ref(x - eps * t)) / (2 * eps), rtol=1e-6)


def test_vjp_equals_jvp_transpose_through_nested_control_flow(rng: np.random.Generator) -> None:
    x, t = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))

    def f(x: Any) -> Any:
        def step(c: Any, xt: Any) -> Any:
            c = ts.cond(xt.sum() > 0, lambda v: v * xt, lambda v: tnp.cos(v) + xt, c)
            return c, c.sum()

        return ts.scan(step, tnp.ones(2, dtype=f64), x)[1]

    ct = rng.standard_normal(3)
    _, tangent = ts.jvp(f, (x,), (t,))
    _, pullback = ts.vjp(f, x)
    (xbar,) = pullback(ct)
    np.testing.assert_allclose(np.vdot(np.asarray(xbar), t), np.vdot(ct, np.asarray(tangent)), rtol=1e-10)


# ------------------------------------------------------------------------------------------------- vmap


def test_vmap_cond_batched_and_unbatched_predicate(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 3)).astype(np.float32)

    def f(x: Any, p: Any) -> Any:
        return ts.cond(p, lambda a: tnp.sin(a), lambda a: a * 2.0, x)

    preds = np.array([True, False, False, True])
    got = ts.vmap(f)(xs, preds)
    np.testing.assert_allclose(got, np.stack([np.sin(x) if p else x * 2 for x, p in zip(xs, preds)]), rtol=1e-6)
    got = ts.vmap(f, in_axes=(0, None))(xs, np.bool_(True))
    np.testing.assert_allclose(got, np.sin(xs), rtol=1e-6)


def test_vmap_switch_batched_index(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((5, 2)).astype(np.float32)
    idx = np.array([0, 2, 1, 9, -1], np.int32)
    branches = [lambda a: a, lambda a: a + 1.0, lambda a: a * 10.0]
    got = ts.vmap(lambda i, x: ts.switch(i, branches, x))(idx, xs)
    expected = np.stack([branches[int(np.clip(i, 0, 2))](x) for i, x in zip(idx, xs)])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_vmap_while_with_batched_predicate() -> None:
    starts = np.array([1.0, 5.0, 40.0], np.float32)

    def f(x: Any) -> Any:
        return ts.while_loop(lambda c: c[1] < 50.0, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))

    steps, values = ts.vmap(f)(starts)
    ref = []
    for x in starts:
        n = 0
        while x < 50:
            n, x = n + 1, x * 2
        ref.append((n, x))
    np.testing.assert_array_equal(steps, [n for n, _ in ref])
    np.testing.assert_allclose(values, [v for _, v in ref])


def test_vmap_scan_over_batched_xs_and_consts(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((2, 5, 3)).astype(np.float32)
    ws = rng.standard_normal((2, 3)).astype(np.float32)

    def f(x: Any, w: Any) -> Any:
        return ts.scan(lambda c, xt: (c + xt * w, c.sum()), tnp.zeros(3, dtype=f32), x)

    carry, ys = ts.vmap(f)(xs, ws)
    for b in range(2):
        c, ref_ys = np.zeros(3), []
        for t in range(5):
            ref_ys.append(c.sum())
            c = c + xs[b, t] * ws[b]
        np.testing.assert_allclose(carry[b], c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ys[b], ref_ys, rtol=1e-5, atol=1e-6)


def test_vmap_of_grad_of_scan_is_per_example_grad(rng: np.random.Generator) -> None:
    params = {k: rng.standard_normal(3) for k in ("a", "b", "h0")}
    batch = rng.standard_normal((3, 4, 3))
    per_example = ts.vmap(ts.grad(_rnn), in_axes=(None, 0))(params, batch)
    for i in range(3):
        single = ts.grad(_rnn)(params, batch[i])
        for k in params:
            np.testing.assert_allclose(per_example[k][i], single[k], rtol=1e-10)


def test_grad_of_vmap_of_cond(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 2))

    def f(xs: Any) -> Any:
        return ts.vmap(lambda x: ts.cond(x[0] > 0, lambda a: a * a, lambda a: tnp.sin(a), x))(xs).sum()

    expected = np.where(xs[:, :1] > 0, 2 * xs, np.cos(xs))
    np.testing.assert_allclose(ts.grad(f)(xs), expected, rtol=1e-10)


# ----------------------------------------------------------------------------------------- more edge cases


def test_python_scalar_carry_takes_the_body_dtype() -> None:
    xs = np.array([1.0, 2.0, 3.0])  # f64, while a Python float carry starts as the default f32
    last, ys = ts.scan(lambda h, xt: (h * 0.5 + xt, h), 1.0, xs)
    assert last.dtype == np.float64 and ys.dtype == np.float64
    np.testing.assert_allclose(ys, [1.0, 1.5, 2.75])
    n = ts.fori_loop(0, 3, lambda i, c: c + i, 0)  # an int carry stays i32
    assert n.dtype == np.int32 and int(np.asarray(n)) == 3


def test_empty_scan_returns_the_init() -> None:
    last, ys = ts.scan(lambda c, xt: (c + xt, c), 1.0, np.zeros((0,)))
    assert float(np.asarray(last)) == 1.0 and ys.shape == (0,)
    assert float(np.asarray(ts.grad(lambda v: ts.scan(lambda c, xt: (c * xt, c), v, np.zeros((0,)))[0])(2.0))) == 1.0


def test_integer_carry_through_grad_of_scan() -> None:
    x = np.array([1.0, 2.0, 3.0])

    def f(x: Any) -> Any:
        step = lambda c, xt: ((c[0] + 1, c[1] * xt + c[0].astype(f64)), c[1])  # noqa: E731
        (_, h), ys = ts.scan(step, (0, tnp.ones((), dtype=f64)), x)
        return h + ys.sum()

    def ref(x: np.ndarray) -> float:
        h, total = 1.0, 0.0
        for i, xt in enumerate(x):
            total += h
            h = h * xt + i
        return h + total

    np.testing.assert_allclose(ts.grad(f)(x), numeric_grad(ref, x), rtol=1e-6)


def test_forward_mode_runs_each_loop_once() -> None:
    x = np.array([1.0, 2.0])

    def w(x: Any) -> Any:
        return ts.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, tnp.sin(c[1]) * x), (0, x))[1]

    def s(x: Any) -> Any:
        return ts.scan(lambda c, xt: (tnp.sin(c) * xt, c * c), 1.0, x)

    for fn, name in ((w, "while"), (s, "scan")):
        staged = ts.program(lambda x, t: ts.jvp(fn, (x,), (t,))).stage(x, x)
        deep_typecheck(staged.graph)
        assert [e.primitive.name for e in staged.graph.eqns].count(name) == 1
    hess = ts.program(lambda v: ts.hessian(lambda u: s(u)[0])(v)).stage(x)
    deep_typecheck(hess.graph)
    assert [e.primitive.name for e in hess.graph.eqns].count("scan") == 2  # forward and reverse, with tangents


def test_hessian_of_scan_matches_finite_differences(rng: np.random.Generator) -> None:
    x = rng.uniform(0.5, 1.5, 3)

    def f(x: Any) -> Any:
        return ts.scan(lambda c, xt: (tnp.sin(c * xt), c), 1.0, x)[0]

    def grad_ref(v: np.ndarray) -> np.ndarray:
        return np.asarray(ts.grad(f)(v))

    eps = 1e-6
    expected = np.stack([(grad_ref(x + eps * e) - grad_ref(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(ts.hessian(f)(x), expected, rtol=1e-5, atol=1e-8)


def test_vmap_while_predicate_batched_through_a_closure() -> None:
    limits = np.array([3, 0, 7], np.int32)
    counts = ts.vmap(lambda lim: ts.while_loop(lambda c: c < lim, lambda c: c + 1, 0))(limits)
    np.testing.assert_array_equal(counts, limits)


def test_vmap_keeps_the_batch_dim_name() -> None:
    class B(Dim): ...

    xs = np.arange(6.0).reshape(2, 3)
    fns = [
        lambda v: ts.cond(v[0] > 0, lambda a: a * 2, lambda a: a, v),
        lambda v: ts.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2 + 1, v),
        lambda v: ts.scan(lambda c, xt: (c + xt, c * xt), 0.0, v)[1],
    ]
    for f in fns:
        staged = ts.program(lambda x: ts.vmap(f, B)(x)).stage(xs)
        deep_typecheck(staged.graph)
        assert staged.out_avals[0].dims == ("B", None)


def test_grad_of_nested_scans_and_the_plain_vjp_rule(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorstage.staging.primitives.control_flow import scan_p

    x = rng.uniform(-1, 1, (2, 3))

    def f(x: Any) -> Any:
        def row(c: Any, r: Any) -> Any:
            inner, ys = ts.scan(lambda h, v: (tnp.sin(h + v) * c, h * v), c, r)
            return inner + ys.sum(), inner

        return ts.scan(row, 0.5, x)[0]

    def ref(x: np.ndarray) -> float:
        c = 0.5
        for r in x:
            h, total = c, 0.0
            for v in r:
                total += h * v
                h = np.sin(h + v) * c
            c = h + total
        return float(c)

    expected = numeric_grad(ref, x)
    np.testing.assert_allclose(ts.grad(f)(x), expected, rtol=1e-6)
    # Without the forward rule, the VJP rule recomputes the forward scan for its residuals: same gradient.
    monkeypatch.setattr(scan_p, "vjp_forward", None)
    np.testing.assert_allclose(ts.grad(lambda v: f(v))(x), expected, rtol=1e-6)  # a new function: staged anew


def test_loop_invariant_residuals_are_not_stacked(rng: np.random.Generator) -> None:
    w, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((5, 3))

    def f(w: Any, xs: Any) -> Any:  # the body's w.T is the same at every step
        return ts.scan(lambda h, x: (tnp.tanh(h @ w.T + x), h.sum()), tnp.zeros(3, dtype=f64), xs)[0].sum()

    def ref(w: np.ndarray) -> float:
        h = np.zeros(3)
        for x in xs:
            h = np.tanh(h @ w.T + x)
        return float(h.sum())

    staged = ts.grad(f).stage(w, xs)
    deep_typecheck(staged.graph)
    forward = next(e for e in staged.graph.eqns if e.primitive.name == "scan" and not e.params["reverse"])
    assert all(v.aval.shape != (5, 3, 3) for v in forward.outputs)
    np.testing.assert_allclose(ts.grad(f)(w, xs), numeric_grad(ref, w), rtol=1e-6)


def test_vmap_of_scan_scans_inner_axes_without_transposes(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((2, 4, 5, 3))

    def f(x: Any) -> Any:
        return ts.scan(lambda c, xt: (c + tnp.sin(xt), c * xt), tnp.zeros(3, dtype=f64), x)

    def ref(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c, ys = np.zeros(3), []
        for xt in x:
            ys.append(c * xt)
            c = c + np.sin(xt)
        return c, np.stack(ys)

    twice = ts.vmap(ts.vmap(f))
    staged = ts.program(lambda x: twice(x)).stage(xs)
    deep_typecheck(staged.graph)
    assert "transpose" not in {e.primitive.name for e in staged.graph.eqns}
    carry, ys = twice(xs)
    for i, j in np.ndindex(2, 4):
        c, y = ref(xs[i, j])
        np.testing.assert_allclose(carry[i, j], c, rtol=1e-12)
        np.testing.assert_allclose(ys[i, j], y, rtol=1e-12)
    # Mapped over an inner axis: the scanned axis stays first, results still come out batch-major.
    carry, ys = ts.vmap(f, in_axes=1)(np.transpose(xs[0], (1, 0, 2)))
    for j in range(4):
        np.testing.assert_allclose(ys[j], ref(xs[0, j])[1], rtol=1e-12)
