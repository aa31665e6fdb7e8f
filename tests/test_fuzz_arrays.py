"""Fuzzing the eager ``ts.Array``, pytrees and the Program call API against NumPy (and JAX's documented rules).

Arrays: construction from every NumPy dtype and memory layout (non-contiguous, negative strides, big-endian,
read-only, 0-d, empty), Python scalars and nested lists; host views and copies; the scalar protocols; operators
with NumPy operands on either side; ``.at[...]`` updates with every index kind; pickling and copying; deleted and
donated arrays. Pytrees: dict key orders, None leaves, namedtuples, registered classes, attrs classes,
OrderedDict/defaultdict, mismatched structures. Programs: static/donated arguments, keywords and defaults,
recompiles, cache bounds, output trees, and the checked ``Compiled`` call.

Deliberate differences from NumPy, tested here:
- Unsupported dtypes (complex, u16, u64, datetime, object, strings, float128) are a TypeError naming the dtype.
- Python floats and nested lists of floats become f32 and Python ints i32 (as JAX without x64): an int outside
  i32 is a ValueError, a float beyond f32 becomes inf. NumPy scalars keep their dtype (``np.float64(1)`` is
  f64), but a *list* of NumPy scalars is a nested Python list (f32), as in JAX.
- Array dtypes never promote: ``np_f64_array + ts_f32_array`` is a DTypeError (NumPy gives f64).
- ``np.asarray(array)`` is a read-only view (as JAX): the Array cannot be changed through it; ``np.array(array)``
  is a writable copy.
- NumPy functions that are not ufunc operators (``np.add(x, 1)``, ``np.sin(x)``, ``np.concatenate``) convert
  Arrays to NumPy and return ``np.ndarray``, as with JAX arrays; ``ndarray + Array`` defers to the Array.
- Arrays are unhashable (as NumPy and JAX); ``int``/``float``/``index`` need 0-d arrays (as NumPy 2 here).
- ``copy.copy`` / ``deepcopy`` give a new buffer on the same device; pickling keeps the value, and unpickling
  puts it on the default device.
- Dicts with keys of several types (``{1: a, "w": b}``) flatten sorted by key type name, then key (JAX refuses
  them); an OrderedDict keeps its insertion order, a defaultdict is sorted and keeps its default factory.
- ``static_argnums``/``donate_argnums`` outside the function's positional parameters are a ValueError when the
  Program is made (as JAX); negative positions count from the last positional parameter.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import operator
import pickle
from typing import Any, NamedTuple

import attrs
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp  # noqa: F401 - registers the prelude
from tensorstage import pytree

SUPPORTED = (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64, np.bool_)
UNSUPPORTED = ("clongdouble", "datetime64[s]", "timedelta64[ms]", "object", "U3",
               "S2", "V4", "longdouble")


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(max(info.min, -100), min(info.max, 100), size=shape), dtype)
    return np.asarray(rng.standard_normal(shape) * 10, dtype)


def _same(got: Any, want: np.ndarray[Any, Any]) -> None:
    host = np.asarray(got)
    assert host.dtype == want.dtype and host.shape == want.shape, (host.dtype, host.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(host, want)


# ------------------------------------------------------------------------------------------- construction


def test_asarray_every_dtype_and_layout() -> None:
    rng = np.random.default_rng(0)
    for dtype in SUPPORTED:
        for shape in [(), (0,), (3, 0), (5,), (3, 4), (2, 3, 4)]:
            base = _random(rng, shape, dtype)
            layouts = [base, base.copy(order="F")]
            if base.ndim:
                layouts.append(base[::-1])  # negative stride
                layouts.append(np.repeat(base, 2, axis=-1)[..., ::2])  # non-contiguous
            if base.dtype.itemsize > 1:
                layouts.append(base.astype(base.dtype.newbyteorder(">")))  # big-endian
            readonly = base.copy()
            readonly.flags.writeable = False
            layouts.append(readonly)
            for host in layouts:
                x = ts.asarray(host)
                _same(x, np.array(host, dtype=host.dtype.newbyteorder("=")))
                assert (x.shape, x.ndim, x.size) == (host.shape, host.ndim, host.size)
                assert (x.itemsize, x.nbytes) == (host.itemsize, host.nbytes)
    for name in UNSUPPORTED:
        with pytest.raises(TypeError, match=r"dtype .* is not supported"):
            ts.asarray(np.zeros(2, dtype=name))
        with pytest.raises(TypeError, match=r"is not supported"):
            ts.device_put(np.zeros((), dtype=name))


def test_asarray_python_inputs() -> None:
    cases: list[tuple[Any, Any]] = [
        (1.5, np.float32), (3, np.int32), (True, np.bool_), ([1, 2], np.int32), ([[1.0, 2], [3, 4]], np.float32),
        ([], np.float32), ((1, 2.5), np.float32), (range(4), np.int32), ([True, False], np.bool_),
        (np.float64(2), np.float64), (np.int8(-3), np.int8), ([np.float64(1)], np.float32), (float("nan"), np.float32),
    ]
    for value, dtype in cases:
        _same(ts.asarray(value), np.asarray(value).astype(dtype))
    for value, error, match in [
        ([[1, 2], [3]], ValueError, r"asarray: cannot make an array of list .*inhomogeneous"),
        (2**40, ValueError, r"does not fit the default integer dtype i32"),
        ([1, 2**31], ValueError, r"out of the default integer dtype i32's range"),
        (None, TypeError, r"dtype object is not supported"),
        (np.clongdouble(1j), TypeError, r"complex(256|192|128) is not supported"),
        ("ab", TypeError, r"<U2 is not supported"),
        ({"a": 1}, TypeError, r"object is not supported"),
    ]:
        with pytest.raises(error, match=match):
            ts.asarray(value)
    _same(ts.asarray([1, 2], dtype=np.float64), np.array([1.0, 2.0]))
    _same(ts.asarray([1.5, -2.5], dtype=ts.i32), np.array([1, -2], np.int32))
    with pytest.raises(TypeError, match=r"float128 is not supported"):
        ts.asarray([1], dtype=np.longdouble)


def test_asarray_of_an_array_converts_on_device() -> None:
    x = ts.asarray(np.array([1.5, -2.5, 3.0], np.float32))
    assert ts.asarray(x) is x and ts.asarray(x, dtype=float) is x
    for dtype in (ts.f64, np.int32, ts.f16, np.bool_):
        got = ts.asarray(x, dtype=dtype)
        assert type(got) is ts.Array and got.device == x.device
        _same(got, np.array([1.5, -2.5, 3.0], np.float32).astype(ts.dtypes.to_numpy(dtype)))


def test_arrays_never_alias_host_memory() -> None:
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    for make in (ts.asarray, ts.device_put):
        x = make(src)
        src += 100  # mutating the source afterwards
        _same(x, src - 100)
        src -= 100
    x = ts.asarray(src)
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError, match=r"read-only"):
        view[0, 0] = 7
    copied = np.array(x)
    copied[0, 0] = 7  # a writable copy: the array keeps its value
    _same(x, src)
    # __array__ with NumPy 2's keywords
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.array(x, copy=True).flags.writeable
    assert np.asarray(x, copy=False) is not None
    with pytest.raises(ValueError, match=r"without a copy"):
        x.__array__(dtype=np.float64, copy=False)


# ----------------------------------------------------------------------------------------- Python protocols


def _outcome(fn: Any, value: Any) -> Any:
    try:
        return ("ok", fn(value))
    except (TypeError, ValueError) as exc:
        return ("error", type(exc))


def test_scalar_protocols_match_numpy() -> None:
    values = [np.float32(2.5), np.int32(-3), np.bool_(True), np.array([4.0], np.float32), np.arange(3, dtype=np.int32),
              np.zeros((0,), np.float32), np.ones((2, 2), np.float32), np.array([7], np.int32)]
    protocols = [len, bool, int, float, complex, operator.index, lambda v: list(v), lambda v: v.item(),
                 lambda v: v.tolist(), lambda v: format(v, ".2f"), lambda v: format(v, ""), hash]
    for value in values:
        x = ts.asarray(value)
        for fn in protocols:
            want, got = _outcome(fn, np.asarray(value)), _outcome(fn, x)
            if want[0] == got[0] == "ok" and fn is not protocols[9] and isinstance(want[1], list):
                want = ("ok", [np.asarray(v).tolist() for v in want[1]])  # iteration: our elements are Arrays
                got = ("ok", [np.asarray(v).tolist() for v in got[1]])
            assert got == want or (got[0] == want[0] == "error"), (value, fn, got, want)
    assert ts.asarray(np.arange(6, dtype=np.int32)).item(4) == 4
    assert [1, 2, 3][ts.asarray(np.int64(2))] == 3
    # round() as NumPy's round (half to even), giving an Array as with JAX
    halves = np.float32([1.56, 2.5, -0.5, 3.5])
    for digits in (None, 0, 1):
        got = round(ts.asarray(halves), digits)
        assert type(got) is ts.Array
        np.testing.assert_array_equal(np.asarray(got), np.round(halves, digits or 0))


def test_repr_str() -> None:
    for value, text in [
        (np.array([1.0, 2.0], np.float32), "Array([1., 2.], dtype=f32)"),
        (np.float64(0.5), "Array(0.5, dtype=f64)"),
        (np.zeros((0, 3), np.int8), "Array([], shape=(0, 3), dtype=i8)"),
        (np.zeros((0,), np.uint32), "Array([], dtype=u32)"),
        (np.array([True]), "Array([ True], dtype=bool)"),
    ]:
        x = ts.asarray(value)
        assert repr(x) == text, repr(x)
        assert str(x) == str(value)
    assert repr(ts.asarray([1.5]).astype(ts.bf16)) == "Array([1.5], dtype=bf16)"
    assert len(repr(ts.asarray(np.zeros(10_000, np.float32)))) < 200  # summarized, as NumPy


def test_operators_with_numpy_on_either_side() -> None:
    rng = np.random.default_rng(1)
    ops = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.le, operator.eq,
           operator.ne, operator.gt, operator.ge, operator.pow]
    for _ in range(24):
        shape_a = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
        shape_b = shape_a[int(rng.integers(0, len(shape_a) + 1)):]  # a broadcastable suffix
        a = np.abs(_random(rng, shape_a, np.float32)) + 1
        b = np.abs(_random(rng, shape_b, np.float32)) + 1
        op = ops[int(rng.integers(0, len(ops)))]
        want = op(a, b)
        for got in (op(ts.asarray(a), b), op(a, ts.asarray(b)), op(ts.asarray(a), ts.asarray(b))):
            assert type(got) is ts.Array, op
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    x = ts.asarray(np.float32([1.0, 2.0]))
    with pytest.raises(ts.DTypeError, match=r"add: operands f64\[2\], f32\[2\]"):
        np.ones(2) + x
    # NumPy functions convert to NumPy, as with JAX arrays
    assert type(np.add(x, 1)) is np.ndarray and type(np.sin(x)) is np.ndarray
    np.testing.assert_array_equal(np.add(x, 1), [2.0, 3.0])
    with pytest.raises(TypeError, match=r"immutable.*\.at\[index\]\.set"):
        x[0] = 1.0  # type: ignore[index]
    # NumPy's reductions call the array's own methods (with out=None): they stay on the device, as JAX's do
    m = np.float32([[1.0, 4.0, 2.0], [3.0, 0.5, 6.0]])
    for fn in (np.sum, np.mean, np.max, np.min, np.std, np.var, np.argmax, np.argmin, np.prod, np.any, np.all):
        got = fn(ts.asarray(m), axis=0)
        assert type(got) is ts.Array, fn
        np.testing.assert_allclose(np.asarray(got), fn(m, axis=0), rtol=1e-6)
    with pytest.raises(TypeError, match="out= is not supported"):
        np.sum(ts.asarray(m), out=np.zeros(()))
    # comparisons with None or strings are Python's (False / True), as in JAX, not a dtype error
    assert (x == None) is False and (x != "a") is True  # noqa: E711


# ---------------------------------------------------------------------------------------------- .at[...]


def _random_update_index(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    kind = int(rng.integers(0, 8))
    n = shape[0]
    if kind == 0:
        return int(rng.integers(-n, n))
    if kind == 1:
        return (slice(None), int(rng.integers(-shape[1], shape[1])))
    if kind == 2:
        return slice(int(rng.integers(-n, n)), None, int(rng.choice([1, 2, -1])))
    if kind == 3:
        return rng.integers(-n, n, size=int(rng.integers(1, 5)))  # duplicates accumulate
    if kind == 4:
        return rng.random(shape) < 0.4  # a boolean mask
    if kind == 5:
        return (Ellipsis, [0, shape[1] - 1])
    if kind == 6:
        return (None, 1)
    return ts.asarray(np.int32(rng.integers(-n, n)))  # a device scalar


def test_at_updates_every_index_kind() -> None:
    rng = np.random.default_rng(2)
    base = _random(rng, (4, 3), np.float32)
    x = ts.asarray(base)
    ufuncs = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}
    for _ in range(20):
        index = _random_update_index(rng, base.shape)
        np_index = int(index) if isinstance(index, ts.Array) else index
        mode = ["set", "add", "multiply", "min", "max"][int(rng.integers(0, 5))]
        value = np.float32(rng.standard_normal())
        want = base.copy()
        if mode == "set":
            want[np_index] = value
        else:
            ufuncs[mode].at(want, np_index, value)
        _same(getattr(x.at[index], mode)(value), want)
    _same(x, base)  # updates never change the array they start from
    with pytest.raises(IndexError, match=r"index 9 is out of range"):
        x.at[9].set(1.0)
    with pytest.raises(ts.DTypeError, match=r"f32\[4, 3\], f64\[\]"):
        x.at[0, 0].set(np.float64(1))


# ---------------------------------------------------------------------------------- methods and lifetimes


def test_astype_transpose_and_properties() -> None:
    rng = np.random.default_rng(3)
    host = _random(rng, (2, 3, 4), np.float32)
    x = ts.asarray(host)
    _same(x.T, host.T)
    _same(ts.asarray(np.float32(1)).T, np.float32(1)[()] * np.ones((), np.float32))
    for dtype in (np.int32, np.float64, np.bool_, np.int8, "f2"):
        _same(x.astype(dtype), host.astype(dtype))
    _same(x.astype(np.complex64), host.astype(np.complex64))
    with pytest.raises(TypeError, match=r"astype: dtype float128 is not supported"):
        x.astype(np.longdouble)
    assert x.device == ts.default_device() and x.devices() == (x.device,)  # host data goes to the default device
    assert x.block_until_ready() is x and x.is_ready()


def test_pickle_and_copies() -> None:
    for value in (np.arange(6, dtype=np.int64).reshape(2, 3), np.float32(2.5), np.zeros((0, 2), np.float16)):
        x = ts.asarray(value)
        for twin in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x), copy.deepcopy({"w": [x]})["w"][0]):
            assert type(twin) is ts.Array and twin.device == x.device
            _same(twin, np.asarray(value))
    x = ts.asarray([1.0, 2.0])
    y = copy.copy(x)
    x.delete()  # a copy has its own buffer
    _same(y, np.float32([1.0, 2.0]))
    half = ts.asarray([1.5]).astype(ts.bf16)
    assert pickle.loads(pickle.dumps(half)).dtype == half.dtype


def test_deleted_and_donated_arrays_raise_clearly() -> None:
    gone = r"deleted or donated"

    @ts.program(donate_argnums=(0,))
    def step(a: Any, b: Any) -> Any:
        return a + b

    x, b = ts.asarray(np.ones(3, np.float32)), ts.asarray(np.ones(3, np.float32))
    _same(step(x, b), np.full(3, 2, np.float32))
    assert x.is_deleted() and x.shape == (3,)
    for use in (np.asarray, repr, str, lambda a: a.block_until_ready(), lambda a: a.is_ready(), lambda a: a + 1,
                lambda a: step(a, b), ts.device_put, copy.copy, pickle.dumps, lambda a: a.item(0)):
        with pytest.raises((RuntimeError, ValueError), match=gone):
            use(x)
    w = ts.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"donated to this call .* also passed"):
        step(w, w)
    assert not w.is_deleted()


# ------------------------------------------------------------------------------------------------- pytrees


class Pair(NamedTuple):
    w: Any
    b: Any


@dataclasses.dataclass
class Layer:
    w: Any
    b: Any


pytree.register_pytree_node(Layer, lambda d: ((d.w, d.b), None), lambda aux, children: Layer(*children))


@attrs.frozen
class Params:
    scale: Any
    layers: Any


def _random_tree(rng: np.random.Generator, depth: int, leaf: Any) -> Any:
    kind = int(rng.integers(0, 9)) if depth > 0 else 0
    if kind == 0:
        return leaf()
    children = [_random_tree(rng, depth - 1, leaf) for _ in range(int(rng.integers(1, 3)))]
    if kind == 1:
        return None
    if kind == 2:
        return tuple(children)
    if kind == 3:
        return list(children)
    if kind == 4:
        keys = [1, "b", 2, "a"][: len(children) + 1]
        return {k: _random_tree(rng, depth - 1, leaf) for k in keys}  # mixed key types
    if kind == 5:
        return collections.OrderedDict((k, c) for k, c in zip("zyx", children))
    if kind == 6:
        return collections.defaultdict(list, {k: c for k, c in zip("qp", children)})
    if kind == 7:
        return Pair(children[0], Layer(children[-1], leaf()))
    return Params(leaf(), children)


def test_pytree_round_trips() -> None:
    rng = np.random.default_rng(4)
    counter = iter(range(10_000))
    for _ in range(60):
        tree = _random_tree(rng, 3, lambda: next(counter))
        leaves, treedef = pytree.flatten(tree)
        assert pytree.unflatten(treedef, leaves) == tree
        assert pytree.tree_map(lambda v: v, tree) == tree
        assert pytree.structure(pytree.unflatten(treedef, leaves)) == treedef
        assert len(pytree.leaf_paths(treedef, "t")) == treedef.num_leaves == len(leaves)
    # equal dicts in another insertion order: one structure, the same leaf order
    assert pytree.flatten({"b": 1, 2: 3, "a": 2, 1: 0}) == pytree.flatten({1: 0, "a": 2, 2: 3, "b": 1})
    assert pytree.structure(collections.OrderedDict(a=1, b=2)) != pytree.structure(collections.OrderedDict(b=2, a=1))
    restored = pytree.unflatten(*reversed(pytree.flatten(collections.defaultdict(list, {"k": 1}))))
    assert type(restored) is collections.defaultdict and restored["new"] == []
    deep: Any = 0
    for _ in range(300):
        deep = [deep]
    assert pytree.leaves(deep) == [0]
    with pytest.raises(TypeError, match=r"cannot order the dict keys"):
        pytree.flatten({(1,): 0, ("a",): 1})
    with pytest.raises(ValueError, match=r"too few leaves"):
        pytree.unflatten(pytree.structure([1, 2]), [1])
    with pytest.raises(ValueError, match=r"too many leaves"):
        pytree.unflatten(pytree.structure([1, 2]), [1, 2, 3])
    with pytest.raises(TypeError, match=r"must be callables"):
        pytree.register_pytree_node(Layer, None, None)  # type: ignore[arg-type]


def test_tree_map_mismatch_names_the_path() -> None:
    for a, b, where in [
        ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2, 3]}, r"tree\['b'\]: a list of 2 vs a list of 3"),
        ({"a": 1, "b": [1, 2]}, {"a": 1, "b": 5}, r"tree\['b'\]: a list of 2 vs a leaf"),
        ([1, (2, None)], [1, (2, 3)], r"tree\[1\]\[1\]: None vs a leaf"),
        (Pair(1, [2]), Pair(1, (2,)), r"tree\.b: a list of 1 vs a tuple of 1"),
        (Params(1, {"x": 1}), Params(1, {"y": 1}),
         r"tree\.layers: a dict with keys \['x'\] vs a dict with keys \['y'\]"),
    ]:
        with pytest.raises(ValueError, match=r"tree_map: tree 1 has another structure than tree 0: at " + where):
            pytree.tree_map(lambda u, v: u, a, b)


def test_programs_take_and_return_every_tree_kind() -> None:
    rng = np.random.default_rng(5)

    @ts.program
    def double(tree: Any) -> Any:
        return pytree.tree_map(lambda v: v * 2, tree)

    for _ in range(6):
        tree = _random_tree(rng, 2, lambda: ts.asarray(_random(rng, (2,), np.float32)))
        got = double(tree)
        assert pytree.structure(got) == pytree.structure(tree)
        for g, w in zip(pytree.leaves(got), pytree.leaves(tree)):
            _same(g, np.asarray(w) * 2)
        assert pytree.structure(double(tree)) == pytree.structure(tree)  # the cached call path too

    params = collections.OrderedDict(w=ts.asarray(np.float32([1.0, 2.0])), b=ts.asarray(np.float32(3.0)))
    grads = ts.grad(lambda p, x: ((p["w"] * x).sum() + p["b"]) ** 2)(params, ts.asarray(np.float32([0.5, -1.0])))
    assert type(grads) is collections.OrderedDict and list(grads) == ["w", "b"]
    inner = 1.0 * 0.5 + 2.0 * -1.0 + 3.0
    _same(grads["w"], np.float32([2 * inner * 0.5, 2 * inner * -1.0]))
    _same(grads["b"], np.float32(2 * inner))
    batched = ts.vmap(lambda p: p.w * p.b)(Pair(ts.asarray(np.float32([1, 2, 3])), ts.asarray(np.float32([4, 5, 6]))))
    _same(batched, np.float32([4, 10, 18]))


# ------------------------------------------------------------------------------------------- Program API


def test_static_and_donated_argnums() -> None:
    x = ts.asarray(np.float32([1.0, 2.0]))

    def scale(a: Any, n: Any) -> Any:
        return a * n

    last = ts.program(static_argnums=(-1,))(scale)
    assert last.static_argnums == (1,)
    _same(last(x, 3), np.float32([3, 6]))
    _same(last(x, 4), np.float32([4, 8]))
    assert last.recompile_reasons == ["static arguments changed: 3 -> 4"]
    for argnums, error, match in [
        ((2,), ValueError, r"static_argnums=\(2,\): scale takes 2 positional arguments"),
        ((-3,), ValueError, r"takes 2 positional arguments"),
        ((1.0,), TypeError, r"must be a sequence of ints"),
    ]:
        with pytest.raises(error, match=match):
            ts.program(static_argnums=argnums)(scale)
    with pytest.raises(ValueError, match=r"negative position needs a function with a fixed number"):
        ts.program(static_argnums=(-1,))(lambda *a: a[0])
    with pytest.raises(ValueError, match=r"both static and donated"):
        ts.program(static_argnums=(1,), donate_argnums=(-1,))(scale)
    unhashable = r"static argument \(static_argnums/static_argnames\) \[3\] must be hashable, but list"
    with pytest.raises(TypeError, match=unhashable):
        last(x, [3])
    plain = ts.program(scale)
    with pytest.raises(TypeError, match=r"non-array argument .* \{3\} must be hashable, but set is not"):
        plain(x, {3})
    varargs = ts.program(static_argnums=(2,))(lambda *a: a[0] * a[2])
    _same(varargs(x, None, 5), np.float32([5, 10]))


def test_static_argnames() -> None:
    """``static_argnames`` as in JAX: keyword arguments held static (Python control flow may read them), and each
    of ``static_argnums``/``static_argnames`` completes the other through the signature."""

    def repeat(x: Any, n: int, *, mode: str = "sum") -> Any:
        for _ in range(n):  # needs a Python int: a traced n would be a ConcretizationError
            x = x * 2
        return tnp.sum(x) if mode == "sum" else tnp.max(x)

    x = np.float32([1.0, 2.0])
    by_name = ts.program(repeat, static_argnames=("n", "mode"))
    assert by_name.static_argnums == (1,) and by_name.static_argnames == {"n", "mode"}
    for call, want in ((lambda: by_name(x, 3), 24.0), (lambda: by_name(x, n=2), 12.0),
                       (lambda: by_name(x, 2, mode="max"), 8.0), (lambda: by_name(x, n=1, mode="max"), 4.0)):
        assert float(np.asarray(call())) == want
    by_position = ts.program(repeat, static_argnums=1)
    assert by_position.static_argnames == {"n"} and float(np.asarray(by_position(x, n=3))) == 24.0
    with pytest.raises(ValueError, match="no keyword parameter 'count'"):
        ts.program(repeat, static_argnames="count")
    with pytest.raises(ts.ConcretizationError):
        ts.program(repeat)(x, n=2)  # without it, n is traced
    with pytest.raises(TypeError, match=r"keyword arguments are dim sizes by name .* but mode= got str"):
        by_name.stage(x, 3, mode="max")  # stage(**dims): example arguments go by position
    compiled = by_name.stage(x, 3).compile()
    with pytest.raises(TypeError, match="static argument 4 differs from 3"):
        compiled(x, 4)


def test_call_forms_and_recompile_reasons() -> None:
    x, y = ts.asarray(np.float32([1.0, 2.0])), ts.asarray(np.float32([3.0, 5.0]))

    @ts.program
    def f(a: Any, b: Any = None, *, scale: float = 2.0) -> Any:
        return a * scale if b is None else a + b

    _same(f(x), np.float32([2, 4]))
    _same(f(x, y), np.float32([4, 7]))
    _same(f(x, b=y), np.float32([4, 7]))
    _same(f(a=x, scale=3.0), np.float32([3, 6]))
    _same(f(x, scale=np.float32(0.5)), np.float32([0.5, 1]))
    assert all(r.startswith("argument structure changed") for r in f.recompile_reasons)
    _same(f(x[:1]), np.float32([2]))
    assert f.recompile_reasons[-1] == "argument types changed: f32[2] -> f32[1]"
    with pytest.raises(TypeError, match=r"missing 1 required positional argument"):
        f()  # type: ignore[call-arg]

    @ts.program
    def packed(*args: Any, **kwargs: Any) -> Any:
        return sum(args) + sum(kwargs.values())

    _same(packed(x, y, z=x), np.float32([5, 9]))
    _same(packed(x), np.float32([1, 2]))

    small = ts.program(lambda a: a * 2)
    small._cache_size = 2
    for n in range(1, 6):
        _same(small(ts.asarray(np.ones(n, np.float32))), np.full(n, 2, np.float32))
    assert len(small._cache) == 2 and len(small.recompile_reasons) == 4


def test_program_outputs_and_closures() -> None:
    x = ts.asarray(np.float32([1.0, 2.0]))
    captured = ts.asarray(np.float32([10.0, 20.0]))
    host = np.float32([1.0, 1.0])
    for fn, check in [
        (lambda a: None, lambda out: out is None),
        (lambda a: (), lambda out: out == ()),
        (lambda a: 3, lambda out: out.dtype == np.int32 and out.item() == 3),
        (lambda a: 2.5, lambda out: out.dtype == np.float32 and out.item() == 2.5),
        (lambda a: a, lambda out: type(out) is ts.Array and out.tolist() == [1.0, 2.0]),
        (lambda a: {"y": [a, (None, a * 2)], "z": Pair(a, 1)},
         lambda out: out["y"][1][0] is None and out["y"][1][1].tolist() == [2.0, 4.0] and out["z"].b.item() == 1),
        (lambda a: a + captured + host, lambda out: out.tolist() == [12.0, 23.0]),
    ]:
        program = ts.program(fn)
        assert check(program(x)) and check(program(x))  # the first (staging) call and the cached one
        assert check(program.stage(x).compile()(x))


def test_compiled_checks_every_argument() -> None:
    @ts.program
    def f(p: Any, s: Any) -> Any:
        return p["w"] * s + p["b"]

    w, b = ts.asarray(np.float32([1.0, 2.0])), ts.asarray(np.float32([0.5, 0.5]))
    compiled = f.stage({"w": w, "b": b}, ts.Spec((), ts.f32)).compile()
    _same(compiled({"w": w, "b": b}, np.float32(2)), np.float32([2.5, 4.5]))
    _same(compiled({"w": np.float32([1, 1])[::-1], "b": b.numpy()}, ts.asarray(np.float32(1))), np.float32([1.5, 1.5]))
    for args, match in [
        (({"w": w, "b": ts.asarray(np.ones(3, np.float32))}, np.float32(2)),
         r"argument p\['b'\] expected f32\[2\], got f32\[3\]"),
        (({"w": w.astype(ts.f64), "b": b}, np.float32(2)), r"argument p\['w'\] expected f32\[2\], got f64\[2\]"),
        (({"w": w, "b": np.ones(2, np.int32)}, np.float32(2)), r"argument p\['b'\] expected f32\[2\], got i32\[2\]"),
        (({"w": w, "b": b}, np.float64(2)), r"argument s expected f32\[\], got f64\[\]"),
        (({"w": w, "b": b}, 2.0), r"argument 2 must be an array, got float"),
        (({"w": w}, np.float32(2)), r"argument structure \(\(\{'w': \*\}, \*\), \{\}\) does not match"),
        (({"w": w, "b": b},), r"argument structure"),
    ]:
        with pytest.raises(TypeError, match=match):
            compiled(*args)


def test_numpy_scalars_as_settings_work_eagerly_as_when_staged() -> None:
    """An axis, a stride, a shape or a rate given as a NumPy scalar (from a config, an argmax, ...) is the number it
    holds: eager calls read it from the op's annotations as staging does (they failed: "strides must be an int",
    "rate must be a Python float"), while NumPy scalars given as data stay data."""
    rng = np.random.default_rng(31)
    x = rng.standard_normal((1, 8, 8, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    key = ts.random.key(5)

    def settings(x: Any, w: Any, key: Any, two: Any, half: Any) -> dict[str, Any]:
        return {
            "conv": ts.nn.conv(x, w, strides=two), "conv_pair": ts.nn.conv(x, w, strides=(two, 1)),
            "dropout": ts.nn.dropout(key, x, half), "sum": tnp.sum(x, axis=two),
            "reshape": tnp.reshape(x, (two * 4, -1)), "take": tnp.take(x, np.array([1, 0]), axis=two),
            "data": tnp.add(x, np.float32(1.5)),
        }

    with_numpy = settings(x, w, key, np.int64(2), np.float64(0.5))
    with_python = settings(x, w, key, 2, 0.5)
    staged = ts.program(lambda x, w, key: settings(x, w, key, np.int64(2), np.float64(0.5)))(x, w, key)
    for name, want in with_python.items():
        np.testing.assert_array_equal(np.asarray(with_numpy[name]), np.asarray(want), err_msg=name)
        np.testing.assert_array_equal(np.asarray(staged[name]), np.asarray(want), err_msg=name)
    with pytest.raises(ts.DTypeError, match="different dtypes"):  # as data, a NumPy f64 scalar stays an f64 array
        tnp.add(x, np.float64(0.5))
