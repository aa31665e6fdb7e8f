"""Edge cases of tensorstage.numpy against NumPy: static settings (sizes, offsets, orders) given as tensors or
non-integers, and the bugs found by differential testing (each test names its case)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

THIS_FILE = "test_numpy_edge_cases.py:"

# Each takes the setting under test; the other operands are fixed.
_X = np.arange(12.0, dtype=np.float32).reshape(3, 4)
_V = np.arange(3.0, dtype=np.float32)
SETTINGS: dict[str, Callable[[Any], Any]] = {
    "tri": lambda n: tnp.tri(n),
    "tril": lambda n: tnp.tril(_X, k=n),
    "triu": lambda n: tnp.triu(_X, n),
    "diag": lambda n: tnp.diag(_X, k=n),
    "diagflat": lambda n: tnp.diagflat(_V, k=n),
    "diagonal": lambda n: tnp.diagonal(_X, offset=n),
    "trace": lambda n: tnp.trace(_X, offset=n),
    "vander": lambda n: tnp.vander(_V, N=n),
    "diag_indices": lambda n: tnp.diag_indices(n),
    "unravel_index": lambda n: tnp.unravel_index(np.array([1, 2]), (n, 4)),
    "unpackbits": lambda n: tnp.unpackbits(np.array([3], np.uint8), count=n),
    "apply_along_axis": lambda n: tnp.apply_along_axis(lambda r: r.sum(), n, _X),
    "bincount": lambda n: tnp.bincount(np.array([1, 2], np.int32), length=n),
    "nonzero": lambda n: tnp.nonzero(np.array([1, 0, 2], np.int32), size=n),
    "polyder": lambda n: tnp.polyder(np.array([1.0, 2.0, 3.0], np.float32), m=n),
    "polyfit": lambda n: tnp.polyfit(np.arange(5.0, dtype=np.float32), np.arange(5.0, dtype=np.float32), n),
    "hanning": lambda n: tnp.hanning(n),
    "one_hot": lambda n: ts.nn.one_hot(np.array([0, 2], np.int32), n),
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_staged_setting_is_a_concretization_error_naming_op_tensor_and_line(name: str) -> None:
    call = SETTINGS[name]
    with pytest.raises(ts.ConcretizationError) as info:
        ts.program(lambda n: call(n)).stage(ts.Spec((), ts.i32))
    message = str(info.value)
    for part in (name, "static Python int", "got a staged tensor i32[]", THIS_FILE):
        assert part in message, (part, message)
    assert message.count("\n  at ") == 1, message


@pytest.mark.parametrize("name", sorted(SETTINGS))
@pytest.mark.parametrize("bad", [1.5, True, "1"], ids=["float", "bool", "str"])
def test_a_non_integer_setting_is_a_type_error_naming_op_and_line(name: str, bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        SETTINGS[name](bad)
    assert not isinstance(info.value, ts.StagingError)
    message = str(info.value)
    assert message.startswith(name) and "must be an int" in message and repr(bad) in message, message
    assert message.count("\n  at ") == 1 and THIS_FILE in message, message


def test_the_shape_fixing_reason_is_in_the_message() -> None:
    with pytest.raises(ts.ConcretizationError, match="fixes the result's shape"):
        ts.program(lambda n: tnp.diag(_X, k=n)).stage(ts.Spec((), ts.i32))
    with pytest.raises(ts.ConcretizationError, match="mask"):
        ts.program(lambda n: tnp.tril(_X, k=n)).stage(ts.Spec((), ts.i32))


# Functions that read their settings before staging anything accept a concrete 0-d integer array, host or
# device, as NumPy's operator.index and JAX's concrete values do.
CONCRETE_OK: dict[str, Callable[[Any], Any]] = {
    "diag_indices": lambda n: np.stack([np.asarray(i) for i in tnp.diag_indices(n)]),
    "unravel_index": lambda n: np.stack([np.asarray(i) for i in tnp.unravel_index(np.array([1, 3]), (n, 4))]),
    "apply_along_axis": lambda n: tnp.apply_along_axis(lambda r: r.sum(), n, _X),
    "bincount": lambda n: tnp.bincount(np.array([1, 2], np.int32), length=n),
    "nonzero": lambda n: tnp.nonzero(np.array([1, 0, 2], np.int32), size=n)[0],
    "polyfit": lambda n: tnp.polyfit(np.arange(5.0, dtype=np.float32), np.arange(5.0, dtype=np.float32) ** 2, n),
}


@pytest.mark.parametrize("name", sorted(CONCRETE_OK))
def test_a_concrete_0d_integer_array_is_accepted_where_it_is_read_before_staging(name: str) -> None:
    call = CONCRETE_OK[name]
    expected = np.asarray(call(1))
    for concrete in (np.array(1), np.int64(1), tnp.array(1), tnp.array(np.array(1, np.uint8))):
        np.testing.assert_allclose(np.asarray(call(concrete)), expected, rtol=1e-5, atol=1e-5)
    for not_an_index in (np.array([1]), tnp.array([1]), np.array(1.0), tnp.array(1.0), tnp.array(True)):
        with pytest.raises(TypeError, match=f"(?s){name}.*must be an int.*{THIS_FILE}"):
            call(not_an_index)


# ------------------------------------------------------------------------------------- differential finds


def test_nanquantile_of_integers_with_a_discrete_method_is_quantile() -> None:
    # was: "nanquantile with method='lower' needs a floating-point or integer operand, got i32[3, 5]"
    x = np.random.default_rng(0).integers(-9, 9, (3, 5)).astype(np.int32)
    for method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        got = tnp.nanquantile(x, [0.3, 0.5], axis=1, method=method)
        assert got.dtype == ts.i32
        np.testing.assert_array_equal(np.asarray(got), np.nanquantile(x, [0.3, 0.5], axis=1, method=method))
        np.testing.assert_array_equal(np.asarray(tnp.nanpercentile(x, 70, axis=0, method=method)),
                                      np.nanpercentile(x, 70, axis=0, method=method))
    staged = ts.vmap(lambda row: tnp.nanquantile(row, 0.5, method="higher"))(x)
    np.testing.assert_array_equal(np.asarray(staged), np.nanquantile(x, 0.5, axis=1, method="higher"))
    with pytest.raises(ts.ShapeError, match="empty axis"):  # NumPy's NaN has no integer value
        tnp.nanquantile(np.zeros((0,), np.int32), 0.5, method="lower")


@pytest.mark.parametrize("trim", ["f", "b", "fb", "BF"])
def test_trim_zeros_matches_numpy_on_all_zero_and_empty_arrays(trim: str) -> None:
    # was: trim="b" of an all-zero array kept every element (NumPy: none)
    for values in ([0, 0, 0], [0, 1, 0, 2, 0, 0], [], [5], [0]):
        host = np.array(values, np.float32)
        np.testing.assert_array_equal(np.asarray(tnp.trim_zeros(host, trim)), np.trim_zeros(host, trim))


def test_reshape_and_ravel_take_numpy_order() -> None:
    # was: TypeError "reshape() got an unexpected keyword argument 'order'"
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    for shape in [(-1,), (4, -1), (2, 12), (4, 3, 2), (1, 24, 1)]:
        for order in ("C", "F", "A"):
            np.testing.assert_array_equal(np.asarray(tnp.reshape(x, shape, order=order)), np.reshape(x, shape, order=order))
            staged = ts.program(lambda a, s=shape, o=order: tnp.reshape(a, s, order=o))(x)
            np.testing.assert_array_equal(np.asarray(staged), np.reshape(x, shape, order=order))
    for order in ("C", "F", "A", "K"):
        np.testing.assert_array_equal(np.asarray(tnp.ravel(x, order=order)), np.ravel(x, order=order))
    weights = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    grad = ts.grad(lambda a: (tnp.reshape(a, (3, 2), order="F") * weights).sum())(x[0, :, :2].T.copy())
    np.testing.assert_array_equal(np.asarray(grad), np.reshape(weights, (2, 3), order="F"))
    # a NumPy array shape, as NumPy takes (was: "only integer scalar arrays can be converted" while staging)
    staged = ts.program(lambda a: tnp.reshape(a, np.array([4, 6]), order="F"))(x)
    np.testing.assert_array_equal(np.asarray(staged), np.reshape(x, (4, 6), order="F"))
    with pytest.raises(ts.ShapeError, match=r"cannot reshape f32\[2, 3, 4\] \(24 elements\) to \(5, 5\)"):
        tnp.reshape(x, (5, 5), order="F")
    with pytest.raises(ValueError, match="reshape: order must be"):
        tnp.reshape(x, (24,), order="X")  # type: ignore[arg-type]


def test_setdiff1d_with_assume_unique_keeps_the_first_operands_order() -> None:
    # was: sorted, as without assume_unique (NumPy and JAX keep ar1's order)
    a, b = np.array([3, 1, 2, 7, 0], np.int32), np.array([2, 5], np.int32)
    expected = np.setdiff1d(a, b, assume_unique=True)  # [3, 1, 7, 0]
    np.testing.assert_array_equal(np.asarray(tnp.setdiff1d(a, b, assume_unique=True)), expected)
    staged = ts.program(lambda p, q: tnp.setdiff1d(p, q, assume_unique=True, size=6, fill_value=-1))(a, b)
    np.testing.assert_array_equal(np.asarray(staged), [*expected, -1, -1])
    np.testing.assert_array_equal(np.asarray(tnp.setdiff1d(a, b, assume_unique=True, size=2)), expected[:2])
    assert np.asarray(tnp.setdiff1d(a[:0], b, assume_unique=True)).shape == (0,)
    np.testing.assert_array_equal(np.asarray(tnp.setdiff1d(a, b, size=5, fill_value=-1)), [0, 1, 3, 7, -1])


@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_and_corrcoef_take_numpys_y(rowvar: bool) -> None:
    # was: no y parameter, so NumPy's cov(x, y) / corrcoef(x, y) passed y as rowvar: a silent wrong answer
    rng = np.random.default_rng(2)
    # (m, y) shapes holding 10 observations each for this rowvar; a (1, 10) y is one row either way, as NumPy's
    pairs = [((3, 10), (10,)), ((10,), (10,)), ((2, 10), (3, 10)), ((2, 10), (1, 10))] if rowvar else [
        ((10, 3), (10,)), ((10,), (10,)), ((10, 2), (10, 3)), ((10, 2), (1, 10))]
    for m_shape, y_shape in pairs:
        m, y = rng.standard_normal(m_shape).astype(np.float32), rng.standard_normal(y_shape).astype(np.float32)
        expected = np.cov(m.astype(np.float64), y.astype(np.float64), rowvar)
        np.testing.assert_allclose(np.asarray(tnp.cov(m, y, rowvar)), expected, rtol=1e-4, atol=1e-5)
        staged = ts.program(lambda a, b: tnp.corrcoef(a, b, rowvar))(m, y)
        np.testing.assert_allclose(np.asarray(staged), np.corrcoef(m.astype(np.float64), y, rowvar), rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(ts.ShapeError, match=r"(?s)cov: m and y must have as many observations.*f32\[5\]"):
        tnp.cov(np.ones((2, 6), np.float32), np.ones(5, np.float32))


def test_pinv_and_matrix_rank_take_numpys_hermitian() -> None:
    # was: TypeError "pinv() got an unexpected keyword argument 'hermitian'" (NumPy's third parameter)
    rng = np.random.default_rng(3)
    b = rng.standard_normal((2, 4, 4))
    symmetric = (b @ np.diag([3.0, -2.0, 1.5, -1.0]) @ b.transpose(0, 2, 1)).astype(np.float32)
    lower_only = np.tril(symmetric) + np.triu(rng.standard_normal((4, 4)).astype(np.float32), 1)  # upper: ignored
    expected = np.linalg.pinv(symmetric.astype(np.float64), hermitian=True)
    np.testing.assert_allclose(np.asarray(tnp.linalg.pinv(lower_only, hermitian=True)), expected, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(np.asarray(tnp.linalg.pinv(lower_only, 1e-6, True)), expected, rtol=2e-3, atol=2e-3)
    rank_two = (b[0, :, :2] @ np.diag([2.0, -1.0]) @ b[0, :, :2].T).astype(np.float32)
    ranks = ts.vmap(lambda a: tnp.linalg.matrix_rank(a, hermitian=True))(np.stack([rank_two, symmetric[0]]))
    np.testing.assert_array_equal(np.asarray(ranks), [2, 4])
    assert int(tnp.linalg.matrix_rank(symmetric[0], 2.0, True)) == np.linalg.matrix_rank(symmetric[0], 2.0, True)
    # the derivative of reading the lower triangle: the symmetric derivative folded onto it
    weights = rng.standard_normal((4, 4)).astype(np.float32)
    general = np.asarray(ts.grad(lambda a: (tnp.linalg.pinv(a) * weights).sum())(symmetric[0]))
    folded = np.tril(general + general.T) - np.diag(np.diag(general))
    hermitian = ts.grad(lambda a: (tnp.linalg.pinv(a, hermitian=True) * weights).sum())(symmetric[0])
    np.testing.assert_allclose(np.asarray(hermitian), folded, rtol=1e-3, atol=1e-3)
    with pytest.raises(ts.ShapeError, match=r"pinv: hermitian=True needs square matrices.*f32\[4, 3\]"):
        tnp.linalg.pinv(symmetric[0, :, :3], hermitian=True)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_takes_numpys_mode(mode: str) -> None:
    # was: TypeError "take() got an unexpected keyword argument 'mode'"; a tuple of indices was an index tuple
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    in_range = [np.array([0, -1, 2]), np.array([[1, 2], [-1, 0]]), 2, (0, 2)]
    out_of_range = [np.array([5, -7, 3, -3]), [4, -9]]
    for indices in in_range + (out_of_range if mode != "raise" else []):
        for axis in (None, 0, -1):
            got = tnp.take(x, indices, axis=axis, mode=mode)  # type: ignore[arg-type]
            np.testing.assert_array_equal(np.asarray(got), np.take(x, indices, axis=axis, mode=mode))
    if mode == "raise":
        with pytest.raises(IndexError, match="take: index 5 is out of bounds"):
            tnp.take(x, np.array([5]), axis=1)
        with pytest.raises(ValueError, match=f"(?s)take: mode must be .*got 'fill'.*{THIS_FILE}"):
            tnp.take(x, 0, mode="fill")  # type: ignore[arg-type]
        return
    staged_indices = np.array([-100, 100, 127, 2], np.int8)  # a narrow dtype: the size 300 does not fit it
    big = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    staged = ts.program(lambda a, i: tnp.take(a, i, mode=mode))(big, staged_indices)  # type: ignore[arg-type]
    np.testing.assert_array_equal(np.asarray(staged), np.take(big, staged_indices, mode=mode))
    batched = ts.vmap(lambda i: tnp.take(x[0], i, mode=mode))(np.array([[5, -6], [1, 9]], np.int32))  # type: ignore[arg-type]
    np.testing.assert_array_equal(np.asarray(batched), np.take(x[0], np.array([[5, -6], [1, 9]]), mode=mode))


def test_digitize_checks_numpy_array_bins_eagerly_as_staged() -> None:
    # was: eagerly, NumPy-array bins became a runtime input before the check, so non-monotonic ones passed
    x = np.array([-1.0, 0.5, 1.5, 3.0], np.float32)
    bad = np.array([0.0, 2.0, 1.0], np.float32)
    with pytest.raises(ValueError, match=f"(?s)digitize: bins must be monotonically.*{THIS_FILE}"):
        tnp.digitize(x, bad)
    with pytest.raises(ValueError, match="digitize: bins must be monotonically"):
        ts.program(lambda v: tnp.digitize(v, bad))(x)
    with pytest.raises(ts.ShapeError, match="digitize: bins must be 1-D"):
        tnp.digitize(x, bad[None])
    for bins in (np.array([2.0, 1.0, 0.0], np.float32), np.array([0.0, 1.0, 1.0, 2.0], np.float32)):
        for right in (False, True):
            np.testing.assert_array_equal(np.asarray(tnp.digitize(x, bins, right)), np.digitize(x, bins, right))


def test_norm_orders_given_as_numpy_scalars() -> None:
    # was: "norm (equal): float scalar inf with a i64 operand" (the NumPy integer ord was staged as data)
    x = np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32)
    for order in (np.int64(1), np.float64(np.inf), np.int32(-2)):
        np.testing.assert_allclose(np.asarray(tnp.linalg.norm(x, order)), np.linalg.norm(x, order), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(tnp.linalg.matrix_norm(x, ord=order)),
                                   np.linalg.matrix_norm(x, ord=order), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tnp.linalg.norm(x[0], np.int64(3))), np.linalg.norm(x[0], 3), rtol=1e-5)


def test_vectorize_takes_numpys_otypes_doc_and_cache() -> None:
    # was: TypeError "vectorize() got an unexpected keyword argument 'otypes'" (np.vectorize(f, otypes=[float]))
    x = np.arange(4, dtype=np.int32)
    doubled = tnp.vectorize(lambda a: a * 2, otypes=[float])(x)
    assert doubled.dtype == ts.f32  # float: the library's default float, as in astype(float)
    np.testing.assert_array_equal(np.asarray(doubled), np.vectorize(lambda a: a * 2, otypes=[float])(x))
    assert tnp.vectorize(lambda a: a * 2, otypes="d")(x).dtype == ts.f64
    pair = tnp.vectorize(lambda a: (a, a > 1), [ts.f32, bool], "a pair", cache=True)
    assert [o.dtype for o in pair(x)] == [ts.f32, ts.bool_] and pair.__doc__ == "a pair"
    staged = ts.program(lambda v: tnp.vectorize(lambda a, k: a * k, None, None, {1})(v, 3))(x)
    np.testing.assert_array_equal(np.asarray(staged), x * 3)
    with pytest.raises(TypeError, match=f"(?s)vectorize: otypes name 1 outputs, the function returned 2.*{THIS_FILE}"):
        tnp.vectorize(lambda a: (a, a), otypes=[float])(x)


def test_average_takes_weights_along_a_tuple_of_axes() -> None:
    # was: ShapeError "give axis= (one axis) for 1-D weights" (NumPy 2 takes weights sized as the axes)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for axis in [(0, 2), (2, 0), (1, 0, 2), -1]:
        axes = axis if isinstance(axis, tuple) else (axis,)
        w = (np.abs(rng.standard_normal([x.shape[k] for k in axes])) + 0.1).astype(np.float32)
        got = tnp.average(x, axis=axis, weights=w, returned=True, keepdims=True)
        want = np.average(x.astype(np.float64), axis=axis, weights=w, returned=True, keepdims=True)
        for g, e in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-6)
    with pytest.raises(ts.ShapeError, match=r"average: weights along axis must have the sizes \(2, 4\) of axes"):
        tnp.average(x, axis=(0, 2), weights=np.ones((4, 2), np.float32))


def test_a_dtype_in_keepdims_place_is_refused() -> None:
    # was: tnp.sum(x, 0, np.float32) (NumPy's positional dtype) silently meant keepdims=True
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for reduce in (tnp.sum, tnp.mean, tnp.nansum, tnp.max):
        with pytest.raises(TypeError, match=f"(?s)keepdims must be a bool, got .*float32.*dtype=.*{THIS_FILE}"):
            reduce(x, 0, np.float32)
        with pytest.raises(TypeError, match=f"(?s)keepdims must be a bool, got .*float32.*{THIS_FILE}"):
            ts.program(lambda v: reduce(v, 0, np.float32))(x)  # noqa: B023
        assert reduce(x, 0, True).shape == (1, 3) and reduce(x, 0, keepdims=np.True_).shape == (1, 3)


def test_settings_given_as_numpy_or_concrete_arrays() -> None:
    # was: staged as runtime inputs eagerly, then refused ("must be a static Python int", "got Traced<i64[]>")
    x = np.arange(12, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(tnp.tri(np.array(3))), np.tri(np.array(3)))
    np.testing.assert_array_equal(np.asarray(tnp.diag(np.ones((3, 3)), k=tnp.asarray(1))), np.ones(2))
    assert tnp.reshape(x, np.array([4, 3])).shape == (4, 3)
    assert ts.program(lambda v: tnp.reshape(v, np.array([3, 4])))(x).shape == (3, 4)
    assert [a.shape for a in tnp.split(x, np.array([1, 3]))] == [(1,), (2,), (9,)]
    np.testing.assert_array_equal(np.asarray(tnp.partition(x[::-1], np.array([1, 3])))[:4], np.arange(4))
    np.testing.assert_allclose(np.asarray(tnp.hanning(np.array(5))), np.hanning(5), atol=1e-7)
    assert tnp.zeros(np.array([2, 3])).shape == (2, 3) and tnp.ones(tnp.asarray(3)).shape == (3,)
    assert ts.program(lambda v: tnp.zeros(np.array([2, 3])) + v)(x[:3]).shape == (2, 3)
    assert tnp.full(np.array([2]), 1.5).shape == (2,) and tnp.arange(np.array(4)).shape == (4,)


def test_nanargmax_and_nanargmin_count_nans_as_the_fill_as_numpy() -> None:
    """A NaN before the first real -inf (+inf for nanargmin) ties with it and wins, as in NumPy and JAX."""
    nan, inf = np.nan, np.inf
    rows = np.array([[nan, -inf, -inf], [-inf, nan, -inf], [nan, 1.0, -inf], [nan, nan, nan], [2.0, nan, 2.0]])

    @ts.program
    def run(x: Any) -> Any:
        return tnp.nanargmax(x, axis=1), tnp.nanargmin(-x, axis=1), tnp.nanargmax(x[0]), tnp.nanargmin(-x[1])

    got = [np.asarray(a) for a in run(rows)]
    want_rows = [np.nanargmax(r) if not np.isnan(r).all() else -1 for r in rows]
    np.testing.assert_array_equal(got[0], want_rows)
    np.testing.assert_array_equal(got[0], [0, 0, 1, -1, 0])
    np.testing.assert_array_equal(got[1], [np.nanargmin(-r) if not np.isnan(r).all() else -1 for r in rows])
    assert int(got[2]) == np.nanargmax(rows[0]) == 0 and int(got[3]) == np.nanargmin(-rows[1]) == 0


def test_settings_annotated_with_an_alias_are_seen_in_modules_that_do_not_import_its_names() -> None:
    """``ShapeLike`` names ``Dim``, which creation.py does not import: the op wrapper must still find its shape
    settings there, and an annotation that does not resolve must cost only its own parameter's conversion."""
    from tensorstage.prelude.numpy import _core, creation

    assert _core._python_value_parameters(creation.zeros.__wrapped__).names == {"shape"}
    source = "from __future__ import annotations\ndef f(shape: ShapeLike, n: int, x: Unknown) -> None: ...\n"
    namespace: dict[str, Any] = {"ShapeLike": _core.ShapeLike}
    exec(source, namespace)  # noqa: S102 - a function in a module namespace without Dim or Unknown
    assert _core._python_value_parameters(namespace["f"]) == (frozenset({0, 1}), frozenset({"shape", "n"}), {})
