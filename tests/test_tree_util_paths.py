"""ts.tree_util's key-path API and the rest of jax.tree_util (register_dataclass, register_static, Partial,
tree_broadcast, flatten_one_level, ...): key paths, keystr strings and values checked against expected ones and,
where installed, against jax.tree_util on the same trees; register_dataclass classes and Partial objects through
ts.program, ts.grad and ts.vmap."""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import attrs
import numpy as np
import pytest

import tensorstage as ts
import tensorstage.numpy as tnp

tu = ts.tree_util


class Point(NamedTuple):
    x: Any
    y: Any


@attrs.define
class Pair:
    left: Any
    right: Any


class Box:
    """Registered without keys (children keyed by flat index)."""

    def __init__(self, value: Any, label: str) -> None:
        self.value, self.label = value, label

    def tree_flatten(self) -> tuple[tuple[Any, ...], str]:
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label: str, children: list[Any]) -> Box:
        return cls(children[0], label)


class Keyed:
    """Registered with keys of its own (any printable values: a str and an int)."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def tree_flatten_with_keys(self) -> tuple[list[tuple[Any, Any]], None]:
        return [("first", self.a), (2, self.b)], None

    @classmethod
    def tree_unflatten(cls, aux: None, children: list[Any]) -> Keyed:
        return cls(*children)


@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    act: str = ts.tree.static(default="tanh")


@dataclasses.dataclass
class Stats:  # registered with explicit fields (and through functools.partial, as a decorator is)
    mean: Any
    count: int
    extra: Any = None


class StaticName(str):
    pass


class NotADataclass:
    def __init__(self, value: Any, tag: str) -> None:
        self.value, self.tag = value, tag


tu.register_pytree_node_class(Box)
tu.register_pytree_with_keys_class(Keyed)
tu.register_dataclass(Layer)
functools.partial(tu.register_dataclass, data_fields=["mean", "extra"], meta_fields=["count"])(Stats)
tu.register_static(StaticName)
tu.register_dataclass(NotADataclass, data_fields=["value"], meta_fields=["tag"])


def trees() -> list[Any]:
    """Trees with every kind of container; each is built afresh (some hold mutable leaves)."""
    return [
        {"b": [1, None, (2, 3)], "a": Point(4, {"z": 5, "y": 6}), "c": OrderedDict([("q", 7), ("p", 8)])},
        defaultdict(list, {2: [9], 1: (10, None)}),
        [Box([11, 12], "box"), Keyed(13, {"k": 14}), (), {}, None],
        (Layer(15, [16, 17]), Stats(18, 3, (19,)), StaticName("s"), NotADataclass(20, "t")),
        21,
        None,
    ]


def paths_and_strings(pairs: list[tuple[Any, Any]], keystr: Callable[..., str] = tu.keystr) -> list[Any]:
    """Each (path, leaf) as comparable text: the entries' reprs, keystr, and keystr(simple, '/')."""
    return [(repr(path), keystr(path), keystr(path, simple=True, separator="/"), leaf) for path, leaf in pairs]


# -------------------------------------------------------------------------------------------- expected values


def test_key_entries_and_keystr() -> None:
    path = (tu.DictKey("w"), tu.SequenceKey(0), tu.GetAttrKey("x"), tu.FlattenedIndexKey(3), "raw", 5)
    assert tu.keystr(path) == "['w'][0].x[<flat index 3>]raw5"
    assert tu.keystr(path, simple=True, separator="/") == "w/0/x/3/raw/5"
    assert repr(path[:4]) == "(DictKey(key='w'), SequenceKey(idx=0), GetAttrKey(name='x'), FlattenedIndexKey(key=3))"
    assert tu.DictKey(1) == tu.DictKey(1) and tu.DictKey(1) != cast(object, tu.SequenceKey(1))
    assert len({tu.SequenceKey(1), tu.SequenceKey(1), tu.FlattenedIndexKey(1)}) == 2
    match tu.DictKey("k"):  # the entries unpack by field, as JAX's do
        case tu.DictKey(key=k):
            assert k == "k"
    assert tu.keystr(()) == ""


def test_paths_of_every_container_kind() -> None:
    got = {tu.keystr(p): leaf for p, leaf in tu.tree_leaves_with_path(trees())}
    assert got == {
        "[0]['a'].x": 4, "[0]['a'].y['y']": 6, "[0]['a'].y['z']": 5, "[0]['b'][0]": 1, "[0]['b'][2][0]": 2,
        "[0]['b'][2][1]": 3, "[0]['c']['q']": 7, "[0]['c']['p']": 8, "[1][1][0]": 10, "[1][2][0]": 9,
        "[2][0][<flat index 0>][0]": 11, "[2][0][<flat index 0>][1]": 12, "[2][1]first": 13, "[2][1]2['k']": 14,
        "[3][0].w": 15, "[3][0].b[0]": 16, "[3][0].b[1]": 17, "[3][1].mean": 18, "[3][1].extra[0]": 19,
        "[3][3].value": 20, "[4]": 21,
    }
    assert tu.tree_leaves_with_path(Pair(1, [2])) == [((tu.GetAttrKey("left"),), 1),
                                                       ((tu.GetAttrKey("right"), tu.SequenceKey(0)), 2)]
    assert tu.tree_leaves_with_path(tu.Partial(max, 1, key=2)) == [
        ((tu.FlattenedIndexKey(0), tu.SequenceKey(0)), 1), ((tu.FlattenedIndexKey(1), tu.DictKey("key")), 2)]
    assert tu.tree_flatten_with_path(None) == ([], ts.tree.structure(None))


@pytest.mark.parametrize("is_leaf", [None, lambda x: isinstance(x, (Point, Box, list))])
def test_paths_agree_with_plain_flatten(is_leaf: Callable[[Any], bool] | None) -> None:
    """The same leaves, in the same order, and an equal structure (programs key caches on it)."""
    for tree in [*trees(), trees(), Pair(1, (2, None))]:
        pairs, treedef = tu.tree_flatten_with_path(tree, is_leaf)
        leaves, plain = tu.tree_flatten(tree, is_leaf)
        assert treedef == plain and [leaf for _, leaf in pairs] == leaves
        assert hash(treedef) == hash(plain)
    rebuilt = ts.tree.map_with_path(lambda path, x: tu.keystr(path), trees())
    assert rebuilt[3][0] == Layer("[3][0].w", ["[3][0].b[0]", "[3][0].b[1]"], "tanh")
    assert rebuilt[3][2] == "s" and rebuilt[2][1].a == "[2][1]first"


def test_map_with_path_and_is_leaf_taking_the_path() -> None:
    tree = {"a": [1, 2], "b": {"c": 3}}
    stop_at_a = lambda path, x: path == (tu.DictKey("a"),)  # noqa: E731
    pairs, _ = ts.tree.flatten_with_path(tree, stop_at_a, is_leaf_takes_path=True)
    assert pairs == [((tu.DictKey("a"),), [1, 2]), ((tu.DictKey("b"), tu.DictKey("c")), 3)]
    # The other trees may be deeper: the first tree's structure is their prefix.
    got = ts.tree.map_with_path(lambda p, x, y: (tu.keystr(p), x, y), [1, 2], [[3], 4])
    assert got == [("[0]", 1, [3]), ("[1]", 2, 4)]
    with pytest.raises(ValueError, match=r"tree_map_with_path: tree 1\[1\]: expected a dict with keys \['k'\]"):
        ts.tree.map_with_path(lambda p, x, y: x, [1, {"k": 2}], [1, {"j": 2}])


def test_one_level_node_tests_and_tuples() -> None:
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == ([[2], 1], ("a", "b"))
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    assert tu.flatten_one_level_with_keys(Point(1, 2)) == ([(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)], Point)
    assert tu.flatten_one_level_with_keys(Keyed(1, 2)) == ([("first", 1), (2, 2)], None)
    assert tu.flatten_one_level(Layer(1, 2, "relu")) == ([1, 2], ("relu",))
    assert tu.flatten_one_level(None) == ([], None)
    with pytest.raises(ValueError, match="int is a leaf"):
        tu.flatten_one_level(3)
    assert [tu.is_tree_node(t) for t in (tuple, dict, type(None), Point, Pair, Box, Layer, StaticName)] == [True] * 8
    assert not tu.is_tree_node(int) and not tu.is_tree_node(np.ndarray)
    with pytest.raises(TypeError, match="expected a class"):
        tu.is_tree_node(3)  # type: ignore[arg-type]
    assert tu.all_leaves([1, np.ones(2), "s"]) and tu.all_leaves([])
    assert not tu.all_leaves([1, None]) and not tu.all_leaves([[1]])
    assert tu.all_leaves([None, (1,)], is_leaf=lambda x: x is None or isinstance(x, tuple))
    pair = tu.treedef_tuple([ts.tree.structure([1, 2]), ts.tree.structure({"a": 1})])
    assert pair == ts.tree.structure(([0, 0], {"a": 0})) and pair.num_leaves == 3
    with pytest.raises(TypeError, match="treedef_tuple"):
        tu.treedef_tuple([[1]])  # type: ignore[list-item]


def test_broadcast_and_associative_reduce() -> None:
    got = ts.tree.broadcast([1, {"a": 2}, None], [(3, 4), {"a": [5, 6]}, None])
    assert got == [(1, 1), {"a": [2, 2]}, None]
    assert ts.tree.broadcast(0, {"a": 1, "b": [2]}) == {"a": 0, "b": [0]}
    with pytest.raises(ValueError, match=r"tree_broadcast: full_tree\[1\]: expected a tuple of 2 .* found a list of 3"):
        ts.tree.broadcast([0, (1, 2)], [0, [1, 2, 3]])
    calls: list[tuple[Any, Any]] = []

    def concat(a: str, b: str) -> str:
        calls.append((a, b))
        return a + b

    assert ts.tree.reduce_associative(concat, ["a", ("b", "c"), {"d": "d", "e": "e"}]) == "abcde"
    assert calls[0] == ("a", "b") and calls[-1] == ("ab", "cde")  # balanced: halves, not a left fold
    assert ts.tree.reduce_associative(operator.add, [None], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        ts.tree.reduce_associative(operator.add, [])


def test_register_dataclass_fields_and_errors() -> None:
    leaves, treedef = tu.tree_flatten(Stats(1.0, 4, None))
    assert leaves == [1.0] and tu.tree_unflatten(treedef, [2.0]) == Stats(2.0, 4, None)
    assert tu.tree_structure(Stats(1.0, 4)) != tu.tree_structure(Stats(1.0, 5))  # meta fields are structure
    assert ts.tree.map(lambda v: v * 2, NotADataclass(3, "t")).value == 6

    @dataclasses.dataclass
    class Half:
        a: Any
        b: Any

    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        tu.register_dataclass(Half, data_fields=["a", "b"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Box)
    with pytest.raises(ValueError, match=r"missing \['b'\] .* unexpected \['c'\]"):
        tu.register_dataclass(Half, data_fields=["a", "c"], meta_fields=[])
    with pytest.raises(ValueError, match=r"both data and meta: \['a'\]"):
        tu.register_dataclass(NotADataclass, data_fields=["a"], meta_fields=["a"])
    assert tu.register_dataclass(Half, data_fields=["a"], meta_fields=[], drop_fields=["b"]) is Half
    assert tu.tree_leaves(Half(1, 2)) == [1]


class Span:
    def __init__(self, lo: Any, hi: Any) -> None:
        self.lo, self.hi = lo, hi


def test_registering_keys_with_register_pytree_node_and_again_without() -> None:
    flatten = lambda s: ((s.lo, s.hi), None)  # noqa: E731
    unflatten = lambda _, children: Span(*children)  # noqa: E731
    with_keys = lambda s: (((tu.GetAttrKey("lo"), s.lo), (tu.GetAttrKey("hi"), s.hi)), None)  # noqa: E731
    tu.register_pytree_node(Span, flatten, unflatten, with_keys)  # JAX's fourth argument
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([Span(1, 2)])] == ["[0].lo", "[0].hi"]
    tu.register_pytree_with_keys(Span, with_keys, unflatten, flatten_func=flatten)
    assert tu.tree_flatten_with_path(Span(1, 2))[1] == tu.tree_structure(Span(3, 4))
    tu.register_pytree_node(Span, flatten, unflatten)  # registered anew without keys: flat indices
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Span(1, 2))] == ["[<flat index 0>]", "[<flat index 1>]"]
    with pytest.raises(TypeError, match=r"must be callables, got .* and 3"):
        tu.register_pytree_with_keys(Span, 3, unflatten)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- in programs


def _apply(layer: Layer, x: Any) -> Any:
    y = x @ layer.w + layer.b
    return tnp.tanh(y) if layer.act == "tanh" else y


def test_dataclasses_partials_and_statics_through_program_grad_and_vmap() -> None:
    rng = np.random.default_rng(0)
    layer = Layer(rng.standard_normal((3, 2)), rng.standard_normal(2))
    x = rng.standard_normal((4, 3))
    want = np.tanh(x @ layer.w + layer.b)

    def run(f: Any, x: Any, name: StaticName) -> tuple[Any, Any]:
        assert isinstance(name, StaticName)  # a static argument, held in the structure
        return f(x), f

    out, f2 = ts.program(run)(tu.Partial(_apply, layer), x, StaticName("relu"))
    assert isinstance(f2, tu.Partial) and f2.func is _apply and isinstance(f2.args[0], Layer)
    assert f2.args[0].act == "tanh" and np.allclose(np.asarray(out), want, atol=1e-5)
    np.testing.assert_allclose(np.asarray(f2.args[0].w), layer.w, rtol=1e-6)

    # d/dw of sum(tanh(x w + b)) = x^T (1 - y^2), d/db = sum_rows(1 - y^2)
    def loss(f: tu.Partial[Any], x: Any) -> Any:
        return f(x).sum()

    grads = ts.grad(loss)(tu.Partial(_apply, layer), x)
    assert isinstance(grads, tu.Partial) and isinstance(grads.args[0], Layer) and grads.args[0].act == "tanh"
    np.testing.assert_allclose(np.asarray(grads.args[0].w), x.T @ (1 - want**2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(grads.args[0].b), (1 - want**2).sum(0), rtol=1e-4, atol=1e-5)

    # Per-example gradients: a batch of Layers, one per row of x (vmap over a dataclass output).
    per_row = ts.vmap(ts.grad(lambda lay, row: _apply(lay, row).sum()), in_axes=(None, 0))(layer, x)
    assert isinstance(per_row, Layer) and per_row.act == "tanh" and np.asarray(per_row.w).shape == (4, 3, 2)
    for i in range(4):
        np.testing.assert_allclose(np.asarray(per_row.w)[i], np.outer(x[i], 1 - want[i] ** 2), rtol=1e-4, atol=1e-5)
    # A batched dataclass in (in_axes over its leaves) and a Partial argument.
    stacked = Layer(np.stack([layer.w, -layer.w]), np.stack([layer.b, layer.b]), "linear")
    got = ts.vmap(lambda f, lay: f(lay), in_axes=(None, 0))(tu.Partial(_apply, x=x), stacked)
    np.testing.assert_allclose(np.asarray(got), [x @ layer.w + layer.b, -x @ layer.w + layer.b], rtol=1e-5, atol=1e-5)


def test_partial_keeps_a_wrapped_partials_arguments_static() -> None:
    inner = functools.partial(lambda a, b, c: 100 * a + 10 * b + c, 1)
    p = tu.Partial(inner, 2)
    assert p(3) == 123 and tu.tree_leaves(p) == [2]  # 1 is the inner partial's, not a leaf
    assert ts.tree.map(lambda v: v * 5, p)(3) == 203
    assert tu.tree_structure(p) == tu.tree_structure(tu.Partial(inner, 0))


# ------------------------------------------------------------------------------------------ against jax


@functools.cache
def _jax() -> Any:
    """jax.tree_util with this file's classes registered in it (registrations are global: once)."""
    jax = pytest.importorskip("jax")
    jtu = jax.tree_util
    jtu.register_pytree_node_class(Box)
    jtu.register_pytree_with_keys_class(Keyed)
    jtu.register_dataclass(Layer)
    jtu.register_dataclass(Stats, data_fields=["mean", "extra"], meta_fields=["count"])
    jtu.register_static(StaticName)
    jtu.register_dataclass(NotADataclass, data_fields=["value"], meta_fields=["tag"])
    return jtu


def test_paths_agree_with_jax() -> None:
    jtu = _jax()
    for tree in [*trees(), trees()]:
        want = paths_and_strings(jtu.tree_leaves_with_path(tree), jtu.keystr)
        assert paths_and_strings(tu.tree_leaves_with_path(tree)) == want
        mapped = ts.tree.map_with_path(lambda p, x: tu.keystr(p, simple=True, separator="."), tree)
        assert ts.tree.leaves(mapped) == jtu.tree_leaves(
            jtu.tree_map_with_path(lambda p, x: jtu.keystr(p, simple=True, separator="."), tree))
    for is_leaf in (lambda p, x: len(p) == 2, lambda p, x: isinstance(x, list)):
        tree = trees()[0]
        ours = tu.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path=True)
        assert paths_and_strings(ours) == paths_and_strings(jtu.tree_leaves_with_path(tree, is_leaf, True), jtu.keystr)
    want = paths_and_strings(jtu.tree_leaves_with_path(jtu.Partial(max, 1, [2], key=3)), jtu.keystr)
    assert paths_and_strings(tu.tree_leaves_with_path(tu.Partial(max, 1, [2], key=3))) == want


def test_the_rest_agrees_with_jax() -> None:
    jtu = _jax()
    for node in [{"b": 1, "a": [2]}, [1, 2], (1, None), None, OrderedDict([("q", 7), ("p", 8)]),
                 defaultdict(int, {2: 9, 1: 10}), Layer(1, 2, "relu"), Box(3, "l"), StaticName("s")]:
        children, data = tu.flatten_one_level(node)
        j_children, j_data = jtu.flatten_one_level(node)
        assert (list(children), data) == (list(j_children), j_data)
        pairs, _ = tu.flatten_one_level_with_keys(node)
        assert repr([k for k, _ in pairs]) == repr([k for k, _ in jtu.flatten_one_level_with_keys(node)[0]])
    for typ in (tuple, list, dict, OrderedDict, defaultdict, type(None), Point, Box, Layer, StaticName, int, str):
        assert tu.is_tree_node(typ) == jtu.is_tree_node(typ)
    for items in ([1, 2], [1, None], [[1]], [], [(), 3]):
        assert tu.all_leaves(items) == jtu.all_leaves(items)
    for prefix, full in [([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]), (0, trees()[0]), ({"w": 1, "b": None},
                                                                                    {"w": [1, 2], "b": None})]:
        assert ts.tree.broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    tree = trees()[0]
    nest = lambda a, b: [a, b]  # noqa: E731 - the shape of the result shows the order of the reduction
    assert ts.tree.reduce_associative(nest, tree) == jtu.tree_reduce_associative(nest, tree)
    structures = [tu.tree_structure(t) for t in ([1, 2], {"a": (1, None)})]
    j_structures = [jtu.tree_structure(t) for t in ([1, 2], {"a": (1, None)})]
    assert tu.treedef_tuple(structures).num_leaves == jtu.treedef_tuple(j_structures).num_leaves == 3
    assert f"PyTreeDef({tu.treedef_tuple(structures)})" == str(jtu.treedef_tuple(j_structures))
