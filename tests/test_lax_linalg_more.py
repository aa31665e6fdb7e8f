"""ts.lax.linalg's Householder, update and polar functions (hessenberg, tridiagonal, householder_product, ormqr,
cholesky_update, symmetric_product, qdwh) against LAPACK's packed forms (scipy.linalg.lapack, float64/complex128),
NumPy and scipy.linalg.polar; f32/c64 at their tolerance; batched, staged and eager; vmap against a loop;
gradients against finite differences; the errors; and jax.lax.linalg as an oracle where jax is installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

lapack = pytest.importorskip("scipy.linalg.lapack")
sl = pytest.importorskip("scipy.linalg")
linalg: Any = lax.linalg


def _jax() -> Any:
    """jax, or None where it is not installed (its float64 mode is turned on in scopes only)."""
    try:
        import jax
    except ImportError:
        return None
    return jax


def _tol(dtype: Any) -> float:
    return 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5


def _close(got: Any, want: Any, dtype: Any, label: str = "") -> None:
    got = np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=_tol(dtype) * 10, atol=_tol(dtype) * 10, err_msg=label)


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


COMPLEX_NAMES = {"sytrd": "hetrd", "orgqr": "ungqr", "ormqr": "unmqr"}


def _lapack(name: str, dtype: Any) -> Any:
    """SciPy's wrapper of LAPACK's ``name`` for ``dtype`` (its complex name for complex dtypes)."""
    prefix = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}[np.dtype(dtype).name]
    return getattr(lapack, prefix + (COMPLEX_NAMES.get(name, name) if np.dtype(dtype).kind == "c" else name))


def _householder_family(square: Any, tall: Any, taus: Any, c: Any) -> Any:
    return {
        "hessenberg": linalg.hessenberg(square),
        "lower": linalg.tridiagonal(square), "upper": linalg.tridiagonal(square, lower=False),
        "product": linalg.householder_product(tall, taus),
        "ormqr": [linalg.ormqr(tall, taus, c if left else c.mT, left=left, transpose=tr)
                  for left in (True, False) for tr in (False, True)],
    }


def _check_family(got: Any, square: np.ndarray, qr: np.ndarray, taus: np.ndarray, c: np.ndarray) -> None:
    dtype = square.dtype
    trans = "C" if dtype.kind == "c" else "T"
    for b in range(2):
        h, t, _ = _lapack("gehrd", dtype)(square[b])
        for out, want in zip(got["hessenberg"], (h, t[:4])):
            _close(out[b], want, dtype, "hessenberg")
        for key, lower in (("lower", 1), ("upper", 0)):
            for out, want in zip(got[key], _lapack("sytrd", dtype)(square[b], lower=lower)[:4]):
                _close(out[b], want, dtype, key)
        _close(got["product"][b], _lapack("orgqr", dtype)(qr[b], taus[b])[0], dtype, "householder_product")
        sides = [(s, t_) for s in "LR" for t_ in ("N", trans)]
        for out, (side, tr) in zip(got["ormqr"], sides):
            cc = c[b] if side == "L" else c[b].T
            want = _lapack("ormqr", dtype)(side, tr, qr[b], taus[b], cc, lwork=64)[0]
            _close(out[b], want, dtype, f"ormqr {side}{tr}")
    assert np.asarray(got["lower"][1]).dtype == dtype.type(0).real.dtype  # d and e are real
    assert np.asarray(got["hessenberg"][0]).dtype == dtype


def test_packed_forms_match_lapack() -> None:
    rng = np.random.default_rng(0)
    inputs = {}
    for dtype in (np.float64, np.complex64):  # c128: the reconstruction and jax tests; f32: the update tests
        square, tall, c = (_random(rng, shape, dtype) for shape in ((2, 5, 5), (2, 6, 4), (2, 6, 3)))
        packed = [_lapack("geqrf", dtype)(m)[:2] for m in tall]
        inputs[np.dtype(dtype).name] = (square, np.stack([p[0] for p in packed]), np.stack([p[1] for p in packed]), c)
    got = ts.program(lambda xs: {k: _householder_family(*v) for k, v in xs.items()})(inputs)  # one compile
    for key, args in inputs.items():
        _check_family(got[key], *args)


def _reflector_q(packed: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """``Q`` of a ``gehrd`` factorization: its reflectors shifted one row down and one column right."""
    shifted = np.zeros_like(packed)
    shifted[..., 1:, 1:] = packed[..., 1:, :-1]
    return np.asarray(linalg.householder_product(shifted, np.concatenate([np.zeros_like(taus[..., :1]), taus], -1)))


def test_reconstructions_and_eager_batches() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 6, 6)) + 1j * rng.standard_normal((3, 6, 6))
    packed, taus = (np.asarray(t) for t in linalg.hessenberg(a))  # eager, batched
    q = _reflector_q(packed, taus)
    h = np.triu(packed, -1)
    _close(q @ q.conj().mT, np.broadcast_to(np.eye(6), q.shape), np.complex128, "unitary")
    _close(q @ h @ q.conj().mT, a, np.complex128, "a = q h qᴴ")
    herm = a + a.conj().mT
    packed, d, e, taus = (np.asarray(t) for t in linalg.tridiagonal(herm))
    q = _reflector_q(packed, taus)
    t = np.zeros_like(herm)
    idx = np.arange(6)
    t[:, idx, idx], t[:, idx[1:], idx[:-1]], t[:, idx[:-1], idx[1:]] = d, e, e
    _close(q @ t @ q.conj().mT, herm, np.complex128, "a = q t qᴴ")
    assert d.shape == (3, 6) and e.shape == (3, 5) and taus.shape == (3, 5)
    one = [np.asarray(t) for t in linalg.tridiagonal(np.full((1, 1), 2.0))]
    assert one[1].tolist() == [2.0] and one[2].shape == (0,) and one[3].shape == (0,)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_update_and_symmetric_product(dtype: Any) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5, 5))
    r = np.linalg.cholesky(x @ x.mT + 5 * np.eye(5)).mT.astype(dtype)
    w = rng.standard_normal((3, 5)).astype(dtype)
    a, c = rng.standard_normal((3, 5, 4)).astype(dtype), (x + x.mT).astype(dtype)

    @ts.program
    def run(r: Any, w: Any, a: Any, c: Any) -> Any:
        return (linalg.cholesky_update(r, w), linalg.symmetric_product(a, c, alpha=2.0, beta=-0.5),
                linalg.symmetric_product(a, tnp.tril(c), symmetrize_output=True, beta=1.0),
                ts.vmap(linalg.cholesky_update)(r, w))

    updated, product, mirrored, vmapped = (np.asarray(t) for t in run(r, w, a, c))
    r64, w64 = r.astype(np.float64), w.astype(np.float64)
    want = np.linalg.cholesky(r64.mT @ r64 + w64[..., :, None] * w64[..., None, :]).mT
    _close(updated, want, dtype, "cholesky_update")
    _close(vmapped, updated, dtype, "vmap")
    _close(product, 2 * a @ a.mT - 0.5 * c, dtype, "symmetric_product")
    _close(mirrored, a @ a.mT + c, dtype, "symmetrize_output")
    assert updated.dtype == product.dtype == np.dtype(dtype)


def test_qdwh_matches_scipy_polar_batched_and_padded() -> None:
    rng = np.random.default_rng(3)
    real = rng.standard_normal((2, 6, 4))
    cases = {np.complex128: real + 1j * rng.standard_normal((2, 6, 4)), np.float32: real.astype(np.float32)}
    padded = np.zeros((7, 5))
    padded[:6, :4] = real[0]

    @ts.program
    def run(xs: Any, padded: Any) -> Any:
        return ([linalg.qdwh(x) for x in xs], linalg.qdwh(padded, dynamic_shape=(6, 4)),
                linalg.qdwh(padded, dynamic_shape=(6, 4), max_iterations=3))

    outs, padded_out, capped = run(list(cases.values()), padded)
    for (dtype, x), out in zip(cases.items(), outs):
        u, h, iters, converged = (np.asarray(t) for t in out)
        assert u.dtype == h.dtype == np.dtype(dtype) and iters.dtype == np.int32 and converged.all()
        for b in range(2):
            want_u, want_h = sl.polar(x[b].astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64))
            _close(u[b], want_u, dtype, f"u {dtype}")
            _close(h[b], want_h, dtype, f"h {dtype}")
    u, h, iters, converged = (np.asarray(t) for t in padded_out)
    want_u, want_h = sl.polar(real[0])
    _close(u[:6, :4], want_u, np.float64, "padded u")
    _close(h[:4, :4], want_h, np.float64, "padded h")
    assert not u[6:].any() and not u[:, 4:].any() and not h[4:].any() and not h[:, 4:].any() and converged
    assert int(capped[2]) == 3 and not bool(capped[3])
    jax = _jax()
    if jax is not None:
        with jax.enable_x64(True):
            for out in (padded_out, capped):
                want = jax.lax.linalg.qdwh(padded, dynamic_shape=(6, 4), max_iterations=3 if out is capped else None)
                for got, w in zip(out, want):
                    np.testing.assert_allclose(np.asarray(got), np.asarray(w), rtol=1e-11, atol=1e-11)


def test_vmap_matches_a_loop() -> None:
    rng = np.random.default_rng(4)
    a, tall, c = rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    taus = rng.standard_normal((2, 2))

    @ts.program
    def run(a: Any, tall: Any, taus: Any, c: Any) -> Any:
        return (ts.vmap(linalg.hessenberg)(a), ts.vmap(lambda m: linalg.tridiagonal(m, lower=False))(a),
                ts.vmap(lambda t, v, w: linalg.ormqr(t, v, w, transpose=True))(tall, taus, c),
                ts.vmap(lambda m: linalg.qdwh(m)[:2])(tall))

    hess, tri, applied, polar = run(a, tall, taus, c)
    for b in range(2):
        for got, want in [*zip(hess, linalg.hessenberg(a[b])), *zip(tri, linalg.tridiagonal(a[b], lower=False)),
                          (applied, linalg.ormqr(tall[b], taus[b], c[b], transpose=True)),
                          *zip(polar, linalg.qdwh(tall[b])[:2])]:
            _close(np.asarray(got)[b], np.asarray(want), np.float64)


def _flat(*parts: Any) -> Any:
    return tnp.concatenate([tnp.ravel(p) for p in parts])


def test_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(5)
    assert_grads_match_finite_differences([
        lambda x: _flat(*linalg.hessenberg(x[0, :, :3]), *linalg.tridiagonal(x[:, :, :3] + x[:, :, :3].mT)[:3]),
        lambda x: _flat(linalg.householder_product(x[0].T, x[1, 0, :3]),
                        linalg.ormqr(x[0], x[1, 0, :2], x[1, :, 1:], left=True, transpose=True)),
        lambda x: _flat(linalg.cholesky_update(tnp.triu(x[0, :, :3]) + 4 * tnp.eye(3, dtype=x.dtype), x[1, 0, :3]),
                        linalg.symmetric_product(x[0], x[1, :, :3], alpha=0.5, beta=2.0)),
    ], rng)
    x, t = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    _, tangent = ts.jvp(lambda x: linalg.qdwh(x)[0], (x,), (t,))  # forward mode only, as JAX
    eps = 1e-6
    moved = [np.asarray(linalg.qdwh(x + sign * eps * t)[0]) for sign in (1, -1)]  # eager: one compile for both
    _close(tangent, (moved[0] - moved[1]) / (2 * eps), np.float32)
    with pytest.raises(ts.TransformError, match="while_loop"):
        ts.grad(lambda x: tnp.sum(linalg.qdwh(x)[0]))(x)


def test_matches_jax() -> None:
    rng = np.random.default_rng(6)
    a, tall = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5)), rng.standard_normal((6, 4))
    r, sym = np.linalg.cholesky(tall.T @ tall).T, tall @ tall.T
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        jl = jax.lax.linalg
        h, taus = (np.asarray(t) for t in jl.hessenberg(a))

        def both(lib: Any) -> Any:
            return [lib.hessenberg(a), lib.tridiagonal(a), lib.tridiagonal(a, lower=False),
                    lib.cholesky_update(r, tall[0]), lib.symmetric_product(tall, sym, beta=3.0, symmetrize_output=True),
                    lib.householder_product(h, taus), lib.ormqr(h, taus, a, left=False)]

        ours, theirs = ts.program(lambda: both(linalg))(), both(jl)
        for got, want in zip(ts.tree.leaves(ours), jax.tree.leaves(theirs)):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-11, atol=1e-11)


def test_errors_name_the_function() -> None:
    f64 = ts.f64
    check_staging_errors([
        (lambda a: linalg.hessenberg(a), [ts.Spec((3, 4), f64)], ts.ShapeError, ["hessenberg", "f64[3, 4]"]),
        (lambda a: linalg.tridiagonal(a), [ts.Spec((0, 0), f64)], ts.ShapeError, ["tridiagonal", "1x1"]),
        (lambda a, t: linalg.householder_product(a, t), [ts.Spec((3, 4), f64), ts.Spec((3,), f64)], ts.ShapeError,
         ["householder_product", "f64[3, 4]"]),
        (lambda a, t: linalg.householder_product(a, t), [ts.Spec((4, 3), f64), ts.Spec((2, 3), f64)], ts.ShapeError,
         ["householder_product", "taus", "f64[2, 3]"]),
        (lambda a, t: linalg.householder_product(a, t), [ts.Spec((4, 3), f64), ts.Spec((3,), ts.f32)], ts.DTypeError,
         ["householder_product", "f32"]),
        (lambda a, t, c: linalg.ormqr(a, t, c, left=False),
         [ts.Spec((4, 3), f64), ts.Spec((3,), f64), ts.Spec((4, 2), f64)], ts.ShapeError, ["ormqr", "f64[4, 2]"]),
        (lambda r, w: linalg.cholesky_update(r, w), [ts.Spec((3, 3), f64), ts.Spec((4,), f64)], ts.ShapeError,
         ["cholesky_update", "f64[4]"]),
        (lambda r, w: linalg.cholesky_update(r, w), [ts.Spec((3, 3), ts.c128), ts.Spec((3,), ts.c128)], ts.DTypeError,
         ["cholesky_update", "c128"]),
        (lambda a, c: linalg.symmetric_product(a, c), [ts.Spec((3, 2), f64), ts.Spec((2, 2), f64)], ts.ShapeError,
         ["symmetric_product", "f64[2, 2]"]),
        (lambda a: linalg.qdwh(a), [ts.Spec((3, 4), f64)], ts.ShapeError, ["qdwh", "m >= n"]),
        (lambda a: linalg.hessenberg(a), [ts.Spec((3, 3), ts.i32)], ts.DTypeError, ["hessenberg", "i32"]),
    ], "test_lax_linalg_more.py")
    with pytest.raises(ValueError, match="dynamic_shape"):
        linalg.qdwh(np.eye(3), dynamic_shape=(2, 3))
