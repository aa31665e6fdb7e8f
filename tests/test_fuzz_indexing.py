"""Fuzzing ``x[...]`` and ``x.at[...]`` against NumPy (f64) on seeded random indices, many cases per compile."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp  # noqa: F401 - registers the prelude

SHAPE = (3, 4, 2, 5)
INDEX_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def _random_slice(rng: np.random.Generator, n: int) -> slice:
    def bound() -> int | None:
        return None if rng.random() < 0.3 else int(rng.integers(-2 * n - 2, 2 * n + 3))

    step = [None, 1, 2, 3, -1, -2, -3, 9, -9][int(rng.integers(0, 9))]
    return slice(bound(), bound(), step)


def _random_index(rng: np.random.Generator, shape: tuple[int, ...], advanced: bool = True) -> tuple[Any, ...]:
    """A random NumPy-valid index for ``shape``: ints, slices, None, ..., int arrays/lists of any int dtype."""
    items: list[Any] = []
    for n in shape[: int(rng.integers(0, len(shape) + 1))]:
        while rng.random() < 0.15:
            items.append(None)
        r = int(rng.integers(0, 6 if advanced else 3)) if n else 1
        if r == 0:
            items.append(int(rng.integers(-n, n)))
        elif r == 1:
            items.append(_random_slice(rng, n))
        elif r == 2:
            items.append(slice(None))
        elif r == 3:
            dtype = INDEX_DTYPES[int(rng.integers(0, len(INDEX_DTYPES)))]
            lo = 0 if np.dtype(dtype).kind == "u" else -n
            size = tuple(int(s) for s in rng.integers(1, 3, size=int(rng.integers(0, 3))))
            items.append(rng.integers(lo, n, size=size).astype(dtype))
        elif r == 4:
            items.append([int(v) for v in rng.integers(-n, n, size=int(rng.integers(0, 4)))])
        else:
            items.append(rng.random(n) < 0.5)  # a static boolean mask
    if rng.random() < 0.3:
        items.insert(int(rng.integers(0, len(items) + 1)), Ellipsis)
    return tuple(items)


def _valid_indices(rng: np.random.Generator, x: np.ndarray, count: int, advanced: bool = True) -> list[Any]:
    out: list[Any] = []
    while len(out) < count:
        index = _random_index(rng, x.shape, advanced)
        try:
            x[index]  # NumPy rejects index arrays that do not broadcast together: skip those
        except IndexError:
            continue
        out.append(index)
    return out


def _check(got: Any, want: np.ndarray, what: Any) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype)
    np.testing.assert_array_equal(got, want, err_msg=repr(what))


# ----------------------------------------------------------------------------------------------- reading


def test_random_static_indices_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal(SHAPE)
    indices = _valid_indices(rng, x, 120)
    outs = ts.program(lambda t: tuple(t[i] for i in indices))(x)  # one compile for all of them
    for index, got in zip(indices, outs):
        _check(got, x[index], index)
    for index in indices[:8]:  # eager: NumPy arrays become runtime inputs, masks stay static
        _check(ts.asarray(x)[index], x[index], index)
    for shape in ((), (0, 3), (2, 0, 1)):  # rank 0 and empty extents
        y = rng.standard_normal(shape)
        cases = _valid_indices(rng, y, 6, advanced=False) + [(), (Ellipsis,), (None,), (Ellipsis, None)]
        ys = ts.program(lambda t, cases=cases: tuple(t[i] for i in cases))(y)
        for index, got in zip(cases, ys):
            _check(got, y[index], index)


def test_staged_index_arrays_of_every_int_dtype(rng: np.random.Generator) -> None:
    x = rng.standard_normal(SHAPE)
    patterns: list[Callable[[Any, Any, Any], Any]] = [
        lambda t, i, j: t[i],
        lambda t, i, j: t[:, i],
        lambda t, i, j: t[i, :, j],  # separated: the broadcast axes go first
        lambda t, i, j: t[i, j],
        lambda t, i, j: t[..., i[..., None], ::-1, j],
        lambda t, i, j: t[1, None, i, -1],
    ]
    for dtype in (np.int8, np.int64, np.uint8, np.uint32):
        lo = 0 if np.dtype(dtype).kind == "u" else -3
        i = rng.integers(lo, 3, size=(2, 3)).astype(dtype)
        j = rng.integers(lo, 2, size=(3,)).astype(dtype)
        outs = ts.program(lambda t, i, j: tuple(p(t, i, j) for p in patterns))(x, i, j)
        for k, got in enumerate(outs):
            _check(got, patterns[k](x, i, j), (dtype, k))


def test_wide_dynamic_indices_saturate_instead_of_wrapping() -> None:
    # Before: u32 2**31 + 5 wrapped to a negative int32 (clamped to 0) and i64 2**32 + 1 truncated to 1, so a
    # read returned x[0] / x[1] and an add landed on element 1; they are out of range: reads clamp to the last
    # element and updates are dropped, as in XLA and JAX (with x64).
    x = np.arange(300.0)
    read = ts.program(lambda t, i, j: (t[i], t[j]))
    got = read(x, np.array([2**31 + 5, 7], np.uint32), np.array([2**32 + 1, -(2**40), -2], np.int64))
    _check(got[0], np.array([299.0, 7.0]), "u32")
    _check(got[1], np.array([299.0, 0.0, 298.0]), "i64")
    add = ts.program(lambda t, i, j: (t.at[i].add(1.0), t.at[j].add(1.0)))
    a, b = add(x[:3], np.array([2**31 + 1, 1], np.uint32), np.array([2**32 + 1, -(2**33) + 1, 2], np.int64))
    _check(a, np.array([0.0, 2.0, 2.0]), "u32 add")
    _check(b, np.array([0.0, 1.0, 3.0]), "i64 add")
    # A list mixing staged scalars with static ints: the same (it converted to int32 first), and its static
    # ints are range-checked (9 was clamped silently before).
    mixed = ts.program(lambda t, i, j: t[[i, j, -1]])(x, np.int64(2**40), np.uint32(2**31 + 1))
    _check(mixed, np.array([299.0, 299.0, 299.0]), "list of staged scalars")
    with pytest.raises(IndexError, match=r"index 300 is out of range"):
        ts.program(lambda t, i: t[[i, 300]]).stage(x, np.int32(0))
    # Any index into an empty axis is out of range: an error while staging, not zeros or a dynamic_slice error.
    for index in (np.int32(0), np.zeros(2, np.int32)):
        with pytest.raises(IndexError, match=r"getitem: index i32\[.*\] into axis 0 of f64\[0, 3\], which is empty"):
            ts.program(lambda t, i: t[i]).stage(np.zeros((0, 3)), index)


def test_dynamic_out_of_range_reads_clamp_and_updates_drop(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3))
    i = np.array([0, 4, 5, 9, -1, -5, -6, -20], np.int32)
    wrapped = np.where(i < 0, i + 5, i)
    f = ts.program(lambda t, i, s: (t[i], t[s, 1:], t.at[i].add(1.0), t.at[i, 0].set(-7.0)))
    for s in (2, 7, -8):
        got, row, added, setted = f(x, i, np.int32(s))
        _check(got, x[np.clip(wrapped, 0, 4)], "gather clamps")
        _check(row, x[np.clip(s + 5 if s < 0 else s, 0, 4), 1:], "dynamic_slice clamps")
        keep = (wrapped >= 0) & (wrapped < 5)
        want = x.copy()
        np.add.at(want, wrapped[keep], 1.0)
        _check(added, want, "scatter drops")
        want = x.copy()
        want[wrapped[keep], 0] = -7.0
        _check(setted, want, "scatter-set drops")
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jx = jnp.asarray(x.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(jx[i]), x.astype(np.float32)[np.clip(wrapped, 0, 4)])
    np.testing.assert_allclose(np.asarray(jx.at[i].add(1.0)), np.asarray(f(x, i, np.int32(0))[2]), rtol=1e-6)


# ----------------------------------------------------------------------------------------------- updates


_NP_AT = {"add": np.add.at, "subtract": np.subtract.at, "mul": np.multiply.at, "min": np.minimum.at,
          "max": np.maximum.at}


def test_random_updates_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal(SHAPE)
    cases = []
    for index in _valid_indices(rng, x, 50):
        view = x[index]
        combiner = ["add", "subtract", "mul", "min", "max", "set"][len(cases) % 6]
        if combiner == "set":  # one winner per element is unspecified with repeats: use unique targets only
            ids = np.arange(x.size).reshape(x.shape)[index]
            if np.unique(ids).size != ids.size:
                combiner = "add"
        # values broadcast: drop some leading axes and stretch some size-1 axes
        vshape = tuple(1 if rng.random() < 0.3 else n for n in view.shape[int(rng.integers(0, view.ndim + 1)):])
        cases.append((index, combiner, rng.standard_normal(vshape)))

    def apply(t: Any, *values: Any) -> tuple[Any, ...]:
        return tuple(getattr(t.at[i], c)(v) for (i, c, _), v in zip(cases, values))

    outs = ts.program(apply)(x, *(v for _, _, v in cases))
    for (index, combiner, v), got in zip(cases, outs):
        want = x.copy()
        if combiner == "set":
            want[index] = v
        else:
            _NP_AT[combiner](want, index, np.broadcast_to(v, x[index].shape))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, err_msg=repr((index, combiner)))
    index, combiner, v = cases[0]
    want = np.asarray(outs[0])
    np.testing.assert_allclose(np.asarray(getattr(ts.asarray(x).at[index], combiner)(v)), want, rtol=1e-12)


def test_staged_repeated_indices_accumulate_and_scalars_adopt_dtype(rng: np.random.Generator) -> None:
    xi = rng.integers(-5, 5, size=(4, 3)).astype(np.int32)
    i = np.array([1, -3, 1, 3, 1], np.int32)
    f = ts.program(lambda t, i: (t.at[i].add(2), t.at[i, 1:].mul(-1), t.at[i].subtract([1, 2, 3]),
                                 t.at[i].max(4), t.at[:, i[:3]].min(0), t.at[i[3:]].get()))
    add, mul, sub, mx, mn, get = f(xi, i)
    want = xi.copy()
    np.add.at(want, i, 2)
    _check(add, want, "add")
    want = xi.copy()
    np.multiply.at(want, (i, slice(1, None)), -1)
    _check(mul, want, "mul")
    want = xi.copy()
    np.subtract.at(want, i, np.array([1, 2, 3], np.int32))
    _check(sub, want, "subtract")
    want = xi.copy()
    np.maximum.at(want, i, 4)
    _check(mx, want, "max")
    want = xi.copy()
    np.minimum.at(want, (slice(None), i[:3] % 3), 0)
    _check(mn, want, "min")
    _check(get, xi[i[3:]], "get")


def test_update_value_dtypes() -> None:
    xi = ts.asarray(np.arange(4, dtype=np.int32))
    _check(xi.at[[0, 1]].set([7, -2]), np.array([7, -2, 2, 3], np.int32), "int list")
    # Before: a list of floats was truncated silently into an int array while a float scalar was an error.
    with pytest.raises(ts.DTypeError, match=r"at\[\]\.set.*1\.5.*i32\[4\][\s\S]*test_fuzz_indexing\.py:"):
        xi.at[[0, 1]].set([1.5, 2])
    with pytest.raises(ts.DTypeError, match=r"at\[\]\.add"):
        xi.at[0].add(2.5)  # JAX casts; we keep the library's rule for Python floats
    # Before: ValueError / TypeError from NumPy's conversion, without the op or the user's line.
    with pytest.raises(ts.DTypeError, match=r"value 1099511627776 does not fit[\s\S]*test_fuzz_indexing\.py:"):
        xi.at[[0, 1]].set([1, 2**40])
    with pytest.raises(ts.DTypeError, match=r"complex"):
        ts.asarray(np.zeros(2, np.float32)).at[[0, 1]].set([1j, 1])
    with pytest.raises(ts.ShapeError, match=r"rectangular"):
        ts.asarray(np.zeros((2, 2), np.float32)).at[[0, 1]].set([[1.0], [1.0, 2.0]])
    with pytest.raises(ts.DTypeError, match=r"f64"):
        ts.asarray(np.zeros(2, np.float32)).at[0].set(np.float64(1.0))


# ------------------------------------------------------------------------------------------ boolean masks


def test_static_boolean_masks_match_numpy(rng: np.random.Generator) -> None:
    # Before: every boolean mask was rejected ("the result's shape would depend on the data"), even static ones.
    x = rng.standard_normal((3, 4, 2))
    m2, m1 = x[..., 0] > 0, rng.random(4) < 0.5
    indices: list[Any] = [m2, (slice(None), m1), (m2, 1), ([0, 2], m1[:, None].repeat(2, 1)[:, 0], 0), True,
                          False, (Ellipsis, True), ([0, 1, 2], True), (slice(None), True, [1, 3]),
                          ([0, 1], slice(None), True), [True, False, True], x > 10, ((0, 1), (1, 2))]
    outs = ts.program(lambda t: tuple(t[i] for i in indices))(x)
    for index, got in zip(indices, outs):
        _check(got, x[index], index)
    for index in (m2, ts.asarray(m2), [True, False, True]):  # eager, also a concrete device mask
        _check(ts.asarray(x)[index], x[np.asarray(index)], "eager mask")
    want = x.copy()
    want[m2] = 0.0
    _check(ts.asarray(x).at[m2].set(0.0), want, "at mask")
    want = x.copy()
    want[m2] += np.arange(m2.sum())[:, None]
    _check(ts.program(lambda t, v: t.at[m2].add(v))(x, np.arange(m2.sum(), dtype=np.float64)[:, None]), want, "add")
    with pytest.raises(IndexError, match=r"mask of shape \(2,\)[\s\S]*test_fuzz_indexing\.py:"):
        ts.asarray(x)[np.array([True, False])]
    with pytest.raises(ts.ShapeError, match=r"depend on the data[\s\S]*tnp\.where[\s\S]*test_fuzz_indexing\.py:"):
        ts.program(lambda t: t[t > 0]).stage(x)
    with pytest.raises(ts.ShapeError, match=r"depend on the data"):
        ts.program(lambda t: t.at[t > 0].set(0.0)).stage(x)


# ----------------------------------------------------------------------------------------------- errors


def test_out_of_range_static_indices_are_index_errors() -> None:
    # Before: ints and lists raised a bare ShapeError, NumPy arrays a plain IndexError; now one error type that
    # is both (NumPy code catches IndexError), naming the op and the user's line.
    x = ts.asarray(np.zeros((3, 4), np.float32))
    for index in (3, (0, -5), [0, 3], np.array([0, 4], np.int64)[None], (slice(None), np.array([-5]))):
        for fn in (lambda: x[index], lambda: x.at[index].add(1.0)):
            with pytest.raises(IndexError, match=r"(getitem|at\[\]\.add).*out of (range|bounds)") as info:
                fn()
            assert isinstance(info.value, ts.ShapeError) and "test_fuzz_indexing.py:" in str(info.value)
    with pytest.raises(IndexError, match=r"index 9 is out of range"):
        ts.program(lambda t: t[:, 9]).stage(np.zeros((3, 4)))


def test_eager_index_forms_numpy_accepts() -> None:
    x = np.arange(12.0).reshape(3, 4)
    t = ts.asarray(x)
    i = ts.asarray(np.int32(1))
    # Before: TypeError "static argument ... must be hashable" for a concrete device scalar slice bound, and
    # "dtype uint64 is not supported" for uint64 / uint16 index arrays; nested tuples were "unsupported".
    _check(t[i:], x[1:], "device bound")
    _check(t[np.array([0, 2], np.uint64)], x[[0, 2]], "u64")
    _check(t[np.array([2, 0], np.uint16), 1], x[[2, 0], 1], "u16")
    _check(t[(0, 1), (1, 2)], x[[0, 1], [1, 2]], "nested tuples")
    with pytest.raises(IndexError):
        t[np.array([0, 2**63], np.uint64)]
    with pytest.raises(ts.ShapeError, match=r"slice bounds must be static"):
        ts.program(lambda t, i: t[i : i + 2]).stage(x, np.int32(0))


# ------------------------------------------------------------------------------------------- transforms


def _loss(xnp: Any, x: Any, v: Any, i: Any, j: Any) -> Any:
    a = x[i, 1:]
    b = x.at[j].add(v)
    c = x.at[i[:2], ::2].set(v[:2, ::2])
    d = x.at[j].mul(v)
    e = x.at[j].max(v)
    return (a * a).sum() + (b * b * b).sum() + (c * c).sum() + (d * d).sum() + (e * e).sum()


def test_grads_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 3))
    v = rng.standard_normal((3, 3))
    i = np.array([2, -1, 0], np.int32)
    j = np.array([1, 1, 3], np.int32)  # a repeated index: add and mul accumulate

    def ref(x: np.ndarray, v: np.ndarray) -> float:
        b, d, e = x.copy(), x.copy(), x.copy()
        np.add.at(b, j, v)
        np.multiply.at(d, j, v)
        np.maximum.at(e, j, v)
        c = x.copy()
        c[i[:2], ::2] = v[:2, ::2]
        a = x[i, 1:]
        return float((a * a).sum() + (b**3).sum() + (c * c).sum() + (d * d).sum() + (e * e).sum())

    gx, gv = ts.grad(lambda x, v, i, j: _loss(None, x, v, i, j), argnums=(0, 1))(x, v, i, j)
    eps = 1e-6
    for arg, got in ((0, gx), (1, gv)):
        base = [x, v]
        fd = np.zeros_like(base[arg])
        for k in np.ndindex(fd.shape):
            hi, lo = [b.copy() for b in base], [b.copy() for b in base]
            hi[arg][k] += eps
            lo[arg][k] -= eps
            fd[k] = (ref(*hi) - ref(*lo)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-5, atol=1e-6)


def test_vmap_of_updates_and_reads_matches_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((3, 6))
    ids = rng.integers(-6, 6, size=(3, 4)).astype(np.int32)
    ids[:, 1] = ids[:, 0]  # repeats within an example
    vs = rng.standard_normal((3, 4))
    f = ts.vmap(lambda x, i, v: (x.at[i].add(v), x[i], x.at[i[0]].set(v[0]), x.at[i].add(1.0)))
    add, read, one, bcast = f(xs, ids, vs)
    for b in range(3):
        want = xs[b].copy()
        np.add.at(want, ids[b], vs[b])
        np.testing.assert_allclose(np.asarray(add)[b], want, rtol=1e-12)
        _check(np.asarray(read)[b], xs[b][ids[b]], "read")
        want = xs[b].copy()
        want[ids[b, 0]] = vs[b, 0]
        _check(np.asarray(one)[b], want, "set")
        want = xs[b].copy()
        np.add.at(want, ids[b], 1.0)
        np.testing.assert_allclose(np.asarray(bcast)[b], want, rtol=1e-12)
    shared = ts.vmap(lambda i, v: ts.asarray(xs[0]).at[i].add(v))(ids, vs)  # only the indices are batched
    for b in range(3):
        want = xs[0].copy()
        np.add.at(want, ids[b], vs[b])
        np.testing.assert_allclose(np.asarray(shared)[b], want, rtol=1e-12)
