"""flip, rot90, roll, tile, repeat, resize, append/insert/delete, atleast_Nd, column_stack, meshgrid and
broadcast_arrays: against NumPy float64 on random inputs (many cases per compile), dim names, grad against
central finite differences, vmap against a loop, errors."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences


class Batch(Dim): ...
class In(Dim): ...


Case = Callable[[Any, Any], Any]  # (module, x) -> result; the module is numpy or tensorstage.numpy

# Every case runs on a rank-3 operand of shape (2, 3, 4).
CASES3: list[Case] = [
    lambda m, x: m.flip(x), lambda m, x: m.flip(x, 1), lambda m, x: m.flip(x, (0, -1)),
    lambda m, x: m.fliplr(x), lambda m, x: m.flipud(x),
    lambda m, x: m.rot90(x), lambda m, x: m.rot90(x, 2), lambda m, x: m.rot90(x, -1, (2, 0)),
    lambda m, x: m.rot90(x, 3, (1, 2)), lambda m, x: m.rot90(x, 4),
    lambda m, x: m.roll(x, 1), lambda m, x: m.roll(x, -7), lambda m, x: m.roll(x, 5, 1),
    lambda m, x: m.roll(x, (1, 2), (0, 2)), lambda m, x: m.roll(x, 3, (0, 1)), lambda m, x: m.roll(x, (1, -1), 1),
    lambda m, x: m.roll(x, -13, -1),
    lambda m, x: m.tile(x, 2), lambda m, x: m.tile(x, (2, 1)), lambda m, x: m.tile(x, (1, 2, 1, 2)),
    lambda m, x: m.tile(x, (0, 1, 1)),
    lambda m, x: m.repeat(x, 2), lambda m, x: m.repeat(x, 2, 1), lambda m, x: m.repeat(x, [1, 0, 2], 1),
    lambda m, x: m.repeat(x, [1, 0, 2, 3], -1), lambda m, x: m.repeat(x, 0, 0), lambda m, x: m.repeat(x, [3], 2),
    lambda m, x: m.resize(x, (5,)), lambda m, x: m.resize(x, (5, 7)), lambda m, x: m.resize(x, 0),
    lambda m, x: m.append(x, x[:, :1], axis=1), lambda m, x: m.append(x, x[0]),
    lambda m, x: m.delete(x, 1), lambda m, x: m.delete(x, [0, 2], 1), lambda m, x: m.delete(x, slice(0, None, 2), 2),
    lambda m, x: m.delete(x, -1, 0), lambda m, x: m.delete(x, np.array([True, False, True]), 1),
    lambda m, x: m.insert(x, 1, x[:, 0], 1), lambda m, x: m.insert(x, [0, 2], x[:, :, 1:3], 2),
    lambda m, x: m.insert(x, 5, x[0, 0, 0]), lambda m, x: m.insert(x, [2, 0, 2], x[0, 0, :3], 2),
    lambda m, x: m.atleast_1d(x), lambda m, x: m.atleast_3d(x[0]), lambda m, x: m.atleast_3d(x[0, 0]),
    lambda m, x: m.atleast_2d(x[0, 0], x[0, 0, 0]), lambda m, x: m.atleast_1d(x[0, 0, 0]),
    lambda m, x: m.column_stack([x[0, 0], x[1, 0], x[0, :2, :].T]),
    lambda m, x: m.meshgrid(x[0, 0], x[1, :, 0]), lambda m, x: m.meshgrid(x[0, 0], x[0, :, 1], x[1, 1], indexing="ij"),
    lambda m, x: m.meshgrid(x[0, 0, :2], x[0, :, 1], sparse=True),
    lambda m, x: m.broadcast_arrays(x, x[:1, :, :1]),
]
# Rank 0, rank 1 and an empty extent.
CASES_SMALL: list[Case] = [
    lambda m, x: m.flip(x[0, 0, 0]), lambda m, x: m.roll(x[0, 0, 0], 1), lambda m, x: m.tile(x[0, 0, 0], 3),
    lambda m, x: m.repeat(x[0, 0, 0], 3), lambda m, x: m.resize(x[0, 0, 0], 4),
    lambda m, x: m.flip(x[0, 0]), lambda m, x: m.roll(x[0, 0], -3), lambda m, x: m.tile(x[0, 0], (2, 2)),
    lambda m, x: m.repeat(x[0, 0], [0, 1, 2, 0]), lambda m, x: m.append(x[0, 0], 2),
    lambda m, x: m.delete(x[0, 0], [0, -1]), lambda m, x: m.insert(x[0, 0], 4, x[0, 1]),
    lambda m, x: m.flip(x[:, :0]), lambda m, x: m.roll(x[:, :0], 2, 1), lambda m, x: m.tile(x[:0], 2),
    lambda m, x: m.repeat(x[:0], 2, 0), lambda m, x: m.rot90(x[:, :0]), lambda m, x: m.resize(x[:0], 3),
]
CASES = CASES3 + CASES_SMALL


def _compare(got: Any, want: Any, rtol: float) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w, rtol)
        return
    g = np.asarray(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], ids=lambda d: np.dtype(d).name)
def test_rearranging_matches_numpy(dtype: Any, rng: np.random.Generator) -> None:
    x = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
    run = ts.program(lambda x: [case(tnp, x) for case in CASES])  # one compile for every case
    got = run(x)
    for k, (case, g) in enumerate(zip(CASES, got)):
        want = case(np, x.astype(np.float64) if dtype != np.int32 else x)
        try:
            _compare(g, want, 1e-6 if dtype == np.float32 else 1e-12)
        except AssertionError as exc:
            raise AssertionError(f"case {k}: {exc}") from None
        if dtype == np.int32:
            leaves = g if isinstance(g, (tuple, list)) else [g]
            assert all(np.asarray(leaf).dtype == np.int32 for leaf in leaves)


def test_eager_calls_on_device_arrays(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.roll(ts.asarray(x), np.int64(2), axis=1)), np.roll(x, 2, 1))
    np.testing.assert_array_equal(np.asarray(tnp.repeat(x, np.array([2, 0, 1]), 0)), np.repeat(x, [2, 0, 1], 0))
    np.testing.assert_array_equal(np.asarray(tnp.delete(x, np.array([1, 3]), 1)), np.delete(x, [1, 3], 1))
    assert isinstance(tnp.flip(x), ts.Array)


def test_staged_shift_and_repeats(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 5))
    shifts = np.array([-11, -5, -1, 0, 2, 5, 7], np.int32)

    @ts.program
    def f(x: Any, s: Any, r: Any) -> Any:
        rolled = [tnp.roll(x, s[i], axis=1) for i in range(len(shifts))]
        return rolled, tnp.roll(x, (s[0], 1), (0, 1)), tnp.repeat(x, r, 1, total_repeat_length=9), \
            tnp.repeat(x, r, 1, total_repeat_length=11)

    reps = np.array([2, 0, 3, 1, 3], np.int32)
    rolled, mixed, exact, longer = f(x, shifts, reps)
    for s, g in zip(shifts, rolled):
        np.testing.assert_array_equal(np.asarray(g), np.roll(x, s, 1))
    np.testing.assert_array_equal(np.asarray(mixed), np.roll(x, (shifts[0], 1), (0, 1)))
    np.testing.assert_array_equal(np.asarray(exact), np.repeat(x, reps, 1))
    want = np.concatenate([np.repeat(x, reps, 1), x[:, -1:], x[:, -1:]], 1)  # documented: the last element again
    np.testing.assert_array_equal(np.asarray(longer), want)


def test_dim_names_survive_where_axes_do() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, In]) -> Any:
        return (tnp.flip(x, 1), tnp.roll(x, 2, 1), tnp.roll(x, 3), tnp.rot90(x), tnp.tile(x, (1, 2)),
                tnp.repeat(x, 2, axis=1), tnp.meshgrid(x[:, 0], x[0]), tnp.delete(x, 0, 1), tnp.atleast_3d(x))

    dims = [o.dims for o in f.stage(Batch=2, In=3).out_avals]
    assert dims == [
        ("Batch", "In"), ("Batch", "In"), ("Batch", "In"), ("In", "Batch"), ("Batch", None), ("Batch", None),
        ("In", "Batch"), ("In", "Batch"), ("Batch", None), ("Batch", "In", None),
    ]

    @ts.program
    def g(x: Tensor[f32, Batch, In]) -> Tensor[f32, In, Batch]:
        return tnp.rot90(x, 3)

    assert g.stage(Batch=2, In=3).out_avals[0].dims == ("In", "Batch")


# ---------------------------------------------------------------------------------------------- transforms

GRAD_CASES: list[Callable[[Any], Any]] = [
    lambda x: tnp.flip(x, (0, 2)), lambda x: tnp.rot90(x, 1, (1, 2)), lambda x: tnp.roll(x, (1, -5), (1, 2)),
    lambda x: tnp.roll(x, 4), lambda x: tnp.tile(x, (2, 1, 3)), lambda x: tnp.repeat(x, [2, 0, 3], 1),
    lambda x: tnp.repeat(x, 2), lambda x: tnp.resize(x, (7, 5)), lambda x: tnp.delete(x, 1, 2),
    lambda x: tnp.insert(x, [0, 3], x[:, :, 1:3] * 2.0, 2), lambda x: tnp.meshgrid(x[0, 0], x[1, 1])[1],
]


def test_grads_match_finite_differences(rng: np.random.Generator) -> None:
    assert_grads_match_finite_differences(GRAD_CASES, rng)


def test_grad_of_staged_shift_roll(rng: np.random.Generator) -> None:
    x, w = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    grad = ts.grad(lambda x, s: tnp.sum(tnp.roll(x, s, axis=1) * w))(x, np.int32(-2))
    np.testing.assert_allclose(np.asarray(grad), np.roll(w, 2, 1), rtol=1e-12)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    xb = rng.standard_normal((3, 2, 4))
    shifts = np.array([1, -2, 6], np.int32)

    def per_example(x: Any, s: Any) -> Any:
        return (tnp.flip(x, 1), tnp.rot90(x), tnp.roll(x, 1, 0), tnp.roll(x, s, 1), tnp.tile(x, (2, 1)),
                tnp.repeat(x, [1, 0, 2, 1], 1), tnp.delete(x, 2, 1), tnp.meshgrid(x[0], x[1])[0])

    got = ts.vmap(per_example)(xb, shifts)
    for i in range(3):
        x, s = xb[i], int(shifts[i])
        want = (np.flip(x, 1), np.rot90(x), np.roll(x, 1, 0), np.roll(x, s, 1), np.tile(x, (2, 1)),
                np.repeat(x, [1, 0, 2, 1], 1), np.delete(x, 2, 1), np.meshgrid(x[0], x[1])[0])
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[i], w, rtol=1e-12)


# -------------------------------------------------------------------------------------------------- errors


def _message(fn: Any, *specs: ts.Spec) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    a, v, s = ts.Spec((2, 3), f32), ts.Spec((3,), f32), ts.Spec((), f32)
    cases = [
        (lambda a: tnp.flip(a, 2), (a,), ["flip", "axis 2", "f32[2, 3]"]),
        (lambda v: tnp.fliplr(v), (v,), ["fliplr", "rank >= 2", "f32[3]"]),
        (lambda a: tnp.rot90(a, 1, (0, 0)), (a,), ["rot90", "repeated axis"]),
        (lambda a, s: tnp.roll(a, s, 1), (a, s), ["roll", "integer scalar", "f32[]"]),
        (lambda a: tnp.roll(a, (1, 2, 3), (0, 1)), (a,), ["roll", "broadcast"]),
        (lambda a: tnp.tile(a, (2, -1)), (a,), ["tile", "non-negative"]),
        (lambda a: tnp.repeat(a, [1, 2], 1), (a,), ["repeat", "2 repeat counts", "f32[2, 3]"]),
        (lambda a, v: tnp.repeat(a, v.astype(ts.i32), 1), (a, v), ["repeat", "total_repeat_length"]),
        (lambda a: tnp.delete(a, 5, 1), (a,), ["delete", "out of range"]),
        (lambda a, v: tnp.append(a, v, axis=0), (a, v), ["append", "f32[3]", "f32[2, 3]"]),
        (lambda a: tnp.insert(a, [0, 1], a[:, :2], 0), (a,), ["insert", "broadcast", "f32[2, 2]"]),
        (lambda v: tnp.meshgrid(v, v, indexing="yx"), (v,), ["meshgrid", "indexing"]),
        (lambda a, v: tnp.broadcast_arrays(v[:2, None], v), (a, v), ["broadcast_arrays", "leading axes"]),
    ]
    for fn, specs, parts in cases:
        message = _message(fn, *specs)
        for part in parts + ["test_numpy_rearranging.py:"]:
            assert part in message, (part, message)


def test_review_regressions() -> None:
    assert tnp.repeat(np.zeros((0, 3), np.float32), [], axis=0).shape == (0, 3)
    np.testing.assert_array_equal(tnp.column_stack([np.float32(1), np.float32(2)]), [[1.0, 2.0]])
