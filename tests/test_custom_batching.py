"""ts.custom_batching: custom_vmap rules under vmap (and only there), their flags and structures, forward mode
through them, custom_vjp on top, sequential_vmap, and the refusals with their lines."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.custom_batching import custom_vmap, sequential_vmap
from tensorstage.staging.source import _display_path

f32 = np.float32


def _line(fn: Any, text: str) -> str:
    lines, start = inspect.getsourcelines(fn)
    return f"{_display_path(inspect.getsourcefile(fn) or '')}:{start + next(i for i, s in enumerate(lines) if text in s)}"


def _product_rule() -> tuple[custom_vmap[Any, Any], list[Any]]:
    """JAX's documentation example: x + y, but batched as x * y (so a test can tell which ran)."""
    seen: list[Any] = []

    @custom_vmap
    def f(x: Any, y: Any) -> Any:
        return x + y

    @f.def_vmap
    def rule(axis_size: int, in_batched: list[Any], xs: Any, ys: Any) -> tuple[Any, Any]:
        seen.append((axis_size, in_batched))
        return xs * ys, True

    return f, seen


def test_the_rule_runs_under_vmap_only(rng: np.random.Generator) -> None:
    f, seen = _product_rule()
    xs, ys = rng.standard_normal(3).astype(f32), rng.standard_normal(3).astype(f32)
    assert float(f(xs[0], ys[0])) == pytest.approx(float(xs[0] + ys[0]))
    np.testing.assert_allclose(np.asarray(ts.vmap(f)(xs, ys)), xs * ys, rtol=1e-6)
    assert seen == [(3, [True, True])]
    # in_axes=None: the rule sees that argument unbatched (and broadcasting is its business).
    np.testing.assert_allclose(np.asarray(ts.vmap(f, in_axes=(0, None))(xs, ys[0])), xs * ys[0], rtol=1e-6)
    assert seen[-1] == (3, [True, False])
    # Inside a program and nested: the inner vmap's rule, then the outer vmap batches what it staged.
    grid = rng.standard_normal((2, 3)).astype(f32)
    nested = ts.program(ts.vmap(ts.vmap(f)))(grid, grid + 1)
    np.testing.assert_allclose(np.asarray(nested), grid * (grid + 1), rtol=1e-6)


def test_structures_python_numbers_and_unbatched_results(rng: np.random.Generator) -> None:
    @custom_vmap
    def scaled(params: dict[str, Any], x: Any, power: int) -> Any:
        return {"y": params["w"] * x**power, "norm": tnp.sum(params["w"] ** 2)}

    @scaled.def_vmap
    def rule(axis_size: int, in_batched: list[Any], params: dict[str, Any], x: Any, power: int) -> tuple[Any, Any]:
        assert in_batched == [{"w": False}, True, False]  # a Python number is a (weakly typed) argument too
        out = {"y": params["w"] * x**power, "norm": tnp.sum(params["w"] ** 2)}
        return out, {"y": True, "norm": False}

    w, xs = rng.standard_normal(4).astype(f32), rng.standard_normal((5, 4)).astype(f32)
    out = ts.vmap(lambda x: scaled({"w": w}, x, 2))(xs)
    np.testing.assert_allclose(np.asarray(out["y"]), w * xs**2, rtol=1e-5)
    # An unbatched result comes out of vmap broadcast along the batch axis, as any unbatched value.
    np.testing.assert_allclose(np.asarray(out["norm"]), np.full(5, np.sum(w.astype(np.float64) ** 2)), rtol=1e-5)


def test_forward_mode_batches_by_the_rules_derivative(rng: np.random.Generator) -> None:
    f, _ = _product_rule()
    xs, ys = rng.standard_normal(3).astype(f32), rng.standard_normal(3).astype(f32)
    tx, ty = rng.standard_normal(3).astype(f32), rng.standard_normal(3).astype(f32)
    # jvp of the function itself: d(x + y).
    out, tangent = ts.jvp(f, (xs[0], ys[0]), (tx[0], ty[0]))
    assert float(tangent) == pytest.approx(float(tx[0] + ty[0]), rel=1e-6)
    # vmap of jvp: the rule's derivative, d(x * y) = tx * y + x * ty, as in JAX.
    outs, tangents = ts.vmap(lambda x, y, a, b: ts.jvp(f, (x, y), (a, b)))(xs, ys, tx, ty)
    np.testing.assert_allclose(np.asarray(outs), xs * ys, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangents), tx * ys + xs * ty, rtol=1e-5, atol=1e-6)
    # Only one argument differentiated, and its tangent batched while the primal is not (broadcast for the rule).
    _, tangents = ts.vmap(lambda a: ts.jvp(lambda x: f(x, ys[0]), (xs[0],), (a,)), in_axes=0)(tx)
    np.testing.assert_allclose(np.asarray(tangents), tx * ys[0], rtol=1e-5)
    # jvp of vmap: the rule staged first, then differentiated as plain code.
    _, tangents = ts.jvp(ts.vmap(f), (xs, ys), (tx, ty))
    np.testing.assert_allclose(np.asarray(tangents), tx * ys + xs * ty, rtol=1e-5, atol=1e-6)
    jac = ts.jacfwd(ts.vmap(f))(xs, ys)
    np.testing.assert_allclose(np.asarray(jac), np.diag(ys), rtol=1e-6)


def test_custom_vjp_on_top_gives_reverse_mode(rng: np.random.Generator) -> None:
    @ts.custom_vjp
    @custom_vmap
    def f(x: Any, y: Any) -> Any:
        return tnp.sin(x) * y

    @f.fun.def_vmap  # the custom_vmap inside
    def rule(axis_size: int, in_batched: list[Any], xs: Any, ys: Any) -> tuple[Any, bool]:
        return tnp.cos(xs) * ys, True

    f.defvjp(lambda x, y: (f(x, y), (tnp.cos(x), tnp.sin(x), y)),
             lambda res, g: (res[0] * res[2] * g, res[1] * g))
    xs, ys = rng.standard_normal(3).astype(f32), rng.standard_normal(3).astype(f32)
    np.testing.assert_allclose(np.asarray(ts.vmap(f)(xs, ys)), np.cos(xs) * ys, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ts.grad(f)(xs[0], ys[0])), np.cos(xs[0]) * ys[0], rtol=1e-5)
    grads = ts.vmap(ts.grad(f))(xs, ys)
    np.testing.assert_allclose(np.asarray(grads), np.cos(xs) * ys, rtol=1e-5)


def test_sequential_vmap_calls_the_function_per_member(rng: np.random.Generator) -> None:
    calls: list[tuple[int, ...]] = []

    def host_norm(v: np.ndarray) -> np.ndarray:
        calls.append(v.shape)
        return np.asarray(np.linalg.norm(v), dtype=v.dtype)

    @sequential_vmap
    def norm(v: Any, scale: float) -> Any:  # a pure_callback without vmap_method: it cannot batch by itself
        return ts.pure_callback(host_norm, ts.Spec((), ts.f32), v) * scale

    vs = rng.standard_normal((4, 3)).astype(f32)
    out = ts.vmap(norm, in_axes=(0, None))(vs, 2.0)
    np.testing.assert_allclose(np.asarray(out), 2 * np.linalg.norm(vs, axis=1), rtol=1e-5)
    assert calls == [(3,)] * 4


def test_refusals_name_the_rule_and_line(rng: np.random.Generator) -> None:
    f, _ = _product_rule()
    xs = rng.standard_normal(3).astype(f32)
    with pytest.raises(ts.TransformError, match="reverse mode cannot differentiate a function with a custom vmap"):
        ts.grad(lambda x: f(x, 1.0).sum())(xs)

    @custom_vmap
    def g(x: Any) -> Any:
        return x * 2

    with pytest.raises(ts.TransformError, match="g is a custom_vmap function without a rule"):
        ts.vmap(g)(xs)

    @g.def_vmap
    def bad_shape(axis_size: int, in_batched: list[Any], xs: Any) -> tuple[Any, bool]:
        return xs[:2], True

    with pytest.raises(ts.ShapeError, match=r"custom_vmap rule of g returned f32\[2\] for result 0, which it says is "
                                            r"batched \(the batch axis first\): expected f32\[3\]") as info:
        ts.vmap(g)(xs)  # the call of g: the line the error names
    assert str(info.value.loc) == _line(test_refusals_name_the_rule_and_line, "the line the error names")

    @g.def_vmap
    def bad_structure(axis_size: int, in_batched: list[Any], xs: Any) -> tuple[Any, bool]:
        return (xs, xs), True

    with pytest.raises(ts.TransformError, match=r"returned a value structured \(\*, \*\); the function returns \*"):
        ts.vmap(g)(xs)

    def closes_over(y: Any) -> Any:
        @custom_vmap
        def k(x: Any) -> Any:
            return x + y  # y: a value of the function vmap batches, which k's rule never sees

        k.def_vmap(lambda n, b, x: (x + y, True))
        return k(y * 2)

    with pytest.raises(ts.TransformError, match="k closes over a value that vmap batches; pass it as an argument"):
        ts.vmap(closes_over)(rng.standard_normal((2, 3)).astype(f32))
