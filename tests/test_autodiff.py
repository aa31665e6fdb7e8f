"""Automatic differentiation: per-primitive rules from the registry, then the public transforms end to end."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, f64
from tensorstage import numpy as tnp
from tensorstage.staging.builder import bind, building, inline
from tensorstage.staging.dce import dce
from tensorstage.staging.ir import Aval, Graph, Literal, Var
from tensorstage.staging.primitive import REGISTRY
from tensorstage.staging.transforms import jvp_graph, vjp_graph
from tensorstage.staging.typecheck import typecheck
from tensorstage.tensor import Traced

from primitive_cases import CASES, EIG_RUNS, Case

# Primitives whose derivatives are exercised by their own feature tests below (or by their owners' tests).
COVERED_ELSEWHERE = {"custom_vjp_call", "custom_jvp_call", "stop_gradient", "no_derivative", "cond", "while", "scan"}
# Collectives need a named mapped axis (pmap/vmap): tests/test_pmap.py checks their JVP/VJP rules.
COVERED_ELSEWHERE |= {"psum", "pmax", "pmin", "all_gather", "ppermute", "axis_index"}
COVERED_ELSEWHERE |= {"psum_scatter", "all_to_all"}  # tests/test_collectives_more.py
COVERED_ELSEWHERE |= {"checkpoint_call", "optimization_barrier"}  # tests/test_checkpoint.py
COVERED_ELSEWHERE |= {"pure_callback", "io_callback"}  # no derivative (a clear error): tests/test_callbacks.py
# Differentiable in their second operand only (the first is a TransformError): tests/test_scipy_special.py
COVERED_ELSEWHERE |= {"zeta", "igamma_grad_a", "betainc"}
# Not differentiable (as in JAX): tests/test_scipy_linalg_more.py checks the TransformError.
COVERED_ELSEWHERE |= {"schur", "hessenberg"}
COVERED_ELSEWHERE |= {"exported_call"}  # no derivative (a clear error): tests/test_export.py
COVERED_ELSEWHERE |= {"custom_vmap_call"}  # forward mode only, as in JAX: tests/test_custom_batching.py
if not EIG_RUNS:  # LAPACK's geev on CPU is eig's only lowering: its cases run there (tests/test_linalg_eig.py)
    COVERED_ELSEWHERE |= {"eig"}
EPS = 1e-6

# ------------------------------------------------------------------------------------ registry-driven rules


def _differentiable_cases() -> list[Any]:
    out = []
    for name, cases in sorted(CASES.items()):
        if name not in REGISTRY or name in COVERED_ELSEWHERE:
            continue
        for i, case in enumerate(cases):
            for dtype in ("float64", "complex128"):  # complex numbers as pairs of reals, JAX's convention
                if dtype in case.dtypes:
                    out.append(pytest.param(name, case, dtype, id=f"{name}-{case.label or i}-{dtype}"))
    return out


_INEXACT = (np.dtype(np.float64), np.dtype(np.complex128))


def _direction(rng: np.random.Generator, like: Any) -> np.ndarray:
    """A random tangent or cotangent of ``like``'s shape and dtype (both parts random for complex)."""
    draw = rng.standard_normal(like.shape)
    if np.issubdtype(like.dtype, np.complexfloating):
        draw = draw + 1j * rng.standard_normal(like.shape)
    return draw.astype(like.dtype)


def _pairing(a: Any, b: Any) -> float:
    """``Re(sum(a * b))``: the real pairing under which reverse mode transposes (no conjugation, as JAX)."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _single_equation_graph(name: str, avals: list[Aval], params: dict[str, Any]) -> Graph:
    prim = REGISTRY[name]
    with building() as b:
        ins = [Var(a) for a in avals]
        out = bind(prim, *ins, **params)
    outs = list(out) if prim.multiple_results else [out]
    return Graph(ins, b.eqns, outs)


def _rule_check_program(graph: Graph, wants: list[bool]) -> ts.Program[Any, Any]:
    """One compiled program per case: f at x ± eps·t, the JVP at x, and the VJP at x."""
    tangent_graph, _ = jvp_graph(graph, wants)
    cotangent_graph = vjp_graph(graph, wants)
    typecheck(tangent_graph)
    typecheck(cotangent_graph)
    n_out = len(graph.outputs)

    def check(xs: Any, xp: Any, xm: Any, ts_: Any, cts: Any) -> Any:
        atoms = lambda vs: [v.atom for v in vs]  # noqa: E731
        plus = inline(graph, atoms(xp))
        minus = inline(graph, atoms(xm))
        tangents = inline(tangent_graph, atoms(xs) + [t.atom for t, w in zip(ts_, wants) if w])[n_out:]
        cotangents = inline(cotangent_graph, atoms(xs) + atoms(cts))[n_out:]
        wrap = lambda xs_: [Traced(a) for a in xs_]  # noqa: E731
        return wrap(plus), wrap(minus), wrap(tangents), wrap(cotangents)

    return ts.Program(check, check_annotations=False)


@pytest.mark.parametrize(("name", "case", "dtype"), _differentiable_cases())
def test_jvp_matches_finite_differences_and_vjp_transposes_it(
    name: str, case: Case, dtype: str, rng: np.random.Generator
) -> None:
    xs = case.make(rng, np.dtype(dtype))
    avals = [Aval(x.shape, x.dtype) for x in xs]
    graph = _single_equation_graph(name, avals, case.params)
    wants = [x.dtype in _INEXACT for x in xs]
    if not any(wants):
        pytest.skip("no floating-point operand")
    ts_ = [_direction(rng, x) if w else np.zeros(x.shape, x.dtype) for x, w in zip(xs, wants)]
    xp = [x + EPS * t if w else x for x, t, w in zip(xs, ts_, wants)]
    xm = [x - EPS * t if w else x for x, t, w in zip(xs, ts_, wants)]
    cts = [_direction(rng, o.aval) for o in graph.outputs]
    plus, minus, tangents, cotangents = _rule_check_program(graph, wants)(xs, xp, xm, ts_, cts)
    for out, p, m, t in zip(graph.outputs, plus, minus, tangents):
        if out.aval.dtype not in _INEXACT:
            np.testing.assert_array_equal(np.asarray(t), 0)  # integer and boolean paths carry no tangent
            continue
        finite = (np.asarray(p) - np.asarray(m)) / (2 * EPS)
        np.testing.assert_allclose(np.asarray(t), finite, rtol=1e-5, atol=1e-6)
    # <vjp(ct), t> == <ct, jvp(t)>
    lhs = sum(_pairing(c, t) for c, t in zip(cotangents, (t for t, w in zip(ts_, wants) if w)))
    rhs = sum(_pairing(c, t) for c, t, o in zip(cts, tangents, graph.outputs) if o.aval.dtype in _INEXACT)
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


def test_every_differentiable_primitive_has_a_float64_case() -> None:
    missing = sorted(
        name
        for name, prim in REGISTRY.items()
        if prim.differentiable
        and name not in COVERED_ELSEWHERE
        and not any("float64" in c.dtypes or "complex128" in c.dtypes for c in CASES.get(name, []))
    )
    assert not missing, (
        f"differentiable primitives without a float64 or complex128 case in tests/primitive_cases.py: {missing}"
    )


# --------------------------------------------------------------------------------------------- composition


def test_grad_matches_closed_form(rng: np.random.Generator) -> None:
    x = rng.standard_normal(5)
    g = ts.grad(lambda x: tnp.sum(tnp.sin(x) * x))(x)
    np.testing.assert_allclose(np.asarray(g), np.sin(x) + x * np.cos(x), rtol=1e-12)


def test_third_derivative(rng: np.random.Generator) -> None:
    x = float(rng.standard_normal())
    f = lambda x: tnp.sin(x) * x  # noqa: E731
    d3 = ts.grad(ts.grad(ts.grad(f)))(np.float64(x))
    assert float(d3) == pytest.approx(-3 * np.sin(x) - x * np.cos(x), rel=1e-10)


def test_grad_inside_a_differentiated_function(rng: np.random.Generator) -> None:
    x = float(rng.standard_normal())

    def g(x: Any) -> Any:  # x * f'(x) with f = exp(2x)
        return x * ts.grad(lambda y: tnp.exp(2.0 * y))(x)

    got = ts.grad(g)(np.float64(x))  # d/dx 2x e^{2x} = 2 e^{2x} + 4x e^{2x}
    assert float(got) == pytest.approx(2 * np.exp(2 * x) + 4 * x * np.exp(2 * x), rel=1e-10)


def test_nested_grad_does_not_confuse_perturbations() -> None:
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1 (a classic perturbation-confusion trap).
    def outer(x: Any) -> Any:
        return x * ts.grad(lambda y: x + y)(x)

    assert float(ts.grad(outer)(np.float64(2.0))) == pytest.approx(1.0)


def test_hessian_and_jacobians_match_closed_forms(rng: np.random.Generator) -> None:
    n = 4
    a = rng.standard_normal((n, n))
    x = rng.standard_normal(n)

    def f(x: Any) -> Any:
        return 0.5 * tnp.sum(x * (a @ x)) + tnp.sum(tnp.exp(x))

    expected_h = (a + a.T) / 2 + np.diag(np.exp(x))
    np.testing.assert_allclose(np.asarray(ts.hessian(f)(x)), expected_h, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ts.jacfwd(ts.jacrev(f))(x)), expected_h, rtol=1e-10)
    jac = lambda x: tnp.tanh(a @ x)  # noqa: E731
    expected_j = (1 - np.tanh(a @ x) ** 2)[:, None] * a
    np.testing.assert_allclose(np.asarray(ts.jacrev(jac)(x)), expected_j, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ts.jacfwd(jac)(x)), expected_j, rtol=1e-10)


def test_jvp_vjp_linearize(rng: np.random.Generator) -> None:
    x, t = rng.standard_normal(3), rng.standard_normal(3)
    f = lambda x: tnp.sin(x) * 2.0  # noqa: E731
    out, tangent = ts.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tangent), 2 * np.cos(x) * t, rtol=1e-12)
    out, vjp_fn = ts.vjp(f, x)
    (ct,) = vjp_fn(t)
    np.testing.assert_allclose(np.asarray(ct), 2 * np.cos(x) * t, rtol=1e-12)
    out, f_jvp = ts.linearize(f, x)
    np.testing.assert_allclose(np.asarray(f_jvp(t)), 2 * np.cos(x) * t, rtol=1e-12)


def test_vjp_and_jvp_inside_a_program(rng: np.random.Generator) -> None:
    x, t = rng.standard_normal(3), rng.standard_normal(3)

    @ts.program
    def both(x: Any, t: Any) -> Any:
        _, tangent = ts.jvp(tnp.tanh, (x,), (t,))
        _, pullback = ts.vjp(tnp.tanh, x)
        return tangent, pullback(t)[0]

    tangent, ct = both(x, t)
    np.testing.assert_allclose(np.asarray(tangent), (1 - np.tanh(x) ** 2) * t, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ct), (1 - np.tanh(x) ** 2) * t, rtol=1e-12)


def test_grad_closes_over_outer_staged_values(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal(3), rng.standard_normal(3)

    @ts.program
    def h(x: Any, y: Any) -> Any:
        return ts.grad(lambda x: tnp.sum(tnp.sin(x * y)))(x)

    np.testing.assert_allclose(np.asarray(h(x, y)), np.cos(x * y) * y, rtol=1e-12)


def test_vmap_of_grad_and_grad_of_vmap(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 3))
    f = lambda x: tnp.sum(tnp.sin(x) ** 2)  # noqa: E731
    per_example = ts.vmap(ts.grad(f))(xs)
    np.testing.assert_allclose(np.asarray(per_example), 2 * np.sin(xs) * np.cos(xs), rtol=1e-12)
    total = ts.grad(lambda xs: tnp.sum(ts.vmap(f)(xs)))(xs)
    np.testing.assert_allclose(np.asarray(total), 2 * np.sin(xs) * np.cos(xs), rtol=1e-12)


# --------------------------------------------------------------------------------------------- structures


@attrs.frozen
class Params:
    w: Any
    b: Any


def test_pytree_arguments_and_argnums(rng: np.random.Generator) -> None:
    p = Params(rng.standard_normal((3, 2)), rng.standard_normal(2))
    batch = {"x": rng.standard_normal((5, 3)), "y": [rng.standard_normal((5, 2))]}

    def loss(p: Params, batch: dict[str, Any]) -> Any:
        err = batch["x"] @ p.w + p.b - batch["y"][0]
        return tnp.sum(err * err)

    g = ts.grad(loss)(p, batch)
    assert isinstance(g, Params)
    err = batch["x"] @ p.w + p.b - batch["y"][0]
    np.testing.assert_allclose(np.asarray(g.w), 2 * batch["x"].T @ err, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g.b), 2 * err.sum(0), rtol=1e-10)
    gp, gb = ts.grad(loss, argnums=(0, 1))(p, batch)
    assert isinstance(gp, Params) and set(gb) == {"x", "y"} and isinstance(gb["y"], list)
    np.testing.assert_allclose(np.asarray(gb["y"][0]), -2 * err, rtol=1e-10)


def test_has_aux_and_value_and_grad(rng: np.random.Generator) -> None:
    x = rng.standard_normal(3)

    def f(x: Any) -> Any:
        y = tnp.sin(x)
        return tnp.sum(y), {"y": y}

    g, aux = ts.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(aux["y"]), np.sin(x), rtol=1e-12)
    (value, aux), g = ts.value_and_grad(f, has_aux=True)(x)
    assert float(value) == pytest.approx(np.sin(x).sum())
    np.testing.assert_allclose(np.asarray(g), np.cos(x), rtol=1e-12)


class Batch(Dim): ...
class In(Dim): ...


@ts.program
def _typed_loss(w: Tensor[f32, In], x: Tensor[f32, Batch, In]) -> Tensor[f32]:
    return tnp.sum(tnp.tanh(x @ w))


def test_grad_of_a_program_is_a_program_that_stages_the_gradient_graph() -> None:
    g = ts.grad(_typed_loss)
    assert isinstance(g, ts.Program)
    staged = g.stage(Batch=8, In=3)
    typecheck(staged.graph)
    assert staged.out_avals[0].dims == ("In",)  # the gradient has the argument's type
    assert "tanh" in str(staged) and "test_autodiff.py" in str(staged)


def test_integer_paths_carry_no_tangent(rng: np.random.Generator) -> None:
    x = rng.standard_normal(4)
    n = np.arange(4, dtype=np.int32)

    def f(x: Any, n: Any) -> Any:
        return tnp.sum(x * n.astype(f64) ** 2)

    np.testing.assert_allclose(np.asarray(ts.grad(f)(x, n)), n.astype(np.float64) ** 2)


def _zero_broadcasts(graph: Graph) -> list[Any]:
    return [
        e for e in graph.eqns
        if e.primitive.name == "broadcast_in_dim" and isinstance(e.inputs[0], Literal) and not np.any(e.inputs[0].value)
    ]


def test_unused_forward_work_is_dropped_and_no_dense_zeros(rng: np.random.Generator) -> None:
    def f(x: Any, y: Any) -> Any:
        return tnp.sum(tnp.tanh(x) * y) + tnp.sum(tnp.exp(y)) + tnp.sum(tnp.cos(y) * 3.0)

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    staged = ts.grad(f).stage(x, y)
    typecheck(staged.graph)
    names = {e.primitive.name for e in staged.graph.eqns}
    assert "exp" not in names and "cos" not in names  # forward work the gradient does not need is removed
    assert not _zero_broadcasts(staged.graph)  # paths independent of x carry symbolic zeros, never dense ones


def test_forward_mode_keeps_zero_tangents_symbolic(rng: np.random.Generator) -> None:
    def f(x: Any, y: Any) -> Any:
        return tnp.sin(x) * y, tnp.cos(y)

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    graph = ts.program(f).stage(x, y).graph
    tangent_graph, nonzero = jvp_graph(graph, [True, False], instantiate=False)
    typecheck(tangent_graph)
    assert nonzero == [True, False]
    assert not _zero_broadcasts(tangent_graph)
    assert len(tangent_graph.outputs) == 3  # two primal outputs, one (nonzero) tangent


def test_stop_gradient(rng: np.random.Generator) -> None:
    x = rng.standard_normal(3)
    g = ts.grad(lambda x: tnp.sum(ts.stop_gradient(x) * x))(x)
    np.testing.assert_allclose(np.asarray(g), x, rtol=1e-12)


# ------------------------------------------------------------------------------------------ custom rules


def test_custom_jvp_rule_is_used_by_every_mode(rng: np.random.Generator) -> None:
    @ts.custom_jvp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return tnp.sin(x), 3.0 * t  # deliberately not cos(x): proves the rule is used

    x, t = rng.standard_normal(3), rng.standard_normal(3)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ts.jvp(f, (x,), (t,))[1]), 3 * t, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ts.grad(lambda x: tnp.sum(f(x)))(x)), np.full(3, 3.0))
    per_example = ts.vmap(ts.grad(lambda x: tnp.sum(f(x) * x)))(np.stack([x, t]))
    np.testing.assert_allclose(np.asarray(per_example), 3 * np.stack([x, t]) + np.sin(np.stack([x, t])), rtol=1e-12)


def test_custom_vjp(rng: np.random.Generator) -> None:
    @ts.custom_vjp
    def clip_gradient(x: Any) -> Any:
        return x

    def fwd(x: Any) -> Any:
        return x, None

    def bwd(res: Any, g: Any) -> Any:
        return (tnp.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(fwd, bwd)
    x = rng.standard_normal(3)
    g = ts.grad(lambda x: tnp.sum(clip_gradient(x) * 5.0))(x)
    np.testing.assert_allclose(np.asarray(g), np.ones(3))
    per_example = ts.vmap(ts.grad(lambda x: tnp.sum(clip_gradient(x) * -5.0)))(np.stack([x, x]))
    np.testing.assert_allclose(np.asarray(per_example), -np.ones((2, 3)))


def test_custom_vjp_residuals_and_second_order(rng: np.random.Generator) -> None:
    @ts.custom_vjp
    def square(x: Any) -> Any:
        return x * x

    def fwd(x: Any) -> Any:
        return x * x, x

    def bwd(x: Any, g: Any) -> Any:
        return (2.0 * x * g,)

    square.defvjp(fwd, bwd)
    x = float(rng.standard_normal())
    assert float(ts.grad(square)(np.float64(x))) == pytest.approx(2 * x)
    assert float(ts.grad(ts.grad(square))(np.float64(x))) == pytest.approx(2.0)


def test_custom_vjp_with_pytree_and_integer_arguments(rng: np.random.Generator) -> None:
    @ts.custom_vjp
    def scaled(p: dict[str, Any], n: Any) -> Any:
        return p["a"] * p["b"] * n.astype(f64)

    def fwd(p: dict[str, Any], n: Any) -> Any:
        return scaled(p, n), (p, n)

    def bwd(res: Any, g: Any) -> Any:
        p, n = res
        k = n.astype(f64)
        return {"a": g * p["b"] * k, "b": g * p["a"] * k}, None

    scaled.defvjp(fwd, bwd)
    p = {"a": rng.standard_normal(3), "b": rng.standard_normal(3)}
    n = np.array([1, 2, 3], dtype=np.int32)
    g = ts.grad(lambda p: tnp.sum(scaled(p, n)))(p)
    np.testing.assert_allclose(np.asarray(g["a"]), p["b"] * n, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g["b"]), p["a"] * n, rtol=1e-12)


# ----------------------------------------------------------------------------------------------- errors


def _this_line_plus(offset: int) -> int:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + offset


def test_grad_of_non_scalar_names_the_shape() -> None:
    line = _this_line_plus(2)
    with pytest.raises(ts.TransformError) as info:
        ts.grad(lambda x: tnp.sin(x))(np.ones((2, 3)))
    message = str(info.value)
    assert "grad" in message and "f64[2, 3]" in message and f"test_autodiff.py:{line}" in message


def test_grad_with_respect_to_an_integer_input() -> None:
    line = _this_line_plus(2)
    with pytest.raises(ts.TransformError) as info:
        ts.grad(lambda x: tnp.sum(x.astype(f32)))(np.arange(3, dtype=np.int32))
    message = str(info.value)
    assert "i32[3]" in message and "floating-point" in message and f"test_autodiff.py:{line}" in message


def test_custom_rule_with_wrong_shape_names_the_rule_and_both_shapes() -> None:
    @ts.custom_vjp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    def f_fwd(x: Any) -> Any:
        return tnp.sin(x), x

    def f_bwd(x: Any, g: Any) -> Any:
        return (tnp.sum(g),)  # wrong: a scalar for a (3,) argument

    f.defvjp(f_fwd, f_bwd)
    line = _this_line_plus(2)
    with pytest.raises(ts.ShapeError) as info:
        ts.grad(lambda x: tnp.sum(f(x)))(np.ones(3))
    message = str(info.value)
    assert "f_bwd" in message and "f64[]" in message and "f64[3]" in message
    assert f"test_autodiff.py:{line}" in message


def test_custom_jvp_with_wrong_tangent_shape() -> None:
    @ts.custom_jvp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    @f.defjvp
    def f_rule(primals: Any, tangents: Any) -> Any:
        return tnp.sin(primals[0]), tnp.sum(tangents[0])

    with pytest.raises(ts.ShapeError) as info:
        f(np.ones(3))
    assert "f_rule" in str(info.value) and "f64[3]" in str(info.value) and "f64[]" in str(info.value)


def test_forward_mode_through_custom_vjp_is_an_error() -> None:
    @ts.custom_vjp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    f.defvjp(lambda x: (tnp.sin(x), x), lambda x, g: (g * tnp.cos(x),))
    with pytest.raises(ts.TransformError, match="custom_vjp"):
        ts.jvp(f, (np.ones(2),), (np.ones(2),))


def test_jacobians_of_several_arguments_and_outputs(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal(3), rng.standard_normal(2)

    def f(x: Any, y: Any) -> Any:
        return {"p": tnp.sin(x) * tnp.sum(y), "q": tnp.sum(x) * y}

    for jacobian in (ts.jacfwd, ts.jacrev):
        jac = jacobian(f, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(np.asarray(jac["p"][0]), np.diag(np.cos(x)) * y.sum(), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jac["p"][1]), np.outer(np.sin(x), np.ones(2)), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jac["q"][0]), np.outer(y, np.ones(3)), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jac["q"][1]), np.eye(2) * x.sum(), rtol=1e-12)


def test_second_order_through_control_flow(rng: np.random.Generator) -> None:
    x = float(rng.uniform(0.5, 1.5))

    def f(x: Any) -> Any:  # x^4 via a loop, then a branch that keeps it
        y = ts.fori_loop(0, 3, lambda i, c: c * x, x)
        return ts.cond(y > -1.0, lambda y: y * 1.0, lambda y: -y, y)

    assert float(ts.grad(f)(np.float64(x))) == pytest.approx(4 * x**3, rel=1e-10)
    assert float(ts.grad(ts.grad(f))(np.float64(x))) == pytest.approx(12 * x**2, rel=1e-10)


def test_scalar_tangents_and_cotangents_take_the_primal_dtype() -> None:
    out, tangent = ts.jvp(lambda x: x * x, (np.float64(3.0),), (1.0,))
    assert float(tangent) == pytest.approx(6.0)
    _, pullback = ts.vjp(lambda x: x * x, np.float64(3.0))
    assert float(pullback(1.0)[0]) == pytest.approx(6.0)


def test_product_gradient_is_exact_with_zeros() -> None:
    x = np.array([[1.5, 0.0, 2.0], [1.0, 2.0, 3.0], [0.0, 4.0, 0.0]])
    g = ts.grad(lambda x: tnp.sum(tnp.prod(x, axis=1)))(x)
    expected = np.array([[np.prod(np.delete(row, i)) for i in range(3)] for row in x])
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-12)


def test_python_scalar_arguments_are_differentiable() -> None:
    assert float(ts.grad(lambda x: x * x * x)(2.0)) == pytest.approx(12.0)


def test_bad_argnums_and_aux_structure_are_reported() -> None:
    with pytest.raises(ts.TransformError, match="argnums"):
        ts.grad(lambda x: tnp.sum(x), argnums=3)(np.ones(2))
    with pytest.raises(ts.TransformError, match="has_aux"):
        ts.grad(lambda x: tnp.sum(x), has_aux=True)(np.ones(2))


def test_custom_rule_closing_over_a_differentiated_value_is_an_error() -> None:
    def outer(y: Any) -> Any:
        @ts.custom_jvp
        def f(x: Any) -> Any:
            return x * y

        f.defjvp(lambda p, t: (p[0] * y, t[0] * y))
        return f(np.float64(2.0))

    with pytest.raises(ts.TransformError, match="closes over"):
        ts.grad(outer)(np.float64(3.0))


def test_grad_of_vmap_keeps_custom_rules(rng: np.random.Generator) -> None:
    @ts.custom_vjp
    def double_grad(x: Any) -> Any:
        return tnp.sin(x)

    double_grad.defvjp(lambda x: (tnp.sin(x), x), lambda x, g: (2.0 * g * tnp.cos(x),))

    @ts.custom_jvp
    def triple_jvp(x: Any) -> Any:
        return tnp.sin(x)

    triple_jvp.defjvp(lambda p, t: (tnp.sin(p[0]), 3.0 * t[0] * tnp.cos(p[0])))
    xs = rng.standard_normal((2, 3))
    np.testing.assert_allclose(np.asarray(double_grad(xs)), np.sin(xs), rtol=1e-12)  # lowering: the function itself
    batched = ts.vmap(lambda x: double_grad(x) + triple_jvp(x))  # batch rules carry the rules along
    g = ts.grad(lambda xs: tnp.sum(batched(xs)))(xs)
    np.testing.assert_allclose(np.asarray(g), 5 * np.cos(xs), rtol=1e-12)


def test_nondiff_argnums(rng: np.random.Generator) -> None:
    from functools import partial

    @partial(ts.custom_vjp, nondiff_argnums=(0,))
    def apply(fn: Any, x: Any) -> Any:
        return fn(x)

    def apply_fwd(fn: Any, x: Any) -> Any:
        return fn(x), x

    def apply_bwd(fn: Any, x: Any, g: Any) -> Any:
        return (g * 10.0,)

    apply.defvjp(apply_fwd, apply_bwd)

    @partial(ts.custom_jvp, nondiff_argnums=(1,))
    def power(x: Any, n: int) -> Any:
        return x**n

    @power.defjvp
    def power_jvp(n: int, primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return x**n, n * x ** (n - 1) * t

    x = rng.standard_normal(3)
    np.testing.assert_allclose(np.asarray(ts.grad(lambda x: tnp.sum(apply(tnp.sin, x)))(x)), np.full(3, 10.0))
    np.testing.assert_allclose(np.asarray(ts.grad(lambda x: tnp.sum(power(x, 3)))(x)), 3 * x**2, rtol=1e-12)


def test_nondiff_argnums_out_of_range_is_an_error() -> None:
    scaled = ts.custom_jvp(lambda x, y: x * y, nondiff_argnums=(3,))  # not wrapped round to argument 1
    with pytest.raises(TypeError, match=r"nondiff_argnums \(3,\) out of range for 2 arguments"):
        scaled(np.float32(2), np.float32(3))
