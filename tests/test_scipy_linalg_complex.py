"""ts.scipy.linalg and ts.lax.linalg on complex matrices (c64, c128): values against scipy.linalg in complex128
(staged, batched, and eager), derivatives against central finite differences along real and imaginary directions
and against jax (when installed), vmap against a Python loop, errors. Hermitian inputs are B Bᴴ + n I, general
ones have a large diagonal, so tolerances stay tight. Each group stages one program (compiles dominate)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors

sl = pytest.importorskip("scipy.linalg")
SLA: Any = ts.scipy.linalg
LLA: Any = ts.lax.linalg
TOL = {np.complex64: 2e-4, np.complex128: 1e-10}
HAS_JAX = importlib.util.find_spec("jax") is not None
EPS = 1e-6


def cnormal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian(rng: np.random.Generator, *shape: int) -> np.ndarray:
    b = cnormal(rng, *shape)
    return b @ mH(b) + shape[-1] * np.eye(shape[-1])


def general(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return cnormal(rng, *shape) + 3 * np.eye(shape[-1])


def mH(x: Any) -> Any:  # noqa: N802
    return np.conj(np.swapaxes(x, -1, -2))


def canonical_phases(v: np.ndarray) -> np.ndarray:
    """tensorstage's eigenvector phase: each column's largest-magnitude component real and positive."""
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * np.conj(top) / np.abs(top)


def loop(f: Callable[..., Any], *batched: np.ndarray) -> Any:
    """SciPy's ``f`` on every matrix of a batch (leading axis), stacked (tuples stacked item by item)."""
    outs = [f(*xs) for xs in zip(*batched)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*outs))
    return np.stack(outs)


def tridiagonal(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    """The dense matrices of lax.linalg.tridiagonal_solve's diagonals (``dl[0]`` and ``du[-1]`` unused)."""
    return (d[..., :, None] * np.eye(d.shape[-1]) + dl[..., :, None] * np.eye(d.shape[-1], k=-1)
            + du[..., :, None] * np.eye(d.shape[-1], k=1))


def _flat(x: Any) -> list[Any]:
    return [y for item in x for y in _flat(item)] if isinstance(x, (tuple, list)) else [x]


def _close(got: Any, want: Any, dtype: Any, what: str) -> None:
    for k, (g, w) in enumerate(zip(_flat(got), _flat(want), strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        if w.dtype.kind == "i":  # pivots and permutations
            np.testing.assert_array_equal(g, w.astype(np.int32), err_msg=f"{what} {k}")
            continue
        expected = np.dtype(dtype) if np.iscomplexobj(w) else np.dtype(dtype).type(0).real.dtype
        assert g.dtype == expected, (what, k, g.dtype, expected)
        tol = TOL[np.dtype(dtype).type]
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, err_msg=f"{what} {k}")


# ------------------------------------------------------------------------------------------------- values


Cases = dict[str, Callable[[], Any]]  # each staged only when its group is asked for


def _scipy_cases(h: Any, g: Any, b: Any, bv: Any, tall: Any, h_upper: Any) -> Cases:
    def cho_solve() -> Any:
        c_up, c_low = SLA.cho_factor(h), SLA.cho_factor(h_upper, lower=False)
        return SLA.cho_solve(c_up, b), SLA.cho_solve(c_low, bv), SLA.cho_solve(SLA.cho_factor(h, True), b)

    def expm_frechet() -> Any:
        return SLA.expm_frechet(g / 3, b[..., :1] @ tnp.conj(tnp.swapaxes(b[..., 1:2], -1, -2)))[1]

    return {
        "cholesky": lambda: SLA.cholesky(h_upper), "cholesky_lower": lambda: SLA.cholesky(h, lower=True),
        "cho_factor": lambda: SLA.cho_factor(h, lower=True)[0], "cho_solve": cho_solve,
        "solve": lambda: [SLA.solve(g, b, assume_a=a) for a in ("gen", "sym", "her")],
        "solve_pos": lambda: [SLA.solve(h, b, assume_a="pos", lower=True),
                              SLA.solve(h_upper, b[0, :, 0], assume_a="pos")],
        "triangular": lambda: [SLA.solve_triangular(g, b, trans=t, lower=lo) for lo in (True, False)
                               for t in (0, "T", 2)],
        "eigh": lambda: SLA.eigh(h), "eigh_upper": lambda: SLA.eigh(h_upper, lower=False, eigvals_only=True),
        "qr": lambda: SLA.qr(tall), "qr_economic": lambda: SLA.qr(tall, mode="economic"),
        "qr_r": lambda: SLA.qr(tall, mode="r"), "expm": lambda: SLA.expm(g / 3),
        "expm_upper": lambda: SLA.expm(tnp.triu(g), upper_triangular=True), "expm_frechet": expm_frechet,
        "inv": lambda: SLA.inv(g), "det": lambda: SLA.det(g), "svd": lambda: SLA.svd(tall, compute_uv=False),
        "svd_full": lambda: _svd_parts(SLA.svd(tall), tall.shape[-1]), "lu": lambda: SLA.lu(tall),
        "lu_permute_l": lambda: SLA.lu(g, permute_l=True), "lu_factor": lambda: SLA.lu_factor(g),
        "lu_solve": lambda: [SLA.lu_solve(SLA.lu_factor(g), rhs, trans=t) for t in (0, 1, 2) for rhs in (b, bv)],
        "polar": lambda: SLA.polar(g), "polar_left": lambda: SLA.polar(tnp.swapaxes(tall, -1, -2), side="left"),
    }


def _svd_parts(usv: Any, k: int) -> Any:
    """The phase-free parts of an SVD: the singular values and ``u[:, :k] diag(s) vh``, which is the matrix."""
    u, s, vh = usv
    return s, (u[..., :k] * s[..., None, :].astype(u.dtype)) @ vh


def _scipy_references(h: Any, g: Any, b: Any, bv: Any, tall: Any, h_upper: Any) -> dict[str, Any]:
    def eigh(a: Any) -> Any:
        w, v = sl.eigh(a)
        return w, canonical_phases(v)

    e = b[..., :1] @ mH(b[..., 1:2])
    chol = loop(sl.cholesky, h)
    tri = [np.tril(g), np.triu(g)]
    return {
        "cholesky": chol, "cholesky_lower": mH(chol), "cho_factor": mH(chol),
        "cho_solve": [np.linalg.solve(h, b), loop(np.linalg.solve, h, bv), np.linalg.solve(h, b)],
        "solve": [np.linalg.solve(g, b)] * 3,
        "solve_pos": [np.linalg.solve(h, b), np.linalg.solve(h, b[0, :, 0])],
        "triangular": [np.linalg.solve(op, b) for t in tri for op in (t, np.swapaxes(t, -1, -2), mH(t))],
        "eigh": loop(eigh, h), "eigh_upper": loop(lambda a: sl.eigh(a, eigvals_only=True), h),
        "qr": np.linalg.qr(tall, mode="complete"), "qr_economic": np.linalg.qr(tall), "qr_r": [np.linalg.qr(tall, mode="complete")[1]],
        "expm": loop(sl.expm, g / 3), "expm_upper": loop(sl.expm, np.triu(g)),
        "expm_frechet": loop(lambda a, d: sl.expm_frechet(a, d)[1], g / 3, e), "inv": np.linalg.inv(g),
        "det": np.linalg.det(g), "svd": loop(sl.svdvals, tall), "svd_full": (loop(sl.svdvals, tall), tall),
        "lu": loop(sl.lu, tall), "lu_permute_l": loop(lambda a: sl.lu(a, permute_l=True), g),
        "lu_factor": loop(sl.lu_factor, g),
        "lu_solve": [op for t in (0, 1, 2) for op in (np.linalg.solve(_op(g, t), b), loop(np.linalg.solve, _op(g, t), b[..., 0]))],
        "polar": loop(sl.polar, g), "polar_left": loop(lambda a: sl.polar(a, side="left"), np.swapaxes(tall, -1, -2)),
    }


def _op(a: np.ndarray, trans: int) -> np.ndarray:
    """``a``, ``aᵀ`` or ``aᴴ`` (SciPy's ``trans`` 0, 1, 2)."""
    return [a, np.swapaxes(a, -1, -2), mH(a)][trans]


def _lax_cases(h: Any, g: Any, b: Any, tall: Any, h_upper: Any, diagonals: Any) -> Cases:
    def triangular(left: bool, lower: bool, transpose: bool, conjugate: bool) -> Any:
        rhs = b if left else tnp.swapaxes(b, -1, -2)
        return LLA.triangular_solve(g, rhs, left_side=left, lower=lower, transpose_a=transpose, conjugate_a=conjugate)

    flags = [(t, c) for t in (False, True) for c in (False, True)]
    return {
        "cholesky": lambda: LLA.cholesky(h + 0.1j * g),
        "cholesky_lower": lambda: LLA.cholesky(tnp.conj(tnp.swapaxes(h_upper, -1, -2)), symmetrize_input=False),
        "eigh": lambda: LLA.eigh(h + 0.1j * g),
        "eigh_upper": lambda: LLA.eigh(h_upper, lower=False, symmetrize_input=False),
        "eigh_subset": lambda: LLA.eigh(h, subset_by_index=(1, 3))[1],
        "triangular": lambda: [triangular(s, lo, t, c) for s in (True, False) for lo in (True, False) for t, c in flags],
        "triangular_vector": lambda: LLA.triangular_solve(g, b[..., 0], left_side=True, lower=True, conjugate_a=True),
        "qr": lambda: LLA.qr(tall), "qr_reduced": lambda: LLA.qr(tall, full_matrices=False),
        "tridiagonal": lambda: LLA.tridiagonal_solve(*diagonals, b), "lu": lambda: LLA.lu(g),
        "svd": lambda: _svd_parts(LLA.svd(tall, full_matrices=False), 3),
        "svd_subset": lambda: LLA.svd(tall, compute_uv=False, subset_by_index=(1, 3)),
    }


def _lax_references(h: Any, g: Any, b: Any, tall: Any, h_upper: Any, diagonals: Any) -> dict[str, Any]:
    def eigh(a: Any) -> Any:
        w, v = np.linalg.eigh(a)
        return canonical_phases(v), w

    def op(a: Any, transpose: bool, conjugate: bool) -> Any:
        a = np.swapaxes(a, -1, -2) if transpose else a
        return np.conj(a) if conjugate else a

    def triangular(left: bool, lower: bool, transpose: bool, conjugate: bool) -> Any:
        a = op(np.tril(g) if lower else np.triu(g), transpose, conjugate)
        return np.linalg.solve(a, b) if left else np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), b), -1, -2)

    flags = [(t, c) for t in (False, True) for c in (False, True)]
    sym = h + 0.1j * g
    sym = (sym + mH(sym)) / 2  # JAX's symmetrize_input
    full_q, r = np.linalg.qr(tall, mode="complete")
    return {
        "cholesky": np.linalg.cholesky(sym), "cholesky_lower": np.linalg.cholesky(h),
        "eigh": eigh(sym), "eigh_upper": eigh(h), "eigh_subset": np.linalg.eigvalsh(h)[..., 1:3],
        "triangular": [triangular(s, lo, t, c) for s in (True, False) for lo in (True, False) for t, c in flags],
        "triangular_vector": np.linalg.solve(np.conj(np.tril(g)), b[..., 0:1])[..., 0],
        "qr": (full_q, r), "qr_reduced": np.linalg.qr(tall),
        "tridiagonal": np.linalg.solve(tridiagonal(*diagonals), b), "lu": _lu_reference(g),
        "svd": (loop(sl.svdvals, tall), tall), "svd_subset": loop(sl.svdvals, tall)[..., 1:3],
    }


def _lu_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lax.linalg.lu's ``(lu, pivots, permutation)`` from SciPy's lu_factor (LAPACK's getrf)."""
    packed, pivots = loop(sl.lu_factor, a)
    perms = []
    for piv in pivots:
        perm = np.arange(a.shape[-1])
        for i, j in enumerate(piv):
            perm[[i, j]] = perm[[j, i]]
        perms.append(perm)
    return packed, pivots.astype(np.int32), np.stack(perms).astype(np.int32)


# c64 runs one function of each family, among them those whose result dtypes or precision differ from c128's (real
# eigenvalues, singular values and permutation, expm's Padé degree); c128 runs them all (compiles dominate).
C64_SCIPY = {"cholesky", "cho_solve", "solve_pos", "eigh", "qr", "expm", "svd_full", "lu", "lu_solve"}
C64_LAX = {"cholesky", "eigh", "triangular_vector", "tridiagonal", "svd"}


def _chosen(cases: Cases, names: set[str] | None) -> dict[str, Any]:
    return {name: case() for name, case in cases.items() if names is None or name in names}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    """Batched (2, 4, 4) operands; the functions of both modules in one program per dtype."""
    h, g, b, tall = hermitian(rng, 2, 4, 4), general(rng, 2, 4, 4), cnormal(rng, 2, 4, 3), cnormal(rng, 2, 5, 3)
    g[1] = g[1][::-1] + 4 * np.eye(4)  # a row swap: LU pivots
    h_upper = np.triu(h) + np.tril(cnormal(rng, 4, 4), -1) + 1j * np.diag(rng.standard_normal(4))  # unread garbage
    diagonals = [cnormal(rng, 2, 4) for _ in range(3)]
    diagonals[0][:, 1] *= 10  # a subdiagonal entry larger than the diagonal one: tridiagonal_solve interchanges
    bv = b[..., 0]
    cast = [x.astype(dtype) for x in (h, g, b, bv, tall, h_upper, *diagonals)]

    @ts.program
    def run(h: Any, g: Any, b: Any, bv: Any, tall: Any, h_upper: Any, *diagonals: Any) -> Any:
        few = dtype == np.complex64
        return (_chosen(_scipy_cases(h, g, b, bv, tall, h_upper), C64_SCIPY if few else None),
                _chosen(_lax_cases(h, g, b, tall, h_upper, diagonals), C64_LAX if few else None))

    got_scipy, got_lax = run(*cast)
    h, g, b, bv, tall, h_upper, *diagonals = (x.astype(np.complex128) for x in cast)  # references see rounded inputs
    want_scipy, want_lax = _scipy_references(h, g, b, bv, tall, h_upper), _lax_references(h, g, b, tall, h_upper, diagonals)
    for name, got in got_scipy.items():
        _close(got, want_scipy[name], dtype, name)
    for name, got in got_lax.items():
        _close(got, want_lax[name], dtype, "lax " + name)
    # qr's q and r against SciPy's own (LAPACK's phases: r's diagonal real), and QᴴQ = I.
    q, r = (np.asarray(x) for x in got_scipy["qr"])
    _close(r, loop(sl.qr, tall)[1], dtype, "qr r vs scipy")
    _close(mH(q) @ q, np.broadcast_to(np.eye(5) + 0j, q.shape), dtype, "QᴴQ")


def test_eager_calls_keep_dtypes_and_signal_failure_with_nans(rng: np.random.Generator) -> None:
    h = hermitian(rng, 3, 3).astype(np.complex64)
    w = SLA.eigh(h, eigvals_only=True)
    assert np.asarray(w).dtype == np.float32
    np.testing.assert_allclose(np.asarray(w), sl.eigh(h.astype(np.complex128), eigvals_only=True), rtol=1e-4)
    v, w2 = LLA.eigh(h)
    assert np.asarray(v).dtype == np.complex64 and np.asarray(w2).dtype == np.float32
    c, lower = SLA.cho_factor(h)
    assert lower is False and np.asarray(c).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(c), sl.cholesky(h.astype(np.complex128)), rtol=1e-4, atol=1e-4)
    e = SLA.expm(np.array([[0, np.pi], [-np.pi, 0]], np.complex128) * 1j)  # exp of a Hermitian matrix: cosh, sinh
    np.testing.assert_allclose(np.asarray(e), sl.expm(np.array([[0, np.pi], [-np.pi, 0]]) * 1j), rtol=1e-12)
    # Not positive definite: NaNs (no exception, as for real matrices).
    assert np.isnan(np.asarray(SLA.cholesky(np.diag([1.0, -1.0]).astype(np.complex128)))).all()
    assert np.isnan(np.asarray(LLA.cholesky(np.diag([1.0, -1.0]).astype(np.complex64)))).all()


# ------------------------------------------------------------------------------------------- derivatives


def _losses(xp: Any, sla: Any, lla: Any, w: np.ndarray) -> dict[str, Callable[[Any], Any]]:
    """Real losses of a complex 3x3 ``x``, written once for tensorstage and jax. Hermitian operands are built from
    ``x`` (where tensorstage reads one triangle and JAX symmetrizes, the two agree on Hermitian input);
    eigenvector losses are phase invariant (JAX's eigenvectors have arbitrary phases)."""
    n = w.shape[-1]

    def herm(x: Any) -> Any:
        return x @ xp.conj(xp.swapaxes(x, -1, -2)) + n * xp.eye(n, dtype=w.dtype)

    def projector(v: Any) -> Any:
        return v[:, :2] @ xp.conj(xp.swapaxes(v[:, :2], -1, -2))

    def tridiagonal(x: Any) -> Any:
        return lla.tridiagonal_solve(x[0] * np.array([0, 1, 1], w.dtype), x[1] + 3, x[2] * np.array([1, 1, 0], w.dtype), w)

    return {
        "cholesky": lambda x: xp.sum(xp.abs(sla.cholesky(herm(x)) * w) ** 2 + xp.real(sla.cholesky(herm(x), lower=True))),
        "cho_solve": lambda x: xp.sum(xp.real(sla.cho_solve(sla.cho_factor(herm(x)), w) * w)),
        "solve_pos": lambda x: xp.sum(xp.imag(sla.solve(herm(x), w, assume_a="pos") * w)),
        "eigh": lambda x: xp.sum(xp.real(projector(sla.eigh(herm(x))[1]) * w)) + xp.sum(sla.eigh(herm(x))[0] ** 2),
        "expm": lambda x: xp.sum(xp.real(sla.expm(x / 2) * w)),
        "qr": lambda x: xp.sum(xp.real(sla.qr(x)[0] * w) + xp.imag(sla.qr(x)[1] * w)),
        "lax_cholesky": lambda x: xp.sum(xp.imag(lla.cholesky(herm(x)) * w)),
        "lax_eigh": lambda x: xp.sum(xp.real(projector(lla.eigh(herm(x))[0]) * w)) + xp.sum(lla.eigh(herm(x))[1] ** 3),
        "lax_triangular": lambda x: xp.sum(xp.abs(lla.triangular_solve(x, w, left_side=False, lower=True,
                                                                      conjugate_a=True)) ** 2),
        "lax_tridiagonal": lambda x: xp.sum(xp.real(tridiagonal(x) * w)),
        "lu_solve": lambda x: xp.sum(xp.real(sla.lu_solve(sla.lu_factor(x), w, trans=2) * w)),
    }


# Compared against finite differences only: JAX's solve(assume_a='pos') transposes as if aᵀ = a
# (custom_linear_solve with symmetric=True), which a complex Hermitian a is not, so its gradient misses finite
# differences; expm's and tridiagonal_solve's would cost JAX more to compile than the rest together.
NOT_AGAINST_JAX = ("solve_pos", "expm", "lax_tridiagonal")


def _check_directional(losses: dict[str, Callable[[Any], Any]], x: np.ndarray, directions: list[np.ndarray]) -> Any:
    """For every loss: ``grad`` (JAX's convention: ``Re(Σ grad · t)`` is the derivative along ``t``) and central
    differences agree along every direction. Returns the gradients."""
    fs = list(losses.values())
    grads, values = ts.program(lambda x, ds: ([ts.grad(f)(x) for f in fs],
                                              [[f(x + EPS * d) - f(x - EPS * d) for f in fs] for d in ds]))(x, directions)
    for t, differences in zip(directions, values):
        for k, name in enumerate(losses):
            numeric = float(differences[k]) / (2 * EPS)
            assert float(np.real(np.sum(np.asarray(grads[k]) * t))) == pytest.approx(numeric, rel=1e-6, abs=1e-7), name
    return grads


def test_gradients_match_jax_and_finite_differences(rng: np.random.Generator) -> None:
    x, w = general(rng, 3, 3), cnormal(rng, 3, 3)
    directions = [np.real(cnormal(rng, 3, 3)) + 0j, 1j * np.real(cnormal(rng, 3, 3))]
    grads = dict(zip(_losses(tnp, SLA, LLA, w), _check_directional(_losses(tnp, SLA, LLA, w), x, directions)))
    if not HAS_JAX:
        return
    import jax
    import jax.lax.linalg as jll
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    with jax.enable_x64(True):
        losses = {k: f for k, f in _losses(jnp, jsl, jll, w).items() if k not in NOT_AGAINST_JAX}
        want = jax.jit(lambda x: [jax.grad(f)(x) for f in losses.values()])(jnp.asarray(x))
    for name, expected in zip(losses, want):
        np.testing.assert_allclose(np.asarray(grads[name]), np.asarray(expected), rtol=1e-8, atol=1e-9, err_msg=name)


# --------------------------------------------------------------------------------------------------- vmap


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    g, h = general(rng, 3, 3, 3).astype(np.complex64), hermitian(rng, 3, 3, 3).astype(np.complex64)
    b = cnormal(rng, 3, 2).astype(np.complex64)

    def f(g: Any, h: Any, b: Any) -> Any:
        return (SLA.cholesky(h), SLA.cho_solve(SLA.cho_factor(h), b), SLA.solve(h, b, assume_a="pos"),
                *SLA.eigh(h, lower=False), *SLA.qr(g), SLA.expm(g / 4),
                LLA.triangular_solve(g, b, left_side=True, transpose_a=True, conjugate_a=True),
                *LLA.eigh(h), LLA.tridiagonal_solve(g[0], g[1], g[2], b), SLA.lu_solve(SLA.lu_factor(g), b, trans=2),
                SLA.lu(g)[0], LLA.svd(g, compute_uv=False),
                ts.grad(lambda y: tnp.sum(tnp.real(SLA.cholesky(y))))(h))

    batched = ts.vmap(f, in_axes=(0, 0, None))(g, h, b)
    single = ts.program(f)
    for i in range(3):
        for k, (got, want) in enumerate(zip(batched, single(g[i], h[i], b))):
            np.testing.assert_allclose(np.asarray(got)[i], np.asarray(want), rtol=2e-5, atol=2e-5, err_msg=str(k))


# ------------------------------------------------------------------------------------------------- errors

C3, C34, Z3 = ts.Spec((3, 3), ts.c64), ts.Spec((3, 4), ts.c64), ts.Spec((3, 3), ts.c128)
V3, ZV3 = ts.Spec((3,), ts.c64), ts.Spec((3,), ts.c128)
ERRORS = [
    (lambda a: SLA.cholesky(a), [C34], ts.ShapeError, ["cholesky", "square", "c64[3, 4]"]),
    (lambda a, b: SLA.cho_solve(SLA.cho_factor(a), b), [C3, Z3], ts.DTypeError, ["cho_solve", "c64[3, 3]", "c128[3, 3]"]),
    (lambda a, b: SLA.solve(a, b, assume_a="pos"), [C3, ZV3], ts.DTypeError, ["solve", "c64[3, 3]", "c128[3]"]),
    (lambda a: SLA.eigh(a), [C34], ts.ShapeError, ["eigh", "c64[3, 4]"]),
    (lambda a: SLA.expm(a), [C34], ts.ShapeError, ["expm", "square", "c64[3, 4]"]),
    (lambda a, b: SLA.solve_triangular(a, b, trans="C"), [C3, ZV3], ts.DTypeError, ["solve_triangular", "c64", "c128"]),
    (lambda d, e: SLA.eigh_tridiagonal(d, e), [V3, ts.Spec((2,), ts.c64)], ts.DTypeError,
     ["eigh_tridiagonal", "real", "c64[3]"]),
    (lambda a: LLA.cholesky(a), [C34], ts.ShapeError, ["cholesky", "square", "c64[3, 4]"]),
    (lambda a: LLA.eigh(a, symmetrize_input=False), [C34], ts.ShapeError, ["eigh", "c64[3, 4]"]),
    (lambda a, b: LLA.triangular_solve(a, b, conjugate_a=True), [C3, Z3], ts.DTypeError,
     ["triangular_solve", "c64[3, 3]", "c128[3, 3]"]),
    (lambda d, b: LLA.tridiagonal_solve(d, d, d, b), [V3, ts.Spec((3, 2), ts.c128)], ts.DTypeError,
     ["tridiagonal_solve", "c64[3]", "c128[3, 2]"]),
    (lambda a: LLA.qr(a), [ts.Spec((3,), ts.c64)], ts.ShapeError, ["qr", "matrices", "c64[3]"]),
]


def test_bad_complex_inputs_are_clear_errors_at_the_callers_line() -> None:
    check_staging_errors(ERRORS, "test_scipy_linalg_complex.py")
