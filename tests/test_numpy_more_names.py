"""The last of jax.numpy's names in ``tensorstage.numpy``: dtype aliases and type names, ``iterable``, printing,
``einsum_path``, ``mask_indices``, ``put``/``place``, ``sort_complex`` and host IO, against NumPy on seeded random
inputs, eagerly and staged; errors that name the op and the line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import f32
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.float16,
                                np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.bfloat16)]


def _values(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return (rng.standard_normal(shape) * 20).astype(dtype)


# ------------------------------------------------------------------------------------------ type names


def test_dtype_aliases_name_numpys_dtypes() -> None:
    for name in ("single", "double", "csingle", "cdouble", "int_", "bool"):
        assert np.dtype(getattr(tnp, name)) == np.dtype(getattr(np, name)), name
        assert tnp.zeros(2, dtype=getattr(tnp, name)).dtype == np.dtype(getattr(np, name)), name
    assert tnp.bool is ts.bool_ and tnp.single is ts.f32 and tnp.int_ is ts.i64
    # The legacy aliases NumPy 2 removed, as JAX keeps them.
    assert tnp.float_ is ts.f64 and tnp.complex_ is ts.c128
    assert tnp.ones(3, dtype=tnp.float_).dtype == np.float64
    assert tnp.dtype is np.dtype and tnp.dtype(tnp.float32) == np.float32
    assert tnp.uint is ts.u64 and tnp.uint16 is ts.u16 and tnp.uint64 is ts.u64  # NumPy's and JAX's uint: uint64
    assert not hasattr(tnp, "float8_e4m3fn") and not hasattr(tnp, "int4")


def test_only_unsupported_dtypes_of_jax_numpy_are_absent() -> None:
    jnp = pytest.importorskip("jax.numpy")
    missing = {n for n in dir(jnp) if not n.startswith("_") and not hasattr(tnp, n)}
    # Sub-byte ints and small floats: see names.py's docstring.
    unsupported = {n for n in missing if n.startswith(("float4_", "float6_", "float8_"))} | {
        "int1", "int2", "int4", "uint1", "uint2", "uint4"}
    assert missing <= unsupported, sorted(missing - unsupported)


def test_abstract_types_answer_issubdtype_as_numpy() -> None:
    for dtype in DTYPES[:-1]:
        for abstract in ("character", "flexible", "object_", "number", "inexact"):
            expected = np.issubdtype(dtype, getattr(np, abstract))
            assert tnp.issubdtype(dtype, getattr(tnp, abstract)) == expected, (dtype, abstract)
    assert tnp.issubdtype(np.str_, tnp.character) and tnp.issubdtype(np.object_, tnp.object_)
    with pytest.raises(TypeError, match=r"zeros: dtype object is not supported \(supported: .*c128\)"):
        tnp.zeros(2, dtype=tnp.object_)


def test_ndarray_is_the_type_of_device_arrays_and_staged_values() -> None:
    x = tnp.arange(3)
    assert isinstance(x, tnp.ndarray) and not isinstance(np.arange(3), tnp.ndarray)
    seen: list[bool] = []

    def f(v: Any) -> Any:
        seen.append(isinstance(v, tnp.ndarray) and isinstance(v * 2, tnp.ndarray))
        return v

    ts.program(f)(x)
    assert seen == [True]
    assert tnp.ComplexWarning is np.exceptions.ComplexWarning and issubclass(tnp.ComplexWarning, RuntimeWarning)


def test_iterable_matches_numpy_and_knows_rank_0_tensors() -> None:
    for value in (3, 2.5, [1], (), "ab", np.float32(1), np.zeros(()), np.zeros(2), {1: 2}, None):
        assert tnp.iterable(value) == np.iterable(value), value
    assert tnp.iterable(tnp.zeros(2)) and not tnp.iterable(tnp.zeros(()))
    seen: list[bool] = []
    ts.program(lambda v: (seen.append(tnp.iterable(v) and not tnp.iterable(v[0])), v)[1])(np.zeros(2, np.float32))
    assert seen == [True]


# ---------------------------------------------------------------------------------------------- printing


def test_array_repr_and_str_match_repr_str_and_numpy(rng: np.random.Generator) -> None:
    for host in (rng.standard_normal((3, 4)).astype(np.float32), np.arange(5, dtype=np.int8), np.zeros((0, 3)),
                 np.array(1.5 + 2j, np.complex64), np.ones(2, ml_dtypes.bfloat16)):
        x = tnp.asarray(host)
        assert tnp.array_repr(x) == repr(x)
        assert tnp.array_str(x) == str(x) == np.array_str(host)
        assert tnp.array_str(x, precision=2, suppress_small=True) == np.array_str(host, precision=2,
                                                                                suppress_small=True)
        assert tnp.array_repr(host) == np.array_repr(host)  # host data: NumPy's own text
    y = tnp.asarray(np.array([1.123456, 1e-9], np.float32))
    assert tnp.array_repr(y, precision=2, suppress_small=True) == "Array([1.12, 0.  ], dtype=f32)"


def test_print_options_are_numpys_and_apply_to_arrays() -> None:
    x = tnp.asarray(np.array([1 / 3, 2 / 3], np.float64))
    before = tnp.get_printoptions()
    assert before == np.get_printoptions()
    with tnp.printoptions(precision=3):
        assert repr(x) == "Array([0.333, 0.667], dtype=f64)" and str(x) == "[0.333 0.667]"
        assert np.get_printoptions()["precision"] == 3
    tnp.set_printoptions(precision=2)
    try:
        assert str(x) == "[0.33 0.67]"
    finally:
        tnp.set_printoptions(**before)
    assert tnp.get_printoptions() == before


# ----------------------------------------------------------------------------------- einsum_path, masks


def test_einsum_path_is_numpys_from_shapes_alone(rng: np.random.Generator) -> None:
    for subscripts, shapes in (("ij,jk,kl->il", [(3, 40), (40, 5), (5, 60)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
                               ("i,i", [(7,), (7,)]), ("ij,jk,kl,lm", [(2, 9), (9, 3), (3, 8), (8, 4)])):
        arrays = [rng.standard_normal(s) for s in shapes]
        for optimize in ("greedy", "optimal"):
            expected = np.einsum_path(subscripts, *arrays, optimize=optimize)
            got = tnp.einsum_path(subscripts, *[tnp.asarray(a.astype(np.float32)) for a in arrays], optimize=optimize)
            assert got[0] == expected[0] and got[1] == expected[1]
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    assert tnp.einsum_path(a, [0, 1], b, [1, 2], [0, 2])[0] == np.einsum_path(a, [0, 1], b, [1, 2], [0, 2])[0]
    seen: list[Any] = []
    ts.program(lambda x: (seen.append(tnp.einsum_path("ij,jk->ik", x, x.T)[0]), x)[1])(np.zeros((3, 4), np.float32))
    assert seen == [["einsum_path", (0, 1)]]


def test_mask_indices_match_numpy() -> None:
    for n in (0, 1, 4, 5):
        for k in (-2, 0, 1, 3):
            for tnp_func, np_func in ((tnp.triu, np.triu), (tnp.tril, np.tril)):
                got = tnp.mask_indices(n, tnp_func, k)
                expected = np.mask_indices(n, np_func, k)
                for g, e in zip(got, expected):
                    assert g.dtype == np.int32 and np.array_equal(np.asarray(g), e), (n, k)
    # NumPy's own functions work too (on the host values of the ones).
    assert np.array_equal(np.asarray(tnp.mask_indices(3, np.triu)[1]), np.mask_indices(3, np.triu)[1])
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    staged = ts.program(lambda x: x[tnp.mask_indices(4, tnp.triu, 1, size=6)])(x)
    np.testing.assert_array_equal(np.asarray(staged), x[np.mask_indices(4, np.triu, 1)])


# ----------------------------------------------------------------------------------------- put, place


def _np_put(a: np.ndarray, ind: Any, v: Any, mode: str = "raise") -> np.ndarray:
    out = a.copy()
    np.put(out, ind, v, mode=mode)  # type: ignore[arg-type]
    return out


def _np_place(a: np.ndarray, mask: Any, vals: Any) -> np.ndarray:
    out = a.copy()
    np.place(out, mask, vals)
    return out


def test_put_matches_numpy(rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 5)).astype(np.float32)
    staged_put = ts.program(lambda a, i, v: tnp.put(a, i, v, inplace=False))
    for _ in range(4):
        ind = rng.integers(-15, 15, size=rng.integers(1, 9))
        v = rng.standard_normal(rng.integers(1, 5)).astype(np.float32)  # shorter than ind: repeated cyclically
        expected = _np_put(a, ind, v)
        np.testing.assert_array_equal(np.asarray(tnp.put(a, ind, v, inplace=False)), expected)
        np.testing.assert_array_equal(np.asarray(tnp.put(a, list(ind), v, inplace=False)), expected)
        # tensor indices in range give the same; negative ones count from the end
        np.testing.assert_array_equal(np.asarray(staged_put(a, ind.astype(np.int32), v)), expected)
        far = rng.integers(-40, 40, size=6)
        for mode in ("clip", "wrap"):
            expected = _np_put(a, far, v, mode)
            np.testing.assert_array_equal(np.asarray(tnp.put(a, far, v, mode=mode, inplace=False)), expected)
            got = tnp.put(a, tnp.asarray(far.astype(np.int8)), v, mode=mode, inplace=False)
            np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(np.asarray(tnp.put(a, [0, 2], 7.0, inplace=False)), _np_put(a, [0, 2], 7.0))
    np.testing.assert_array_equal(np.asarray(tnp.put(a, [], v, inplace=False)), a)
    # mode="raise" checks concrete tensor indices on the host
    assert np.array_equal(np.asarray(tnp.put(a, tnp.asarray([1, -1]), v[0], mode="raise", inplace=False)),
                          _np_put(a, [1, -1], v[0]))


def test_put_drops_out_of_range_tensor_indices() -> None:
    a = np.zeros(6, np.int32)
    got = ts.program(lambda a, i: tnp.put(a, i, np.array([1, 2, 3], np.int32), inplace=False))(
        a, np.array([0, 9, 2], np.int32))
    np.testing.assert_array_equal(np.asarray(got), [1, 0, 3, 0, 0, 0])


def test_place_matches_numpy(rng: np.random.Generator) -> None:
    for dtype in (np.float32, np.int16, np.complex64, np.bool_):
        a = _values(rng, np.dtype(dtype), (4, 3))
        staged_place = ts.program(lambda a, m, v: tnp.place(a, m, v, inplace=False))
        for _ in range(3):
            mask = rng.random((4, 3)) < 0.4
            vals = _values(rng, np.dtype(dtype), (int(rng.integers(1, 5)),))
            expected = _np_place(a, mask, vals)
            np.testing.assert_array_equal(np.asarray(tnp.place(a, mask, vals, inplace=False)), expected)
            np.testing.assert_array_equal(np.asarray(staged_place(a, mask, vals)), expected)
            np.testing.assert_array_equal(np.asarray(tnp.place(a, mask.astype(np.int8), vals, inplace=False)),
                                          expected)  # a static mask is read as NumPy reads it
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.place(x, x > 2, 0.5, inplace=False)), _np_place(x, x > 2, 0.5))
    # no True in a static mask: empty values are fine, as in NumPy
    unchanged = tnp.place(x, x > 9, [], inplace=False)
    assert isinstance(unchanged, ts.Array)
    np.testing.assert_array_equal(np.asarray(unchanged), x)


def test_put_and_place_under_vmap_match_a_loop(rng: np.random.Generator) -> None:
    a = rng.standard_normal((3, 6)).astype(np.float32)
    idx = rng.integers(-6, 6, size=(3, 4)).astype(np.int32)
    mask = rng.random((3, 6)) < 0.5

    def per_example(a: Any, i: Any, m: Any) -> Any:
        return tnp.put(a, i, a[:2], inplace=False), tnp.place(a, m, a[::-1][:3], inplace=False)

    got = ts.vmap(per_example)(a, idx, mask)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(got[0])[i], _np_put(a[i], idx[i], a[i, :2]))
        np.testing.assert_array_equal(np.asarray(got[1])[i], _np_place(a[i], mask[i], a[i, ::-1][:3]))


def test_put_place_and_ufunc_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5))
    mask = rng.random((4, 5)) < 0.5
    idx = np.array([3, 7, 7, -1, 12])  # a repeat: only the last value counts
    halve_minus = tnp.frompyfunc(lambda a, b: a * 0.5 - b * b, 2, 1)
    with_respect_to_x = [
        lambda x: tnp.put(x, idx, x[0, :3], inplace=False),
        lambda x: tnp.put(x, tnp.asarray(idx.astype(np.int32)), x[1], mode="wrap", inplace=False),
        lambda x: tnp.place(x, mask, x[2, ::-1], inplace=False),
        lambda x: halve_minus.reduce(x, axis=1),
        lambda x: halve_minus.accumulate(x, axis=0),
    ]
    assert_grads_match_finite_differences(with_respect_to_x, rng, (4, 5))


def test_put_and_place_refuse_inplace_and_bad_indices() -> None:
    a = np.zeros(4, np.float32)
    for call in (lambda: tnp.put(a, [0], 1.0), lambda: tnp.place(a, a > 0, 1.0)):
        with pytest.raises(ValueError, match=r"(put|place): tensorstage arrays are immutable: pass inplace=False"):
            call()
    with pytest.raises(IndexError, match=r"put: index 4 is out of bounds .* size 4\n  at .*test_numpy_more_names"):
        tnp.put(a, [4], 1.0, inplace=False)
    with pytest.raises(IndexError, match="put: cannot replace elements of an empty array"):
        tnp.put(np.zeros(0, np.float32), [0], 1.0, inplace=False)
    with pytest.raises(TypeError, match=r"put: indices must be integers, got f64\[1\]"):
        tnp.put(a, np.array([0.0]), 1.0, inplace=False)
    with pytest.raises(ValueError, match="put: mode must be one of"):
        tnp.put(a, [0], 1.0, mode="fill", inplace=False)
    with pytest.raises(ValueError, match="place: cannot place values from an empty array"):
        tnp.place(a, tnp.asarray(a >= 0), np.zeros(0, np.float32), inplace=False)


def test_put_and_place_staging_errors_name_op_and_line() -> None:
    x, i, m = ts.Spec((3, 4), f32), ts.Spec((5,), ts.i32), ts.Spec((3, 4), ts.i32)
    cases = [
        (lambda x, i: tnp.put(x, i, 1.0, mode="raise", inplace=False), (x, i), ValueError,
         ["put", "mode='raise' cannot check staged indices"]),
        (lambda x: tnp.put(x, x, 1.0, inplace=False), (x,), ts.DTypeError, ["put", "integers", "f32[3, 4]"]),
        (lambda x, i: tnp.put(x, i, np.ones(2), inplace=False), (x, i), ts.DTypeError, ["put", "f64[2]"]),
        (lambda x, m: tnp.place(x, m, 1.0, inplace=False), (x, m), ts.DTypeError, ["place", "bool", "i32[3, 4]"]),
        (lambda x, i: tnp.place(x, i > 0, 1.0, inplace=False), (x, i), ts.ShapeError,
         ["place", "size", "bool[5]", "f32[3, 4]"]),
        (lambda x: tnp.sort_complex(x[0, 0]), (x,), ts.ShapeError, ["sort_complex", "rank >= 1"]),
        (lambda x: tnp.save(io.BytesIO(), x), (x,), ts.ConcretizationError, ["save", "staged f32[3, 4]"]),
        (lambda x: tnp.array_repr(x), (x,), ts.ConcretizationError, ["array_repr", "staged"]),
        (lambda x: tnp.array_str(x), (x,), ts.ConcretizationError, ["array_str", "staged"]),
        (lambda x: x[tnp.mask_indices(4, tnp.triu)], (x,), ts.ShapeError, ["nonzero", "size="]),
        (lambda x: tnp.einsum_path("ij,jk->ik", x, x), (x,), ValueError, ["einsum_path", "f32[3, 4]"]),
    ]
    check_staging_errors(cases, "test_numpy_more_names.py")


def test_mask_indices_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="mask_indices: n must be non-negative"):
        tnp.mask_indices(-1, tnp.triu)
    with pytest.raises(ValueError, match=r"mask_indices: mask_func must return an array of shape \(3, 3\)"):
        tnp.mask_indices(3, lambda a, k: a[0])
    with pytest.raises(TypeError, match="mask_indices: mask_func must be a function"):
        tnp.mask_indices(3, 1)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ sort_complex


def _with_nans(rng: np.random.Generator, z: np.ndarray) -> np.ndarray:
    z = z.copy()
    z.real[rng.random(z.shape) < 0.15] = np.nan
    z.imag[rng.random(z.shape) < 0.15] = np.nan
    return z


def test_sort_complex_matches_numpy(rng: np.random.Generator) -> None:
    staged = ts.program(tnp.sort_complex)
    for dtype in (np.complex64, np.complex128):
        # few distinct parts, so that ties on the real part are common
        z = (rng.integers(-2, 3, (3, 11)) + 1j * rng.integers(-2, 3, (3, 11))).astype(dtype)
        for case in (z, _with_nans(rng, z), z[:, :1], (rng.standard_normal(9) + 1j * rng.standard_normal(9))):
            case = case.astype(dtype)
            expected = np.sort_complex(case)
            for got in (tnp.sort_complex(case), staged(case)):
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(np.asarray(got), expected)


def test_sort_complex_of_real_input_is_complex(rng: np.random.Generator) -> None:
    # The smallest complex dtype holding every value exactly: NumPy's, except bool, f16 and f32 (c64, as JAX).
    exact = {np.dtype(np.bool_): np.complex64, np.dtype(np.float16): np.complex64,
             np.dtype(np.float32): np.complex64, np.dtype(ml_dtypes.bfloat16): np.complex64}
    for dtype in DTYPES:
        if dtype.kind == "c":
            continue
        x = _values(rng, dtype, (2, 7))
        if dtype.kind == "f":
            x[0, 2] = np.nan
        got = tnp.sort_complex(x)
        reference = np.sort_complex(x.astype(np.float32) if dtype == ml_dtypes.bfloat16 else x)
        assert got.dtype == exact.get(dtype, reference.dtype), dtype
        np.testing.assert_array_equal(np.asarray(got), reference.astype(got.dtype))


def test_sort_complex_under_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    z = _with_nans(rng, (rng.integers(-2, 3, (4, 3, 6)) + 1j * rng.integers(-2, 3, (4, 3, 6))).astype(np.complex64))
    got = np.asarray(ts.vmap(tnp.sort_complex)(z))
    for i in range(4):
        np.testing.assert_array_equal(got[i], np.sort_complex(z[i]))


# ------------------------------------------------------------------------------------------------ host IO


def test_save_and_load_round_trip_every_dtype(rng: np.random.Generator, tmp_path: Path) -> None:
    for dtype in DTYPES:
        host = _values(rng, dtype, (3, 2))
        path = tmp_path / f"{dtype.name}.npy"
        tnp.save(path, tnp.asarray(host))
        back = tnp.load(path)
        assert isinstance(back, ts.Array) and back.dtype == dtype
        np.testing.assert_array_equal(np.asarray(back), host)
        if dtype != ml_dtypes.bfloat16:  # NumPy writes bfloat16 as void, which only tnp.load reads back as such
            np.testing.assert_array_equal(np.load(path), host)
    buffer = io.BytesIO()
    tnp.save(buffer, np.arange(4, dtype=np.uint8))  # host data too, to a file object
    buffer.seek(0)
    np.testing.assert_array_equal(np.asarray(tnp.load(buffer)), np.arange(4))


def test_savez_and_load_npz(rng: np.random.Generator, tmp_path: Path) -> None:
    a, b = rng.standard_normal((2, 3)).astype(np.float32), np.arange(5, dtype=np.int64)
    path = tmp_path / "both.npz"
    tnp.savez(path, tnp.asarray(a), counts=b)
    loaded = tnp.load(path)
    assert isinstance(loaded, dict) and sorted(loaded) == ["arr_0", "counts"]
    np.testing.assert_array_equal(np.asarray(loaded["arr_0"]), a)
    np.testing.assert_array_equal(np.asarray(loaded["counts"]), b)
    with np.load(path) as by_numpy:
        np.testing.assert_array_equal(by_numpy["counts"], b)


def test_load_refuses_unsupported_dtypes_and_pickles(tmp_path: Path) -> None:
    np.save(tmp_path / "m8.npy", np.arange(3, dtype="m8[s]"))
    with pytest.raises(TypeError, match=r"load: dtype timedelta64\[s\] is not supported \(supported: f16"):
        tnp.load(tmp_path / "m8.npy")
    np.save(tmp_path / "obj.npy", np.array([{}, 1], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="allow_pickle"):
        tnp.load(tmp_path / "obj.npy")


def test_readers_match_numpy(rng: np.random.Generator, tmp_path: Path) -> None:
    for dtype in (np.int8, np.uint32, np.int64, np.float16, np.float64, np.complex64):
        host = _values(rng, np.dtype(dtype), (7,))
        raw = host.tobytes()
        for count, offset in ((-1, 0), (3, np.dtype(dtype).itemsize)):
            expected = np.frombuffer(raw, dtype=dtype, count=count, offset=offset)
            got = tnp.frombuffer(raw, dtype=dtype, count=count, offset=offset)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(np.asarray(got), expected)
        path = tmp_path / f"{np.dtype(dtype).name}.bin"
        host.tofile(path)
        np.testing.assert_array_equal(np.asarray(tnp.fromfile(path, dtype=dtype)), np.fromfile(path, dtype=dtype))
        np.testing.assert_array_equal(np.asarray(tnp.fromiter(iter(host.tolist()), dtype=dtype, count=5)),
                                      np.fromiter(iter(host.tolist()), dtype=dtype, count=5))
    text = "1.5, -2, 3e2, 4"
    np.testing.assert_array_equal(np.asarray(tnp.fromstring(text, dtype=tnp.float64, sep=",")),
                                  np.fromstring(text, dtype=np.float64, sep=","))
    (tmp_path / "text.txt").write_text("3 1 2")
    np.testing.assert_array_equal(np.asarray(tnp.fromfile(tmp_path / "text.txt", dtype=tnp.int16, sep=" ")),
                                  [3, 1, 2])
    # Python's float and int are tensorstage's default dtypes (f32, i32), as in jax.numpy
    assert tnp.frombuffer(np.ones(2, np.float32).tobytes()).dtype == np.float32
    assert tnp.fromstring("1 2", dtype=int, sep=" ").dtype == np.int32
    assert tnp.fromiter(range(3), dtype=float).dtype == np.float32


def test_from_dlpack_copies_cpu_producers(rng: np.random.Generator) -> None:
    for dtype in (np.float32, np.int64, np.complex128, np.bool_):
        host = _values(rng, np.dtype(dtype), (2, 3))
        got = tnp.from_dlpack(host)
        assert isinstance(got, ts.Array) and got.dtype == host.dtype
        np.testing.assert_array_equal(np.asarray(got), host)
    with pytest.raises(ValueError, match="from_dlpack: copy=False"):
        tnp.from_dlpack(np.zeros(2), copy=False)
    with pytest.raises(TypeError, match="from_dlpack: cannot import list"):
        tnp.from_dlpack([1, 2])
    x = tnp.arange(3)
    assert tnp.from_dlpack(x) is x


def test_readers_refuse_bad_input_naming_the_op() -> None:
    with pytest.raises(TypeError, match=r"frombuffer: dtype timedelta64\[s\] is not supported\n?.*"):
        tnp.frombuffer(b"abcdabcd", dtype="m8[s]")
    with pytest.raises(ValueError, match=r"frombuffer: buffer size must be a multiple of element size\n  at "):
        tnp.frombuffer(b"abc", dtype=np.float32)
    with pytest.raises(ValueError, match="fromstring: sep must be a separator"):
        tnp.fromstring("1 2", sep="")
    with pytest.raises(TypeError, match=r"fromiter: .*is not a dtype"):
        tnp.fromiter(range(2), dtype="no such dtype")
    with pytest.raises(TypeError, match="fromstring: dtype <U0 is not supported"):
        tnp.fromstring("a b", dtype=np.str_, sep=" ")
    big_endian = np.arange(3, dtype=">i4")
    got = tnp.frombuffer(big_endian.tobytes(), dtype=">i4")
    assert got.dtype == np.int32 and np.array_equal(np.asarray(got), [0, 1, 2])


# ------------------------------------------------------------------------------------- frompyfunc, ufunc


def _as_f32(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)  # NumPy's frompyfunc gives object arrays


def test_frompyfunc_call_and_outer_match_numpy(rng: np.random.Generator) -> None:
    def scaled_difference(a: Any, b: Any) -> Any:
        return a * b - a

    f = tnp.frompyfunc(scaled_difference, 2, 1)
    reference = np.frompyfunc(scaled_difference, 2, 1)
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    assert isinstance(f, tnp.ufunc) and f.nin == 2 and f.nout == 1 and f.__name__ == "scaled_difference"
    np.testing.assert_allclose(np.asarray(f(x, y)), _as_f32(reference(x, y)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, 2.0)), _as_f32(reference(x, 2.0)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f.outer(x, y)), _as_f32(reference.outer(x, y)), rtol=1e-6)
    two_results = tnp.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)(x)
    np.testing.assert_array_equal(np.asarray(two_results[0]), x + 1)
    np.testing.assert_array_equal(np.asarray(two_results[1]), x * 2)


def test_ufunc_reduce_and_accumulate_fold_left_as_numpy(rng: np.random.Generator) -> None:
    def not_associative(a: Any, b: Any) -> Any:
        return a * 0.5 - b

    f = tnp.frompyfunc(not_associative, 2, 1, identity=0)
    reference = np.frompyfunc(not_associative, 2, 1, identity=0)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    for axis in (0, 1, -1, None):
        for keepdims in (False, True):
            expected = _as_f32(reference.reduce(x, axis=axis, keepdims=keepdims))
            got = f.reduce(x, axis=axis, keepdims=keepdims)
            assert got.shape == expected.shape
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(f.reduce(x, axis=1, initial=2.0)),
                               _as_f32(reference.reduce(x, axis=1, initial=2.0)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(f.reduce(np.zeros((0, 3), np.float32))), np.zeros(3))
    for axis in (0, 1, -1):
        np.testing.assert_allclose(np.asarray(f.accumulate(x, axis=axis)),
                                   _as_f32(reference.accumulate(x, axis=axis)), rtol=1e-5, atol=1e-6)
    staged = ts.program(lambda x: (f.reduce(x, axis=1), f.accumulate(x, axis=0)))(x)
    np.testing.assert_allclose(np.asarray(staged[0]), _as_f32(reference.reduce(x, axis=1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(staged[1]), _as_f32(reference.accumulate(x, axis=0)), rtol=1e-5,
                               atol=1e-6)


def test_ufunc_refuses_bad_use_naming_it() -> None:
    add = tnp.frompyfunc(lambda a, b: a + b, 2, 1)
    pair = tnp.frompyfunc(lambda a: (a, a), 1, 2)
    with pytest.raises(TypeError, match=r"<lambda>: takes 2 inputs, got 1\n  at .*test_numpy_more_names"):
        add(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="<lambda>.reduce: needs a ufunc of 2 inputs and 1 output"):
        pair.reduce(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"<lambda>.reduce: zero-size reduction of f32\[0, 3\]"):
        add.reduce(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="ufunc: nin and nout must be positive ints"):
        tnp.frompyfunc(lambda a: a, 0, 1)
    with pytest.raises(TypeError, match="ufunc: func must be callable"):
        tnp.frompyfunc(3, 1, 1)  # type: ignore[arg-type]


def test_top_k_matches_a_stable_sort(rng: np.random.Generator) -> None:
    x = rng.integers(0, 5, (3, 7)).astype(np.float32)  # repeated values: ties keep the lower index first
    for axis, k in [(-1, 3), (0, 2), (1, 0)]:
        for mode, key in [("largest", -x), ("smallest", x)]:
            order = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
            values, indices = tnp.top_k(x, k, axis=axis, mode=mode)
            np.testing.assert_array_equal(np.asarray(indices), order)
            np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, order, axis))
            staged = ts.program(lambda v: tnp.top_k(v, k, axis=axis, mode=mode))(x)  # noqa: B023
            np.testing.assert_array_equal(np.asarray(staged[1]), order)
    values, indices = tnp.top_k(np.array([1.0, np.nan, 3.0, 3.0], np.float32), 3)  # NaN counts as the largest
    assert np.isnan(np.asarray(values)[0]) and np.asarray(indices).tolist() == [1, 2, 3]
    with pytest.raises(ts.ShapeError, match="k=8 must lie in"):
        tnp.top_k(x, 8)
    with pytest.raises(ValueError, match="mode must be"):
        tnp.top_k(x, 1, mode="biggest")  # type: ignore[arg-type]


def test_minmax_matches_numpys_min_and_max(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 5)).astype(np.float32)
    mask = rng.random((4, 5)) < 0.6
    for axis in (None, 0, 1, (0, 1)):
        low, high = tnp.minmax(x, axis=axis, keepdims=True)
        np.testing.assert_array_equal(np.asarray(low), np.min(x, axis=axis, keepdims=True))
        np.testing.assert_array_equal(np.asarray(high), np.max(x, axis=axis, keepdims=True))
    low, high = tnp.minmax(x, axis=1, initial=(0.25, -0.25), where=mask)
    np.testing.assert_array_equal(np.asarray(low), np.min(x, axis=1, initial=0.25, where=mask))
    np.testing.assert_array_equal(np.asarray(high), np.max(x, axis=1, initial=-0.25, where=mask))
    assert all(np.isnan(np.asarray(v)) for v in tnp.minmax(np.array([1.0, np.nan], np.float32)))
    with pytest.raises(ValueError, match="needs initial"):
        tnp.minmax(x, where=mask)
