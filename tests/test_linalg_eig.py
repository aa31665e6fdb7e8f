"""tnp.linalg.eig / eigvals (LAPACK's geev on CPU) and tnp.roots against NumPy; eigenvalue derivatives against finite
differences and jax; vmap against a loop; errors (bad operands, other platforms, LAPACK disabled). The
registry-driven tests cover the ``eig`` primitive's rules too (tests/primitive_cases.py, tests/test_vmap.py)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack
from tensorstage.staging.errors import TransformError
from tensorstage.staging.primitives.eig import EigUnavailableError

from staging_errors import check_staging_errors

LA: Any = tnp.linalg
ROOTS: Any = tnp.roots

needs_lapack = pytest.mark.skipif(
    importlib.util.find_spec("scipy") is None or ts.default_device().platform != "cpu",
    reason="eig runs only on CPU with LAPACK (SciPy)",
)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def matrices(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def single(dtype: Any) -> bool:
    return np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))


def assert_same_values(got: np.ndarray, expected: np.ndarray, atol: float) -> None:
    """Equal multisets of eigenvalues (each matrix of a batch): every one is within ``atol`` of one of the other
    set, both ways (distinct random eigenvalues, so nearest matches are unambiguous)."""
    assert got.shape == expected.shape
    if not got.size:
        return
    got, expected = got.reshape(-1, got.shape[-1]), expected.reshape(-1, expected.shape[-1])
    for g, e in zip(got, expected):
        distances = np.abs(g[:, None] - e[None, :])
        assert distances.min(axis=1).max() < atol and distances.min(axis=0).max() < atol, (g, e)


@needs_lapack
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_and_eigvals_match_numpy(dtype: Any, rng: np.random.Generator) -> None:
    a = matrices(rng, (3, 5, 5), dtype)
    (w, v), values = ts.program(lambda x: (LA.eig(x), LA.eigvals(x)))(a)
    w, v, values = np.asarray(w), np.asarray(v), np.asarray(values)
    complex_dtype = np.complex64 if single(dtype) else np.complex128
    assert w.dtype == v.dtype == values.dtype == complex_dtype  # complex whatever the input, as JAX
    assert w.shape == (3, 5) and v.shape == (3, 5, 5)
    eps = float(np.finfo(complex_dtype).eps)
    a64 = a.astype(np.complex128)
    scale = np.abs(a64).max()
    np.testing.assert_allclose(a64 @ v, v * w[..., None, :], atol=100 * eps * scale)
    assert_same_values(w, np.linalg.eigvals(a64), 1000 * eps * scale)
    np.testing.assert_allclose(values, w, atol=10 * eps * scale)
    # LAPACK's normalization: unit 2-norm, the largest-magnitude component real
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=10 * eps)
    largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    np.testing.assert_allclose(largest.imag, 0, atol=10 * eps)
    if not single(dtype):  # the same LAPACK routine as NumPy's, in the same precision: the same vectors
        w_np, v_np = np.linalg.eig(a)
        np.testing.assert_allclose(w, w_np, atol=1e-12 * scale)
        np.testing.assert_allclose(v, v_np, atol=1e-10)


@needs_lapack
def test_real_matrices_give_conjugate_pairs_and_complex_vectors() -> None:
    rotation = np.array([[0.0, -2.0, 1.0], [2.0, 0.0, 0.5], [0.0, 0.0, 3.0]])  # eigenvalues ±2i and 3
    w, v = (np.asarray(x) for x in LA.eig(rotation))
    np.testing.assert_allclose(np.sort_complex(w), [-2j, 2j, 3], atol=1e-14)
    np.testing.assert_allclose(rotation @ v, v * w, atol=1e-14)
    pair = np.flatnonzero(np.abs(w.imag) > 0)
    np.testing.assert_allclose(v[:, pair[0]], v[:, pair[1]].conj(), atol=1e-15)  # LAPACK's pair, unpacked
    triangular = np.triu(np.arange(1.0, 10.0).reshape(3, 3))
    values = np.asarray(LA.eigvals(triangular.astype(np.float32)))
    assert values.dtype == np.complex64 and np.all(values.imag == 0)
    np.testing.assert_allclose(np.sort(values.real), [1, 5, 9], rtol=1e-6)
    assert LA.eig(np.zeros((2, 0, 0))).eigenvectors.shape == (2, 0, 0)
    assert np.isnan(np.asarray(LA.eigvals(np.full((2, 2), np.nan)))).all()
    result = LA.eig(np.eye(2))
    assert type(result).__name__ == "EigResult" and result.eigenvalues is result[0]


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigenvalue_derivatives_match_finite_differences(dtype: Any, rng: np.random.Generator) -> None:
    a, direction = matrices(rng, (2, 4, 4), dtype), matrices(rng, (2, 4, 4), dtype)
    w, dw = ts.jvp(lambda x: LA.eigvals(x), (a,), (direction,))
    step = 1e-6
    # NumPy's order is LAPACK's, and a small step keeps it
    fd = (np.linalg.eigvals(a + step * direction) - np.linalg.eigvals(a - step * direction)) / (2 * step)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvals(a), atol=1e-12)
    np.testing.assert_allclose(np.asarray(dw), fd, atol=1e-7)

    def loss(x: Any) -> Any:
        w = LA.eigvals(x)
        return tnp.sum(tnp.real(w) ** 2 + tnp.imag(w) * tnp.real(w))

    def loss_np(x: np.ndarray) -> float:
        w = np.linalg.eigvals(x)
        return float(np.sum(w.real**2 + w.imag * w.real))

    g = np.asarray(ts.grad(loss)(a))
    # <grad, d> = d loss along d (the real pairing of complex_parts.py for complex a: Re(sum(grad * d)))
    fd_loss = (loss_np(a + step * direction) - loss_np(a - step * direction)) / (2 * step)
    np.testing.assert_allclose(np.real(np.sum(g * direction)), fd_loss, rtol=1e-6)


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigenvalue_derivatives_match_jax(dtype: Any, rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):  # a scope: other tests compare with jax's defaults
        _compare_with_jax(jax, dtype, rng)


def _compare_with_jax(jax: Any, dtype: Any, rng: np.random.Generator) -> None:
    jnp = jax.numpy
    a, direction = matrices(rng, (3, 3), dtype), matrices(rng, (3, 3), dtype)
    _, dw = ts.jvp(lambda x: LA.eigvals(x), (a,), (direction,))
    _, dw_jax = jax.jvp(jnp.linalg.eigvals, (a,), (direction,))
    np.testing.assert_allclose(np.asarray(dw), np.asarray(dw_jax), atol=1e-10)
    g = ts.grad(lambda x: tnp.sum(tnp.abs(LA.eigvals(x)) ** 2))(a)
    g_jax = jax.grad(lambda x: jnp.sum(jnp.abs(jnp.linalg.eigvals(x)) ** 2))(a)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_jax), atol=1e-10)


@needs_lapack
def test_eigenvector_derivatives_are_refused(rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 3))
    with pytest.raises(TransformError, match="eig: derivatives of non-symmetric eigenvectors"):
        ts.jvp(lambda x: LA.eig(x).eigenvectors, (a,), (a,))
    with pytest.raises(TransformError, match="eig: derivatives of non-symmetric eigenvectors"):
        ts.grad(lambda x: tnp.sum(tnp.abs(LA.eig(x).eigenvectors)))(a)
    # eig's eigenvalues alone differentiate in reverse mode (the vectors' cotangent is zero)
    g = ts.grad(lambda x: tnp.sum(tnp.real(LA.eig(x).eigenvalues)))(a)
    np.testing.assert_allclose(np.asarray(g), np.eye(3), atol=1e-12)  # d trace = I


@needs_lapack
def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    a = matrices(rng, (3, 4, 4), np.complex64)
    w, v = ts.vmap(lambda x: tuple(LA.eig(x)), in_axes=1)(np.moveaxis(a, 0, 1))
    for i in range(3):
        w_i, v_i = LA.eig(a[i])
        np.testing.assert_allclose(np.asarray(w)[i], np.asarray(w_i), atol=1e-6)
        np.testing.assert_allclose(np.asarray(v)[i], np.asarray(v_i), atol=1e-6)


@needs_lapack
def test_roots_match_numpy(rng: np.random.Generator) -> None:
    cases = [
        np.array([1.0, -3.0, 2.0]),
        np.array([0.0, 0.0, 2.0, -3.0, 1.0, 0.0, 0.0]),  # stripped leading zeros, exact zero roots
        rng.standard_normal(7),
        rng.standard_normal(5) + 1j * rng.standard_normal(5),
        np.array([1.0, 0.0, 1.0]),  # ±i
        np.array([3.0]),
        np.zeros(4),
        np.array([0.0, 2.0, 0.0]),
    ]
    for p in cases:
        got, expected = np.asarray(ROOTS(p)), np.roots(p)
        assert got.dtype == np.complex128 and got.shape == expected.shape, (p, got, expected)
        assert_same_values(got[None], expected[None].astype(complex), 1e-10)
    roots32 = np.asarray(ROOTS(np.array([1.0, -6.0, 11.0, -6.0], np.float32)))
    assert roots32.dtype == np.complex64
    np.testing.assert_allclose(np.sort(roots32.real), [1, 2, 3], rtol=1e-4)
    assert np.array_equal(np.asarray(ROOTS(np.array([1.0, 5.0, 0.0, 0.0])))[-2:], [0, 0])  # exact, as NumPy


@needs_lapack
def test_roots_in_staged_programs_keep_every_slot() -> None:
    """strip_zeros=False (JAX's option): one root per coefficient after the first, NaN per leading zero."""
    staged = ts.program(lambda p: ROOTS(p, strip_zeros=False))
    for p, finite in [
        (np.array([0.0, 0.0, 1.0, -3.0, 2.0]), [1, 2]),
        (np.array([1.0, -3.0, 2.0, 0.0]), [0, 1, 2]),
        (np.array([0.0, 1.0, 0.0, -4.0]), [-2, 2]),
        (np.zeros(3), []),
    ]:
        got = np.asarray(staged(p))
        assert got.shape == (p.size - 1,)
        nan = np.isnan(got)
        assert nan.sum() == p.size - 1 - len(finite), got
        np.testing.assert_allclose(np.sort(got[~nan].real), finite, atol=1e-7)
        np.testing.assert_allclose(got[~nan].imag, 0, atol=1e-7)


def test_bad_operands_name_the_op_and_the_line() -> None:
    square, wide = ts.Spec((3, 3), ts.f32), ts.Spec((3, 4), ts.f32)
    ints, halves = ts.Spec((3, 3), ts.i32), ts.Spec((3, 3), ts.f16)
    check_staging_errors(
        [
            (lambda a: LA.eig(a), (wide,), ts.ShapeError, ["eig", "square", "f32[3, 4]"]),
            (lambda a: LA.eigvals(a[0]), (square,), ts.ShapeError, ["eigvals", "square", "f32[3]"]),
            (lambda a: LA.eig(a), (ints,), ts.DTypeError, ["eig", "floating-point or complex", "i32[3, 3]"]),
            (lambda a: LA.eigvals(a), (halves,), ts.DTypeError, ["eigvals", "f32, f64, c64 or c128", "f16[3, 3]"]),
        ],
        "test_linalg_eig.py",
    )


def test_other_platforms_and_disabled_lapack_raise_at_lowering() -> None:
    staged = ts.program(lambda a: LA.eig(a)).stage(ts.Spec((2, 3, 3), ts.c64))
    with pytest.raises(EigUnavailableError, match=r"(?s)eig of c64\[2, 3, 3\] has no lowering on gpu.*test_linalg_eig"):
        staged.stablehlo("gpu")
    platform = ts.default_device().platform
    if platform != "cpu":  # eager calls run on the default device
        with pytest.raises(EigUnavailableError, match=f"(?s)no lowering on {platform}.*test_linalg_eig"):
            LA.eigvals(np.eye(2))
        return
    lapack.set_enabled(False)
    try:
        with pytest.raises(EigUnavailableError, match=r"(?s)geev on CPU, which is disabled.*test_linalg_eig"):
            LA.eigvals(np.eye(2))
    finally:
        lapack.set_enabled(None)
    if importlib.util.find_spec("scipy") is not None:
        assert "lapack_cgeev_ffi" in staged.stablehlo("cpu")
        assert "lapack_dgeev_ffi" in ts.program(lambda a: LA.eigvals(a)).stage(np.eye(2)).stablehlo("cpu")
