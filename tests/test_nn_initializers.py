"""ts.nn's JAX-named activations (celu, hard_sigmoid, hard_silu, sparse_plus, sparse_sigmoid, squareplus, log1mexp,
logmeanexp and the aliases) against NumPy float64 formulas and finite differences, and ts.nn.initializers (JAX's
factories) by their statistics and orthogonality, and against jax.nn.initializers draw for draw where installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from conftest import PLATFORM, jax_platform
from directional_grads import assert_grads_match_finite_differences

REFERENCES: dict[str, Any] = {
    "celu": lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7)),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "log1mexp": lambda x: np.log(-np.expm1(-np.abs(x) - 1e-3)),
    "identity": lambda x: x,
}


def _apply(name: str, x: Any) -> Any:
    if name == "celu":
        return ts.nn.celu(x, 0.7)
    if name == "log1mexp":
        return ts.nn.log1mexp(tnp.abs(x) + 1e-3)
    return getattr(ts.nn, name)(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_match_numpy(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(64) * 3).astype(dtype)
    x[:3] = [-1.0, 1.0, 0.0]  # the kinks
    run = ts.program(lambda x: {name: _apply(name, x) for name in REFERENCES})
    got = run(x)
    tol = 3e-6 if dtype == np.float32 else 1e-13
    for name, ref in REFERENCES.items():
        np.testing.assert_allclose(np.asarray(got[name]), ref(x.astype(np.float64)), rtol=tol, atol=tol, err_msg=name)
        assert np.asarray(got[name]).dtype == dtype
    tiny = np.array([1e-30, 1e-8, 0.5, 0.7, 40.0])
    exact = np.where(tiny > np.log(2), np.log1p(-np.exp(-tiny)), np.log(-np.expm1(-tiny)))  # each branch where exact
    np.testing.assert_allclose(np.asarray(ts.nn.log1mexp(tiny)), exact, rtol=1e-14)
    m = rng.standard_normal((3, 5)) * 50
    np.testing.assert_allclose(np.asarray(ts.nn.logmeanexp(m, axis=1)), np.log(np.mean(np.exp(m), axis=1)), rtol=1e-12)
    assert ts.nn.swish is ts.nn.silu and ts.nn.soft_sign is ts.nn.softsign and ts.nn.hard_swish is ts.nn.hard_silu


def test_activation_gradients_match_finite_differences() -> None:
    assert_grads_match_finite_differences([
        lambda x: ts.nn.celu(x, 1.5), lambda x: ts.nn.squareplus(x, 2.0), lambda x: ts.nn.sparse_plus(x * 0.3),
        lambda x: ts.nn.log1mexp(tnp.abs(x) + 0.1), lambda x: ts.nn.logmeanexp(x, axis=(0, 2), keepdims=True),
        lambda x: ts.nn.hard_silu(x * 2),
    ], np.random.default_rng(1))


def test_variance_scaling_statistics_and_orthogonality() -> None:
    init = ts.nn.initializers
    key = ts.random.key(3)
    shape = (3, 3, 64, 128)  # a convolution kernel: receptive field 9
    fan_in, fan_out = 9 * 64, 9 * 128
    for factory, variance in [(init.glorot_uniform, 2 / (fan_in + fan_out)), (init.glorot_normal, 2 / (fan_in + fan_out)),
                              (init.he_normal, 2 / fan_in), (init.lecun_uniform, 1 / fan_in),
                              (init.kaiming_uniform, 2 / fan_in)]:
        w = np.asarray(factory()(key, shape))
        assert w.shape == shape and w.dtype == np.float32
        assert abs(w.var() / variance - 1) < 0.03, factory
    w = np.asarray(init.variance_scaling(0.5, "fan_out", "normal", in_axis=0, out_axis=(1, 2), dtype=ts.f64)(key, (8, 4, 5)))
    assert w.dtype == np.float64 and abs(w.var() / (0.5 / 20) - 1) < 0.25
    tn = np.asarray(init.truncated_normal(0.5, lower=-1.0, upper=1.5)(key, (5000,)))
    assert tn.min() > -0.5 and tn.max() < 0.75
    for shape, axis in [((4, 6), -1), ((6, 4), -1), ((2, 3, 5), 0)]:
        q = np.moveaxis(np.asarray(init.orthogonal(2.0, axis)(key, shape)), axis, -1).reshape(-1, shape[axis])
        gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
        np.testing.assert_allclose(gram, 4 * np.eye(len(gram)), atol=1e-5)
    delta = np.asarray(init.delta_orthogonal()(key, (3, 2, 4)))
    assert not delta[[0, 2]].any() and np.allclose(delta[1] @ delta[1].T, np.eye(2), atol=1e-6)
    assert np.asarray(init.zeros(key, (2,))).tolist() == [0, 0] and np.asarray(init.constant(7, ts.i32)(key, 2)).tolist() == [7, 7]
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_max", "normal")  # type: ignore[arg-type]
    with pytest.raises(ts.ShapeError, match="in <= out"):
        init.delta_orthogonal()(key, (3, 5, 4))


def test_initializers_and_activations_equal_jaxs_where_installed() -> None:
    jax = pytest.importorskip("jax")
    ours, theirs = ts.random.key(7), jax.random.PRNGKey(7)
    for name in ["glorot_uniform", "glorot_normal", "lecun_normal", "lecun_uniform", "he_normal", "he_uniform"]:
        a = getattr(ts.nn.initializers, name)(in_axis=0, out_axis=-1)(ours, (5, 3, 4))
        b = getattr(jax.nn.initializers, name)(in_axis=0, out_axis=-1)(theirs, (5, 3, 4))
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7, err_msg=name)
    # The orthogonal ones go through a QR: a GPU's (cuSOLVER) rounds differently from the LAPACK jax uses here.
    qr_rtol = 1e-6 if PLATFORM == jax_platform() else 2e-5
    for make, rtol in [(lambda m: m.orthogonal(1.5), qr_rtol), (lambda m: m.delta_orthogonal(), qr_rtol),
                       (lambda m: m.normal(0.3), 1e-6), (lambda m: m.uniform(2.0), 1e-6),
                       (lambda m: m.truncated_normal(0.4), 1e-6)]:
        a = make(ts.nn.initializers)(ours, (3, 4, 6))
        b = make(jax.nn.initializers)(theirs, (3, 4, 6))
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=rtol / 10)
    x = np.linspace(-4, 4, 33).astype(np.float32)
    for name in ["celu", "hard_sigmoid", "hard_silu", "sparse_plus", "sparse_sigmoid", "squareplus", "soft_sign", "swish"]:
        np.testing.assert_allclose(np.asarray(getattr(ts.nn, name)(x)), np.asarray(getattr(jax.nn, name)(x)),
                                   rtol=1e-6, atol=1e-7, err_msg=name)


def test_every_jax_nn_name_is_here_but_the_scaled_formats() -> None:
    """ts.nn offers jax.nn's names (but its microscaling-format matmuls, which need float8 types tensorstage lacks)."""
    jax = pytest.importorskip("jax")
    absent_on_purpose = {"get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"}
    public = {name for name in dir(jax.nn) if not name.startswith("_")}
    assert sorted(public - set(dir(ts.nn)) - absent_on_purpose) == []
    assert sorted({n for n in dir(jax.nn.initializers) if not n.startswith("_")} - set(dir(ts.nn.initializers))) == []
