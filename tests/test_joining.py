"""Joining, splitting, padding, take and einsum, against NumPy float64 on random inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


def _close(got: Any, want: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


JOINS = [
    ("concatenate", [(2, 3), (4, 3)], {"axis": 0}),
    ("concatenate", [(2, 3), (2, 1), (2, 2)], {"axis": -1}),
    ("concatenate", [(2, 3), (5,)], {"axis": None}),
    ("stack", [(2, 3), (2, 3), (2, 3)], {"axis": 0}),
    ("stack", [(2, 3), (2, 3)], {"axis": -1}),
    ("vstack", [(3,), (3,)], {}),
    ("vstack", [(2, 3), (1, 3)], {}),
    ("hstack", [(3,), (2,)], {}),
    ("hstack", [(2, 3), (2, 1)], {}),
    ("dstack", [(2, 3), (2, 3)], {}),
]


@pytest.mark.parametrize(("name", "shapes", "kwargs"), JOINS, ids=[f"{n}-{s}-{k}" for n, s, k in JOINS])
def test_joins_match_numpy(name: str, shapes: list[tuple[int, ...]], kwargs: dict[str, Any],
                           rng: np.random.Generator) -> None:
    xs = [_normal(rng, *s) for s in shapes]
    got = getattr(tnp, name)([ts.asarray(x) for x in xs], **kwargs)
    _close(got, getattr(np, name)([x.astype(np.float64) for x in xs], **kwargs))


def test_joins_inside_a_program_keep_dim_names(rng: np.random.Generator) -> None:
    @ts.program
    def f(a: Tensor[f32, Batch, In], b: Tensor[f32, Batch, In]) -> Any:
        return tnp.concatenate([a, b], axis=1), tnp.stack([a, b]), tnp.concatenate([a, b])

    outs = f.stage(Batch=2, In=3).out_avals
    assert [o.dims for o in outs] == [("Batch", None), (None, "Batch", "In"), (None, "In")]
    a, b = _normal(rng, 2, 3), _normal(rng, 2, 3)
    got = f(a, b)
    _close(got[0], np.concatenate([a, b], axis=1))
    _close(got[1], np.stack([a, b]))


@pytest.mark.parametrize(
    ("fn", "arg", "axis"),
    [("split", 3, 0), ("split", [1, 4], 1), ("array_split", 4, 1), ("array_split", [-2, 10], 0)],
)
def test_split_matches_numpy(fn: str, arg: Any, axis: int, rng: np.random.Generator) -> None:
    x = _normal(rng, 6, 5)
    got = getattr(tnp, fn)(ts.asarray(x), arg, axis=axis)
    want = getattr(np, fn)(x, arg, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w)


@pytest.mark.parametrize("width", [1, (1, 2), ((0, 1), (2, 0)), [[3, 0], [0, 0]]], ids=str)
def test_pad_matches_numpy(width: Any, rng: np.random.Generator) -> None:
    x = _normal(rng, 2, 3)
    _close(tnp.pad(ts.asarray(x), width, constant_values=1.5), np.pad(x, width, constant_values=1.5))


@pytest.mark.parametrize(
    ("indices", "axis"), [([0, 3, 3, -1], None), ([[1, 0], [2, 2]], 1), (np.array([2, 0]), 0), (1, -1)], ids=str
)
def test_take_matches_numpy(indices: Any, axis: int | None, rng: np.random.Generator) -> None:
    x = _normal(rng, 3, 4)
    _close(tnp.take(ts.asarray(x), indices, axis=axis), np.take(x, indices, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis_matches_numpy(axis: int | None, rng: np.random.Generator) -> None:
    x = _normal(rng, 3, 4)
    if axis is None:
        idx = rng.integers(0, 12, size=5)
    else:
        shape = [3, 4]
        shape[axis] = 2
        idx = rng.integers(0, x.shape[axis], size=shape)
    _close(tnp.take_along_axis(ts.asarray(x), idx, axis=axis), np.take_along_axis(x, idx, axis=axis))
    order = np.argsort(x, axis=1)
    _close(tnp.take_along_axis(ts.asarray(x), ts.asarray(order.astype(np.int32)), axis=1), np.sort(x, axis=1))


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,)]*2),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...j,j", [(2, 3, 4), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
    ("i,j,k->kji", [(2,), (3,), (4,)]),
    ("iij->j", [(3, 3, 2)]),
]


@pytest.mark.parametrize(("subscripts", "shapes"), EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_matches_numpy(subscripts: str, shapes: list[tuple[int, ...]], rng: np.random.Generator) -> None:
    xs = [rng.standard_normal(s) for s in shapes]
    got = tnp.einsum(subscripts, *[ts.asarray(x) for x in xs])
    np.testing.assert_allclose(np.asarray(got), np.einsum(subscripts, *xs), rtol=1e-10, atol=1e-12)


def test_einsum_keeps_and_checks_dim_names() -> None:
    @ts.program
    def f(x: Tensor[f32, Batch, In], w: Tensor[f32, In, Out]) -> Any:
        return tnp.einsum("bi,io->ob", x, w)

    assert f.stage(Batch=2, In=3, Out=4).out_avals[0].dims == ("Out", "Batch")

    @ts.program
    def g(x: Tensor[f32, Batch, In], w: Tensor[f32, Out, In]) -> Any:
        return tnp.einsum("bi,io->bo", x, w)  # w is the wrong way round: In vs Out on letter i

    with pytest.raises(ts.ShapeError) as info:
        g.stage(Batch=2, In=3, Out=3)
    message = str(info.value)
    assert "einsum" in message and "letter 'i'" in message and "In" in message and "Out" in message
    assert "test_joining.py:" in message


def _message(fn: Any, *specs: ts.Spec) -> str:
    with pytest.raises((ts.ShapeError, ts.DTypeError)) as info:
        ts.program(fn).stage(*specs)
    return str(info.value)


def test_errors_name_op_operands_and_line() -> None:
    a, b, c = ts.Spec((2, 3), f32), ts.Spec((3, 3), f32), ts.Spec((2, 3), ts.f64)
    cases = [
        (lambda a, b: tnp.concatenate([a, b], axis=1), (a, b), ["concatenate", "f32[2, 3]", "f32[3, 3]"]),
        (lambda a, b: tnp.concatenate([a, b], axis=2), (a, b), ["concatenate", "axis 2", "out of range"]),
        (lambda a, c: tnp.concatenate([a, c]), (a, c), ["concatenate", "f64[2, 3]", "dtypes"]),
        (lambda a, b: tnp.stack([a, b]), (a, b), ["stack", "one shape", "f32[3, 3]"]),
        (lambda a: tnp.split(a, 2, axis=1), (a,), ["split", "equal sections"]),
        (lambda a: tnp.pad(a, ((1, 2),) * 3), (a,), ["pad", "pad_width"]),
        (lambda a: tnp.take(a, [7], axis=1), (a,), ["take", "out of range", "f32[2, 3]"]),
        (lambda a: tnp.take_along_axis(a, np.zeros(2, np.int32), axis=0), (a,), ["take_along_axis", "rank"]),
        (lambda a, b: tnp.einsum("ij,jk->ik", a, a), (a, b), ["einsum", "letter 'j'", "sizes 3 and 2"]),
        (lambda a: tnp.einsum("ijk->i", a), (a,), ["einsum", "'ijk'", "f32[2, 3]"]),
        (lambda a: tnp.einsum("ij->k", a), (a,), ["einsum", "output letters k"]),
    ]
    for fn, specs, parts in cases:
        message = _message(fn, *specs)
        for part in parts + ["test_joining.py:"]:
            assert part in message, (part, message)
