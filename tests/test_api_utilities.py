"""JAX's top-level utilities: ``eval_shape``, ``linear_transpose``, ``device_get``, ``block_until_ready``, device
counts, and the ``jacobian`` / ``remat`` names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

F32 = np.float32


def test_eval_shape_stages_without_compiling_and_raises_shape_errors() -> None:
    def f(x: Any, y: Any, *, scale: float) -> Any:
        return {"product": x @ y * scale, "parts": (x.sum(axis=0), tnp.astype(y, tnp.int32))}

    out = ts.eval_shape(f, ts.Spec((2, 3), ts.f64), np.ones((3, 4), np.float64), scale=2.0)
    assert isinstance(out["product"], ts.Spec)
    assert (out["product"].shape, out["product"].dtype) == ((2, 4), np.dtype(np.float64))
    assert [(s.shape, s.dtype) for s in out["parts"]] == [((3,), np.dtype(np.float64)), ((3, 4), np.dtype(np.int32))]
    with pytest.raises(ts.ShapeError, match="matmul"):
        ts.eval_shape(lambda x: x @ x, ts.Spec((2, 3), ts.f32))


def test_linear_transpose_matches_the_matrix_transpose(rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 4)).astype(F32)
    b = rng.standard_normal(4).astype(F32)

    def f(x: Any, y: Any) -> Any:
        return {"ax": a @ x + 2.0 * y[:3], "sum": (x * b).sum()}

    transpose = ts.linear_transpose(f, ts.Spec((4,), ts.f32), np.zeros(5, F32))
    ct = {"ax": rng.standard_normal(3).astype(F32), "sum": F32(1.5)}
    x_ct, y_ct = transpose(ct)
    np.testing.assert_allclose(x_ct, a.T @ ct["ax"] + 1.5 * b, rtol=1e-5)
    np.testing.assert_allclose(y_ct, np.concatenate([2 * ct["ax"], np.zeros(2, F32)]), rtol=1e-6)
    # <f(x), ct> == <x, f^T(ct)>, staged inside a program too
    staged = ts.program(lambda c: transpose(c))(ct)
    np.testing.assert_allclose(staged[0], x_ct, rtol=1e-6)


def test_linear_transpose_refuses_a_nonlinear_function() -> None:
    transpose = ts.linear_transpose(lambda x: tnp.sin(x), np.ones(3, F32))
    with pytest.raises(ts.TransformError, match="not linear"):
        transpose(np.ones(3, F32))


def test_device_get_block_until_ready_and_device_counts() -> None:
    tree = {"x": tnp.arange(3.0), "n": 4, "pair": (tnp.ones(2), np.zeros(1))}
    assert ts.block_until_ready(tree) is tree
    host = ts.device_get(tree)
    assert isinstance(host["x"], np.ndarray) and host["n"] == 4 and isinstance(host["pair"][0], np.ndarray)
    np.testing.assert_array_equal(host["x"], [0, 1, 2])
    with pytest.raises(ts.ConcretizationError, match="device_get"):
        ts.program(lambda v: ts.device_get(v))(np.ones(2, F32))
    assert ts.device_count() == len(ts.local_devices()) == ts.local_device_count() >= 1
    assert ts.default_backend() == ts.default_device().platform


def test_jacobian_and_remat_are_jax_names() -> None:
    assert ts.jacobian is ts.jacrev and ts.remat is ts.checkpoint
    x = np.arange(3.0, dtype=F32)
    np.testing.assert_allclose(ts.jacobian(lambda v: v**2)(x), np.diag(2 * x))
