"""NumPy's array methods on tensors (sort, argsort, cumsum, cumprod, clip, round, any, all, diagonal, trace,
repeat) agree with NumPy's, eagerly and staged, and stay differentiable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts

METHODS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]]] = {
    "sort": (lambda a: a.sort(), lambda x: np.sort(x)),
    "sort descending": (lambda a: a.sort(0, descending=True), lambda x: -np.sort(-x, 0)),
    "argsort": (lambda a: a.argsort(0), lambda x: np.argsort(x, 0, kind="stable")),
    "cumsum": (lambda a: a.cumsum(1), lambda x: np.cumsum(x, 1)),
    "cumsum flat": (lambda a: a.cumsum(), lambda x: np.cumsum(x)),
    "cumprod": (lambda a: a.cumprod(0), lambda x: np.cumprod(x, 0)),
    "clip": (lambda a: a.clip(-0.5, 0.5), lambda x: x.clip(-0.5, 0.5)),
    "clip max": (lambda a: a.clip(max=0.25), lambda x: x.clip(max=0.25)),
    "round": (lambda a: a.round(1), lambda x: x.round(1)),
    "any": (lambda a: (a > 1.0).any(axis=1), lambda x: (x > 1.0).any(axis=1)),
    "all": (lambda a: (a > -1.0).all(), lambda x: (x > -1.0).all()),
    "diagonal": (lambda a: a.diagonal(1), lambda x: x.diagonal(1)),
    "trace": (lambda a: a.trace(-1), lambda x: x.trace(-1)),
    "repeat": (lambda a: a.repeat(2, axis=0), lambda x: x.repeat(2, 0)),
}


@pytest.fixture
def x() -> np.ndarray:
    return np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)


def test_methods_match_numpy_eagerly_and_staged(x: np.ndarray) -> None:
    staged = ts.program(lambda v: [method(v) for method, _ in METHODS.values()])(x)
    for (name, (method, reference)), got in zip(METHODS.items(), staged):
        want = reference(x)
        np.testing.assert_allclose(np.asarray(method(ts.asarray(x))), want, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6, err_msg=f"{name} (staged)")


def test_sorted_cumulative_sum_differentiates(x: np.ndarray) -> None:
    weights = np.arange(x.size, dtype=np.float32).reshape(x.shape)
    grad = np.asarray(ts.grad(lambda v: (v.sort(axis=1).cumsum(1) * weights).sum())(x))
    # d/dx of sum_j w_ij cumsum(sorted)_j: element at sorted position k gets sum_{j>=k} w_ij.
    tail_sums = np.cumsum(weights[:, ::-1], axis=1)[:, ::-1]
    expected = np.empty_like(x)
    np.put_along_axis(expected, np.argsort(x, axis=1), tail_sums, axis=1)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_method_errors_name_the_op_and_the_line(x: np.ndarray) -> None:
    with pytest.raises(ts.ShapeError, match=r"(?s)sort: axis 2 is out of range.*test_tensor_methods\.py:\d+"):
        ts.program(lambda v: v.sort(axis=2))(x)
