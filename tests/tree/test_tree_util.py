import collections

import pytest

from absjit import tree_util as tu

Point = collections.namedtuple("Point", "x y")


class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda aux, ch: Box(*ch))


def test_roundtrip_builtin_nodes():
    tree = {"b": [1, (2, None)], "a": Point(3, 4)}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [3, 4, 1, 2]
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef == tu.tree_structure({"a": Point(0, 0), "b": [0, (0, None)]})
    assert hash(treedef) == hash(tu.tree_structure({"a": Point(0, 0), "b": [0, (0, None)]}))


def test_registered_node_and_map():
    out = tu.tree_map(lambda x, y: x + y, Box(1, [2]), Box(10, [20]))
    assert isinstance(out, Box) and out.a == 11 and out.b == [22]
    with pytest.raises(ValueError):
        tu.tree_map(lambda x, y: x, (1, 2), [1, 2])


def test_leaf_paths():
    assert tu.leaf_paths({"w": [1, 2], "p": Point(1, 2)}) == ["['p'].x", "['p'].y", "['w'][0]", "['w'][1]"]


def test_wrong_leaf_count():
    _, treedef = tu.tree_flatten((1, 2))
    with pytest.raises(ValueError):
        tu.tree_unflatten(treedef, [1])
