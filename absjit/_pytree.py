"""The pytree core behind ``absjit.tree_util`` (which re-exports it): the node
registry, ``PyTreeDef``, flattening and unflattening, ``tree_map`` and friends.

Pytrees: nested containers whose leaves are arrays.

Built-in nodes: ``tuple``, ``list``, ``dict`` (keys sorted), ``None`` (no leaves),
``namedtuple``, ``collections.OrderedDict`` (insertion order) and
``collections.defaultdict`` (keys sorted); more with :func:`register_pytree_node`,
:func:`register_pytree_with_keys`, :func:`register_pytree_node_class` and
:func:`register_dataclass`. Everything else is a leaf. The ``*_with_path`` functions
pair every leaf with its key path (``DictKey``, ``SequenceKey``, ``GetAttrKey``,
``FlattenedIndexKey``), as in ``jax.tree_util``.

Examples
--------
>>> leaves, tree = tree_flatten({"b": 2, "a": (1, None)})
>>> leaves
[1, 2]
>>> tree_unflatten(tree, [10, 20])
{'a': (10, None), 'b': 20}
>>> [keystr(p) for p, _ in tree_flatten_with_path({"w": [1, 2]})[0]]
["['w'][0]", "['w'][1]"]
"""
from __future__ import annotations

import collections
import dataclasses
import functools

from ._tree_paths import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr,
                          _path_walk)

__all__ = ["PyTreeDef", "register_pytree_node", "register_pytree_with_keys",
           "register_pytree_node_class", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_reduce",
           "tree_all", "tree_transpose", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "keystr", "DictKey", "SequenceKey", "GetAttrKey",
           "FlattenedIndexKey", "Partial", "leaf_paths", "treedef_is_leaf", "all_leaves"]

# type -> (flatten, unflatten, flatten_with_keys or None)
_REGISTRY: dict = {}


def _register(nodetype, flatten_func, unflatten_func, flatten_with_keys):
    if nodetype in _REGISTRY or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _REGISTRY[nodetype] = (flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node(nodetype, flatten_func, unflatten_func) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``; ``aux_data`` should be hashable and
    comparable with ``==`` (unhashable aux data works, hashed by its node type).
    Registering a type twice is a ``ValueError``. Paths through such a node use
    ``FlattenedIndexKey``.

    Examples
    --------
    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                      lambda aux, ch: Pair(*ch))
    >>> tree_leaves(Pair(1, [2, 3]))
    [1, 2, 3]
    """
    _register(nodetype, flatten_func, unflatten_func, None)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func,
                              flatten_func=None) -> None:
    """Make ``nodetype`` a pytree node whose children have keys.

    ``flatten_with_keys(x) -> (((key, child), ...), aux_data)``; ``flatten_func``
    (children without keys, for speed) is derived from it when not given.

    Examples
    --------
    >>> class Named:
    ...     def __init__(self, x):
    ...         self.x = x
    >>> register_pytree_with_keys(Named, lambda n: (((GetAttrKey("x"), n.x),), None),
    ...                           lambda aux, ch: Named(*ch))
    >>> keystr(tree_flatten_with_path(Named(1))[0][0][0])
    '.x'
    """
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten()`` and ``cls.tree_unflatten(aux, children)``.

    Examples
    --------
    >>> @register_pytree_node_class
    ... class Box:
    ...     def __init__(self, v):
    ...         self.v = v
    ...     def tree_flatten(self):
    ...         return (self.v,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> tree_leaves(Box(3))
    [3]
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Make a dataclass a pytree: ``data_fields`` are children, ``meta_fields`` static
    (part of the structure, hashable).

    With neither given, the dataclass's fields are used: those with
    ``field(metadata=dict(static=True))`` are meta fields, the others data fields.
    Works as a decorator. Paths through the node use ``GetAttrKey``.

    Examples
    --------
    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: float
    ...     name: str = dataclasses.field(default="p", metadata=dict(static=True))
    >>> tree_leaves(Params(1.0))
    [1.0]
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                            "pass data_fields and meta_fields explicitly")
        data_fields, meta_fields = [], []
        for f in dataclasses.fields(nodetype):
            if f.name in drop_fields or not f.init:
                continue
            (meta_fields if f.metadata.get("static", False) else data_fields).append(f.name)
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: pass both data_fields and meta_fields, or "
                        "neither (to infer them from the dataclass's fields)")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        missing = init_fields - set(data_fields) - set(meta_fields) - set(drop_fields)
        if missing:
            raise ValueError(f"register_dataclass: fields {sorted(missing)} of "
                             f"{nodetype.__name__} are in neither data_fields nor "
                             "meta_fields nor drop_fields")

    def flatten(x):
        return ([getattr(x, n) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, children):
        kwargs = dict(zip(data_fields, children))
        kwargs.update(zip(meta_fields, meta))
        return nodetype(**kwargs)

    _register(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


class PyTreeDef:
    """The structure of a pytree (hashable, compares by value).

    Examples
    --------
    >>> tree_structure({"a": (1, None)}).num_leaves
    1
    """

    __slots__ = ("kind", "data", "children", "num_leaves", "_hash", "_interned", "_build",
                 "_uses")

    # kinds
    LEAF, NONE, TUPLE, LIST, DICT, NAMEDTUPLE, CUSTOM = range(7)

    def __init__(self, kind, data, children):
        self.kind = kind
        self.data = data
        self.children = children
        if kind == PyTreeDef.LEAF:
            self.num_leaves = 1
        else:
            self.num_leaves = sum(c.num_leaves for c in children)
        try:
            self._hash = hash((kind, data if kind != PyTreeDef.CUSTOM else (data[0], data[1]),
                               children))
        except TypeError:  # unhashable aux data (a dict, a list): hashed by its node type
            self._hash = hash((kind, data[0], children))
        self._interned = False
        self._build = None  # a compiled unflatten, made when the tree is reused
        self._uses = 0

    def __eq__(self, other):
        return (self is other) or (type(other) is PyTreeDef and self._hash == other._hash
                                   and self.kind == other.kind
                                   and _same_data(self.data, other.data)
                                   and self.children == other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._pp()})"

    @property
    def num_nodes(self) -> int:
        """Nodes in the tree, leaves and ``None`` included."""
        return 1 + sum(c.num_nodes for c in self.children)

    def _pp(self):
        k = self.kind
        if k == PyTreeDef.LEAF:
            return "*"
        if k == PyTreeDef.NONE:
            return "None"
        inner = ", ".join(c._pp() for c in self.children)
        if k == PyTreeDef.TUPLE:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if k == PyTreeDef.LIST:
            return f"[{inner}]"
        if k == PyTreeDef.DICT:
            return "{" + ", ".join(f"{key!r}: {c._pp()}"
                                   for key, c in zip(self.data, self.children)) + "}"
        # Other nodes print as JAX 0.10 prints them: CustomNode(type[aux], [children]).
        if k == PyTreeDef.NAMEDTUPLE:
            return f"CustomNode(namedtuple[{self.data.__name__}], [{inner}])"
        return f"CustomNode({self.data[0].__name__}[{self.data[1]}], [{inner}])"

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)


def _same_data(a, b) -> bool:
    """Node data equal by ``==``; aux data whose ``==`` is not a plain truth value (a
    NumPy array) is equal only to itself."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        pass
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        try:
            if not bool(x == y):
                return False
        except (TypeError, ValueError):
            return False
    return True


_LEAF = PyTreeDef(PyTreeDef.LEAF, None, ())
_NONE = PyTreeDef(PyTreeDef.NONE, None, ())
_LEAF._interned = _NONE._interned = True


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node(kind, data, children):
    """The interned ``PyTreeDef`` of a tuple, list or namedtuple node: a structure seen
    before is found by one dict lookup instead of being rebuilt (and re-hashed).

    Only these kinds are interned: their ``data`` (a length, a class) equals another's
    only when it is the same thing, whereas dict keys and custom aux data may compare
    equal across types (``1 == 1.0``) and must be kept as given; so a node is interned
    only when all its children are (then equal children are the same objects).
    """
    for c in children:
        if not c._interned:
            return PyTreeDef(kind, data, children)
    key = (kind, data, children)
    td = _INTERNED.get(key)
    if td is not None:
        return td
    if len(_INTERNED) >= _INTERN_LIMIT:
        _INTERNED.clear()
    td = _INTERNED[key] = PyTreeDef(kind, data, children)
    td._interned = True
    return td


_INTERNED: dict = {}
_INTERN_LIMIT = 1 << 16


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    # Arrays are the common case: one dict lookup decides they are not nodes.
    node = _NODE_KINDS.get(t)
    if node is None:
        if x is None:
            return _NONE
        reg = _REGISTRY.get(t)
        if reg is not None:
            children, aux = reg[0](x)
            return PyTreeDef(PyTreeDef.CUSTOM, (t, aux),
                             tuple([_flatten(c, leaves, is_leaf) for c in children]))
        if _is_namedtuple(x):
            return _node(PyTreeDef.NAMEDTUPLE, t,
                         tuple([_flatten(c, leaves, is_leaf) for c in x]))
        leaves.append(x)
        return _LEAF
    if node is not PyTreeDef.DICT:
        return _node(node, len(x), tuple([_flatten(c, leaves, is_leaf) for c in x]))
    try:
        keys = tuple(sorted(x))
    except TypeError:
        # JAX raises ValueError here (its C++ comparator's error).
        raise ValueError(f"Comparator raised exception while sorting pytree dictionary "
                         f"keys: the keys {list(x)!r} cannot be sorted") from None
    return PyTreeDef(PyTreeDef.DICT, keys, tuple([_flatten(x[k], leaves, is_leaf) for k in keys]))


_NODE_KINDS = {tuple: PyTreeDef.TUPLE, list: PyTreeDef.LIST, dict: PyTreeDef.DICT}


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``: the leaves in order and the structure.

    ``is_leaf(x) -> bool`` stops the descent at ``x`` (``None`` included).

    Examples
    --------
    >>> tree_flatten([1, (2, None)])
    ([1, 2], PyTreeDef([*, (*, None)]))
    """
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _unflatten(treedef, it):
    k = treedef.kind
    if k == PyTreeDef.LEAF:
        return next(it)
    if k == PyTreeDef.NONE:
        return None
    children = [_unflatten(c, it) for c in treedef.children]
    if k == PyTreeDef.TUPLE:
        return tuple(children)
    if k == PyTreeDef.LIST:
        return children
    if k == PyTreeDef.DICT:
        return dict(zip(treedef.data, children))
    if k == PyTreeDef.NAMEDTUPLE:
        return treedef.data(*children)
    cls, aux = treedef.data
    return _REGISTRY[cls][1](aux, children)


def _compile_builder(treedef):
    """A function ``leaves -> tree`` for ``treedef``, generated as one expression
    (``lambda l: (l[0], [l[1], l[2]])``): no recursion or iterator per call. Dict keys,
    classes and custom aux data are bound by name, never printed into the source."""
    env: dict = {}
    counter = [0]

    def name_of(value):
        n = f"_v{len(env)}"
        env[n] = value
        return n

    def expr(td):
        k = td.kind
        if k == PyTreeDef.LEAF:
            i = counter[0]
            counter[0] += 1
            return f"l[{i}]"
        if k == PyTreeDef.NONE:
            return "None"
        parts = [expr(c) for c in td.children]
        if k == PyTreeDef.TUPLE:
            return "(" + "".join(p + ", " for p in parts) + ")"
        if k == PyTreeDef.LIST:
            return "[" + ", ".join(parts) + "]"
        if k == PyTreeDef.DICT:
            return "{" + ", ".join(f"{name_of(key)}: {p}" for key, p in
                                   zip(td.data, parts)) + "}"
        if k == PyTreeDef.NAMEDTUPLE:
            return f"{name_of(td.data)}(" + ", ".join(parts) + ")"
        cls, aux = td.data
        return f"{name_of(_REGISTRY[cls][1])}({name_of(aux)}, [" + ", ".join(parts) + "])"

    source = "lambda l: " + expr(treedef)
    return eval(source, env)  # noqa: S307 - source built above from the structure only


# Deeper or bigger trees keep the recursive path (the generated expression would hit
# Python's parser limits; such trees are not on a per-call hot path).
_BUILD_MAX_LEAVES, _BUILD_MAX_DEPTH = 1000, 50


def _depth(td) -> int:
    return 1 + max((_depth(c) for c in td.children), default=0)


def tree_unflatten(treedef: PyTreeDef, leaves):
    """The pytree of structure ``treedef`` holding ``leaves``.

    A structure unflattened more than once (a jitted function's output tree, say) gets
    a generated builder, so later calls cost one function call.

    Examples
    --------
    >>> tree_unflatten(tree_structure((0, [0])), [1, 2])
    (1, [2])
    """
    if type(leaves) is not list:
        leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    build = treedef._build
    if build is not None:
        return build(leaves)
    treedef._uses += 1
    if treedef._uses >= 2 and treedef.num_leaves <= _BUILD_MAX_LEAVES \
            and _depth(treedef) <= _BUILD_MAX_DEPTH:
        build = treedef._build = _compile_builder(treedef)
        return build(leaves)
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of ``tree``, in flattening order.

    Examples
    --------
    >>> tree_leaves({"b": 1, "a": [2, None]})
    [2, 1]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree``.

    Examples
    --------
    >>> tree_structure((1, 2))
    PyTreeDef((*, *))
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is the structure of a single leaf.

    Examples
    --------
    >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure([1.0]))
    (True, False)
    """
    return treedef.kind == PyTreeDef.LEAF


def all_leaves(iterable, is_leaf=None) -> bool:
    """Whether every element of ``iterable`` is a leaf.

    Examples
    --------
    >>> all_leaves([1, 2.0]), all_leaves([1, (2,)])
    (True, False)
    """
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) for x in iterable)


def _flatten_up_to(treedef, tree, path, out):
    """Append the subtrees of ``tree`` at ``treedef``'s leaves (``treedef`` must be a
    prefix of ``tree``'s structure), or raise ``ValueError`` naming the key path."""
    k = treedef.kind
    if k == PyTreeDef.LEAF:
        out.append(tree)
        return
    where = f"tree_map tree{path}"
    expected = {PyTreeDef.NONE: type(None), PyTreeDef.TUPLE: tuple, PyTreeDef.LIST: list,
                PyTreeDef.DICT: dict}.get(k)
    if expected is None:
        expected = treedef.data if k == PyTreeDef.NAMEDTUPLE else treedef.data[0]
    if type(tree) is not expected:
        raise ValueError(f"pytree structure error: different types at key path {where}: "
                         f"the prefix has a {expected} where the full pytree has a "
                         f"{type(tree)}")
    if k == PyTreeDef.NONE:
        return
    if k == PyTreeDef.DICT:
        keys = tuple(sorted(tree))
        if keys != treedef.data:
            raise ValueError(f"pytree structure error: different dict keys at key path "
                             f"{where}: {list(treedef.data)} in the prefix, {list(keys)} in "
                             "the full pytree")
        children = [tree[key] for key in keys]
        paths = [f"[{key!r}]" for key in keys]
    elif k == PyTreeDef.CUSTOM:
        children, aux = _REGISTRY[expected][0](tree)
        if aux != treedef.data[1]:
            raise ValueError(f"pytree structure error: different metadata at key path "
                             f"{where}: {treedef.data[1]!r} in the prefix, {aux!r} in the "
                             "full pytree")
        children = list(children)
        paths = [f"[<flat index {i}>]" for i in range(len(children))]
    else:
        children = list(tree)
        paths = [f"[{i}]" for i in range(len(children))]
    if len(children) != len(treedef.children):
        raise ValueError(f"pytree structure error: different numbers of children at key "
                         f"path {where}: {len(treedef.children)} in the prefix, "
                         f"{len(children)} in the full pytree")
    for sub, child, p in zip(treedef.children, children, paths):
        _flatten_up_to(sub, child, path + p, out)



def _leaves_up_to(treedef, rest, is_leaf) -> list:
    """The leaves of each tree in ``rest`` at ``treedef``'s leaf positions (a tree may
    hold whole subtrees where ``treedef`` has leaves)."""
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            r_leaves = []
            _flatten_up_to(treedef, r, "", r_leaves)
        others.append(r_leaves)
    return others

def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``.

    Each of ``rest`` has ``tree``'s structure, or has it as a prefix: then ``f`` gets
    the whole subtree found at each leaf position of ``tree``.

    Examples
    --------
    >>> tree_map(lambda x, y: x + y, {"a": 1}, {"a": 10})
    {'a': 11}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = _leaves_up_to(treedef, rest, is_leaf)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    """``functools.reduce(function, tree_leaves(tree), initializer)``.

    Examples
    --------
    >>> import operator
    >>> tree_reduce(operator.add, [1, (2, 3)])
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy (``True`` for a tree without leaves).

    Examples
    --------
    >>> tree_all([True, (1, None)])
    True
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn a tree of structure ``outer(inner)`` into one of structure ``inner(outer)``.

    ``inner_treedef=None`` infers it from the first outer subtree.

    Examples
    --------
    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = _first_subtree(outer_treedef, pytree_to_transpose)
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef} composed with "
                        f"{inner_treedef}")
    subtrees = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    transposed = [tree_unflatten(outer_treedef, [s[j] for s in subtrees])
                  for j in range(inner_size)]
    return tree_unflatten(inner_treedef, transposed)


def _first_subtree(outer_treedef, tree):
    """The structure of the subtree at ``outer_treedef``'s first leaf position."""
    marker = object()
    placed = tree_unflatten(outer_treedef, [marker] * outer_treedef.num_leaves)
    subtrees = []

    def walk(o, t):
        if o is marker:
            subtrees.append(t)
            return
        o_children = _children_of(o)
        t_children = _children_of(t)
        for oc, tc in zip(o_children, t_children):
            walk(oc, tc)
    walk(placed, tree)
    if not subtrees:
        raise TypeError("tree_transpose: the outer structure has no leaves, so the inner "
                        "structure cannot be inferred; pass inner_treedef")
    return tree_structure(subtrees[0])


def _children_of(x) -> list:
    """Direct children of one node, in flattening order."""
    t = type(x)
    if x is None:
        return []
    if t is tuple or t is list:
        return list(x)
    if t is dict:
        return [x[k] for k in sorted(x)]
    if t in _REGISTRY:
        return list(_REGISTRY[t][0](x)[0])
    if _is_namedtuple(x):
        return list(x)
    return []


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], treedef)``.

    Examples
    --------
    >>> pairs, _ = tree_flatten_with_path({"a": [1, 2]})
    >>> pairs[1]
    ((DictKey(key='a'), SequenceKey(idx=1)), 2)
    """
    pairs: list = []
    _path_walk(tree, (), pairs, is_leaf, _REGISTRY, _is_namedtuple)
    return pairs, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    """``[(key_path, leaf), ...]``.

    Examples
    --------
    >>> [keystr(p) for p, _ in tree_leaves_with_path([1, {"x": 2}])]
    ['[0]', "[1]['x']"]
    """
    pairs: list = []
    _path_walk(tree, (), pairs, is_leaf, _REGISTRY, _is_namedtuple)
    return pairs


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """``tree_map`` where ``f(key_path, leaf, *other_leaves)`` also gets the key path.

    Examples
    --------
    >>> tree_map_with_path(lambda p, x: keystr(p) + "=" + str(x), {"a": 1})
    {'a': "['a']=1"}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = _leaves_up_to(treedef, rest, is_leaf)
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def leaf_paths(tree) -> list:
    """A path suffix for every leaf: ``''`` for a leaf, ``'[0]'``, ``"['w']"``, ``'.x'``.

    Examples
    --------
    >>> leaf_paths({"w": [1, 2]})
    ["['w'][0]", "['w'][1]"]
    """
    return [keystr(p) for p, _ in tree_leaves_with_path(tree)]


# -- built-in registrations ------------------------------------------------------------
def _odict_flatten(x):
    return list(x.values()), tuple(x.keys())


def _odict_unflatten(keys, children):
    return collections.OrderedDict(zip(keys, children))


register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: ([(DictKey(k), v) for k, v in x.items()], tuple(x.keys())),
    _odict_unflatten, _odict_flatten)


def _ddict_flatten(x):
    keys = tuple(sorted(x))
    return [x[k] for k in keys], (x.default_factory, keys)


def _ddict_flatten_with_keys(x):
    keys = tuple(sorted(x))
    return [(DictKey(k), x[k]) for k in keys], (x.default_factory, keys)


def _ddict_unflatten(aux, children):
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, children))


register_pytree_with_keys(collections.defaultdict, _ddict_flatten_with_keys,
                          _ddict_unflatten, _ddict_flatten)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the bound arguments are children, the
    function is static. It can be passed to (and returned from) jitted functions.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> add = Partial(jnp.add, 1.0)
    >>> absjit.jit(lambda f, x: f(x))(add, 2.0)
    Array(3., dtype=float32, weak_type=True)
    """

    def __new__(cls, func, *args, **kw):
        return super().__new__(cls, func, *args, **kw)


register_pytree_with_keys(
    Partial,
    lambda p: ([(FlattenedIndexKey(0), p.args), (FlattenedIndexKey(1), p.keywords)],
               p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
    lambda p: ((p.args, p.keywords), p.func))
