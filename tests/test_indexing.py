"""NumPy indexing (``x[...]``) and functional updates (``x.at[...]``), against NumPy on random inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32, i32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...


SHAPE = (4, 5, 6)

INDICES: list[Any] = [
    0, -1, 3, (1, 2), (1, -2, 5), (slice(None), 1), (Ellipsis, 2), (1, Ellipsis), (Ellipsis,), (),
    None, (None, 1), (slice(None), None, 2), (Ellipsis, None),
    slice(1, 3), slice(None, None, 2), slice(None, None, -1), (slice(3, 0, -2), slice(-1, None, -3)),
    (slice(10, 20),), (slice(2, 2), 0), (slice(-100, 100, 3),),
    [0, 2], [[0, 3], [3, 1]], np.array([-1, 0, 2]), [0, 0, 3],
    (slice(None), [1, 3], [0, 5]), ([0, 1], slice(None), [1, 2]), (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]), ([[0], [1]], [1, 2]), ([0, 1], None, [0, 1]), (None, [0, 1], [1, 2]),
    (Ellipsis, [1, 0]), (slice(1, None, 2), [4, 0], slice(None, None, -2)), (np.int64(2), [1, 1]),
    ([], slice(None)),
]


def _ids(indices: list[Any]) -> list[str]:
    return [repr(i).replace(" ", "") for i in indices]


@pytest.mark.parametrize("index", INDICES, ids=_ids(INDICES))
def test_getitem_matches_numpy(index: Any, rng: np.random.Generator) -> None:
    x = rng.standard_normal(SHAPE).astype(np.float32)
    got = ts.asarray(x)[index]
    np.testing.assert_array_equal(np.asarray(got), x[index])


@pytest.mark.parametrize(
    "index", [1, (slice(None), 2), (Ellipsis, slice(1, 4)), slice(None, None, -2), (None, 0, slice(1, 3))],
    ids=_ids([1, (slice(None), 2), (Ellipsis, slice(1, 4)), slice(None, None, -2), (None, 0, slice(1, 3))]),
)
def test_basic_indexing_lowers_to_slices_not_gathers(index: Any) -> None:
    staged = ts.program(lambda x: x[index]).stage(ts.Spec(SHAPE, f32))
    text = str(staged.graph)
    assert "gather" not in text and "dynamic_slice" not in text
    assert "stablehlo.gather" not in staged.stablehlo()


def test_dim_names_survive_on_whole_axes() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, In], i: Tensor[i32, Batch]) -> Any:
        return x[:, 1:3], x[0], x[i], x[:, None]

    outs = f.stage(Batch=4, In=6).out_avals
    assert [o.dims for o in outs] == [("Batch", None), ("In",), ("Batch", "In"), ("Batch", None, "In")]


def test_staged_scalar_index_wraps_negatives_and_clamps(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3)).astype(np.float32)
    f = ts.program(lambda x, i: x[i, 1:])
    assert "dynamic_slice" in str(f.stage(x, np.int32(0)).graph)
    for i in (0, 4, -1, -5, 7, -9):  # one compile; out-of-range reads clamp (XLA semantics)
        want = x[min(max(i + 5 if i < 0 else i, 0), 4), 1:]
        np.testing.assert_array_equal(np.asarray(f(x, np.int32(i))), want)



def test_narrow_staged_indices_reach_every_element() -> None:
    x = np.arange(200, dtype=np.float32)  # longer than an i8 index can count
    read = ts.program(lambda x, i: x[i])
    write = ts.program(lambda x, i: x.at[i].set(-1.0))
    for i in (np.int8(5), np.int8(-1), np.int8(-128), np.int16(-1), np.uint8(199)):
        assert float(np.asarray(read(x, i))) == x[int(i)]
        assert np.asarray(write(x, i))[int(i)] == -1.0

def test_staged_index_arrays(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3)).astype(np.float32)
    idx = np.array([[4, -1], [0, -5]], dtype=np.int32)
    got = ts.program(lambda x, idx: x[idx, ::-1])(x, idx)
    np.testing.assert_array_equal(np.asarray(got), x[idx, ::-1])
    pair = ts.program(lambda x, i, j: x[[i, j, 0]])(x, np.int32(3), np.int32(-1))
    np.testing.assert_array_equal(np.asarray(pair), x[[3, -1, 0]])
    cols = np.array([2, 0], dtype=np.int32)
    got = ts.program(lambda x, r, c: x[r[:, None], c])(x, np.array([1, 3], np.int32), cols)
    np.testing.assert_array_equal(np.asarray(got), x[np.array([1, 3])[:, None], cols])


UPDATE_INDICES: list[Any] = [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 1), slice(1, 3), slice(None, None, -2),
    (slice(3, 0, -2), slice(-1, None, -3)), [0, 2], [0, 0, 3, 0], (slice(None), [1, 3], [0, 5]),
    ([0, 1], slice(None), [1, 2]), ([[0], [1]], [1, 2]), ([0, 1], None, [0, 1]), (), (slice(2, 2),),
]
_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@pytest.mark.parametrize("combiner", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("index", UPDATE_INDICES, ids=_ids(UPDATE_INDICES))
def test_at_updates_match_numpy(index: Any, combiner: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal(SHAPE).astype(np.float32)
    view = x[index].shape
    if combiner == "set" and index == [0, 0, 3, 0]:
        index = [0, 2, 3, 1]  # which duplicate wins a set is unspecified (as in XLA and JAX)
    values = rng.standard_normal(view).astype(np.float32)
    got = getattr(ts.asarray(x).at[index], combiner)(values)
    want = x.copy()
    if combiner == "set":
        want[index] = values
    else:
        _UFUNCS[combiner].at(want, index, values)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_at_add_accumulates_duplicates_and_broadcasts_scalars(rng: np.random.Generator) -> None:
    x = rng.standard_normal(6).astype(np.float32)
    got = ts.program(lambda x: x.at[np.array([1, 1, 1, 4])].add(1.0))(x)
    want = x.copy()
    np.add.at(want, [1, 1, 1, 4], 1.0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(ts.asarray(x).at[1:3].get()), x[1:3])
    row = ts.program(lambda x: x.at[:, 0].set([1.0, 2.0]))(np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(row), [[1, 0, 0], [2, 0, 0]])


def test_at_with_staged_indices_drops_out_of_range_updates(rng: np.random.Generator) -> None:
    x = rng.standard_normal(5).astype(np.float32)
    f = ts.program(lambda x, i, v: x.at[i].add(v))
    for i in (2, -1, 5, -6):  # out of range: dropped, as in JAX
        want = x.copy()
        if -5 <= i < 5:
            want[i] += 3.0
        np.testing.assert_allclose(np.asarray(f(x, np.int32(i), np.float32(3.0))), want, rtol=1e-6)


def test_at_keeps_type_and_input_is_unchanged(rng: np.random.Generator) -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, In]:
        return x.at[0, 1:].mul(2.0)

    staged = f.stage(Batch=3, In=4)
    assert staged.out_avals[0].dims == ("Batch", "In")
    x = rng.standard_normal((3, 4)).astype(np.float32)
    keep = x.copy()
    want = x.copy()
    want[0, 1:] *= 2
    np.testing.assert_allclose(np.asarray(staged.compile()(x)), want, rtol=1e-6)
    np.testing.assert_array_equal(x, keep)


def test_item_assignment_points_to_at() -> None:
    a = ts.asarray(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"\.at\["):
        a[0] = 1.0


# ------------------------------------------------------------------------------------------------- errors


def _staging_error(fn: Any, *args: Any) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError)) as info:
        ts.program(fn).stage(*args)
    return str(info.value)


def test_errors_name_op_shapes_and_user_line() -> None:
    x = ts.Spec((3, 4), f32)
    cases = [
        (lambda x: x[3], ["getitem", "out of range", "f32[3, 4]", "size 3"]),
        (lambda x: x[0, 0, 0], ["getitem", "too many indices", "f32[3, 4]"]),
        (lambda x: x[np.array([0, 5])], ["getitem", "index 5", "out of range"]),
        (lambda x: x[..., ...], ["getitem", "one ellipsis"]),
        (lambda x: x[x > 0], ["getitem", "boolean mask", "tnp.where"]),
        (lambda x: x[np.array([True, False])], ["getitem", "boolean mask of shape (2,)", "f32[3, 4]", "(sizes (3,))"]),
        (lambda x: x[1.5], ["getitem", "unsupported index"]),
        (lambda x: x[x], ["getitem", "must be integers", "f32[3, 4]"]),
        (lambda x: x[[0, 1], [[0, 1, 2]]], ["getitem", "do not broadcast"]),
        (lambda x: x.at[0].set(np.zeros(3, np.float32)), ["at[].set", "f32[3]", "f32[4]"]),
        (lambda x: x.at[0].add(np.zeros(4, np.float64)), ["at[].add", "f64[4]", "f32[3, 4]"]),
        (lambda x: x[::0], ["getitem", "step cannot be zero"]),
    ]
    for fn, parts in cases:
        message = _staging_error(fn, x)
        for part in parts + ["test_indexing.py:"]:
            assert part in message, (part, message)


def test_staged_slice_bounds_are_rejected() -> None:
    message = _staging_error(lambda x, i: x[i : i + 2], ts.Spec((5,), f32), ts.Spec((), i32))
    assert "slice bounds must be static" in message and "test_indexing.py:" in message


def test_named_index_arrays_must_agree() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, In], i: Tensor[i32, Batch], j: Tensor[i32, In]) -> Any:
        return x[i, j]

    with pytest.raises(ts.ShapeError, match="disagree on a dim"):
        f.stage(Batch=3, In=3)


# ------------------------------------------------------------------------------------------- transforms


def _finite_difference_grad(f: Any, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        g.flat[k] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


TRANSFORM_CASES = {
    "slice": lambda x, i: tnp.sum(tnp.sin(x[1:, ::-2]) * x[:-1, 1::2]),
    "dynamic_slice": lambda x, i: tnp.sum(tnp.sin(x[i, 1:]) ** 2),
    "gather": lambda x, i: tnp.sum(tnp.sin(x[np.array([0, 2, 2]), 1:]) * x[[1, 0, 1], 1:]),
    "gather staged": lambda x, i: tnp.sum(tnp.sin(x[:, tnp.stack([i, i - 1])]) ** 2),
    "scatter-set": lambda x, i: tnp.sum(tnp.sin(x.at[[0, 2]].set(x[1] * x[2]))),
    "scatter-set staged": lambda x, i: tnp.sum(tnp.sin(x.at[i, 1:].set(x[0, :3] ** 2))),
    "scatter-add": lambda x, i: tnp.sum(tnp.sin(x.at[[0, 0, 2], 1].add(x[1, :3] ** 2))),
    "scatter-max": lambda x, i: tnp.sum(tnp.sin(x.at[:, 0].max(x[:, 2] * 2.0))),
    "scatter-min": lambda x, i: tnp.sum(tnp.sin(x.at[[1, 1], 1:3].min(x[:2, :2] - 0.5))),
    "scatter-mul": lambda x, i: tnp.sum(tnp.sin(x.at[1].mul(x[2] + 3.0))),
    "concatenate": lambda x, i: tnp.sum(tnp.sin(tnp.concatenate([x, x[:1] * 2.0], axis=0)) * 1.5),
    "stack": lambda x, i: tnp.sum(tnp.stack([x, tnp.sin(x)], axis=1) ** 2),
    "pad": lambda x, i: tnp.sum(tnp.sin(tnp.pad(x, ((1, 0), (2, 1)), constant_values=0.5)) ** 2),
    "take_along_axis": lambda x, i: tnp.sum(tnp.take_along_axis(x, np.array([[3], [0], [1]]), axis=1) ** 3),
    "einsum": lambda x, i: tnp.einsum("ij,kj->ik", x, tnp.sin(x))[0, 1],
}


@pytest.mark.parametrize("name", list(TRANSFORM_CASES))
def test_grad_matches_finite_differences(name: str, rng: np.random.Generator) -> None:
    f = TRANSFORM_CASES[name]
    x = rng.standard_normal((3, 4))
    i = np.int32(2)
    got = np.asarray(ts.grad(f)(x, i))
    compiled = ts.program(f)
    np.testing.assert_allclose(got, _finite_difference_grad(lambda x: compiled(x, i), x), rtol=1e-6, atol=1e-7)


VMAP_CASES = {
    "scalar index": (lambda x, i: x[i, ::-1], (0, 0)),
    "index array": (lambda x, i: x[i] * 2.0, (None, 0)),
    "both": (lambda x, i: x[1:, i], (0, 0)),
    "at set": (lambda x, i: x.at[i].set(x[0] + 1.0), (0, 0)),
    "at add arrays": (lambda x, i: x.at[i, 1:].add(1.0), (None, 0)),
    "concatenate": (lambda x, i: tnp.concatenate([x[i], x[0]]), (0, 0)),
    "pad": (lambda x, i: tnp.pad(x, 1) * 2.0, (0, None)),
}


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_matches_python_loop(name: str, rng: np.random.Generator) -> None:
    f, axes = VMAP_CASES[name]
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    i = rng.integers(-4, 4, size=(3, 2)).astype(np.int32)
    if name in ("scalar index", "both", "at set", "concatenate"):
        i = i[:, 0]
    per = ts.program(f)
    want = np.stack([
        np.asarray(per(x[b] if axes[0] == 0 else x, i[b] if axes[1] == 0 else i)) for b in range(3)
    ])
    got = ts.vmap(f, in_axes=axes)(x, i)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def _primitive_cases() -> list[Any]:
    from slicing_cases import SLICING_CASES

    return [
        pytest.param(name, case, id=f"{name}-{case.label or k}")
        for name, cases in SLICING_CASES.items() if name != "iota"
        for k, case in enumerate(cases)
    ]


@pytest.mark.parametrize("batched", ["all", "first", "rest"])
@pytest.mark.parametrize(("name", "case"), _primitive_cases())
def test_primitive_batch_rules_match_loop(name: str, case: Any, batched: str, rng: np.random.Generator) -> None:
    """Every slicing/gather/scatter case, with all, only the first, or all but the first operand batched."""
    from tensorstage.staging.builder import bind
    from tensorstage.staging.primitive import REGISTRY
    from tensorstage.tensor import Traced

    examples = [case.make(rng, np.dtype(np.float32)) for _ in range(3)]
    n = len(examples[0])
    axes = [0 if (batched == "all" or (k == 0) == (batched == "first")) else None for k in range(n)]
    if all(a is None for a in axes):
        pytest.skip("nothing batched")
    for k, a in enumerate(axes):  # unbatched operands are shared by every example
        if a is None:
            for ex in examples[1:]:
                ex[k] = examples[0][k]
    stacked = [np.stack([ex[k] for ex in examples]) if a == 0 else examples[0][k] for k, a in enumerate(axes)]

    def apply(*xs: Any) -> Any:
        return Traced(bind(REGISTRY[name], *(x.atom for x in xs), **case.params))

    per = ts.program(apply)
    want = np.stack([np.asarray(per(*ex)) for ex in examples])
    mapped = ts.vmap(apply, in_axes=tuple(axes))
    mapped.stage(*stacked).typecheck()
    np.testing.assert_allclose(np.asarray(mapped(*stacked)), want, rtol=1e-6)


def test_vmap_of_grad_of_indexing(rng: np.random.Generator) -> None:
    def loss(x: Any, i: Any) -> Any:
        return tnp.sum(tnp.sin(x[i]) * x.at[i].add(1.0)[0])

    x = rng.standard_normal((4, 3))
    i = np.array([[0, 2], [3, 3], [1, -1]], dtype=np.int32)
    got = ts.vmap(ts.grad(loss), in_axes=(None, 0))(x, i)
    single = ts.grad(loss)
    want = np.stack([np.asarray(single(x, row)) for row in i])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10)


def test_set_with_array_indices_on_an_empty_operand_is_the_operand() -> None:
    """``.at[arrays].set`` on an array without elements: nothing to set (the last-wins scatter used to fail)."""
    x = np.zeros((0, 3), np.float32)
    empty = np.zeros((0, 2), np.int32)
    out = ts.program(lambda x: x.at[empty, empty].set(1.0))(x)
    assert out.shape == (0, 3)
    assert tnp.asarray(x).at[np.zeros(0, np.int32)].set(2.0).shape == (0, 3)
