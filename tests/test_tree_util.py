"""ts.tree_util / ts.tree: JAX's pytree utilities (leaf order, None as an empty subtree, registered classes,
transpose), checked against expected values and, where installed, against jax.tree on the same trees."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np
import pytest

import tensorstage as ts


class Point(NamedTuple):
    x: Any
    y: Any


@ts.tree_util.register_pytree_node_class
class Box:
    def __init__(self, value: Any, label: str) -> None:
        self.value, self.label = value, label

    def tree_flatten(self) -> tuple[tuple[Any], str]:
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label: str, children: list[Any]) -> Box:
        return cls(children[0], label)


TREES: list[Any] = [
    {"b": [1, None, (2, 3)], "a": Point(4, {"z": 5, "y": 6})},
    OrderedDict([("second", 1), ("first", (2,))]),
    [None, (), {}, 7],
    8,
]


def test_flatten_map_reduce_and_round_trips() -> None:
    tree = TREES[0]
    assert ts.tree.leaves(tree) == [4, 6, 5, 1, 2, 3]  # dict keys sorted, None holds no leaf
    leaves, treedef = ts.tree_util.tree_flatten(tree)
    assert ts.tree_util.tree_unflatten(treedef, [v * 2 for v in leaves]) == ts.tree.map(lambda v: v * 2, tree)
    assert ts.tree.map(lambda a, b: a - b, tree, tree) == ts.tree.map(lambda v: 0, tree)
    assert ts.tree.reduce(lambda a, b: a + b, tree) == 21 and ts.tree.reduce(max, tree, 100) == 100
    assert ts.tree.all([True, (1, {"a": 2})]) and not ts.tree.all([True, (0,)])
    assert ts.tree_util.treedef_is_leaf(ts.tree.structure(3)) and not ts.tree_util.treedef_is_leaf(treedef)
    assert len(ts.tree_util.treedef_children(treedef)) == 2
    assert ts.tree.leaves(tree, is_leaf=lambda x: isinstance(x, Point))[0] == Point(4, {"z": 5, "y": 6})
    box = ts.tree.map(lambda v: v + 1, Box(np.arange(3), "weights"))
    assert box.label == "weights" and box.value.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="structure"):
        ts.tree.map(lambda a, b: a, tree, [1, 2])
    with pytest.raises(TypeError, match="initializer"):
        ts.tree.reduce(max, [None, ()])


def test_transpose() -> None:
    outer = ts.tree.structure([0, 0, 0])
    inner = ts.tree.structure({"w": 0, "b": 0})
    rows = [{"w": i, "b": -i} for i in range(3)]
    assert ts.tree.transpose(outer, inner, rows) == {"w": [0, 1, 2], "b": [0, -1, -2]}
    assert ts.tree.transpose(outer, None, rows) == {"w": [0, 1, 2], "b": [0, -1, -2]}
    with pytest.raises(ValueError, match="structure"):
        ts.tree.transpose(outer, inner, [{"w": 0, "b": 0}, {"w": 1}, {"w": 2, "b": 2}])


def test_a_registered_class_passes_through_programs_and_grad() -> None:
    loss = ts.grad(lambda box: (box.value**2).sum())
    got = loss(Box(np.array([1.0, 2.0]), "p"))
    assert isinstance(got, Box) and got.label == "p" and np.asarray(got.value).tolist() == [2.0, 4.0]


def test_agrees_with_jax_tree_where_installed() -> None:
    jax = pytest.importorskip("jax")
    for tree in TREES:
        assert ts.tree.leaves(tree) == jax.tree.leaves(tree)
        assert ts.tree.map(lambda v: v * 3, tree) == jax.tree.map(lambda v: v * 3, tree)
        assert ts.tree.structure(tree).num_leaves == jax.tree.structure(tree).num_leaves
