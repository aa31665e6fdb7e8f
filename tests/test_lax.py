"""ts.lax against NumPy float64 references (and jax.lax, where installed, for the semantics NumPy lacks: clamped
dynamic slices, rounding halves away from zero, multi-key sorts), its strictness (no promotion, no broadcasting
but of rank 0), gradients through its slices and scans against finite differences, and vmap.

Deliberate differences from jax.lax: ``precision`` is accepted and ignored (f32 products run at full precision);
``sort``'s ``is_stable`` is accepted and every sort is stable; ``conv_general_dilated`` accepts string padding with
``lhs_dilation`` (computed on the dilated input; JAX refuses it). Not offered: the random-bit and token
primitives (tests/test_lax_more.py lists every jax.lax name left out).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

UNARY: dict[str, Any] = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "cos": np.cos, "tan": np.tan, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "abs": np.abs, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "exp2": np.exp2,
    "square": np.square, "reciprocal": np.reciprocal, "log2": np.log2, "one_minus_square": lambda x: 1 - x * x,
}
BINARY: dict[str, Any] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "rem": np.fmod, "pow": np.power,
    "max": np.maximum, "min": np.minimum, "atan2": np.arctan2, "nextafter": np.nextafter,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}


def _unary_input(name: str, x: np.ndarray) -> np.ndarray:
    """Inputs inside each function's domain: (0, 1) for the inverse trig functions, positive for logs and roots."""
    if name == "acosh":
        return 1 + np.abs(x)
    return x if name in ("neg", "exp", "tanh", "logistic", "sin", "cos", "tan", "cbrt", "sign", "floor", "ceil",
                         "abs", "atan", "sinh", "cosh", "asinh", "exp2", "square") else np.abs(x) % 0.99 + 0.005


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_functions_match_numpy(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(dtype)
    y = (np.abs(rng.standard_normal((3, 5))) + 0.5).astype(dtype)

    inputs = {name: _unary_input(name, x) for name in UNARY}

    @ts.program
    def run(inputs: Any, x: Any, y: Any) -> Any:
        unary = {name: getattr(lax, name)(inputs[name]) for name in UNARY}
        binary = {name: getattr(lax, name)(x, y) for name in BINARY}
        return unary, binary, lax.add(x, 2.0), lax.mul(x, x[0, 0]), lax.integer_pow(x, 3), lax.is_finite(x / 0.0)

    unary, binary, plus_two, scaled, cubed, finite = run(inputs, x, y)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    for name, ref in UNARY.items():
        np.testing.assert_allclose(np.asarray(unary[name]), ref(inputs[name].astype(np.float64)), rtol=tol,
                                   atol=tol, err_msg=name)
    for name, ref in BINARY.items():
        got = np.asarray(binary[name])
        want = ref(x, y) if name == "nextafter" else ref(x.astype(np.float64), y.astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
        assert got.dtype == (np.bool_ if name in ("eq", "ne", "lt", "le", "gt", "ge") else dtype), name
    np.testing.assert_allclose(np.asarray(plus_two), x + 2, rtol=tol)
    np.testing.assert_allclose(np.asarray(scaled), x * x[0, 0], rtol=tol)
    np.testing.assert_allclose(np.asarray(cubed), x.astype(np.float64) ** 3, rtol=tol, atol=tol)
    assert not np.asarray(finite).any()


def test_integer_semantics_are_xlas() -> None:
    """Integer div rounds toward zero, rem takes the dividend's sign, shifts and bit operations as C."""
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 40).astype(np.int32)
    b = rng.integers(1, 9, 40).astype(np.int32) * rng.choice([-1, 1], 40).astype(np.int32)
    s = rng.integers(0, 31, 40).astype(np.int32)
    u = rng.integers(0, 2**32, 40, dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(np.asarray(lax.div(a, b)), np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(np.asarray(lax.rem(a, b)), np.fmod(a, b))
    np.testing.assert_array_equal(np.asarray(lax.shift_left(a, s)), np.left_shift(a, s))
    np.testing.assert_array_equal(np.asarray(lax.shift_right_arithmetic(a, s)), np.right_shift(a, s))
    np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(a, s)), (a.view(np.uint32) >> s.astype(np.uint32)).view(np.int32))
    np.testing.assert_array_equal(
        np.asarray(lax.shift_right_arithmetic(u, s.astype(np.uint32))), (u.view(np.int32) >> s).astype(np.int32).view(np.uint32)
    )
    np.testing.assert_array_equal(np.asarray(lax.bitwise_xor(a, b)), a ^ b)
    np.testing.assert_array_equal(np.asarray(lax.bitwise_not(a)), ~a)
    np.testing.assert_array_equal(np.asarray(lax.population_count(u)), np.bitwise_count(u))
    assert np.asarray(lax.div(a, b)).dtype == np.int32


def test_one_minus_square_keeps_its_digits_near_one_and_its_derivative_near_zero() -> None:
    x = np.array([1 - 2.0**-20, -(1 - 2.0**-20), 1e-9], np.float32)
    np.testing.assert_allclose(np.asarray(lax.one_minus_square(x)), 1 - x.astype(np.float64) ** 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ts.grad(lambda v: lax.one_minus_square(v).sum())(x)), -2 * x, rtol=1e-6)


def test_round_halves_away_from_zero_unless_told() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1.2, -3.7, np.nan, np.inf], np.float32)
    away = np.where(np.isnan(x) | np.isinf(x), x, np.sign(x) * np.floor(np.abs(x) + 0.5))
    away[6] = 0.0  # 0.49999997 + 0.5 rounds up to 1 in f32; the result must not
    np.testing.assert_array_equal(np.asarray(lax.round(x)), away)
    np.testing.assert_array_equal(np.asarray(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)), np.round(x))


def test_strictness_errors_name_the_op_the_operands_and_the_line() -> None:
    f32_3 = ts.Spec((3,), ts.f32)
    cases: list[Any] = [
        (lambda x, y: lax.add(x, y), (f32_3, ts.Spec((3,), ts.i32)), ts.DTypeError, ("lax.add", "f32[3]", "i32[3]")),
        (lambda x, y: lax.mul(x, y), (f32_3, ts.Spec((4,), ts.f32)), ts.ShapeError, ("mul", "f32[3]", "f32[4]")),
        (lambda x, y: lax.nextafter(x, y), (f32_3, ts.Spec((2, 3), ts.f32)), ts.ShapeError, ("lax.nextafter", "f32[2, 3]")),
        (lambda x, y: lax.select(x > 0, x, y), (f32_3, ts.Spec((3,), ts.f64)), ts.DTypeError, ("lax.select", "f64[3]")),
        (lambda x: lax.pad(x, 0.0, [(1, 1)]), (f32_3,), ts.ShapeError, ("lax.pad", "f32[3]", "(low, high, interior)")),
        (lambda x: lax.reshape(x, (2, 2)), (f32_3,), ts.ShapeError, ("lax.reshape", "f32[3]", "(2, 2)")),
        (lambda x: lax.squeeze(x, (0,)), (f32_3,), ts.ShapeError, ("lax.squeeze", "size 3")),
        (lambda x: lax.reduce_sum(x, (1,)), (f32_3,), ts.ShapeError, ("lax.reduce_sum", "axis 1")),
        (lambda x: lax.dot(x, lax.broadcast(x, (2, 2))), (f32_3,), ts.ShapeError, ("lax.dot", "f32[2, 2, 3]")),
        (lambda x: lax.round(lax.convert_element_type(x, ts.i32)), (f32_3,), ts.DTypeError, ("lax.round", "i32[3]")),
    ]
    check_staging_errors(cases, "test_lax.py")
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((np.zeros(3), np.zeros(3)), num_keys=3)
    with pytest.raises(TypeError, match="integer_pow"):
        lax.integer_pow(np.zeros(3, np.float32), 2.0)  # type: ignore[arg-type]


def test_slices_and_updates_match_numpy_and_clamp_as_xla() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    u = rng.standard_normal((2, 3)).astype(np.float32)

    @ts.program
    def run(x: Any, u: Any, i: Any, j: Any) -> Any:
        return (
            lax.dynamic_slice(x, (i, j), (2, 3)),
            lax.dynamic_update_slice(x, u, (i, j)),
            lax.dynamic_slice_in_dim(x, j, 2, axis=1),
            lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
            lax.dynamic_update_index_in_dim(x, lax.broadcast(x[0, 0], (6,)), j, axis=1),
        )

    for i, j in [(1, 2), (5, 4), (-3, 0), (4, 9)]:
        ci, cj = min(max(i, 0), 4), min(max(j, 0), 2)  # XLA clamps so the window fits
        window, updated, columns, row, column_set = run(x, u, np.int32(i), np.int32(j))
        np.testing.assert_array_equal(np.asarray(window), x[ci:ci + 2, cj:cj + 3])
        want = x.copy()
        want[ci:ci + 2, cj:cj + 3] = u
        np.testing.assert_array_equal(np.asarray(updated), want)
        c2 = min(max(j, 0), 3)
        np.testing.assert_array_equal(np.asarray(columns), x[:, c2:c2 + 2])
        np.testing.assert_array_equal(np.asarray(row), x[min(max(i, 0), 5)])
        want = x.copy()
        want[:, min(max(j, 0), 4)] = x[0, 0]
        np.testing.assert_array_equal(np.asarray(column_set), want)
    np.testing.assert_array_equal(np.asarray(lax.slice(x, (1, 0), (6, 5), (2, 2))), x[1:6:2, 0:5:2])
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, -4, None, 2, axis=0)), x[-4::2])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, axis=1)), x[:, -1:])
    np.testing.assert_array_equal(np.asarray(lax.rev(x, (0, 1))), x[::-1, ::-1])
    np.testing.assert_array_equal(np.asarray(lax.concatenate([x, x[:2]], 0)), np.concatenate([x, x[:2]]))


def test_pad_reshape_broadcast_and_conversions() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    padded = np.asarray(lax.pad(x, -1.0, [(1, -1, 1), (-2, 2, 0)]))
    full = np.full((1 + 3 + 2, 4), -1.0, np.float32)
    full[1::2] = x
    want = np.pad(full, ((0, 0), (0, 2)), constant_values=-1.0)[:-1, 2:]
    np.testing.assert_array_equal(padded, want)
    np.testing.assert_array_equal(np.asarray(lax.reshape(x, (2, 6), dimensions=(1, 0))), x.T.reshape(2, 6))
    np.testing.assert_array_equal(np.asarray(lax.broadcast(x, (2,))), np.broadcast_to(x, (2, 3, 4)))
    np.testing.assert_array_equal(np.asarray(lax.broadcast_in_dim(x[:, 0], (3, 5), (0,))), np.repeat(x[:, :1], 5, 1))
    np.testing.assert_array_equal(np.asarray(lax.expand_dims(x, (0, 3))), x[None, :, :, None])
    np.testing.assert_array_equal(np.asarray(lax.squeeze(x[None, :, :, None], (0, -1))), x)
    np.testing.assert_array_equal(np.asarray(lax.transpose(x[None], (2, 0, 1))), x[None].transpose(2, 0, 1))
    converted = np.asarray(lax.convert_element_type(x - 5.5, ts.i32))
    np.testing.assert_array_equal(converted, np.trunc(x - 5.5).astype(np.int32))
    np.testing.assert_array_equal(np.asarray(lax.bitcast_convert_type(x, np.int32)), x.view(np.int32))
    np.testing.assert_array_equal(np.asarray(lax.iota(np.int32, 5)), np.arange(5))
    np.testing.assert_array_equal(np.asarray(lax.broadcasted_iota(ts.i32, (2, 3), 1)), np.tile(np.arange(3), (2, 1)))
    np.testing.assert_array_equal(np.asarray(lax.full((2, 2), 7, ts.f32)), np.full((2, 2), 7, np.float32))
    like = lax.full_like(x, 3)
    assert like.dtype == np.float32 and np.asarray(like).tolist() == np.full((3, 4), 3.0).tolist()
    np.testing.assert_array_equal(np.asarray(lax.clamp(2.0, x, 9.0)), np.clip(x, 2, 9))
    np.testing.assert_array_equal(np.asarray(lax.select(x > 5, x, -x)), np.where(x > 5, x, -x))


def test_reductions_cumulative_and_products() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    np.testing.assert_allclose(np.asarray(lax.reduce_sum(x, (0, 1))), x.sum(), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(lax.reduce_max(x, (1,))), x.max(1))
    np.testing.assert_allclose(np.asarray(lax.reduce_prod(x, (0,))), x.prod(0), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(lax.reduce_or(x > 1, (1,))), (x > 1).any(1))
    np.testing.assert_array_equal(np.asarray(lax.reduce_and(x > -2, (0,))), (x > -2).all(0))
    np.testing.assert_array_equal(np.asarray(lax.reduce_xor(x > 0, (1,))), np.logical_xor.reduce(x > 0, 1))
    small = rng.integers(-100, 100, (4, 5)).astype(np.int8)
    assert np.asarray(lax.reduce_sum(small, (1,))).dtype == np.int8  # no widening, as XLA
    assert np.asarray(lax.cumsum(small, 1)).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(lax.reduce_xor(small, (0, 1))), np.bitwise_xor.reduce(small.ravel()))
    idx = lax.argmax(x, 1, ts.i32)
    assert idx.dtype == np.int32 and np.asarray(idx).tolist() == x.argmax(1).tolist()
    np.testing.assert_allclose(np.asarray(lax.cumsum(x, 1, reverse=True)), x[:, ::-1].cumsum(1)[:, ::-1], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.cumprod(x, 0)), x.cumprod(0), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(lax.cummax(x, 1)), np.maximum.accumulate(x, 1))
    np.testing.assert_array_equal(np.asarray(lax.cummin(x, 0, reverse=True)), np.minimum.accumulate(x[::-1], 0)[::-1])
    np.testing.assert_allclose(np.asarray(lax.cumlogsumexp(x, 1)), np.logaddexp.accumulate(x, 1), rtol=1e-12)
    y = rng.standard_normal((4, 5, 3))
    got = lax.dot_general(x, y, (((1,), (1,)), ((0,), (0,))))
    np.testing.assert_allclose(np.asarray(got), np.einsum("bi,bij->bj", x, y), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.dot(x, x.T)), x @ x.T, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.batch_matmul(y.transpose(0, 2, 1), y)), y.transpose(0, 2, 1) @ y,
                               rtol=1e-12)
    i8 = rng.integers(-100, 100, (3, 40)).astype(np.int8)
    wide = lax.dot(i8, i8.T, preferred_element_type=ts.i32)
    assert wide.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(wide), i8.astype(np.int32) @ i8.T.astype(np.int32))


def test_sort_orders_nans_last_and_sorts_by_several_keys() -> None:
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 3, (2, 30)).astype(np.int32)
    second = rng.integers(0, 4, (2, 30)).astype(np.float32)
    payload = np.arange(60, dtype=np.int32).reshape(2, 30)
    k1, k2, p = lax.sort((keys, second, payload), dimension=1, num_keys=2)
    order = np.stack([np.lexsort((second[r], keys[r])) for r in range(2)])
    for got, want in zip((k1, k2, p), (keys, second, payload)):
        np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(want, order, 1))
    x = np.array([3.0, np.nan, -np.inf, 0.0, -1.0, np.inf], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.sort(x)), np.sort(x))
    k, v = lax.sort_key_val(x, np.arange(6, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(v), np.argsort(x, kind="stable"))
    values, indices = lax.top_k(np.array([1.0, 5.0, 3.0], np.float32), 2)
    assert np.asarray(values).tolist() == [5.0, 3.0] and np.asarray(indices).tolist() == [1, 2]


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9])
def test_associative_scan_matches_a_sequential_loop(n: int) -> None:
    """A linear recurrence ``h = a h + b`` as pairs (an associative, non-commutative combine) on a pytree, along
    axis 1, both directions; its first and last lengths exercise the recursion's even and odd cases."""
    rng = np.random.default_rng(n)
    a = rng.uniform(0.5, 1.0, (2, n))
    b = rng.standard_normal((2, n))

    def combine(left: Any, right: Any) -> Any:
        return {"a": left["a"] * right["a"], "b": right["a"] * left["b"] + right["b"]}

    for reverse in (False, True):
        out = lax.associative_scan(combine, {"a": a, "b": b}, reverse=reverse, axis=1)
        h, want = np.zeros(2), np.zeros((2, n))
        for t in (reversed(range(n)) if reverse else range(n)):
            h = a[:, t] * h + b[:, t]
            want[:, t] = h
        np.testing.assert_allclose(np.asarray(out["b"]), want, rtol=1e-12, atol=1e-12)


def test_gradients_through_slices_and_scans_match_finite_differences() -> None:
    rng = np.random.default_rng(5)
    assert_grads_match_finite_differences([
        lambda x: lax.dynamic_slice(x, (0, 1, 1), (2, 2, 3)),
        lambda x: lax.dynamic_update_slice(x, x[:1, :2, :2] * 3, (1, 1, 2)),
        lambda x: lax.pad(x, 0.5, [(1, 0, 1), (0, -1, 0), (2, 1, 2)]),
        lambda x: lax.associative_scan(lax.mul, x, axis=2),
        lambda x: lax.cumlogsumexp(x, 1, reverse=True),
        lambda x: lax.cummax(x, 2),
        lambda x: lax.reduce_prod(x, (1,)),
        lambda x: lax.map(lambda row: lax.tanh(row) * row, x),
        lambda x: lax.round(x * 3) + x,
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2), (1, 1, 2), "SAME"),
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2, 1), padding=[(0, 1), (1, 0), (0, 0)], base_dilation=(1, 2, 1)),
        lambda x: lax.conv_general_dilated(x, x[:, :, :2] * 0.5, (1,), "SAME", rhs_dilation=(2,)),
    ], rng)


def _windows(x: np.ndarray, window: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Every window of ``x`` (no padding), stacked along a last axis, in NumPy."""
    view = np.lib.stride_tricks.sliding_window_view(x, window)
    view = view[tuple(slice(None, None, s) for s in strides)]
    return view.reshape(*view.shape[: x.ndim], -1)


def test_reduce_window_and_convolutions_match_numpy() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 7, 9))
    np.testing.assert_array_equal(np.asarray(lax.reduce_window(x, -np.inf, lax.max, (1, 3, 2), (1, 2, 2))),
                                  _windows(x, (1, 3, 2), (1, 2, 2)).max(-1))
    padded = np.pad(x, ((0, 0), (1, 1), (0, 1)))  # SAME for a 3x2 window at stride 1: one low, one high / one high
    np.testing.assert_allclose(np.asarray(lax.reduce_window(x, 0.0, lax.add, (1, 3, 2), padding="SAME")),
                               _windows(padded, (1, 3, 2), (1, 1, 1)).sum(-1), rtol=1e-12)
    kernel = rng.standard_normal((4, 7, 3))  # (out features, in features, width): channels first
    got = lax.conv_general_dilated(x, kernel, (2,), [(1, 0)])
    lhs = np.pad(x, ((0, 0), (0, 0), (1, 0)))
    want = np.einsum("bcwk,ock->bow", _windows(lhs, (1, 1, 3), (1, 1, 2)).reshape(2, 7, 4, 3), kernel)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    nhwc = lax.conv_general_dilated(x.transpose(0, 2, 1), kernel.transpose(2, 1, 0), (2,), [(1, 0)],
                                    dimension_numbers=("NWC", "WIO", "NWC"))
    np.testing.assert_allclose(np.asarray(nhwc), want.transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.conv(x, kernel, (1,), "VALID")),
                               np.einsum("bcwk,ock->bow", _windows(x, (1, 1, 3), (1, 1, 1)).reshape(2, 7, 7, 3), kernel),
                               rtol=1e-12)


def test_gather_and_scatter_with_dimension_numbers_and_modes() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5, 4))
    rows = np.array([[0], [4], [2], [5], [-1]], np.int32)  # the last two windows do not fit
    by_row = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    clamped = np.clip(rows[:, 0], 0, 4)
    np.testing.assert_array_equal(np.asarray(lax.gather(x, rows, by_row, (1, 4))), x[clamped])
    np.testing.assert_array_equal(np.asarray(lax.gather(x, rows, by_row, (1, 4), mode="clip")), x[clamped])
    filled = np.asarray(lax.gather(x, rows, by_row, (1, 4), mode="fill", fill_value=-7.0))
    np.testing.assert_array_equal(filled, np.concatenate([x[[0, 4, 2]], np.full((2, 4), -7.0)]))
    assert np.isnan(np.asarray(lax.gather(x, rows, by_row, (1, 4), mode=lax.GatherScatterMode.FILL_OR_DROP))[3:]).all()
    ints = np.arange(20, dtype=np.int32).reshape(5, 4)
    assert np.asarray(lax.gather(ints, rows, by_row, (1, 4), mode="fill"))[4, 0] == np.iinfo(np.int32).min
    # 2x2 windows at (row, column) starts
    corners = np.array([[0, 0], [3, 2], [1, 1]], np.int32)
    windows = lax.gather(x, corners, lax.GatherDimensionNumbers((1, 2), (), (0, 1)), (2, 2))
    np.testing.assert_array_equal(np.asarray(windows), np.stack([x[r:r + 2, c:c + 2] for r, c in corners]))
    updates = rng.standard_normal((5, 4))
    to_rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))
    repeated = np.array([[1], [3], [1], [7], [0]], np.int32)  # index 7 does not fit: dropped, or clipped to 4
    want = x.copy()
    np.add.at(want, repeated[:4, 0].clip(0, 4), updates[:4])
    want[0] += updates[4]
    added = lax.scatter_add(x, repeated, updates, to_rows)
    want_dropped = want.copy()
    want_dropped[4] -= updates[3]
    np.testing.assert_allclose(np.asarray(added), want_dropped, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.scatter_add(x, repeated, updates, to_rows, mode="clip")), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.scatter_sub(x, repeated, -updates, to_rows)), want_dropped, rtol=1e-12)
    want = x.copy()
    np.maximum.at(want, repeated[[0, 1, 2, 4], 0], updates[[0, 1, 2, 4]])
    np.testing.assert_array_equal(np.asarray(lax.scatter_max(x, repeated, updates, to_rows)), want)
    unique = np.array([[2], [0]], np.int32)
    want = x.copy()
    want[[2, 0]] = updates[:2]
    np.testing.assert_array_equal(np.asarray(lax.scatter(x, unique, updates[:2], to_rows)), want)
    with pytest.raises(ValueError, match="mode"):
        lax.gather(x, rows, by_row, (1, 4), mode="wrap")
    assert_grads_match_finite_differences([
        lambda v: lax.gather(v, np.array([[1, 2], [0, 2], [1, 9]], np.int32),
                             lax.GatherDimensionNumbers((1, 2), (1,), (1, 2)), (2, 1, 2), mode="fill", fill_value=0.0),
        lambda v: lax.scatter_mul(v, np.array([[0], [1], [0]], np.int32), v[np.array([0, 1, 0])] * 0.5 + 1.0,
                                  lax.ScatterDimensionNumbers((1, 2), (0,), (0,))),
    ], rng)


def test_reduce_with_any_associative_computation_and_select_n() -> None:
    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 7))
    for axes in [(0,), (1,), (0, 1), (-1,), ()]:
        np.testing.assert_allclose(np.asarray(lax.reduce(x, 0.0, lax.add, axes)), x.sum(axis=axes), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(lax.reduce(np.zeros((3, 0)), -np.inf, lax.max, (1,))), np.full(3, -np.inf))
    np.testing.assert_allclose(np.asarray(lax.reduce(x, -np.inf, tnp.logaddexp, (0,))), np.logaddexp.reduce(x, 0),
                               rtol=1e-12)
    columns = np.broadcast_to(np.arange(7, dtype=np.int32), (5, 7))

    def first_max(a: Any, b: Any) -> Any:  # a variadic reduction on pairs: (value, index), as argmax
        (va, ia), (vb, ib) = a, b
        take = (va > vb) | ((va == vb) & (ia < ib))
        return tnp.where(take, va, vb), tnp.where(take, ia, ib)

    values, index = lax.reduce((x, columns), (-np.inf, np.int32(0)), first_max, (1,))
    assert np.asarray(index).tolist() == x.argmax(1).tolist() and np.allclose(np.asarray(values), x.max(1))
    with pytest.raises(ts.ShapeError, match="dimensions"):
        lax.reduce(x, 0.0, lax.add, (0, 2))
    which = rng.integers(0, 3, 7).astype(np.int32)
    picked = lax.select_n(which, x[0], x[1], x[2])
    np.testing.assert_array_equal(np.asarray(picked), np.choose(which, x[:3]))
    np.testing.assert_array_equal(np.asarray(lax.select_n(x[0] > 0, x[1], x[2])), np.where(x[0] > 0, x[2], x[1]))


def test_vmap_and_map_with_batches() -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 4, 3)).astype(np.float32)
    starts = np.array([0, 1, 2, 0, 1, 2], np.int32)
    sliced = ts.vmap(lambda row, i: lax.dynamic_slice_in_dim(row, i, 2, axis=0))(x, starts)
    np.testing.assert_array_equal(np.asarray(sliced), np.stack([x[k, s:s + 2] for k, s in enumerate(starts)]))
    scanned = ts.vmap(lambda row: lax.associative_scan(lax.add, row))(x)
    np.testing.assert_allclose(np.asarray(scanned), x.cumsum(1), rtol=1e-5, atol=1e-6)
    for batch_size in (None, 2, 3):
        mapped = lax.map(lambda m: lax.dot(m.T, m), x, batch_size=batch_size)
        np.testing.assert_allclose(np.asarray(mapped), np.einsum("kij,kil->kjl", x, x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="batch_size"):
        lax.map(lambda m: m, x, batch_size=4)


def test_agrees_with_jax_lax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jlax = jax.lax
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    checks = [
        (lambda m: m.dynamic_slice(x, (3, 4), (3, 3)), None),
        (lambda m: m.pad(x, np.float32(0), [(2, -1, 1), (-2, 3, 2)]), None),
        (lambda m: m.round(x * 2.5), None),
        (lambda m: m.rem(np.int32(-7) * np.arange(1, 7, dtype=np.int32), np.int32(4)), None),
        (lambda m: m.reshape(x, (3, 10), dimensions=(1, 0)), None),
        (lambda m: m.cumsum(x, 1, reverse=True), 1e-6),
        (lambda m: m.associative_scan(m.max, x, axis=1, reverse=True), None),
        (lambda m: m.dot_general(x, x, (((0,), (0,)), ((), ()))), 1e-5),
        (lambda m: m.clamp(np.float32(-0.5), x, np.float32(0.5)), None),
        (lambda m: m.shift_right_arithmetic(np.uint32([2**31, 7]), np.uint32([3, 1])), None),
        (lambda m: m.reduce_window(x, np.float32(-np.inf), m.max, (2, 3), (2, 1), "SAME", (1, 2), (2, 1)), None),
        (lambda m: m.conv_general_dilated(x[None, None], x[None, None, :2, :3], (1, 2), "SAME_LOWER",
                                          rhs_dilation=(2, 1)), 1e-5),
        (lambda m: m.gather(x.reshape(5, 2, 3), np.array([[1], [0], [3], [1], [0]], np.int32),
                            m.GatherDimensionNumbers((1,), (1,), (1,), (0,), (0,)), (1, 1, 3), mode="fill"), None),
        (lambda m: m.scatter_add(x, np.array([[0], [3], [3], [6]], np.int32), x[:4] * 2,
                                 m.ScatterDimensionNumbers((1,), (0,), (0,))), 1e-6),
        (lambda m: m.reduce(x, np.float32(1), m.mul, (0,)), 1e-6),
        (lambda m: m.select_n(np.array([2, 0, 1, 1, 0, 2], np.int32), x[0], x[1], x[2]), None),
    ]
    for k, (check, tol) in enumerate(checks):
        ours, theirs = np.asarray(check(lax)), np.asarray(check(jlax))
        assert ours.dtype == theirs.dtype, k
        if tol is None:
            np.testing.assert_array_equal(ours, theirs, err_msg=str(k))
        else:
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol, err_msg=str(k))


def test_every_name_is_jax_laxs() -> None:
    """ts.lax offers jax.lax's names with jax.lax's meaning: none of its own (checked where jax is installed; names
    added by jax 0.11, which jax 0.10 lacks, are allowed)."""
    jax = pytest.importorskip("jax")
    since_jax_0_11 = {"log2", "one_minus_square"}
    assert sorted(set(lax.__all__) - set(dir(jax.lax)) - since_jax_0_11) == []


def test_special_functions_match_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(11)
    x = rng.uniform(0.2, 8.0, 20)
    a = rng.uniform(0.5, 4.0, 20)
    run = ts.program(lambda x, a: [lax.lgamma(x), lax.digamma(x), lax.erfc(x - 4), lax.bessel_i0e(x), lax.bessel_i1e(x),
                                   lax.zeta(a + 1, x), lax.igamma(a, x), lax.igammac(a, x), lax.polygamma(2.0, x),
                                   lax.betainc(a, x, a / 4.5)])
    refs = [special.gammaln(x), special.digamma(x), special.erfc(x - 4), special.i0e(x), special.i1e(x),
            special.zeta(a + 1, x), special.gammainc(a, x), special.gammaincc(a, x), special.polygamma(2, x),
            special.betainc(a, x, a / 4.5)]
    for k, (got, want) in enumerate(zip(run(x, a), refs)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-11, atol=1e-13, err_msg=str(k))


@pytest.mark.skipif(ts.default_device().platform != "cpu", reason="schur lowers to LAPACK on CPU only")
def test_linalg_schur_factors_its_matrix() -> None:
    pytest.importorskip("scipy")  # jaxlib's LAPACK kernels bind to SciPy's
    a = np.random.default_rng(12).standard_normal((2, 4, 4))
    t, z = lax.linalg.schur(a)
    t, z = np.asarray(t), np.asarray(z)
    np.testing.assert_allclose(z @ t @ np.swapaxes(z, -1, -2), a, atol=1e-12)
    assert np.allclose(np.tril(t, -2), 0)  # quasi-triangular: 2x2 blocks for complex pairs only
    with pytest.raises(NotImplementedError, match="sort_eig_vals"):
        lax.linalg.schur(a, sort_eig_vals=True)
