"""tree_util's one-level flattening, treedef helpers, tree_broadcast,
tree_reduce_associative, the registration decorators, default_registry and the key
type aliases, and tree.broadcast/reduce_associative/static, against JAX where
installed."""
import collections
import dataclasses
import operator
import typing

import numpy as np
import pytest

import absjit
from absjit import tree, tree_util as tu

from tests.checks import jax

Point = collections.namedtuple("Point", "x y")

TREES = [
    {"b": 1, "a": [2, (3, None)]},
    (1, 2),
    [],
    None,
    Point(1, [2]),
    collections.OrderedDict([("z", 1), ("a", 2)]),
]


def _jax_tu():
    return jax.tree_util


@pytest.mark.parametrize("t", TREES, ids=range(len(TREES)))
def test_flatten_one_level(t):
    children, aux = tu.flatten_one_level(t)
    pairs, aux_k = tu.flatten_one_level_with_keys(t)
    assert [c for _, c in pairs] == list(children) and aux_k == aux
    assert tu.is_tree_node(type(t))
    if jax is not None:
        j_children, j_aux = _jax_tu().flatten_one_level(t)
        assert list(children) == list(j_children) and aux == j_aux
        j_pairs, _ = _jax_tu().flatten_one_level_with_keys(t)
        if not isinstance(t, Point):  # JAX 0.10 names both namedtuple fields "x"
            assert [str(k) for k, _ in pairs] == [str(k) for k, _ in j_pairs]
    if isinstance(t, Point):
        assert [str(k) for k, _ in pairs] == [".x", ".y"]


def test_flatten_one_level_rejects_leaves_and_is_tree_node():
    for leaf in (3, 2.5, np.ones(2), "s"):
        with pytest.raises(ValueError, match="can't tree-flatten"):
            tu.flatten_one_level(leaf)
        with pytest.raises(ValueError, match="can't tree-flatten"):
            tu.flatten_one_level_with_keys(leaf)
    for typ, want in [(int, False), (type(None), True), (list, True), (dict, True),
                      (Point, True), (collections.OrderedDict, True), (np.ndarray, False),
                      (tu.Partial, True)]:
        assert tu.is_tree_node(typ) is want, typ
        if jax is not None and typ is not tu.Partial:
            assert _jax_tu().is_tree_node(typ) is want
    with pytest.raises(TypeError):
        tu.is_tree_node(3)


def test_treedef_children_and_tuple():
    td = tu.tree_structure({"a": (1, 2), "b": None})
    kids = tu.treedef_children(td)
    assert kids == [tu.tree_structure((0, 0)), tu.tree_structure(None)]
    tup = tu.treedef_tuple([td, tu.tree_structure(1)])
    assert tup == tu.tree_structure(({"a": (1, 2), "b": None}, 1))
    assert tu.tree_unflatten(tup, [1, 2, 3]) == ({"a": (1, 2), "b": None}, 3)
    assert tu.treedef_tuple([]) == tu.tree_structure(())
    assert tu.treedef_children(tu.tree_structure(1)) == []
    with pytest.raises(TypeError):
        tu.treedef_tuple([1])
    if jax is not None:
        jtd = _jax_tu().tree_structure({"a": (1, 2), "b": None})
        assert [str(k) for k in _jax_tu().treedef_children(jtd)] == [str(k) for k in kids]


BROADCASTS = [
    ([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]),
    (1, None),
    (1, {"x": [1, 2], "y": 3}),
    ([1, 2], [None, (3, 4)]),
    ({"a": 7}, {"a": Point(1, 2)}),
]


@pytest.mark.parametrize("prefix,full", BROADCASTS, ids=range(len(BROADCASTS)))
def test_tree_broadcast(prefix, full):
    out = tu.tree_broadcast(prefix, full)
    assert tree.broadcast(prefix, full) == out
    assert tu.tree_structure(out) == tu.tree_structure(full)
    if jax is not None:
        assert out == _jax_tu().tree_broadcast(prefix, full)


def test_tree_broadcast_mismatch_and_is_leaf():
    with pytest.raises(ValueError, match="pytree structure"):
        tu.tree_broadcast([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="pytree structure"):
        tu.tree_broadcast({"a": 1}, {"b": 1})
    out = tu.tree_broadcast([1, 2], [(3, 4), (5,)], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [1, 2]


def test_tree_reduce_associative():
    pair = tu.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    assert pair == ((1, 2), (3, (4, 5)))
    assert tree.reduce_associative(operator.add, {"a": 1, "b": [2, 3]}) == 6
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    assert tu.tree_reduce_associative(operator.add, [7]) == 7
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(operator.add, [None])
    if jax is not None:
        assert pair == _jax_tu().tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    # under jit: leaves are arrays, the reduction is ordinary traced code
    f = absjit.jit(lambda t: tu.tree_reduce_associative(operator.add, t))
    np.testing.assert_allclose(np.asarray(f([np.ones(3), np.ones(3), 2 * np.ones(3)])), 4.0)


def test_register_pytree_with_keys_class_and_static():
    @tu.register_pytree_with_keys_class
    class Cell:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), "meta"

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == "meta"
            return cls(*children)

    c = Cell(1, [2, 3])
    assert tu.tree_leaves(c) == [1, 2, 3]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(c)] == [".a", ".b[0]", ".b[1]"]
    d = tu.tree_map(lambda x: x * 10, c)
    assert (d.a, d.b) == (10, [20, 30])

    @tu.register_static
    class Mode:
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return isinstance(other, Mode) and other.name == self.name

        def __hash__(self):
            return hash(self.name)

    leaves, td = tu.tree_flatten([Mode("fast"), 2.0])
    assert leaves == [2.0]
    assert tu.tree_unflatten(td, [3.0])[0] == Mode("fast")
    assert tu.tree_structure([Mode("a")]) != tu.tree_structure([Mode("b")])
    # a static value is a jit cache key, not a traced argument
    f = absjit.jit(lambda m, x: x * (2 if m.name == "fast" else 3))
    assert float(f(Mode("fast"), 1.0)) == 2.0 and float(f(Mode("slow"), 1.0)) == 3.0


def test_default_registry():
    reg = tu.default_registry
    assert reg.flatten({"a": 1}) == tu.tree_flatten({"a": 1})
    assert reg.flatten_one_level({"a": 1}) == ([1], ("a",))
    assert reg.flatten_one_level(3) is None
    assert reg.is_node(list) and not reg.is_node(int)

    class Box:
        def __init__(self, v):
            self.v = v
    reg.register_node(Box, lambda b: ((b.v,), None), lambda _, ch: Box(*ch))
    assert tu.tree_leaves([Box(4)]) == [4]
    assert reg.flatten_with_path(Box(4))[0][0][0] == (tu.FlattenedIndexKey(0),)


def test_tree_static_field_and_key_aliases():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        kind: str = tree.static(default="add")
        note: str = tree.static(default="n", metadata={"doc": "kept"})

    leaves, td = tu.tree_flatten(Op(1.0))
    assert leaves == [1.0] and tu.tree_unflatten(td, [2.0]) == Op(2.0)
    assert dataclasses.fields(Op)[2].metadata == {"doc": "kept", "static": True}
    assert tu.SequenceKey in typing.get_args(tu.KeyEntry)
    assert typing.get_origin(tu.KeyPath) is tuple
