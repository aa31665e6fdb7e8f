"""Complex (c64, c128) SVD and what is built on it (svdvals, pinv, matrix_rank, lstsq, cond, norms), and the
complex LU primitive: against NumPy complex128 (LU: a textbook partial pivoting), eager and staged, both lowerings
(LAPACK's cgesdd/zgesdd and c/zgetrf on CPU; the portable one used on GPU and with ``TENSORSTAGE_LAPACK=0``);
derivatives of gauge-invariant functions against finite differences along real and imaginary directions and
against jax (when installed); vmap against a loop; errors.

Deliberate differences from NumPy: singular vectors carry tensorstage's phase (each column of ``u`` has its
largest-magnitude component real and positive; the matching row of ``vh`` follows), so NumPy's factors are
compared after the same normalization; ``svd(hermitian=True)`` is built on tensorstage's ``eigh``. As JAX, the
derivatives of the complex factors are those of *a* smooth SVD (gauge-invariant functions are exact).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack
from tensorstage.staging.errors import DTypeError, ShapeError
from tensorstage.staging.primitives import lu as LU
from tensorstage.tensor import Traced

from staging_errors import check_staging_errors

LA: Any = tnp.linalg
C64, C128 = np.complex64, np.complex128
HAS_JAX = importlib.util.find_spec("jax") is not None


@pytest.fixture
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The lowering a test's ``path`` parameter names: LAPACK's kernels (CPU with SciPy) or the portable one (GPU,
    ``TENSORSTAGE_LAPACK=0``)."""
    if request.param == "lapack" and (importlib.util.find_spec("scipy") is None or
                                      ts.default_device().platform != "cpu"):
        pytest.skip("LAPACK's kernels need SciPy and a CPU")
    lapack.set_enabled(request.param == "lapack")
    try:
        yield request.param
    finally:
        lapack.set_enabled(None)


def paths_and_dtypes(*pairs: tuple[str, Any]) -> Any:
    """Parametrize ``path`` (indirectly, through the fixture) and ``dtype``: each lowering on the dtypes given
    (the portable lowering's programs are the slow compiles: one dtype each where the other adds little)."""
    return pytest.mark.parametrize(("path", "dtype"), pairs, indirect=["path"], ids=lambda x: getattr(x, "__name__", x))


LAPACK_ONLY = paths_and_dtypes(("lapack", C64), ("lapack", C128))  # the functions on svd: one path suffices


def cnormal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 5e-5} if dtype == C64 else {"rtol": 1e-10, "atol": 1e-12}


def canonical(u: np.ndarray, vh: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """tensorstage's phase rule applied to NumPy's factors: column j of ``u`` times ``conj(p_j)`` (``p_j`` the
    phase of its largest-magnitude component), row j < k of ``vh`` times ``p_j``; later rows of ``vh`` on their
    own."""
    p = np.take_along_axis(u, np.argmax(np.abs(u), axis=-2)[..., None, :], axis=-2)[..., 0, :]
    p = p / np.abs(p)
    q = np.take_along_axis(vh, np.argmax(np.abs(vh), axis=-1)[..., :, None], axis=-1)[..., 0]
    q = np.conj(q / np.abs(q))
    rows = np.concatenate([p[..., :k], q[..., k:]], axis=-1)
    return u * np.conj(p)[..., None, :], vh * rows[..., :, None]


def check_svd(a: np.ndarray, u: Any, s: Any, vh: Any, full: bool) -> None:
    u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
    real = np.float32 if a.dtype == C64 else np.float64
    assert s.dtype == real and u.dtype == a.dtype == vh.dtype
    m, n = a.shape[-2:]
    k = min(m, n)
    assert u.shape == (*a.shape[:-2], m, m if full else k) and vh.shape == (*a.shape[:-2], n if full else k, n)
    nu, ns, nvh = np.linalg.svd(a.astype(C128), full_matrices=full)
    nu, nvh = canonical(nu, nvh, k)
    t = tol(a.dtype)
    np.testing.assert_allclose(s, ns, **t)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, **t)
    for x in (u, np.conj(np.swapaxes(vh, -1, -2))):  # unitary columns
        gram = np.conj(np.swapaxes(x, -1, -2)) @ x
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(x.shape[-1]), gram.shape), **t)
    np.testing.assert_allclose(u[..., :k], nu[..., :k], **t)
    np.testing.assert_allclose(vh[..., :k, :], nvh[..., :k, :], **t)
    if full and n > k:  # the extra rows: the rule on their own
        own = np.take_along_axis(vh, np.argmax(np.abs(vh), axis=-1)[..., :, None], axis=-1)[..., k:, 0]
        assert np.all(own.real > 0) and np.allclose(own.imag, 0, atol=t["atol"])


@paths_and_dtypes(("lapack", C64), ("lapack", C128), ("portable", C64))
def test_svd_matches_numpy(path: str, dtype: Any, rng: np.random.Generator) -> None:
    """Complete factors of a wide batch (the portable path: through the tall one of its adjoint), reduced ones of
    a square batch, the values alone; on LAPACK also a tall matrix, staged and eager."""
    wide, square, tall = (cnormal(rng, shape, dtype) for shape in ((2, 3, 5), (2, 4, 4), (5, 3)))

    def f(wide: Any, square: Any) -> Any:
        return LA.svd(wide), LA.svd(square, full_matrices=False), LA.svdvals(wide)

    full_wide, reduced, values = ts.program(f)(wide, square)
    check_svd(wide, *full_wide, True)
    check_svd(square, *reduced, False)
    np.testing.assert_allclose(np.asarray(values), np.asarray(full_wide[1]), **tol(dtype))
    if path == "lapack":
        check_svd(tall, *ts.program(LA.svd)(tall), True)
        check_svd(tall, *LA.svd(tall, full_matrices=False), False)  # eager
        np.testing.assert_allclose(np.asarray(LA.svd(tall, compute_uv=False)), np.asarray(LA.svdvals(tall)), **tol(dtype))


def test_svd_edges(rng: np.random.Generator) -> None:
    """Empty matrices, a rank-deficient one (phases and zero singular values), a NaN (all-NaN outputs)."""
    u, s, vh = LA.svd(np.zeros((3, 0), C64))
    assert np.asarray(s).dtype == np.float32 and np.asarray(s).shape == (0,)
    np.testing.assert_array_equal(np.asarray(u), np.eye(3))
    low = cnormal(rng, (5, 2), C128) @ cnormal(rng, (2, 4), C128)
    u, s, vh = (np.asarray(t) for t in LA.svd(low, full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, low, atol=1e-12)
    np.testing.assert_allclose(s[2:], 0, atol=1e-14)
    bad = cnormal(rng, (3, 3), C64)
    bad[1, 1] = np.nan
    assert all(np.isnan(np.asarray(t)).all() for t in LA.svd(bad))


@LAPACK_ONLY
def test_pinv_rank_lstsq_cond(path: str, dtype: Any, rng: np.random.Generator) -> None:
    a = cnormal(rng, (2, 5, 3), dtype)
    tall, wide = cnormal(rng, (6, 3), dtype), cnormal(rng, (3, 5), dtype)
    b, b1 = cnormal(rng, (6, 2), dtype), cnormal(rng, (3,), dtype)
    low = (cnormal(rng, (4, 2), C128) @ cnormal(rng, (2, 4), C128)).astype(dtype)

    def f(a: Any, tall: Any, wide: Any, b: Any, b1: Any, low: Any) -> Any:
        return (LA.pinv(a), LA.matrix_rank(low), LA.matrix_rank(a), LA.lstsq(tall, b), LA.lstsq(wide, b1),
                LA.cond(a), LA.cond(a, -2))

    pinv, rank_low, rank, (x, res, r, s), (x1, res1, r1, s1), cond, cond_inv = ts.program(f)(a, tall, wide, b, b1, low)
    t = tol(dtype)
    real = np.float32 if dtype == C64 else np.float64
    a128 = a.astype(C128)
    np.testing.assert_allclose(np.asarray(pinv), np.linalg.pinv(a128), **t)
    assert int(np.asarray(rank_low)) == 2 and np.asarray(rank).tolist() == [3, 3]
    nx, nres, nr, ns = np.linalg.lstsq(tall.astype(C128), b.astype(C128), rcond=None)
    np.testing.assert_allclose(np.asarray(x), nx, **t)
    assert np.asarray(res).dtype == real and np.asarray(s).dtype == real
    np.testing.assert_allclose(np.asarray(res), nres, **t)
    np.testing.assert_allclose(np.asarray(s), ns, **t)
    assert int(np.asarray(r)) == nr == 3
    nx1, nres1, nr1, _ = np.linalg.lstsq(wide.astype(C128), b1.astype(C128), rcond=None)
    np.testing.assert_allclose(np.asarray(x1), nx1, **t)
    assert np.asarray(res1).shape == nres1.shape == (0,) and int(np.asarray(r1)) == nr1
    assert np.asarray(cond).dtype == real
    np.testing.assert_allclose(np.asarray(cond), np.linalg.cond(a128), **t)
    np.testing.assert_allclose(np.asarray(cond_inv), np.linalg.cond(a128, -2), **t)


VECTOR_ORDS: list[Any] = [None, 2, 1, np.inf, -np.inf, 0, 3, -1.5]
MATRIX_ORDS: list[Any] = ["fro", 1, -1, np.inf, -np.inf]
SPECTRAL_ORDS: list[Any] = [2, -2, "nuc"]


@pytest.mark.parametrize("dtype", [C64, C128])
def test_norms(dtype: Any, rng: np.random.Generator) -> None:
    """Every ord of norm / vector_norm / matrix_norm, real results; the spectral ones (2, -2, 'nuc') on both
    lowerings (they are built on QR and eigh)."""
    v, m = cnormal(rng, (7,), dtype), cnormal(rng, (2, 4, 3), dtype)
    v[2] = 0

    def f(v: Any, m: Any) -> Any:
        return ([LA.norm(v, o) for o in VECTOR_ORDS], [LA.vector_norm(m, axis=(0, 2), ord=o) for o in (2, 1)],
                [LA.matrix_norm(m, ord=o) for o in MATRIX_ORDS], LA.norm(m), LA.norm(m[0], keepdims=True))

    vec, vec2, mat, whole, kept = ts.program(f)(v, m)
    t = tol(dtype)
    real = np.float32 if dtype == C64 else np.float64
    v128, m128 = v.astype(C128), m.astype(C128)
    for got, o in zip(vec, VECTOR_ORDS):
        assert np.asarray(got).dtype == real
        np.testing.assert_allclose(np.asarray(got), np.linalg.norm(v128, o), **t)
    for got, o in zip(vec2, (2, 1)):
        np.testing.assert_allclose(np.asarray(got), np.linalg.vector_norm(m128, axis=(0, 2), ord=o), **t)
    for got, o in zip(mat, MATRIX_ORDS):
        np.testing.assert_allclose(np.asarray(got), np.linalg.matrix_norm(m128, ord=o), **t)
    np.testing.assert_allclose(np.asarray(whole), np.linalg.norm(m128), **t)
    np.testing.assert_allclose(np.asarray(kept), np.linalg.norm(m128[0], keepdims=True), **t)


@LAPACK_ONLY
def test_spectral_norms_and_hermitian(path: str, dtype: Any, rng: np.random.Generator) -> None:
    """norm 2 / -2 / 'nuc' (QR and eigh of the augmented matrix), cond with norms of the inverse, and
    ``hermitian=True`` (eigh): built on the complex QR, eigh and inverse (whose portable lowerings
    tests/test_linalg_complex.py covers)."""
    m = cnormal(rng, (2, 4, 3), dtype)
    sq = cnormal(rng, (3, 3), dtype)
    h = sq + np.conj(sq.T)

    def f(m: Any, sq: Any, h: Any) -> Any:
        return ([LA.matrix_norm(m, ord=o) for o in SPECTRAL_ORDS], [LA.cond(sq, p) for p in ("fro", 1, np.inf)],
                LA.svd(h, hermitian=True), LA.svd(h, compute_uv=False, hermitian=True), LA.pinv(h, hermitian=True),
                LA.matrix_rank(h, hermitian=True))

    spectral, conds, (u, s, vh), s_only, pinv, rank = ts.program(f)(m, sq, h)
    t = tol(dtype)
    for got, o in zip(spectral, SPECTRAL_ORDS):
        np.testing.assert_allclose(np.asarray(got), np.linalg.matrix_norm(m.astype(C128), ord=o), **t)
    for got, p in zip(conds, ("fro", 1, np.inf)):
        np.testing.assert_allclose(np.asarray(got), np.linalg.cond(sq.astype(C128), p), **t)
    h128 = h.astype(C128)
    ns = np.linalg.svd(h128, compute_uv=False, hermitian=True)
    for got in (s, s_only):
        np.testing.assert_allclose(np.asarray(got), ns, **t)
    u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
    np.testing.assert_allclose((u * s) @ vh, h, **t)
    np.testing.assert_allclose(np.asarray(pinv), np.linalg.pinv(h128, hermitian=True), **t)
    assert int(np.asarray(rank)) == 3


# ------------------------------------------------------------------------------------------- derivatives


def gauge_invariant(xp: Any) -> Callable[[Any, Any], Any]:
    """Real functions of complex ``a`` (weights ``w``) that do not depend on the singular vectors' phases: the
    singular values (with and without the vectors), ``|u|²`` and ``|vh|²`` terms, the reconstruction; the same
    code for tensorstage and jax.numpy."""

    def f(a: Any, w: Any) -> Any:
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        k = s.shape[-1]
        rec = (u * s[..., None, :].astype(a.dtype)) @ vh
        total = xp.sum(s * w[..., 0, :k]) + xp.sum(xp.abs(u) ** 2 * w[..., : u.shape[-1]])
        total = total + xp.sum(xp.abs(vh) ** 2 * w[..., :k, :1]) + xp.sum(xp.imag(rec * a))
        return total + xp.sum(xp.linalg.svd(a, compute_uv=False) ** 2)

    return f


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_grads_match_finite_differences_and_jax(shape: tuple[int, ...], rng: np.random.Generator) -> None:
    """Reverse and forward mode (one program), against central differences along a complex, a real and an
    imaginary direction (one vmapped program) and jax.grad."""
    # (the forward mode along the first direction only: each JVP adds its own copy of the rules to the program)
    a = cnormal(rng, shape, C128)
    w = rng.standard_normal((*shape[:-2], shape[-2], 5))
    f = gauge_invariant(tnp)
    directions = [cnormal(rng, shape, C128), rng.standard_normal(shape) + 0j, 1j * rng.standard_normal(shape)]

    def derivatives(a: Any, w: Any, ds: Any) -> Any:
        return ts.grad(f)(a, w), ts.jvp(lambda x: f(x, w), (a,), (ds,))[1]

    grad, jvp = ts.program(derivatives)(a, w, directions[0])
    grad = np.asarray(grad)
    h = 1e-6
    points = np.stack([a + sign * h * d for d in directions for sign in (1, -1)])
    values = np.asarray(ts.program(ts.vmap(f, in_axes=(0, None)))(points, w)).reshape(-1, 2)
    fds = (values[:, 0] - values[:, 1]) / (2 * h)
    for d, fd in zip(directions, fds):  # jax's convention: the derivative along d is Re(sum(grad * d))
        np.testing.assert_allclose(np.sum(grad * d).real, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(float(np.asarray(jvp).real), fds[0], rtol=1e-6, atol=1e-6)
    if HAS_JAX:
        import jax
        import jax.numpy as jnp

        with jax.enable_x64(True):
            want = jax.grad(gauge_invariant(jnp))(jnp.asarray(a), jnp.asarray(w))
        np.testing.assert_allclose(grad, np.asarray(want), rtol=1e-9, atol=1e-9)


def test_grad_c64_matches_c128(rng: np.random.Generator) -> None:
    """c64 reverse mode (a wide matrix: the other projector term) against the c128 one."""
    a = cnormal(rng, (3, 5), C128)
    w = rng.standard_normal((3, 5))
    grad = ts.program(ts.grad(gauge_invariant(tnp)))
    narrow, wide = np.asarray(grad(a.astype(C64), w.astype(np.float32))), np.asarray(grad(a, w))
    assert narrow.dtype == C64
    np.testing.assert_allclose(narrow, wide, rtol=1e-3, atol=1e-3)


def test_vmap_matches_loop(rng: np.random.Generator) -> None:
    xs = cnormal(rng, (3, 4, 3), C64)
    got = ts.vmap(lambda x: (LA.svd(x, full_matrices=False), LA.norm(x), LA.pinv(x)))(xs)
    (u, s, vh), norms, pinv = got
    for i, x in enumerate(xs):
        (ui, si, vhi), ni, pi = LA.svd(x, full_matrices=False), LA.norm(x), LA.pinv(x)
        for g, want in ((u, ui), (s, si), (vh, vhi), (norms, ni), (pinv, pi)):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(want), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------------------- LU


def lu_program() -> ts.Program[Any, Any]:
    def apply(x: Any) -> Any:
        return tuple(Traced(o) for o in LU.lu(x.atom))

    return ts.Program(apply, name="lu", check_annotations=False)


def lu_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lu, pivots, permutation)`` from SciPy's ``lu_factor`` (LAPACK's ``zgetrf``, complex128: pivots on the
    largest ``|Re| + |Im|``), batched over leading axes."""
    from scipy.linalg import lu_factor

    *batch, m, n = a.shape
    flat = a.astype(C128).reshape(-1, m, n)
    factors = [lu_factor(x) for x in flat]
    perms = []
    for _, piv in factors:
        perm = np.arange(m)
        for i, p in enumerate(piv):
            perm[[i, p]] = perm[[p, i]]
        perms.append(perm)
    packed = np.stack([f[0] for f in factors]).reshape(a.shape)
    return packed, np.stack([f[1] for f in factors]).reshape(*batch, -1), np.stack(perms).reshape(*batch, m)


@paths_and_dtypes(("lapack", C64), ("lapack", C128), ("portable", C128))
def test_lu_matches_reference(path: str, dtype: Any, rng: np.random.Generator) -> None:
    """Both lowerings against LAPACK's complex LU: factors, pivots and permutation (the portable one pivots by
    LAPACK's rule too)."""
    run = lu_program()
    for shape in ((4, 4), (5, 3), (3, 5), (2, 3, 3)):
        a = cnormal(rng, shape, dtype)
        packed, pivots, perm = (np.asarray(t) for t in run(a))
        want = lu_reference(a)
        assert packed.dtype == dtype
        np.testing.assert_allclose(packed, want[0], **tol(dtype))
        np.testing.assert_array_equal(pivots, want[1])
        np.testing.assert_array_equal(perm, want[2])
        m, n = shape[-2:]
        k = min(m, n)
        low = np.tril(packed[..., :k], -1) + np.eye(m, k)
        up = np.triu(packed[..., :k, :])
        np.testing.assert_allclose(low @ up, np.take_along_axis(a, perm[..., None], axis=-2), **tol(dtype))


def test_lu_grads_and_vmap(rng: np.random.Generator) -> None:
    """LU is holomorphic: its JVP needs no conjugate, its VJP is the plain transpose; against finite differences
    along real and imaginary directions and jax.lax.linalg.lu."""
    a, c = cnormal(rng, (4, 4), C128), cnormal(rng, (4, 4), C128)

    def f(x: Any) -> Any:
        return tnp.sum(tnp.real(Traced(LU.lu(x.atom)[0]) * c))

    grad = np.asarray(ts.grad(f)(a))
    value = ts.program(f)
    for d in (rng.standard_normal((4, 4)) + 0j, 1j * rng.standard_normal((4, 4))):
        fd = (float(value(a + 1e-6 * d)) - float(value(a - 1e-6 * d))) / 2e-6
        np.testing.assert_allclose(np.sum(grad * d).real, fd, rtol=1e-6, atol=1e-6)
    if HAS_JAX:
        import jax
        import jax.numpy as jnp

        with jax.enable_x64(True):
            want = jax.grad(lambda x: jnp.sum(jnp.real(jax.lax.linalg.lu(x)[0] * c)))(jnp.asarray(a))
        np.testing.assert_allclose(grad, np.asarray(want), rtol=1e-9, atol=1e-9)
    xs = cnormal(rng, (3, 3, 3), C64)
    batched = ts.vmap(lambda x: Traced(LU.lu(x.atom)[0]))(xs)
    for i, x in enumerate(xs):
        np.testing.assert_allclose(np.asarray(batched)[i], lu_reference(x)[0], **tol(C64))


# ------------------------------------------------------------------------------------ lowering and errors


def test_module_text() -> None:
    """CPU: the complex LAPACK kernels; GPU: the portable lowering, as text (no GPU needed)."""
    z = np.eye(3, dtype=C64)
    staged = ts.program(lambda a: (LA.svd(a), lu_program()(a))).stage(z)
    if lapack.enabled() and lapack.available():
        cpu = staged.stablehlo()
        assert "lapack_cgesdd_ffi" in cpu and "lapack_cgetrf_ffi" in cpu
    gpu = staged.stablehlo("gpu")
    assert "lapack" not in gpu and '"Eigh"' in gpu and "stablehlo.while" in gpu


def _svd_of(x: Any) -> Any:
    return LA.svd(x)


ERRORS = [
    (_svd_of, [ts.Spec((3,), ts.c64)], ShapeError, ["svd", "(batch of) matrices", "c64[3]"]),
    (_svd_of, [ts.Spec((3, 3), ts.i32)], DTypeError, ["svd", "floating-point operand (or a complex one)", "i32[3, 3]"]),
    (lambda x, b: LA.lstsq(x, b), [ts.Spec((3, 2), ts.c64), ts.Spec((3,), ts.c128)], DTypeError,
     ["lstsq", "c64[3, 2]", "c128[3]"]),
    (lambda x: LA.norm(x, "nuc"), [ts.Spec((3,), ts.c64)], ValueError, ["invalid norm order 'nuc'"]),
]


def test_errors_name_op_shape_and_line() -> None:
    check_staging_errors(ERRORS, "test_linalg_complex_svd.py")
