"""tensorstage.flatten_util.ravel_pytree (dtype promotion as JAX's lattice, unravel's dtype rules, staging, grad,
vmap) and tensorstage.scipy.cluster.vq.vq against SciPy in f64; jax's results where installed."""

from __future__ import annotations

import itertools
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import scipy.cluster.vq as scipy_vq

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.flatten_util import ravel_pytree
from tensorstage.prelude.tree_flatten import promote_jax
from tensorstage.scipy.cluster.vq import vq

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32",
                                "float64", "complex64", "complex128")] + [np.dtype(ml_dtypes.bfloat16)]


def test_promotion_is_jax_lattice() -> None:
    jnp = pytest.importorskip("jax.numpy")
    import jax

    with jax.enable_x64(True):
        for a, b in itertools.product(DTYPES, DTYPES):
            assert promote_jax(a, b) == np.dtype(jnp.promote_types(a, b)), (a, b)


def _tree(rng: np.random.Generator) -> dict[str, Any]:
    return {"w": rng.standard_normal((2, 3)), "b": (rng.standard_normal(3).astype(np.float32),
                                                    np.arange(2, dtype=np.int32)), "s": np.float64(1.5)}


def test_ravel_round_trips_and_dtypes(rng: np.random.Generator) -> None:
    tree = _tree(rng)
    flat, unravel = ravel_pytree(tree)
    want = np.concatenate([np.ravel(tree["b"][0]), np.ravel(tree["b"][1]), [1.5], np.ravel(tree["w"])])
    assert flat.dtype == np.float64 and flat.shape == (12,)  # promoted; leaves in key order (b, s, w)
    np.testing.assert_array_equal(np.asarray(flat), want)
    back = unravel(flat)
    assert ts.tree.structure(back) == ts.tree.structure(tree)
    for got, leaf in zip(ts.tree.leaves(back), ts.tree.leaves(tree)):
        assert got.dtype == np.asarray(leaf).dtype and got.shape == np.shape(leaf)
        np.testing.assert_allclose(np.asarray(got), leaf, rtol=1e-7)
    with pytest.raises(TypeError, match="expected dtype float64"):
        unravel(flat.astype(np.float32))
    with pytest.raises(ts.ShapeError, match="the 12 values"):
        unravel(np.zeros(11))
    # one dtype: unravel takes any dtype (JAX's polymorphic case) and keeps it
    flat32, unravel32 = ravel_pytree([np.ones((2, 2), np.float32), np.zeros(1, np.float32)])
    assert flat32.dtype == np.float32 and unravel32(np.arange(5.0))[0].dtype == np.float64
    assert unravel32 == ravel_pytree([np.ones((2, 2), np.float32), np.zeros(1, np.float32)])[1]
    empty, unravel_empty = ravel_pytree({"a": (), "b": None})
    assert empty.shape == (0,) and empty.dtype == np.float32 and unravel_empty(empty) == {"a": (), "b": None}
    complex_flat, unravel_complex = ravel_pytree([np.float32(2.0), np.array([1 + 2j], np.complex64)])
    assert complex_flat.dtype == np.complex64
    assert unravel_complex(complex_flat * 1j)[0].dtype == np.float32  # the imaginary part dropped, as JAX
    jfu = pytest.importorskip("jax.flatten_util")
    import jax

    with jax.enable_x64(True):
        jax_flat, _ = jfu.ravel_pytree(tree)
    assert jax_flat.dtype == flat.dtype
    np.testing.assert_array_equal(np.asarray(jax_flat), np.asarray(flat))


def test_staged_grad_and_vmap(rng: np.random.Generator) -> None:
    tree = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(3)}
    batch = rng.standard_normal((4, 9))

    def loss(t: Any) -> Any:
        flat, _ = ravel_pytree(t)
        return tnp.sum(tnp.sin(flat) * tnp.arange(9.0, dtype=tnp.float64))

    @ts.program
    def run(t: Any, batch: Any) -> Any:
        _, unravel = ravel_pytree(t)
        per_row = ts.vmap(lambda v: tnp.sum(unravel(v)["w"] ** 2) + tnp.sum(unravel(v)["b"]))(batch)
        through_unravel = ts.grad(lambda v: tnp.sum(unravel(v)["w"] ** 3))(batch[0])
        return ts.grad(loss)(t), per_row, through_unravel

    grads, per_row, through_unravel = run(tree, batch)
    weights = np.arange(9.0)
    np.testing.assert_allclose(np.asarray(grads["b"]), np.cos(tree["b"]) * weights[:3], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grads["w"]), np.cos(tree["w"]) * weights[3:].reshape(2, 3), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(per_row), [np.sum(r[3:] ** 2) + np.sum(r[:3]) for r in batch], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(through_unravel), np.r_[np.zeros(3), 3 * batch[0, 3:] ** 2], rtol=1e-12)


def test_vq_matches_scipy(rng: np.random.Generator) -> None:
    obs, book = rng.standard_normal((7, 3)), rng.standard_normal((4, 3))
    ties = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[0.5, 0.5], [0.5, 0.5], [2.0, 2.0]])
    got = ts.program(lambda o, b, o1, b1, to, tb: (vq(o, b), vq(o1, b1), vq(to, tb)))(
        obs, book, obs[:, 0], book[:, 0], *ties)
    for (codes, dist), args in zip(got, [(obs, book), (obs[:, 0], book[:, 0]), ties]):
        want_codes, want_dist = scipy_vq.vq(*args)
        assert codes.dtype == np.int32 and dist.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(codes), want_codes)
        np.testing.assert_allclose(np.asarray(dist), want_dist, rtol=1e-12)
    codes, dist = vq(np.array([[1, 2], [5, 5]]), np.array([[1, 1], [4, 6]]))  # integers: the default float
    np.testing.assert_array_equal(np.asarray(codes), [0, 1])
    assert dist.dtype == np.float32
    with pytest.raises(ValueError, match="same rank"):
        vq(obs, book[0])
    with pytest.raises(ValueError, match="same number of features"):
        vq(obs, book[:, :2])
