"""``holomorphic=True`` for grad, value_and_grad, jacfwd and jacrev: complex inputs and a complex output, and the
complex derivative f'(z) as the result, as in JAX; checked against closed forms and jax, nested, under vmap and
inside a program, and the errors for real inputs or outputs (and for complex ones without the flag)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

# name: (f written for tnp or jnp, f', f''), on Re z > 0 (away from log's and sqrt's branch cut and 1/z's pole).
FUNCTIONS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any], Any], Callable[[Any], Any]]] = {
    "cubic": (lambda z, np_: 3 * z**3 - 2 * z + 1, lambda z: 9 * z**2 - 2, lambda z: 18 * z),
    "exp": (lambda z, np_: np_.exp(z) * z, lambda z: np.exp(z) * (1 + z), lambda z: np.exp(z) * (2 + z)),
    "sin": (lambda z, np_: np_.sin(z), np.cos, lambda z: -np.sin(z)),
    "reciprocal": (lambda z, np_: 1 / z, lambda z: -1 / z**2, lambda z: 2 / z**3),
    "log": (lambda z, np_: np_.log(z), lambda z: 1 / z, lambda z: -1 / z**2),
    "sqrt_tanh": (lambda z, np_: np_.sqrt(z) * np_.tanh(z),
                  lambda z: np.tanh(z) / (2 * np.sqrt(z)) + np.sqrt(z) / np.cosh(z) ** 2, None),  # f'' by jax only
}


def _points(rng: np.random.Generator, n: int) -> np.ndarray:
    return (0.3 + rng.random(n) * 1.5) + 1j * rng.standard_normal(n)


def _derivatives(z: Any) -> dict[str, Any]:
    """For every function, f' and f'' at each element of ``z``: vmap of grad (of grad), and jacfwd / jacrev
    (whose Jacobians of an elementwise map are diagonal), staged in one program."""
    out = {}
    for name, (f, _, _) in FUNCTIONS.items():
        g = ts.grad(lambda v, f=f: f(v, tnp), holomorphic=True)
        out[name] = (
            ts.vmap(g)(z),
            ts.vmap(ts.grad(g, holomorphic=True))(z),
            tnp.diagonal(ts.jacfwd(lambda v, f=f: f(v, tnp), holomorphic=True)(z)),
            tnp.diagonal(ts.jacrev(lambda v, f=f: f(v, tnp), holomorphic=True)(z)),
        )
    return out


def test_derivatives_match_closed_forms_and_jax(rng: np.random.Generator) -> None:
    z = _points(rng, 5)
    got = ts.program(_derivatives)(z)
    for name, (f, d1, d2) in FUNCTIONS.items():
        first, second, forward, reverse = (np.asarray(a) for a in got[name])
        assert first.dtype == np.complex128, name
        np.testing.assert_allclose(first, d1(z), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(forward, first, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(reverse, first, rtol=1e-12, err_msg=name)
        if d2 is not None:
            np.testing.assert_allclose(second, d2(z), rtol=1e-11, err_msg=name)
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        for name, (f, _, _) in FUNCTIONS.items():
            g = jax.grad(lambda v, f=f: f(v, jnp), holomorphic=True)
            first, second = np.asarray(got[name][0]), np.asarray(got[name][1])
            np.testing.assert_allclose(first, jax.vmap(g)(z), rtol=1e-12, err_msg=name)
            np.testing.assert_allclose(second, jax.vmap(jax.grad(g, holomorphic=True))(z), rtol=1e-11, err_msg=name)


def test_eager_grad_in_single_precision_and_value_and_grad() -> None:
    """JAX's example: f(z) = z² at 3+4j has f' = 6+8j; the gradient keeps the argument's dtype."""
    slope = ts.grad(lambda z: z**2, holomorphic=True)(np.complex64(3 + 4j))
    assert np.asarray(slope).dtype == np.complex64 and complex(slope) == 6 + 8j
    value, slope = ts.value_and_grad(lambda z: tnp.exp(z), holomorphic=True)(np.complex128(1 - 2j))
    np.testing.assert_allclose([complex(value), complex(slope)], [np.exp(1 - 2j)] * 2, rtol=1e-14)


def test_several_arguments_aux_jacobians_and_hessian(rng: np.random.Generator) -> None:
    z, w = _points(rng, 3), _points(rng, 3)

    @ts.program
    def run(z: Any, w: Any) -> Any:
        f = lambda a, b: tnp.sum(a * b**2)  # noqa: E731
        grads = ts.grad(f, argnums=(0, 1), holomorphic=True)(z, w)
        with_aux = ts.grad(lambda a: (tnp.sum(tnp.sin(a)), a * 2), has_aux=True, holomorphic=True)(z)
        jac = ts.jacrev(lambda a: tnp.cumsum(a * a), holomorphic=True)(z)
        hess = ts.hessian(lambda a: tnp.sum(a**3), holomorphic=True)(z)
        return grads, with_aux, jac, ts.jacfwd(lambda a: tnp.cumsum(a * a), holomorphic=True)(z), hess

    (gz, gw), (slope, aux), jac_rev, jac_fwd, hess = run(z, w)
    np.testing.assert_allclose(np.asarray(gz), w**2, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gw), 2 * z * w, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(slope), np.cos(z), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(aux), 2 * z)
    want = np.tril(np.ones((3, 3))) * (2 * z)[None, :]  # d cumsum(a²)_i / d a_j = 2 a_j for j <= i
    np.testing.assert_allclose(np.asarray(jac_rev), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jac_fwd), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(hess), np.diag(6 * z), rtol=1e-14)


def test_without_holomorphic_real_jacobians_of_complex_maps_still_work(rng: np.random.Generator) -> None:
    """jacfwd of a real input to complex outputs, and jacrev of complex inputs to a real output, as in JAX."""
    x, z = rng.standard_normal(3), _points(rng, 3)
    np.testing.assert_allclose(np.asarray(ts.jacfwd(lambda v: tnp.exp(1j * v))(x)), np.diag(1j * np.exp(1j * x)))
    got = np.asarray(ts.jacrev(lambda v: tnp.abs(v) ** 2)(z))
    np.testing.assert_allclose(got, np.diag(2 * np.conj(z)), rtol=1e-14)  # the conjugate of df/dx + i df/dy


def _sum_of_squares(z: Any) -> Any:
    return tnp.sum(z * z)


def _rotated_sum(x: Any) -> Any:
    return tnp.sum(x * 1j)


REAL = np.ones(3, np.float32)
COMPLEX = np.ones(3, np.complex64)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: ts.grad(_sum_of_squares)(COMPLEX), ["grad", "_sum_of_squares", "c64[]", "holomorphic=True"]),
        (lambda: ts.grad(_rotated_sum, holomorphic=True)(REAL),
         ["grad", "x of _rotated_sum", "must be complex", "f32[3]", "holomorphic"]),
        (lambda: ts.grad(lambda z: tnp.sum(tnp.abs(z)), holomorphic=True)(COMPLEX),
         ["grad", "complex scalar", "f32[]", "holomorphic"]),
        (lambda: ts.value_and_grad(_rotated_sum, holomorphic=True)(REAL), ["value_and_grad", "f32[3]"]),
        (lambda: ts.jacfwd(lambda z: z * 2)(COMPLEX), ["jacfwd", "c64[3]", "complex input", "holomorphic=True"]),
        (lambda: ts.jacrev(lambda z: z * 2)(COMPLEX), ["jacrev", "c64[3]", "complex output", "holomorphic=True"]),
        (lambda: ts.jacrev(tnp.abs, holomorphic=True)(COMPLEX), ["jacrev", "outputs must be complex", "f32[3]"]),
        (lambda: ts.jacfwd(lambda x: x * 1j, holomorphic=True)(REAL), ["jacfwd", "must be complex", "f32[3]"]),
        (lambda: ts.hessian(lambda z: tnp.sum(tnp.abs(z)))(COMPLEX), ["hessian", "c64[3]", "holomorphic=True"]),
    ],
)
def test_wrong_dtypes_are_reported(call: Callable[[], Any], words: list[str]) -> None:
    with pytest.raises(ts.TransformError) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert "test_holomorphic.py" in str(info.value)
