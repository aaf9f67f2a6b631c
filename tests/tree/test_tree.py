"""``absjit.tree`` and the key-path API of ``absjit.tree_util``, against JAX's."""
import collections
import dataclasses
import operator

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import tree, tree_util as tu
from tests.checks import assert_close, jax

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


tu.register_dataclass(Layer)


class Explicit:
    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag


tu.register_dataclass(Explicit, data_fields=["a", "b"], meta_fields=["tag"])

if jax is not None:
    jax.tree_util.register_dataclass(Layer)

TREES = [
    {"b": [1, (2, None)], "a": Point(3, 4)},
    collections.OrderedDict([("z", 1), ("a", (2, 3))]),
    collections.defaultdict(list, {"y": 1, "x": [2]}),
    [None, (), {}, 5],
    Layer(1, [2, 3]),
    None,
    7,
]


@pytest.mark.parametrize("t", TREES, ids=range(len(TREES)))
def test_leaves_and_paths_match_jax(t):
    leaves, treedef = tu.tree_flatten(t)
    assert tu.tree_unflatten(treedef, leaves) == t
    assert type(tu.tree_unflatten(treedef, leaves)) is type(t)
    pairs = tu.tree_leaves_with_path(t)
    assert [x for _, x in pairs] == leaves
    if jax is not None:
        assert leaves == jax.tree_util.tree_leaves(t)
        jpairs = jax.tree_util.tree_leaves_with_path(t)
        assert [tu.keystr(p) for p, _ in pairs] == [jax.tree_util.keystr(p) for p, _ in jpairs]
        assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == \
            [jax.tree_util.keystr(p, simple=True, separator="/") for p, _ in jpairs]


def test_none_is_an_empty_node_unless_is_leaf_says_otherwise():
    assert tu.tree_leaves([None, 1]) == [1]
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_structure(None).num_leaves == 0
    assert tree.map(lambda x: x + 1, (None, 1)) == (None, 2)


def test_ordered_dict_keeps_insertion_order_in_structure():
    a = collections.OrderedDict([("z", 1), ("a", 2)])
    b = collections.OrderedDict([("a", 2), ("z", 1)])
    assert tu.tree_leaves(a) == [1, 2]
    assert tu.tree_structure(a) != tu.tree_structure(b)
    assert tu.tree_structure({"z": 1, "a": 2}) != tu.tree_structure(a)
    out = tree.map(lambda x: x * 10, a)
    assert isinstance(out, collections.OrderedDict) and list(out) == ["z", "a"]


def test_defaultdict_keeps_its_factory():
    d = collections.defaultdict(list, {"b": 1, "a": 2})
    out = tree.map(lambda x: -x, d)
    assert isinstance(out, collections.defaultdict) and out.default_factory is list
    assert dict(out) == {"a": -2, "b": -1}
    assert tu.tree_structure(d) != tu.tree_structure(collections.defaultdict(dict, d))


def test_dataclass_registration():
    layer = Layer(jnp.ones(2), jnp.zeros(2), name="l1")
    leaves, treedef = tu.tree_flatten(layer)
    assert len(leaves) == 2
    back = tu.tree_unflatten(treedef, leaves)
    assert isinstance(back, Layer) and back.name == "l1"
    assert tu.tree_structure(Layer(1, 2, "a")) != tu.tree_structure(Layer(1, 2, "b"))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(layer)] == [".w", ".b"]
    e = tree.map(lambda x: x + 1, Explicit(1, 2, "t"))
    assert (e.a, e.b, e.tag) == (2, 3, "t")

    @absjit.jit
    def step(p):
        return Layer(p.w * 2, p.b + 1, p.name)
    out = step(layer)
    assert out.name == "l1"
    assert_close(out.w, np.full(2, 2.0, np.float32))


def test_register_dataclass_errors():
    class NotADataclass:
        pass
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(NotADataclass)

    @dataclasses.dataclass
    class Partly:
        a: int
        b: int
    with pytest.raises(ValueError, match="'b'"):
        tu.register_dataclass(Partly, data_fields=["a"], meta_fields=[])


def test_registering_twice_is_a_value_error():
    class Once:
        pass
    tu.register_pytree_node(Once, lambda x: ((), None), lambda aux, ch: Once())
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Once, lambda x: ((), None), lambda aux, ch: Once())
    for builtin in (tuple, list, dict, collections.OrderedDict):
        with pytest.raises(ValueError, match="Duplicate"):
            tu.register_pytree_node(builtin, lambda x: ((), None), lambda aux, ch: None)


def test_register_pytree_with_keys():
    class KV:
        def __init__(self, **kw):
            self.kw = kw
    tu.register_pytree_with_keys(
        KV, lambda x: ([(tu.DictKey(k), x.kw[k]) for k in sorted(x.kw)], tuple(sorted(x.kw))),
        lambda keys, ch: KV(**dict(zip(keys, ch))))
    kv = KV(b=2, a=1)
    assert tu.tree_leaves(kv) == [1, 2]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([kv])] == ["[0]['a']", "[0]['b']"]
    assert tree.map(lambda x: x * 3, kv).kw == {"a": 3, "b": 6}


def test_registered_node_without_keys_uses_flattened_index_keys():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    paths = [p for p, _ in tu.tree_leaves_with_path(Pair(1, 2))]
    assert paths == [(tu.FlattenedIndexKey(0),), (tu.FlattenedIndexKey(1),)]
    assert tu.keystr(paths[1]) == "[<flat index 1>]"


def test_key_classes_print_like_jax():
    keys = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("w"), tu.FlattenedIndexKey(2))
    assert tu.keystr(keys) == "['a'][0].w[<flat index 2>]"
    assert tu.keystr(keys, simple=True, separator=".") == "a.0.w.2"
    if jax is not None:
        jkeys = (jax.tree_util.DictKey("a"), jax.tree_util.SequenceKey(0),
                 jax.tree_util.GetAttrKey("w"), jax.tree_util.FlattenedIndexKey(2))
        assert tu.keystr(keys) == jax.tree_util.keystr(jkeys)
        assert [repr(k) for k in keys] == [repr(k) for k in jkeys]
    assert tu.DictKey("a") == tu.DictKey("a") and hash(tu.SequenceKey(1)) == hash(tu.SequenceKey(1))


def test_map_with_path_and_flatten_with_path():
    t = {"w": [1, 2], "p": Point(3, 4)}
    out = tree.map_with_path(lambda p, x, y: f"{tu.keystr(p)}:{x + y}", t, t)
    assert out == {"w": ["['w'][0]:2", "['w'][1]:4"], "p": Point("['p'].x:6", "['p'].y:8")}
    pairs, treedef = tree.flatten_with_path(t)
    assert treedef == tu.tree_structure(t)
    assert pairs[0] == ((tu.DictKey("p"), tu.GetAttrKey("x")), 3)
    assert tree.leaves_with_path(t) == pairs
    with pytest.raises(ValueError, match="different types"):
        tree.map_with_path(lambda p, x, y: x, t, [1])


def test_reduce_all_transpose():
    assert tree.reduce(operator.add, [1, (2, {"a": 3})]) == 6
    assert tree.reduce(operator.add, [], 10) == 10
    with pytest.raises(TypeError):
        tree.reduce(operator.add, [])
    assert tree.all([True, (1, None)]) and not tree.all([True, 0])
    assert tree.all([]) and tu.tree_all(None)
    outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure({"a": 0, "b": 0})
    x = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    assert tree.transpose(outer, inner, x) == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tree.transpose(outer, None, x) == {"a": [1, 3, 5], "b": [2, 4, 6]}
    if jax is not None:
        jout = jax.tree_util.tree_transpose(jax.tree_util.tree_structure([0, 0, 0]),
                                            jax.tree_util.tree_structure({"a": 0, "b": 0}), x)
        assert jout == tree.transpose(outer, inner, x)
    with pytest.raises(TypeError, match="Mismatch"):
        tree.transpose(outer, inner, [1, 2])


def test_partial_is_a_pytree_and_passes_through_jit():
    p = tu.Partial(jnp.multiply, jnp.float32(3.0))
    leaves, treedef = tu.tree_flatten(p)
    assert len(leaves) == 1
    p2 = tu.tree_unflatten(treedef, [jnp.float32(4.0)])
    assert isinstance(p2, tu.Partial) and float(p2(2.0)) == 8.0

    @absjit.jit
    def apply(f, x):
        return f(x)
    assert_close(apply(p, jnp.arange(3.0)), np.arange(3.0, dtype=np.float32) * 3)
    kw = tu.Partial(lambda x1, x2: x1 + x2, x2=jnp.float32(1.0))
    assert tu.keystr(tu.tree_leaves_with_path(kw)[0][0]) == "[<flat index 1>]['x2']"
    assert float(kw(1.0)) == 2.0


def test_interned_structures_keep_key_types():
    # 1 == 1.0, so structures compare equal, but each unflattens to its own keys
    a_leaves, a_def = tu.tree_flatten(({1: "x"},))
    b_leaves, b_def = tu.tree_flatten(({1.0: "x"},))
    assert type(next(iter(tu.tree_unflatten(b_def, b_leaves)[0]))) is float
    assert type(next(iter(tu.tree_unflatten(a_def, a_leaves)[0]))) is int
    assert tu.tree_structure([(1, 2)]) is tu.tree_structure([(3, 4)])


def test_tree_short_names_are_the_tree_util_functions():
    assert tree.map is tu.tree_map and tree.leaves is tu.tree_leaves
    assert tree.flatten is tu.tree_flatten and tree.unflatten is tu.tree_unflatten
    assert tree.structure is tu.tree_structure
    assert set(tree.__all__) >= {"map", "leaves", "flatten", "unflatten", "structure",
                                 "reduce", "all"}
    assert tu.tree_structure([1, (2, None)]).num_nodes == 5


def test_reused_structures_unflatten_through_a_generated_builder():
    tree = {2: [1, (2, None)], 1.0: Point(3, Layer(4, 5, "n")),
            3: collections.OrderedDict([("z", 6)])}
    leaves, treedef = tu.tree_flatten(tree)
    first = tu.tree_unflatten(treedef, leaves)
    assert treedef._build is None
    second = tu.tree_unflatten(treedef, iter(leaves))
    assert treedef._build is not None  # compiled on the second use
    third = tu.tree_unflatten(treedef, [x * 10 for x in leaves])
    for out in (first, second):
        assert out == tree and type(next(k for k in out if k == 1.0)) is float
    assert third[2] == [10, (20, None)] and third[1.0].y.w == 40
    assert isinstance(third[3], collections.OrderedDict) and third[1.0].y.name == "n"
    assert second[2] is not first[2]  # fresh containers every call
    with pytest.raises(ValueError, match="leaves"):
        tu.tree_unflatten(treedef, leaves[:-1])
    big = list(range(1500))
    _, big_def = tu.tree_flatten(big)
    for _ in range(3):  # past the size limit: the recursive path
        assert tu.tree_unflatten(big_def, big) == big
    assert big_def._build is None


def test_map_with_prefix_trees_like_jax():
    out = tree.map(lambda x, y: (x, y), {"a": 1, "b": None}, {"a": [1, 2], "b": None})
    assert out == {"a": (1, [1, 2]), "b": None}
    cases = [({"a": 1}, {"b": 1}, "dict keys"), ((1, 2), [1, 2], "different types"),
             ((1, None), (1, 2), r"different types at key path tree_map tree\[1\]"),
             ((1, 2), (1, 2, 3), "numbers of children"),
             (Layer(1, 2, "x"), Layer(1, 2, "y"), "metadata")]
    for prefix, full, message in cases:
        with pytest.raises(ValueError, match=message):
            tree.map(lambda x, y: x, prefix, full)
        if jax is not None:
            with pytest.raises(ValueError):
                jax.tree_util.tree_map(lambda x, y: x, prefix, full)
    assert tree.map(lambda x, y: x + len(y), Point(1, 2), Point([0], [0, 0])) == Point(2, 4)
