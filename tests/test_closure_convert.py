"""ts.closure_convert: closed-over staged values made explicit arguments, so custom derivative rules see them;
against analytic derivatives on fresh random inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

f64 = np.float64


def test_eagerly_nothing_is_closed_over(rng: np.random.Generator) -> None:
    x = rng.standard_normal(3)
    converted, consts = ts.closure_convert(tnp.sin, x)
    assert consts == []
    np.testing.assert_allclose(np.asarray(converted(x)), np.sin(x), rtol=1e-15)


def test_closed_over_values_become_arguments_and_carry_derivatives(rng: np.random.Generator) -> None:
    seen: list[int] = []

    def model(w: Any, x: Any) -> Any:
        converted, consts = ts.closure_convert(lambda v, scale: tnp.sin(w * v) * scale, x, 2.0)
        seen.append(len(consts))
        return tnp.sum(converted(x, 2.0, *consts))

    w, x = rng.standard_normal(3), rng.standard_normal(3)
    value, grad_w = ts.value_and_grad(model)(w, x)
    assert seen[-1] == 1  # w: the one staged value the function closes over
    assert float(value) == pytest.approx(2 * np.sum(np.sin(w * x)), rel=1e-14)
    np.testing.assert_allclose(np.asarray(grad_w), 2 * x * np.cos(w * x), rtol=1e-13)


def test_a_custom_vjp_sees_the_hoisted_values(rng: np.random.Generator) -> None:
    """JAX's pattern: a custom_vjp (here: a fixed point found by iteration, differentiated implicitly) takes the
    function's closed-over parameters as explicit arguments, so its backward pass returns their cotangents."""

    @ts.custom_vjp
    def fixed_point(f: Any, x0: Any, *params: Any) -> Any:
        return ts.fori_loop(0, 60, lambda i, x: f(x, *params), x0)

    def fwd(f: Any, x0: Any, *params: Any) -> Any:
        x = fixed_point(f, x0, *params)
        return x, (x, params)

    def bwd(f: Any, res: Any, g: Any) -> Any:
        x, params = res
        _, pull = ts.vjp(lambda *p: f(x, *p), *params)
        df_dx = ts.jacrev(lambda v: f(v, *params))(x)
        u = tnp.linalg.solve((tnp.eye(x.shape[0], dtype=x.dtype) - df_dx).T, g)
        return (tnp.zeros_like(x), *pull(u))

    fixed_point = ts.custom_vjp(fixed_point.fun, nondiff_argnums=(0,))
    fixed_point.defvjp(fwd, bwd)

    def solve(a: Any) -> Any:  # x = 0.5 * tanh(a * x) + 1: the map closes over a
        converted, consts = ts.closure_convert(lambda x: 0.5 * tnp.tanh(a * x) + 1.0, tnp.zeros(3, dtype=a.dtype))
        return tnp.sum(fixed_point(converted, tnp.zeros(3, dtype=a.dtype), *consts))

    a = rng.uniform(0.1, 0.9, 3)
    x = np.zeros(3)
    for _ in range(200):
        x = 0.5 * np.tanh(a * x) + 1.0
    # Implicit derivative of x(a), elementwise: dx/da = 0.5 sech²(a x) x / (1 - 0.5 sech²(a x) a).
    sech2 = 1 / np.cosh(a * x) ** 2
    want = 0.5 * sech2 * x / (1 - 0.5 * sech2 * a)
    np.testing.assert_allclose(np.asarray(ts.grad(solve)(a)), want, rtol=1e-10)


def test_mismatched_calls_are_refused(rng: np.random.Generator) -> None:
    def check(w: Any) -> Any:
        converted, consts = ts.closure_convert(lambda v, n: v * w * n, w, 3)
        with pytest.raises(TypeError, match="takes 2 arguments and 1 closed-over values, got 2 in all"):
            converted(w, 3)
        with pytest.raises(TypeError, match=r"input 0 is f64\[2\], the function was converted for f64\[3\]"):
            converted(w[:2], 3, *consts)
        return converted(w, 3, *consts)

    w = rng.standard_normal(3)
    np.testing.assert_allclose(np.asarray(ts.program(check)(w)), 3 * w * w, rtol=1e-15)
