"""Index tools (unravel_index, ravel_multi_index, diag_indices, fill_diagonal, put_along_axis, ix_, mgrid, ogrid,
s_, index_exp, r_, c_), unstack, matvec/vecmat, vectorize, apply_along_axis/apply_over_axes and packbits/unpackbits
against NumPy on seeded random inputs, eagerly and staged; gradients against central finite differences; vmap
against a Python loop; errors that name the op and the line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from directional_grads import assert_grads_match_finite_differences
from tensorstage import numpy as tnp

from staging_errors import check_staging_errors


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def _close(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


# ------------------------------------------------------------------------------ flat and multi-indices


def test_unravel_and_ravel_match_numpy(rng: np.random.Generator) -> None:
    for shape in [(2, 3, 4), (7,), (1, 5), (3, 1, 2)]:
        total = int(np.prod(shape))
        for idx in [rng.integers(0, total, size=(3, 5)), rng.integers(0, total, size=()), np.zeros(0, np.int64)]:
            for order in ("C", "F"):
                want = np.unravel_index(idx, shape, order=order)
                got = tnp.unravel_index(idx, shape, order=order)
                assert len(got) == len(shape)
                for g, w in zip(got, want):
                    _same(g, w)  # the indices' dtype (int64 here)
                _same(tnp.ravel_multi_index(want, shape, order=order), np.ravel_multi_index(want, shape, order=order))
    coords = (rng.integers(-7, 9, size=(1, 6)).astype(np.int32), rng.integers(-5, 8, size=(2, 1)).astype(np.int32))
    for mode in ("wrap", "clip", ("clip", "wrap")):
        b = np.broadcast_arrays(*coords)
        _same(tnp.ravel_multi_index(coords, (4, 3), mode=mode), np.ravel_multi_index(b, (4, 3), mode=mode))
    _same(tnp.ravel_multi_index((np.int32(2), 1), (4, 3)), np.int32(7))
    for g, w in zip(tnp.unravel_index(5, (3, 4)), np.unravel_index(5, (3, 4))):
        _same(g, np.int32(w))  # a Python int is i32
    _same(tnp.unravel_index(np.uint8(200), (16, 16))[0], np.uint8(12))  # the flat size 256 does not fit u8


def test_unravel_and_ravel_staged_clip_like_jax(rng: np.random.Generator) -> None:
    shape = (3, 4, 5)

    @ts.program
    def run(i: Any, j: Any) -> Any:
        return (tnp.unravel_index(i, shape), tnp.unravel_index(i, shape, "F"), tnp.unravel_index(j, (300,)),
                tnp.ravel_multi_index(tnp.unravel_index(i, shape), shape, mode="clip"),
                tnp.unravel_index(j, (128,)), tnp.ravel_multi_index((j,), (128,), mode="wrap"))

    i = np.concatenate([rng.integers(0, 60, size=9), [-1, -60, -61, 60, 1000]]).astype(np.int32)
    j = np.array([-128, -1, 0, 127], np.int8)  # the flat size 300 does not fit i8: computed wider, returned as i8
    c, f, small, flat, edge, wrapped = run(i, j)  # 128 itself does not fit i8
    clipped = np.where(np.clip(i, -60, 59) < 0, np.clip(i, -60, 59) + 60, np.clip(i, -60, 59))
    for g, w in zip(c, np.unravel_index(clipped, shape)):
        _same(g, w.astype(np.int32))
    for g, w in zip(f, np.unravel_index(clipped, shape, order="F")):
        _same(g, w.astype(np.int32))
    _same(small[0], np.array([172, 299, 0, 127]).astype(np.int8))
    _same(flat, clipped.astype(np.int32))
    _same(edge[0], np.array([0, 127, 0, 127], np.int8))
    _same(wrapped, np.array([0, 127, 0, 127], np.int8))


def test_ravel_multi_index_raise_mode() -> None:
    with pytest.raises(ValueError, match=r"(?s)ravel_multi_index.*invalid entry.*test_numpy_index_tools.py:"):
        tnp.ravel_multi_index((np.array([0, 4]), np.array([1, 1])), (4, 3))
    with pytest.raises(ValueError, match=r"(?s)ravel_multi_index.*invalid entry"):
        tnp.ravel_multi_index((tnp.asarray(np.array([0, -1])), np.array([1, 1])), (4, 3))  # concrete: read back
    with pytest.raises(ValueError, match=r"(?s)ravel_multi_index.*mode='wrap'.*test_numpy_index_tools.py:"):
        ts.program(lambda i: tnp.ravel_multi_index((i, i), (3, 4)))(np.array([1, 2]))
    # static indices inside a program are checked, so 'raise' works there
    _same(ts.program(lambda i: tnp.ravel_multi_index((np.array([1, 2]), np.array([0, 3])), (3, 4)) + i)(0),
          np.array([4, 11], np.int64))
    with pytest.raises(ValueError, match=r"(?s)unravel_index.*out of bounds.*test_numpy_index_tools.py:"):
        tnp.unravel_index(np.array([3, 12]), (3, 4))
    with pytest.raises(ValueError, match="unravel_index.*out of bounds"):
        tnp.unravel_index([-1], (3, 4))


# ------------------------------------------------------------------------------------------- diagonals


def test_diag_indices_and_fill_diagonal_match_numpy(rng: np.random.Generator) -> None:
    for got, want in zip(tnp.diag_indices(4, 3), np.diag_indices(4, 3)):
        _same(got, want.astype(np.int32))
    assert tnp.diag_indices(3, 0) == ()
    cube = rng.standard_normal((3, 3, 3))
    for got, want in zip(tnp.diag_indices_from(cube), np.diag_indices_from(cube)):
        _same(got, want.astype(np.int32))
    cases: list[tuple[np.ndarray, Any, bool]] = [
        (rng.standard_normal((4, 4)), 2.5, False),
        (rng.standard_normal((7, 3)), rng.standard_normal(2), False),
        (rng.standard_normal((7, 3)), rng.standard_normal(2), True),  # tall, wrapped: NumPy's every cols + 1 rows
        (rng.standard_normal((3, 6)), rng.standard_normal((2, 2)), True),  # values flattened and cycled
        (rng.standard_normal((2, 5)), rng.standard_normal(9), False),  # more values than diagonal: truncated
        (cube, -1.0, False),
        (rng.integers(0, 9, size=(3, 4)).astype(np.int32), [7, 8], False),
        (rng.standard_normal((4, 4)), np.zeros(0), False),  # nothing to fill with: unchanged
        (np.zeros((0, 3)), 1.0, False),
    ]
    for a, val, wrap in cases:
        want = a.copy()
        np.fill_diagonal(want, val, wrap=wrap)
        _same(tnp.fill_diagonal(a, val, wrap=wrap, inplace=False), want)
    a = rng.standard_normal((5, 5)).astype(np.float32)
    staged = ts.program(lambda a, v: tnp.fill_diagonal(a, v, inplace=False))(a, np.arange(5, dtype=np.float32))
    want = a.copy()
    np.fill_diagonal(want, np.arange(5))
    _same(staged, want)


# ------------------------------------------------------------------------------------- put_along_axis


def test_put_along_axis_matches_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5, 3))
    for axis in (0, 1, -1):
        n = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = 6  # more indices than the axis: repeats, where the last update wins, as in NumPy
        idx = rng.integers(-n, n, size=shape)
        values = rng.standard_normal(shape)
        want = x.copy()
        np.put_along_axis(want, idx, values, axis)
        _same(tnp.put_along_axis(x, idx, values, axis, inplace=False), want)
        _same(tnp.put_along_axis(x, idx, 9.0, axis, inplace=False), _numpy_put(x, idx, 9.0, axis))
    flat = rng.integers(0, x.size, size=7)
    _same(tnp.put_along_axis(x, flat, -1.0, None, inplace=False), _numpy_put(x, flat, -1.0, None))
    # indices broadcasting against the operand on the other axes; values broadcasting to the indexed shape
    idx = rng.integers(0, 5, size=(1, 2, 3))
    _same(tnp.put_along_axis(x, idx, np.arange(3.0), 1, inplace=False), _numpy_put(x, idx, np.arange(3.0), 1))
    ints = rng.integers(0, 9, size=(3, 4)).astype(np.int32)
    _same(tnp.put_along_axis(ints, [[0], [3], [1]], 100, 1, inplace=False),
          _numpy_put(ints, np.array([[0], [3], [1]]), 100, 1))
    _same(tnp.put_along_axis(np.zeros((0, 3)), np.zeros((0, 2), np.int32), 1.0, 1, inplace=False), np.zeros((0, 3)))


def _numpy_put(x: np.ndarray, idx: np.ndarray, values: Any, axis: int | None) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, idx, values, axis)
    return out


def test_put_along_axis_staged_indices_drop_or_clip(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    idx = np.array([[1], [7], [-2]], np.int32)  # 7 is out of range
    v = np.array([[10.0], [20.0], [30.0]])

    @ts.program
    def run(x: Any, i: Any, v: Any) -> Any:
        return tnp.put_along_axis(x, i, v, 1, inplace=False), tnp.put_along_axis(x, i, v, 1, mode="clip", inplace=False)

    dropped, clipped = run(x, idx, v)
    _same(dropped, _numpy_put(x, np.array([[1], [0], [-2]]), np.array([[10.0], [x[1, 0]], [30.0]]), 1))
    _same(clipped, _numpy_put(x, np.array([[1], [3], [-2]]), v, 1))
    _same(tnp.put_along_axis(x, idx, v, 1, mode="clip", inplace=False), clipped)  # static indices clip on the host


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    v = rng.standard_normal((4, 3))
    x = rng.standard_normal((4, 5))
    idx = np.array([[0, 2, 2], [4, 1, 0], [3, 3, 3], [1, 0, 4]])  # repeats: only the last value counts
    with_respect_to_x = [
        lambda x: tnp.put_along_axis(x, idx, v, 1, inplace=False),
        lambda x: tnp.fill_diagonal(x, v[0], wrap=True, inplace=False),
        lambda x: tnp.matvec(x, x[0]),
        lambda x: tnp.vecmat(x[:, 0], x),
        lambda x: tnp.vectorize(lambda a, b: a * tnp.sin(b))(x, x[1]),
        lambda x: tnp.apply_along_axis(lambda r: tnp.sum(r**3), 1, x),
    ]
    with_respect_to_values = [
        lambda v: tnp.put_along_axis(x, idx, v, 1, inplace=False),
        lambda v: tnp.fill_diagonal(x, v[1:3], wrap=True, inplace=False),
    ]
    assert_grads_match_finite_differences(with_respect_to_x, rng, (4, 5))
    assert_grads_match_finite_differences(with_respect_to_values, rng, (4, 3))


def test_under_vmap_match_a_loop(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4, 4))
    idx = rng.integers(0, 4, size=(3, 4, 2)).astype(np.int32)
    flat = rng.integers(-20, 20, size=(3, 5)).astype(np.int32)
    bits = rng.integers(0, 2, size=(3, 11)).astype(np.uint8)

    def per_example(x: Any, idx: Any, flat: Any, bits: Any) -> Any:
        return (tnp.put_along_axis(x, idx, x[:, :2], 1, inplace=False), tnp.fill_diagonal(x, x[0], inplace=False),
                tnp.unravel_index(flat, (4, 4)), tnp.ravel_multi_index((flat, idx[0, 0]), (5, 4), mode="wrap"),
                tnp.packbits(bits), tnp.unpackbits(tnp.packbits(bits), count=11, bitorder="little"),
                tnp.unstack(x, axis=1), tnp.matvec(x, x[0]))

    got = ts.vmap(per_example)(x, idx, flat, bits)
    loop = ts.program(per_example)
    for i in range(3):
        for g, e in zip(_leaves(got), _leaves(loop(x[i], idx[i], flat[i], bits[i]))):
            _same(np.asarray(g)[i], e)


# ----------------------------------------------------------------------------------- index objects


def test_ix_mgrid_ogrid_and_index_expressions(rng: np.random.Generator) -> None:
    rows, mask, cols = [0, 2], np.array([True, False, True, True]), np.array([1], np.int64)
    got = tnp.ix_(rows, mask, cols)
    for g, w, dtype in zip(got, np.ix_(rows, mask, cols), (np.int32, np.int32, np.int64)):  # Python ints: i32
        _same(g, w.astype(dtype))
    x = rng.standard_normal((3, 4))
    _same(x[tuple(np.asarray(i) for i in tnp.ix_([2, 0], [3, 1, 1]))], x[np.ix_([2, 0], [3, 1, 1])])
    _same(ts.program(lambda x, r: x[tnp.ix_(r, np.array([0, 3]))])(x, np.array([1, 2])), x[np.ix_([1, 2], [0, 3])])
    assert tnp.ix_(np.zeros(0, bool))[0].shape == (0,)
    _same(tnp.mgrid[0:5, 0:3], np.mgrid[0:5, 0:3].astype(np.int32))
    _same(tnp.mgrid[-1:1:5j, 2:0:-1], np.mgrid[-1:1:5j, 2:0:-1].astype(np.float32))
    _same(tnp.mgrid[0:1:0.25], np.mgrid[0:1:0.25].astype(np.float32))
    got_o, want_o = tnp.ogrid[0:4, 0:1:3j], np.ogrid[0:4, 0:1:3j]
    assert len(got_o) == len(want_o)
    for g, w in zip(got_o, want_o):
        _same(g, w.astype(np.float32))
    _same(tnp.ogrid[2:6], np.arange(2, 6, dtype=np.int32))
    _same(x[tnp.s_[1:, ::2]], x[np.s_[1:, ::2]])
    assert tnp.index_exp[1:2] == np.index_exp[1:2]
    staged = ts.program(lambda x: x + tnp.astype(tnp.mgrid[0:3, 0:4][0], ts.f64))(x)
    _same(staged, x + np.mgrid[0:3, 0:4][0])


def test_r_and_c_match_numpy(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    i, j = np.array([1, 2, 3]), np.array([4, 5, 6])
    _same(tnp.r_[i, 0, 0, j], np.r_[i, 0, 0, j])
    _same(tnp.r_[-1:1:6j, 0.5, 2.0], np.r_[-1:1:6j, 0.5, 2.0].astype(np.float32))  # Python floats: f32
    _same(tnp.r_[0:4, 7, :3], np.r_[0:4, 7, :3].astype(np.int32))
    for directive in ("-1", "0,2", "0,2,0", "1,2,0", "0,3,1", "0,3,-1", "2,3,0", "0,3,-2"):
        for x, y in ((a, a), (b, b)):
            _same(tnp.r_[directive, x, y], np.r_[directive, x, y])
        _same(tnp.r_[directive, 0:3, 0:3], np.r_[directive, 0:3, 0:3].astype(np.int32))
    _same(tnp.r_["r", b, b], np.asarray(np.r_["r", b, b]))  # a 2-D tensor where NumPy gives an np.matrix
    _same(tnp.r_["c", b, b], np.asarray(np.r_["c", b, b]))
    for parts in [(b, b), (a, a), (b, 2.0 * b, a.T), (i[None], 0, 0, j[None])]:
        _same(tnp.c_[parts], np.c_[parts])
    _same(tnp.c_[np.zeros((0, 2)), np.zeros((0, 1))], np.c_[np.zeros((0, 2)), np.zeros((0, 1))])
    staged = ts.program(lambda a, b: (tnp.r_[b, 1.0, b[:1]], tnp.c_[b, a[0]], tnp.r_["0,2", a, b]))(a, b)
    for got, want in zip(staged, (np.r_[b, 1.0, b[:1]], np.c_[b, a[0]], np.r_["0,2", a, b])):
        _same(got, want)


# ------------------------------------------------------------------------------- unstack, matvec, vecmat


def test_unstack_matvec_vecmat_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4))
    for axis in (0, 1, -1):
        got = tnp.unstack(x, axis=axis)
        assert isinstance(got, tuple) and len(got) == x.shape[axis]
        for g, w in zip(got, [np.take(x, i, axis) for i in range(x.shape[axis])]):
            _same(g, w)
    assert tnp.unstack(np.zeros((0, 3))) == ()
    cases = [((3, 4), (4,)), ((2, 3, 4), (4,)), ((2, 3, 4), (2, 4)), ((1, 3, 4), (5, 4)), ((0, 3, 4), (4,))]
    for a_shape, b_shape in cases:
        a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
        _close(tnp.matvec(a, b), np.einsum("...mn,...n->...m", a, b))
        at = np.swapaxes(a, -1, -2)
        _close(tnp.vecmat(b, at), np.einsum("...n,...nm->...m", b, at))
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    got = ts.program(lambda a, b: (tnp.matvec(a, b), tnp.vecmat(a[:, :, 0], a), tnp.unstack(a, axis=2)))(a, b)
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.einsum("bn,bnm->bm", a[:, :, 0], a), rtol=1e-6)
    _same(got[2][3], a[:, :, 3])


# ---------------------------------------------------------------------------- vectorize and friends


def test_vectorize_matches_numpy(rng: np.random.Generator) -> None:
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def clipped_product(a: Any, b: Any, scale: float = 1.0) -> Any:
        return tnp.where(a > b, a * b, b) * scale

    want = np.vectorize(lambda a, b: (a * b if a > b else b) * 2.0)(x, y)
    _close(tnp.vectorize(clipped_product)(x, y, 2.0), want)
    _close(tnp.vectorize(clipped_product)(x, y, scale=np.full(4, 2.0)), want)  # a keyword argument, broadcast
    _close(tnp.vectorize(clipped_product, excluded={"scale"})(x, y, scale=2.0), want)
    _close(tnp.vectorize(clipped_product, excluded={1})(x, 0.5), np.where(x > 0.5, x * 0.5, 0.5))
    _close(tnp.vectorize(clipped_product)(x[:, :1], y[None, :]), np.where(x[:, :1] > y, x[:, :1] * y, y))
    assert np.asarray(tnp.vectorize(clipped_product)(1.5, 0.5)) == pytest.approx(0.75)

    matvec = tnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    m, v = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((1, 5, 4))
    _close(matvec(m, v), np.einsum("...mn,...n->...m", m, v))
    stats = tnp.vectorize(lambda r: (tnp.mean(r), tnp.max(r)), signature="(n)->(),()")
    mean, top = stats(x)
    _close(mean, x.mean(-1))
    _close(top, x.max(-1))
    outer = tnp.vectorize(lambda a, b: tnp.stack([a, b]), signature="(),()->(k)")
    _close(outer(x, y), np.stack(np.broadcast_arrays(x, y), -1))
    staged = ts.program(lambda x, y: tnp.vectorize(clipped_product)(x, y))(x, y)
    _close(staged, want / 2.0)
    empty = tnp.vectorize(clipped_product)(np.zeros((0, 4)), y)
    assert np.asarray(empty).shape == (0, 4)


def test_apply_along_and_over_axes_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4))
    for axis in (0, 1, 2, -1):
        _close(tnp.apply_along_axis(lambda r: tnp.sum(r**2), axis, x),
               np.apply_along_axis(lambda r: np.sum(r**2), axis, x))
        _close(tnp.apply_along_axis(lambda r, k: r[::-1] * k, axis, x, 2.0),
               np.apply_along_axis(lambda r, k: r[::-1] * k, axis, x, 2.0))
        _close(tnp.apply_along_axis(lambda r: tnp.stack([r.min(), r.max()]), axis, x),
               np.apply_along_axis(lambda r: np.stack([r.min(), r.max()]), axis, x))
    for axes in ([0, 2], 1, (2, 0, 1), [-1]):
        _close(tnp.apply_over_axes(tnp.sum, x, axes), np.apply_over_axes(np.sum, x, axes))
    _close(tnp.apply_over_axes(lambda a, k: tnp.cumsum(a, axis=k), x, [1]), np.cumsum(x, axis=1))
    staged = ts.program(lambda x: (tnp.apply_along_axis(tnp.sort, 1, x), tnp.apply_over_axes(tnp.max, x, [0, 1])))(x)
    _close(staged[0], np.sort(x, 1))
    _close(staged[1], np.apply_over_axes(np.max, x, [0, 1]))


# ------------------------------------------------------------------------------------------------ bits


def test_packbits_and_unpackbits_match_numpy(rng: np.random.Generator) -> None:
    inputs = [
        rng.integers(0, 2, size=(3, 13)).astype(np.uint8),
        rng.random((2, 9, 2)) < 0.5,
        rng.integers(-3, 3, size=(17,)).astype(np.int32),  # any non-zero counts as a 1
        np.zeros((0, 5), np.uint8),
        np.array(True),
    ]
    for a in inputs:  # every variant of one input in one program: one compile
        variants = [(axis, order) for axis in [None, *range(a.ndim)] for order in ("big", "little")]
        packed = [np.packbits(a, axis=axis, bitorder=order) for axis, order in variants]
        counts = [(None, 0, 3, -2, p.shape[axis or 0] * 8 + 5) if p.size else (None, 0)  # NumPy pads empty
                  for p, (axis, _) in zip(packed, variants)]                            # with garbage

        def all_variants(a: Any, packed: Any) -> Any:
            return ([tnp.packbits(a, axis=axis, bitorder=order) for axis, order in variants],
                    [[tnp.unpackbits(p, axis=axis, count=c, bitorder=order) for c in cs]
                     for p, (axis, order), cs in zip(packed, variants, counts)])

        got_packed, got_bits = ts.program(all_variants)(a, packed)
        for g, p, bits, (axis, order), cs in zip(got_packed, packed, got_bits, variants, counts):
            _same(g, p)
            for b, c in zip(bits, cs):
                _same(b, np.unpackbits(p, axis=axis, count=c, bitorder=order))
    _same(tnp.unpackbits(np.uint8(177)), np.unpackbits(np.array([177], np.uint8)))
    _same(tnp.unpackbits(np.zeros(0, np.uint8), count=3), np.zeros(3, np.uint8))
    b = rng.integers(0, 256, size=(4, 3)).astype(np.uint8)
    staged = ts.program(lambda b: tnp.packbits(tnp.unpackbits(b, axis=1), axis=1))(b)
    _same(staged, b)


# --------------------------------------------------------------------------------------------- errors


def test_errors_name_op_and_line() -> None:
    x, i, v = ts.Spec((3, 4), f32), ts.Spec((3, 2), ts.i32), ts.Spec((3,), f32)
    cases = [
        (lambda x: tnp.unravel_index(x, (3, 4)), (x,), ts.DTypeError, ["unravel_index", "integers", "f32[3, 4]"]),
        (lambda i: tnp.ravel_multi_index((i, i), (3, 4), mode="clip") + tnp.ravel_multi_index((i,), (3, 4)), (i,),
         ValueError, ["ravel_multi_index", "one index array per dim: 1 for dims (3, 4)"]),
        (lambda i: tnp.ravel_multi_index((i, i), (3, 4), mode="bad"), (i,), ValueError, ["ravel_multi_index", "mode"]),
        (lambda x: tnp.ravel_multi_index((x, x), (3, 4), mode="wrap"), (x,), ts.DTypeError,
         ["ravel_multi_index", "integers"]),
        (lambda i: tnp.ravel_multi_index((tnp.astype(i, ts.i8),) * 2, (30, 30), mode="wrap"), (i,), ts.DTypeError,
         ["ravel_multi_index", "do not fit i8", "i64"]),
        (lambda x: tnp.fill_diagonal(x[0], 1.0, inplace=False),
         (x,), ts.ShapeError, ["fill_diagonal", "rank >= 2", "f32[4]"]),
        (lambda x: tnp.fill_diagonal(tnp.stack([x, x]), 1.0, inplace=False), (x,), ts.ShapeError,
         ["fill_diagonal", "one size", "f32[2, 3, 4]"]),
        (lambda x: tnp.put_along_axis(x, x, 1.0, 1, inplace=False),
         (x,), ts.DTypeError, ["put_along_axis", "integers", "f32[3, 4]"]),
        (lambda x, i: tnp.put_along_axis(x, i[0], 1.0, 1, inplace=False),
         (x, i), ts.ShapeError, ["put_along_axis", "rank"]),
        (lambda x, i: tnp.put_along_axis(x, i, 1.0, 2, inplace=False),
         (x, i), ts.ShapeError, ["put_along_axis", "axis 2"]),
        (lambda x, i: tnp.put_along_axis(x, i, np.ones(3), 1, inplace=False),
         (x, i), ts.DTypeError, ["put_along_axis", "f64[3]"]),
        (lambda x, i: tnp.put_along_axis(x, i, x, 1, inplace=False),
         (x, i), ts.ShapeError, ["put_along_axis", "broadcast"]),
        (lambda x, v: tnp.matvec(x, v), (x, v), ts.ShapeError, ["matvec", "f32[3, 4]", "f32[3]"]),
        (lambda x, v: tnp.vecmat(x, v), (x, v), ts.ShapeError, ["vecmat", "rank >= 2"]),
        (lambda x: tnp.unstack(x, axis=2), (x,), ts.ShapeError, ["unstack", "axis 2"]),
        (lambda x: tnp.unstack(x[0, 0]), (x,), ts.ShapeError, ["unstack", "rank >= 1"]),
        (lambda x: tnp.packbits(x), (x,), ts.DTypeError, ["packbits", "integer or bool", "f32[3, 4]"]),
        (lambda i: tnp.unpackbits(i), (i,), ts.DTypeError, ["unpackbits", "u8", "i32[3, 2]"]),
        (lambda i: tnp.packbits(i, bitorder="middle"), (i,), ValueError, ["packbits", "bitorder"]),
        (lambda x: tnp.apply_along_axis(tnp.sum, 3, x), (x,), ts.ShapeError, ["apply_along_axis", "axis 3"]),
        (lambda x: tnp.apply_over_axes(lambda a, k: a[0, 0], x, [0]), (x,), ValueError, ["apply_over_axes", "rank"]),
        (lambda x: tnp.apply_over_axes(tnp.sum, x, [0, 2]), (x,), ts.ShapeError, ["apply_over_axes", "axis 2"]),
        (lambda x, v: tnp.vectorize(lambda a, b: a @ b, signature="(n,k),(k)->(n)")(x, v), (x, v), ValueError,
         ["vectorize", "'k'", "sizes 4 and 3"]),
        (lambda x: tnp.vectorize(lambda a: a[0], signature="(n)->(n)")(x), (x,), ValueError,
         ["vectorize", "output 0"]),
        (lambda x, v: tnp.vectorize(lambda a, b: a + b)(x, v), (x, v), ts.ShapeError,
         ["vectorize", "(3, 4) and (3)", "do not broadcast"]),
        (lambda i: tnp.ix_(i), (i,), ts.ShapeError, ["ix_", "1-D", "i32[3, 2]"]),
        (lambda i: tnp.ix_(i[:, 0] > 0), (i,), ts.ShapeError, ["ix_", "boolean"]),
    ]
    check_staging_errors(cases, "test_numpy_index_tools.py")
    eager = [
        (lambda: tnp.fill_diagonal(np.eye(3), 1.0, inplace=True), ValueError, "fill_diagonal.*immutable"),
        (lambda: tnp.fill_diagonal(np.eye(3), 1.0), ValueError, "fill_diagonal.*inplace=False"),  # JAX's default
        (lambda: tnp.put_along_axis(np.eye(3), np.zeros((3, 1), int), 1.0, 1, True), ValueError, "put_along_axis"),
        (lambda: tnp.put_along_axis(np.eye(3), np.array([[3]]), 1.0, 1, inplace=False),
         IndexError, "put_along_axis.*out of bounds"),
        (lambda: tnp.put_along_axis(np.eye(3), np.array([[1.0]]), 1.0, 1, inplace=False),
         ts.DTypeError, "put_along_axis.*integers"),
        (lambda: tnp.put_along_axis(np.eye(3), np.array([[1]]), 1.0, 1, mode="fill", inplace=False), ValueError,
         "put_along_axis.*mode"),
        (lambda: tnp.ix_(np.ones((2, 2), bool)), ts.ShapeError, "ix_.*1-D.*bool"),
        (lambda: tnp.diag_indices(-1), ValueError, "diag_indices.*non-negative"),
        (lambda: tnp.diag_indices(2.5), TypeError, "diag_indices.*int"),  # type: ignore[arg-type]
        (lambda: tnp.diag_indices_from(np.zeros((2, 3))), ts.ShapeError, "diag_indices_from.*one size"),
        (lambda: tnp.unravel_index([1], (3, -1)), ValueError, "unravel_index.*non-negative"),
        (lambda: tnp.unravel_index([1], (3, 4), order="K"), ValueError, "unravel_index.*order"),
        (lambda: tnp.mgrid[tnp.asarray(np.int32(3))], TypeError, "mgrid.*slices"),
        (lambda: tnp.vectorize(lambda a: a, signature="(n->()"), ValueError, "vectorize.*signature"),
        (lambda: tnp.r_[np.ones(3), np.ones(2, np.float32)], ts.DTypeError, "r_.*f64.*f32.*never promotes"),
        (lambda: tnp.c_[np.ones(3), np.ones(2)], ts.ShapeError, "c_.*must agree"),
        (lambda: tnp.r_["x", np.ones(3)], ValueError, "r_.*directive 'x'"),
        (lambda: tnp.r_[np.ones(3), "r"], ValueError, "r_.*first entry"),
        (lambda: tnp.vectorize(lambda a: a, excluded={-1}), ValueError, "vectorize.*negative"),
        (lambda: tnp.unpackbits(np.array([1], np.uint8), count=1.5), TypeError,  # type: ignore[arg-type]
         "unpackbits.*count"),
        (lambda: tnp.unpackbits(np.array([1], np.uint8), count=-9), ValueError, "unpackbits.*count=-9"),
    ]
    for fn, kind, pattern in eager:
        with pytest.raises(kind, match=f"(?s){pattern}"):
            fn()
