"""tri, tril, triu, diag, diagonal, trace, diagflat, identity, kron, cross, vander, tri*_indices, cov, corrcoef,
inner, matrix_transpose and vecdot: against NumPy float64 on random inputs (many cases per compile), dim names,
grad against central finite differences, vmap against a loop, errors."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences


class Batch(Dim): ...
class Rows(Dim): ...
class Cols(Dim): ...


Case = Callable[[Any, Any], Any]  # (module, x) -> result; x has shape (2, 3, 4)

CASES: list[Case] = [
    *(lambda m, x, k=k: m.tril(x, k) for k in (-2, 0, 1, 5)),
    *(lambda m, x, k=k: m.triu(x, k) for k in (-4, -1, 0, 2)),
    lambda m, x: m.tril(x[0]), lambda m, x: m.triu(x[:, :0]),
    *(lambda m, x, k=k, a=a: m.diagonal(x, k, *a) for k in (-2, 0, 1, 6) for a in ((0, 1), (2, 0), (-1, -2))),
    *(lambda m, x, k=k, a=a: m.trace(x, k, *a) for k in (-1, 0, 2) for a in ((0, 1), (1, 2), (2, 0))),
    lambda m, x: m.trace(x[0]), lambda m, x: m.trace(x[:, :0, :0], 0, 1, 2),
    *(lambda m, x, k=k: m.diag(x[0], k) for k in (-3, -1, 0, 2, 4)),
    *(lambda m, x, k=k: m.diag(x[0, 0], k) for k in (-2, 0, 3)),
    lambda m, x: m.diag(x[0, 0, :0]), lambda m, x: m.diagflat(x[0]), lambda m, x: m.diagflat(x[0, 0], -1),
    lambda m, x: m.kron(x[0], x[1, :2, :2]), lambda m, x: m.kron(x[0, 0], x[1]), lambda m, x: m.kron(x, x[0, 0]),
    lambda m, x: m.kron(x[0, 0, 0], x[0]),
    lambda m, x: m.cross(x[:, :, :3], x[1, :, 1:]), lambda m, x: m.cross(x[:, :, 1:], x[0, 0, :3]),
    lambda m, x: m.cross(x[:, :, :2], x[1, :, 2:], axisa=1, axisb=0, axisc=0),
    lambda m, x: m.cross(x[:, :, :2], x[1:, :, 2:], axis=1), lambda m, x: m.cross(x[0, 0, :3], x[1, 1, 1:]),
    lambda m, x: m.vander(x[0, 0]), lambda m, x: m.vander(x[0, 0], 2, True), lambda m, x: m.vander(x[0, 0], 0),
    lambda m, x: m.cov(x[0]), lambda m, x: m.cov(x[0], rowvar=False), lambda m, x: m.cov(x[0], bias=True),
    lambda m, x: m.cov(x[0], ddof=2), lambda m, x: m.cov(x[0, 0]),
    lambda m, x: m.cov(x[0], fweights=np.array([1, 2, 1, 3])),
    lambda m, x: m.cov(x[0], fweights=np.array([1, 2, 1, 3]), aweights=np.array([0.5, 1.0, 2.0, 0.25]), ddof=0),
    lambda m, x: m.corrcoef(x[0]), lambda m, x: m.corrcoef(x[0], rowvar=False),
    lambda m, x: m.inner(x, x[1]), lambda m, x: m.inner(x[0, 0], x[1, 1]), lambda m, x: m.inner(x, 2.0),
    lambda m, x: m.matrix_transpose(x), lambda m, x: m.vecdot(x, x[0]), lambda m, x: m.vecdot(x, x[:, :, :1], axis=1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_matrices_match_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    got = ts.program(lambda x: [case(tnp, x) for case in CASES])(x)  # one compile for every case
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    for k, (case, g) in enumerate(zip(CASES, got)):
        want = case(np, x.astype(np.float64))
        assert np.shape(g) == np.shape(want), (k, np.shape(g), np.shape(want))
        assert np.asarray(g).dtype == dtype, k
        np.testing.assert_allclose(np.asarray(g), want, rtol=rtol, atol=rtol, err_msg=f"case {k}")


def test_integer_operands_and_constructors(rng: np.random.Generator) -> None:
    x = rng.integers(-9, 9, (3, 4)).astype(np.int32)
    run = ts.program(lambda x: (tnp.tril(x, 1), tnp.triu(x), tnp.diag(x, 1), tnp.trace(x), tnp.kron(x, x[:2, :2]),
                                tnp.trace(x, dtype=ts.f32)))
    for g, w in zip(run(x), (np.tril(x, 1), np.triu(x), np.diag(x, 1), np.trace(x), np.kron(x, x[:2, :2]),
                              np.trace(x).astype(np.float32))):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == w.dtype if w.dtype != np.int64 else np.int32
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(np.asarray(tnp.tri(3, 5, k)), np.tri(3, 5, k))
    assert np.asarray(tnp.tri(2)).dtype == np.float32 and np.asarray(tnp.tri(2, dtype=ts.i32)).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(tnp.identity(3, ts.f64)), np.identity(3))
    for fn, ref in ((tnp.tril_indices, np.tril_indices), (tnp.triu_indices, np.triu_indices)):
        for args in ((4,), (4, 1), (3, -1, 5)):
            for g, w in zip(fn(*args), ref(*args)):
                np.testing.assert_array_equal(np.asarray(g), w)
    rows, cols = tnp.triu_indices_from(ts.asarray(x), 1)
    np.testing.assert_array_equal(np.asarray(ts.asarray(x)[rows, cols]), x[np.triu_indices_from(x, 1)])
    assert np.asarray(tnp.tril_indices_from(x)[0]).dtype == np.int32
    for small in (np.int8, np.uint8, np.int16):  # vecdot keeps small integer dtypes, wrapping as NumPy does
        a = rng.integers(0, 90, (3, 40)).astype(small)
        got = tnp.vecdot(a, a[0])
        assert got.dtype == small
        np.testing.assert_array_equal(np.asarray(got), np.vecdot(a, a[0]))


def test_dim_names_survive_where_axes_do() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, Rows, Cols], v: Tensor[f32, Rows]) -> Any:
        return (tnp.tril(x), tnp.triu(x, 1), tnp.matrix_transpose(x), tnp.diagonal(x, 0, 1, 2), tnp.trace(x, 0, 1, 2),
                tnp.diag(v), tnp.cov(x[0]))

    dims = [o.dims for o in f.stage(Batch=2, Rows=3, Cols=3).out_avals]
    assert dims == [("Batch", "Rows", "Cols"), ("Batch", "Rows", "Cols"), ("Batch", "Cols", "Rows"),
                    ("Batch", None), ("Batch",), (None, None), ("Rows", "Rows")]


# ---------------------------------------------------------------------------------------------- transforms

GRAD_CASES: list[Callable[[Any], Any]] = [
    lambda x: tnp.tril(x, -1), lambda x: tnp.triu(x, 1), lambda x: tnp.diag(x[0], 1), lambda x: tnp.diag(x[0, 0], -2),
    lambda x: tnp.trace(x, 1, 1, 2), lambda x: tnp.diagonal(x, 0, 2, 0), lambda x: tnp.kron(x[0], x[1]),
    lambda x: tnp.cross(x[:, :, :3], x[1, :, 1:]), lambda x: tnp.vander(x[0, 0], 3), lambda x: tnp.cov(x[0]),
    lambda x: tnp.corrcoef(x[0]), lambda x: tnp.inner(x, x[0]), lambda x: tnp.vecdot(x, x[1]),
    lambda x: tnp.cov(x[0], fweights=np.array([1, 2, 1, 3]), aweights=tnp.abs(x[1, 0]) + 0.5),
]


def test_grads_match_finite_differences(rng: np.random.Generator) -> None:
    assert_grads_match_finite_differences(GRAD_CASES, rng)


def test_grads_match_jax_when_installed(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = rng.standard_normal((3, 3))

    def f(m: Any, x: Any) -> Any:
        return m.sum(m.sin(m.tril(x, 1))) + m.sum(m.cos(m.kron(x, m.triu(x)))) + m.trace(x @ x) \
            + m.sum(m.cross(x, x[::-1]) ** 2) + m.sum(m.diag(m.diag(x)) * x)

    got = np.asarray(ts.grad(lambda x: f(tnp, x))(x))
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # restored below: other tests compare with jax's f32 defaults
    try:
        want = np.asarray(jax.grad(lambda x: f(jnp, x))(x))
    finally:
        jax.config.update("jax_enable_x64", x64)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    xb = rng.standard_normal((3, 4, 4))

    def per_example(x: Any) -> Any:
        return (tnp.tril(x, 1), tnp.triu(x), tnp.diag(x, -1), tnp.diag(x[0]), tnp.trace(x), tnp.kron(x[:2, :2], x),
                tnp.cross(x[:, :3], x[0, 1:]), tnp.cov(x), tnp.corrcoef(x, rowvar=False), tnp.vander(x[1], 3))

    got = ts.vmap(per_example)(xb)
    for i in range(3):
        x = xb[i]
        want = (np.tril(x, 1), np.triu(x), np.diag(x, -1), np.diag(x[0]), np.trace(x), np.kron(x[:2, :2], x),
                np.cross(x[:, :3], x[0, 1:]), np.cov(x), np.corrcoef(x, rowvar=False), np.vander(x[1], 3))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[i], w, rtol=1e-10, atol=1e-12)


# -------------------------------------------------------------------------------------------------- errors


def _message(fn: Any, *specs: ts.Spec) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    a, v, c, i = ts.Spec((2, 3), f32), ts.Spec((3,), f32), ts.Spec((2, 3), ts.f64), ts.Spec((2, 3), ts.i32)
    cases = [
        (lambda v: tnp.tril(v), (v,), ["tril", "rank >= 2", "f32[3]"]),
        (lambda v: tnp.triu(v), (v,), ["triu", "rank >= 2"]),
        (lambda a: tnp.diagonal(a, 0, 0, 2), (a,), ["diagonal", "axis 2", "f32[2, 3]"]),
        (lambda a: tnp.trace(a, 0, 1, 1), (a,), ["trace", "repeated axis"]),
        (lambda a: tnp.diag(a[None]), (a,), ["diag", "1-D or 2-D", "f32[1, 2, 3]"]),
        (lambda a, c: tnp.kron(a, c), (a, c), ["kron", "dtypes", "f64[2, 3]"]),
        (lambda a: tnp.cross(a, a, axis=0), (a,), ["cross", "3-vectors", "f32[2, 3]"]),
        (lambda a, v: tnp.cross(a[:, :2], v), (a, v), ["cross", "3-vectors", "f32[2, 2]"]),
        (lambda i: tnp.cov(i), (i,), ["cov", "floating-point", "i32[2, 3]"]),
        (lambda a: tnp.cov(a[None]), (a,), ["cov", "1-D or 2-D"]),
        (lambda a, v: tnp.cov(a, fweights=v[:2]), (a, v), ["cov", "fweights", "f32[2]"]),
        (lambda a, v: tnp.inner(a, v[:2]), (a, v), ["inner", "last axes", "f32[2]"]),
        (lambda v: tnp.matrix_transpose(v), (v,), ["matrix_transpose", "rank >= 2"]),
        (lambda a, v: tnp.vecdot(a[:, :2], v), (a, v), ["vecdot", "broadcast"]),
        (lambda a: tnp.vander(a), (a,), ["vander", "1-D", "f32[2, 3]"]),
    ]
    for fn, specs, parts in cases:
        message = _message(fn, *specs)
        for part in parts + ["test_numpy_matrices.py:"]:
            assert part in message, (part, message)


def test_review_regressions() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 5))
    c = tnp.cov(x)  # one variable: a scalar, as NumPy
    assert np.shape(c) == ()
    np.testing.assert_allclose(c, np.cov(x))
    assert np.shape(tnp.cov(x.T, rowvar=False)) == () and np.shape(tnp.corrcoef(x)) == ()
    a, b = rng.random((2, 3)) < 0.5, rng.random(2) < 0.5
    np.testing.assert_array_equal(tnp.kron(a, b), np.kron(a, b))
