"""``symbolic_zeros`` for custom rules (JAX's ``defjvp(rule, symbolic_zeros=True)`` and ``defvjp(fwd, bwd,
symbolic_zeros=True)``): which tangents, primals and cotangents the rules see as ``SymbolicZero`` /
``CustomVJPPrimal`` under each transform, the values that result, and the work it saves (gammaincinv).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from tensorstage.scipy.special import gammaincinv

X, Y = np.float64(0.3), np.array([1.0, 2.0])


def _jvp_function(seen: list[tuple[bool, ...]]) -> Any:
    """``sin(x) * y`` and ``y``, whose rule records which tangents were symbolic zeros and returns one for the
    second output where y is not perturbed."""

    @ts.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return tnp.sin(x) * y, y

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        out = f(x, y)
        first = tnp.zeros_like(y) if isinstance(tx, SymbolicZero) else tnp.cos(x) * tx * y
        if not isinstance(ty, SymbolicZero):
            first = first + tnp.sin(x) * ty
        return out, (first, ty)  # ty may be a SymbolicZero

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


def test_custom_jvp_sees_symbolic_zeros_per_transform() -> None:
    seen: list[tuple[bool, ...]] = []
    f = _jvp_function(seen)

    def all_modes(x: Any, y: Any) -> Any:
        jvp_x = ts.jvp(lambda v: f(v, y), (x,), (1.0,))[1]
        jvp_y = ts.jvp(lambda w: f(x, w), (y,), (tnp.ones_like(y),))[1]
        grad_y = ts.grad(lambda w: f(x, w)[0].sum())(y)
        grad_x = ts.grad(lambda v: (f(v, y)[0] + f(v, y)[1]).sum())(x)
        batched = ts.jvp(ts.vmap(lambda v: f(v, y)[0]), (tnp.stack([x, x]),), (tnp.ones((2,), np.float64),))[1]
        return jvp_x, jvp_y, grad_y, grad_x, batched

    jvp_x, jvp_y, grad_y, grad_x, batched = ts.program(all_modes)(X, Y)
    # (tx zero, ty zero): at each call (all perturbed), then per transform.
    assert set(seen) == {(False, False), (False, True), (True, False)}
    np.testing.assert_allclose(np.asarray(jvp_x[0]), np.cos(X) * Y, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jvp_x[1]), 0.0)  # the rule's SymbolicZero output, made dense
    np.testing.assert_allclose(np.asarray(jvp_y[0]), np.sin(X) * np.ones(2), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jvp_y[1]), np.ones(2))
    np.testing.assert_allclose(np.asarray(grad_y), np.sin(X) * np.ones(2), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(grad_x), np.cos(X) * Y.sum(), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(batched), np.cos([X, X])[:, None] * Y, rtol=1e-15)


def test_symbolic_zero_attributes_and_helpers() -> None:
    z = SymbolicZero.from_primal_value(ts.program(lambda v: v).stage(Y).graph.inputs[0])
    assert (z.shape, z.dtype, z.ndim) == ((2,), np.dtype(np.float64), 1)
    assert ts.custom_derivatives.SymbolicZero is SymbolicZero
    zeros = zero_from_primal({"a": Y, "b": np.float32(1)}, symbolic_zeros=True)
    assert isinstance(zeros["a"], SymbolicZero) and zeros["a"].shape == (2,) and zeros["b"].dtype == np.float32
    dense = ts.program(lambda v: zero_from_primal(v))(Y)
    np.testing.assert_array_equal(np.asarray(dense), np.zeros(2))
    assert custom_vjp_primal_tree_values((CustomVJPPrimal(1, True), [CustomVJPPrimal(2, False)])) == (1, [2])
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values((1,))


def test_custom_vjp_sees_perturbed_primals_and_zero_cotangents() -> None:
    seen: list[Any] = []

    @ts.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y, tnp.exp(y)

    def f_fwd(x: CustomVJPPrimal, y: CustomVJPPrimal) -> Any:
        seen.append(("fwd", x.perturbed, y.perturbed))
        xv, yv = custom_vjp_primal_tree_values((x, y))
        return f(xv, yv), (xv, yv)

    def f_bwd(res: Any, cts: Any) -> Any:
        x, y = res
        c_prod, c_exp = cts
        seen.append(("bwd", isinstance(c_prod, SymbolicZero), isinstance(c_exp, SymbolicZero)))
        if isinstance(c_prod, SymbolicZero):
            return SymbolicZero(x.aval), c_exp * tnp.exp(y)  # a zero cotangent given back symbolically
        dy = c_prod * x if isinstance(c_exp, SymbolicZero) else c_prod * x + c_exp * tnp.exp(y)
        return (c_prod * y).sum(), dy

    f.defvjp(f_fwd, f_bwd, symbolic_zeros=True)

    def grads(x: Any, y: Any) -> Any:
        only_y = ts.grad(lambda w: f(x, w)[0].sum())(y)
        both = ts.grad(lambda v, w: f(v, w)[1].sum(), argnums=(0, 1))(x, y)
        return only_y, both

    only_y, (dx, dy) = ts.program(grads)(X, Y)
    assert seen[:2] == [("fwd", True, True), ("bwd", False, False)]  # at the call
    assert ("fwd", False, True) in seen and ("bwd", False, True) in seen
    assert ("fwd", True, True) in seen[2:] and ("bwd", True, False) in seen
    np.testing.assert_allclose(np.asarray(only_y), X * np.ones(2), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(dx), 0.0)
    np.testing.assert_allclose(np.asarray(dy), np.exp(Y), rtol=1e-15)


def test_restaged_rules_read_the_values_they_close_over() -> None:
    """A rule closing over a staged value reads it through the call's operands when staged again."""

    def outer(x: Any, w: Any) -> Any:
        @ts.custom_jvp
        def scaled(v: Any, u: Any) -> Any:
            return w * v * u

        def rule(primals: Any, tangents: Any) -> Any:
            (v, u), (tv, tu) = primals, tangents
            tangent = w * (v * tu if isinstance(tv, SymbolicZero) else tv * u)
            return scaled(v, u), tangent

        scaled.defjvp(rule, symbolic_zeros=True)
        return ts.grad(lambda v: scaled(v, 2.0 * w))(x), ts.grad(lambda u: scaled(x, u))(w)

    dx, du = ts.program(outer)(X, np.float64(1.5))
    np.testing.assert_allclose([float(np.asarray(dx)), float(np.asarray(du))], [1.5 * 3.0, 1.5 * X], rtol=1e-15)


def test_gammaincinv_derivative_in_y_skips_the_a_derivative() -> None:
    """Only ``y`` differentiated, the inverse's rule leaves ``dP/da`` out (the costliest part to compile)."""
    a, y = np.array([0.5, 2.0]), np.array([0.1, 0.9])
    forward_y = ts.program(lambda a, y: ts.jvp(lambda v: gammaincinv(a, v), (y,), (tnp.ones_like(y),))[1])
    assert "igamma_grad_a" not in str(forward_y.stage(a, y))
    both = ts.program(lambda a, y: ts.jvp(lambda u, v: gammaincinv(u, v), (a, y), (tnp.ones_like(a), tnp.ones_like(y))))
    assert "igamma_grad_a" in str(both.stage(a, y))


def test_matches_jax_on_which_tangents_are_zero() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    seen: list[tuple[bool, ...]] = []

    @jax.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return jax.numpy.sin(x) * y

    def f_jvp(primals: Any, tangents: Any) -> Any:
        seen.append(tuple(type(t) is jax.custom_derivatives.SymbolicZero for t in tangents))
        return f(*primals), jax.numpy.zeros_like(primals[1])

    f.defjvp(f_jvp, symbolic_zeros=True)
    jax.jvp(lambda v: f(v, Y), (X,), (1.0,))
    jax.grad(lambda w: f(X, w).sum())(Y)
    ours: list[tuple[bool, ...]] = []
    g = _jvp_function(ours)
    ts.program(lambda x, y: (ts.jvp(lambda v: g(v, y)[0], (x,), (1.0,))[1], ts.grad(lambda w: g(x, w)[0].sum())(y))
               ).stage(X, Y)
    at_transforms = [pattern for pattern in ours if pattern != (False, False)]  # not the calls' own staging
    assert seen == at_transforms == [(False, True), (True, False)]
