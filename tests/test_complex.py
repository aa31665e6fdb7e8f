"""Complex numbers: the c64/c128 dtypes, host transfer and constants, NumPy's complex functions, the refusals of
ordering and rounding, weak Python complex scalars, and derivatives under JAX's convention (grad of a real
function of z is the conjugate of df/dx + i df/dy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from directional_grads import assert_pair_grads_match
from staging_errors import check_staging_errors


def _complex(rng: np.random.Generator, *shape: int, dtype: Any = np.complex128) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# ------------------------------------------------------------------------------------------------ dtypes


def test_dtype_names_and_categories() -> None:
    assert np.dtype(ts.c64) == np.complex64 and np.dtype(ts.c128) == np.complex128
    assert tnp.complex64 is ts.c64 and tnp.complex128 is ts.c128
    assert issubclass(ts.c64, ts.Complex) and issubclass(ts.Complex, ts.Inexact)
    assert issubclass(ts.Floating, ts.Inexact) and not issubclass(ts.c64, ts.Floating)
    assert tnp.issubdtype(ts.c128, tnp.complexfloating) and tnp.issubdtype(ts.c64, tnp.inexact)
    assert tnp.issubdtype(ts.f32, tnp.inexact) and not tnp.issubdtype(ts.f32, tnp.complexfloating)
    assert tnp.isdtype(ts.c64, "complex floating") and tnp.isdtype(ts.c128, "numeric")
    assert not tnp.isdtype(ts.c64, "real floating")
    assert tnp.finfo(ts.c64).eps == np.finfo(np.float32).eps
    assert tnp.result_type(ts.f64, 1j) == np.complex128 and tnp.result_type(ts.f32, 1j) == np.complex64
    assert ts.dtypes.to_numpy(complex) == np.complex64  # a Python complex is c64, as JAX's


def test_host_round_trip_and_constants(rng: np.random.Generator) -> None:
    z = _complex(rng, 3, 4)
    for dtype in (np.complex64, np.complex128):
        array = ts.device_put(z.astype(dtype))
        assert array.dtype == dtype
        np.testing.assert_array_equal(np.asarray(array), z.astype(dtype))
    table = np.array([1 + 2j, -3.5j, np.inf - 1j, 0.0], np.complex128)  # a dense (not splat) constant

    @ts.program
    def shifted(x: Any) -> Any:
        return x * (2 - 3j) + table, tnp.full(2, 1.5 - 2j, dtype=ts.c64)

    scaled, filled = shifted(table)
    np.testing.assert_array_equal(np.asarray(scaled), table * (2 - 3j) + table)
    np.testing.assert_array_equal(np.asarray(filled), np.full(2, 1.5 - 2j, np.complex64))


# ------------------------------------------------------------------------------------------- numerics


def _functions(x: Any, y: Any) -> dict[str, Any]:
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "neg": -x, "cube": x**3, "inverse_square": x**-2,
        "power": x**y, "exp": tnp.exp(x), "log": tnp.log(x), "log1p": tnp.log1p(x), "expm1": tnp.expm1(x),
        "sqrt": tnp.sqrt(x), "sin": tnp.sin(x), "cos": tnp.cos(x), "tan": tnp.tan(x), "tanh": tnp.tanh(x),
        "reciprocal": tnp.reciprocal(x), "square": tnp.square(x),
        "abs": tnp.abs(x), "real": tnp.real(x), "imag": tnp.imag(x), "conj": tnp.conj(x), "angle": tnp.angle(x),
        "angle_deg": tnp.angle(x, deg=True), "sum": tnp.sum(x, axis=0), "prod": tnp.prod(x, axis=1),
        "mean": tnp.mean(x), "var": tnp.var(x, axis=1), "std": tnp.std(x), "matmul": x @ y.T, "vdot": tnp.vdot(x, y),
        "dot": tnp.dot(x[0], y[1]), "where": tnp.where(tnp.abs(x) > 1, x, y), "equal": x == y, "not_equal": x != x,
        "concat": tnp.concatenate([x, y]), "transpose": x.T, "slice": x[1:, ::2], "reshape": x.reshape(-1),
        "isclose": tnp.isclose(x, x + 1e-9j), "attributes": x.real + x.imag + abs(x) + x.conj().imag,
    }


_NUMPY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y,
    "neg": lambda x, y: -x, "cube": lambda x, y: x**3, "inverse_square": lambda x, y: x**-2.0,
    "power": lambda x, y: x**y, "exp": lambda x, y: np.exp(x), "log": lambda x, y: np.log(x),
    "log1p": lambda x, y: np.log1p(x), "expm1": lambda x, y: np.expm1(x), "sqrt": lambda x, y: np.sqrt(x),
    "sin": lambda x, y: np.sin(x), "cos": lambda x, y: np.cos(x), "tan": lambda x, y: np.tan(x),
    "tanh": lambda x, y: np.tanh(x), "reciprocal": lambda x, y: 1 / x, "square": lambda x, y: x * x,
    "abs": lambda x, y: np.abs(x), "real": lambda x, y: x.real, "imag": lambda x, y: x.imag,
    "conj": lambda x, y: np.conj(x), "angle": lambda x, y: np.angle(x), "angle_deg": lambda x, y: np.angle(x, True),
    "sum": lambda x, y: x.sum(0), "prod": lambda x, y: x.prod(1), "mean": lambda x, y: x.mean(),
    "var": lambda x, y: x.var(1), "std": lambda x, y: x.std(), "matmul": lambda x, y: x @ y.T,
    "vdot": lambda x, y: np.vdot(x, y), "dot": lambda x, y: np.dot(x[0], y[1]),
    "where": lambda x, y: np.where(np.abs(x) > 1, x, y), "equal": lambda x, y: x == y,
    "not_equal": lambda x, y: x != x, "concat": lambda x, y: np.concatenate([x, y]), "transpose": lambda x, y: x.T,
    "slice": lambda x, y: x[1:, ::2], "reshape": lambda x, y: x.reshape(-1),
    "isclose": lambda x, y: np.isclose(x, x + 1e-9j),
    "attributes": lambda x, y: x.real + x.imag + np.abs(x) + np.conj(x).imag,
}


@pytest.mark.parametrize(("dtype", "tol"), [(np.complex128, 1e-12), (np.complex64, 2e-5)])
def test_functions_match_numpy(dtype: Any, tol: float, rng: np.random.Generator) -> None:
    x, y = _complex(rng, 3, 4, dtype=dtype), _complex(rng, 3, 4, dtype=dtype)
    got = ts.program(_functions)(x, y)
    wide_x, wide_y = x.astype(np.complex128), y.astype(np.complex128)
    for name, reference in _NUMPY.items():
        want = np.asarray(reference(wide_x, wide_y))
        result = np.asarray(got[name])
        assert result.shape == want.shape, name
        if np.issubdtype(want.dtype, np.inexact):
            expected_kind = np.complexfloating if np.issubdtype(want.dtype, np.complexfloating) else np.floating
            assert np.issubdtype(result.dtype, expected_kind), (name, result.dtype)
            assert result.dtype.itemsize in (np.dtype(dtype).itemsize, np.dtype(dtype).itemsize // 2), name
            np.testing.assert_allclose(result, want, rtol=tol, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(result, want, err_msg=name)


def test_special_values_and_predicates() -> None:
    z = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf), complex(-np.inf, 2), 3 + 0j, 0j,
                  complex(np.nan, -np.inf), complex(np.inf, np.nan)], np.complex64)  # |z| = inf beside a NaN

    @ts.program
    def predicates(x: Any) -> Any:
        return (tnp.isfinite(x), tnp.isnan(x), tnp.isinf(x), tnp.iscomplex(x), tnp.isreal(x),
                tnp.nan_to_num(x, nan=7.0), tnp.abs(x))

    got = predicates(z)
    want = (np.isfinite(z), np.isnan(z), np.isinf(z), np.iscomplex(z), np.isreal(z), np.nan_to_num(z, nan=7.0),
            np.abs(z))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert tnp.iscomplexobj(ts.device_put(z)) and not tnp.isrealobj(ts.device_put(z))
    assert not tnp.iscomplexobj(ts.device_put(z.real)) and tnp.iscomplexobj(z)


def test_sign_is_the_unit_phase_as_numpy_2(rng: np.random.Generator) -> None:
    """z / |z| on random values; at 0, NaN and infinities NumPy 2's results (the signs of zero parts excepted:
    XLA keeps them); where |z| overflows the right phase, where NumPy's overflowed modulus gives ±1j."""
    inf, nan, big = np.inf, np.nan, np.finfo(np.float64).max
    special = np.array([0j, 3 - 4j, complex(nan, 0), complex(0, nan), complex(inf, 0), complex(-inf, 2),
                        complex(2, -inf), complex(inf, inf), complex(nan, inf), complex(-inf, nan), -2 + 0j, -3j])
    values = _complex(rng, 3, 4)
    for dtype in (np.complex128, np.complex64):
        got = [np.asarray(a) for a in ts.program(lambda a, b: (tnp.sign(a), tnp.sign(b)))(special.astype(dtype),
                                                                                            values.astype(dtype))]
        assert got[0].dtype == dtype and got[1].dtype == dtype
        np.testing.assert_array_equal(got[0], np.sign(special.astype(dtype)))
        np.testing.assert_allclose(got[1], values / np.abs(values), rtol=1e-15 if dtype == np.complex128 else 2e-7)
    huge = np.array([complex(big, -big), complex(big, 1.0)])
    np.testing.assert_allclose(np.asarray(tnp.sign(huge)), [(1 - 1j) / np.sqrt(2), 1], rtol=1e-15)


def test_sign_derivatives_match_finite_differences_and_vanish_at_zero(rng: np.random.Generator) -> None:
    """d(z/|z|) turns the phase only (JAX gives complex sign no derivative); a real sign's derivative is 0."""
    z, w, t = _complex(rng, 4), _complex(rng, 4), _complex(rng, 4)

    def loss(v: Any) -> Any:
        u = tnp.sign(v)
        return tnp.sum(tnp.real(u * w) + tnp.imag(u) ** 2)

    @ts.program
    def run(v: Any, t: Any, x: Any) -> Any:
        eps = 1e-6
        return (ts.grad(loss)(v), loss(v + eps * t), loss(v - eps * t), ts.grad(loss)(v * 0),
                ts.grad(lambda y: tnp.sum(tnp.sign(y) * y))(x))

    g, plus, minus, at_zero, real = run(z, t, z.real)
    # Re(g t) is the derivative along t under JAX's pairing (g is the conjugate gradient).
    assert float(np.real(np.sum(np.asarray(g) * t))) == pytest.approx((float(plus) - float(minus)) / 2e-6, rel=1e-6)
    np.testing.assert_array_equal(np.asarray(at_zero), 0)
    np.testing.assert_array_equal(np.asarray(real), np.sign(z.real))


def test_real_tensors_have_numpy_parts(rng: np.random.Generator) -> None:
    x = rng.standard_normal(4).astype(np.float32)
    real, imag, conj, angle = ts.program(lambda v: (tnp.real(v), tnp.imag(v), v.conj(), tnp.angle(v)))(x)
    np.testing.assert_array_equal(np.asarray(real), x)
    np.testing.assert_array_equal(np.asarray(imag), np.zeros(4, np.float32))
    np.testing.assert_array_equal(np.asarray(conj), x)
    np.testing.assert_allclose(np.asarray(angle), np.angle(x))


def test_python_complex_scalars_are_weak(rng: np.random.Generator) -> None:
    x32 = rng.standard_normal(3).astype(np.float32)
    x64 = rng.standard_normal(3)
    z64 = _complex(rng, 3, dtype=np.complex64)
    a, b, c, d = ts.program(lambda p, q, r: (p * 1j, q + (1 - 2j), r * 2.5 + 1, 1j * r))(x32, x64, z64)
    assert np.asarray(a).dtype == np.complex64 and np.asarray(b).dtype == np.complex128  # the float's width
    np.testing.assert_allclose(np.asarray(a), x32 * 1j)
    np.testing.assert_allclose(np.asarray(b), x64 + (1 - 2j))
    assert np.asarray(c).dtype == np.complex64 and np.asarray(d).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(c), z64 * 2.5 + 1, rtol=1e-6)


def _ints_with_complex(n: Any) -> Any:
    return n + 1j


BAD: list[Any] = [
    (lambda x, y: x + y, [np.zeros(3, np.float32), np.zeros(3, np.complex64)], ts.DTypeError,
     ["add", "f32[3]", "c64[3]", "never promotes"]),
    (lambda x, y: x * y, [np.zeros(3, np.complex64), np.zeros(3, np.complex128)], ts.DTypeError,
     ["multiply", "c64[3]", "c128[3]"]),
    (_ints_with_complex, [np.zeros(3, np.int32)], ts.DTypeError, ["add", "complex scalar", "i32"]),
    (lambda z: z < z, [np.zeros(3, np.complex64)], ts.DTypeError, ["less", "complex numbers have no order"]),
    (lambda z: tnp.maximum(z, z), [np.zeros(3, np.complex64)], ts.DTypeError, ["maximum", "no order"]),
    (lambda z: tnp.max(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["max", "no order"]),
    (lambda z: tnp.argmax(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["argmax", "no order"]),
    (lambda z: tnp.sort(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["sort", "no order"]),
    (lambda z: tnp.clip(z, 0, 1), [np.zeros(3, np.complex64)], ts.DTypeError, ["clip", "no order"]),
    (lambda z: tnp.floor(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["floor", "real operand", "c64[3]"]),
    (lambda z: tnp.ceil(z), [np.zeros(3, np.complex128)], ts.DTypeError, ["ceil", "real operand"]),
    (lambda z: tnp.round(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["round", "real operand"]),
    (lambda z: tnp.trunc(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["trunc", "real operand"]),
    (lambda z: z % 2, [np.zeros(3, np.complex64)], ts.DTypeError, ["rem", "real numeric"]),
    (lambda z: z // 2, [np.zeros(3, np.complex64)], ts.DTypeError, ["floor_divide"]),
    (lambda z: tnp.arctan2(z, z), [np.zeros(3, np.complex64)], ts.DTypeError, ["arctan2"]),
    (lambda z: tnp.log2(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["log2", "real floating-point"]),
    (lambda z: tnp.isposinf(z), [np.zeros(3, np.complex64)], ts.DTypeError, ["isposinf", "real operand"]),
    (lambda z: z.astype(ts.f32), [np.zeros(3, np.complex64)], ts.DTypeError, ["astype", "cannot convert complex"]),
    (lambda z: z.astype(ts.i32), [np.zeros(3, np.complex64)], ts.DTypeError, ["astype", "take .real"]),
    (lambda x: tnp.real(x).astype(ts.c64) + tnp.angle(x.astype(ts.i32)), [np.zeros(3, np.float32)], TypeError,
     ["angle", "i32[3]"]),
]


def test_bad_operands_raise_naming_the_op_and_the_line() -> None:
    check_staging_errors(BAD, "test_complex.py")


# ------------------------------------------------------------------------------------------- derivatives


def _real_function(x: Any, y: Any, np_: Any) -> Any:
    """A real function of z = x + iy built from complex intermediates (vdot, abs, angle, exp, log, a matmul)."""
    z = x + 1j * y if np_ is not tnp else x.astype(ts.c128) + 1j * y
    w = np_.exp(z) * np_.conj(z) / (z + 2) + np_.sqrt(z) * np_.log(z * z) + np_.sin(z) ** 3
    m = z.reshape(2, 2) @ np_.conj(z.reshape(2, 2)).T
    return (
        np_.sum(np_.abs(w) ** 2) + np_.real(np_.vdot(z, w)) + np_.sum(np_.angle(w) * x)
        + np_.sum(np_.imag(np_.prod(z)) * np_.tanh(z).real) + np_.real(np_.mean(m)) + np_.sum(np_.abs(m))
    )


def test_gradients_through_complex_intermediates_match_finite_differences_and_jax(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    assert_pair_grads_match(_real_function, x, y, rtol=1e-6, atol=1e-7, forward_tol=1e-12, jax_atol=1e-12)


def test_jax_convention_for_a_real_function_of_z() -> None:
    """grad(|z|²) at 3+4j is 6-8j in JAX: here the same gradient, read off the real and imaginary parts."""
    gx, gy = ts.grad(lambda a, b: tnp.abs(a.astype(ts.c64) + 1j * b) ** 2, argnums=(0, 1))(
        np.float32(3.0), np.float32(4.0)
    )
    assert complex(float(gx), -float(gy)) == pytest.approx(6 - 8j)


def test_vjp_is_the_transpose_not_the_adjoint(rng: np.random.Generator) -> None:
    """Cotangents of a holomorphic map are multiplied by f'(z), not its conjugate (JAX's vjp)."""
    z = _complex(rng, 3)
    ct = _complex(rng, 3)

    @ts.program
    def pulled(x: Any, y: Any, c: Any) -> Any:
        _, back = ts.vjp(lambda a, b: tnp.exp(a.astype(ts.c128) + 1j * b), x, y)
        return back(c)

    gx, gy = pulled(z.real, z.imag, ct)
    w = ct * np.exp(z)  # the cotangent of z, paired with dz = dx + i dy as Re(w dz)
    np.testing.assert_allclose(np.asarray(gx), w.real, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), -w.imag, rtol=1e-12)


def test_grad_of_a_complex_output_is_refused(rng: np.random.Generator) -> None:
    with pytest.raises(ts.TransformError, match="floating-point scalar"):
        ts.grad(lambda x: tnp.sum(x * 1j))(rng.standard_normal(3).astype(np.float32))


def test_vmap_over_complex_operands(rng: np.random.Generator) -> None:
    z = _complex(rng, 5, 3)
    got = ts.vmap(lambda v: tnp.vdot(v, v * 2j) + tnp.sum(tnp.abs(v)).astype(ts.c128))(z)
    want = np.array([np.vdot(v, v * 2j) + np.abs(v).sum() for v in z])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


# ------------------------------------------------------------------------------------------ complex inputs


def test_grad_with_respect_to_z_is_the_conjugate_gradient() -> None:
    assert complex(ts.grad(lambda z: tnp.abs(z) ** 2)(np.complex64(3 + 4j))) == pytest.approx(6 - 8j)


def test_grad_jvp_vjp_with_respect_to_z_match_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    z, w = _complex(rng, 3), _complex(rng, 3)

    def loss(v: Any, np_: Any) -> Any:
        return np_.sum(np_.real(np_.exp(v) * np_.conj(v)) + np_.abs(np_.fft.fft(v * v)) ** 2)

    tangent = ts.jvp(lambda v: tnp.exp(v) * v, (z,), (w,))[1]
    (pulled,) = ts.vjp(lambda v: tnp.sin(v) * v, z)[1](w)
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(ts.grad(lambda v: loss(v, tnp))(z)),
                                   jax.grad(lambda v: loss(v, jnp))(z), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(tangent), jax.jvp(lambda v: jnp.exp(v) * v, (z,), (w,))[1], rtol=1e-10)
        np.testing.assert_allclose(np.asarray(pulled), jax.vjp(lambda v: jnp.sin(v) * v, z)[1](w)[0], rtol=1e-10)


def test_vecdot_conjugates_its_first_operand(rng: np.random.Generator) -> None:
    x, y = _complex(rng, 3, 4), _complex(rng, 4)
    want = np.vecdot(x, y) if hasattr(np, "vecdot") else np.einsum("ij,j->i", x.conj(), y)
    np.testing.assert_allclose(np.asarray(tnp.vecdot(x, y)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tnp.linalg.vecdot(x, y)), want, rtol=1e-12)
